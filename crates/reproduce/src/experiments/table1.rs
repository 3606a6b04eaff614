//! Seed 000, Table 1: FAST TCP at SC2002 — 1 and 2 flows over 180 ms and 10,037 km, 7, 9 and
//! 10 flows over 85 ms and 3,948 km, standard 1500-byte MTU, each flow from its own host with a
//! Gigabit Ethernet card.
//!
//! The table's utilization is "the ratio of throughput and bottleneck capacity (Gigabit Ethernet
//! card), excluding the (40-byte) overhead of TCP/IP headers": with n flows on n cards the
//! capacity is n × 1 Gb/s × 1460/1500. Its "bmps" column is throughput × distance, in 10^15
//! b·m/s. Both are computed here the same way, from the flows' throughput.
//!
//! The real runs lasted 1–6 hours; their averages include slow start, which is negligible over
//! an hour. The default run is 30 s (180 ms) or 10 s (85 ms) at full scale, and averages over its
//! second half so that slow start, a large share of so short a run, is left out. `--full` runs the
//! table's durations and averages over the whole run, as the paper did.
//!
//! How the shared path and its cross traffic are modelled is in the scenario files
//! (`scenarios/seed000-180ms.toml`, `scenarios/seed000-85ms.toml`): a shared link of 2.5 or
//! 10 Gb/s carrying unresponsive Poisson traffic at 5 % of its capacity.

use crate::claim::{num, ClaimSpec, Rule};
use crate::experiment::{Experiment, Plan, Run};
use crate::measure::throughputs_after;
use longhaul_metrics::summary::{Claim, Summary};

pub const SOURCE: &str = "seed 000, Table 1";

/// One row of Table 1.
pub struct Row {
    pub flows: u32,
    pub scenario: &'static str,
    pub distance_km: f64,
    pub rtt_ms: f64,
    pub paper_duration_s: f64,
    pub default_duration_s: f64,
    pub paper_bmps_1e15: f64,
    pub paper_throughput_mbps: f64,
    pub paper_utilization_pct: f64,
}

pub const ROWS: [Row; 5] = [
    Row {
        flows: 1,
        scenario: "seed000-180ms",
        distance_km: 10_037.0,
        rtt_ms: 180.0,
        paper_duration_s: 3_600.0,
        default_duration_s: 30.0,
        paper_bmps_1e15: 9.28,
        paper_throughput_mbps: 925.0,
        paper_utilization_pct: 95.0,
    },
    Row {
        flows: 2,
        scenario: "seed000-180ms",
        distance_km: 10_037.0,
        rtt_ms: 180.0,
        paper_duration_s: 3_600.0,
        default_duration_s: 30.0,
        paper_bmps_1e15: 18.03,
        paper_throughput_mbps: 1_797.0,
        paper_utilization_pct: 92.0,
    },
    Row {
        flows: 7,
        scenario: "seed000-85ms",
        distance_km: 3_948.0,
        rtt_ms: 85.0,
        paper_duration_s: 21_600.0,
        default_duration_s: 10.0,
        paper_bmps_1e15: 24.17,
        paper_throughput_mbps: 6_123.0,
        paper_utilization_pct: 90.0,
    },
    Row {
        flows: 9,
        scenario: "seed000-85ms",
        distance_km: 3_948.0,
        rtt_ms: 85.0,
        paper_duration_s: 4_030.0,
        default_duration_s: 10.0,
        paper_bmps_1e15: 31.35,
        paper_throughput_mbps: 7_940.0,
        paper_utilization_pct: 90.0,
    },
    Row {
        flows: 10,
        scenario: "seed000-85ms",
        distance_km: 3_948.0,
        rtt_ms: 85.0,
        paper_duration_s: 21_600.0,
        default_duration_s: 10.0,
        paper_bmps_1e15: 33.99,
        paper_throughput_mbps: 8_609.0,
        paper_utilization_pct: 88.0,
    },
];

/// A flow's Gigabit Ethernet card net of 40-byte headers per 1500-byte packet (b/s).
pub const NIC_PAYLOAD_BPS: f64 = 1e9 * 1460.0 / 1500.0;

/// Utilization claims may fall this many percentage points short of the table.
pub const UTILIZATION_TOLERANCE_PP: f64 = 5.0;
/// b·m/s claims may fall this fraction short of the table.
pub const BMPS_TOLERANCE: f64 = 0.05;

/// Where averaging starts: the second half of a default run, the whole of a full one.
pub fn warmup_s(plan: &Plan, duration_s: f64) -> f64 {
    if plan.full {
        0.0
    } else {
        duration_s / 2.0
    }
}

impl Row {
    pub fn duration_s(&self, plan: &Plan) -> f64 {
        plan.secs(self.default_duration_s, self.paper_duration_s)
    }

    /// The run of this row with congestion control `cc` and host queue `txqueuelen`.
    pub fn run(&self, plan: &Plan, label: String, cc: &str, txqueuelen: Option<u32>) -> Run {
        let mut run = Run::new(label, self.scenario)
            .set("flows.0.count", self.flows)
            .set("flows.0.cc", format!("\"{cc}\""))
            .secs(self.duration_s(plan));
        if let Some(q) = txqueuelen {
            run = run.set("flows.0.access.packets", q);
        }
        run
    }

    /// Aggregate throughput (b/s) and utilization (%) of n cards, after the warm-up.
    pub fn measure(&self, plan: &Plan, summary: &Summary) -> (f64, f64) {
        let from = warmup_s(plan, summary.duration_s);
        let total: f64 = throughputs_after(summary, from).iter().sum();
        let utilization = 100.0 * total / (self.flows as f64 * NIC_PAYLOAD_BPS);
        (total, utilization)
    }
}

fn runs(plan: &Plan) -> Vec<Run> {
    ROWS.iter()
        .map(|r| r.run(plan, format!("fast-{}flow", r.flows), "fast", None))
        .collect()
}

fn claims(plan: &Plan, summaries: &[Summary]) -> Vec<Claim> {
    let mut out = Vec::new();
    for (row, s) in ROWS.iter().zip(summaries) {
        let (throughput, utilization) = row.measure(plan, s);
        let what = format!(
            "FAST, {} flow{}, {} ms, {} km",
            row.flows,
            if row.flows == 1 { "" } else { "s" },
            row.rtt_ms,
            row.distance_km
        );
        out.push(
            ClaimSpec::new(
                format!("{what}: utilization of the hosts' GbE cards"),
                num(row.paper_utilization_pct),
                "%",
                SOURCE,
                Rule::AtLeast(row.paper_utilization_pct - UTILIZATION_TOLERANCE_PP),
            )
            .evaluate(utilization),
        );
        out.push(
            ClaimSpec::new(
                format!("{what}: distance × throughput"),
                num(row.paper_bmps_1e15),
                "10^15 b·m/s",
                SOURCE,
                Rule::AtLeast(row.paper_bmps_1e15 * (1.0 - BMPS_TOLERANCE)),
            )
            .evaluate(throughput * row.distance_km * 1e3 / 1e15),
        );
    }
    out
}

pub const EXPERIMENT: Experiment = Experiment {
    name: "table1",
    title: "FAST TCP at SC2002: utilization and b·m/s for 1, 2, 7, 9 and 10 flows",
    source: SOURCE,
    shortened: "30 s (180 ms) and 10 s (85 ms) runs averaged over their second half; --full: 1–6 h",
    runs,
    claims,
    page: None,
};
