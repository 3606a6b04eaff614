//! One flow's summary entry from its raw counts (docs/measurements.md, from seed 000):
//! throughput = payload bytes ÷ active time (crate::throughput), utilization against the
//! capacity that limits the flow net of headers, b·m/s = throughput × distance (crate::bmps),
//! loss rate on the driver's basis ([`LossBasis`]), queueing delay statistics (crate::delay),
//! and the CoV of its complete 1-s throughput intervals (crate::stability).

use crate::bmps::bmps;
use crate::delay::DelayStats;
use crate::loss::{loss_rate, DropCount};
use crate::stability::cov;
use crate::summary::{FlowDelay, FlowSeries, FlowSummary};
use crate::throughput::{throughput_bps, Capacity};

/// What the loss rate counts as lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossBasis {
    /// Data packets dropped anywhere ÷ packets sent (0 when nothing was sent): the simulator
    /// sees every drop.
    Drops,
    /// Retransmitted ÷ sent segments, undefined when nothing was sent: kernel TCP's own
    /// estimate (`TCP_INFO`), spurious retransmissions included, where drops are not visible.
    Retransmits,
}

/// What a driver measured about one flow.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowCounts {
    /// The flow's id, as the scenario numbers it.
    pub id: u32,
    /// The congestion control's name (`fast`, `reno`, …).
    pub cc: String,
    /// The congestion control's parameters or spec as given, if any.
    pub params: Option<String>,
    /// Unique application payload bytes delivered.
    pub bytes_delivered: u64,
    /// How long the flow ran, seconds: its throughput's denominator.
    pub active_s: f64,
    /// When the flow started, seconds from the start of the run.
    pub start_s: Option<f64>,
    /// When the flow's active time ended, seconds from the start of the run (an early stop, or its
    /// last byte's delivery).
    pub stop_s: Option<f64>,
    /// What limits the flow; without it utilization is undefined.
    pub capacity: Option<Capacity>,
    /// Path distance; without it b·m/s is undefined.
    pub distance_km: Option<f64>,
    /// The smallest RTT sample of the flow, ms: seed 000's "delay".
    pub min_rtt_ms: f64,
    /// Statistics of RTT − min RTT, ms; `None` when there was no sample.
    pub queueing_delay_ms: Option<DelayStats>,
    /// Data packets sent (`None` where the driver cannot count them).
    pub packets_sent: Option<u64>,
    /// Data packets dropped anywhere on the path (`None` where drops are not visible).
    pub packets_lost: Option<u64>,
    /// Packets retransmitted.
    pub retransmits: u64,
    /// What the loss rate counts as lost.
    pub loss_basis: LossBasis,
    /// Throughput of each complete interval the flow ran, b/s, for its CoV: 1-s intervals
    /// (docs/measurements.md), or `perf`'s report intervals (1 s by default).
    pub interval_bps: Vec<f64>,
    /// Where and why the flow's packets were dropped.
    pub drops: Vec<DropCount>,
    /// The flow's time series, if the driver records them.
    pub series: Option<FlowSeries>,
}

