//! The report's figures, for one run or several overlaid (`longhaul compare … --report`).
//!
//! Each figure is drawn only when the summaries carry the series it needs:
//! * throughput per flow, and the aggregate on its own panel, titled with the average
//!   utilization as in seed 000's Figure 2;
//! * congestion window per flow, with the flow's losses (×) and retransmissions (▲) marked at
//!   the intervals they happened in;
//! * RTT and queueing delay (RTT − the flow's min RTT) over time, and their per-flow CDFs;
//! * queue length per link in packets and in milliseconds (bytes × 8 ÷ the link's capacity);
//! * Jain's index over time across the flows active in each interval (two or more flows);
//! * throughput against queueing delay in Pantheon's style (Yan et al., "Pantheon: the training
//!   ground for Internet congestion-control research", USENIX ATC 2018, Figure 3): one glyph
//!   per controller and one color and legend entry per flow, the delay axis inverted, a small
//!   point per flow per time window (a tenth of the run) and a large one for the flow's whole
//!   run. Pantheon plots the 95th
//!   percentile of one-way delay; this plots the mean queueing delay of the window and the
//!   flow's p95, from RTT samples.
//!
//! A flow has one color in every figure: the color of its place among the flows of all runs.
//!
//! An RTT of 0 or less is no sample (a flow that has not measured one yet) and is left out.

use super::plot::{
    chart_with_marks, tradeoff_chart, ChartOptions, Cloud, ColorKey, Glyph, Line, LineStyle, Marks,
};
use super::table::num;
use crate::error::MetricsError;
use crate::fairness::jain_index;
use crate::summary::{FlowSummary, Summary};
use crate::units::{format_rate, to_mbps};

/// One figure: a file-name slug, its title (drawn inside the SVG), and the SVG or why not.
pub struct Figure {
    /// A short name for file names (`throughput`, `cwnd`, …).
    pub slug: &'static str,
    /// The figure's title, drawn inside the SVG.
    pub title: String,
    /// The SVG document, or `None` when the runs lack the data.
    pub svg: Option<String>,
    /// Why the figure is missing, shown in its place when `svg` is `None`.
    pub missing: &'static str,
}

/// A run to draw and its label in legends ("" for a report of one run).
pub type Run<'a> = (&'a str, &'a Summary);

fn name(label: &str, what: String) -> String {
    if label.is_empty() {
        what
    } else {
        format!("{label}: {what}")
    }
}

fn flow_name(label: &str, f: &FlowSummary) -> String {
    name(label, format!("flow {} ({})", f.id, f.cc))
}

fn zip(t: &[f64], v: &[f64], scale: f64) -> Option<Vec<(f64, f64)>> {
    (!v.is_empty() && v.len() == t.len())
        .then(|| t.iter().zip(v).map(|(&t, &v)| (t, v * scale)).collect())
}

/// A flow's RTT samples over time, ms, without the non-samples.
fn rtt_points(f: &FlowSummary) -> Option<Vec<(f64, f64)>> {
    let se = f.series.as_ref()?;
    let p = zip(&se.t, &se.rtt_ms, 1.0)?;
    Some(
        p.into_iter()
            .map(|(t, r)| (t, if r > 0.0 { r } else { f64::NAN }))
            .collect(),
    )
}

/// A flow's queueing delay over time (RTT − min RTT), ms.
fn qdelay_points(f: &FlowSummary) -> Option<Vec<(f64, f64)>> {
    let base = f.min_rtt_ms;
    if !base.is_finite() {
        return None;
    }
    Some(
        rtt_points(f)?
            .into_iter()
            .map(|(t, r)| (t, r - base))
            .collect(),
    )
}

/// The empirical CDF of the finite values: (value, fraction of samples ≤ value).
pub fn cdf(values: impl Iterator<Item = f64>) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    v.into_iter()
        .enumerate()
        .map(|(i, x)| (x, (i + 1) as f64 / n))
        .collect()
}

/// Every flow of every run with its place among them (its color in every figure).
fn all_flows<'a>(runs: &'a [Run]) -> impl Iterator<Item = (usize, &'a str, &'a FlowSummary)> {
    runs.iter()
        .flat_map(|(label, s)| s.flows.iter().map(move |f| (*label, f)))
        .enumerate()
        .map(|(i, (label, f))| (i, label, f))
}

/// Lines colored by their flows' places.
struct FlowLines {
    lines: Vec<Line>,
    options: ChartOptions,
}

