//! Seed 001, slide 4: on the same path as Table 1 (10,037 km, 180 ms, 1500-byte MTU, averaged
//! over an hour) Linux TCP reached 16–48 % utilization, FAST 92–95 %, and the host queue
//! (txqueuelen 100, the default then, or 10,000) mattered to Linux TCP.
//!
//! Stock Reno runs on exactly Table 1's runs (same scenario files, cross traffic, durations and
//! averaging as `table1`), with the host queue at 100 and at 10,000 packets for the 180 ms rows
//! and at 100 for the 85 ms rows. A Reno flow at 1 Gb/s and 180 ms needs 15,000 packets in flight
//! and regains a halved window at one packet per RTT (over 20 minutes), so whatever the first
//! losses are (slow start overflowing the host queue, or cross traffic), it spends the run far
//! below the card's rate.

use super::table1::{Row, ROWS};
use crate::claim::{text, ClaimSpec, Rule};
use crate::experiment::{Experiment, Plan, Run};
use longhaul_metrics::summary::{Claim, Summary};

pub const SOURCE: &str = "seed 001, slide 4";

/// The slide's range for Linux TCP, widened by this many percentage points each side.
pub const TOLERANCE_PP: f64 = 10.0;

/// (row index, txqueuelen) of each Reno run.
const RUNS: [(usize, u32); 7] = [
    (0, 100),
    (0, 10_000),
    (1, 100),
    (1, 10_000),
    (2, 100),
    (3, 100),
    (4, 100),
];

fn row_of(i: usize) -> &'static Row {
    &ROWS[RUNS[i].0]
}

fn runs(plan: &Plan) -> Vec<Run> {
    RUNS.iter()
        .map(|&(r, q)| {
            let row = &ROWS[r];
            row.run(
                plan,
                format!("reno-{}flow-txq{q}", row.flows),
                "reno",
                Some(q),
            )
        })
        .collect()
}

fn claims(plan: &Plan, summaries: &[Summary]) -> Vec<Claim> {
    summaries
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let row = row_of(i);
            let (_, utilization) = row.measure(plan, s);
            ClaimSpec::new(
                format!(
                    "Reno, {} flow{}, {} ms, txqueuelen {}: utilization far below FAST's",
                    row.flows,
                    if row.flows == 1 { "" } else { "s" },
                    row.rtt_ms,
                    RUNS[i].1
                ),
                text("16–48 % (FAST 92–95 %)"),
                "%",
                SOURCE,
                Rule::Between(16.0 - TOLERANCE_PP, 48.0 + TOLERANCE_PP),
            )
            .evaluate(utilization)
        })
        .collect()
}

pub const EXPERIMENT: Experiment = Experiment {
    name: "slide4",
    title: "Stock Reno on Table 1's runs, txqueuelen 100 and 10000, vs Linux TCP's 16–48 %",
    source: SOURCE,
    shortened: "as table1",
    runs,
    claims,
};
