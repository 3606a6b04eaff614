//! A lab run as the result summary `sim` writes (mode `lab`), so `longhaul compare` puts the two
//! side by side.
//!
//! Per flow (from `longhaul perf`'s measurement, `longhaul_perf::perf::stream_counts`):
//! * throughput = bytes the receiver got × 8 ÷ the flow's measured duration (its test start to
//!   the receiver's confirmation that the last byte arrived, so the final drain is included);
//! * min RTT = the smaller of the kernel's `tcpi_min_rtt` and the sampled smoothed RTTs; queueing
//!   delay = the smoothed RTT sampled every 100 ms while sending − min RTT (mean, p50, p95, p99,
//!   max). The smoothed RTT is an EWMA and smooths sub-RTT spikes;
//! * loss rate = retransmitted ÷ sent segments (the kernel's view), retransmits from `TCP_INFO`;
//! * series (cwnd, RTT, throughput, in flight) every `output.interval`, on the experiment's clock;
//!   throughput counts the data delivered to the receiver in each interval (`tcpi_delivered` ×
//!   MSS sampled on the report timer, `longhaul_perf::perf::interval_bytes`), not the bytes
//!   handed to `write()`, which arrive in bursts as the send buffer drains and alias the 100-ms
//!   series (0 to 300 Mb/s on a 100 Mb/s link);
//! * `cc` is the algorithm's name (the registered `lab<pid>_<k>` name is in `meta`);

//! * what held the sender back (`meta` `flowN_sender_limits`: the kernel's busy, rwnd- and
//!   sndbuf-limited times, and the share of samples whose window went unfilled;
//!   `longhaul_perf::perf::sender_limits`).
//!
//! Aggregate: all flows' bytes over the span from the experiment's start to the last flow's end;
//! Jain's index over the flows' throughputs; CoV of the aggregate's 1-s throughput.
//!
//! Responsive cross traffic (`responsive_cross`, as the simulator reports it): per entry, the
//! transfers begun and completed and the payload delivered (`crate::responsive`), over the
//! entry's active time. Its transfers are not flows: the aggregate leaves them out, as the
//! simulator's does, and the links' utilization counts their packets with everyone else's.
//!
//! Links (the bottleneck's data direction, and its reverse as `NAME (reverse)`, as the simulator
//! reports them; from the emulator): drops by reason, the queueing delay
//! every delivered packet spent from arrival to its last bit leaving (sojourn incl. its own
//! serialisation, as the simulator measures; mean, p50, p95, p99 and max from the emulator's
//! histogram, each within 1/1024 of the exact value), the queue and accepted-rate series from
//! the event log, and utilization = payload (IP bytes − 40 per packet) of our packets over the
//! span plus the cross traffic's payload over the emulator's lifetime, ÷ the payload capacity.
//! [`links`] computes them from the emulator's reports, the queue logs and the span alone, so a
//! recorded run's link metrics can be rebuilt (`crates/lab/tests/oracle.rs` holds them to a
//! reference computed from the raw event log).

use crate::plan::LabPlan;
use crate::queue_log::QueueLog;
use crate::run::RawOutcome;
use longhaul_emu::forward::DirectionReport;
use longhaul_metrics::assemble::{aggregate, flow_summary, AggregateCounts, Bottleneck, Distance};
use longhaul_metrics::delay::DelayStats;
use longhaul_metrics::summary::{
    AggregateSeries, LinkDelay, LinkSeries, LinkSummary, Mode, ResponsiveCross, Summary,
};
use longhaul_metrics::throughput::Capacity;
use longhaul_metrics::units::TCP_IP_HEADER_BYTES;
use longhaul_perf::perf::{interval_bytes, stream_counts, PathFacts, SenderLimits, SERIES_BASIS};
use std::collections::BTreeMap;

/// The bottleneck's data-direction capacity.
fn capacity(plan: &LabPlan) -> Capacity {
    Capacity {
        rate_bps: plan.capacity_bps,
        mtu: plan.mtu,
    }
}

