//! `longhaul sweep collect DIR`: every run's result merged into one table.
//!
//! `results.csv` has one row per run and flow: the run's index, every axis value, then every
//! metric of the summary — the flow's, the aggregate's (`agg_…`) and each link's
//! (`link.NAME.…`). Numbers are written exactly (they read back to the same bits); an undefined
//! measurement (NaN, JSON `null`) is an empty cell. `results.jsonl` has one line per run: the
//! run's record without its time series (those stay in `runs/<key>.json`).
//!
//! The runs are those of the directory's plan (`sweep.json`), in its index order, each record
//! labelled with its index and axis values in that plan. Runs without a result are listed, not
//! invented: a collect before the sweep has finished merges what there is and says what is
//! missing; results of runs outside the plan (left by a sweep file that has since dropped
//! values) are counted and kept.

use crate::error::{Result, SweepError};
use crate::plan::Plan;
use crate::store::{RunRecord, SweepDir};
use longhaul_metrics::summary::{FlowSummary, LinkSummary, Summary};

/// The results of a sweep directory.
pub struct Collected {
    /// Axis names in column order.
    pub axes: Vec<String>,
    /// The axes by dimension, outermost first: the axes of a `[[zip]]` group vary together,
    /// as one dimension; any other axis is a dimension of its own.
    pub dims: Vec<Vec<String>>,
    /// The plan's number of runs.
    pub runs: u64,
    /// Finished runs, by index.
    pub records: Vec<RunRecord>,
    /// Runs without a result: index, and the error of the last try if it failed.
    pub missing: Vec<(u64, Option<String>)>,
    /// Results in the directory of runs outside the plan.
    pub others: u64,
}

impl Collected {
    /// "24 of 24 runs" or "20 of 24 runs (2 failed: 6, 7; 2 not run: 22, 23)".
    pub fn describe(&self) -> String {
        let mut s = format!("{} of {} runs", self.records.len(), self.runs);
        if self.missing.is_empty() {
            return s;
        }
        let list = |v: Vec<u64>| {
            let shown: Vec<String> = v.iter().take(10).map(u64::to_string).collect();
            let more = if v.len() > 10 { ", …" } else { "" };
            format!("{}: {}{more}", v.len(), shown.join(", "))
        };
        let (failed, absent): (Vec<_>, Vec<_>) = self.missing.iter().partition(|m| m.1.is_some());
        let ids = |v: Vec<&(u64, Option<String>)>| v.into_iter().map(|m| m.0).collect::<Vec<_>>();
        let (failed, absent) = (ids(failed), ids(absent));
        let mut parts = Vec::new();
        if !failed.is_empty() {
            parts.push(format!("failed {}", list(failed)));
        }
        if !absent.is_empty() {
            parts.push(format!("not run {}", list(absent)));
        }
        s.push_str(&format!(" ({})", parts.join("; ")));
        s
    }
}

/// Read every run's result of `dir`'s plan.
pub fn collect(dir: &SweepDir) -> Result<Collected> {
    let plan = Plan::from_stamp(dir.stamp.clone(), &dir.root.join("sweep.json"), true)?;
    let mut keys = dir.finished_keys()?;
    let mut records = Vec::new();
    let mut missing = Vec::new();
    for i in 0..plan.runs {
        let run = plan.run(i)?;
        keys.remove(&run.key());
        match dir.read_result(&run)? {
            Some(r) => records.push(r),
            None => missing.push((i, dir.read_failure(&run).map(|f| f.error))),
        }
    }
    Ok(Collected {
        axes: dir.stamp.axes.clone(),
        dims: dir
            .stamp
            .dims
            .iter()
            .map(|d| d.iter().map(|a| a.name.clone()).collect())
            .collect(),
        runs: dir.stamp.runs,
        records,
        missing,
        others: keys.len() as u64,
    })
}

/// One CSV cell.
enum Cell {
    Text(String),
    Num(f64),
    Int(u64),
    Empty,
}

impl Cell {
    fn opt(x: Option<f64>) -> Cell {
        x.map_or(Cell::Empty, Cell::Num)
    }

    fn opt_int(x: Option<u64>) -> Cell {
        x.map_or(Cell::Empty, Cell::Int)
    }

    fn render(self) -> String {
        match self {
            Cell::Text(s) => s,
            // Debug is Rust's shortest exact form, with an exponent for very small or large
            // numbers (1e-8, not 0.00000001).
            Cell::Num(x) if x.is_finite() => format!("{x:?}"),
            Cell::Num(x) if x.is_nan() => String::new(),
            Cell::Num(x) => if x > 0.0 { "inf" } else { "-inf" }.to_string(),
            Cell::Int(n) => n.to_string(),
            Cell::Empty => String::new(),
        }
    }
}

