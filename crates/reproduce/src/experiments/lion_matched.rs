//! Seed 002: Lion's loss against a window-based sender at matched throughput.
//!
//! **Seed.** MBS-based pacing "can effectively avoid packet loss", where window-based
//! transmission "not only has poor throughput, but also reduces available network bandwidth to
//! other traffic" (Fig. 4 and §II).
//!
//! **Why.** A loss rate means nothing beside a rate: a sender delivering less meets the cross
//! traffic's bursts with less and loses less. So Lion is held against the window-based sender
//! that delivers what Lion delivers. Every sender runs in the same
//! `scenarios/seed002-burst.toml` (the same cross traffic: its sources do not react and the
//! seed is fixed). The window-based senders are a ladder of fixed windows (`paced:clock=ack`,
//! a window of rate × RTT clocked out by ACKs: a TCP held to that window by its receiver)
//! offered 10 Mb/s to 1 Gb/s in steps of [`LADDER_STEP`]; the rung whose delivered throughput
//! is closest to Lion's is the match, and it must be within [`MATCH`] of it on either side.
//! The cross traffic arrives at 1 Gb/s for 5 ms at a time and fills the buffer in 1.2 ms, so
//! a sender that keeps sending through an on period loses part of it; a window's packets leave
//! in a line-rate burst, Lion's in bursts under the MBS.
//!
//! **Control.** BBR ×1, paced but with no drop avoidance, held to the same test (against the
//! rung matched to its own throughput), must fail it: pacing alone is not the property. With no
//! rung within 10 % of BBR's rate the control gives no verdict.
//! Reno ×32 and CUBIC ×64 show what window-based TCP reaches on this buffer (an own check).
//!
//! **Error.** Throughputs are matched within ± 10 % ([`MATCH`]); the ladder's step of 15 %
//! leaves a rung within 7.5 % of any rate the ladder spans. No match, no verdict: the claim
//! then fails.

use crate::claim::{text, ClaimSpec, Rule};
use crate::experiment::{Experiment, Plan, Run};
use longhaul_metrics::summary::{Claim, Summary};

/// Where the experiment's claims come from.
pub const SOURCE: &str = "seed 002, Fig. 4 and §II";

/// A window-based run is matched if its throughput is within this fraction of the sender's.
pub const MATCH: f64 = 0.1;

/// The ladder's offered rates grow by this factor from 10 Mb/s to 1 Gb/s.
pub const LADDER_STEP: f64 = 1.15;
const LADDER_FROM: f64 = 10e6;
const LADDER_TO: f64 = 1e9;

/// The senders held to the test (label, congestion control, flows), then the context runs;
/// the window ladder follows them.
const SENDERS: &[(&str, &str, u32)] = &[
    ("lion", "lion", 1),
    ("bbr-x1", "bbr", 1),
    ("reno-x32", "reno", 32),
    ("cubic-x64", "cubic", 64),
];
const LION: usize = 0;
const CONTROL: usize = 1;
const RENO: usize = 2;
const CUBIC: usize = 3;

/// The window ladder's offered rates, b/s.
pub fn ladder() -> Vec<f64> {
    let mut rates = vec![];
    let mut r = LADDER_FROM;
    while r <= LADDER_TO * (1.0 + 1e-9) {
        rates.push(r.round());
        r *= LADDER_STEP;
    }
    rates
}

fn runs(plan: &Plan) -> Vec<Run> {
    let secs = plan.secs(20.0, 120.0).max(2.0);
    let fixed = SENDERS
        .iter()
        .map(|&(label, cc, n)| (label.to_string(), cc.to_string(), n));
    let windows = ladder().into_iter().map(|r| {
        (
            format!("window-{:.0}", r / 1e6),
            format!("paced:rate={r:.0},clock=ack"),
            1,
        )
    });
    fixed
        .chain(windows)
        .map(|(label, cc, n)| {
            Run::new(label, "seed002-burst")
                .set("flows.0.cc", format!("\"{cc}\""))
                .set("flows.0.count", n)
                .secs(secs)
        })
        .collect()
}