/// Builds the summary of a finished run.
pub fn build(plan: &LabPlan, raw: &RawOutcome) -> Summary {
    let facts = PathFacts {
        distance_km: Some(plan.distance_km),
        capacity_bps: Some(plan.capacity_bps),
        mtu: Some(plan.mtu),
    };
    let mut flows = Vec::new();
    // 1-s bins of all flows' bytes on the experiment clock, for the aggregate series and CoV.
    let bins = plan.duration.as_secs_f64().ceil().max(1.0) as usize;
    let mut agg_bytes = vec![0.0f64; bins];
    for (f, fr) in plan.flows.iter().zip(&raw.flows) {
        let mut c = stream_counts(&fr.run, 0, &facts);
        c.id = f.id;
        c.cc = f.cc.clone();
        c.params = (!f.params.is_empty()).then(|| f.params.join(","));
        c.start_s = Some(fr.started_s);
        c.stop_s = Some(fr.started_s + fr.run.duration_s);
        // Queueing delay from the 100-ms RTT samples (finer than the report intervals).
        let rtts: Vec<f64> = fr.run.rtt_samples_ms[0]
            .iter()
            .copied()
            .filter(|r| *r > 0.0)
            .collect();
        if let Some(m) = longhaul_metrics::delay::min_rtt(&rtts) {
            let min_rtt = c.min_rtt_ms.min(m);
            c.min_rtt_ms = min_rtt;
            let qd: Vec<f64> = rtts.iter().map(|r| r - min_rtt).collect();
            if let Some(q) = DelayStats::of(&qd) {
                c.queueing_delay_ms = Some(q);
            }
        }
        if let Some(series) = c.series.as_mut() {
            for t in series.t.iter_mut() {
                *t += fr.started_s;
            }
        }
        // Binned by delivery, as the flow's own series (longhaul_perf's SERIES_BASIS).
        let per_stream: Vec<Vec<f64>> = (0..fr.run.streams.len())
            .map(|s| interval_bytes(&fr.run, s))
            .collect();
        for (k, i) in fr.run.intervals.iter().enumerate() {
            let b = ((fr.started_s + i.start_s).max(0.0)) as usize;
            if b < bins {
                agg_bytes[b] += per_stream.iter().map(|v| v[k]).sum::<f64>();
            }
        }
        flows.push(flow_summary(c));
    }

    let total: u64 = raw.flows.iter().map(|f| f.run.total_bytes()).sum();
    let agg_series: Vec<f64> = agg_bytes.iter().map(|b| b * 8.0).collect();
    // Full seconds only (the last may be partial).
    let full = (plan.duration.as_secs_f64().floor() as usize).min(bins);
    let link = capacity(plan);
    let aggregate = aggregate(
        &flows,
        AggregateCounts {
            bytes_delivered: total,
            span_s: raw.span_s.max(1e-9),
            interval_bps: agg_series[..full].to_vec(),
            bottlenecks: vec![Bottleneck {
                name: Some(plan.link_name.clone()),
                capacity_bps: link.rate_bps,
                payload_bps: link.payload_bps(),
                bytes: total,
            }],
            distance: Distance::Common(Some(plan.distance_km)),
            series: Some(AggregateSeries {
                t: (0..bins).map(|b| b as f64).collect(),
                throughput_bps: agg_series,
            }),
        },
    );

    let links = links(
        plan,
        &raw.emulator.directions,
        &raw.forward_log,
        &raw.reverse_log,
        raw.span_s,
    );
    let mut meta = BTreeMap::new();
    meta.insert(
        "transport".into(),
        "Linux kernel TCP (longhaul perf) over longhaul emu".into(),
    );
    meta.insert("throughput_series".into(), SERIES_BASIS.into());
    let registered: Vec<String> = (plan.flows.iter().zip(&raw.flows))
        .map(|(f, r)| format!("{}={}", f.id, r.registered_cc))
        .chain(
            (plan.responsive.iter().zip(&raw.responsive))
                .map(|(c, r)| format!("cross{}={}", c.index, r.registered_cc)),
        )
        .collect();
    meta.insert("registered_cc".into(), registered.join(" "));
    meta.insert(
        "socket_buffer_max".into(),
        raw.socket_buffer_max.to_string(),
    );
    let e = &raw.emulator;
    meta.insert(
        "emu_timer_wakeup_latency_us".into(),
        format!("{:.1}", e.timer_wakeup_latency_ns as f64 / 1e3),
    );
    meta.insert(
        "emu_coalesce_us".into(),
        format!("{:.1}", raw.coalesce_ns as f64 / 1e3),
    );
    meta.insert(
        "emu_tun_tx_dropped".into(),
        format!("a={} b={}", e.tun_tx_dropped[0], e.tun_tx_dropped[1]),
    );
    meta.insert(
        "emu_tun_rx_dropped".into(),
        format!("a={} b={}", e.tun_rx_dropped[0], e.tun_rx_dropped[1]),
    );
    for d in &e.directions {
        let tag = d.direction.replace('>', "_to_");
        meta.insert(
            format!("emu_{tag}_lateness_us"),
            format!(
                "p50={:.1} p99={:.1} p999={:.1} max={:.1}",
                d.lateness.p50_ns as f64 / 1e3,
                d.lateness.p99_ns as f64 / 1e3,
                d.lateness.p999_ns as f64 / 1e3,
                d.lateness.max_ns as f64 / 1e3
            ),
        );
        meta.insert(
            format!("emu_{tag}_io"),
            format!(
                "dropped_memory={} read_errors={} write_errors={}",
                d.io.dropped_memory, d.io.read_errors, d.io.write_errors
            ),
        );
    }
    for (f, r) in plan.flows.iter().zip(&raw.flows) {
        if let Some(l) = SenderLimits::of(&r.run, 0) {
            meta.insert(format!("flow{}_sender_limits", f.id), l.render());
        }
    }
    if !raw.sender_counters.is_empty() {
        meta.insert(
            "sender_tcp_counters".into(),
            crate::stack_counters::render(&raw.sender_counters),
        );
    }
    if let Some(silences) = &raw.silences {
        meta.insert("offered_load_silences".into(), silences.render());
    }
    if raw.forward_log.drops_unlogged > 0 {
        meta.insert(
            "drops_unlogged".into(),
            raw.forward_log.drops_unlogged.to_string(),
        );
    }
    if !raw.sysctls.is_empty() {
        meta.insert("sysctl".into(), crate::Sysctl::join(&raw.sysctls));
    }
    for (k, n) in raw.notes.iter().enumerate() {
        meta.insert(format!("note_{k}"), n.clone());
    }
    let responsive_cross = responsive_cross(plan, raw);
    Summary {
        scenario: plan.name.clone(),
        mode: Mode::Lab,
        duration_s: plan.duration.as_secs_f64(),
        seed: plan.seed,
        links,
        flows,
        aggregate,
        responsive_cross,
        claims: Vec::new(),
        meta,
        provenance: None,
    }
}

