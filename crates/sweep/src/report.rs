//! `report.html` of a sweep: how each controller's results move along each axis.
//!
//! * For every axis with numeric values (numbers, durations such as `"40ms"`, rates such as
//!   `"100mbit"`), other than `seed`: throughput, utilization, p95 queueing delay and loss rate
//!   against it, one line per controller (and per value of the remaining axes), each point the
//!   mean over seeds and flows with an error bar of one standard deviation. An axis spanning
//!   three decades or more (loss rates) is drawn on log10, with 0 one decade left of the rest.
//! * Throughput against p95 queueing delay, Pantheon style: every flow of every run as a small
//!   point, each controller's mean as a labelled one.
//! * Provenance: the runs' command lines, builds, kernels, CPUs and scenario files, each value
//!   once when every run shares it, else with the runs that have it.
//!
//! The plots are the metrics crate's (`longhaul_metrics::report::plot`), as in `sim --report`.

use crate::collect::{axis_text, Collected};
use crate::error::Result;
use longhaul_metrics::provenance::{merged_rows, Provenance};
use longhaul_metrics::report::plot::{line_chart, scatter_chart, Line, Point};
use longhaul_metrics::report::{
    escape_html as esc, html_page, html_table, num, pct, provenance_section, Align, Table,
};
use longhaul_metrics::summary::FlowSummary;
use longhaul_metrics::units::to_mbps;
use std::fmt::Write as _;

/// One flow of one run: the unit the plots average.
struct Sample<'a> {
    axes: &'a std::collections::BTreeMap<String, serde_json::Value>,
    flow: &'a FlowSummary,
}

type Metric = (&'static str, &'static str, fn(&FlowSummary) -> f64);

const METRICS: [Metric; 4] = [
    ("Throughput", "throughput (Mb/s)", |f| {
        to_mbps(f.throughput_bps)
    }),
    ("Utilization", "utilization (%)", |f| 100.0 * f.utilization),
    ("p95 queueing delay", "p95 queueing delay (ms)", |f| {
        f.queueing_delay_ms.p95
    }),
    ("Loss rate", "loss rate (%)", |f| 100.0 * f.loss_rate),
];

/// A unit and how to read an axis value in it.
type Reader = (&'static str, fn(&serde_json::Value) -> Option<f64>);

/// A line's samples by x value.
type Points = Vec<(f64, Vec<f64>)>;

/// One controller over the whole sweep.
pub struct ControllerStats {
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
    /// log10, with this x for zero.
    log_zero: Option<f64>,
}

impl Scale {
    /// A numeric reading for every value of the axis, or `None` (categorical).
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
            let positive = xs.iter().copied().filter(|&x| x > 0.0);
            let (lo, hi) = positive.fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
                (lo.min(x), hi.max(x))
            });
            let log_zero = (xs.iter().all(|&x| x >= 0.0) && lo.is_finite() && hi / lo >= 1e3)
                .then(|| lo.log10().floor() - 1.0);
            return Some((Scale { unit, log_zero }, xs));
        }
        None
    }

    fn x(&self, v: f64) -> f64 {
        match self.log_zero {
            Some(z) if v <= 0.0 => z,
            Some(_) => v.log10(),
            None => v,
        }
    }

    fn title(&self, axis: &str) -> String {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.unit)
        };
        match self.log_zero {
            Some(z) => format!("log10 {axis}{unit}; 0 drawn at {z}"),
            None => format!("{axis}{unit}"),
        }
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

/// The line a sample belongs to on a plot against `x_axis`: its controller, and the values of
/// the axes that are neither the x axis nor seeds (an axis whose value is the controller's name
/// adds nothing).
fn line_name(s: &Sample, axes: &[String], x_axis: &str) -> String {
    let mut name = s.flow.cc.clone();
    for a in axes {
        if a == x_axis || a == "seed" {
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
                .map(|(_, _, get)| mean_sd(&of.iter().map(|s| get(s.flow)).collect::<Vec<_>>()))
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
    for axis in &c.axes {
        if axis == "seed" {
            continue;
        }
        let values: Vec<&serde_json::Value> =
            samples.iter().filter_map(|s| s.axes.get(axis)).collect();
        let Some((scale, xs)) = Scale::of(&values) else {
            continue;
        };
        let mut distinct = xs.clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        if distinct.len() < 2 {
            continue;
        }
        for (name, y_desc, get) in METRICS {
            // line -> x -> samples, in first-met order.
            let mut lines: Vec<(String, Points)> = Vec::new();
            for (s, &x) in samples.iter().zip(&xs) {
                let key = line_name(s, &c.axes, axis);
                let at = match lines.iter().position(|l| l.0 == key) {
                    Some(i) => i,
                    None => {
                        lines.push((key, Vec::new()));
                        lines.len() - 1
                    }
                };
                let pts = &mut lines[at].1;
                match pts.iter_mut().find(|p| p.0 == x) {
                    Some(p) => p.1.push(get(s.flow)),
                    None => pts.push((x, vec![get(s.flow)])),
                }
            }
            let lines: Vec<Line> = lines
                .into_iter()
                .map(|(name, mut pts)| {
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let stats: Vec<(f64, f64, f64)> = pts
                        .iter()
                        .map(|(x, ys)| {
                            let (m, sd) = mean_sd(ys);
                            (scale.x(*x), m, sd)
                        })
                        .collect();
                    Line {
                        name,
                        points: stats.iter().map(|p| (p.0, p.1)).collect(),
                        spread: stats.iter().map(|p| p.2).collect(),
                    }
                })
                .collect();
            let title = format!("{name} vs {axis} (mean ± sd over seeds and flows)");
            let svg = line_chart(&title, &scale.title(axis), y_desc, &lines)?;
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
        let loss = [j(0.into()), j(1e-8.into()), j(1e-6.into()), j(1e-4.into())];
        let (s, xs) = Scale::of(&loss.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(s.log_zero, Some(-9.0));
        assert_eq!(
            xs.iter().map(|&x| s.x(x)).collect::<Vec<_>>(),
            [-9.0, -8.0, -6.0, -4.0]
        );
        assert_eq!(s.title("links.0.loss"), "log10 links.0.loss; 0 drawn at -9");
        let delay = [j("10ms".into()), j("1.5s".into())];
        let (s, xs) = Scale::of(&delay.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!((s.unit, xs), ("ms", vec![10.0, 1500.0]));
        assert_eq!(s.title("links.0.delay"), "links.0.delay (ms)");
        let rate = [j("100mbit".into()), j("1gbit".into())];
        let (s, xs) = Scale::of(&rate.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!((s.unit, xs), ("Mb/s", vec![100.0, 1000.0]));
        let cc = [j("reno".into()), j("fast".into())];
        assert!(Scale::of(&cc.iter().collect::<Vec<_>>()).is_none());
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
                        scenario: "s.toml".into(),
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
            runs: 7,
            records,
            missing: vec![(6, Some("boom <here>".into()))],
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
        assert!(page.contains("log10 links.0.loss; 0 drawn at -8"));
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
