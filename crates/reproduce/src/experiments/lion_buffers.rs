//! Seed 002: Lion's drop avoidance on every buffer, against window-based TCP at its rate.
//!
//! **Seed.** Lion paces "at the available bandwidth" in bursts no larger than the maximum burst
//! size, "the effective queue size", so that MBS-based pacing "can effectively avoid packet
//! loss" where window-based transmission "reduces available network bandwidth to other
//! traffic" (§§II–III, Fig. 4). The claim is about paths in general: the router's queue is
//! whatever it is, and the MBS is what the sender learns of it.
//!
//! **Model.** `scenarios/sweeps/lion-buffers.toml`: one flow alone on a 100 Mb/s, 40 ms path
//! (`scenarios/seed002-buffers.toml`) with a drop-tail buffer of 2, 10, 50, 100 and 200 % of the
//! 333-packet bandwidth-delay product, next to 20 Mb/s of Poisson or of on/off cross traffic
//! (50 Mb/s bursts, below the link's rate: a sender can avoid every drop), carried by both
//! transports. Each cell (transport, cross traffic, buffer) runs Lion, Reno, CUBIC and BBR,
//! each with [`SEEDS`] seeds of the cross traffic's random process.
//!
//! **Claim, per transport and cross traffic.** In every buffer, Lion loses no larger a fraction
//! of its packets than the window-based sender (Reno or CUBIC) that loses least, while it
//! delivers at least [`RATE_MATCH`] of the faster window-based sender's throughput: a sender
//! cannot avoid drops by sending little. Fractions and throughputs are means over the seeds.
//! The value is the number of buffers where both hold; the rule is all of them.
//!
//! **Control.** The same count for BBR, a paced sender with no drop avoidance (its startup and
//! its probing at 1.25 × the bottleneck rate overflow a shallow buffer): if BBR also held in every
//! buffer the claim would not distinguish Lion's property, so BBR must miss in at least one.
//!
//! **Error.** Each run is deterministic, but one seed is one sample of the cross traffic: on a
//! buffer that on/off bursts overflow now and then, one sender's drop count over 30 s varies
//! between seeds by as much as its mean (CUBIC loses 36 to 217 packets on the 167-packet
//! buffer). So the loss comparison is a one-sided test on the means over [`SEEDS`] seeds
//! ([`crate::seeds`]): Lion loses *more* only if its mean exceeds the better sender's by more
//! than [`Z_ONE_SIDED`] standard errors of the difference. Where both senders lose the same on
//! every seed (no loss at all, say) the error is zero and the test is the plain inequality.
//! The [`RATE_MATCH`] of 90 % is this experiment's choice of "the same rate", as
//! `lion-matched`'s, applied to the mean throughputs (which vary between seeds by about 1 %).

use crate::claim::{at_least, short, text, ClaimSpec};
use crate::experiment::{Experiment, ExperimentResult, Plan, Run};
use crate::measure::throughput_and_loss;
use crate::seeds::{Repeats, Z_ONE_SIDED};
use longhaul_metrics::report::plot::{line_chart, Line};
use longhaul_metrics::report::{escape_html, html_page, Align, Table};
use longhaul_metrics::summary::{Claim, Summary};
use longhaul_metrics::MetricsError;
use longhaul_sweep::spec::{assignment, decode, SweepFile};
use std::path::Path;

/// Where the experiment's claims come from.
pub const SOURCE: &str = "seed 002, §§II–III and Fig. 4";

/// The built-in scenario every run uses.
pub const SCENARIO: &str = "seed002-buffers";

/// The sweep file: (path as a user gives it to `longhaul sweep`, text).
pub const SWEEP: (&str, &str) = (
    "scenarios/sweeps/lion-buffers.toml",
    include_str!("../../../../scenarios/sweeps/lion-buffers.toml"),
);

/// The path's bandwidth-delay product in 1500-byte packets (100 Mb/s × 40 ms).
pub const BDP_PACKETS: f64 = 100e6 * 0.040 / (1500.0 * 8.0);

