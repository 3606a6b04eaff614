//! `report.html` of a sweep: how each controller's results move along each axis.
//!
//! * For every dimension with numeric values (numbers, durations such as `"40ms"`, rates such
//!   as `"100mbit"`), other than `seed`: throughput, utilization, p95 queueing delay and loss
//!   rate against it, one line per controller (and per value of the remaining dimensions), each
//!   point the mean over seeds and flows with an error bar of one standard deviation, cut at
//!   what the quantity can be (0, and 100 % for utilization and loss). A `[[zip]]` group is one
//!   dimension: drawn against its first numeric axis that tells its positions apart within a
//!   line, the others named in the axis title. An axis whose positive values span two decades,
//!   or one with 0 among them (loss rates), is drawn on a log scale with 0 one decade below
//!   the smallest positive value.
//! * A controller has one color in every figure (its place among the sorted controller names);
//!   its lines for different values of the other dimensions carry different glyphs.
//! * Throughput against p95 queueing delay, Pantheon style: every flow of every run as a small
//!   point, each controller's mean as a labelled one.
//! * Provenance: the runs' command lines, builds, kernels, CPUs and scenario files, each value
//!   once when every run shares it, else with the runs that have it.
//!
//! The plots are the metrics crate's (`longhaul_metrics::report::plot`), as in `sim --report`.

use crate::collect::{axis_text, Collected};
use crate::error::Result;
use longhaul_metrics::provenance::{merged_rows, Provenance};
use longhaul_metrics::report::plot::{
    line_chart_with, scatter_chart, ChartOptions, ColorKey, Glyph, Line, LineStyle, Point, XAxis,
};
use longhaul_metrics::report::{
    escape_html as esc, html_page, html_table, num, pct, provenance_section, Align, Table,
};
use longhaul_metrics::summary::FlowSummary;
use longhaul_metrics::units::to_mbps;
use std::collections::HashMap;
use std::fmt::Write as _;

/// One flow of one run: the unit the plots average.
struct Sample<'a> {
    axes: &'a std::collections::BTreeMap<String, serde_json::Value>,
    flow: &'a FlowSummary,
}

/// A plotted quantity: title, axis title, its value for a flow, and the values it can take.
type Metric = (
    &'static str,
    &'static str,
    fn(&FlowSummary) -> f64,
    (f64, f64),
);

const METRICS: [Metric; 4] = [
    (
        "Throughput",
        "throughput (Mb/s)",
        |f| to_mbps(f.throughput_bps),
        (0.0, f64::INFINITY),
    ),
    (
        "Utilization",
        "utilization (%)",
        |f| 100.0 * f.utilization,
        (0.0, 100.0),
    ),
    (
        "p95 queueing delay",
        "p95 queueing delay (ms)",
        |f| f.queueing_delay_ms.p95,
        (0.0, f64::INFINITY),
    ),
    (
        "Loss rate",
        "loss rate (%)",
        |f| 100.0 * f.loss_rate,
        (0.0, 100.0),
    ),
];

