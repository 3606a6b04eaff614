//! Two summaries side by side (`longhaul compare A.json B.json`), e.g. the same scenario in `sim`
//! and in `lab`, or two algorithms on one path.
//!
//! Flows are matched by id, links by name and responsive cross traffic by its scenario entry's
//! index; one present in only one summary gets a row with "-" on the other side. Each row shows both values in display units (Mb/s, %, ms,
//! 10^15 b·m/s), the difference B − A, and the relative difference (B − A)/|A| in percent.

use super::table::{num, pct, Align, Table};
use crate::summary::{FlowSummary, LinkSummary, ResponsiveCross, Summary};
use crate::units::{bmps_to_e15, to_mbps};

/// One compared metric.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparisonRow {
    /// "aggregate", "flow 3 (fast)", "link bottleneck".
    pub item: String,
    /// Metric with its display unit, "throughput Mb/s".
    pub metric: String,
    /// The value in summary A, in the metric's display unit (`None`: A lacks it).
    pub a: Option<f64>,
    /// The value in summary B, in the metric's display unit (`None`: B lacks it).
    pub b: Option<f64>,
}

impl ComparisonRow {
    /// B − A, when both sides have a finite value.
    pub fn difference(&self) -> Option<f64> {
        match (self.a, self.b) {
            (Some(a), Some(b)) if a.is_finite() && b.is_finite() => Some(b - a),
            _ => None,
        }
    }

    /// (B − A)/|A| × 100, when A is finite and non-zero.
    pub fn relative_pct(&self) -> Option<f64> {
        let a = self.a?;
        if a == 0.0 {
            return None;
        }
        Some(100.0 * self.difference()? / a.abs())
    }
}

/// The comparison of two summaries.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The heading of column A (`longhaul compare` uses the file's path).
    pub a_label: String,
    /// The heading of column B.
    pub b_label: String,
    /// One row per metric of the aggregate, each flow and each link found in either summary.
    pub rows: Vec<ComparisonRow>,
    /// Differences in setup worth knowing before reading the numbers (scenario, duration, seed).
    pub notes: Vec<String>,
}

fn flow_metrics(f: &FlowSummary) -> Vec<(&'static str, f64)> {
    vec![
        ("throughput Mb/s", to_mbps(f.throughput_bps)),
        ("utilization %", 100.0 * f.utilization),
        ("min RTT ms", f.min_rtt_ms),
        ("queueing delay mean ms", f.queueing_delay_ms.mean),
        ("queueing delay p95 ms", f.queueing_delay_ms.p95),
        ("loss %", 100.0 * f.loss_rate),
        ("retransmits pkts", f.retransmits as f64),
        ("b·m/s 10^15", bmps_to_e15(f.bmps)),
    ]
}

fn link_metrics(l: &LinkSummary) -> Vec<(&'static str, f64)> {
    vec![
        ("utilization %", 100.0 * l.utilization),
        ("drops pkts", l.drops as f64),
        ("queue delay mean ms", l.queue_delay_ms.mean),
        ("queue delay p95 ms", l.queue_delay_ms.p95),
        ("queue delay p99 ms", l.queue_delay_ms.p99),
    ]
}

fn cross_metrics(c: &ResponsiveCross) -> Vec<(&'static str, f64)> {
    vec![
        ("transfers begun", c.transfers as f64),
        ("transfers completed", c.completed as f64),
        ("delivered MB", c.bytes_delivered as f64 / 1e6),
        ("throughput Mb/s", to_mbps(c.rate_bps)),
    ]
}

