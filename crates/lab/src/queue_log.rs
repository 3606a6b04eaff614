//! The emulator's event log, read back into the queue series and the drop log of the bottleneck.
//!
//! The emulator writes one line per event (`longhaul_emu::observe::EventLog`):
//! `t_ns dir event bytes queue_packets queue_bytes detail`, where `t_ns` is the monotonic clock,
//! `event` is `arrive`, `enqueue`, `drop` or `deliver`, and the queue columns are the packets
//! and bytes waiting in the bottleneck queue (behind the one on the wire, as the simulator's
//! queue series count them) right after the arrival was decided. Every wire packet arriving at the bottleneck (each
//! segment of a TCP super-packet too) produces exactly one `enqueue` or `drop` line; this module
//! keeps those of one direction.
//!
//! Series (per interval of `output.interval`): the queue seen by arriving packets, averaged over
//! the interval's arrivals (what a packet experiences — arrivals see time averages for Poisson
//! traffic, and TCP's arrivals are what matters for its delay); and the bytes admitted to the
//! queue × 8 ÷ interval, the link's offered-and-accepted rate. An interval without arrivals has an
//! empty queue and no throughput.

use crate::plan::LabPlan;
use std::io::{BufRead, BufReader, Read};

/// One drop at the bottleneck.
#[derive(Debug, Clone, PartialEq)]
pub struct DropRecord {
    /// Seconds since the experiment's start.
    pub time_s: f64,
    /// The dropped packet's size.
    pub bytes: u32,
    /// Packets in the queue when it was dropped.
    pub queue_packets: u64,
    /// `queue_full`, `random_loss`, `red_early`, `red_forced`.
    pub reason: String,
}

/// What the log says about one direction of the bottleneck.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueLog {
    /// Each bin's start, seconds since the experiment's start.
    pub t: Vec<f64>,
    /// Mean queue length in packets over the bin's enqueue and drop events.
    pub queue_pkts: Vec<f64>,
    /// Mean queue length in bytes over the same events.
    pub queue_bytes: Vec<f64>,
    /// Bytes admitted to the queue per second of the bin, in bits per second.
    pub throughput_bps: Vec<f64>,
    /// The drops kept, at most the drop log's limit.
    pub drops: Vec<DropRecord>,
    /// Drops counted but not kept (beyond the limit).
    pub drops_unlogged: u64,
    /// Lines that did not parse (a truncated last line after a crash, a full disk).
    pub malformed_lines: u64,
}

/// Reads direction `dir` (`a>b` data, `b>a` ACKs) of a lab run's event log as the run does:
/// from the experiment's start `epoch_ns` (the log's monotonic clock) over the longer of the
/// plan's duration and the run's span `span_s` (the last windows drain, and may still be
/// dropped, after the plan's duration), in bins of `output.interval`, keeping at most the
/// plan's drop-log limit of drops (none when the plan turns the drop log off). A recorded run's log, epoch and
/// span (`longhaul lab --report DIR --keep-event-log`: `emulator-events.log`, `clock.json`) give
/// back the queue logs its summary was built from.
pub fn read_run(
    log: impl Read,
    dir: &str,
    plan: &LabPlan,
    epoch_ns: u64,
    span_s: f64,
) -> std::io::Result<QueueLog> {
    read(
        log,
        dir,
        epoch_ns,
        plan.duration.as_secs_f64().max(span_s),
        plan.interval.as_secs_f64(),
        if plan.drop_log {
            plan.drop_log_limit
        } else {
            0
        },
    )
}

