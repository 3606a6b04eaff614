//! Recorders: turn a run's events into result-summary entries in bounded memory.
//!
//! A driver (simulator, emulator harness, perf client) owns one [`FlowRecorder`] per flow and one
//! [`LinkRecorder`] per link, calls `on_*` as things happen (explicit times in seconds from the
//! start of the experiment; no clock is read here), and calls `finish` at the end. Memory is
//! constant per flow apart from the time series, which hold one entry per interval
//! (`series_interval_s`, 0.1 s by default → 3,000 entries for a 300-s run), never one per packet.
//!
//! Definitions applied by `finish`: throughput = payload bytes ÷ the flow's active time
//! (crate::throughput), utilization against the capacity the caller names, queueing delay from
//! the [`DelayAccumulator`], loss = packets lost ÷ packets sent, CoV over complete 1-s intervals
//! (crate::stability), b·m/s = throughput × distance.

use crate::bmps::bmps;
use crate::error::MetricsError;
use crate::fairness::jain_index;
use crate::loss::{loss_rate, LossLedger};
use crate::online::{DelayAccumulator, GaugeBinner, IntervalBinner, RunningStats};
use crate::summary::{
    Aggregate, AggregateSeries, FlowDelay, FlowSeries, FlowSummary, LinkDelay, LinkSeries,
    LinkSummary,
};
use crate::throughput::{throughput_bps, utilization};

/// Interval of the stability (CoV) series, fixed by docs/measurements.md.
pub const STABILITY_INTERVAL_S: f64 = 1.0;
/// Default interval of plotted time series.
pub const DEFAULT_SERIES_INTERVAL_S: f64 = 0.1;

/// The path a flow's numbers are judged against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathContext {
    /// Capacity for utilization (see crate::throughput for which capacity seed 000 uses).
    pub capacity_bps: f64,
    pub mtu: u32,
    /// Terrestrial (or equivalent) distance for b·m/s.
    pub distance_km: f64,
}

/// Everything measured about one flow.
#[derive(Debug, Clone)]
pub struct FlowRecorder {
    id: u32,
    cc: String,
    params: Option<String>,
    first_s: Option<f64>,
    last_s: Option<f64>,
    bytes_delivered: u64,
    packets_sent: u64,
    packets_lost: u64,
    retransmits: u64,
    drops: LossLedger,
    delay: DelayAccumulator,
    per_second: IntervalBinner,
    delivered: IntervalBinner,
    cwnd: GaugeBinner,
    rtt: GaugeBinner,
    inflight: GaugeBinner,
}

impl FlowRecorder {
    /// A recorder for flow `id` running `cc`, with time series at `series_interval_s`.
    pub fn new(id: u32, cc: &str, series_interval_s: f64) -> Result<Self, MetricsError> {
        Ok(Self {
            id,
            cc: cc.to_string(),
            params: None,
            first_s: None,
            last_s: None,
            bytes_delivered: 0,
            packets_sent: 0,
            packets_lost: 0,
            retransmits: 0,
            drops: LossLedger::new(),
            delay: DelayAccumulator::new(),
            per_second: IntervalBinner::new(STABILITY_INTERVAL_S)?,
            delivered: IntervalBinner::new(series_interval_s)?,
            cwnd: GaugeBinner::new(series_interval_s)?,
            rtt: GaugeBinner::new(series_interval_s)?,
            inflight: GaugeBinner::new(series_interval_s)?,
        })
    }

    /// Use a delay histogram of `bits` precision (default 10: 0.049 % of the RTT, ~150 KiB per
    /// flow at 180 ms; 7 bits: 0.39 %, ~19 KiB) — for runs with thousands of flows.
    pub fn with_delay_precision(mut self, bits: u32) -> Result<Self, MetricsError> {
        self.delay = DelayAccumulator::with_precision(bits)?;
        Ok(self)
    }