fn pair_rows(
    rows: &mut Vec<ComparisonRow>,
    item: String,
    a: Option<Vec<(&'static str, f64)>>,
    b: Option<Vec<(&'static str, f64)>>,
) {
    let names: Vec<&'static str> = a
        .as_ref()
        .or(b.as_ref())
        .map(|m| m.iter().map(|(n, _)| *n).collect())
        .unwrap_or_default();
    for (i, name) in names.into_iter().enumerate() {
        rows.push(ComparisonRow {
            item: item.clone(),
            metric: name.to_string(),
            a: a.as_ref().map(|m| m[i].1),
            b: b.as_ref().map(|m| m[i].1),
        });
    }
}

/// The runs of `a` and `b` (labelled `a_label`, `b_label`) matched by scenario name, in `a`'s
/// order, and a note for each scenario only one side has (`a`'s first).
pub fn by_scenario<'s>(
    a: &'s [Summary],
    a_label: &str,
    b: &'s [Summary],
    b_label: &str,
) -> (Vec<(&'s Summary, &'s Summary)>, Vec<String>) {
    let (mut pairs, mut notes) = (Vec::new(), Vec::new());
    for sa in a {
        match b.iter().find(|sb| sb.scenario == sa.scenario) {
            Some(sb) => pairs.push((sa, sb)),
            None => notes.push(format!(
                "note: scenario `{}` is only in {a_label}",
                sa.scenario
            )),
        }
    }
    for sb in b
        .iter()
        .filter(|sb| !a.iter().any(|sa| sa.scenario == sb.scenario))
    {
        notes.push(format!(
            "note: scenario `{}` is only in {b_label}",
            sb.scenario
        ));
    }
    (pairs, notes)
}

/// Compare summary `b` against `a`.
pub fn compare(a: &Summary, a_label: &str, b: &Summary, b_label: &str) -> Comparison {
    let mut rows = Vec::new();
    let agg = |s: &Summary| {
        vec![
            ("throughput Mb/s", to_mbps(s.aggregate.throughput_bps)),
            ("utilization %", 100.0 * s.aggregate.utilization),
            ("Jain index", s.aggregate.jain),
            ("CoV (1 s)", s.aggregate.cov),
            ("b·m/s 10^15", bmps_to_e15(s.aggregate.bmps)),
        ]
    };
    pair_rows(&mut rows, "aggregate".into(), Some(agg(a)), Some(agg(b)));

    let mut ids: Vec<u32> = a.flows.iter().chain(&b.flows).map(|f| f.id).collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let fa = a.flows.iter().find(|f| f.id == id);
        let fb = b.flows.iter().find(|f| f.id == id);
        let cc = match (fa, fb) {
            (Some(x), Some(y)) if x.cc != y.cc => format!("{}/{}", x.cc, y.cc),
            (Some(x), _) | (None, Some(x)) => x.cc.clone(),
            (None, None) => String::new(),
        };
        pair_rows(
            &mut rows,
            format!("flow {id} ({cc})"),
            fa.map(flow_metrics),
            fb.map(flow_metrics),
        );
    }

    let mut names: Vec<&str> = a
        .links
        .iter()
        .chain(&b.links)
        .map(|l| l.name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let la = a.links.iter().find(|l| l.name == name);
        let lb = b.links.iter().find(|l| l.name == name);
        pair_rows(
            &mut rows,
            format!("link {name}"),
            la.map(link_metrics),
            lb.map(link_metrics),
        );
    }

    let mut entries: Vec<u32> = a
        .responsive_cross
        .iter()
        .chain(&b.responsive_cross)
        .map(|c| c.index)
        .collect();
    entries.sort_unstable();
    entries.dedup();
    for i in entries {
        let ca = a.responsive_cross.iter().find(|c| c.index == i);
        let cb = b.responsive_cross.iter().find(|c| c.index == i);
        let what = ca
            .or(cb)
            .map(|c| format!("{}, {}", c.kind, c.cc))
            .unwrap_or_default();
        pair_rows(
            &mut rows,
            format!("cross traffic {i} ({what})"),
            ca.map(cross_metrics),
            cb.map(cross_metrics),
        );
    }

    let mut notes = Vec::new();
    if a.scenario != b.scenario {
        notes.push(format!(
            "different scenarios: {} vs {}",
            a.scenario, b.scenario
        ));
    }
    if a.duration_s != b.duration_s {
        notes.push(format!(
            "different durations: {} s vs {} s",
            num(a.duration_s, 1),
            num(b.duration_s, 1)
        ));
    }
    if a.mode == b.mode && a.mode == crate::summary::Mode::Sim && a.seed != b.seed {
        notes.push(format!("different seeds: {} vs {}", a.seed, b.seed));
    }
    Comparison {
        a_label: a_label.to_string(),
        b_label: b_label.to_string(),
        rows,
        notes,
    }
}