/// Each responsive cross-traffic entry as the simulator reports it: transfers begun and
/// completed, payload delivered, and that payload over the entry's active time (`start` to
/// `stop`).
fn responsive_cross(plan: &LabPlan, raw: &RawOutcome) -> Vec<ResponsiveCross> {
    (plan.responsive.iter().zip(&raw.responsive))
        .map(|(c, r)| ResponsiveCross {
            index: c.index as u32,
            kind: c.kind.to_string(),
            link: c.link.clone(),
            cc: c.cc.clone(),
            transfers: r.transfers,
            completed: r.completed,
            bytes_delivered: r.bytes_delivered,
            rate_bps: r.bytes_delivered as f64 * 8.0 / (c.stop - c.start).as_secs_f64(),
        })
        .collect()
}

/// The bottleneck's two directions, named as the simulator names the two queues of a duplex
/// link (`NAME` for the data direction a>b, `NAME (reverse)` for b>a), from the emulator's
/// reports of its directions (`emulator.json`'s `directions`), the two directions' queue logs
/// (`queue_log::read_run`) and the run's span (seconds from the experiment's start to the last
/// flow's end). [`build`] takes the links from here; so can a test that rebuilds a recorded
/// run's link metrics from its raw inputs.
///
/// Panics if `directions` lacks `a>b` or `b>a` (the emulator always reports both).
pub fn links(
    plan: &LabPlan,
    directions: &[DirectionReport],
    forward_log: &QueueLog,
    reverse_log: &QueueLog,
    span_s: f64,
) -> Vec<LinkSummary> {
    let direction = |name: &str| {
        directions
            .iter()
            .find(|d| d.direction == name)
            .expect("the emulator reports both directions")
    };
    vec![
        link_summary(
            plan,
            direction("a>b"),
            forward_log,
            span_s,
            plan.link_name.clone(),
            plan.capacity_bps,
        ),
        link_summary(
            plan,
            direction("b>a"),
            reverse_log,
            span_s,
            format!("{} (reverse)", plan.link_name),
            plan.reverse_capacity_bps,
        ),
    ]
}

