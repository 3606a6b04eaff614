//! The result summary (DESIGN.md "The result summary") and the run's observations: per-flow
//! and per-queue time series and the drop log.
//!
//! Definitions (DESIGN.md "Measurement definitions", from seed 000):
//! * flow throughput: unique application payload bytes delivered ÷ the flow's active time
//!   (`stop − start`, the run's duration for a flow that runs throughout);
//! * flow utilization: throughput ÷ the capacity of the slowest link on its path net of the
//!   40-byte TCP/IP header per MTU-sized packet, `C·(MTU−40)/MTU`;
//! * link utilization: bytes transmitted (all traffic, headers included) ÷ (capacity ×
//!   duration) — how busy the wire was;
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

use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub scenario: String,
    pub mode: &'static str,
    pub duration_s: f64,
    pub seed: u64,
    pub links: Vec<LinkSummary>,
    pub flows: Vec<FlowSummary>,
    pub aggregate: Aggregate,
    pub cross_traffic: Vec<CrossSummary>,
    pub events: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DelayStats {
    pub mean: f64,
    pub p95: f64,
    pub p99: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkSummary {
    pub name: String,
    /// "forward" (data direction) or "reverse" (ACK direction).
    pub direction: &'static str,
    pub capacity_bps: f64,
    pub utilization: f64,
    pub drops: u64,
    pub drops_queue_full: u64,
    pub drops_red: u64,
    pub drops_random: u64,
    pub ecn_marks: u64,
    pub packets: u64,
    pub max_queue_packets: u64,
    /// Packets waiting at the end of the run (accepted, never transmitted).
    pub queue_at_end_packets: u64,
    pub queue_delay_ms: DelayStats,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowSummary {
    pub id: u32,
    pub cc: String,
    pub throughput_bps: f64,
    pub utilization: f64,
    pub min_rtt_ms: f64,
    pub queueing_delay_ms: DelayStats,
    pub loss_rate: f64,
    pub retransmits: u64,
    pub bmps: f64,
    pub bmps_1e15: f64,
    pub bytes_delivered: u64,
    pub packets_sent: u64,
    pub packets_dropped: u64,
    pub start_s: f64,
    pub stop_s: f64,
    pub path: Vec<String>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Aggregate {
    pub throughput_bps: f64,
    pub utilization: f64,
    pub jain: f64,
    pub cov: f64,
    pub bmps: f64,
    pub bmps_1e15: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CrossSummary {
    pub kind: &'static str,
    pub link: String,
    pub responsive: bool,
    /// Offered bytes (unresponsive) or delivered payload (responsive) ÷ active time.
    pub rate_bps: f64,
    pub packets: u64,
    pub transfers: u64,
}

/// One drop.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DropRecord {
    pub time_s: f64,
    pub link: String,
    pub direction: &'static str,
    /// The flow id, or `None` for cross traffic.
    pub flow: Option<u32>,
    pub reason: &'static str,
}

/// Per-flow samples, one per output interval.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FlowSeries {
    pub id: u32,
    /// Payload delivered during the interval ÷ interval, bit/s.
    pub throughput_bps: Vec<f64>,
    pub cwnd_packets: Vec<f64>,
    /// Smoothed RTT at the sample time, ms (0 before the first sample).
    pub rtt_ms: Vec<f64>,
    pub in_flight_bytes: Vec<u64>,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct QueueSeries {
    pub link: String,
    pub direction: &'static str,
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TimeSeries {
    pub interval_s: f64,
    /// Sample times, s.
    pub time_s: Vec<f64>,
    pub flows: Vec<FlowSeries>,
    pub queues: Vec<QueueSeries>,
}

/// Everything a run produces.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Outcome {
    pub summary: Summary,
    pub series: TimeSeries,
    pub drops: Vec<DropRecord>,
    /// Drops not recorded because the log reached `output.drop_log_limit`.
    pub drops_unlogged: u64,
}

/// Jain's fairness index (Σx)²/(n·Σx²); 1 for an empty or all-zero set.
pub fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || s2 == 0.0 {
        1.0
    } else {
        s * s / (xs.len() as f64 * s2)
    }
}

/// Coefficient of variation (population standard deviation ÷ mean); 0 for fewer than two
/// values or a zero mean.
pub fn cov(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if mean == 0.0 {
        return 0.0;
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    var.sqrt() / mean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_and_cov() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), 1.0);
        // (1+0)²/(2·1) = 0.5: one of two flows starved.
        assert_eq!(jain(&[1.0, 0.0]), 0.5);
        assert_eq!(cov(&[2.0, 2.0]), 0.0);
        // mean 2, sd 1.
        assert_eq!(cov(&[1.0, 3.0]), 0.5);
    }
}
