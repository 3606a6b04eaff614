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

/// The one rule for a column name of `results.csv`, `results.jsonl`'s axes, the long format and
/// `sweep show`: lower-case ASCII letters, digits and `_` only, each run of anything else one
/// `_`, none at either end (`link.bottleneck (reverse).utilization` →
/// `link_bottleneck_reverse_utilization`, `flows.0.cc` → `flows_0_cc`), so that every column is
/// an attribute in pandas and a dimension name in xarray.
pub fn column_name(raw: &str) -> String {
    let mut out = String::new();
    for ch in raw.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() {
        out.push_str("column");
    }
    out
}

/// What a column of the [`Table`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    /// Names the row: `index`, an axis or `flow` (the long format's identifier columns).
    Id,
    /// Text that is not a measurement (`scenario_name`, `cc`, `params`).
    Text,
    /// A number (the long format's `metric`/`value` rows).
    Metric,
}

/// The merged results as one table of text cells: what `results.csv` holds, the long format
/// melts and `sweep show` prints. One row per run and flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Column names, made by [`column_name`] and unique (a second column whose name is taken
    /// gets `_2`, `_3`, …).
    pub columns: Vec<String>,
    /// What each column holds.
    pub kinds: Vec<ColumnKind>,
    /// The cells, row by row, as `results.csv` writes them (empty: undefined).
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The position of column `name`, or an error that lists the columns there are.
    pub fn position(&self, name: &str) -> Result<usize> {
        self.columns
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| SweepError::Query {
                message: format!(
                    "no column `{name}`; the columns are: {}",
                    self.columns.join(", ")
                ),
            })
    }
}

/// Names for `raw` column names: [`column_name`] of each, made unique in order.
fn column_names<'a>(raw: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in raw {
        let base = column_name(r);
        let mut name = base.clone();
        let mut n = 2;
        while out.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        out.push(name);
    }
    out
}

/// The column names of `axes` (axis paths, in column order), as [`table`] writes them.
pub fn axis_columns(axes: &[String]) -> Vec<String> {
    let mut all = vec!["index"];
    all.extend(axes.iter().map(String::as_str));
    column_names(all).split_off(1)
}

/// The table of `c`: `index`, every axis, `scenario_name`, `sim_seed`, `duration_s`, the flow's
/// metrics, the aggregate's (`agg_…`) and each link's (`link_NAME_…`).
pub fn table(c: &Collected) -> Table {
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
    let mut raw: Vec<(String, ColumnKind)> = vec![("index".into(), ColumnKind::Id)];
    raw.extend(c.axes.iter().map(|a| (a.clone(), ColumnKind::Id)));
    raw.push(("scenario_name".into(), ColumnKind::Text));
    raw.push(("sim_seed".into(), ColumnKind::Metric));
    raw.push(("duration_s".into(), ColumnKind::Metric));
    for (name, _) in &fc {
        let kind = match *name {
            "flow" => ColumnKind::Id,
            "cc" | "params" => ColumnKind::Text,
            _ => ColumnKind::Metric,
        };
        raw.push((name.to_string(), kind));
    }
    raw.extend(rc.iter().map(|c| (c.0.to_string(), ColumnKind::Metric)));
    for l in &links {
        raw.extend(
            lc.iter()
                .map(|c| (format!("link.{l}.{}", c.0), ColumnKind::Metric)),
        );
    }
    let columns = column_names(raw.iter().map(|r| r.0.as_str()));
    let kinds = raw.iter().map(|r| r.1).collect();
    let mut rows = Vec::new();
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
            rows.push(row);
        }
    }
    Table {
        columns,
        kinds,
        rows,
    }
}

/// Rows as CSV text.
fn write_csv<'a>(
    what: &str,
    header: &[String],
    rows: impl IntoIterator<Item = Vec<&'a str>>,
) -> Result<String> {
    let werr = |e: String| SweepError::BadResult {
        path: what.into(),
        message: e,
    };
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(header).map_err(|e| werr(e.to_string()))?;
    for row in rows {
        w.write_record(&row).map_err(|e| werr(e.to_string()))?;
    }
    let bytes = w.into_inner().map_err(|e| werr(e.to_string()))?;
    Ok(String::from_utf8(bytes).expect("cells are UTF-8"))
}

