//! The metrics oracle for a lab run's links: a deliberately simple reference that computes the
//! bottleneck's metrics straight from the emulator's event log (one line per packet event,
//! `t_ns dir event bytes queue_packets queue_bytes detail`), and the comparison with what lab's
//! pipeline reports for the same run (`queue_log::read_run` and `summary::links`, fed the
//! emulator's own counters and queue-delay histogram from its direction reports).
//!
//! The reference computes with none of lab's or the emulator's code: it splits lines, sums,
//! sorts and takes nearest ranks. It reads the `queue_packets`/`queue_bytes` columns only to
//! check them: the queue it rebuilds at every arrival from the accepted packets' departure times
//! (those not yet gone, less the one on the wire) must equal them exactly.
//!
//! Compared, per direction (data `a>b` as `NAME`, ACKs `b>a` as `NAME (reverse)`):
//! - drops by reason, the total, and the drop log kept by the pipeline: exact counts; each drop
//!   record's queue length is the rebuilt queue's, and a `queue_full` drop finds the queue at its
//!   packet limit;
//! - packets forwarded: exactly the `enqueue` lines;
//! - queueing delay (arrival to the last bit leaving: `depart=` − `t_ns` of each `enqueue` line):
//!   mean, p50, p95, p99 (nearest rank, ⌈p·N/100⌉) and max within the emulator's stated
//!   histogram resolution, 1/1024 of the exact value plus 1 ns (`longhaul_emu::forward::
//!   QueueDelay`); and each packet's delay measured from its actual delivery (the `deliver`
//!   line's release time, `t_ns` − `late=`, − the one-way delay − the arrival) equals it to
//!   within the coalescing window (a run of segments leaves with its last one);
//! - the queue series (mean queue seen by the arrivals of each interval, packets and bytes)
//!   within one packet (one MTU of bytes) per bin, and the accepted rate within one packet per
//!   bin; bins cover [k·Δ, min((k+1)·Δ, D)) of the experiment's clock, D the longer of the
//!   plan's duration and the run's span;
//! - utilization (IP bytes − 40 per accepted packet, × 8, ÷ the span, ÷ the payload capacity):
//!   to 1e-9 relative.
//!
//! Invariants of the pipeline's numbers: p50 ≤ p95 ≤ p99 ≤ max, min ≤ mean ≤ max (min the
//! reference's, less the resolution), utilization ≤ 1, a bin's mean queue ≤ the packet limit,
//! the bits accepted in a bin ≤ capacity × its width + the queue's limit + two packets (the one
//! on the wire and one straddling the bin's edge). And of
//! the log: the bits departing in a bin ≤ capacity × its width + one packet.

use longhaul_emu::forward::DirectionReport;
use longhaul_lab::queue_log::QueueLog;
use longhaul_lab::{LabPlan, RunClock};
use longhaul_metrics::summary::LinkSummary;
use std::collections::BTreeMap;

/// IP + TCP header bytes per packet that utilization leaves out (docs/measurements.md).
const HEADER_BYTES: u64 = 40;

/// A lab run's raw inputs and what the pipeline made of them.
pub struct Run<'a> {
    /// The plan the run was made from.
    pub plan: &'a LabPlan,
    /// Where the run lies on the log's clock.
    pub clock: RunClock,
    /// The emulator's event log, whole.
    pub log: &'a str,
    /// The emulator's coalescing window, ns (`meta.emu_coalesce_us`).
    pub coalesce_ns: u64,
    /// The emulator's reports of its two directions.
    pub directions: &'a [DirectionReport],
    /// The pipeline's links (`NAME`, `NAME (reverse)`).
    pub links: &'a [LinkSummary],
    /// The pipeline's queue logs of a>b and b>a.
    pub queue_logs: [&'a QueueLog; 2],
}

/// What one direction's reference found, for the test's output.
#[derive(Debug)]
pub struct Found {
    /// `a>b` or `b>a`.
    pub dir: &'static str,
    /// Packets accepted into the queue.
    pub accepted: usize,
    /// Drops by reason.
    pub drops: BTreeMap<String, u64>,
    /// Exact queueing delay: mean, p50, p95, p99, max, ms.
    pub delay_ms: [f64; 5],
    /// Largest difference of a bin's mean queue from the pipeline's, packets.
    pub worst_queue_bin_pkts: f64,
    /// Largest difference of a bin's accepted rate from the pipeline's, b/s.
    pub worst_rate_bin_bps: f64,
    /// Utilization.
    pub utilization: f64,
}

