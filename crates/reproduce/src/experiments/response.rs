//! The seeds' central contrast as a sweep: every controller on seed 000's 180 ms path against
//! random loss, measured beside the response functions of the loss-based ones.
//!
//! Seed 000's Table 1 and seed 001's slides 3–4 put FAST at 88–95 % of a 1 Gb/s, 180 ms path
//! where the Linux TCP of January 2003 got 16–48 %. Slide 23 of seed 001 names the cause it
//! could not locate: "frequent packet loss with 1500-byte MTU". A loss-based controller's rate at
//! loss probability p is its response function (`crate::theory`); on a path whose window is
//! 15,000 packets, Reno's `1.22/√p` fills it only for p below about 7·10⁻⁹.
//!
//! The grid is `scenarios/sweeps/response.toml` (default) or `response-full.toml` (`--full`),
//! read here through `longhaul_sweep::spec` — the same files `longhaul sweep run` takes, so the
//! experiment and the sweep are one definition (`tests/response_grid.rs` checks that the runs
//! built here are, index by index, the sweep plan's). Each run is one bulk flow on
//! `scenarios/seed000-response.toml`, long enough for 20 expected losses in its second half,
//! which is what is averaged ([`half_throughput`]), at the rate the controller's response
//! function gives ([`planned_duration_s`]). The default caps a run at 5 million packets, which
//! leaves p ≤ 1e-6 at 20 s (fewer than 20 losses), where only "fills the link" can be claimed;
//! `--full` runs the rule uncapped (13 to 16 hours of simulated time at 1e-8).
//!
//! Claims, decided by the plan before any measurement:
//! * **Response function** (Reno, HighSpeed, Scalable, CUBIC), at each loss rate whose runs
//!   expect at least 20 losses in their measured halves and where the function is below the
//!   path: the mean over seeds of the measured throughput within [`tolerance`] of the function.
//!   Where the function is at or above the path (and at p = 0, for every controller): the
//!   utilization of the card is at least [`FILLS_PCT`].
//! * **Seed 001's contrast**: for every controller, the first loss rate at which it gets less
//!   than half the card ([`HALF_PCT`]), among the loss rates its runs can resolve (p = 0, ≥ 20
//!   expected losses in the measured half, or a response function at or above the path). The
//!   rule for each: the loss-based ones where their response function's band (the function ×
//!   (1 ± tolerance)) crosses half; Vegas, whose loss response is Reno's halving and whose growth
//!   on an empty queue is at most Reno's packet per RTT, no later than Reno's band; FAST (seed
//!   001's subject) at least a decade after Reno's measured crossing, and at that crossing at
//!   least 88 − 5 % (Table 1's lowest figure less table1's 5-point tolerance); BBR (rate from
//!   delivery rate and RTT, not loss) and Lion (seed 002: a loss it cannot tie to a standing
//!   queue is random and leaves the rate alone) at no loss rate of the grid.

use crate::claim::{num, short, text, ClaimSpec, Rule};
use crate::experiment::{Experiment, ExperimentResult, Plan, Run};
use crate::experiments::table1::{HEADER_RATIO, HEADER_TOLERANCE, NIC_PAYLOAD_BPS};
use crate::measure::flow_throughput_after;
use crate::theory;
use longhaul_metrics::report::plot::{line_chart_with, ChartOptions, Line};
use longhaul_metrics::report::{escape_html, html_page};
use longhaul_metrics::summary::{Claim, Summary};
use longhaul_metrics::MetricsError;
use longhaul_sweep::spec::{assignment, decode, SweepFile};
use std::path::Path;

/// Where the experiment's claims and response functions come from.
pub const SOURCE: &str = "seeds 000–001; Mathis et al. 1997, RFC 3649, seed 003, RFC 9438 §5.1";

/// The built-in scenario every run uses.
pub const SCENARIO: &str = "seed000-response";

/// The default sweep file: (path as a user gives it to `longhaul sweep`, text).
pub const SWEEP: (&str, &str) = (
    "scenarios/sweeps/response.toml",
    include_str!("../../../../scenarios/sweeps/response.toml"),
);
/// The `--full` sweep file: (path as a user gives it to `longhaul sweep`, text).
pub const SWEEP_FULL: (&str, &str) = (
    "scenarios/sweeps/response-full.toml",
    include_str!("../../../../scenarios/sweeps/response-full.toml"),
);

