//! Seed 002 (Network Lion, LBNL): two experiments.
//!
//! **Bursts** (maximum burst size theory, Figs. 2–3): "any burst sent into the network that is
//! larger than the MBS will cause packet loss"; with the same cross traffic, larger bursts are
//! dropped more, and packets sent in small bursts with proper gaps are dropped only when all
//! traffic arrives at once. Model (`scenarios/seed002-burst.toml`): one flow through a 1 Gb/s
//! router with a 100-packet buffer, 80 ms RTT, next to on/off cross traffic that comes in 1 Gb/s
//! bursts (200 Mb/s on average). The window-based sender is stock Reno, whose ACK clock releases
//! window-sized bursts in slow start and after each recovery; the MBS-paced sender is Lion. The
//! claim compares the fraction of each sender's packets that were dropped; throughput is shown
//! beside it so that a sender cannot "win" by sending little.
//!
//! **The 5-second contest** (Fig. 5): Lion and Linux TCP started together from LBNL to PSC over a
//! GigE WAN, 80 ms RTT: "The Lion gained about 327 Mb/s throughput while in contrast the Linux TCP
//! only obtained about 175 Mb/s throughput during this 5-second contest". Model
//! (`scenarios/seed002-contest.toml`): 1 Gb/s, 80 ms, a 1000-packet buffer and 300 Mb/s of
//! unresponsive Poisson traffic standing for the production path's other users (the paper gives
//! no figure; the two flows got about half the link). Throughput is payload delivered in the 5 s.

use crate::claim::{num, text, ClaimSpec, Rule};
use crate::experiment::{Experiment, Plan, Run};
use longhaul_metrics::summary::{Claim, Summary};

pub const BURST_SOURCE: &str = "seed 002, Figs. 2–3";
pub const CONTEST_SOURCE: &str = "seed 002, Fig. 5";

/// Lion's throughput must be at least this fraction of Reno's in the burst experiment.
pub const BURST_THROUGHPUT_MIN_RATIO: f64 = 0.8;
/// Contest throughputs may differ from the paper's by this fraction.
pub const CONTEST_TOLERANCE: f64 = 0.35;

fn burst_runs(plan: &Plan) -> Vec<Run> {
    let secs = plan.secs(20.0, 120.0).max(3.0);
    vec![
        Run::new("window-reno", "seed002-burst")
            .set("flows.0.cc", "\"reno\"")
            .secs(secs),
        Run::new("mbs-lion", "seed002-burst")
            .set("flows.0.cc", "\"lion\"")
            .secs(secs),
    ]
}

fn burst_claims(_plan: &Plan, summaries: &[Summary]) -> Vec<Claim> {
    let flow = |i: usize| summaries.get(i).and_then(|s| s.flows.first());
    let (Some(window), Some(mbs)) = (flow(0), flow(1)) else {
        return Vec::new();
    };
    vec![
        ClaimSpec::new(
            format!(
                "bursty cross traffic, 100-packet buffer: MBS-paced loss ÷ window-based loss \
                 (Lion {:.4} %, Reno {:.4} %)",
                100.0 * mbs.loss_rate,
                100.0 * window.loss_rate
            ),
            text("< 1 (larger bursts are dropped more)"),
            "×",
            BURST_SOURCE,
            Rule::AtMost(1.0),
        )
        .evaluate(mbs.loss_rate / window.loss_rate),
        ClaimSpec::new(
            "same runs: MBS-paced throughput ÷ window-based throughput",
            text("not stated (pacing must not give up rate)"),
            "×",
            BURST_SOURCE,
            Rule::AtLeast(BURST_THROUGHPUT_MIN_RATIO),
        )
        .evaluate(mbs.throughput_bps / window.throughput_bps),
    ]
}

pub const BURST: Experiment = Experiment {
    name: "lion-burst",
    title: "Window-based vs MBS-paced sending into bursty cross traffic: loss in each",
    source: BURST_SOURCE,
    shortened: "20 s per sender (--full: 120 s)",
    runs: burst_runs,
    claims: burst_claims,
    page: None,
};

fn contest_runs(plan: &Plan) -> Vec<Run> {
    vec![Run::new("lion-vs-reno", "seed002-contest").secs(plan.secs(5.0, 5.0).max(1.0))]
}

fn contest_claims(_plan: &Plan, summaries: &[Summary]) -> Vec<Claim> {
    let Some(s) = summaries.first() else {
        return Vec::new();
    };
    let mbps = |cc: &str| {
        s.flows
            .iter()
            .find(|f| f.cc.starts_with(cc))
            .map(|f| f.throughput_bps / 1e6)
            .unwrap_or(f64::NAN)
    };
    let (lion, reno) = (mbps("lion"), mbps("reno"));
    let within = |target: f64| Rule::Within {
        target,
        tolerance: CONTEST_TOLERANCE,
    };
    vec![
        ClaimSpec::new(
            "5-s contest, 1 Gb/s, 80 ms: Lion's throughput",
            num(327.0),
            "Mb/s",
            CONTEST_SOURCE,
            within(327.0),
        )
        .evaluate(lion),
        ClaimSpec::new(
            "same contest: stock TCP's throughput",
            num(175.0),
            "Mb/s",
            CONTEST_SOURCE,
            within(175.0),
        )
        .evaluate(reno),
        ClaimSpec::new(
            "same contest: Lion ÷ stock TCP",
            num(327.0 / 175.0),
            "×",
            CONTEST_SOURCE,
            Rule::AtLeast(1.0),
        )
        .evaluate(lion / reno),
    ]
}

pub const CONTEST: Experiment = Experiment {
    name: "lion-contest",
    title: "Lion against stock TCP on a 1 Gb/s, 80 ms path: the 5-second contest",
    source: CONTEST_SOURCE,
    shortened: "the paper's 5 s",
    runs: contest_runs,
    claims: contest_claims,
    page: None,
};