impl FlowLines {
    fn push(&mut self, place: usize, line: Line) {
        self.lines.push(line);
        self.options.styles.push(LineStyle {
            color: place,
            glyph: None,
        });
    }
}

/// Per-flow lines of every run, skipping flows without the series.
fn flow_lines(runs: &[Run], pick: impl Fn(&FlowSummary) -> Option<Vec<(f64, f64)>>) -> FlowLines {
    let mut out = FlowLines {
        lines: Vec::new(),
        options: ChartOptions::default(),
    };
    for (place, label, f) in all_flows(runs) {
        if let Some(points) = pick(f).filter(|p| !p.is_empty()) {
            let name = flow_name(label, f);
            out.push(
                place,
                Line {
                    name,
                    points,
                    spread: Vec::new(),
                },
            );
        }
    }
    out
}

impl From<Vec<Line>> for FlowLines {
    /// Lines that are not flows' (aggregates, links): line i in color i.
    fn from(lines: Vec<Line>) -> FlowLines {
        FlowLines {
            lines,
            options: ChartOptions::default(),
        }
    }
}

fn figure(
    slug: &'static str,
    title: String,
    missing: &'static str,
    draw: impl FnOnce(&str) -> Result<Option<String>, MetricsError>,
) -> Result<Figure, MetricsError> {
    Ok(Figure {
        svg: draw(&title)?,
        slug,
        title,
        missing,
    })
}

fn lines_figure(
    slug: &'static str,
    title: String,
    y: &str,
    lines: impl Into<FlowLines>,
    missing: &'static str,
) -> Result<Figure, MetricsError> {
    let FlowLines { lines, options } = lines.into();
    figure(slug, title, missing, |t| {
        if lines.is_empty() {
            Ok(None)
        } else {
            chart_with_marks(t, "time (s)", y, &lines, &[], &options).map(Some)
        }
    })
}

/// Every figure of the report for `runs` (one, or several overlaid).
pub fn figures(runs: &[Run]) -> Result<Vec<Figure>, MetricsError> {
    let mut out = Vec::new();
    let one = runs.len() == 1;

    let tput = flow_lines(runs, |f| {
        let se = f.series.as_ref()?;
        zip(&se.t, &se.throughput_bps, 1e-6)
    });
    out.push(lines_figure(
        "throughput",
        "Throughput per flow".into(),
        "throughput (Mb/s)",
        tput,
        "no throughput series recorded",
    )?);

    // The aggregate on its own panel, so that ten flows' lines are not squeezed under it.
    let agg: Vec<Line> = runs
        .iter()
        .filter_map(|(label, s)| {
            let a = s.aggregate.series.as_ref()?;
            zip(&a.t, &a.throughput_bps, 1e-6).map(|points| Line {
                name: name(label, "aggregate".into()),
                points,
                spread: Vec::new(),
            })
        })
        .collect();
    let title = if one {
        // Say what the utilization is measured against: an experiment's claim may judge the
        // same run against another capacity (seed 000's Table 1 against the hosts' NICs).
        let s = runs[0].1;
        let against = match (s.aggregate.capacity_bps, &s.aggregate.limited_by) {
            (Some(c), Some(by)) => {
                format!("of the {} that limits the flows ({by})", format_rate(c))
            }
            (Some(c), None) => format!("of the {} bottleneck", format_rate(c)),
            _ => "of the bottleneck".to_string(),
        };
        format!(
            "Aggregate throughput — average utilization {} % {against}, net of headers",
            num(100.0 * s.aggregate.utilization, 1)
        )
    } else {
        "Aggregate throughput".to_string()
    };
    out.push(lines_figure(
        "aggregate",
        title,
        "throughput (Mb/s)",
        agg,
        "no aggregate series recorded",
    )?);

    out.push(cwnd_figure(runs)?);

    let rtt = flow_lines(runs, rtt_points);
    let qdelay = flow_lines(runs, qdelay_points);
    let rtt_cdf = flow_lines(runs, |f| Some(cdf(rtt_points(f)?.into_iter().map(|p| p.1))));
    let q_cdf = flow_lines(runs, |f| {
        Some(cdf(qdelay_points(f)?.into_iter().map(|p| p.1)))
    });
    out.push(lines_figure(
        "rtt",
        "Round-trip time".into(),
        "RTT (ms)",
        rtt,
        "no RTT series recorded",
    )?);
    out.push(lines_figure(
        "queueing-delay",
        "Queueing delay (RTT − min RTT)".into(),
        "queueing delay (ms)",
        qdelay,
        "no RTT series recorded",
    )?);
    for (slug, title, x, FlowLines { lines, options }) in [
        ("rtt-cdf", "CDF of RTT per flow", "RTT (ms)", rtt_cdf),
        (
            "queueing-delay-cdf",
            "CDF of queueing delay per flow",
            "queueing delay (ms)",
            q_cdf,
        ),
    ] {
        out.push(figure(slug, title.into(), "no RTT series recorded", |t| {
            if lines.is_empty() {
                Ok(None)
            } else {
                let y = "fraction of samples ≤ x";
                chart_with_marks(t, x, y, &lines, &[], &options).map(Some)
            }
        })?);
    }

    let (pkts, ms) = queue_lines(runs);
    out.push(lines_figure(
        "queue-packets",
        "Queue length in packets".into(),
        "queue (packets)",
        pkts,
        "no queue series in packets recorded",
    )?);
    out.push(lines_figure(
        "queue-ms",
        "Queue length in milliseconds at the link's rate".into(),
        "queue (ms)",
        ms,
        "no queue series with a link capacity recorded",
    )?);

    let jain: Vec<Line> = runs
        .iter()
        .filter_map(|(label, s)| {
            jain_series(s).map(|points| Line {
                name: name(label, "Jain's index".into()),
                points,
                spread: Vec::new(),
            })
        })
        .collect();
    out.push(lines_figure(
        "jain",
        "Jain's fairness index over time (flows active in each interval)".into(),
        "Jain's index",
        jain,
        "fewer than two flows with throughput series",
    )?);

    let clouds = tradeoff_clouds(runs);
    out.push(figure(
        "throughput-delay",
        "Throughput vs queueing delay (small: per flow and tenth of the run; large: whole run, p95)"
            .into(),
        "no flow has both a throughput and a queueing delay",
        |t| {
            if clouds.is_empty() {
                Ok(None)
            } else {
                tradeoff_chart(
                    t,
                    "queueing delay (ms), less is better →",
                    "throughput (Mb/s)",
                    &clouds,
                )
                .map(Some)
            }
        },
    )?);
    Ok(out)
}

