//! Seed 002 (Network Lion), Figs. 2–4: the controlled burst experiment.
//!
//! **Seed.** "When encountering the same cross traffic, the larger burst has higher probability to
//! cause packet drop" (Fig. 2); "if packets are transmitted in small size bursts with proper gap,
//! the chance to drop packets is narrowed" (Fig. 3); transferring similar amounts of data,
//! window-based transmission loses 20–25 % where smaller bursts lose nothing (Fig. 4). "Any burst
//! sent into the network that exceeds the MBS will potentially cause a router on the path to
//! drop packets"; the MBS "is determined from the stream sending speed, cross traffic rate and
//! router queue size. The MBS is also called effective queue size."
//!
//! **Model** (`scenarios/seed002-mbs.toml`): Fig. 3's 1 Gb/s router with a 1 Gb/s and an OC-12
//! on/off cross stream, a 200-packet buffer, 80 ms RTT, the sender's NIC at 10 Gb/s. The sender is
//! the fixed one (`paced:rate=200e6,burst=B`, crates/cc/src/algorithms/paced.rs): every run sends
//! the same data at the same average rate into the same cross traffic (its sources do not react,
//! and the seed is fixed), with bursts of 1 to 1024 packets; the window-based sender
//! (`clock=ack`) holds a window of the same rate × RTT and lets the ACK clock space it.
//!
//! **MBS.** The effective queue size is measured, not assumed: the router's buffer less the mean
//! queue that the cross traffic and the smooth (1-packet) stream hold, sampled every millisecond,
//! divided by the share of a burst that stays queued while it arrives (1 − 1 Gb/s ÷ 10 Gb/s: the
//! router drains a tenth of a 10 Gb/s burst as it comes in). It is printed with every row.
//!
//! **Error.** Loss is a count of drops; two runs' loss rates differ by counting noise of about
//! √(drops₁ + drops₂) ÷ sent, so "grows" allows a fall of twice that between neighbouring sizes.
//! A ratio of two losses carries a relative counting noise of √(1/drops₁ + 1/drops₂), so
//! "larger bursts are dropped more" needs the ratio above one by twice that.
//!
//! **Controls.** Bursts larger than the MBS fail the claim about bursts under it. The claim that
//! the largest burst is dropped more than the smallest is run again with the same two bursts
//! on a router whose drops do not depend on bursts: a buffer of [`CONTROL_BUFFER`] packets holds
//! every burst and the cross traffic's queue, and the link drops [`CONTROL_LOSS`] of packets at
//! random, so both bursts lose alike and the ratio stays within its counting noise of one.

use crate::claim::{text, ClaimSpec, Rule};
use crate::experiment::{Experiment, Plan, Run};
use longhaul_metrics::summary::{Claim, FlowSummary, Summary};

/// Where the experiment's claims come from.
pub const SOURCE: &str = "seed 002, Figs. 2–4";