/// Reads the events of direction `dir` (`a>b`) from `epoch_ns` on, for `duration_s` seconds.
pub fn read(
    log: impl Read,
    dir: &str,
    epoch_ns: u64,
    duration_s: f64,
    interval_s: f64,
    drop_limit: usize,
) -> std::io::Result<QueueLog> {
    let bins = (duration_s / interval_s).ceil().max(1.0) as usize;
    let mut sum_pkts = vec![0.0; bins];
    let mut sum_bytes = vec![0.0; bins];
    let mut arrivals = vec![0u64; bins];
    let mut admitted = vec![0u64; bins];
    let mut out = QueueLog::default();
    for line in BufReader::new(log).lines() {
        let line = line?;
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        if f.len() < 6 {
            out.malformed_lines += 1;
            continue;
        }
        if f[1] != dir || !(f[2] == "enqueue" || f[2] == "drop") {
            continue;
        }
        let (Ok(t), Ok(bytes), Ok(qp), Ok(qb)) = (
            f[0].parse::<u64>(),
            f[3].parse::<u32>(),
            f[4].parse::<u64>(),
            f[5].parse::<u64>(),
        ) else {
            out.malformed_lines += 1;
            continue;
        };
        if t < epoch_ns {
            continue;
        }
        let rel = (t - epoch_ns) as f64 / 1e9;
        // The last bin ends at `duration_s` (its rate is over that width), not at a whole
        // interval.
        if rel >= duration_s {
            continue;
        }
        let bin = (rel / interval_s) as usize;
        if bin >= bins {
            continue;
        }
        sum_pkts[bin] += qp as f64;
        sum_bytes[bin] += qb as f64;
        arrivals[bin] += 1;
        if f[2] == "enqueue" {
            admitted[bin] += bytes as u64;
        } else if out.drops.len() < drop_limit {
            out.drops.push(DropRecord {
                time_s: rel,
                bytes,
                queue_packets: qp,
                reason: f.get(6).unwrap_or(&"unknown").to_string(),
            });
        } else {
            out.drops_unlogged += 1;
        }
    }
    for b in 0..bins {
        let n = arrivals[b].max(1) as f64;
        out.t.push(b as f64 * interval_s);
        out.queue_pkts.push(sum_pkts[b] / n);
        out.queue_bytes.push(sum_bytes[b] / n);
        let width = (duration_s - b as f64 * interval_s).min(interval_s);
        out.throughput_bps
            .push(admitted[b] as f64 * 8.0 / width.max(1e-9));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "# t_ns dir event bytes queue_packets queue_bytes detail
900 a>b arrive 1500 - -
900 a>b enqueue 1500 1 1500 depart=1020 release=2020
1000000100 a>b arrive 1500 - -
1000000100 a>b enqueue 1500 3 4500 depart=1 release=2
1000000200 b>a enqueue 52 1 52 depart=1 release=2
1000000300 a>b drop 1500 3 4500 queue_full
1500000000 a>b enqueue 1000 5 7000 depart=1 release=2
1500000001 a>b deliver 1500 - - late=3
2500000000 a>b drop 1500 9 13500 random_loss
garbage
";

    #[test]
    fn bins_queue_and_throughput_and_keeps_drops() {
        // Epoch at 100 ns: the first enqueue is 800 ns in, the rest one to 2.5 s in.
        let q = read(LOG.as_bytes(), "a>b", 100, 3.0, 1.0, 10).unwrap();
        assert_eq!(q.t, vec![0.0, 1.0, 2.0]);
        // Bin 0: one arrival seeing 1 packet. Bin 1: arrivals seeing 3, 3 and 5 packets.
        assert_eq!(q.queue_pkts, vec![1.0, 11.0 / 3.0, 9.0]);
        assert_eq!(q.queue_bytes[1], (4500.0 + 4500.0 + 7000.0) / 3.0);
        // Admitted bytes: 1500 in bin 0, 1500 + 1000 in bin 1, nothing in bin 2 (a drop).
        assert_eq!(q.throughput_bps, vec![12_000.0, 20_000.0, 0.0]);
        assert_eq!(q.drops.len(), 2);
        assert_eq!(q.drops[0].reason, "queue_full");
        assert!((q.drops[0].time_s - 1.0000002).abs() < 1e-12);
        assert_eq!(q.drops[1].reason, "random_loss");
        assert_eq!(q.malformed_lines, 1);
    }

    #[test]
    fn the_last_bin_ends_with_the_duration() {
        // 2.5 s in bins of 1 s: the last bin is [2, 2.5) and its rate is over 0.5 s; the
        // enqueue at 2.6 s (still inside a whole third interval) and the drop at 2.5 s are past
        // the end.
        let log = "2000000000 a>b enqueue 1500 1 1500 depart=1 release=2
2600000000 a>b enqueue 1500 2 3000 depart=1 release=2
2500000000 a>b drop 1500 9 13500 queue_full
";
        let q = read(log.as_bytes(), "a>b", 0, 2.5, 1.0, 10).unwrap();
        assert_eq!(q.t, vec![0.0, 1.0, 2.0]);
        assert_eq!(q.throughput_bps, vec![0.0, 0.0, 1500.0 * 8.0 / 0.5]);
        assert_eq!(q.queue_pkts, vec![0.0, 0.0, 1.0]);
        assert!(q.drops.is_empty());
    }

    #[test]
    fn drop_limit_counts_the_rest() {
        let q = read(LOG.as_bytes(), "a>b", 0, 3.0, 1.0, 1).unwrap();
        assert_eq!(q.drops.len(), 1);
        assert_eq!(q.drops_unlogged, 1);
        // The other direction has one arrival and no drops.
        let r = read(LOG.as_bytes(), "b>a", 0, 3.0, 1.0, 10).unwrap();
        assert_eq!(r.queue_pkts, vec![0.0, 1.0, 0.0]);
        assert!(r.drops.is_empty());
    }
}
