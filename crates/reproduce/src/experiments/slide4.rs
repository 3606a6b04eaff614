//! Seed 001, slides 3–4: "FAST vs. Linux TCP" — over 10,037 km, 180 ms, 1500-byte MTU, one hour
//! per run, "Linux TCP Experiments Jan 28-29, 2003": stock Linux TCP reached 16–48 % average
//! utilization of the hosts' Gigabit Ethernet cards with 1 and 2 flows, with txqueuelen 100
//! (the default then) and 10,000; FAST 92–95 % on the same path (Table 1's 1- and 2-flow rows).
//!
//! The slide measured only the 180 ms path, so only Table 1's 1- and 2-flow rows are rerun.
//! "Stock Linux TCP" in January 2003 was Linux 2.4 (the FAQ of seed 004 lists 2.4.18/2.4.19 on
//! the same team's hosts), modelled as what it was rather than as a modern stack:
//!
//! * its host queue dropped: pfifo_fast holds `txqueuelen` packets, a packet that finds it full
//!   is dropped, `dev_queue_xmit` returns `NET_XMIT_DROP`, and `tcp_transmit_skb` calls
//!   `tcp_enter_cwr` — the window is halved as for a loss, once per window, and the segment is
//!   sent again later (`net/ipv4/tcp_output.c`, `include/net/tcp.h` of 2.4). That is
//!   `access.on_full = "drop"`, with `access.packets` = txqueuelen. Since TCP small queues a
//!   modern Linux socket blocks instead, which is the simulator's default;
//! * TCP, not longhaul's UDP transport: the simulator's TCP-like model (`transport = "model"`:
//!   1460-byte MSS under 40 bytes of headers, ACK-clocked bursts, no pacing — 2.4 had none);
//! * Reno (2.4's NewReno with SACK): halve on loss; and 2.4's ACKing (`stack = "linux-2.4"`):
//!   receivers acknowledged every second segment and the window grew once per ACK, not per
//!   acknowledged packet, so half a packet per RTT in congestion avoidance (the FAQ's factor 0.5
//!   in seed 004, see `reno_climb.rs`) and 1.5× per RTT in slow start.
//!
//! The shared path is `scenarios/seed000-180ms.toml` (2.5 Gb/s, 90 ms one way, 4000-packet
//! router buffer) with its cross traffic: the path's other users as unresponsive Poisson traffic
//! at 5 % of the shared link, Table 1's assumption (the seeds give no figure; it is not fitted).
//! The January runs were on the research path, not SCinet; with two cards of 1 Gb/s and
//! 125 Mb/s of other traffic on 2.5 Gb/s the path is never congested, so its other users cost
//! the flows nothing and each flow is alone with its card and host queue. (Responsive `web`
//! cross traffic was tried and is not used: the simulator's responsive transfers have no card of
//! their own, so their windows reach the router at once and overflow it at 7 % load, a loss
//! process of the model, not of the path.)
//!
//! Durations: Reno's time scale on this path is the hour itself (a halved window of 7,500
//! packets takes 15,000 RTTs, 45 minutes, to regrow at half a packet per RTT), so a short run
//! would measure slow start,
//! not the slide's hour. The default run therefore divides every rate and every buffer by ten
//! (100 Mb/s cards, 250 Mb/s path, txqueuelen 10 and 1,000) and the hour by ten (360 s):
//! windows are ten times smaller and Reno's climb at a fixed rate per RTT ten times shorter, so the
//! utilization over 360 s at a tenth of the rate is that of the hour at full rate (the same
//! scaling `reno_climb.rs` uses). `--full` runs the hour at full rate. Both average over the
//! whole run, as the slide did.

use super::table1::{Row, NIC_PAYLOAD_BPS, ROWS};
use crate::claim::{between, text, ClaimSpec};
use crate::experiment::{Experiment, Plan, Run};
use crate::measure::throughputs_after;
use longhaul_metrics::summary::{Claim, Summary};

/// Where the experiment's claims come from.
pub const SOURCE: &str = "seed 001, slides 3–4";

/// The slide's range for Linux TCP, widened by this many percentage points each side: its bars
/// are labelled in whole percent (0.5 points), and the default's tenfold scaling measured 34.0 %
/// where the hour at full rate measured 34.5 % (0.5 points, docs/reproduce.md).
pub const TOLERANCE_PP: f64 = 1.0;
const TOLERANCE_WHY: &str = "the slide's whole-percent labels (0.5 points) and the default's tenfold scaling (34.0 % against the full-rate hour's 34.5 %: 0.5 points)";

