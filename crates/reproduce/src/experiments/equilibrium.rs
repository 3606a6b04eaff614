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

use crate::claim::{num, text, ClaimSpec, Rule};
use crate::experiment::{Experiment, Plan, Run};
use crate::measure::{jain, queue_pkts_after, throughputs_after};
use longhaul_metrics::summary::{Claim, Summary};

pub const SOURCE: &str = "seed 000 §1, seed 001";

/// FAST's α in the scenario, packets.
pub const ALPHA: f64 = 200.0;
/// Round-trip propagation delays of the three flows, ms.
pub const RTTS_MS: [f64; 3] = [20.0, 60.0, 140.0];
/// A flow's backlog may differ from α by this fraction.
pub const BACKLOG_TOLERANCE: f64 = 0.10;
/// FAST's Jain index must reach this ("≈ 1").
pub const FAST_JAIN_MIN: f64 = 0.98;
/// Reno's Jain index must stay at or below this ("clearly lower").
pub const RENO_JAIN_MAX: f64 = 0.90;

fn runs(plan: &Plan) -> Vec<Run> {
    let secs = plan.secs(60.0, 600.0).max(10.0);
    let mut reno = Run::new("reno", "fast-equilibrium").secs(secs);
    for i in 0..RTTS_MS.len() {
        reno = reno.set(&format!("flows.{i}.cc"), "\"reno\"");
    }
    vec![Run::new("fast", "fast-equilibrium").secs(secs), reno]
}

fn claims(_plan: &Plan, summaries: &[Summary]) -> Vec<Claim> {
    let (fast, reno) = (&summaries[0], &summaries[1]);
    let from = fast.duration_s / 2.0;
    let rates = throughputs_after(fast, from);
    let total: f64 = rates.iter().sum();
    let queue = fast
        .links
        .first()
        .map(|l| queue_pkts_after(l, from))
        .unwrap_or(f64::NAN);
    let mut out: Vec<Claim> = rates
        .iter()
        .zip(RTTS_MS)
        .map(|(x, rtt)| {
            ClaimSpec::new(
                format!("FAST flow with {rtt} ms RTT keeps α packets in the queue"),
                num(ALPHA),
                "packets",
                SOURCE,
                Rule::Within {
                    target: ALPHA,
                    tolerance: BACKLOG_TOLERANCE,
                },
            )
            .evaluate(queue * x / total)
        })
        .collect();
    out.push(
        ClaimSpec::new(
            "FAST, RTTs 20/60/140 ms: equal rates (Jain's index)",
            num(1.0),
            "",
            SOURCE,
            Rule::AtLeast(FAST_JAIN_MIN),
        )
        .evaluate(jain(&rates)),
    );
    out.push(
        ClaimSpec::new(
            "Reno, RTTs 20/60/140 ms: rate falls with RTT (Jain's index)",
            text("< 1"),
            "",
            SOURCE,
            Rule::AtMost(RENO_JAIN_MAX),
        )
        .evaluate(jain(&throughputs_after(reno, reno.duration_s / 2.0))),
    );
    out
}

pub const EXPERIMENT: Experiment = Experiment {
    name: "fast-equilibrium",
    title: "FAST keeps α packets queued per flow; equal rates at different RTTs, Reno not",
    source: SOURCE,
    shortened: "60 s per run (--full: 600 s), measured over the second half",
    runs,
    claims,
    page: None,
};
