//! A small synthetic summary for documentation, tests and trying the report writer
//! (`example_summary()`): two FAST flows and a Reno flow sharing a 1 Gb/s, 85 ms path for 20 s,
//! assembled by the same functions every driver uses (crate::assemble). The dynamics are made up
//! (a FAST-like ramp to an equal share with a steady queue, a Reno sawtooth), not simulated: use
//! `longhaul sim` for results.

use crate::assemble::{aggregate, flow_summary, AggregateCounts, Bottleneck, Distance};
use crate::assemble::{FlowCounts, LossBasis};
use crate::delay::{min_rtt, queueing_delay_stats, DelayStats};
use crate::loss::{DropCount, REASON_QUEUE_FULL};
use crate::summary::{
    AggregateSeries, Claim, ClaimKind, FlowSeries, LinkDelay, LinkSeries, LinkSummary, Mode,
    PaperValue, Rule, Summary,
};
use crate::throughput::{throughput_bps, Capacity};

/// The example's run length, seconds.
pub const EXAMPLE_DURATION_S: f64 = 20.0;
/// Steps of the made-up dynamics, and the series' interval.
const STEP_S: f64 = 0.01;
const INTERVAL_S: f64 = 0.1;
const STEPS_PER_INTERVAL: usize = 10;
const STEPS_PER_SECOND: usize = 100;
const PAYLOAD: u64 = 1460;
const BASE_RTT_S: f64 = 0.085;
const DISTANCE_KM: f64 = 3_948.0;
const LINK: Capacity = Capacity {
    rate_bps: 1e9,
    mtu: 1500,
};

/// One flow's made-up run, step by step.
#[derive(Default)]
struct Trace {
    /// Payload bytes per step, and the RTT, cwnd and in-flight packets sampled at it (NaN before
    /// the flow starts).
    bytes: Vec<u64>,
    rtt_ms: Vec<f64>,
    cwnd: Vec<f64>,
    inflight: Vec<f64>,
}

impl Trace {
    /// Throughput per group of `n` steps, b/s.
    fn binned_bps(&self, n: usize) -> Vec<f64> {
        self.bytes
            .chunks(n)
            .map(|c| c.iter().sum::<u64>() as f64 * 8.0 / (n as f64 * STEP_S))
            .collect()
    }

    /// A gauge's last sample in each interval.
    fn last_per_interval(values: &[f64]) -> Vec<f64> {
        values
            .chunks(STEPS_PER_INTERVAL)
            .map(|c| c[c.len() - 1])
            .collect()
    }
}