type FlowColumn = (&'static str, fn(&FlowSummary) -> Cell);
type RunColumn = (&'static str, fn(&Summary) -> Cell);
type LinkColumn = (&'static str, fn(&LinkSummary) -> Cell);

fn flow_columns() -> Vec<FlowColumn> {
    vec![
        ("flow", |f| Cell::Int(u64::from(f.id))),
        ("cc", |f| Cell::Text(f.cc.clone())),
        ("params", |f| {
            f.params.clone().map_or(Cell::Empty, Cell::Text)
        }),
        ("throughput_bps", |f| Cell::Num(f.throughput_bps)),
        ("utilization", |f| Cell::Num(f.utilization)),
        ("min_rtt_ms", |f| Cell::Num(f.min_rtt_ms)),
        ("qdelay_mean_ms", |f| Cell::Num(f.queueing_delay_ms.mean)),
        ("qdelay_p50_ms", |f| Cell::opt(f.queueing_delay_ms.p50)),
        ("qdelay_p95_ms", |f| Cell::Num(f.queueing_delay_ms.p95)),
        ("qdelay_p99_ms", |f| Cell::opt(f.queueing_delay_ms.p99)),
        ("qdelay_max_ms", |f| Cell::opt(f.queueing_delay_ms.max)),
        ("loss_rate", |f| Cell::Num(f.loss_rate)),
        ("retransmits", |f| Cell::Int(f.retransmits)),
        ("bmps", |f| Cell::Num(f.bmps)),
        ("bytes_delivered", |f| Cell::opt_int(f.bytes_delivered)),
        ("packets_sent", |f| Cell::opt_int(f.packets_sent)),
        ("packets_lost", |f| Cell::opt_int(f.packets_lost)),
        ("flow_cov", |f| Cell::opt(f.cov)),
        ("start_s", |f| Cell::opt(f.start_s)),
        ("stop_s", |f| Cell::opt(f.stop_s)),
    ]
}

fn run_columns() -> Vec<RunColumn> {
    vec![
        ("agg_throughput_bps", |s| {
            Cell::Num(s.aggregate.throughput_bps)
        }),
        ("agg_utilization", |s| Cell::Num(s.aggregate.utilization)),
        ("agg_jain", |s| Cell::Num(s.aggregate.jain)),
        ("agg_cov", |s| Cell::Num(s.aggregate.cov)),
        ("agg_bmps", |s| Cell::Num(s.aggregate.bmps)),
        ("agg_bytes_delivered", |s| {
            Cell::opt_int(s.aggregate.bytes_delivered)
        }),
    ]
}

fn link_columns() -> Vec<LinkColumn> {
    vec![
        ("utilization", |l| Cell::Num(l.utilization)),
        ("drops", |l| Cell::Int(l.drops)),
        ("queue_delay_mean_ms", |l| Cell::Num(l.queue_delay_ms.mean)),
        ("queue_delay_p95_ms", |l| Cell::Num(l.queue_delay_ms.p95)),
        ("queue_delay_p99_ms", |l| Cell::Num(l.queue_delay_ms.p99)),
    ]
}

/// An axis value as a cell: strings bare, numbers and the rest as JSON.
pub fn axis_text(v: Option<&serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// `results.csv`.
pub fn csv(c: &Collected) -> Result<String> {
    // Link columns: every link name in the order first met, so several scenarios fit one table.
    let mut links: Vec<String> = Vec::new();
    for r in &c.records {
        for l in &r.summary.links {
            if !links.contains(&l.name) {
                links.push(l.name.clone());
            }
        }
    }
    let (fc, rc, lc) = (flow_columns(), run_columns(), link_columns());
    let mut header: Vec<String> = vec!["index".into()];
    header.extend(c.axes.iter().cloned());
    header.extend(["scenario_name", "sim_seed", "duration_s"].map(String::from));
    header.extend(fc.iter().map(|c| c.0.to_string()));
    header.extend(rc.iter().map(|c| c.0.to_string()));
    for l in &links {
        header.extend(lc.iter().map(|c| format!("link.{l}.{}", c.0)));
    }
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let werr = |e: ::csv::Error| SweepError::BadResult {
        path: "results.csv".into(),
        message: e.to_string(),
    };
    w.write_record(&header).map_err(werr)?;
    for r in &c.records {
        let s = &r.summary;
        let mut lead = vec![r.sweep.index.to_string()];
        lead.extend(c.axes.iter().map(|a| axis_text(r.sweep.axes.get(a))));
        lead.push(s.scenario.clone());
        lead.push(s.seed.to_string());
        lead.push(Cell::Num(s.duration_s).render());
        let mut tail: Vec<String> = rc.iter().map(|c| (c.1)(s).render()).collect();
        for name in &links {
            match s.links.iter().find(|l| &l.name == name) {
                Some(l) => tail.extend(lc.iter().map(|c| (c.1)(l).render())),
                None => tail.extend(lc.iter().map(|_| String::new())),
            }
        }
        // A run without flows still has its row.
        let flows: Vec<Option<&FlowSummary>> = if s.flows.is_empty() {
            vec![None]
        } else {
            s.flows.iter().map(Some).collect()
        };
        for f in flows {
            let mut row = lead.clone();
            match f {
                Some(f) => row.extend(fc.iter().map(|c| (c.1)(f).render())),
                None => row.extend(fc.iter().map(|_| String::new())),
            }
            row.extend(tail.iter().cloned());
            w.write_record(&row).map_err(werr)?;
        }
    }
    let bytes = w.into_inner().map_err(|e| SweepError::BadResult {
        path: "results.csv".into(),
        message: e.to_string(),
    })?;
    Ok(String::from_utf8(bytes).expect("cells are UTF-8"))
}

/// `results.jsonl`: one compact line per run, time series left out.
pub fn jsonl(c: &Collected) -> String {
    let mut out = String::new();
    for r in &c.records {
        let mut lean = r.clone();
        lean.summary.aggregate.series = None;
        for f in &mut lean.summary.flows {
            f.series = None;
        }
        for l in &mut lean.summary.links {
            l.series = None;
        }
        out.push_str(&serde_json::to_string(&lean).expect("a record always encodes"));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;
    use crate::runner::{run_indices, RunOptions};
    use crate::testkit::fixture;

    #[test]
    fn one_row_per_run_and_flow_with_every_axis_and_metric() {
        let f = fixture(
            "collect",
            "scenario = \"s.toml\"\n[set]\n\"flows.0.count\" = 2\nduration = \"1s\"\n\
             [axes]\n\"flows.0.cc\" = [\"reno\", \"cubic\"]\nseed = \"1..2\"\n",
        );
        let plan = Plan::load(&f, false).unwrap();
        let out = f.parent().unwrap().join("out");
        let dir = SweepDir::create(&out, &plan.stamp, None).unwrap();
        // Three of the four runs: collect says which one is missing.
        run_indices(
            &plan,
            &dir,
            0..3,
            &RunOptions {
                jobs: 2,
                progress: false,
                provenance: None,
            },
        )
        .unwrap();
        let c = collect(&dir).unwrap();
        assert_eq!(c.describe(), "3 of 4 runs (not run 1: 3)");
        let text = csv(&c).unwrap();
        let mut rd = ::csv::Reader::from_reader(text.as_bytes());
        let head: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(
            head[..6],
            [
                "index",
                "flows.0.cc",
                "seed",
                "scenario_name",
                "sim_seed",
                "duration_s"
            ]
        );
        for col in [
            "throughput_bps",
            "qdelay_p95_ms",
            "loss_rate",
            "agg_jain",
            "link.bottleneck.drops",
        ] {
            assert!(head.iter().any(|h| h == col), "no column {col}");
        }
        let rows: Vec<::csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
        // Two flows per run, three runs.
        assert_eq!(rows.len(), 6);
        let col = |name: &str| head.iter().position(|h| h == name).unwrap();
        let cells: Vec<(&str, &str, &str, &str)> = rows
            .iter()
            .map(|r| (&r[0], &r[1], &r[2], &r[col("flow")]))
            .collect();
        assert_eq!(
            cells,
            [
                ("0", "reno", "1", "0"),
                ("0", "reno", "1", "1"),
                ("1", "reno", "2", "0"),
                ("1", "reno", "2", "1"),
                ("2", "cubic", "1", "0"),
                ("2", "cubic", "1", "1")
            ]
        );
        // Cells are the summary's numbers exactly.
        let rec = dir.read_result(&plan.run(2).unwrap()).unwrap().unwrap();
        let tput: f64 = rows[5][col("throughput_bps")].parse().unwrap();
        assert_eq!(
            tput.to_bits(),
            rec.summary.flows[1].throughput_bps.to_bits()
        );
        assert!(tput > 10e6 && tput < 100e6, "{tput}");
        assert_eq!(&rows[4][col("cc")], "cubic");
        let jain: f64 = rows[4][col("agg_jain")].parse().unwrap();
        assert_eq!(jain, rec.summary.aggregate.jain);
        // JSONL: one line per run, without series, reading back as records.
        let lines = jsonl(&c);
        assert_eq!(lines.lines().count(), 3);
        let back: RunRecord = serde_json::from_str(lines.lines().nth(2).unwrap()).unwrap();
        assert_eq!(back.sweep, rec.sweep);
        assert!(back.summary.flows[0].series.is_none() && rec.summary.flows[0].series.is_some());
        assert_eq!(
            back.summary.flows[0].throughput_bps,
            rec.summary.flows[0].throughput_bps
        );
    }

    #[test]
    fn cells_are_exact_and_undefined_is_empty() {
        assert_eq!(Cell::Num(1e-8).render(), "1e-8");
        assert_eq!(Cell::Num(925e6).render(), "925000000.0");
        assert_eq!(Cell::Num(0.1 + 0.2).render(), "0.30000000000000004");
        assert_eq!(Cell::Num(f64::NAN).render(), "");
        assert_eq!(Cell::opt(None).render(), "");
        assert_eq!(axis_text(Some(&serde_json::json!("reno"))), "reno");
        assert_eq!(axis_text(Some(&serde_json::json!(1e-6))), "1e-6");
    }
}
