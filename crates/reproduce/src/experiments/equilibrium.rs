//! FAST's equilibrium (seed 000 §1; seed 001, "equilibrium"): a FAST source adjusts its window
//! until it keeps α packets of its own in the bottleneck queue. All flows through one queue see
//! the same queueing delay q, so flow i's rate is x_i = α/q whatever its RTT: flows with
//! different RTTs get equal rates. Reno's window grows one packet per RTT and halves on loss, so
//! its rate falls with RTT (1/RTT or steeper).
//!
//! Three flows with round-trip propagation delays of 20, 60 and 140 ms share a 400 Mb/s link
//! (`scenarios/fast-equilibrium.toml`), first all FAST (α = 200), then all Reno. Measured over the
//! second half of the run (equilibrium, not convergence): each FAST flow's backlog, the mean
//! bottleneck queue × its share of the throughput (the queue is FIFO, so each flow's share of it
//! is its share of the departures), and Jain's index of the three rates.
//!
//! FAST measures its propagation delay as the minimum RTT it has seen. A flow that starts while
//! others already queue packets never sees the empty queue, over-estimates that delay, and keeps
//! more than α packets queued — the persistent-congestion bias of Vegas and FAST (Low, Peterson,
//! Wang, "Understanding Vegas", JACM 2002). The flows here start together, as in the paper's
//! multi-RTT experiments; the longest-RTT flow gets its first RTT sample after the others have
//! begun to queue.

use crate::claim::{at_least, at_most, num, text, ClaimSpec, Rule};
use crate::experiment::{Experiment, Plan, Run};
use crate::measure::{jain, queue_pkts_after, throughputs_after};
use longhaul_metrics::summary::{Claim, Summary};

/// Where the experiment's claims come from.
pub const SOURCE: &str = "seed 000 §1, seed 001";

/// FAST's α in the scenario, packets.
pub const ALPHA: f64 = 200.0;
/// Round-trip propagation delays of the three flows, ms.
pub const RTTS_MS: [f64; 3] = [20.0, 60.0, 140.0];
/// A flow's backlog may differ from α by this fraction: the receiver acknowledges every second
/// packet and FAST moves the window once per RTT, so a flow's share of the queue wanders by a few
/// packets around α; 10 packets of 200.
pub const BACKLOG_TOLERANCE: f64 = 0.05;
const BACKLOG_WHY: &str = "10 packets of α's 200: a flow's window moves in 2-packet ACK steps once per RTT, so its share of the queue wanders by a few packets";
/// The bottleneck's buffer drains in this long (1000 packets of 1500 bytes at 400 Mb/s, s): the
/// most queueing delay any flow's RTT carries.
pub const MAX_QUEUE_S: f64 = 1000.0 * 1500.0 * 8.0 / 400e6;

/// FAST's Jain index must reach this: the index of three rates that are α/q each within the
/// backlog tolerance, at their most unequal (two at +5 %, one at −5 %), 0.998.
pub fn fast_jain_min() -> f64 {
    let t = BACKLOG_TOLERANCE;
    jain(&[1.0 + t, 1.0 + t, 1.0 - t]).min(jain(&[1.0 + t, 1.0 - t, 1.0 - t]))
}

/// Reno's Jain index must stay at or below this: the index of rates ∝ 1/RTT (Mathis et al.'s
/// response function at one loss rate; on drop-tail Reno falls faster still), with every RTT
/// carrying the whole buffer's delay, the most equal case: 0.82.
pub fn reno_jain_max() -> f64 {
    let rates: Vec<f64> = RTTS_MS
        .iter()
        .map(|ms| 1.0 / (ms / 1e3 + MAX_QUEUE_S))
        .collect();
    jain(&rates)
}

fn runs(plan: &Plan) -> Vec<Run> {
    let secs = plan.secs(60.0, 600.0).max(10.0);
    let mut reno = Run::new("reno", "fast-equilibrium").secs(secs);
    for i in 0..RTTS_MS.len() {
        reno = reno.set(&format!("flows.{i}.cc"), "\"reno\"");
    }
    vec![Run::new("fast", "fast-equilibrium").secs(secs), reno]
}

/// Each flow's backlog over the second half of a run, packets: the mean bottleneck queue × its
/// share of the throughput (the queue is FIFO, so each flow's share of it is its share of the
/// departures), and the flows' rates.
fn backlogs(s: &Summary) -> (Vec<f64>, Vec<f64>) {
    let from = s.duration_s / 2.0;
    let rates = throughputs_after(s, from);
    let total: f64 = rates.iter().sum();
    let queue = s
        .links
        .first()
        .map(|l| queue_pkts_after(l, from))
        .unwrap_or(f64::NAN);
    (rates.iter().map(|x| queue * x / total).collect(), rates)
}

const RENO_WHY: &str = "Reno has no target backlog: its window grows until the buffer \
                        overflows, and its rate falls with its RTT";
const FAST_WHY: &str = "FAST keeps α packets per flow queued, so every flow's rate is α/q \
                        whatever its RTT";

fn claims(_plan: &Plan, summaries: &[Summary]) -> Vec<Claim> {
    let (fast, reno) = (&summaries[0], &summaries[1]);
    let (fast_backlog, fast_rates) = backlogs(fast);
    let (reno_backlog, reno_rates) = backlogs(reno);
    let mut out: Vec<Claim> = fast_backlog
        .iter()
        .zip(&reno_backlog)
        .zip(RTTS_MS)
        .map(|((b, control), rtt)| {
            ClaimSpec::new(
                format!("FAST flow with {rtt} ms RTT keeps α packets in the queue"),
                num(ALPHA),
                "packets",
                SOURCE,
                Rule::Within {
                    target: ALPHA,
                    tolerance: BACKLOG_TOLERANCE,
                },
                BACKLOG_WHY,
            )
            .evaluate_against(*b, ("reno", RENO_WHY, *control))
        })
        .collect();
    let (fast_jain, reno_jain) = (jain(&fast_rates), jain(&reno_rates));
    out.push(
        ClaimSpec::new(
            "FAST, RTTs 20/60/140 ms: equal rates (Jain's index)",
            num(1.0),
            "",
            SOURCE,
            at_least(fast_jain_min()),
            "the index of three rates each within the backlogs' ±5 %, at their most unequal",
        )
        .evaluate_against(fast_jain, ("reno", RENO_WHY, reno_jain)),
    );
    out.push(
        ClaimSpec::new(
            "Reno, RTTs 20/60/140 ms: rate falls with RTT (Jain's index)",
            text("< 1"),
            "",
            SOURCE,
            at_most(reno_jain_max()),
            "none: rates ∝ 1/RTT (Mathis et al.) with every RTT carrying the full buffer's 30 ms, the most equal Reno can be",
        )
        .evaluate_against(reno_jain, ("fast", FAST_WHY, fast_jain)),
    );
    out
}

/// The `fast-equilibrium` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "fast-equilibrium",
    title: "FAST keeps α packets queued per flow; equal rates at different RTTs, Reno not",
    source: SOURCE,
    shortened: "60 s per run (--full: 600 s), measured over the second half",
    runs,
    claims,
    notes: None,
    page: None,
};