impl Found {
    /// One line for the test's output.
    pub fn line(&self) -> String {
        let [mean, p50, p95, p99, max] = self.delay_ms;
        format!(
            "{}: {} accepted, drops {:?}, queueing delay mean {mean:.3} p50 {p50:.3} p95 {p95:.3} \
             p99 {p99:.3} max {max:.3} ms, utilization {:.4}; largest bin difference {:.3} \
             packets of queue, {:.0} b/s of accepted rate",
            self.dir,
            self.accepted,
            self.drops,
            self.utilization,
            self.worst_queue_bin_pkts,
            self.worst_rate_bin_bps
        )
    }
}

/// One accepted packet: arrival, departure (last bit out), IP bytes.
#[derive(Clone, Copy)]
struct Accepted {
    t: u64,
    depart: u64,
    bytes: u64,
}

/// One arrival that was decided (accepted or dropped), with the queue the reference rebuilt
/// right after the decision and the one the log's columns say.
struct Decision {
    t: u64,
    queue_pkts: u64,
    queue_bytes: u64,
    logged_pkts: u64,
    logged_bytes: u64,
    accepted_bytes: u64,
    drop_reason: Option<String>,
}

/// The value of `key=` in a line's detail fields.
fn detail(fields: &[&str], key: &str) -> Option<u64> {
    fields[6..]
        .iter()
        .find_map(|f| f.strip_prefix(key))
        .map(|v| v.parse().expect("a number after the key"))
}

/// Nearest rank (1-based) of percentile `p` (integer, 0–100) among `n` values.
fn rank(p: u64, n: usize) -> usize {
    ((p * n as u64).div_ceil(100) as usize).clamp(1, n)
}