    /// Record the algorithm's parameters as the user gave them.
    pub fn with_params(mut self, params: &str) -> Self {
        self.params = Some(params.to_string());
        self
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    fn touch(&mut self, t: f64) {
        if t.is_finite() {
            self.first_s = Some(self.first_s.map_or(t, |f| f.min(t)));
            self.last_s = Some(self.last_s.map_or(t, |l| l.max(t)));
        }
    }

    /// `bytes` of application payload delivered in order to the receiver at `t`.
    pub fn on_delivered(&mut self, t: f64, bytes: u64) {
        self.touch(t);
        self.bytes_delivered += bytes;
        self.per_second.add(t, bytes);
        self.delivered.add(t, bytes);
    }

    /// `packets` sent (first transmissions and retransmissions) at `t`.
    pub fn on_sent(&mut self, t: f64, packets: u64) {
        self.touch(t);
        self.packets_sent += packets;
    }

    /// `packets` retransmitted.
    pub fn on_retransmit(&mut self, packets: u64) {
        self.retransmits += packets;
    }

    /// `packets` of this flow dropped at `location` for `reason` (crate::loss reasons).
    pub fn on_drop(&mut self, location: &str, reason: &str, packets: u64) {
        self.packets_lost += packets;
        self.drops.record(location, reason, packets);
    }

    /// An RTT sample of `rtt_s` seconds taken at `t`.
    pub fn on_rtt(&mut self, t: f64, rtt_s: f64) {
        if rtt_s >= 0.0 && rtt_s.is_finite() {
            self.delay.record_s(rtt_s);
            self.rtt.add(t, rtt_s * 1e3);
        }
    }

    /// The congestion window (packets) at `t`.
    pub fn on_cwnd(&mut self, t: f64, cwnd_pkts: f64) {
        self.cwnd.add(t, cwnd_pkts);
    }

    /// Packets in flight at `t`.
    pub fn on_inflight(&mut self, t: f64, pkts: f64) {
        self.inflight.add(t, pkts);
    }

    /// The 1-s throughput series over the first `duration_s` seconds (complete intervals only).
    pub fn per_second_bps(&self, duration_s: f64) -> Vec<f64> {
        self.per_second
            .throughput_series(duration_s)
            .into_iter()
            .map(|(_, v)| v)
            .collect()
    }

    /// The flow's summary. `active_s` is how long the flow ran (its transfer duration);
    /// `run_s` the experiment's duration, which bounds the time series.
    pub fn finish(&self, active_s: f64, run_s: f64, path: &PathContext) -> FlowSummary {
        let tput = throughput_bps(self.bytes_delivered, active_s);
        let q = self.delay.queueing_stats_ms();
        let min_rtt_ms = self.delay.min_ns().map_or(f64::NAN, |ns| ns as f64 / 1e6);
        // A flow's stability is judged while it runs: the complete 1-s intervals from the one
        // holding its first event to the one holding its last, so a late start or early stop
        // does not read as instability (zeros before the start would inflate the CoV).
        let (from, to) = (
            self.first_s.unwrap_or(0.0),
            self.last_s.unwrap_or(run_s).min(run_s),
        );
        let mut stats = RunningStats::new();
        self.per_second
            .throughput_series(run_s)
            .into_iter()
            .filter(|&(t, _)| t >= from.floor() && t + STABILITY_INTERVAL_S <= to.ceil())
            .for_each(|(_, x)| stats.push(x));
        FlowSummary {
            id: self.id,
            cc: self.cc.clone(),
            throughput_bps: tput,
            utilization: utilization(tput, path.capacity_bps, path.mtu),
            min_rtt_ms,
            queueing_delay_ms: FlowDelay {
                mean: q.map_or(f64::NAN, |q| q.mean),
                p95: q.map_or(f64::NAN, |q| q.p95),
                p50: q.map(|q| q.p50),
                p99: q.map(|q| q.p99),
                max: q.map(|q| q.max),
            },
            loss_rate: loss_rate(self.packets_lost, self.packets_sent),
            retransmits: self.retransmits,
            bmps: bmps(tput, path.distance_km),
            params: self.params.clone(),
            start_s: self.first_s,
            stop_s: self.last_s,
            distance_km: Some(path.distance_km),
            bytes_delivered: Some(self.bytes_delivered),
            packets_sent: Some(self.packets_sent),
            packets_lost: Some(self.packets_lost),
            cov: stats.cov(),
            drops: self.drops.rows(),
            series: Some(self.series(run_s)),
        }
    }

    fn series(&self, run_s: f64) -> FlowSeries {
        let tput = self.delivered.throughput_series(run_s);
        let t: Vec<f64> = tput.iter().map(|&(t, _)| t).collect();
        // Gauges are aligned to the throughput intervals; an interval without a sample carries
        // the last value forward (a window that did not change was not re-sampled).
        let align = |g: &GaugeBinner| -> Vec<f64> {
            let bins = g.series();
            if bins.is_empty() {
                return Vec::new();
            }
            let width = self.delivered.width_s();
            let mut out = Vec::with_capacity(t.len());
            let mut j = 0;
            let mut last = f64::NAN;
            for k in 0..t.len() {
                while j < bins.len() && (bins[j].t / width).round() as usize <= k {
                    last = bins[j].mean;
                    j += 1;
                }
                out.push(last);
            }
            out
        };
        FlowSeries {
            throughput_bps: tput.iter().map(|&(_, v)| v).collect(),
            cwnd_pkts: align(&self.cwnd),
            rtt_ms: align(&self.rtt),
            inflight_pkts: align(&self.inflight),
            t,
            ..FlowSeries::default()
        }
    }
}

/// The aggregate of finished flows over a run of `run_s` seconds on `path`: throughput is the sum
/// of the flows' payload bytes over the run, Jain's index is over the flows' throughputs, and the
/// CoV is over the aggregate's complete 1-s intervals.
pub fn aggregate(
    recorders: &[FlowRecorder],
    flows: &[FlowSummary],
    run_s: f64,
    path: &PathContext,
) -> Aggregate {
    let bytes: u64 = recorders.iter().map(|r| r.bytes_delivered).sum();
    let tput = throughput_bps(bytes, run_s);
    let mut per_second: Option<IntervalBinner> = None;
    let mut series: Option<IntervalBinner> = None;
    for r in recorders {
        merge_into(&mut per_second, &r.per_second);
        merge_into(&mut series, &r.delivered);
    }
    let one_s: Vec<f64> = per_second
        .map(|b| {
            b.throughput_series(run_s)
                .into_iter()
                .map(|(_, v)| v)
                .collect()
        })
        .unwrap_or_default();
    let mut stats = RunningStats::new();
    one_s.iter().for_each(|&x| stats.push(x));
    let rates: Vec<f64> = flows.iter().map(|f| f.throughput_bps).collect();
    Aggregate {
        throughput_bps: tput,
        utilization: utilization(tput, path.capacity_bps, path.mtu),
        jain: jain_index(&rates).unwrap_or(f64::NAN),
        cov: stats.cov().unwrap_or(f64::NAN),
        bmps: bmps(tput, path.distance_km),
        bytes_delivered: Some(bytes),
        capacity_bps: Some(path.capacity_bps),
        limited_by: None,
        series: series.map(|b| {
            let s = b.throughput_series(run_s);
            AggregateSeries {
                t: s.iter().map(|&(t, _)| t).collect(),
                throughput_bps: s.iter().map(|&(_, v)| v).collect(),
            }
        }),
    }
}

fn merge_into(acc: &mut Option<IntervalBinner>, b: &IntervalBinner) {
    match acc {
        // Same construction, same width: merge cannot fail.
        Some(a) => {
            let _ = a.merge(b);
        }
        None => *acc = Some(b.clone()),
    }
}

/// Everything measured about one link (queue).
#[derive(Debug, Clone)]
pub struct LinkRecorder {
    name: String,
    capacity_bps: f64,
    mtu: u32,
    bytes_forwarded: u64,
    packets_forwarded: u64,
    drops: LossLedger,
    sojourn: DelayAccumulator,
    queue_bytes: GaugeBinner,
    queue_pkts: GaugeBinner,
    forwarded: IntervalBinner,
}

impl LinkRecorder {
    pub fn new(
        name: &str,
        capacity_bps: f64,
        mtu: u32,
        series_interval_s: f64,
    ) -> Result<Self, MetricsError> {
        Ok(Self {
            name: name.to_string(),
            capacity_bps,
            mtu,
            bytes_forwarded: 0,
            packets_forwarded: 0,
            drops: LossLedger::new(),
            sojourn: DelayAccumulator::new(),
            queue_bytes: GaugeBinner::new(series_interval_s)?,
            queue_pkts: GaugeBinner::new(series_interval_s)?,
            forwarded: IntervalBinner::new(series_interval_s)?,
        })
    }