/// Lion must deliver at least this fraction of the faster window-based sender's throughput.
pub const RATE_MATCH: f64 = 0.9;

/// Seeds of the cross traffic per run (the sweep file's `seed` axis).
pub const SEEDS: usize = 5;

/// The senders compared with Lion.
const WINDOW_BASED: [&str; 2] = ["reno", "cubic"];
/// The control: a paced sender without drop avoidance.
pub const CONTROL_CC: &str = "bbr";

/// One run of the grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The simulator's transport: `proto` (longhaul's own) or `model` (the compact TCP model).
    pub transport: String,
    /// "poisson" or "onoff".
    pub cross: String,
    /// The bottleneck's drop-tail buffer, packets.
    pub buffer_packets: i64,
    /// The congestion control under test.
    pub cc: String,
    /// The scenario's random seed (the cross traffic's arrivals).
    pub seed: i64,
    /// `--set` overrides, as `longhaul sweep` builds them.
    pub overrides: Vec<String>,
}

/// The sweep file's runs in its index order (`longhaul_sweep::spec::decode`), each with the
/// file's overrides and the plan's duration.
pub fn grid(plan: &Plan) -> Result<Vec<Point>, String> {
    let (path, text) = SWEEP;
    let file = SweepFile::parse(text, Path::new(path)).map_err(|e| e.to_string())?;
    if file.scenarios.len() != 1 || !file.scenarios[0].ends_with(&format!("/{SCENARIO}.toml")) {
        return Err(format!("{path}: expected the one scenario `{SCENARIO}`"));
    }
    let dims = file.dims();
    let total: u64 = dims.iter().map(|d| d[0].values.len()).product();
    let secs = plan.secs(30.0, 120.0).max(2.0);
    let mut out = Vec::new();
    for index in 0..total {
        let (picks, _) = decode(&dims, index);
        let mut overrides: Vec<String> = file
            .set
            .iter()
            .filter(|(k, _)| k.as_str() != "duration")
            .map(|(k, v)| assignment(k, v))
            .collect();
        let mut point = Point {
            transport: String::new(),
            cross: String::new(),
            buffer_packets: 0,
            cc: String::new(),
            seed: 0,
            overrides: Vec::new(),
        };
        for (dim, &i) in dims.iter().zip(&picks) {
            for axis in dim {
                let v = axis.values.get(i);
                match axis.name.as_str() {
                    "transport" => point.transport = v.as_str().unwrap_or_default().to_string(),
                    "flows.0.cc" => point.cc = v.as_str().unwrap_or_default().to_string(),
                    "links.0.queue.packets" => point.buffer_packets = v.as_integer().unwrap_or(0),
                    "seed" => point.seed = v.as_integer().unwrap_or(0),
                    "cross_traffic" => {
                        point.cross = v
                            .as_array()
                            .and_then(|a| a.first())
                            .and_then(|t| t.get("kind"))
                            .and_then(|k| k.as_str())
                            .unwrap_or("none")
                            .to_string()
                    }
                    _ => {}
                }
                overrides.push(assignment(&axis.name, &v));
            }
        }
        if point.cc.is_empty() || point.transport.is_empty() || point.buffer_packets <= 0 {
            return Err(format!(
                "{path}: every run needs transport, flows.0.cc and links.0.queue.packets"
            ));
        }
        overrides.push(format!("duration=\"{}ms\"", (secs * 1000.0).round() as u64));
        point.overrides = overrides;
        out.push(point);
    }
    Ok(out)
}

fn runs(plan: &Plan) -> Vec<Run> {
    // An embedded sweep file that does not parse is caught by tests; at run time it leaves the
    // experiment without runs rather than stopping the others.
    grid(plan)
        .unwrap_or_default()
        .into_iter()
        .map(|p| Run {
            label: format!(
                "{}-{}-q{}-{}-s{}",
                p.transport, p.cross, p.buffer_packets, p.cc, p.seed
            ),
            scenario: SCENARIO,
            overrides: p.overrides,
        })
        .collect()
}