/// The path's round-trip propagation delay (s).
pub const RTT_S: f64 = 0.18;
/// The card's rate, b/s.
pub const CARD_BPS: f64 = 1e9;
/// The card's packets per second at 1500 bytes.
pub const PACKETS_PER_S: f64 = CARD_BPS / (1500.0 * 8.0);
/// longhaul's transport carries 1443 payload bytes in a 1500-byte packet.
pub const PAYLOAD_BYTES: f64 = 1443.0;
/// The most payload the card carries with this transport (b/s): the response functions' cap.
pub const CAPACITY_BPS: f64 = PACKETS_PER_S * PAYLOAD_BYTES * 8.0;

/// Expected losses in a run's measured half below which a loss rate cannot test a response
/// function (at least 20 losses).
pub const MIN_LOSSES: f64 = 20.0;
/// Every run lasts at least this long by default, s.
pub const FLOOR_S: f64 = 20.0;
/// Every run lasts at least this long with `--full`, s.
pub const FLOOR_FULL_S: f64 = 60.0;
/// The default keeps each run at or under this many packets (about 4 s of CPU).
pub const DEFAULT_MAX_PACKETS: f64 = 5e6;

/// The path's window in packets: the card's 83,333 packets/s × 180 ms.
pub const PATH_PACKETS: f64 = PACKETS_PER_S * RTT_S;
/// The flow's host queue (txqueuelen) in `scenarios/seed000-response.toml`.
pub const HOST_QUEUE_PACKETS: f64 = 10_000.0;

/// "Fills the link": at least this utilization of the card (% of 1460/1500 Gb/s, as Table 1),
/// derived from the deepest sawtooth a controller that fills the link can have. Such a
/// controller loses a packet at the largest window the path holds, its 15,000 packets plus the
/// 10,000-packet host queue, and keeps at least [`theory::RENO_BETA`] of it — half, the
/// deepest decrease of the grid (CUBIC keeps 0.7, Scalable 0.875, HighSpeed at least 0.5; BBR
/// and Lion do not decrease at one loss) — so right after a loss the card carries at least
/// 0.5 × 25,000 / 15,000 = 83.3 % of what it can, and never less until the next loss; of the
/// transport's 98.8 % (1443 of 1460 bytes) that is 82.4 %. (Reno's function is under the path at
/// every p > 0 of the grid, so Reno claims it only at p = 0.)
pub const FILLS_PCT: f64 = {
    let kept = theory::RENO_BETA * (PATH_PACKETS + HOST_QUEUE_PACKETS) / PATH_PACKETS;
    100.0 * HEADER_RATIO * if kept < 1.0 { kept } else { 1.0 }
};
const FILLS_WHY: &str = "the deepest sawtooth of a controller that fills the link: half (Reno's decrease, the deepest of the grid) of the path's 15,000 packets plus the 10,000-packet host queue is 83.3 % of the path, × the transport's 98.8 %";
/// Seed 001's line: half the path.
pub const HALF_PCT: f64 = 50.0;
/// The crossing of a controller that stays above half at every loss rate of the grid.
pub const NEVER: f64 = 1e-3;

/// Seed 000 Table 1's lowest FAST utilization (judged as table1 judges it: × 1443/1460).
pub const FAST_PAPER_PCT: f64 = 88.0;

/// The rate (packets/s) a run is planned for: the controller's response function capped at the
/// card; Reno's for Vegas (its loss response is Reno's halving, its growth on an empty queue at
/// most Reno's); the card's for FAST, BBR and Lion, which have none, and at p = 0.
pub fn planned_rate(cc: &str, p: f64) -> f64 {
    let like = if cc == "vegas" { "reno" } else { cc };
    match theory::window(like, p, RTT_S) {
        Some(w) => (w / RTT_S).min(PACKETS_PER_S),
        None => PACKETS_PER_S,
    }
}

/// The rule behind the sweep files: a run's length (s), `max(floor, 2·20/(p·R))`, and by default
/// the floor where that would send more than [`DEFAULT_MAX_PACKETS`].
pub fn planned_duration_s(cc: &str, p: f64, full: bool) -> u64 {
    let floor = if full { FLOOR_FULL_S } else { FLOOR_S };
    if p <= 0.0 {
        return floor as u64;
    }
    let r = planned_rate(cc, p);
    let t = (2.0 * MIN_LOSSES / (p * r) - 1e-9).ceil().max(floor);
    if !full && r * t > DEFAULT_MAX_PACKETS {
        floor as u64
    } else {
        t as u64
    }
}

