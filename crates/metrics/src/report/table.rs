//! Aligned text tables, and the terminal rendering of a result summary.

use crate::summary::Summary;
use crate::units::{bmps_to_e15, to_mbps};

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text starts at the column's left edge.
    Left,
    /// Text ends at the column's right edge (numbers).
    Right,
}

/// A text table: header rows, then data rows, columns padded to their widest cell.
#[derive(Debug, Clone, Default)]
pub struct Table {
    headers: Vec<Vec<String>>,
    rows: Vec<Vec<String>>,
    align: Vec<Align>,
}

impl Table {
    /// A table whose columns are aligned as given (extra columns align right).
    pub fn new(align: &[Align]) -> Self {
        Self {
            align: align.to_vec(),
            ..Self::default()
        }
    }

    /// Add a header row (column names, or their units under them).
    pub fn header<S: AsRef<str>>(&mut self, cells: &[S]) -> &mut Self {
        self.headers
            .push(cells.iter().map(|c| c.as_ref().to_string()).collect());
        self
    }

    /// Add a data row.
    pub fn row(&mut self, cells: Vec<String>) -> &mut Self {
        self.rows.push(cells);
        self
    }

    /// True when the table has no data row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Render with two spaces between columns, a rule under the headers, no trailing spaces.
    pub fn render(&self) -> String {
        let ncol = self
            .headers
            .iter()
            .chain(&self.rows)
            .map(Vec::len)
            .max()
            .unwrap_or(0);
        let mut width = vec![0usize; ncol];
        for r in self.headers.iter().chain(&self.rows) {
            for (i, c) in r.iter().enumerate() {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let line = |r: &Vec<String>| {
            let mut s = String::new();
            for (i, w) in width.iter().enumerate() {
                let c = r.get(i).map(String::as_str).unwrap_or("");
                let pad = w - c.chars().count();
                if i > 0 {
                    s.push_str("  ");
                }
                match self.align.get(i).copied().unwrap_or(Align::Right) {
                    Align::Left => {
                        s.push_str(c);
                        s.push_str(&" ".repeat(pad));
                    }
                    Align::Right => {
                        s.push_str(&" ".repeat(pad));
                        s.push_str(c);
                    }
                }
            }
            s.trim_end().to_string() + "\n"
        };
        let mut out = String::new();
        for h in &self.headers {
            out.push_str(&line(h));
        }
        if !self.headers.is_empty() {
            let total = width.iter().sum::<usize>() + 2 * width.len().saturating_sub(1);
            out.push_str(&"-".repeat(total));
            out.push('\n');
        }
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

/// A number with `decimals` decimals, or "-" if it is not finite.
pub fn num(x: f64, decimals: usize) -> String {
    if x.is_finite() {
        format!("{x:.decimals$}")
    } else {
        "-".to_string()
    }
}

/// A percentage (already × 100) with at least two significant digits and two decimals: "3.07",
/// "0.50", "0.0031", "0.0000012"; zero as "0", "-" if it is not finite. Loss rates of 1e-5 %
/// stay readable where a fixed number of decimals prints "0.00".
pub fn pct(x: f64) -> String {
    if !x.is_finite() {
        return "-".to_string();
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let decimals = (1 - x.abs().log10().floor() as i64).max(2) as usize;
    format!("{x:.decimals$}")
}

pub(crate) fn opt_num(x: Option<f64>, decimals: usize) -> String {
    x.map_or("-".to_string(), |x| num(x, decimals))
}

/// The summary as the terminal shows it: a heading, then flows, aggregate, links, responsive
/// cross traffic and claims.
pub fn summary_table(s: &Summary) -> String {
    use Align::{Left, Right};
    let mut out = format!(
        "{}  ({} mode, {} s, seed {})\n\n",
        s.scenario,
        s.mode,
        num(s.duration_s, 1),
        s.seed
    );

    let mut flows = Table::new(&[Right, Left]);
    flows.header(&[
        "flow",
        "cc",
        "throughput",
        "util",
        "min RTT",
        "qdelay",
        "qdelay",
        "loss",
        "retrans",
        "b·m/s",
    ]);
    flows.header(&[
        "", "", "Mb/s", "% own", "ms", "mean ms", "p95 ms", "%", "pkts", "10^15",
    ]);
    for f in &s.flows {
        flows.row(vec![
            f.id.to_string(),
            f.cc.clone(),
            num(to_mbps(f.throughput_bps), 1),
            num(100.0 * f.utilization, 1),
            num(f.min_rtt_ms, 1),
            num(f.queueing_delay_ms.mean, 2),
            num(f.queueing_delay_ms.p95, 2),
            pct(100.0 * f.loss_rate),
            f.retransmits.to_string(),
            num(bmps_to_e15(f.bmps), 2),
        ]);
    }
    let a = &s.aggregate;
    flows.row(vec![
        "all".to_string(),
        format!("{} flows", s.flows.len()),
        num(to_mbps(a.throughput_bps), 1),
        num(100.0 * a.utilization, 1),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        num(bmps_to_e15(a.bmps), 2),
    ]);
    out.push_str(&flows.render());
    out.push_str(&format!(
        "fairness (Jain) {}   stability (CoV of 1-s throughput) {}\n",
        num(a.jain, 3),
        num(a.cov, 3)
    ));

    let drops = s.drop_ledger().rows();
    if !drops.is_empty() {
        let list: Vec<String> = drops
            .iter()
            .map(|d| format!("{} at {} ({})", d.packets, d.location, d.reason))
            .collect();
        out.push_str(&format!("drops: {}\n", list.join(", ")));
    }

    if !s.links.is_empty() {
        let mut links = Table::new(&[Left]);
        links.header(&[
            "link", "capacity", "util", "drops", "queue", "queue", "queue",
        ]);
        links.header(&["", "Mb/s", "%", "pkts", "mean ms", "p95 ms", "p99 ms"]);
        for l in &s.links {
            links.row(vec![
                l.name.clone(),
                num(to_mbps(l.capacity_bps), 0),
                num(100.0 * l.utilization, 1),
                l.drops.to_string(),
                num(l.queue_delay_ms.mean, 2),
                num(l.queue_delay_ms.p95, 2),
                num(l.queue_delay_ms.p99, 2),
            ]);
        }
        out.push('\n');
        out.push_str(&links.render());
    }

    if !s.responsive_cross.is_empty() {
        let mut cross = Table::new(&[Right, Left, Left, Right, Right, Right, Right]);
        cross.header(&[
            "cross",
            "kind",
            "cc",
            "transfers",
            "completed",
            "delivered",
            "throughput",
        ]);
        cross.header(&["", "", "", "", "", "MB", "Mb/s"]);
        for c in &s.responsive_cross {
            cross.row(vec![
                c.index.to_string(),
                c.kind.clone(),
                c.cc.clone(),
                c.transfers.to_string(),
                c.completed.to_string(),
                num(c.bytes_delivered as f64 / 1e6, 2),
                num(to_mbps(c.rate_bps), 2),
            ]);
        }
        out.push('\n');
        out.push_str(&cross.render());
    }

    if !s.claims.is_empty() {
        let mut claims = Table::new(&[Left, Left, Right, Left]);
        claims.header(&["claim", "paper", "measured", "holds"]);
        for c in &s.claims {
            claims.row(vec![
                c.claim.clone(),
                c.paper.to_string(),
                num(c.measured, 4),
                if c.holds { "yes" } else { "NO" }.to_string(),
            ]);
        }
        out.push('\n');
        out.push_str(&claims.render());
    }
    out
}

/// One row per labelled run (`longhaul lab NAME`'s variants): the numbers seed 000's Table 1
/// reports (utilization, throughput, queueing delay, loss, bit-metres per second), plus
/// fairness.
pub fn variants_table(rows: &[(String, Summary)]) -> String {
    let mut out = format!(
        "\n{:<12} {:>8} {:>12} {:>9} {:>9} {:>9} {:>11} {:>6}\n",
        "variant", "util %", "thru Mb/s", "qd mean", "qd p95", "loss %", "1e15 b·m/s", "jain"
    );
    for (label, s) in rows {
        let n = s.flows.len().max(1) as f64;
        let mean = s
            .flows
            .iter()
            .map(|f| f.queueing_delay_ms.mean)
            .sum::<f64>()
            / n;
        let p95 = s
            .flows
            .iter()
            .map(|f| f.queueing_delay_ms.p95)
            .fold(f64::NAN, f64::max);
        let loss = s.flows.iter().map(|f| f.loss_rate).sum::<f64>() / n;
        out.push_str(&format!(
            "{:<12} {:>8.1} {:>12.1} {:>6.1} ms {:>6.1} ms {:>9.4} {:>11.2} {:>6.3}\n",
            label,
            s.aggregate.utilization * 100.0,
            s.aggregate.throughput_bps / 1e6,
            mean,
            p95,
            loss * 100.0,
            s.aggregate.bmps / 1e15,
            s.aggregate.jain
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::example_summary;

    #[test]
    fn percentages_keep_two_significant_digits() {
        assert_eq!(pct(0.0), "0");
        assert_eq!(pct(0.0031), "0.0031");
        assert_eq!(pct(0.000_001_234), "0.0000012");
        assert_eq!(pct(0.5), "0.50");
        assert_eq!(pct(3.0712), "3.07");
        assert_eq!(pct(100.0), "100.00");
        assert_eq!(pct(-0.0031), "-0.0031");
        assert_eq!(pct(f64::NAN), "-");
        // The summary table prints a 1e-5 % loss rate, which four decimals print as 0.0000.
        let mut s = crate::example::example_summary();
        s.flows[0].loss_rate = 3.1e-7;
        let t = summary_table(&s);
        assert!(t.contains(" 0.000031 "), "{t}");
    }

    #[test]
    fn columns_align() {
        let mut t = Table::new(&[Align::Left, Align::Right]);
        t.header(&["name", "Mb/s"]);
        t.row(vec!["fast".into(), "925.0".into()]);
        t.row(vec!["highspeed".into(), "1797.0".into()]);
        assert_eq!(
            t.render(),
            "name         Mb/s\n-----------------\nfast        925.0\nhighspeed  1797.0\n"
        );
    }

    #[test]
    fn summary_table_shows_units_and_values() {
        let s = example_summary();
        let text = summary_table(&s);
        assert!(text.starts_with("example-3flows  (sim mode, 20.0 s, seed 1)"));
        for unit in ["Mb/s", "%", "ms", "10^15", "p95 ms", "p99 ms"] {
            assert!(text.contains(unit), "missing {unit}");
        }
        // Flow 1 delivered 759,800,000 B in 20 s = 303.9 Mb/s.
        assert!(text.contains("303.9"), "{text}");
        assert!(text.contains("bottleneck"));
        // The Reno flow lost one packet at the top of each of its four sawteeth.
        assert!(
            text.contains("drops: 4 at bottleneck (queue_full)"),
            "{text}"
        );
        assert!(text.contains("aggregate utilization"));
        assert!(!text.contains("NaN"));
        // Every line of the flow table has the same width as its rule or less.
        let rule = text.lines().find(|l| l.starts_with("---")).unwrap().len();
        assert!(text.lines().take(6).all(|l| l.chars().count() <= rule));
    }

    #[test]
    fn responsive_cross_traffic_has_its_own_table() {
        let mut s = example_summary();
        assert!(!summary_table(&s).contains("transfers"));
        s.responsive_cross = vec![crate::summary::ResponsiveCross {
            index: 2,
            kind: "web".into(),
            link: "bottleneck".into(),
            cc: "reno".into(),
            transfers: 117,
            completed: 115,
            bytes_delivered: 12_345_678,
            rate_bps: 4.938e6,
        }];
        let text = summary_table(&s);
        let line = text
            .lines()
            .find(|l| l.contains("web"))
            .unwrap_or_else(|| panic!("{text}"));
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells, ["2", "web", "reno", "117", "115", "12.35", "4.94"]);
    }

    #[test]
    fn undefined_values_print_as_dash() {
        assert_eq!(num(f64::NAN, 2), "-");
        assert_eq!(opt_num(None, 2), "-");
        assert_eq!(num(1.005, 1), "1.0");
    }
}