/// A unit and how to read an axis value in it.
type Reader = (&'static str, fn(&serde_json::Value) -> Option<f64>);

/// A line's samples by x value.
type Points = Vec<(f64, Vec<f64>)>;

/// One controller over the whole sweep.
pub struct ControllerStats {
    /// The controller's name.
    pub cc: String,
    /// Flows of this controller, over all runs.
    pub flows: usize,
    /// Mean and standard deviation of each of `METRICS`.
    pub stats: Vec<(f64, f64)>,
}

/// How an axis's values become x coordinates.
struct Scale {
    /// Unit for the axis title ("ms", "Mb/s", or none).
    unit: &'static str,
    axis: XAxis,
}

impl Scale {
    /// A numeric reading for every value of the axis, or `None` (categorical). Positive values
    /// spanning two decades, or one decade with 0 among them, are read on a log scale.
    fn of(values: &[&serde_json::Value]) -> Option<(Scale, Vec<f64>)> {
        let readers: [Reader; 3] = [
            ("", |v| v.as_f64()),
            ("ms", |v| {
                longhaul_sim::units::parse_duration(v.as_str()?)
                    .ok()
                    .map(|n| n.0 as f64 / 1e6)
            }),
            ("Mb/s", |v| {
                longhaul_sim::units::parse_rate(v.as_str()?)
                    .ok()
                    .map(|r| r.0 / 1e6)
            }),
        ];
        for (unit, read) in readers {
            let xs: Option<Vec<f64>> = values.iter().map(|v| read(v)).collect();
            let Some(xs) = xs else { continue };
            return Some((
                Scale {
                    unit,
                    axis: axis_for(&xs),
                },
                xs,
            ));
        }
        None
    }

    /// The axis title: the axis, its unit, the log scale and where 0 is drawn, and the axes
    /// zipped with it.
    fn title(&self, axis: &str, zipped: &[&str]) -> String {
        let mut t = axis.to_string();
        if !self.unit.is_empty() {
            let _ = write!(t, " ({})", self.unit);
        }
        if let XAxis::Log { zero } = self.axis {
            let _ = write!(t, ", log scale, 0 drawn at 1e{zero}");
        }
        if !zipped.is_empty() {
            let _ = write!(t, "; zipped with {}", zipped.join(", "));
        }
        t
    }
}

/// Log10 when the values are ≥ 0 and the positive ones span two decades, or one decade with
/// 0 among them; 0 then sits one decade below the smallest positive value.
fn axis_for(xs: &[f64]) -> XAxis {
    let positive = xs.iter().copied().filter(|&x| x > 0.0);
    let (lo, hi) = positive.fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    let has_zero = xs.contains(&0.0);
    let decades = if lo.is_finite() {
        (hi / lo).log10()
    } else {
        0.0
    };
    let log = xs.iter().all(|&x| x >= 0.0) && (decades >= 2.0 || (has_zero && decades >= 1.0));
    if log {
        XAxis::Log {
            zero: lo.log10().floor() - 1.0,
        }
    } else {
        XAxis::Linear
    }
}

fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let sd = if v.len() > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (mean, sd)
}

/// The line a sample belongs to on a plot against dimension `dim`: its controller, and the
/// values of the axes that are neither in `dim` nor seeds (an axis whose value is the
/// controller's name adds nothing).
fn line_name(s: &Sample, axes: &[String], dim: &[String]) -> String {
    let mut name = s.flow.cc.clone();
    for a in axes {
        if dim.contains(a) || a == "seed" {
            continue;
        }
        let v = axis_text(s.axes.get(a));
        if v != s.flow.cc {
            let _ = write!(name, ", {a}={v}");
        }
    }
    name
}

fn samples(c: &Collected) -> Vec<Sample<'_>> {
    c.records
        .iter()
        .flat_map(|r| {
            r.summary.flows.iter().map(|flow| Sample {
                axes: &r.sweep.axes,
                flow,
            })
        })
        .collect()
}

/// Each controller over the whole sweep.
pub fn by_controller(c: &Collected) -> Vec<ControllerStats> {
    let samples = samples(c);
    let mut ccs: Vec<&str> = samples.iter().map(|s| s.flow.cc.as_str()).collect();
    ccs.sort_unstable();
    ccs.dedup();
    ccs.iter()
        .map(|cc| {
            let of: Vec<&Sample> = samples.iter().filter(|s| s.flow.cc == *cc).collect();
            let stats = METRICS
                .iter()
                .map(|(_, _, get, _)| mean_sd(&of.iter().map(|s| get(s.flow)).collect::<Vec<_>>()))
                .collect();
            ControllerStats {
                cc: cc.to_string(),
                flows: of.len(),
                stats,
            }
        })
        .collect()
}

/// "mean ± sd" of a metric: percentages with two significant digits (a loss rate of 0.0031 %
/// is not "0.00"), other metrics with two decimals.
fn mean_sd_text(metric: &Metric, (mean, sd): (f64, f64)) -> String {
    if metric.1.ends_with("(%)") {
        format!("{} ± {}", pct(mean), pct(sd))
    } else {
        format!("{} ± {}", num(mean, 2), num(sd, 2))
    }
}

/// `by_controller` as a terminal table.
pub fn controller_table(c: &Collected) -> String {
    let mut t = Table::new(&[Align::Left]);
    let mut head = vec!["cc", "flows"];
    head.extend(METRICS.iter().map(|m| m.1));
    t.header(&head);
    for ControllerStats { cc, flows, stats } in by_controller(c) {
        let mut row = vec![cc, flows.to_string()];
        row.extend(stats.iter().zip(&METRICS).map(|(&s, m)| mean_sd_text(m, s)));
        t.row(row);
    }
    t.render()
}