/// Aggregate throughput (b/s) and loss rate (dropped ÷ sent) of a run's flows.
fn totals(s: &Summary) -> (f64, f64) {
    let thr = s.flows.iter().map(|f| f.throughput_bps).sum();
    let sent: f64 = s
        .flows
        .iter()
        .map(|f| f.packets_sent.unwrap_or(0) as f64)
        .sum();
    let lost: f64 = s
        .flows
        .iter()
        .map(|f| {
            f.packets_lost
                .map_or(f.loss_rate * f.packets_sent.unwrap_or(0) as f64, |l| {
                    l as f64
                })
        })
        .sum();
    (thr, if sent > 0.0 { lost / sent } else { f64::NAN })
}

/// The ladder run (index into `t`) whose throughput is closest to `thr`, if within [`MATCH`].
fn matched(t: &[(f64, f64)], thr: f64) -> Option<usize> {
    let off = |i: usize| (t[i].0 / thr - 1.0).abs();
    (SENDERS.len()..t.len())
        .min_by(|&a, &b| off(a).total_cmp(&off(b)))
        .filter(|&i| off(i) <= MATCH)
}

/// The claim row for sender `i`: its loss ÷ its matched window's (NaN without a match).
fn versus_window(t: &[(f64, f64)], labels: &[String], i: usize) -> (String, f64) {
    let (thr, loss) = t[i];
    match matched(t, thr) {
        Some(w) => (
            format!(
                "{} {:.1} Mb/s, {:.3} %; {} {:.1} Mb/s, {:.3} %",
                labels[i],
                thr / 1e6,
                100.0 * loss,
                labels[w],
                t[w].0 / 1e6,
                100.0 * t[w].1
            ),
            loss / t[w].1,
        ),
        None => (
            format!(
                "{} {:.1} Mb/s, {:.3} %; no window within 10 % of its rate",
                labels[i],
                thr / 1e6,
                100.0 * loss
            ),
            f64::NAN,
        ),
    }
}

fn claims(plan: &Plan, summaries: &[Summary]) -> Vec<Claim> {
    let labels: Vec<String> = runs(plan).into_iter().map(|r| r.label).collect();
    if summaries.len() != labels.len() {
        return Vec::new();
    }
    let t: Vec<(f64, f64)> = summaries.iter().map(totals).collect();
    let (lion_how, lion_ratio) = versus_window(&t, &labels, LION);
    let (bbr_how, bbr_ratio) = versus_window(&t, &labels, CONTROL);
    let mbps = |i: usize| t[i].0 / 1e6;
    let pct = |i: usize| 100.0 * t[i].1;
    vec![
        ClaimSpec::new(
            format!(
                "bursty cross traffic: Lion's loss ÷ that of the window-based sender delivering \
                 the same rate ({lion_how}; control: {bbr_how})"
            ),
            text("≤ 1 (MBS pacing avoids drops)"),
            "×",
            SOURCE,
            Rule::AtMost { bound: 1.0 },
            "none: the seed's claim is an inequality; rates matched within 10 %",
        )
        .evaluate_against(
            lion_ratio,
            (
                "bbr",
                "BBR ×1 paces but has no drop avoidance: it probes above the path's rate every \
                 few round trips",
                bbr_ratio,
            ),
        ),
        ClaimSpec::new(
            format!(
                "same path: the faster of Reno ×32 ({:.0} Mb/s, {:.2} %) and CUBIC ×64 ({:.0} \
                 Mb/s, {:.2} %) ÷ Lion's throughput",
                mbps(RENO),
                pct(RENO),
                mbps(CUBIC),
                pct(CUBIC)
            ),
            text("not stated (window-based TCP has \"poor throughput\")"),
            "×",
            SOURCE,
            Rule::AtMost { bound: 1.0 - MATCH },
            "none: below Lion's rate by more than the matching error",
        )
        .check()
        .evaluate(t[RENO].0.max(t[CUBIC].0) / t[LION].0),
    ]
}

/// The `lion-matched` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "lion-matched",
    title: "Lion against a window-based sender at matched throughput, bursty cross traffic",
    source: SOURCE,
    shortened: "20 s per sender (--full: 120 s)",
    runs,
    claims,
    page: None,
    notes: None,
};