/// cwnd per flow, with glyphs at the intervals with losses and retransmissions.
fn cwnd_figure(runs: &[Run]) -> Result<Figure, MetricsError> {
    let mut lines = FlowLines::from(Vec::new());
    let mut marks = Vec::new();
    for (place, label, f) in all_flows(runs) {
        let Some(se) = &f.series else { continue };
        let Some(points) = zip(&se.t, &se.cwnd_pkts, 1.0) else {
            continue;
        };
        let i = lines.lines.len();
        for (what, glyph, counts) in [
            ("losses", Glyph::Cross, &se.lost_pkts),
            ("retransmissions", Glyph::Triangle, &se.retransmits),
        ] {
            if counts.len() != points.len() {
                continue;
            }
            let at: Vec<(f64, f64)> = points
                .iter()
                .zip(counts)
                .filter(|(_, &n)| n > 0.0)
                .map(|(&p, _)| p)
                .collect();
            if !at.is_empty() {
                marks.push(Marks {
                    name: format!("{} {what}", flow_name(label, f)),
                    line: i,
                    glyph,
                    points: at,
                });
            }
        }
        let name = flow_name(label, f);
        lines.push(
            place,
            Line {
                name,
                points,
                spread: Vec::new(),
            },
        );
    }
    let FlowLines { lines, options } = lines;
    figure(
        "cwnd",
        "Congestion window (× losses, ▲ retransmissions)".into(),
        "no cwnd series recorded",
        |t| {
            if lines.is_empty() {
                Ok(None)
            } else {
                chart_with_marks(t, "time (s)", "cwnd (packets)", &lines, &marks, &options)
                    .map(Some)
            }
        },
    )
}