/// One buffer of one (transport, cross traffic): every controller's outcomes.
#[derive(Clone, Debug)]
pub struct Cell {
    /// The simulator's transport: `proto` or `model`.
    pub transport: String,
    /// The cross traffic: `poisson` or `onoff`.
    pub cross: String,
    /// The bottleneck's drop-tail buffer, packets.
    pub buffer_packets: i64,
    /// (controller, its runs), in the grid's order.
    pub senders: Vec<(String, Repeats)>,
}

impl Cell {
    /// The runs of `cc` in this cell.
    pub fn get(&self, cc: &str) -> Option<&Repeats> {
        self.senders.iter().find(|(c, _)| c == cc).map(|(_, s)| s)
    }

    /// Whether `cc` loses no more than the window-based sender that loses least (within the
    /// error of the difference) while it delivers at least [`RATE_MATCH`] of the faster one's
    /// throughput.
    pub fn holds_for(&self, cc: &str) -> Option<bool> {
        let me = self.get(cc)?;
        let window: Vec<&Repeats> = WINDOW_BASED.iter().filter_map(|w| self.get(w)).collect();
        if window.len() != WINDOW_BASED.len() {
            return None;
        }
        let least = window.iter().min_by(|a, b| a.loss().total_cmp(&b.loss()))?;
        let fastest = window.iter().map(|w| w.throughput()).fold(0.0, f64::max);
        Some(!me.loses_more_than(least) && me.throughput() >= RATE_MATCH * fastest)
    }
}

/// The grid's cells, from its points and their summaries (in the same order).
pub fn cells(points: &[Point], summaries: &[Summary]) -> Vec<Cell> {
    let mut out: Vec<Cell> = Vec::new();
    for (p, s) in points.iter().zip(summaries) {
        let (thr, loss) = throughput_and_loss(s);
        let same = |c: &Cell| {
            c.transport == p.transport && c.cross == p.cross && c.buffer_packets == p.buffer_packets
        };
        let cell = match out.iter_mut().position(|c| same(c)) {
            Some(i) => &mut out[i],
            None => {
                out.push(Cell {
                    transport: p.transport.clone(),
                    cross: p.cross.clone(),
                    buffer_packets: p.buffer_packets,
                    senders: Vec::new(),
                });
                out.last_mut().expect("just pushed")
            }
        };
        match cell.senders.iter_mut().find(|(c, _)| *c == p.cc) {
            Some((_, s)) => s.runs.push((thr, loss)),
            None => cell.senders.push((
                p.cc.clone(),
                Repeats {
                    runs: vec![(thr, loss)],
                },
            )),
        }
    }
    out
}

/// The points of `summaries`: the default grid's when the sizes match (a scaled plan only
/// shortens the runs).
fn points_for(summaries: &[Summary]) -> Vec<Point> {
    grid(&Plan::DEFAULT)
        .ok()
        .filter(|p| p.len() == summaries.len())
        .unwrap_or_default()
}