/// One run of the grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The congestion control.
    pub cc: String,
    /// The random loss probability per packet.
    pub loss: f64,
    /// The run's seed.
    pub seed: i64,
    /// The run's length after the plan's scaling (s).
    pub duration_s: f64,
    /// `--set` overrides, as `longhaul sweep` builds them.
    pub overrides: Vec<String>,
}

impl Point {
    /// Losses the run's measured half expects.
    pub fn expected_half_losses(&self) -> f64 {
        self.loss * planned_rate(&self.cc, self.loss) * self.duration_s / 2.0
    }
}

fn as_f64(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Float(x) => Some(*x),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

/// The grid of `plan`: the sweep file's runs in its index order (`[[zip]]` groups, then
/// `[axes]`, in file order, the last fastest), each with the file's overrides; a scaled plan
/// (tests) shortens every run by `time_scale`.
pub fn grid(plan: &Plan) -> Result<Vec<Point>, String> {
    let (path, text) = if plan.full { SWEEP_FULL } else { SWEEP };
    let file = SweepFile::parse(text, Path::new(path)).map_err(|e| e.to_string())?;
    if file.scenarios.len() != 1 || !file.scenarios[0].ends_with(&format!("/{SCENARIO}.toml")) {
        return Err(format!("{path}: expected the one scenario `{SCENARIO}`"));
    }
    let dims = file.dims();
    let total: u64 = dims.iter().map(|d| d[0].values.len()).product();
    let fixed: Vec<String> = file.set.iter().map(|(k, v)| assignment(k, v)).collect();
    let scale = if plan.full { 1.0 } else { plan.time_scale };
    let mut out = Vec::new();
    for index in 0..total {
        let (picks, _) = decode(&dims, index);
        let mut overrides = fixed.clone();
        let (mut cc, mut loss, mut seed, mut duration) = (None, 0.0, 1, None);
        for (dim, &i) in dims.iter().zip(&picks) {
            for a in dim {
                let v = a.values.get(i);
                match a.name.as_str() {
                    "flows.0.cc" => cc = v.as_str().map(str::to_string),
                    "links.0.loss" => loss = as_f64(&v).ok_or("links.0.loss: not a number")?,
                    "seed" => seed = v.as_integer().ok_or("seed: not an integer")?,
                    "duration" => {
                        let s = v.as_str().ok_or("duration: not a string")?;
                        let ns = longhaul_sim::units::parse_duration(s)?;
                        duration = Some(ns.0 as f64 / 1e9);
                    }
                    _ => {}
                }
                overrides.push(assignment(&a.name, &v));
            }
        }
        let (Some(cc), Some(duration_s)) = (cc, duration) else {
            return Err(format!("{path}: every run needs flows.0.cc and duration"));
        };
        let mut point = Point {
            cc,
            loss,
            seed,
            duration_s,
            overrides,
        };
        if scale != 1.0 {
            point.duration_s *= scale;
            point.overrides.retain(|o| !o.starts_with("duration="));
            point.overrides.push(format!(
                "duration=\"{}ms\"",
                (point.duration_s * 1000.0).round() as u64
            ));
        }
        out.push(point);
    }
    Ok(out)
}

/// A loss rate as labels and tables show it: 0, 1e-8, …
pub fn loss_label(p: f64) -> String {
    if p <= 0.0 {
        "0".into()
    } else {
        let e = p.log10();
        if (e - e.round()).abs() < 1e-9 {
            format!("1e{}", e.round() as i64)
        } else {
            format!("{p:e}")
        }
    }
}

fn runs(plan: &Plan) -> Vec<Run> {
    // An embedded sweep file that does not parse is caught by tests; at run time it leaves the
    // experiment without runs rather than stopping the others.
    grid(plan)
        .unwrap_or_default()
        .into_iter()
        .map(|p| Run {
            label: format!("{}-p{}-s{}", p.cc, loss_label(p.loss), p.seed),
            scenario: SCENARIO,
            overrides: p.overrides,
        })
        .collect()
}

/// A run's throughput (b/s) over its second half, as table1 measures its default runs.
pub fn half_throughput(summary: &Summary) -> f64 {
    summary.flows.first().map_or(f64::NAN, |f| {
        flow_throughput_after(f, summary.duration_s / 2.0)
    })
}

/// One controller at one loss rate, over its seeds.
#[derive(Clone, Debug)]
pub struct Cell {
    /// The congestion control.
    pub cc: String,
    /// The random loss probability per packet.
    pub loss: f64,
    /// Seeds averaged.
    pub seeds: usize,
    /// Mean over seeds of the measured throughput, b/s.
    pub mean_bps: f64,
    /// Standard deviation over seeds of the measured throughput, b/s.
    pub sd_bps: f64,
    /// Losses the measured halves of all its seeds expect, by the plan.
    pub expected_losses: f64,
    /// Packets the flows lost in all (whole runs).
    pub lost: u64,
}

impl Cell {
    /// The mean throughput as a percentage of the card's payload capacity.
    pub fn utilization_pct(&self) -> f64 {
        100.0 * self.mean_bps / NIC_PAYLOAD_BPS
    }
    /// Runs long enough to test a response function: 20 expected losses in each measured half.
    pub fn resolved(&self) -> bool {
        self.seeds > 0 && self.expected_losses / self.seeds as f64 >= MIN_LOSSES
    }
}

/// The cells of a plan's runs, in the order controllers and loss rates first appear.
pub fn cells(points: &[Point], summaries: &[Summary]) -> Vec<Cell> {
    let mut keys: Vec<(String, f64)> = Vec::new();
    for p in points {
        if !keys.iter().any(|(c, l)| *c == p.cc && *l == p.loss) {
            keys.push((p.cc.clone(), p.loss));
        }
    }
    keys.sort_by(|a, b| a.1.total_cmp(&b.1));
    keys.sort_by_key(|(c, _)| points.iter().position(|p| p.cc == *c));
    keys.into_iter()
        .map(|(cc, loss)| {
            let mine: Vec<(&Point, &Summary)> = points
                .iter()
                .zip(summaries)
                .filter(|(p, _)| p.cc == cc && p.loss == loss)
                .collect();
            let xs: Vec<f64> = mine.iter().map(|(_, s)| half_throughput(s)).collect();
            let n = xs.len() as f64;
            let mean = xs.iter().sum::<f64>() / n;
            let sd = if xs.len() > 1 {
                (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
            } else {
                0.0
            };
            Cell {
                cc,
                loss,
                seeds: mine.len(),
                mean_bps: mean,
                sd_bps: sd,
                expected_losses: mine.iter().map(|(p, _)| p.expected_half_losses()).sum(),
                lost: mine
                    .iter()
                    .filter_map(|(_, s)| s.flows.first().and_then(|f| f.packets_lost))
                    .sum(),
            }
        })
        .collect()
}

/// A response function's rate on this path (b/s), capped at the card; `None` without one.
pub fn theory_bps(cc: &str, p: f64) -> Option<f64> {
    theory::window(cc, p, RTT_S)
        .map(|w| theory::capped_rate_bps(w, PAYLOAD_BYTES, RTT_S, CAPACITY_BPS))
}

/// Whether the response function reaches the path at `p` (always at p = 0).
pub fn theory_fills(cc: &str, p: f64) -> bool {
    p <= 0.0 || theory_bps(cc, p).is_some_and(|r| r >= CAPACITY_BPS)
}

/// What the response functions leave out, as a fraction of the rate (each stated beside it):
/// * all four assume evenly spaced losses; these are random (Bernoulli), which spreads the
///   time between losses and moves an AIMD flow's average by several percent (Ott, Kemperman
///   and Mathis, "The stationary behavior of ideal TCP congestion avoidance", 1996: about
///   1.31/√p for random loss against 1.22/√p for periodic) — 10 %;
/// * HighSpeed's default mode is RFC 3649's Appendix B table, whose rows round the increase up:
///   with periodic loss its sawtooth averages 16 % above the formula at 1e-4, 5 % at 1e-5 and
///   1 % at 1e-6 (`crates/cc/src/algorithms/highspeed.rs`) — added;
/// * CUBIC's fast convergence (on in Linux and here) lowers W_max after every loss that comes
///   below the previous one — under random loss about half of them — which RFC 9438 §5.1's
///   average leaves out — another 10 %.
pub fn model_error(cc: &str, p: f64) -> f64 {
    let random_loss = 0.10;
    match cc {
        "highspeed" => {
            random_loss
                + if p >= 5e-5 {
                    0.16
                } else if p >= 5e-6 {
                    0.05
                } else {
                    0.01
                }
        }
        "cubic" => random_loss + 0.10,
        _ => random_loss,
    }
}

/// A response claim's tolerance: two standard errors of the rate a run of `losses` expected
/// loss events (over all seeds' measured halves) can measure, plus [`model_error`]. The loss
/// count is Poisson, so the loss rate the runs saw is off by 1/√n relative; a window ∝ p^−e
/// carries e times that: 2·e/√n (Reno, e = ½, 60 losses: 13 %).
pub fn tolerance(cc: &str, p: f64, losses: f64) -> f64 {
    let e = theory::loss_exponent(cc, p, RTT_S).unwrap_or(1.0);
    2.0 * e / losses.max(1.0).sqrt() + model_error(cc, p)
}

fn considered(cell: &Cell) -> bool {
    cell.loss <= 0.0 || cell.resolved() || theory_fills(&cell.cc, cell.loss)
}

/// The first loss rate, in increasing order, at which `util(cell)` is under half the card, among
/// the cells a controller's runs can resolve; [`NEVER`] if there is none.
fn crossing(cells: &[&Cell], util: impl Fn(&Cell) -> f64) -> f64 {
    cells
        .iter()
        .filter(|c| considered(c))
        .find(|c| util(c) < HALF_PCT)
        .map_or(NEVER, |c| c.loss)
}

fn pct_of_card(bps: f64) -> f64 {
    100.0 * bps / NIC_PAYLOAD_BPS
}

fn source_of(cc: &str) -> &'static str {
    match cc {
        "reno" => "Mathis et al. 1997",
        "highspeed" => "RFC 3649 §5",
        "scalable" => "seed 003 (Kelly 2003)",
        "cubic" => "RFC 9438 §5.1",
        _ => "seed 001",
    }
}

fn claims(plan: &Plan, summaries: &[Summary]) -> Vec<Claim> {
    let Ok(points) = grid(plan) else {
        return Vec::new();
    };
    let cells = cells(&points, summaries);
    let mut out = Vec::new();
    let controllers: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for c in &cells {
            if !v.contains(&c.cc) {
                v.push(c.cc.clone());
            }
        }
        v
    };

    // Response functions, and filling the link where they say it should.
    for c in &cells {
        let at = format!("{}, p = {}", c.cc, loss_label(c.loss));
        if theory_fills(&c.cc, c.loss) && (c.loss <= 0.0 || theory_bps(&c.cc, c.loss).is_some()) {
            let why = if c.loss <= 0.0 {
                "no random loss".to_string()
            } else {
                format!("response function ≥ the path, {} losses seen", c.lost)
            };
            out.push(
                ClaimSpec::new(
                    format!("{at}: fills the link ({why})"),
                    text("≥ the path"),
                    "%",
                    source_of(&c.cc),
                    Rule::AtLeast { bound: FILLS_PCT },
                    FILLS_WHY,
                )
                .check()
                .evaluate(c.utilization_pct()),
            );
        } else if let Some(th) = theory_bps(&c.cc, c.loss) {
            if !c.resolved() {
                continue;
            }
            let tol = tolerance(&c.cc, c.loss, c.expected_losses);
            out.push(
                ClaimSpec::new(
                    format!(
                        "{at}: throughput vs response function ({} losses seen, {} expected in \
                         the measured halves)",
                        c.lost,
                        short(c.expected_losses)
                    ),
                    num((th / 1e6 * 10.0).round() / 10.0),
                    "Mb/s",
                    source_of(&c.cc),
                    Rule::Within {
                        target: (th / 1e6 * 10.0).round() / 10.0,
                        tolerance: (tol * 100.0).round() / 100.0,
                    },
                    "two standard errors of the loss count the runs saw (1/√n, × the function's exponent) plus what the function leaves out (random, not evenly spaced, losses 10 %; HighSpeed's table, CUBIC's fast convergence)",
                )
                .check()
                .evaluate(c.mean_bps / 1e6),
            );
        }
    }

    // Seed 001: where each controller falls below half the path.
    let of = |cc: &str| -> Vec<&Cell> { cells.iter().filter(|c| c.cc == cc).collect() };
    let band = |cc: &str, sign: f64| {
        // The function ± its tolerance where the runs resolve it; the function itself where it
        // fills the path (the fills-the-link rows judge those).
        crossing(&of(cc), |c| {
            let th = pct_of_card(theory_bps(cc, c.loss).unwrap_or(CAPACITY_BPS));
            if c.resolved() && !theory_fills(cc, c.loss) {
                th * (1.0 + sign * tolerance(cc, c.loss, c.expected_losses))
            } else {
                th
            }
        })
    };
    let reno_measured = crossing(&of("reno"), Cell::utilization_pct);
    for cc in &controllers {
        let measured = crossing(&of(cc), Cell::utilization_pct);
        let (paper, rule, source) = match cc.as_str() {
            "reno" | "highspeed" | "scalable" | "cubic" => {
                let (lo, hi) = (band(cc, -1.0), band(cc, 1.0));
                (
                    if lo == hi {
                        text(&loss_label(lo))
                    } else {
                        text(&format!("{}–{}", loss_label(lo), loss_label(hi)))
                    },
                    Rule::Between { lo, hi },
                    source_of(cc),
                )
            }
            "vegas" => (
                text("no later than Reno's"),
                Rule::AtMost {
                    bound: band("reno", 1.0),
                },
                "Vegas: Reno's loss response",
            ),
            "fast" => (
                text("after Linux TCP's (FAST 88–95 %, Linux TCP 16–48 %)"),
                Rule::AtLeast {
                    bound: reno_measured * 10.0,
                },
                "seed 001, slides 3–4",
            ),
            _ => (
                text("never (loss is not its signal)"),
                Rule::AtLeast { bound: NEVER },
                if cc == "lion" {
                    "seed 002 (Lion)"
                } else {
                    "BBR v1: rate from delivery rate and RTT"
                },
            ),
        };
        // The seeds claim FAST's contrast with Linux TCP (seed 001) and Lion's indifference to
        // random loss (seed 002); the others' crossings follow from response functions and
        // from BBR's design, which no seed describes.
        let seed = matches!(cc.as_str(), "fast" | "lion");
        let why = match cc.as_str() {
            "reno" | "highspeed" | "scalable" | "cubic" => {
                "the response function's band (its tolerance at each loss rate)"
            }
            "vegas" => "Reno's band's upper end",
            "fast" => "none: a decade of the grid after Reno's measured crossing",
            _ => "none: no loss rate of the grid",
        };
        let spec = ClaimSpec::new(
            format!(
                "{cc}: first loss rate with < 50 % of the path ({} = none in the grid)",
                short(NEVER)
            ),
            paper,
            "p",
            source,
            rule,
            why,
        );
        out.push(if seed {
            // Reno, which halves on every loss, under the same rule.
            spec.evaluate_against(measured, ("reno", RENO_WHY, reno_measured))
        } else {
            spec.check().evaluate(measured)
        });
    }
    let reno_at = of("reno")
        .into_iter()
        .find(|c| c.loss == reno_measured)
        .map_or(f64::NAN, Cell::utilization_pct);
    let fast_at = of("fast")
        .into_iter()
        .find(|c| c.loss == reno_measured)
        .map_or(f64::NAN, Cell::utilization_pct);
    out.push(
        ClaimSpec::new(
            format!(
                "FAST at Reno's first loss rate under 50 % (p = {}): utilization",
                loss_label(reno_measured)
            ),
            text("88–95 % (Linux TCP 16–48 %)"),
            "%",
            "seed 001, slides 3–4",
            Rule::AtLeast {
                bound: FAST_PAPER_PCT * HEADER_RATIO,
            },
            HEADER_TOLERANCE,
        )
        .evaluate_against(fast_at, ("reno", RENO_WHY, reno_at)),
    );
    out
}