/// `results.csv`: the [`table`], one row per run and flow.
pub fn csv(c: &Collected) -> Result<String> {
    let t = table(c);
    write_csv(
        "results.csv",
        &t.columns,
        t.rows
            .iter()
            .map(|r| r.iter().map(String::as_str).collect()),
    )
}

/// `results-long.csv` (`collect --long`): the [`table`] melted, one row per run × flow ×
/// metric: `index`, every axis, `flow`, `metric` (a column name of `results.csv`) and `value`
/// (that column's cell, empty when undefined). Text columns (`scenario_name`, `cc`, `params`)
/// are left out; run-wide metrics (`agg_…`, `link_…`, `duration_s`) repeat for each flow, as in
/// `results.csv`.
pub fn long_csv(c: &Collected) -> Result<String> {
    let t = table(c);
    let ids: Vec<usize> = (0..t.columns.len())
        .filter(|&i| t.kinds[i] == ColumnKind::Id)
        .collect();
    let metrics: Vec<usize> = (0..t.columns.len())
        .filter(|&i| t.kinds[i] == ColumnKind::Metric)
        .collect();
    let mut header: Vec<String> = ids.iter().map(|&i| t.columns[i].clone()).collect();
    header.extend(["metric".to_string(), "value".to_string()]);
    let rows = t.rows.iter().flat_map(|row| {
        let (ids, t) = (&ids, &t);
        metrics.iter().map(move |&m| {
            let mut out: Vec<&str> = ids.iter().map(|&i| row[i].as_str()).collect();
            out.push(t.columns[m].as_str());
            out.push(row[m].as_str());
            out
        })
    });
    write_csv("results-long.csv", &header, rows)
}

/// `results.jsonl`: one compact line per run, time series left out, its `sweep.axes` keyed by
/// the axes' column names (as in `results.csv`; `sweep.sets` keeps the exact paths).
pub fn jsonl(c: &Collected) -> String {
    let names = axis_columns(&c.axes);
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
        lean.sweep.axes = c
            .axes
            .iter()
            .zip(&names)
            .filter_map(|(a, n)| r.sweep.axes.get(a).map(|v| (n.clone(), v.clone())))
            .collect();
        out.push_str(&serde_json::to_string(&lean).expect("a record always encodes"));
        out.push('\n');
    }
    out
}

/// `longhaul sweep collect`'s files in `dir`: `results.csv`, `results.jsonl`, with `long`
/// `results-long.csv`, and `report.html`. Returns the paths written, in that order.
pub fn write_results(dir: &SweepDir, c: &Collected, long: bool) -> Result<Vec<std::path::PathBuf>> {
    let title = format!("sweep {}", dir.stamp.name);
    let mut written = vec![
        dir.write_file("results.csv", csv(c)?.as_bytes())?,
        dir.write_file("results.jsonl", jsonl(c).as_bytes())?,
    ];
    if long {
        written.push(dir.write_file("results-long.csv", long_csv(c)?.as_bytes())?);
    }
    written.push(dir.write_file("report.html", crate::report::html(c, &title)?.as_bytes())?);
    Ok(written)
}