/// The sender's average rate, bits/s (as `scenarios/seed002-mbs.toml` states it).
pub const RATE_BPS: f64 = 200e6;
/// Burst sizes, packets: from one to five times the buffer.
pub const BURSTS: &[u32] = &[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
/// The router's buffer, packets, as the scenario has it.
pub const BUFFER_PACKETS: f64 = 200.0;
/// The router's output rate, bits/s, as the scenario has it.
pub const ROUTER_BPS: f64 = 1e9;
/// The sender's NIC rate, bits/s, as the scenario has it.
pub const NIC_BPS: f64 = 10e9;
/// Counting-noise multiple allowed when loss is said to grow.
pub const NOISE_SIGMAS: f64 = 2.0;
/// The control router's buffer, packets: five times the largest burst, so no burst overflows it.
pub const CONTROL_BUFFER: u32 = 5 * 1024;
/// The control router's random loss: drops that fall on every packet alike.
pub const CONTROL_LOSS: f64 = 0.01;

fn runs(plan: &Plan) -> Vec<Run> {
    let secs = plan.secs(20.0, 60.0).max(2.0);
    let mut out: Vec<Run> = BURSTS
        .iter()
        .map(|b| {
            Run::new(format!("burst-{b}"), "seed002-mbs")
                .set("flows.0.cc", format!("\"paced:rate={RATE_BPS},burst={b}\""))
                .secs(secs)
        })
        .collect();
    out.push(
        Run::new("window", "seed002-mbs")
            .set("flows.0.cc", format!("\"paced:rate={RATE_BPS},clock=ack\""))
            .secs(secs),
    );
    for b in [BURSTS[0], BURSTS[BURSTS.len() - 1]] {
        out.push(
            Run::new(format!("control-burst-{b}"), "seed002-mbs")
                .set("flows.0.cc", format!("\"paced:rate={RATE_BPS},burst={b}\""))
                .set("links.0.queue.packets", CONTROL_BUFFER)
                .set("links.0.loss", CONTROL_LOSS)
                .secs(secs),
        );
    }
    out
}

/// How many times two losses' ratio must exceed one to say the first is larger: twice its
/// relative counting noise, √(1/drops₁ + 1/drops₂).
fn ratio_noise(a: &FlowSummary, b: &FlowSummary) -> f64 {
    let (la, lb) = (counts(a).0, counts(b).0);
    NOISE_SIGMAS * (1.0 / la.max(1.0) + 1.0 / lb.max(1.0)).sqrt()
}

/// Dropped and sent packets of the run's one flow.
fn counts(f: &FlowSummary) -> (f64, f64) {
    let sent = f.packets_sent.unwrap_or(0) as f64;
    let lost = f.packets_lost.map_or(f.loss_rate * sent, |l| l as f64);
    (lost, sent)
}

/// The measured MBS, packets: the room the cross traffic and the smooth stream leave in the
/// buffer on average, over the part of a burst that queues (see the header). `None` without a
/// queue series.
pub fn measured_mbs(smooth: &Summary) -> Option<f64> {
    let q = &smooth.links.first()?.series.as_ref()?.queue_pkts;
    if q.is_empty() {
        return None;
    }
    let mean = q.iter().sum::<f64>() / q.len() as f64;
    Some((BUFFER_PACKETS - mean).max(0.0) / (1.0 - ROUTER_BPS / NIC_BPS))
}

fn claims(_plan: &Plan, summaries: &[Summary]) -> Vec<Claim> {
    let n = BURSTS.len();
    if summaries.len() != n + 3 {
        return Vec::new();
    }
    let flows: Option<Vec<&FlowSummary>> = summaries.iter().map(|s| s.flows.first()).collect();
    let Some(flows) = flows else {
        return Vec::new();
    };
    let mbs = measured_mbs(&summaries[0]).unwrap_or(f64::NAN);
    let window = flows[n];
    let (control_small, control_large) = (flows[n + 1], flows[n + 2]);
    let mut out = Vec::new();
    for i in 1..n {
        let ((l0, s0), (l1, s1)) = (counts(flows[i - 1]), counts(flows[i]));
        let noise = NOISE_SIGMAS * (l0 + l1).sqrt() / s0.max(s1).max(1.0);
        let prev = flows[i - 1].loss_rate;
        out.push(
            ClaimSpec::new(
                format!(
                    "loss, bursts of {} packets (MBS {mbs:.0}; {:.0} Mb/s delivered; {} packets: \
                     {:.3} %)",
                    BURSTS[i],
                    flows[i].throughput_bps / 1e6,
                    BURSTS[i - 1],
                    100.0 * prev
                ),
                text("grows with the burst size"),
                "%",
                SOURCE,
                Rule::AtLeast {
                    bound: 100.0 * (prev - noise),
                },
                "twice the counting noise of the two losses, √(drops at both sizes) ÷ packets \
                 sent (drops are a Poisson count)",
            )
            // A flat curve passes this step too: it shows the curve's shape, the two claims
            // below carry the seed's.
            .check()
            .evaluate(100.0 * flows[i].loss_rate),
        );
    }
    // The smallest burst above the MBS: the control of the claim about bursts under it.
    let above = BURSTS
        .iter()
        .position(|&b| (b as f64) > mbs)
        .unwrap_or(n - 1);
    let small = BURSTS
        .iter()
        .zip(&flows)
        .filter(|(&b, _)| (b as f64) <= mbs)
        .map(|(_, f)| f.loss_rate)
        .fold(f64::NAN, f64::max);
    out.push(
        ClaimSpec::new(
            format!(
                "worst loss at bursts ≤ MBS ({mbs:.0}) ÷ window-based loss (window {:.3} %, \
                 {:.0} Mb/s delivered)",
                100.0 * window.loss_rate,
                window.throughput_bps / 1e6
            ),
            text("< 1 (Fig. 4: window 20–25 %, small bursts 0)"),
            "×",
            SOURCE,
            Rule::AtMost { bound: 1.0 },
            "none: Fig. 4's claim is an inequality; the counting noise of each loss is in the \
             growth rows' rule",
        )
        .evaluate_against(
            small / window.loss_rate,
            (
                &format!("bursts of {} (> MBS)", BURSTS[above]),
                "bursts larger than the MBS overflow the router's queue when they meet the cross \
                 traffic's",
                flows[above].loss_rate / window.loss_rate,
            ),
        ),
    );
    // The bound covers the counting noise of the claim's ratio and of the control's, so the
    // control cannot fail by noise alone.
    let noise = ratio_noise(flows[n - 1], flows[0]).max(ratio_noise(control_large, control_small));
    out.push(
        ClaimSpec::new(
            format!(
                "loss at {} packets ({:.1} × MBS) ÷ loss at 1 packet",
                BURSTS[n - 1],
                BURSTS[n - 1] as f64 / mbs
            ),
            text("> 1 (larger bursts are dropped more)"),
            "×",
            SOURCE,
            Rule::AtLeast { bound: 1.0 + noise },
            "twice the relative counting noise of the ratio, √(1/drops₁ + 1/drops₂), the larger \
             of the claim's and the control's",
        )
        .evaluate_against(
            flows[n - 1].loss_rate / flows[0].loss_rate,
            (
                &format!(
                    "a {CONTROL_BUFFER}-packet buffer, {:.0} % random loss",
                    100.0 * CONTROL_LOSS
                ),
                "every burst fits the buffer and the link drops packets alike, whatever the burst",
                control_large.loss_rate / control_small.loss_rate,
            ),
        ),
    );
    out
}

/// The `lion-mbs` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "lion-mbs",
    title: "Same data, same rate, same cross traffic: loss against burst size, and a window",
    source: SOURCE,
    shortened: "20 s per burst size (--full: 60 s)",
    runs,
    claims,
    page: None,
    notes: None,
};