/// What a dimension is drawn against: its first numeric axis (not `seed`) with two or more
/// values that, in a `[[zip]]` group, tells the group's positions apart within every line;
/// the axis, its scale and each sample's value.
fn dim_x<'a>(
    samples: &[Sample],
    axes: &[String],
    dim: &'a [String],
) -> Option<(&'a str, Scale, Vec<f64>)> {
    dim.iter().filter(|a| *a != "seed").find_map(|axis| {
        let values: Option<Vec<&serde_json::Value>> =
            samples.iter().map(|s| s.axes.get(axis)).collect();
        let (scale, xs) = Scale::of(&values?)?;
        let mut distinct = xs.clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        (distinct.len() >= 2 && separates(samples, axes, dim, &xs)).then_some((
            axis.as_str(),
            scale,
            xs,
        ))
    })
}

/// Whether, within each line, samples at the same x sit at the same position of the dimension
/// (the same values of all its axes), so that a line drawn against x visits each position once.
fn separates(samples: &[Sample], axes: &[String], dim: &[String], xs: &[f64]) -> bool {
    let mut at: HashMap<(String, u64), String> = HashMap::new();
    samples.iter().zip(xs).all(|(s, x)| {
        let position: Vec<String> = dim.iter().map(|a| axis_text(s.axes.get(a))).collect();
        let position = position.join("\u{1f}");
        let key = (line_name(s, axes, dim), x.to_bits());
        at.entry(key).or_insert_with(|| position.clone()) == &position
    })
}

/// The lines of one metric against a dimension (each point the mean and sd of the samples at
/// one x), with their styles: the controller's color, and a glyph per line when the controller
/// has several lines.
fn metric_lines(
    samples: &[Sample],
    axes: &[String],
    dim: &[String],
    xs: &[f64],
    metric: &Metric,
    colors: &ColorKey,
) -> (Vec<Line>, Vec<LineStyle>) {
    // line -> x -> samples, in first-met order.
    let mut lines: Vec<(String, &str, Points)> = Vec::new();
    for (s, &x) in samples.iter().zip(xs) {
        let key = line_name(s, axes, dim);
        let at = match lines.iter().position(|l| l.0 == key) {
            Some(i) => i,
            None => {
                lines.push((key, s.flow.cc.as_str(), Vec::new()));
                lines.len() - 1
            }
        };
        let pts = &mut lines[at].2;
        let y = (metric.2)(s.flow);
        match pts.iter_mut().find(|p| p.0 == x) {
            Some(p) => p.1.push(y),
            None => pts.push((x, vec![y])),
        }
    }
    let styles = lines
        .iter()
        .enumerate()
        .map(|(i, (_, cc, _))| {
            let same = |l: &&(String, &str, Points)| l.1 == *cc;
            let several = lines.iter().filter(same).count() > 1;
            let k = lines[..i].iter().filter(same).count();
            LineStyle {
                color: colors.index(cc),
                glyph: several.then(|| Glyph::ALL[k % Glyph::ALL.len()]),
            }
        })
        .collect();
    let lines = lines
        .into_iter()
        .map(|(name, _, mut pts)| {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let stats: Vec<(f64, f64, f64)> = pts
                .iter()
                .map(|(x, ys)| {
                    let (m, sd) = mean_sd(ys);
                    (*x, m, sd)
                })
                .collect();
            Line {
                name,
                points: stats.iter().map(|p| (p.0, p.1)).collect(),
                spread: stats.iter().map(|p| p.2).collect(),
            }
        })
        .collect();
    (lines, styles)
}