impl Comparison {
    /// The comparison as an aligned table: item, metric, A, B, B − A, (B − A)/A.
    pub fn render(&self) -> String {
        use Align::{Left, Right};
        let mut t = Table::new(&[Left, Left, Right, Right, Right, Right]);
        t.header(&[
            "",
            "",
            &format!("A: {}", self.a_label),
            &format!("B: {}", self.b_label),
            "B − A",
            "B/A − 1",
        ]);
        let mut last_item = "";
        for r in &self.rows {
            let item = if r.item == last_item { "" } else { &r.item };
            last_item = &r.item;
            let decimals = if r.metric.ends_with("pkts") || r.metric.starts_with("transfers") {
                0
            } else if r.metric.starts_with("Jain") || r.metric.starts_with("CoV") {
                3
            } else {
                2
            };
            let loss = r.metric.starts_with("loss");
            let side = |v: Option<f64>| {
                v.map_or("-".to_string(), |x| {
                    if loss {
                        pct(x)
                    } else {
                        num(x, decimals)
                    }
                })
            };
            let diff = |d: f64| match (loss, d > 0.0) {
                (true, true) => format!("+{}", pct(d)),
                (true, false) => pct(d),
                (false, _) => format!("{d:+.decimals$}"),
            };
            t.row(vec![
                item.to_string(),
                r.metric.clone(),
                side(r.a),
                side(r.b),
                r.difference().map_or("-".to_string(), diff),
                r.relative_pct()
                    .map_or("-".to_string(), |p| format!("{p:+.1} %")),
            ]);
        }
        let mut out = String::new();
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out.push_str(&t.render());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::example_summary;
    use crate::summary::Mode;

    #[test]
    fn runs_are_matched_by_scenario_and_the_rest_noted() {
        let named = |n: &str| Summary {
            scenario: n.into(),
            ..example_summary()
        };
        let a = [named("x"), named("y")];
        let b = [named("z"), named("x")];
        let (pairs, notes) = by_scenario(&a, "A", &b, "B");
        assert_eq!(pairs.len(), 1);
        assert_eq!((&*pairs[0].0.scenario, &*pairs[0].1.scenario), ("x", "x"));
        assert_eq!(
            notes,
            [
                "note: scenario `y` is only in A",
                "note: scenario `z` is only in B"
            ]
        );
    }

    #[test]
    fn identical_summaries_have_zero_differences() {
        let s = example_summary();
        let c = compare(&s, "a.json", &s, "b.json");
        assert!(c.notes.is_empty());
        // 5 aggregate + 3 flows × 8 + 1 link × 5.
        assert_eq!(c.rows.len(), 5 + 24 + 5);
        assert!(c
            .rows
            .iter()
            .all(|r| r.difference().is_none_or(|d| d == 0.0)));
    }

    #[test]
    fn differences_and_missing_flows() {
        let a = example_summary();
        let mut b = example_summary();
        b.mode = Mode::Lab;
        b.flows[0].throughput_bps = a.flows[0].throughput_bps * 0.9;
        b.flows.remove(2);
        b.duration_s = 30.0;
        let c = compare(&a, "sim", &b, "lab");
        let row = c
            .rows
            .iter()
            .find(|r| r.item == "flow 1 (fast)" && r.metric == "throughput Mb/s")
            .unwrap();
        assert!((row.relative_pct().unwrap() + 10.0).abs() < 1e-9);
        assert!((row.difference().unwrap() + 30.392).abs() < 1e-9); // −10 % of 303.92 Mb/s
        let missing = c.rows.iter().find(|r| r.item == "flow 3 (reno)").unwrap();
        assert!(missing.a.is_some() && missing.b.is_none());
        assert_eq!(c.notes, vec!["different durations: 20.0 s vs 30.0 s"]);
        let text = c.render();
        assert!(text.contains("A: sim") && text.contains("B: lab"));
        assert!(text.contains("-10.0 %"), "{text}");
        assert!(text.contains("-30.39"), "{text}");
        assert!(text.starts_with("note: different durations"));
    }

    #[test]
    fn responsive_cross_traffic_is_paired_by_its_entry() {
        let entry = |index: u32, transfers: u64, bytes: u64| ResponsiveCross {
            index,
            kind: "web".into(),
            link: "path".into(),
            cc: "reno".into(),
            transfers,
            completed: transfers - 1,
            bytes_delivered: bytes,
            rate_bps: bytes as f64 * 8.0 / 10.0,
        };
        let mut a = example_summary();
        a.responsive_cross = vec![entry(1, 40, 5_000_000), entry(3, 7, 1_000_000)];
        let mut b = example_summary();
        b.responsive_cross = vec![entry(1, 40, 4_000_000)];
        let c = compare(&a, "sim", &b, "lab");
        let row = |item: &str, metric: &str| {
            c.rows
                .iter()
                .find(|r| r.item == item && r.metric == metric)
                .unwrap_or_else(|| panic!("no {item} {metric}"))
                .clone()
        };
        let begun = row("cross traffic 1 (web, reno)", "transfers begun");
        assert_eq!((begun.a, begun.b), (Some(40.0), Some(40.0)));
        let done = row("cross traffic 1 (web, reno)", "transfers completed");
        assert_eq!((done.a, done.b), (Some(39.0), Some(39.0)));
        let mb = row("cross traffic 1 (web, reno)", "delivered MB");
        assert_eq!((mb.a, mb.b), (Some(5.0), Some(4.0)));
        let rate = row("cross traffic 1 (web, reno)", "throughput Mb/s");
        assert!((rate.relative_pct().unwrap() + 20.0).abs() < 1e-9);
        let only_a = row("cross traffic 3 (web, reno)", "transfers begun");
        assert_eq!((only_a.a, only_a.b), (Some(7.0), None));
        // Counts print without decimals.
        assert!(c.render().contains("transfers begun"), "{}", c.render());
        assert!(!c.render().contains("40.00"), "{}", c.render());
    }

    #[test]
    fn relative_difference_of_zero_base_is_undefined() {
        let r = ComparisonRow {
            item: "x".into(),
            metric: "drops pkts".into(),
            a: Some(0.0),
            b: Some(4.0),
        };
        assert_eq!(r.difference(), Some(4.0));
        assert_eq!(r.relative_pct(), None);
    }
}