/// Why Reno is the control of the claims about loss-insensitive controllers.
const RENO_WHY: &str = "Reno halves its window on every loss, random or not";

/// x of a loss rate on the plot: log10 p, with no loss a decade left of the smallest rate.
fn plot_x(p: f64, smallest: f64) -> f64 {
    if p > 0.0 {
        p.log10()
    } else {
        smallest.log10() - 1.0
    }
}

/// `--report`: throughput against loss rate, one measured line per controller (mean ± sd over
/// seeds) and the response functions dashed (drawn in pieces).
fn page(result: &ExperimentResult) -> Result<String, MetricsError> {
    let plan =
        if result.summaries.first().and_then(|s| s.meta.get("plan")) == Some(&"full".to_string()) {
            Plan::FULL
        } else {
            Plan::DEFAULT
        };
    let points: Vec<Point> = match grid(&plan) {
        Ok(p) if p.len() == result.summaries.len() => p,
        // A scaled plan: the grid's order is the same, the sizes differ; labels carry the rest.
        _ => grid(&Plan {
            full: false,
            time_scale: 1.0,
        })
        .unwrap_or_default(),
    };
    if points.len() != result.summaries.len() {
        return Ok(html_page("response", "<p>no runs</p>"));
    }
    let cells = cells(&points, &result.summaries);
    let smallest = cells
        .iter()
        .map(|c| c.loss)
        .filter(|&p| p > 0.0)
        .fold(f64::INFINITY, f64::min);
    let largest = cells.iter().map(|c| c.loss).fold(0.0, f64::max);
    let mut lines = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for c in &cells {
        if !names.contains(&c.cc.as_str()) {
            names.push(&c.cc);
        }
    }
    for cc in &names {
        let mine: Vec<&Cell> = cells.iter().filter(|c| c.cc == *cc).collect();
        lines.push(Line {
            name: cc.to_string(),
            points: mine
                .iter()
                .map(|c| (plot_x(c.loss, smallest), c.mean_bps / 1e6))
                .collect(),
            spread: mine.iter().map(|c| c.sd_bps / 1e6).collect(),
        });
    }
    if smallest.is_finite() {
        for cc in &names {
            if theory_bps(cc, smallest).is_none() {
                continue;
            }
            // Dashes: 0.1-decade pieces with gaps between them.
            let (a, b) = (smallest.log10(), largest.log10());
            let steps = ((b - a) / 0.05).round() as usize;
            let mut pts = Vec::new();
            for i in 0..=steps {
                let x = a + (b - a) * i as f64 / steps.max(1) as f64;
                let y = theory_bps(cc, 10f64.powf(x)).unwrap_or(f64::NAN) / 1e6;
                pts.push(if (i / 2) % 2 == 0 {
                    (x, y)
                } else {
                    (f64::NAN, f64::NAN)
                });
            }
            lines.push(Line {
                name: format!("{cc}: response function"),
                points: pts,
                spread: Vec::new(),
            });
        }
    }
    // A throughput is never negative: the bars (one standard deviation) stop at 0.
    let options = ChartOptions {
        y_bounds: (0.0, f64::INFINITY),
        ..ChartOptions::default()
    };
    let svg = line_chart_with(
        "Throughput against random loss, 1 Gb/s × 180 ms (seed 000's path)",
        &format!(
            "log10 of the loss probability ({} = no loss)",
            short(plot_x(0.0, smallest))
        ),
        "Mb/s (second half of each run)",
        &lines,
        &options,
    )?;
    let mut body = format!(
        "<h1>{}</h1><p>{} runs; each point is the mean over seeds, bars one standard deviation; \
         dashed: the response functions (crates/cc/src/response.rs), capped at the card's \
         {} Mb/s of payload. A point whose runs expect fewer than 20 losses in their measured \
         halves (by default p ≤ 1e-6, 20-s runs) shows how far the controller got in that time, \
         not its response: only where the function reaches the path is it a claim.</p>\n{svg}\n",
        escape_html(result.title),
        result.runs.len(),
        short(CAPACITY_BPS / 1e6)
    );
    body.push_str(&crate::output::claims_html(&result.claims));
    Ok(html_page("response", &body))
}

/// The `response` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "response",
    title: "Throughput against random loss, 8 controllers on seed 000's 180 ms path, beside their response functions",
    source: SOURCE,
    shortened: "runs for 20 losses in their second half at p ≥ 1e-5, 20 s (fills the link only) below; --full: 20 losses everywhere (13–16 h simulated at 1e-8)",
    runs,
    claims,
    notes: None,
    page: Some(page),
};