/// The report page.
pub fn html(c: &Collected, title: &str) -> Result<String> {
    let samples = samples(c);
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<h1>{}</h1>\n<p>{}; axes: {}</p>",
        esc(title),
        esc(&c.describe()),
        esc(&c.axes.join(", "))
    );
    let failed: Vec<Vec<String>> = c
        .missing
        .iter()
        .filter_map(|(i, e)| e.as_ref().map(|e| vec![i.to_string(), esc(e)]))
        .collect();
    if !failed.is_empty() {
        h.push_str("<h2>Failed runs</h2>\n");
        html_table(&mut h, &["run", "error"], &failed, 2);
    }

    let rows: Vec<Vec<String>> = by_controller(c)
        .into_iter()
        .map(|ControllerStats { cc, flows, stats }| {
            let mut row = vec![esc(&cc), flows.to_string()];
            row.extend(stats.iter().zip(&METRICS).map(|(&s, m)| mean_sd_text(m, s)));
            row
        })
        .collect();
    h.push_str("<h2>Controllers over the whole sweep (mean ± sd)</h2>\n");
    let mut head = vec!["cc", "flows"];
    head.extend(METRICS.iter().map(|m| m.1));
    html_table(&mut h, &head, &rows, 1);

    h.push_str("<h2>Plots</h2>\n");
    let colors = ColorKey::new(samples.iter().map(|s| s.flow.cc.as_str()));
    for dim in &c.dims {
        let Some((axis, scale, xs)) = dim_x(&samples, &c.axes, dim) else {
            continue;
        };
        let zipped: Vec<&str> = dim
            .iter()
            .map(String::as_str)
            .filter(|a| *a != axis)
            .collect();
        for metric in &METRICS {
            let (lines, styles) = metric_lines(&samples, &c.axes, dim, &xs, metric, &colors);
            let options = ChartOptions {
                styles,
                x_axis: scale.axis,
                y_bounds: metric.3,
            };
            let title = format!("{} vs {axis} (mean ± sd over seeds and flows)", metric.0);
            let x_desc = scale.title(axis, &zipped);
            let svg = line_chart_with(&title, &x_desc, metric.1, &lines, &options)?;
            let _ = writeln!(h, "<figure><figcaption><b>{}</b></figcaption>", esc(&title));
            h.push_str(&svg);
            h.push_str("</figure>\n");
        }
    }

    let mut points: Vec<Point> = samples
        .iter()
        .map(|s| Point {
            group: s.flow.cc.clone(),
            label: String::new(),
            x: s.flow.queueing_delay_ms.p95,
            y: to_mbps(s.flow.throughput_bps),
        })
        .collect();
    let mut ccs: Vec<String> = points.iter().map(|p| p.group.clone()).collect();
    ccs.sort_unstable();
    ccs.dedup();
    for cc in &ccs {
        let of: Vec<&Point> = points.iter().filter(|p| p.group == *cc).collect();
        let (x, _) = mean_sd(&of.iter().map(|p| p.x).collect::<Vec<_>>());
        let (y, _) = mean_sd(&of.iter().map(|p| p.y).collect::<Vec<_>>());
        points.push(Point {
            group: cc.clone(),
            label: cc.clone(),
            x,
            y,
        });
    }
    if points.iter().any(|p| p.x.is_finite() && p.y.is_finite()) {
        let title =
            "Throughput vs p95 queueing delay: each flow of each run, and each controller's mean";
        let svg = scatter_chart(
            title,
            "p95 queueing delay (ms)",
            "throughput (Mb/s)",
            &points,
        )?;
        let _ = writeln!(h, "<figure><figcaption><b>{}</b></figcaption>", esc(title));
        h.push_str(&svg);
        h.push_str("</figure>\n");
    }

    // Where the runs came from: what they share once, what differs with the runs it covers.
    let runs: Vec<(String, Option<&Provenance>)> = c
        .records
        .iter()
        .map(|r| (r.sweep.index.to_string(), r.summary.provenance.as_ref()))
        .collect();
    if !runs.is_empty() {
        provenance_section(&mut h, &merged_rows(&runs));
    }
    Ok(html_page(title, &h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_read_as_numbers_durations_or_rates_and_loss_on_log10() {
        let j = |v: serde_json::Value| v;
        let read = |v: &[serde_json::Value]| Scale::of(&v.iter().collect::<Vec<_>>());
        let loss = [j(0.into()), j(1e-8.into()), j(1e-6.into()), j(1e-4.into())];
        let (s, xs) = read(&loss).unwrap();
        assert_eq!(s.axis, XAxis::Log { zero: -9.0 });
        assert_eq!(
            xs.iter().map(|&x| s.axis.position(x)).collect::<Vec<_>>(),
            [-9.0, -8.0, -6.0, -4.0]
        );
        assert_eq!(
            s.title("links.0.loss", &[]),
            "links.0.loss, log scale, 0 drawn at 1e-9"
        );
        // small-grid's loss rates: one decade and 0.
        let (s, _) = read(&[j(0.into()), j(1e-5.into()), j(1e-4.into())]).unwrap();
        assert_eq!(s.axis, XAxis::Log { zero: -6.0 });
        let delay = [j("10ms".into()), j("40ms".into()), j("160ms".into())];
        let (s, xs) = read(&delay).unwrap();
        assert_eq!(
            (s.unit, s.axis, xs),
            ("ms", XAxis::Linear, vec![10.0, 40.0, 160.0])
        );
        assert_eq!(
            s.title("links.0.delay", &["duration"]),
            "links.0.delay (ms); zipped with duration"
        );
        let (s, _) = read(&[j("10ms".into()), j("1.5s".into())]).unwrap();
        assert_eq!(s.axis, XAxis::Log { zero: 0.0 });
        let rate = [j("100mbit".into()), j("1gbit".into())];
        let (s, xs) = read(&rate).unwrap();
        assert_eq!((s.unit, xs), ("Mb/s", vec![100.0, 1000.0]));
        assert!(read(&[j("reno".into()), j("fast".into())]).is_none());
    }

    #[test]
    fn mean_and_sample_sd_skip_undefined() {
        assert_eq!(mean_sd(&[2.0, 4.0, f64::NAN]), (3.0, 2f64.sqrt()));
        assert_eq!(mean_sd(&[5.0]), (5.0, 0.0));
        assert!(mean_sd(&[]).0.is_nan());
    }
}

#[cfg(test)]
mod page_tests {
    use super::*;
    use crate::store::{RunInfo, RunRecord};
    use longhaul_metrics::example::example_summary;

    /// Runs over loss × seed with two controllers' flows each; throughput falls with loss.
    fn collected() -> Collected {
        let mut records = Vec::new();
        let mut index = 0;
        for loss in [0.0, 1e-7, 1e-4] {
            for seed in [1, 2] {
                let mut s = example_summary();
                s.flows.truncate(2);
                s.flows[0].cc = "reno".into();
                s.flows[1].cc = "fast".into();
                for f in &mut s.flows {
                    f.throughput_bps = 100e6 * (1.0 - loss * 5e3) + f64::from(seed) * 1e6;
                }
                let axes = [
                    ("links.0.loss".to_string(), serde_json::json!(loss)),
                    ("seed".to_string(), serde_json::json!(seed)),
                ]
                .into_iter()
                .collect();
                records.push(RunRecord {
                    sweep: RunInfo {
                        index,
                        key: format!("{index:016x}"),
                        scenario: "s.toml".into(),
                        scenario_sha256: "00".into(),
                        axes,
                        sets: vec![],
                    },
                    summary: s,
                });
                index += 1;
            }
        }
        Collected {
            axes: vec!["links.0.loss".into(), "seed".into()],
            dims: vec![vec!["links.0.loss".into()], vec!["seed".into()]],
            runs: 7,
            records,
            missing: vec![(6, Some("boom <here>".into()))],
            others: 0,
        }
    }

    /// The runs' provenance: shared values once, a differing commit with its runs, the run
    /// without provenance named.
    #[test]
    fn provenance_section_merges_the_runs() {
        use longhaul_metrics::provenance::{Build, Provenance, ScenarioFile};
        let mut c = collected();
        let mut p = Provenance::capture(Build {
            version: "1.2.3",
            commit: "abc1234",
        })
        .with_scenario(ScenarioFile::of_content("s.toml", b"x"));
        p.command = vec![
            "longhaul".into(),
            "sweep".into(),
            "run".into(),
            "g.toml".into(),
        ];
        for (i, r) in c.records.iter_mut().enumerate() {
            let mut mine = p.clone();
            if i == 5 {
                mine.commit = "def5678".into();
            }
            r.summary.provenance = (i != 4).then_some(mine);
        }
        let page = html(&c, "grid").unwrap();
        let at = page
            .find("<h2>Provenance</h2>")
            .expect("no provenance section");
        let part = &page[at..];
        for want in [
            "<code>longhaul sweep run g.toml — runs 0, 1, 2, 3, 5</code>",
            "1.2.3 (commit abc1234) — runs 0, 1, 2, 3</code>",
            "1.2.3 (commit def5678) — runs 5</code>",
            "s.toml",
            "<code>runs 4</code>",
        ] {
            assert!(part.contains(want), "provenance lacks `{want}`:\n{part}");
        }
        // Every run with the same provenance: each value once, without run lists.
        for r in &mut c.records {
            r.summary.provenance = Some(p.clone());
        }
        let page = html(&c, "grid").unwrap();
        assert!(page.contains("<code>longhaul sweep run g.toml</code>"));
        assert!(!page.contains("— runs"));
    }

    /// The SVG of the figure titled `title`.
    fn figure<'a>(page: &'a str, title: &str) -> &'a str {
        let at = page.find(&format!("<b>{title}</b>")).expect(title);
        let svg = &page[at..];
        &svg[svg.find("<svg").unwrap()..svg.find("</svg>").unwrap()]
    }

    /// Colors of the data lines (stroke width 2, left of the legend) of an SVG, in order.
    fn line_colors(svg: &str) -> Vec<String> {
        svg.lines()
            .filter(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"2\""))
            .filter(|l| {
                let pts = l.split("points=\"").nth(1).unwrap();
                let x0: i32 = pts.split(',').next().unwrap().parse().unwrap();
                x0 < 860 - 190
            })
            .map(|l| l.split("stroke=\"").nth(1).unwrap()[..7].to_string())
            .collect()
    }

    /// Runs of a `[[zip]]` group (controller, loss rate, run length) × seed, as
    /// scenarios/sweeps/response.toml has.
    fn zipped() -> Collected {
        let mut records = Vec::new();
        let positions = [
            ("reno", 0.0, "20s"),
            ("reno", 1e-6, "20s"),
            ("reno", 1e-4, "588s"),
            ("cubic", 0.0, "20s"),
            ("cubic", 1e-6, "30s"),
            ("cubic", 1e-4, "248s"),
        ];
        for (index, (cc, loss, duration)) in positions.iter().enumerate() {
            for seed in [1, 2] {
                let mut s = example_summary();
                s.flows.truncate(1);
                s.flows[0].cc = cc.to_string();
                let axes = [
                    ("flows.0.cc".to_string(), serde_json::json!(cc)),
                    ("links.0.loss".to_string(), serde_json::json!(loss)),
                    ("duration".to_string(), serde_json::json!(duration)),
                    ("seed".to_string(), serde_json::json!(seed)),
                ]
                .into_iter()
                .collect();
                records.push(RunRecord {
                    sweep: RunInfo {
                        index: 2 * index as u64 + seed - 1,
                        key: format!("{index:016x}{seed}"),
                        scenario: "s.toml".into(),
                        scenario_sha256: "00".into(),
                        axes,
                        sets: vec![],
                    },
                    summary: s,
                });
            }
        }
        let zip = ["flows.0.cc", "links.0.loss", "duration"].map(String::from);
        Collected {
            axes: zip.iter().cloned().chain(["seed".to_string()]).collect(),
            dims: vec![zip.to_vec(), vec!["seed".into()]],
            runs: 12,
            records,
            missing: vec![],
            others: 0,
        }
    }

    #[test]
    fn a_zip_group_is_one_dimension_with_a_line_per_controller() {
        let page = html(&zipped(), "response").unwrap();
        // Four metrics against the loss rate (the zip's first numeric axis), none against the
        // run length, which moves with it; then the scatter.
        assert_eq!(page.matches("<svg").count(), 5);
        assert!(!page.contains("vs duration"));
        let svg = figure(
            &page,
            "Throughput vs links.0.loss (mean ± sd over seeds and flows)",
        );
        assert_eq!(line_colors(svg).len(), 2, "one line per controller");
        assert!(svg.contains("\nreno\n") && svg.contains("\ncubic\n"));
        assert!(!svg.contains("duration="), "a zipped axis split the lines");
        assert!(svg.contains("zipped with flows.0.cc, duration"));
    }

    #[test]
    fn a_controller_has_one_color_in_every_figure() {
        let c = collected();
        let page = html(&c, "grid").unwrap();
        // Lines are met reno first; the scatter sorts its groups (fast first).
        let colors = ColorKey::new(["reno", "fast"]);
        let hex = |cc: &str| {
            let c = longhaul_metrics::report::plot::color(colors.index(cc));
            format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
        };
        for (name, ..) in METRICS {
            let title = format!("{name} vs links.0.loss (mean ± sd over seeds and flows)");
            assert_eq!(
                line_colors(figure(&page, &title)),
                [hex("reno"), hex("fast")]
            );
        }
        let scatter = figure(
            &page,
            "Throughput vs p95 queueing delay: each flow of each run, and each controller's mean",
        );
        // Each controller's labelled mean: the circle drawn with its name.
        let lines: Vec<&str> = scatter.lines().collect();
        for cc in ["reno", "fast"] {
            let label = lines.iter().position(|l| *l == cc).expect(cc);
            let circle = lines[..label]
                .iter()
                .rev()
                .find(|l| l.starts_with("<circle"))
                .unwrap();
            assert!(
                circle.contains(&format!("fill=\"{}\"", hex(cc))),
                "{cc}: {circle}"
            );
        }
    }

    #[test]
    fn error_bars_stop_at_zero_delay() {
        let mut c = collected();
        // p95 delays of 1 and 100 ms over the seeds: a mean of 50.5 ± 70 ms, whose bar would
        // reach −19.5 ms.
        for r in &mut c.records {
            let seed = r.sweep.axes["seed"].as_i64().unwrap();
            for f in &mut r.summary.flows {
                f.queueing_delay_ms.p95 = if seed == 1 { 1.0 } else { 100.0 };
            }
        }
        let page = html(&c, "grid").unwrap();
        let svg = figure(
            &page,
            "p95 queueing delay vs links.0.loss (mean ± sd over seeds and flows)",
        );
        // Every bar ends at or above the y axis's lowest tick (0), and no tick is negative.
        let points = |l: &str| -> Vec<(i32, i32)> {
            let pts = l
                .split("points=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            pts.split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        };
        let thin: Vec<&str> = svg
            .lines()
            .filter(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"1\""))
            .collect();
        let zero_tick = thin
            .iter()
            .filter(|l| l.contains("stroke=\"#000000\""))
            .map(|l| points(l))
            .filter(|p| p.len() == 2 && p[0].1 == p[1].1 && p[1].0 - p[0].0 == 5 && p[1].0 < 100)
            .map(|p| p[0].1)
            .max()
            .unwrap();
        let bar_bottom = thin
            .iter()
            .filter(|l| !l.contains("stroke=\"#000000\""))
            .flat_map(|l| points(l))
            .map(|p| p.1)
            .max()
            .unwrap();
        assert!(
            bar_bottom <= zero_tick,
            "a bar reaches {bar_bottom} px, 0 is at {zero_tick} px"
        );
        let negative = svg
            .lines()
            .filter(|l| l.starts_with('-') && l[1..].parse::<f64>().is_ok())
            .count();
        assert_eq!(negative, 0, "the delay axis reaches below 0:\n{svg}");
    }

    #[test]
    fn small_loss_rates_print_with_significant_digits() {
        let mut c = collected();
        for r in &mut c.records {
            for f in &mut r.summary.flows {
                f.loss_rate = 3.1e-5;
            }
        }
        let table = controller_table(&c);
        assert!(table.contains("0.0031 ± 0"), "{table}");
        assert!(html(&c, "grid").unwrap().contains("0.0031 ± 0"));
    }

    #[test]
    fn curves_per_numeric_axis_and_one_scatter() {
        let c = collected();
        let page = html(&c, "grid").unwrap();
        // Four metrics against the loss axis (seed is averaged over), then the scatter.
        assert_eq!(page.matches("<svg").count(), 5);
        assert!(page.contains("Throughput vs links.0.loss (mean ± sd over seeds and flows)"));
        assert!(page.contains("links.0.loss, log scale, 0 drawn at 1e-8"));
        assert!(page.contains("boom &lt;here&gt;") && page.contains("6 of 7 runs (failed 1: 6)"));
        assert!(!page.contains("NaN"));
        // The per-controller table: reno's mean throughput over the six runs.
        let by = by_controller(&c);
        assert_eq!(
            by.iter().map(|b| b.cc.as_str()).collect::<Vec<_>>(),
            ["fast", "reno"]
        );
        let expected = (0..6)
            .map(|i| {
                let loss = [0.0, 1e-7, 1e-4][i / 2];
                100.0 * (1.0 - loss * 5e3) + (i % 2 + 1) as f64
            })
            .sum::<f64>()
            / 6.0;
        assert!(
            (by[1].stats[0].0 - expected).abs() < 1e-9,
            "{:?}",
            by[1].stats[0]
        );
        assert_eq!(by[1].flows, 6);
        let table = controller_table(&c);
        assert!(table.lines().nth(2).unwrap().starts_with("fast"), "{table}");
    }
}