/// One direction of the bottleneck, its utilization against its own capacity (`capacity_bps`:
/// the reverse direction may be slower than the forward one).
fn link_summary(
    plan: &LabPlan,
    d: &DirectionReport,
    log: &QueueLog,
    span_s: f64,
    name: String,
    capacity_bps: f64,
) -> LinkSummary {
    let c = &d.counters;
    let header = f64::from(TCP_IP_HEADER_BYTES);
    let payload = |bytes: f64, packets: f64| (bytes - header * packets).max(0.0) * 8.0;
    let ours = payload(c.delivered_bytes as f64, c.delivered_packets as f64) / span_s.max(1e-9);
    let cross_delivered = c.cross_packets.saturating_sub(c.cross_dropped) as f64;
    let cross_frac = if c.cross_packets > 0 {
        cross_delivered / c.cross_packets as f64
    } else {
        0.0
    };
    let cross = payload(c.cross_bytes as f64 * cross_frac, cross_delivered) / d.elapsed_s.max(1e-9);
    let mut by_reason = BTreeMap::new();
    for (k, v) in [
        ("queue_full", c.dropped_queue_full),
        ("random_loss", c.dropped_random_loss),
        ("red_early", c.dropped_red_early),
        ("red_forced", c.dropped_red_forced),
    ] {
        if v > 0 {
            by_reason.insert(k.to_string(), v);
        }
    }
    if c.cross_dropped > 0 {
        by_reason.insert("cross_traffic".into(), c.cross_dropped);
    }
    let q = &d.queue_delay_ms;
    LinkSummary {
        name,
        capacity_bps,
        utilization: Capacity {
            rate_bps: capacity_bps,
            mtu: plan.mtu,
        }
        .utilization(ours + cross),
        drops: c.dropped_packets() + c.cross_dropped,
        queue_delay_ms: LinkDelay {
            mean: q.mean,
            p95: q.p95,
            p99: q.p99,
            p50: Some(q.p50),
            max: Some(q.max),
        },
        mtu: Some(plan.mtu),
        delay_ms: Some(plan.one_way_delay.as_secs_f64() * 1e3),
        distance_km: Some(plan.distance_km),
        queue: Some(plan.queue.clone()),
        drops_by_reason: by_reason,
        packets_forwarded: Some(c.delivered_packets),
        series: Some(LinkSeries {
            t: log.t.clone(),
            queue_bytes: log.queue_bytes.clone(),
            queue_pkts: log.queue_pkts.clone(),
            throughput_bps: log.throughput_bps.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A direction that delivered `packets` packets of `mtu` bytes in one second.
    fn delivered(name: &str, packets: u64, mtu: u32) -> DirectionReport {
        let mut d = DirectionReport {
            direction: name.into(),
            counters: Default::default(),
            io: Default::default(),
            lateness: Default::default(),
            queue_delay_ms: Default::default(),
            elapsed_s: 1.0,
            throughput_bps: 0.0,
            capacity_bps: None,
            utilization: 0.0,
        };
        d.counters.delivered_packets = packets;
        d.counters.delivered_bytes = packets * u64::from(mtu);
        d
    }

    #[test]
    fn each_direction_is_judged_against_its_own_capacity() {
        let b = crate::builtin::find("short").unwrap();
        let plan = crate::plan_from_text(b.text, b.path, b.name, &[]).unwrap();
        let log = QueueLog::default();
        // The same load on the 100 Mb/s forward link and on a 10 Mb/s reverse one: 1/10 of
        // the forward payload capacity is all of the reverse's.
        let fwd_payload_pps = plan.capacity_bps / (8.0 * f64::from(plan.mtu));
        let packets = (fwd_payload_pps / 10.0).round() as u64;
        let fwd = link_summary(
            &plan,
            &delivered("a>b", packets, plan.mtu),
            &log,
            1.0,
            "path".into(),
            plan.capacity_bps,
        );
        let rev = link_summary(
            &plan,
            &delivered("b>a", packets, plan.mtu),
            &log,
            1.0,
            "path (reverse)".into(),
            plan.capacity_bps / 10.0,
        );
        assert!((fwd.utilization - 0.1).abs() < 0.002, "{}", fwd.utilization);
        assert!((rev.utilization - 1.0).abs() < 0.02, "{}", rev.utilization);
        assert_eq!(rev.capacity_bps, plan.capacity_bps / 10.0);
    }
}