/// (Table 1 row, txqueuelen) of each run: 1 and 2 flows on the 180 ms path.
const RUNS: [(usize, u32); 4] = [(0, 100), (0, 10_000), (1, 100), (1, 10_000)];

/// Rates and buffers of the default run, relative to the real ones.
pub const DEFAULT_SCALE: f64 = 0.1;
/// The slide's averaging period: one hour.
pub const HOUR_S: f64 = 3_600.0;
/// The shared path's rate and router buffer (`scenarios/seed000-180ms.toml`).
const PATH_MBPS: f64 = 2_500.0;
const PATH_BUFFER: f64 = 4_000.0;
/// The other users' share of the shared path (Table 1's assumption).
const CROSS_SHARE: f64 = 0.05;

/// Rates and buffers of a plan, relative to the real ones.
pub fn scale(plan: &Plan) -> f64 {
    if plan.full {
        1.0
    } else {
        DEFAULT_SCALE
    }
}

fn row_of(i: usize) -> &'static Row {
    &ROWS[RUNS[i].0]
}

/// Rate in Mb/s as a scenario string.
fn mbit(v: f64) -> String {
    format!("\"{}kbit\"", (v * 1000.0).round() as u64)
}

/// The controllers run on every row: Linux 2.4's Reno (the claims), then FAST (the controls).
const CONTROLLERS: [&str; 2] = ["reno", "fast"];

fn runs(plan: &Plan) -> Vec<Run> {
    let k = scale(plan);
    CONTROLLERS
        .iter()
        .flat_map(|cc| RUNS.iter().map(move |&(r, txq)| (cc, r, txq)))
        .map(|(cc, r, txq)| {
            let row = &ROWS[r];
            let queue = ((txq as f64 * k).round() as u64).max(1);
            let label = if *cc == "reno" {
                format!("linux24-{}flow-txq{txq}", row.flows)
            } else {
                format!("{cc}-{}flow-txq{txq}", row.flows)
            };
            Run::new(label, row.scenario)
                .set("transport", "\"model\"")
                .set("flows.0.count", row.flows)
                .set("flows.0.cc", format!("\"{cc}\""))
                .set("flows.0.stack", "\"linux-2.4\"")
                .set(
                    "flows.0.access",
                    format!(
                        "{{ rate = {}, packets = {queue}, on_full = \"drop\" }}",
                        mbit(1_000.0 * k)
                    ),
                )
                .set("links.0.rate", mbit(PATH_MBPS * k))
                .set(
                    "links.0.queue",
                    format!(
                        "{{ kind = \"droptail\", packets = {} }}",
                        (PATH_BUFFER * k).round() as u64
                    ),
                )
                .set("cross_traffic.0.rate", mbit(PATH_MBPS * CROSS_SHARE * k))
                .secs(plan.secs(HOUR_S * k, HOUR_S))
        })
        .collect()
}

/// Aggregate utilization (%) of the flows' cards over the whole run.
pub fn utilization(plan: &Plan, row: &Row, summary: &Summary) -> f64 {
    let total: f64 = throughputs_after(summary, 0.0).iter().sum();
    100.0 * total / (row.flows as f64 * NIC_PAYLOAD_BPS * scale(plan))
}

fn claims(plan: &Plan, summaries: &[Summary]) -> Vec<Claim> {
    let (reno, fast) = summaries.split_at(RUNS.len().min(summaries.len()));
    reno.iter()
        .enumerate()
        .map(|(i, s)| {
            let row = row_of(i);
            ClaimSpec::new(
                format!(
                    "Linux 2.4 Reno, {} flow{}, {} ms, txqueuelen {}: hour-average utilization",
                    row.flows,
                    if row.flows == 1 { "" } else { "s" },
                    row.rtt_ms,
                    RUNS[i].1
                ),
                text("16–48 % (FAST 92–95 %)"),
                "%",
                SOURCE,
                between(16.0 - TOLERANCE_PP, 48.0 + TOLERANCE_PP),
                TOLERANCE_WHY,
            )
            .evaluate_against(
                utilization(plan, row, s),
                (
                    "fast",
                    "FAST on the same hosts and path: it reacts to queueing delay, not to the \
                     host queue's drops",
                    fast.get(i).map_or(f64::NAN, |f| utilization(plan, row, f)),
                ),
            )
        })
        .collect()
}

/// The `slide4` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "slide4",
    title: "Linux 2.4 TCP (Reno, dropping host queue of 100 or 10000) on Table 1's 180 ms path vs the slide's 16–48 %",
    source: SOURCE,
    shortened: "rates, buffers and the hour ÷ 10 (360 s at 100 Mb/s per card); --full: the hour at 1 Gb/s",
    runs,
    claims,
    notes: None,
    page: None,
};