/// Queue lines in packets and in ms. Queues that never held anything (most ACK directions,
/// idle links) are left out when some queue did, so the ones that matter stay legible.
fn queue_lines(runs: &[Run]) -> (Vec<Line>, Vec<Line>) {
    let (mut pkts, mut ms) = (Vec::new(), Vec::new());
    for (label, s) in runs {
        for l in &s.links {
            let Some(se) = &l.series else { continue };
            let nm = name(label, l.name.clone());
            if let Some(points) = zip(&se.t, &se.queue_pkts, 1.0) {
                pkts.push(Line {
                    name: nm.clone(),
                    points,
                    spread: Vec::new(),
                });
            }
            // Bytes when recorded, else packets of the link's MTU.
            let per_ms = l.capacity_bps / 8.0 / 1e3;
            let bytes = if !se.queue_bytes.is_empty() {
                zip(&se.t, &se.queue_bytes, 1.0)
            } else {
                l.mtu.and_then(|m| zip(&se.t, &se.queue_pkts, f64::from(m)))
            };
            if let (Some(b), true) = (bytes, per_ms.is_finite() && per_ms > 0.0) {
                ms.push(Line {
                    name: nm,
                    points: b.into_iter().map(|(t, b)| (t, b / per_ms)).collect(),
                    spread: Vec::new(),
                });
            }
        }
    }
    let busy = |lines: Vec<Line>| {
        if lines.iter().any(|l| l.points.iter().any(|p| p.1 != 0.0)) {
            lines
                .into_iter()
                .filter(|l| l.points.iter().any(|p| p.1 != 0.0))
                .collect()
        } else {
            lines
        }
    };
    (busy(pkts), busy(ms))
}

/// Jain's index in each interval over the flows with a finite throughput there (a flow that has
/// not started has none; a started flow at 0 counts). None with fewer than two such flows ever.
pub fn jain_series(s: &Summary) -> Option<Vec<(f64, f64)>> {
    let series: Vec<_> = s
        .flows
        .iter()
        .filter_map(|f| f.series.as_ref())
        .filter(|se| !se.throughput_bps.is_empty() && se.throughput_bps.len() == se.t.len())
        .collect();
    if series.len() < 2 {
        return None;
    }
    let t = &series[0].t;
    // Intervals are matched by start time; a flow sampled on another grid is left out.
    let aligned: Vec<_> = series.iter().filter(|se| se.t == *t).collect();
    let points: Vec<(f64, f64)> = t
        .iter()
        .enumerate()
        .map(|(i, &ti)| {
            let xs: Vec<f64> = aligned
                .iter()
                .map(|se| se.throughput_bps[i])
                .filter(|x| x.is_finite())
                .collect();
            let j = if xs.len() >= 2 { jain_index(&xs) } else { None };
            (ti, j.unwrap_or(f64::NAN))
        })
        .collect();
    points.iter().any(|p| p.1.is_finite()).then_some(points)
}

/// Pantheon-style clouds, one per flow: per tenth of the run, the mean queueing delay and mean
/// throughput of the window (small); the flow's p95 queueing delay and throughput (large). A
/// flow's color is its place among all flows, its glyph its controller's.
pub fn tradeoff_clouds(runs: &[Run]) -> Vec<Cloud> {
    let controllers = ColorKey::new(
        runs.iter()
            .flat_map(|(_, s)| s.flows.iter().map(|f| f.cc.as_str())),
    );
    let mut out = Vec::new();
    for (place, label, f) in all_flows(runs) {
        let (x, y) = (f.queueing_delay_ms.p95, to_mbps(f.throughput_bps));
        let whole = (x.is_finite() && y.is_finite()).then_some((x, y));
        let cloud = Cloud {
            name: flow_name(label, f),
            color: place,
            glyph: Glyph::ALL[controllers.index(&f.cc) % Glyph::ALL.len()],
            small: window_points(f),
            large: whole.into_iter().collect(),
        };
        if !cloud.small.is_empty() || !cloud.large.is_empty() {
            out.push(cloud);
        }
    }
    out
}