/// The flow's summary entry.
pub fn flow_summary(c: FlowCounts) -> FlowSummary {
    let tput = throughput_bps(c.bytes_delivered, c.active_s);
    let loss = match c.loss_basis {
        LossBasis::Drops => loss_rate(c.packets_lost.unwrap_or(0), c.packets_sent.unwrap_or(0)),
        LossBasis::Retransmits => match c.packets_sent {
            Some(sent) if sent > 0 => c.retransmits as f64 / sent as f64,
            _ => f64::NAN,
        },
    };
    let q = c.queueing_delay_ms;
    FlowSummary {
        id: c.id,
        cc: c.cc,
        throughput_bps: tput,
        utilization: c.capacity.map_or(f64::NAN, |cap| cap.utilization(tput)),
        min_rtt_ms: c.min_rtt_ms,
        queueing_delay_ms: FlowDelay {
            mean: q.map_or(f64::NAN, |q| q.mean),
            p95: q.map_or(f64::NAN, |q| q.p95),
            p50: q.map(|q| q.p50),
            p99: q.map(|q| q.p99),
            max: q.map(|q| q.max),
        },
        loss_rate: loss,
        retransmits: c.retransmits,
        bmps: c.distance_km.map_or(f64::NAN, |km| bmps(tput, km)),
        params: c.params,
        start_s: c.start_s,
        stop_s: c.stop_s,
        distance_km: c.distance_km,
        bytes_delivered: Some(c.bytes_delivered),
        packets_sent: c.packets_sent,
        packets_lost: c.packets_lost,
        cov: cov(&c.interval_bps),
        drops: c.drops,
        series: c.series,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::delay::queueing_delay_stats;

    /// A flow that delivered `bytes` over 3 s on a 1 Gb/s, 1500-byte, 1,000-km path.
    pub(crate) fn counts(id: u32, bytes: u64) -> FlowCounts {
        FlowCounts {
            id,
            cc: "fast".into(),
            params: None,
            bytes_delivered: bytes,
            active_s: 3.0,
            start_s: Some(0.0),
            stop_s: Some(3.0),
            capacity: Some(Capacity {
                rate_bps: 1e9,
                mtu: 1500,
            }),
            distance_km: Some(1000.0),
            min_rtt_ms: 100.0,
            queueing_delay_ms: queueing_delay_stats(&[100.0, 102.0, 110.0]),
            packets_sent: Some(3000),
            packets_lost: Some(15),
            retransmits: 15,
            loss_basis: LossBasis::Drops,
            interval_bps: vec![bytes as f64 * 8.0 / 3.0; 3],
            drops: Vec::new(),
            series: None,
        }
    }

    #[test]
    fn flow_summary_applies_the_definitions() {
        // 37,500,000 B in 3 s = 100 Mb/s.
        let s = flow_summary(counts(7, 37_500_000));
        assert_eq!((s.id, s.bytes_delivered), (7, Some(37_500_000)));
        assert!((s.throughput_bps - 100e6).abs() < 1e-6);
        // 100 / (1000 × 1460/1500) = 0.102740.
        assert!((s.utilization - 0.102_739_726).abs() < 1e-8);
        assert!((s.bmps - 1e14).abs() < 1.0); // 100 Mb/s × 1,000 km
        assert!((s.queueing_delay_ms.mean - 4.0).abs() < 1e-9); // (0 + 2 + 10)/3
        assert_eq!(s.queueing_delay_ms.p95, 10.0);
        assert_eq!(s.loss_rate, 15.0 / 3000.0);
        assert_eq!(s.cov, Some(0.0));
    }

    #[test]
    fn what_was_not_measured_is_undefined() {
        let c = FlowCounts {
            capacity: None,
            distance_km: None,
            queueing_delay_ms: None,
            interval_bps: vec![1e6],
            ..counts(1, 1000)
        };
        let s = flow_summary(c);
        assert!(s.utilization.is_nan() && s.bmps.is_nan());
        assert!(s.queueing_delay_ms.mean.is_nan() && s.queueing_delay_ms.p50.is_none());
        // One interval has a CoV of 0; none has none.
        assert_eq!(s.cov, Some(0.0));
        let s = flow_summary(FlowCounts {
            interval_bps: vec![],
            ..counts(1, 1000)
        });
        assert_eq!(s.cov, None);
    }

    #[test]
    fn the_two_loss_bases() {
        let nothing_sent = FlowCounts {
            packets_sent: Some(0),
            packets_lost: Some(0),
            ..counts(1, 0)
        };
        assert_eq!(flow_summary(nothing_sent.clone()).loss_rate, 0.0);
        let kernel = FlowCounts {
            loss_basis: LossBasis::Retransmits,
            ..nothing_sent
        };
        assert!(flow_summary(kernel.clone()).loss_rate.is_nan());
        // 30 retransmitted of 3000 sent, whatever was dropped.
        let kernel = FlowCounts {
            packets_sent: Some(3000),
            retransmits: 30,
            ..kernel
        };
        assert_eq!(flow_summary(kernel).loss_rate, 0.01);
    }
}
