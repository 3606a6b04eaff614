//! The run's outcome: the result summary (docs/measurements.md, as
//! `longhaul_metrics::summary` types, filled in by `engine`) with its time series, the drop log
//! and cross-traffic statistics.
//!
//! Definitions (docs/measurements.md, from seed 000):
//! * flow throughput: unique application payload bytes delivered ÷ the flow's active time
//!   (`stop − start`, the run's duration for a flow that runs throughout);
//! * flow utilization: throughput ÷ the capacity of the slowest link on its path net of the
//!   40-byte TCP/IP header per MTU-sized packet, `C·(MTU−40)/MTU`;
//! * link utilization: payload bytes transmitted (all traffic, 40-byte headers excluded, so
//!   ACKs count nothing) ÷ (payload capacity × duration), as `longhaul-metrics` defines it;
//! * aggregate throughput: all flows' payload ÷ the run's duration; aggregate utilization
//!   relative to the first bottleneck (dumbbell: the bottleneck; parking lot: the slowest link
//!   of the chain);
//! * b·m/s: throughput × path distance in metres (`bmps`), also in units of 10^15 (`bmps_1e15`)
//!   as seed 000's Table 1 reports;
//! * queueing delay: RTT − min RTT over every RTT sample (mean, p95, p99); link queue delay:
//!   each accepted packet's wait before transmission;
//! * loss rate: the flow's data packets dropped anywhere ÷ data packets sent;
//! * fairness: Jain's index (Σx)²/(n·Σx²) over flow throughputs; stability: coefficient of
//!   variation of the aggregate throughput over 1 s intervals.

use longhaul_metrics::summary::Summary;
use serde::Serialize;

/// What a cross-traffic source did.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CrossSummary {
    /// The arrival process (`cbr`, `poisson`, `onoff`, `web`).
    pub kind: &'static str,
    /// The link it loads.
    pub link: String,
    /// Carried by congestion-controlled flows.
    pub responsive: bool,
    /// Offered bytes (unresponsive) or delivered payload (responsive) ÷ active time, headers
    /// included for unresponsive packets.
    pub rate_bps: f64,
    /// Packets emitted (unresponsive sources).
    pub packets: u64,
    /// Transfers begun (web arrivals, or responsive transfers).
    pub transfers: u64,
}

/// One direction of a link, in more detail than the summary's `links`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PortReport {
    /// The link's name.
    pub link: String,
    /// "forward" (data direction) or "reverse" (ACK direction).
    pub direction: &'static str,
    /// Packets transmitted.
    pub packets: u64,
    /// Packets dropped because the queue was full.
    pub drops_queue_full: u64,
    /// Packets RED dropped.
    pub drops_red: u64,
    /// Packets lost at random on the wire.
    pub drops_random: u64,
    /// Packets RED marked with ECN-CE.
    pub ecn_marks: u64,
    /// Packets the link duplicated (`duplicate`): each arrived twice.
    #[serde(skip_serializing_if = "is_zero")]
    pub duplicates: u64,
    /// The most packets ever waiting (not counting the one being transmitted).
    pub max_queue_packets: u64,
    /// Packets waiting at the end of the run (accepted, never transmitted).
    pub queue_at_end_packets: u64,
}

/// One drop, as the drop log records it. `reason` is finer than the summary's: RED's
/// `red_early` and `red_forced` are both `aqm` there, `random_loss` is `random`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DropRecord {
    /// When, seconds from the start of the run.
    pub time_s: f64,
    /// Where: the link's name, or `access:ID` for a flow's host queue.
    pub link: String,
    /// `forward` (data direction) or `reverse` (ACK direction).
    pub direction: &'static str,
    /// The flow id, or `None` for cross traffic.
    pub flow: Option<u32>,
    /// Why: `queue_full`, `red_early`, `red_forced`, `random_loss` or `host_queue_full`.
    pub reason: &'static str,
}

/// The stalls one host of a flow had (`host_stalls`, `crate::stall`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HostStallReport {
    /// The flow's id.
    pub flow: u32,
    /// "sender" or "receiver".
    pub host: &'static str,
    /// Stalls begun during the run.
    pub stalls: u64,
    /// Time they covered within the run, seconds.
    pub stalled_s: f64,
}

/// Everything a run produces.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Outcome {
    /// The result summary of docs/measurements.md, with per-flow, per-link and aggregate time series.
    pub summary: Summary,
    /// What each cross-traffic source did, in scenario order.
    pub cross_traffic: Vec<CrossSummary>,
    /// Per link direction: counters beyond the summary's.
    pub ports: Vec<PortReport>,
    /// Every drop, up to `output.drop_log_limit`.
    pub drops: Vec<DropRecord>,
    /// Drops not recorded because the log reached `output.drop_log_limit`.
    pub drops_unlogged: u64,
    /// Per host that was given `host_stalls`: its stalls (also in the summary's `meta`, as
    /// `host_stalls.flowID.HOST`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub host_stalls: Vec<HostStallReport>,
    /// Events the simulator processed.
    pub events: u64,
    /// Packet enqueue operations (one per packet per hop).
    pub packet_hops: u64,
    /// Threads the run was split across (1 or 2; nothing else in the outcome depends on it,
    /// so it is not serialized).
    #[serde(skip)]
    pub threads: usize,
    /// Every packet's events, from `run_traced` only.
    #[serde(skip)]
    pub trace: Option<crate::trace::Trace>,
}

impl Outcome {
    /// What a person should know beside the summary's table: drops counted but not logged, and
    /// each host's stalls.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.drops_unlogged > 0 {
            notes.push(format!(
                "note: {} drops beyond output.drop_log_limit were counted but not logged",
                self.drops_unlogged
            ));
        }
        notes.extend(self.host_stalls.iter().map(|r| {
            format!(
                "host stalls: flow {} {}: {} stalls, {:.1} ms stalled",
                r.flow,
                r.host,
                r.stalls,
                r.stalled_s * 1e3
            )
        }));
        notes
    }

    /// The simulator's own files in a run's report directory (beside the summary and page that
    /// `longhaul_metrics::report::write_report_dir` writes): `drops.csv` and `details.json`.
    pub fn report_files(&self) -> Result<[(&'static str, String); 2], serde_json::Error> {
        let details = serde_json::to_string_pretty(&self.details())?;
        Ok([("drops.csv", self.drops_csv()), ("details.json", details)])
    }

    /// The report's `drops.csv`: every logged drop (`cross` for cross traffic's packets).
    pub fn drops_csv(&self) -> String {
        let mut csv = String::from("time_s,link,direction,flow,reason\n");
        for d in &self.drops {
            let flow = d
                .flow
                .map(|f| f.to_string())
                .unwrap_or_else(|| "cross".into());
            csv.push_str(&format!(
                "{:.9},{},{},{},{}\n",
                d.time_s, d.link, d.direction, flow, d.reason
            ));
        }
        csv
    }

    /// The report's `details.json`: per-port counters, cross traffic, unlogged drops, events,
    /// packet-hops and (when any host stalled) the host stalls.
    pub fn details(&self) -> serde_json::Value {
        let mut details = serde_json::json!({
            "ports": self.ports,
            "cross_traffic": self.cross_traffic,
            "drops_unlogged": self.drops_unlogged,
            "events": self.events,
            "packet_hops": self.packet_hops,
        });
        if !self.host_stalls.is_empty() {
            details["host_stalls"] = serde_json::json!(self.host_stalls);
        }
        details
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