/// A flow's (mean queueing delay, mean throughput in Mb/s) per tenth of its series; a window
/// without both has no point.
fn window_points(f: &FlowSummary) -> Vec<(f64, f64)> {
    let (Some(se), Some(q)) = (&f.series, qdelay_points(f)) else {
        return Vec::new();
    };
    if se.throughput_bps.len() != se.t.len() || se.t.is_empty() {
        return Vec::new();
    }
    let mean = |v: &mut dyn Iterator<Item = f64>| {
        let v: Vec<f64> = v.filter(|x| x.is_finite()).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let n = se.t.len();
    let per = n.div_ceil(10).max(1);
    (0..n.div_ceil(per))
        .filter_map(|w| {
            let r = w * per..((w + 1) * per).min(n);
            let x = mean(&mut q[r.clone()].iter().map(|p| p.1))?;
            let y = mean(&mut se.throughput_bps[r].iter().copied())?;
            Some((x, to_mbps(y)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::example_summary;
    use crate::summary::{FlowSeries, LinkSeries};

    fn svg_of(figs: &[Figure], slug: &str) -> String {
        let f = figs.iter().find(|f| f.slug == slug).expect(slug);
        f.svg
            .clone()
            .unwrap_or_else(|| panic!("{slug}: {}", f.missing))
    }

    /// The data lines (stroke width 2) of an SVG: (color, number of points).
    fn data_lines(svg: &str) -> Vec<(String, usize)> {
        svg.lines()
            .filter(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"2\""))
            .map(|l| {
                let color = l.split("stroke=\"").nth(1).unwrap()[..7].to_string();
                let pts = l
                    .split("points=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                let x0: i32 = pts.split(',').next().unwrap().parse().unwrap();
                (color, pts.split_whitespace().count(), x0)
            })
            // Legend keys are drawn right of the data.
            .filter(|l| l.2 < (super::super::plot::WIDTH - 190) as i32)
            .map(|l| (l.0, l.1))
            .collect()
    }

    /// (x, text) of every text element.
    fn texts(svg: &str) -> Vec<(i32, String)> {
        let lines: Vec<&str> = svg.lines().collect();
        lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("<text"))
            .map(|(i, l)| {
                let x = l.split("x=\"").nth(1).unwrap().split('"').next().unwrap();
                (x.parse().unwrap(), lines[i + 1].to_string())
            })
            .collect()
    }

    #[test]
    fn cdf_is_the_empirical_distribution() {
        let c = cdf([3.0, f64::NAN, 1.0, 2.0].into_iter());
        assert_eq!(c, vec![(1.0, 1.0 / 3.0), (2.0, 2.0 / 3.0), (3.0, 1.0)]);
        assert!(cdf(std::iter::empty()).is_empty());
    }

    #[test]
    fn rtt_cdfs_hold_every_sample_of_each_flow() {
        let s = example_summary();
        let figs = figures(&[("", &s)]).unwrap();
        let lines = data_lines(&svg_of(&figs, "rtt-cdf"));
        assert_eq!(lines.len(), s.flows.len());
        for (f, (color, n)) in s.flows.iter().zip(&lines) {
            let samples = f
                .series
                .as_ref()
                .unwrap()
                .rtt_ms
                .iter()
                .filter(|r| **r > 0.0)
                .count();
            assert!(samples > 100, "flow {}: {samples}", f.id);
            assert_eq!(*n, samples, "flow {} ({color})", f.id);
        }
        // The queueing-delay CDF starts at the flow's min RTT: its smallest value is ≥ 0.
        let f = &s.flows[0];
        let q = cdf(qdelay_points(f).unwrap().into_iter().map(|p| p.1));
        assert!(q[0].0 >= -1e-9 && q.last().unwrap().1 == 1.0, "{:?}", q[0]);
    }

    #[test]
    fn queue_in_milliseconds_is_bytes_at_the_link_rate() {
        let mut s = example_summary();
        s.links.truncate(1);
        let l = &mut s.links[0];
        l.capacity_bps = 100e6;
        l.series = Some(LinkSeries {
            t: vec![0.0, 0.1, 0.2],
            queue_bytes: vec![0.0, 125_000.0, 250_000.0],
            queue_pkts: vec![0.0, 85.0, 170.0],
            throughput_bps: vec![],
        });
        let (pkts, ms) = queue_lines(&[("", &s)]);
        assert_eq!(pkts[0].points, vec![(0.0, 0.0), (0.1, 85.0), (0.2, 170.0)]);
        // 125 kB at 100 Mb/s drain in 10 ms.
        assert_eq!(ms[0].points, vec![(0.0, 0.0), (0.1, 10.0), (0.2, 20.0)]);
        // Without bytes, packets of the link's MTU: 10 × 1500 B at 120 Mb/s = 1 ms.
        let l = &mut s.links[0];
        l.capacity_bps = 120e6;
        l.mtu = Some(1500);
        l.series.as_mut().unwrap().queue_bytes.clear();
        l.series.as_mut().unwrap().queue_pkts = vec![0.0, 10.0, 20.0];
        let (_, ms) = queue_lines(&[("", &s)]);
        assert!((ms[0].points[1].1 - 1.0).abs() < 1e-12 && (ms[0].points[2].1 - 2.0).abs() < 1e-12);
    }

    #[test]
    fn jain_over_time_counts_the_flows_active_in_each_interval() {
        let mut s = example_summary();
        let t = vec![0.0, 1.0, 2.0, 3.0];
        let series = |v: Vec<f64>| {
            Some(FlowSeries {
                t: t.clone(),
                throughput_bps: v,
                ..FlowSeries::default()
            })
        };
        s.flows.truncate(2);
        s.flows[0].series = series(vec![10.0, 10.0, 10.0, 30.0]);
        // Not started (no sample), then equal, then starved, then a third of the other.
        s.flows[1].series = series(vec![f64::NAN, 10.0, 0.0, 10.0]);
        let j = jain_series(&s).unwrap();
        assert!(j[0].1.is_nan(), "one active flow has no index");
        assert_eq!(j[1].1, 1.0);
        assert_eq!(j[2].1, 0.5);
        assert!((j[3].1 - 0.8).abs() < 1e-12, "{}", j[3].1); // 40² / (2 · 1000)
        s.flows.truncate(1);
        assert!(jain_series(&s).is_none());
    }

    #[test]
    fn cwnd_marks_each_interval_with_losses_and_retransmissions() {
        let mut s = example_summary();
        let plain = svg_of(&figures(&[("", &s)]).unwrap(), "cwnd");
        let se = s.flows[2].series.as_mut().unwrap();
        let n = se.t.len();
        se.lost_pkts = vec![0.0; n];
        se.retransmits = vec![0.0; n];
        for i in [10, 50, 90] {
            se.lost_pkts[i] = 3.0;
        }
        for i in [11, 51] {
            se.retransmits[i] = 2.0;
        }
        let marked = svg_of(&figures(&[("", &s)]).unwrap(), "cwnd");
        // Triangles: two intervals and the legend's key, in flow 3's color.
        let reno = super::super::plot::color(2);
        let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", reno.0, reno.1, reno.2);
        let triangles = marked
            .lines()
            .filter(|l| l.starts_with("<polygon") && l.contains(&fill));
        assert_eq!(triangles.count(), 3);
        // Each cross is two strokes: three intervals and the legend's key.
        let strokes = |svg: &str| {
            svg.lines()
                .filter(|l| l.starts_with("<polyline") || l.starts_with("<line"))
                .count()
        };
        assert_eq!(strokes(&marked) - strokes(&plain), 2 * 4);
        assert!(
            marked.contains("flow 3 (reno) losses")
                && marked.contains("flow 3 (reno) retransmissions")
        );
    }

    #[test]
    fn ten_flows_get_distinct_colors_and_a_legend_beside_the_data() {
        let mut s = example_summary();
        let base = s.flows[0].clone();
        s.flows = (1..=10)
            .map(|id| {
                let mut f = base.clone();
                f.id = id;
                f.cc = if id % 2 == 0 {
                    "reno".into()
                } else {
                    "fast".into()
                };
                f
            })
            .collect();
        let figs = figures(&[("", &s)]).unwrap();
        let tput = svg_of(&figs, "throughput");
        let lines = data_lines(&tput);
        let mut colors: Vec<&str> = lines.iter().map(|l| l.0.as_str()).collect();
        colors.sort_unstable();
        colors.dedup();
        assert_eq!(colors.len(), 10, "{colors:?}");
        // Every legend name sits right of the plotting area; the aggregate is not among them.
        let names: Vec<(i32, String)> = texts(&tput)
            .into_iter()
            .filter(|t| t.1.starts_with("flow "))
            .collect();
        assert_eq!(names.len(), 10);
        let right_of_data = (super::super::plot::WIDTH - 190) as i32;
        assert!(names.iter().all(|(x, _)| *x > right_of_data), "{names:?}");
        assert!(!tput.contains("aggregate"));
        assert!(svg_of(&figs, "aggregate").contains("\naggregate\n"));
    }

    /// `fill="#RRGGBB"` of palette color `i`.
    fn fill(i: usize) -> String {
        let c = super::super::plot::color(i);
        format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2)
    }

    #[test]
    fn throughput_delay_plot_inverts_delay_and_draws_a_point_per_window() {
        let s = example_summary();
        let clouds = tradeoff_clouds(&[("", &s)]);
        // One cloud per flow: its whole run as the large point.
        assert_eq!(clouds.len(), s.flows.len());
        for (c, f) in clouds.iter().zip(&s.flows) {
            assert_eq!(c.name, format!("flow {} ({})", f.id, f.cc));
            assert_eq!(
                c.large,
                vec![(f.queueing_delay_ms.p95, to_mbps(f.throughput_bps))]
            );
        }
        // A window with neither an RTT nor a throughput sample has no point: flow 2 starts at
        // 2 s, so it has 9 windows and the others 10.
        let windows: Vec<usize> = clouds.iter().map(|c| c.small.len()).collect();
        assert_eq!(windows, [10, 9, 10]);
        // A window's point is its mean throughput: flow 3 (Reno) over the first tenth.
        let se = s.flows[2].series.as_ref().unwrap();
        let per = se.t.len().div_ceil(10);
        let first: f64 = se.throughput_bps[..per].iter().sum::<f64>() / per as f64;
        assert!((clouds[2].small[0].1 - to_mbps(first)).abs() < 1e-9);
        let svg = svg_of(&figures(&[("", &s)]).unwrap(), "throughput-delay");
        // The delay axis runs from high at the left to 0 at the right.
        let ticks: Vec<(i32, f64)> = texts(&svg)
            .into_iter()
            .filter_map(|(x, t)| t.parse::<f64>().ok().map(|v| (x, v)))
            .filter(|(x, _)| *x > 75)
            .collect();
        let zero = ticks.iter().find(|t| t.1 == 0.0).unwrap();
        let far = ticks.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
        assert!(zero.0 > far.0, "{ticks:?}");
        // One glyph per controller: FAST's two flows circles, Reno's flow triangles; each flow
        // named once in the legend with its own key.
        for f in &s.flows {
            let name = format!("\nflow {} ({})\n", f.id, f.cc);
            assert_eq!(svg.matches(&name).count(), 1, "{name}");
        }
        assert_eq!(svg.matches("<circle").count(), (10 + 1 + 1) + (9 + 1 + 1));
        assert_eq!(svg.matches("<polygon").count(), 10 + 1 + 1);
    }

    /// Two flows of one controller: each its own color and legend entry in the throughput vs
    /// delay plot, and the color each has in the other figures.
    #[test]
    fn flows_of_one_controller_are_told_apart_and_keep_their_color() {
        let mut s = example_summary();
        for f in &mut s.flows {
            f.cc = "cubic".into();
        }
        let figs = figures(&[("", &s)]).unwrap();
        let td = svg_of(&figs, "throughput-delay");
        let tput = svg_of(&figs, "throughput");
        let lines = data_lines(&tput);
        assert_eq!(lines.len(), 3);
        for (i, f) in s.flows.iter().enumerate() {
            assert!(td.contains(&format!("\nflow {} (cubic)\n", f.id)));
            // The large point, the windows and the legend key carry the flow's color, which is
            // the color of its throughput line.
            let solid = td
                .lines()
                .filter(|l| l.starts_with("<circle") && l.contains(&fill(i)))
                .count();
            assert!(solid >= 2, "flow {}: {solid} solid glyphs", f.id);
            let c = &fill(i)["fill=\"".len()..fill(i).len() - 1];
            assert_eq!(lines[i].0, c, "flow {}", f.id);
        }
        assert!(!td.contains("\ncubic\n"));
    }

    #[test]
    fn several_runs_overlay_with_their_labels() {
        let a = example_summary();
        let mut b = example_summary();
        b.flows[0].throughput_bps *= 0.5;
        let figs = figures(&[("sim", &a), ("lab", &b)]).unwrap();
        let tput = svg_of(&figs, "throughput");
        assert_eq!(data_lines(&tput).len(), 6);
        assert!(tput.contains("\nsim: flow 1 (fast)\n") && tput.contains("\nlab: flow 1 (fast)\n"));
        let agg = svg_of(&figs, "aggregate");
        assert_eq!(data_lines(&agg).len(), 2);
        let td = svg_of(&figs, "throughput-delay");
        for g in [
            "sim: flow 1 (fast)",
            "lab: flow 1 (fast)",
            "sim: flow 3 (reno)",
            "lab: flow 3 (reno)",
        ] {
            assert!(td.contains(&format!("\n{g}\n")), "{g}");
        }
    }
}