impl Collected {
    /// Notes for people on what the collection left out: results of runs outside the plan
    /// (kept in `shown`/runs), and runs without a result.
    pub fn notes(&self, shown: &std::path::Path) -> Vec<String> {
        let mut out = Vec::new();
        if self.others > 0 {
            out.push(format!(
                "note: {}/runs also holds {} result{} of runs outside this plan, kept: `sweep run` \
                 with a sweep file that has them makes it the directory's plan again",
                shown.display(),
                self.others,
                if self.others == 1 { "" } else { "s" }
            ));
        }
        if !self.missing.is_empty() {
            out.push(format!(
                "note: {} run{} without a result; `longhaul sweep run` on the same file and \
                 directory runs only those",
                self.missing.len(),
                if self.missing.len() == 1 {
                    " is"
                } else {
                    "s are"
                }
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;
    use crate::runner::{run_indices, RunOptions};
    use crate::testkit::{fixture, Fixture};

    /// A sweep of two-flow runs of 1 s over reno and cubic, then `more_axes`, and its empty
    /// results directory (both removed when the fixture is dropped).
    fn two_flows(name: &str, more_axes: &str) -> (Fixture, Plan, SweepDir) {
        let f = fixture(
            name,
            &format!(
                "scenario = \"s.toml\"\n[set]\n\"flows.0.count\" = 2\nduration = \"1s\"\n\
                 [axes]\n\"flows.0.cc\" = [\"reno\", \"cubic\"]\n{more_axes}"
            ),
        );
        let plan = Plan::load(&f, false).unwrap();
        let dir = SweepDir::create(&f.parent().unwrap().join("out"), &plan.stamp, None).unwrap();
        (f, plan, dir)
    }

    #[test]
    fn one_row_per_run_and_flow_with_every_axis_and_metric() {
        let (_f, plan, dir) = two_flows("collect", "seed = \"1..2\"\n");
        // Three of the four runs: collect says which one is missing.
        run_indices(
            &plan,
            &dir,
            0..3,
            &RunOptions {
                jobs: 2,
                ..Default::default()
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
                "flows_0_cc",
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
            "link_bottleneck_drops",
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
        assert_eq!(back.sweep.sets, rec.sweep.sets);
        assert_eq!(back.sweep.axes["flows_0_cc"], "cubic");
        assert_eq!(back.sweep.axes["seed"], 1);
        assert_eq!(back.sweep.axes.len(), 2);
        assert!(back.summary.flows[0].series.is_none() && rec.summary.flows[0].series.is_some());
        assert_eq!(
            back.summary.flows[0].throughput_bps,
            rec.summary.flows[0].throughput_bps
        );
    }

    #[test]
    fn the_long_format_is_the_table_melted() {
        let (_f, plan, dir) = two_flows("long", "");
        run_indices(&plan, &dir, 0..2, &RunOptions::default()).unwrap();
        let c = collect(&dir).unwrap();
        let t = table(&c);
        let long = long_csv(&c).unwrap();
        let mut rd = ::csv::Reader::from_reader(long.as_bytes());
        let head: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(head, ["index", "flows_0_cc", "flow", "metric", "value"]);
        let rows: Vec<::csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
        let metrics = t.kinds.iter().filter(|k| **k == ColumnKind::Metric).count();
        // 2 runs × 2 flows × every numeric column.
        assert_eq!(t.rows.len(), 4);
        assert_eq!(rows.len(), 4 * metrics);
        assert!(metrics > 30, "{metrics}");
        for r in &rows {
            let (run, cc, flow) = (&r[0], &r[1], &r[2]);
            let wide = t
                .rows
                .iter()
                .find(|w| w[0] == run && w[1] == cc && w[t.position("flow").unwrap()] == flow)
                .unwrap();
            assert_eq!(&r[4], wide[t.position(&r[3]).unwrap()]);
        }
        let tput = rows
            .iter()
            .find(|r| &r[0] == "1" && &r[2] == "1" && &r[3] == "throughput_bps")
            .unwrap();
        let rec = dir.read_result(&plan.run(1).unwrap()).unwrap().unwrap();
        assert_eq!(&tput[1], "cubic");
        assert_eq!(
            tput[4].parse::<f64>().unwrap(),
            rec.summary.flows[1].throughput_bps
        );
        assert!(!rows
            .iter()
            .any(|r| &r[3] == "cc" || &r[3] == "scenario_name"));
    }

    #[test]
    fn column_names_are_tidy_and_unique() {
        assert_eq!(
            column_name("link.bottleneck (reverse).utilization"),
            "link_bottleneck_reverse_utilization"
        );
        assert_eq!(column_name("flows.0.cc"), "flows_0_cc");
        assert_eq!(
            column_name("Links.0.Queue-Packets"),
            "links_0_queue_packets"
        );
        assert_eq!(column_name("(été)"), "t");
        assert_eq!(column_name("…"), "column");
        assert_eq!(
            axis_columns(&["a.b".into(), "a_b".into(), "index".into()]),
            ["a_b", "a_b_2", "index_2"]
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