/// Build the example summary (deterministic: the same value on every call).
pub fn example_summary() -> Summary {
    let steps = (EXAMPLE_DURATION_S / STEP_S) as usize;
    let mut traces: [Trace; 3] = Default::default();
    let mut queue_s = Vec::with_capacity(steps);
    for k in 0..steps {
        let t = k as f64 * STEP_S;
        // Target rates in b/s: FAST flows ramp over 2 s (the second starts at 2 s) to 320 Mb/s;
        // Reno saws between 150 and 300 Mb/s with a 5-s period.
        let fast1 = 320e6 * (t / 2.0).min(1.0);
        let fast2 = if t < 2.0 {
            0.0
        } else {
            320e6 * ((t - 2.0) / 2.0).min(1.0)
        };
        let reno = 150e6 + 150e6 * ((t % 5.0) / 5.0);
        let q = 0.002 + 0.003 * ((t % 5.0) / 5.0);
        queue_s.push(q);
        for (tr, rate) in traces.iter_mut().zip([fast1, fast2, reno]) {
            let on = rate > 0.0;
            let gauge = |v: f64| if on { v } else { f64::NAN };
            tr.bytes.push((rate * STEP_S / 8.0) as u64);
            tr.rtt_ms.push(gauge((BASE_RTT_S + q) * 1e3));
            tr.cwnd
                .push(gauge(rate * (BASE_RTT_S + q) / 8.0 / PAYLOAD as f64));
            tr.inflight
                .push(gauge(rate * BASE_RTT_S / 8.0 / PAYLOAD as f64));
        }
    }
    let intervals = steps / STEPS_PER_INTERVAL;
    let t: Vec<f64> = (0..intervals).map(|k| k as f64 * INTERVAL_S).collect();
    // Reno loses one packet at the top of each sawtooth (every 5 s).
    let reno_drops = (EXAMPLE_DURATION_S / 5.0) as u64;
    let flows: Vec<_> = traces
        .iter()
        .zip([(1, "fast"), (2, "fast"), (3, "reno")])
        .map(|(tr, (id, cc))| {
            let start_s = if id == 2 { 2.0 } else { 0.0 };
            let bytes: u64 = tr.bytes.iter().sum();
            let lost = if cc == "reno" { reno_drops } else { 0 };
            let first_second = start_s as usize;
            flow_summary(FlowCounts {
                id,
                cc: cc.into(),
                params: (id == 1).then(|| "alpha=200,gamma=0.5".into()),
                bytes_delivered: bytes,
                active_s: EXAMPLE_DURATION_S - start_s,
                start_s: Some(start_s),
                stop_s: Some(EXAMPLE_DURATION_S),
                capacity: Some(LINK),
                distance_km: Some(DISTANCE_KM),
                min_rtt_ms: min_rtt(&tr.rtt_ms).unwrap_or(f64::NAN),
                queueing_delay_ms: queueing_delay_stats(&tr.rtt_ms),
                packets_sent: Some(tr.bytes.iter().map(|b| b.div_ceil(PAYLOAD)).sum()),
                packets_lost: Some(lost),
                retransmits: lost,
                loss_basis: LossBasis::Drops,
                interval_bps: tr.binned_bps(STEPS_PER_SECOND)[first_second..].to_vec(),
                drops: (lost > 0)
                    .then(|| DropCount {
                        location: "bottleneck".into(),
                        reason: REASON_QUEUE_FULL.into(),
                        packets: lost,
                    })
                    .into_iter()
                    .collect(),
                series: Some(FlowSeries {
                    t: t.clone(),
                    throughput_bps: tr.binned_bps(STEPS_PER_INTERVAL),
                    cwnd_pkts: Trace::last_per_interval(&tr.cwnd),
                    rtt_ms: Trace::last_per_interval(&tr.rtt_ms),
                    inflight_pkts: Trace::last_per_interval(&tr.inflight),
                    ..FlowSeries::default()
                }),
            })
        })
        .collect();
    let per_step: Vec<u64> = (0..steps)
        .map(|k| traces.iter().map(|tr| tr.bytes[k]).sum())
        .collect();
    let total: u64 = per_step.iter().sum();
    let all = Trace {
        bytes: per_step,
        ..Trace::default()
    };
    let agg = aggregate(
        &flows,
        AggregateCounts {
            bytes_delivered: total,
            span_s: EXAMPLE_DURATION_S,
            interval_bps: all.binned_bps(STEPS_PER_SECOND),
            bottlenecks: vec![Bottleneck {
                name: None,
                capacity_bps: LINK.rate_bps,
                payload_bps: LINK.payload_bps(),
                bytes: total,
            }],
            distance: Distance::Common(Some(DISTANCE_KM)),
            series: Some(AggregateSeries {
                t: t.clone(),
                throughput_bps: all.binned_bps(STEPS_PER_INTERVAL),
            }),
        },
    );
    let sojourn_ms: Vec<f64> = queue_s.iter().map(|q| q * 1e3).collect();
    let d = DelayStats::of(&sojourn_ms).expect("every step has a queue");
    // The queue holds `queue_s` of the 1 Gb/s line rate.
    let queue_bytes: Vec<f64> = queue_s.iter().map(|q| q * LINK.rate_bps / 8.0).collect();
    let link = LinkSummary {
        name: "bottleneck".to_string(),
        capacity_bps: LINK.rate_bps,
        utilization: LINK.utilization(throughput_bps(total, EXAMPLE_DURATION_S)),
        drops: reno_drops,
        queue_delay_ms: LinkDelay::from(d),
        mtu: Some(LINK.mtu),
        delay_ms: Some(42.5),
        distance_km: Some(DISTANCE_KM),
        queue: Some("droptail 1000p".to_string()),
        drops_by_reason: [(REASON_QUEUE_FULL.to_string(), reno_drops)].into(),
        packets_forwarded: Some(flows.iter().filter_map(|f| f.packets_sent).sum()),
        series: Some(LinkSeries {
            queue_pkts: Trace::last_per_interval(&queue_bytes)
                .iter()
                .map(|b| (b / f64::from(LINK.mtu)).floor())
                .collect(),
            queue_bytes: Trace::last_per_interval(&queue_bytes),
            throughput_bps: agg
                .series
                .as_ref()
                .map_or(vec![], |s| s.throughput_bps.clone()),
            t,
        }),
    };
    let utilization = agg.utilization;
    Summary {
        scenario: "example-3flows".to_string(),
        mode: Mode::Sim,
        duration_s: EXAMPLE_DURATION_S,
        seed: 1,
        links: vec![link],
        flows,
        aggregate: agg,
        responsive_cross: Vec::new(),
        claims: vec![Claim {
            claim: "aggregate utilization".to_string(),
            paper: PaperValue::Text("88–95 %".to_string()),
            measured: utilization,
            holds: Rule::AtLeast { bound: 0.88 }.test(utilization),
            unit: Some("fraction".to_string()),
            source: Some("seed 000, Table 1".to_string()),
            kind: ClaimKind::Seed,
            rule: Some(Rule::AtLeast { bound: 0.88 }),
            tolerance: None,
            control: None,
        }],
        meta: [("generator".to_string(), "example".to_string())].into(),
        provenance: None,
    }
}