/// The (transport, cross traffic) groups in grid order.
fn groups(cells: &[Cell]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for c in cells {
        let g = (c.transport.clone(), c.cross.clone());
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

fn pct_of_bdp(packets: i64) -> String {
    format!("{} %", short(100.0 * packets as f64 / BDP_PACKETS))
}

fn claims(_plan: &Plan, summaries: &[Summary]) -> Vec<Claim> {
    let points = points_for(summaries);
    if points.is_empty() {
        return Vec::new();
    }
    let cells = cells(&points, summaries);
    let mut out = Vec::new();
    for (transport, cross) in groups(&cells) {
        let mine: Vec<&Cell> = cells
            .iter()
            .filter(|c| c.transport == transport && c.cross == cross)
            .collect();
        let n = mine.len() as f64;
        let count = |cc: &str| {
            mine.iter()
                .filter(|c| c.holds_for(cc) == Some(true))
                .count() as f64
        };
        let missed = |cc: &str| {
            let list: Vec<String> = mine
                .iter()
                .filter(|c| c.holds_for(cc) != Some(true))
                .map(|c| pct_of_bdp(c.buffer_packets))
                .collect();
            if list.is_empty() {
                "none".to_string()
            } else {
                list.join(", ")
            }
        };
        out.push(
            ClaimSpec::new(
                format!(
                    "{transport} transport, {cross} cross traffic: buffers (2–200 % of the BDP) \
                     where Lion loses no more than the better of Reno and CUBIC at ≥ 90 % of \
                     the faster one's rate, means of {SEEDS} seeds (missed: {}; BBR missed: {})",
                    missed("lion"),
                    missed(CONTROL_CC)
                ),
                text("all (MBS pacing avoids drops)"),
                "buffers",
                SOURCE,
                at_least(n),
                format!(
                    "the loss inequality per buffer, one-sided at {Z_ONE_SIDED} standard \
                     errors of the difference between the seeds' means"
                ),
            )
            .evaluate_against(
                count("lion"),
                (
                    "bbr",
                    "BBR paces but has no drop avoidance: it probes above the path's rate \
                     every few round trips whatever the buffer",
                    count(CONTROL_CC),
                ),
            ),
        );
    }
    out
}

/// Every cell's throughput and loss, beside the claims.
fn notes(_plan: &Plan, summaries: &[Summary]) -> String {
    let points = points_for(summaries);
    let cells = cells(&points, summaries);
    let mut t = Table::new(&[
        Align::Left,
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
    ]);
    t.header(&[
        "transport",
        "cross",
        "buffer",
        "lion Mb/s, loss",
        "reno",
        "cubic",
        "bbr",
        "lion holds",
    ]);
    for c in &cells {
        let show = |cc: &str| {
            c.get(cc).map_or("-".to_string(), |s| {
                format!(
                    "{:.1}, {:.2e} ± {:.0e}",
                    s.throughput() / 1e6,
                    s.loss(),
                    s.loss_error()
                )
            })
        };
        t.row(vec![
            c.transport.clone(),
            c.cross.clone(),
            format!("{} ({})", c.buffer_packets, pct_of_bdp(c.buffer_packets)),
            show("lion"),
            show("reno"),
            show("cubic"),
            show("bbr"),
            match c.holds_for("lion") {
                Some(true) => "yes".into(),
                Some(false) => "NO".into(),
                None => "-".into(),
            },
        ]);
    }
    format!(
        "every cell (means over {SEEDS} seeds: throughput in Mb/s, the fraction of packets \
         dropped ± its standard error):\n{}",
        t.render()
    )
}

/// The loss axis: log10 of the loss fraction, with no loss drawn at this floor.
const NO_LOSS_LOG10: f64 = -7.0;

/// `--report`: loss against buffer, one line per controller, a chart per transport and cross
/// traffic.
fn page(result: &ExperimentResult) -> Result<String, MetricsError> {
    let points = points_for(&result.summaries);
    let cells = cells(&points, &result.summaries);
    let mut body = format!(
        "<h1>{}</h1><p>{} runs of one flow on 100 Mb/s × 40 ms; each line is one controller's \
         fraction of packets dropped (the mean over {SEEDS} seeds) against the buffer (log \
         scales; no loss is drawn at 10<sup>{}</sup>).</p>\n",
        escape_html(result.title),
        result.runs.len(),
        NO_LOSS_LOG10
    );
    for (transport, cross) in groups(&cells) {
        let mine: Vec<&Cell> = cells
            .iter()
            .filter(|c| c.transport == transport && c.cross == cross)
            .collect();
        let mut names: Vec<String> = Vec::new();
        for c in &mine {
            for (cc, _) in &c.senders {
                if !names.contains(cc) {
                    names.push(cc.clone());
                }
            }
        }
        let lines: Vec<Line> = names
            .iter()
            .map(|cc| Line {
                name: cc.clone(),
                points: mine
                    .iter()
                    .filter_map(|c| {
                        let loss = c.get(cc)?.loss();
                        let x = (100.0 * c.buffer_packets as f64 / BDP_PACKETS).log10();
                        let y = if loss > 0.0 {
                            loss.log10().max(NO_LOSS_LOG10)
                        } else {
                            NO_LOSS_LOG10
                        };
                        Some((x, y))
                    })
                    .collect(),
                spread: Vec::new(),
            })
            .collect();
        body.push_str(&line_chart(
            &format!("Loss against buffer: {transport} transport, {cross} cross traffic"),
            "log10 of the buffer, % of the bandwidth-delay product",
            "log10 of the fraction of packets dropped",
            &lines,
        )?);
        body.push('\n');
    }
    body.push_str(&crate::output::claims_html(&result.claims));
    Ok(html_page("lion-buffers", &body))
}

/// The `lion-buffers` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "lion-buffers",
    title: "Lion against Reno, CUBIC and BBR on buffers of 2–200 % of the BDP, two kinds of cross traffic",
    source: SOURCE,
    shortened: "30 s per run (--full: 120 s)",
    runs,
    claims,
    notes: Some(notes),
    page: Some(page),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_is_the_sweep_file_in_index_order() {
        let g = grid(&Plan::DEFAULT).unwrap();
        assert_eq!(g.len(), 80 * SEEDS);
        assert_eq!(
            (
                g[0].transport.as_str(),
                g[0].cross.as_str(),
                g[0].buffer_packets
            ),
            ("proto", "poisson", 7)
        );
        assert_eq!((g[0].cc.as_str(), g[0].seed), ("lion", 1));
        assert_eq!((g[4].cc.as_str(), g[4].seed), ("lion", 5));
        assert_eq!(g[3 * SEEDS].cc, "bbr");
        assert_eq!(g[4 * SEEDS].buffer_packets, 33);
        assert_eq!(g[20 * SEEDS].cross, "onoff");
        assert_eq!(g[40 * SEEDS].transport, "model");
        assert!(
            g[1].overrides.iter().any(|o| o == "seed=2"),
            "{:?}",
            g[1].overrides
        );
        assert!(g[0].overrides.iter().any(|o| o == "duration=\"30000ms\""));
        let full = grid(&Plan::FULL).unwrap();
        assert!(full[0]
            .overrides
            .iter()
            .any(|o| o == "duration=\"120000ms\""));
    }

    fn cell(senders: &[(&str, f64, f64)]) -> Cell {
        Cell {
            transport: "proto".into(),
            cross: "poisson".into(),
            buffer_packets: 7,
            senders: senders
                .iter()
                .map(|&(c, t, l)| (c.to_string(), Repeats { runs: vec![(t, l)] }))
                .collect(),
        }
    }

    #[test]
    fn a_cell_holds_only_at_no_more_loss_and_at_least_ninety_percent_of_the_rate() {
        let base = [("reno", 60e6, 1e-4), ("cubic", 64e6, 2e-4)];
        let with = |lion: (f64, f64)| {
            let mut s = vec![("lion", lion.0, lion.1)];
            s.extend_from_slice(&base);
            cell(&s).holds_for("lion")
        };
        // No more loss than the better (Reno), at 90 % of the faster (CUBIC: 57.6 Mb/s).
        assert_eq!(with((57.6e6, 1e-4)), Some(true));
        assert_eq!(with((57.5e6, 0.0)), Some(false), "too slow");
        assert_eq!(with((90e6, 1.01e-4)), Some(false), "more loss than Reno");
        // Both window-based senders lossless: Lion must be too.
        let lossless = cell(&[
            ("lion", 90e6, 0.0),
            ("reno", 60e6, 0.0),
            ("cubic", 64e6, 0.0),
        ]);
        assert_eq!(lossless.holds_for("lion"), Some(true));
        assert_eq!(cell(&[("lion", 1.0, 0.0)]).holds_for("lion"), None);
    }
}