/// Checks one direction; `k` is 0 for a>b, 1 for b>a.
fn direction(run: &Run, k: usize) -> Found {
    let plan = run.plan;
    let (dir, cfg, capacity_bps) = if k == 0 {
        ("a>b", &plan.emulator.a_to_b, plan.capacity_bps)
    } else {
        ("b>a", &plan.emulator.b_to_a, plan.reverse_capacity_bps)
    };
    let link = &run.links[k];
    let qlog = run.queue_logs[k];
    let report = run
        .directions
        .iter()
        .find(|d| d.direction == dir)
        .expect("both directions reported");
    let mtu = u64::from(plan.mtu);
    let delay_ns = cfg.delay.delay_ns;
    // The pairing of deliveries with arrivals below assumes first in, first out: one delay for
    // every packet, none duplicated, reordered or lost after the queue.
    assert!(
        cfg.port_delays.is_empty() && cfg.delay.jitter_ns == 0,
        "{dir}: the reference assumes one delay for all"
    );
    assert_eq!(cfg.overhead_bytes, 0, "{dir}: wire bytes are IP bytes");
    assert!(cfg.cross.is_empty(), "{dir}: no cross traffic");
    let c = &report.counters;
    assert_eq!(
        (
            c.duplicated_packets,
            c.reordered_packets,
            report.io.dropped_memory
        ),
        (0, 0, 0),
        "{dir}"
    );

    // 1. The lines of this direction, in log order.
    let mut accepted: Vec<Accepted> = Vec::new();
    let mut decisions: Vec<Decision> = Vec::new();
    let mut released: Vec<u64> = Vec::new();
    let mut drops: BTreeMap<String, u64> = BTreeMap::new();
    for line in run.log.lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f[1] != dir {
            continue;
        }
        let t: u64 = f[0].parse().unwrap();
        let bytes: u64 = f[3].parse().unwrap();
        match f[2] {
            "arrive" => continue,
            "deliver" => {
                // Released at t − late; a run of segments is one line.
                let at = t - detail(&f, "late=").unwrap();
                let segments = detail(&f, "segments=").unwrap_or(1);
                released.extend(std::iter::repeat_n(at, segments as usize));
                continue;
            }
            "enqueue" => {
                let depart = detail(&f, "depart=").unwrap();
                if let Some(last) = accepted.last() {
                    assert!(last.depart <= depart, "{dir}: departures out of order");
                }
                accepted.push(Accepted { t, depart, bytes });
            }
            "drop" => *drops.entry(f[6].to_string()).or_default() += 1,
            other => panic!("unknown event {other}"),
        }
        // The queue right after the decision: accepted packets whose last bit is still to
        // leave (departures are in order, so they are the newest ones), less the oldest of
        // them, the one on the wire: the log counts what waits.
        let (mut qp, mut qb, mut on_wire) = (0u64, 0, 0);
        for a in accepted.iter().rev() {
            if a.depart <= t {
                break;
            }
            qp += 1;
            qb += a.bytes;
            on_wire = a.bytes;
        }
        let (qp, qb) = (qp.saturating_sub(1), qb - on_wire);
        let accepted_now = f[2] == "enqueue";
        decisions.push(Decision {
            t,
            queue_pkts: qp,
            queue_bytes: qb,
            logged_pkts: f[4].parse().unwrap(),
            logged_bytes: f[5].parse().unwrap(),
            accepted_bytes: if accepted_now { bytes } else { 0 },
            drop_reason: (!accepted_now).then(|| f[6].to_string()),
        });
    }

    // The experiment's clock: bins cover [k·Δ, min((k+1)·Δ, D)) from its start.
    let epoch = run.clock.epoch_ns;
    let interval_ns = plan.interval.as_nanos() as u64;
    let horizon_ns = (plan.duration.as_secs_f64().max(run.clock.span_s) * 1e9).round() as u64;
    let bins = horizon_ns.div_ceil(interval_ns) as usize;
    let bin_of = |t: u64| -> Option<usize> {
        let rel = t.checked_sub(epoch)?;
        (rel < horizon_ns).then_some((rel / interval_ns) as usize)
    };

    // 2. Drops: by reason and in total over the emulator's life (its counters); those on the
    // experiment's clock one for one in the pipeline's drop log.
    let total_drops: u64 = drops.values().sum();
    assert_eq!(link.drops_by_reason, drops, "{dir}: drops by reason");
    assert_eq!(link.drops, total_drops, "{dir}: drops");
    let dropped: Vec<&Decision> = decisions
        .iter()
        .filter(|d| d.drop_reason.is_some() && bin_of(d.t).is_some())
        .collect();
    assert_eq!(
        qlog.drops.len() as u64 + qlog.drops_unlogged,
        dropped.len() as u64,
        "{dir}: drop log"
    );
    for (rec, d) in qlog.drops.iter().zip(&dropped) {
        assert_eq!(Some(&rec.reason), d.drop_reason.as_ref(), "{dir}");
        assert_eq!(rec.queue_packets, d.queue_pkts, "{dir}: queue at a drop");
        let want_s = (d.t - epoch) as f64 / 1e9;
        assert!((rec.time_s - want_s).abs() < 1e-9, "{dir}: drop time");
    }
    if let Some(limit) = cfg.queue.packets {
        for d in decisions.iter().filter(|d| d.drop_reason.is_some()) {
            if d.drop_reason.as_deref() == Some("queue_full") {
                assert_eq!(d.queue_pkts, limit, "{dir}: full at t {}", d.t);
            }
        }
    }
    // The rebuilt queue is the one the log's columns report.
    for d in &decisions {
        assert_eq!(
            (d.queue_pkts, d.queue_bytes),
            (d.logged_pkts, d.logged_bytes),
            "{dir}: queue at t {}",
            d.t
        );
    }
    assert_eq!(
        link.packets_forwarded,
        Some(accepted.len() as u64),
        "{dir}: packets forwarded"
    );

    // 3. Queueing delay: exact values, and the pipeline within the histogram's resolution.
    let mut sojourn: Vec<u64> = accepted.iter().map(|a| a.depart - a.t).collect();
    sojourn.sort_unstable();
    let n = sojourn.len();
    assert!(n > 0, "{dir}: nothing accepted");
    let ms = |ns: f64| ns / 1e6;
    let exact = [
        ms(sojourn.iter().sum::<u64>() as f64 / n as f64),
        ms(sojourn[rank(50, n) - 1] as f64),
        ms(sojourn[rank(95, n) - 1] as f64),
        ms(sojourn[rank(99, n) - 1] as f64),
        ms(sojourn[n - 1] as f64),
    ];
    let q = &link.queue_delay_ms;
    let got = [q.mean, q.p50.unwrap(), q.p95, q.p99, q.max.unwrap()];
    for ((name, g), e) in ["mean", "p50", "p95", "p99", "max"]
        .iter()
        .zip(got)
        .zip(exact)
    {
        let tol = e / 1024.0 + 1e-6;
        assert!(
            (g - e).abs() <= tol,
            "{dir} queue delay {name}: pipeline {g} ms, reference {e} ms (±{tol})"
        );
    }
    // The same delay from the deliveries: the k-th wire packet released is the k-th accepted
    // (first in, first out); what was still in flight when the emulator stopped is not.
    assert_eq!(
        released.len() as u64 + report.io.in_flight_at_exit,
        accepted.len() as u64,
        "{dir}: every accepted packet delivered or in flight at the end"
    );
    for (a, &at) in accepted.iter().zip(&released) {
        let via_delivery = at as i128 - delay_ns as i128 - a.t as i128;
        let wait = via_delivery - (a.depart - a.t) as i128;
        assert!(
            (0..=run.coalesce_ns as i128).contains(&wait),
            "{dir}: packet arriving at {} released {wait} ns after its departure + delay",
            a.t
        );
    }

    // 4. Series.
    let mut arrivals = vec![0u64; bins];
    let mut sum_pkts = vec![0u64; bins];
    let mut sum_bytes = vec![0u64; bins];
    let mut accepted_bytes = vec![0u64; bins];
    let mut departed_bytes = vec![0u64; bins];
    for d in &decisions {
        if let Some(b) = bin_of(d.t) {
            arrivals[b] += 1;
            sum_pkts[b] += d.queue_pkts;
            sum_bytes[b] += d.queue_bytes;
            accepted_bytes[b] += d.accepted_bytes;
        }
    }
    for a in &accepted {
        if let Some(b) = bin_of(a.depart) {
            departed_bytes[b] += a.bytes;
        }
    }
    let s = link.series.as_ref().expect("a link series");
    assert_eq!(s.t.len(), bins, "{dir}: bins");
    let (mut worst_q, mut worst_r) = (0.0f64, 0.0f64);
    for b in 0..bins {
        let width_ns = interval_ns.min(horizon_ns - b as u64 * interval_ns);
        let width_s = width_ns as f64 / 1e9;
        let n = arrivals[b].max(1) as f64;
        let one_packet_bps = (mtu * 8) as f64 / width_s;
        assert!((s.t[b] - (b as u64 * interval_ns) as f64 / 1e9).abs() < 1e-9);
        let want_q = sum_pkts[b] as f64 / n;
        assert!(
            (s.queue_pkts[b] - want_q).abs() <= 1.0,
            "{dir} bin {b}: queue {} vs {want_q} packets",
            s.queue_pkts[b]
        );
        worst_q = worst_q.max((s.queue_pkts[b] - want_q).abs());
        let want_qb = sum_bytes[b] as f64 / n;
        assert!(
            (s.queue_bytes[b] - want_qb).abs() <= mtu as f64,
            "{dir} bin {b}: queue {} vs {want_qb} bytes",
            s.queue_bytes[b]
        );
        let want_r = accepted_bytes[b] as f64 * 8.0 / width_s;
        assert!(
            (s.throughput_bps[b] - want_r).abs() <= one_packet_bps,
            "{dir} bin {b}: accepted {} vs {want_r} b/s",
            s.throughput_bps[b]
        );
        worst_r = worst_r.max((s.throughput_bps[b] - want_r).abs());
        // Invariants: the link sends no faster than its capacity (one packet may straddle the
        // bin's edge); what it accepts leaves or stays in the queue, which holds `limit`
        // packets waiting and one on the wire: accepted ≤ capacity + one straddling packet +
        // (limit + 1) packets.
        let capacity_bits = capacity_bps * width_s;
        assert!(
            departed_bytes[b] as f64 * 8.0 <= capacity_bits + (mtu * 8) as f64,
            "{dir} bin {b}: {} bits departed, capacity {capacity_bits}",
            departed_bytes[b] * 8
        );
        if let Some(limit) = cfg.queue.packets {
            let room_bits = ((limit + 2) * mtu * 8) as f64;
            assert!(
                s.throughput_bps[b] * width_s <= capacity_bits + room_bits,
                "{dir} bin {b}: accepted {} b/s",
                s.throughput_bps[b]
            );
            assert!(s.queue_pkts[b] <= limit as f64, "{dir} bin {b}");
        }
    }

    // 5. Utilization: the accepted packets' payload over the span, ÷ the payload capacity.
    let payload_bits: u64 = accepted.iter().map(|a| (a.bytes - HEADER_BYTES) * 8).sum();
    let payload_capacity = capacity_bps * (mtu - HEADER_BYTES) as f64 / mtu as f64;
    let utilization = payload_bits as f64 / run.clock.span_s / payload_capacity;
    assert!(
        (link.utilization - utilization).abs() <= 1e-9 * utilization.max(1e-9),
        "{dir}: utilization {} vs {utilization}",
        link.utilization
    );

    // Invariants of the pipeline's numbers.
    let [mean, p50, p95, p99, max] = got;
    assert!(
        p50 <= p95 && p95 <= p99 && p99 <= max,
        "{dir}: percentiles out of order {q:?}"
    );
    let min = ms(sojourn[0] as f64);
    assert!(
        min * (1.0 - 1.0 / 1024.0) <= mean && mean <= max,
        "{dir}: mean {mean} outside [{min}, {max}]"
    );
    assert!(
        link.utilization <= 1.0,
        "{dir}: utilization {}",
        link.utilization
    );

    Found {
        dir,
        accepted: accepted.len(),
        drops,
        delay_ms: exact,
        worst_queue_bin_pkts: worst_q,
        worst_rate_bin_bps: worst_r,
        utilization,
    }
}

/// Holds both directions of the run to the reference; panics on the first disagreement.
pub fn check(run: &Run) -> [Found; 2] {
    assert_eq!(run.links.len(), 2, "a data and a reverse link");
    [direction(run, 0), direction(run, 1)]
}