    /// A packet with `payload_bytes` of payload left the link at `t` after `sojourn_s` in queue.
    pub fn on_forwarded(&mut self, t: f64, payload_bytes: u64, sojourn_s: f64) {
        self.bytes_forwarded += payload_bytes;
        self.packets_forwarded += 1;
        self.sojourn.record_s(sojourn_s);
        self.forwarded.add(t, payload_bytes);
    }

    /// `packets` dropped here for `reason`.
    pub fn on_drop(&mut self, reason: &str, packets: u64) {
        let name = self.name.clone();
        self.drops.record(&name, reason, packets);
    }

    /// Queue occupancy at `t`.
    pub fn on_queue(&mut self, t: f64, bytes: u64, packets: u64) {
        self.queue_bytes.add(t, bytes as f64);
        self.queue_pkts.add(t, packets as f64);
    }

    pub fn finish(&self, run_s: f64) -> LinkSummary {
        let tput = throughput_bps(self.bytes_forwarded, run_s);
        // Sojourn times have a true minimum of zero: report them as they are, not minus a min.
        let d = self.sojourn.rtt_stats_ms();
        let fwd = self.forwarded.throughput_series(run_s);
        let t: Vec<f64> = fwd.iter().map(|&(t, _)| t).collect();
        let width = self.forwarded.width_s();
        // Queue occupancy is sampled when it changes; an interval without a sample had the
        // previous interval's occupancy (zero before the first packet).
        let align = |g: &GaugeBinner| -> Vec<f64> {
            let mut out = vec![f64::NAN; t.len()];
            for b in g.series() {
                let k = (b.t / width).round() as usize;
                if k < out.len() {
                    out[k] = b.mean;
                }
            }
            let mut last = 0.0;
            for v in &mut out {
                if v.is_nan() {
                    *v = last;
                } else {
                    last = *v;
                }
            }
            out
        };
        let drops_by_reason = self
            .drops
            .rows()
            .into_iter()
            .map(|r| (r.reason, r.packets))
            .collect();
        LinkSummary {
            name: self.name.clone(),
            capacity_bps: self.capacity_bps,
            utilization: utilization(tput, self.capacity_bps, self.mtu),
            drops: self.drops.total(),
            queue_delay_ms: LinkDelay {
                mean: d.map_or(f64::NAN, |d| d.mean),
                p95: d.map_or(f64::NAN, |d| d.p95),
                p99: d.map_or(f64::NAN, |d| d.p99),
                p50: d.map(|d| d.p50),
                max: d.map(|d| d.max),
            },
            mtu: Some(self.mtu),
            delay_ms: None,
            distance_km: None,
            queue: None,
            drops_by_reason,
            packets_forwarded: Some(self.packets_forwarded),
            series: Some(LinkSeries {
                queue_bytes: align(&self.queue_bytes),
                queue_pkts: align(&self.queue_pkts),
                throughput_bps: fwd.iter().map(|&(_, v)| v).collect(),
                t,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: PathContext = PathContext {
        capacity_bps: 1e9,
        mtu: 1500,
        distance_km: 1000.0,
    };

    /// A flow delivering `bytes_per_tick` every 0.1 s for 3 s.
    fn steady(id: u32, bytes_per_tick: u64) -> FlowRecorder {
        let mut f = FlowRecorder::new(id, "fast", 0.1).unwrap();
        for k in 0..30 {
            let t = f64::from(k) * 0.1 + 0.05;
            f.on_sent(t, 100);
            f.on_delivered(t, bytes_per_tick);
            f.on_cwnd(t, 50.0 + f64::from(k));
        }
        f
    }

    #[test]
    fn flow_summary_from_events() {
        // 1,250,000 B per 0.1 s = 100 Mb/s.
        let mut f = steady(7, 1_250_000);
        for rtt in [0.100, 0.102, 0.110] {
            f.on_rtt(1.0, rtt);
        }
        f.on_drop("bottleneck", crate::loss::REASON_QUEUE_FULL, 15);
        f.on_retransmit(15);
        let s = f.finish(3.0, 3.0, &PATH);
        assert_eq!(s.id, 7);
        assert_eq!(s.bytes_delivered, Some(37_500_000));
        assert!((s.throughput_bps - 100e6).abs() < 1e-6);
        // 100 / (1000 × 1460/1500) = 0.102740.
        assert!((s.utilization - 0.102_739_726).abs() < 1e-8);
        assert!((s.bmps - 1e14).abs() < 1.0); // 100 Mb/s × 1,000 km
        assert!((s.min_rtt_ms - 100.0).abs() < 1e-9);
        assert!((s.queueing_delay_ms.mean - 4.0).abs() < 1e-6); // (0 + 2 + 10)/3
        assert!((s.queueing_delay_ms.p95 - 10.0).abs() < 110.0 / 2048.0);
        assert_eq!(s.loss_rate, 15.0 / 3000.0);
        assert_eq!(s.retransmits, 15);
        assert_eq!(s.cov, Some(0.0)); // constant 100 Mb/s in every second
        assert_eq!(s.drops.len(), 1);
        let series = s.series.unwrap();
        assert_eq!(series.t.len(), 30);
        assert!(series
            .throughput_bps
            .iter()
            .all(|&x| (x - 100e6).abs() < 1e-3));
        assert_eq!(series.cwnd_pkts[0], 50.0);
        assert_eq!(series.cwnd_pkts[29], 79.0);
        assert!(series.inflight_pkts.is_empty()); // never sampled
        assert_eq!((s.start_s, s.stop_s), (Some(0.05), Some(2.95)));
    }

    #[test]
    fn aggregate_of_two_unequal_flows() {
        let a = steady(1, 1_250_000); // 100 Mb/s
        let b = steady(2, 3_750_000); // 300 Mb/s
        let flows = [a.finish(3.0, 3.0, &PATH), b.finish(3.0, 3.0, &PATH)];
        let agg = aggregate(&[a, b], &flows, 3.0, &PATH);
        assert!((agg.throughput_bps - 400e6).abs() < 1e-6);
        // (100 + 300)² / (2 · (100² + 300²)) = 0.8.
        assert!((agg.jain - 0.8).abs() < 1e-12);
        assert_eq!(agg.cov, 0.0);
        assert!((agg.utilization - 400.0 / (1000.0 * 1460.0 / 1500.0)).abs() < 1e-12);
        let s = agg.series.unwrap();
        assert_eq!(s.t.len(), 30);
        assert!((s.throughput_bps[10] - 400e6).abs() < 1e-3);
    }

    #[test]
    fn aggregate_cov_over_one_second_intervals() {
        // 1 Gb/s in even seconds, 0.5 Gb/s in odd ones, over 4 s: μ = 750, σ = 250, CoV = 1/3.
        let mut f = FlowRecorder::new(1, "reno", 0.5).unwrap();
        for s in 0..4 {
            let bytes = if s % 2 == 0 { 125_000_000 } else { 62_500_000 };
            f.on_delivered(f64::from(s) + 0.5, bytes);
        }
        let flows = [f.finish(4.0, 4.0, &PATH)];
        assert!((flows[0].cov.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        let agg = aggregate(&[f], &flows, 4.0, &PATH);
        assert!((agg.cov - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(agg.jain, 1.0);
    }

    #[test]
    fn delay_precision_is_configurable() {
        let f = FlowRecorder::new(1, "fast", 0.1).unwrap();
        assert!(f.clone().with_delay_precision(0).is_err());
        let mut f = f.with_delay_precision(7).unwrap();
        for q in 0..100u32 {
            f.on_rtt(0.0, 0.180 + f64::from(q) * 1e-4);
        }
        let s = f.finish(1.0, 1.0, &PATH);
        // Exact p95 = 9.4 ms; bound = RTT / 2^8 = 0.19 / 256 s ≈ 0.74 ms.
        assert!((s.queueing_delay_ms.p95 - 9.4).abs() <= 190.0 / 256.0);
        assert!((s.queueing_delay_ms.mean - 4.95).abs() < 1e-6); // the mean stays exact
    }

    #[test]
    fn flow_cov_ignores_seconds_before_the_flow_started() {
        // Starts at t = 2 s, then a steady 100 Mb/s until 6 s: CoV 0, not inflated by zeros.
        let mut f = FlowRecorder::new(1, "fast", 0.1).unwrap();
        for k in 20..60 {
            f.on_delivered(f64::from(k) * 0.1, 1_250_000);
        }
        let s = f.finish(4.0, 6.0, &PATH);
        assert_eq!(s.cov, Some(0.0));
        assert!((s.throughput_bps - 100e6).abs() < 1e-6);
        // Over the whole run the per-second series is 0, 0, 100, 100, 100, 100 Mb/s.
        assert_eq!(f.per_second_bps(6.0)[..3], [0.0, 0.0, 100e6]);
    }

    #[test]
    fn link_summary_from_events() {
        let mut l = LinkRecorder::new("bottleneck", 1e9, 1500, 1.0).unwrap();
        // 100 packets over 2 s with sojourn 0..99 ms, 1460 B payload each.
        for i in 0..100u32 {
            l.on_forwarded(f64::from(i) * 0.02, 1460, f64::from(i) * 1e-3);
        }
        l.on_queue(0.5, 15_000, 10);
        l.on_drop(crate::loss::REASON_QUEUE_FULL, 3);
        l.on_drop(crate::loss::REASON_RANDOM, 1);
        let s = l.finish(2.0);
        assert_eq!(s.drops, 4);
        assert_eq!(s.drops_by_reason.get("queue_full"), Some(&3));
        assert!((s.queue_delay_ms.mean - 49.5).abs() < 1e-6);
        assert!((s.queue_delay_ms.p95 - 94.0).abs() <= 94.0 / 2048.0);
        // 146,000 B in 2 s = 584 kb/s of payload.
        assert!((s.utilization - 584_000.0 / (1e9 * 1460.0 / 1500.0)).abs() < 1e-12);
        let series = s.series.unwrap();
        assert_eq!(series.t, vec![0.0, 1.0]);
        assert_eq!(series.queue_pkts, vec![10.0, 10.0]); // carried forward
    }
}
