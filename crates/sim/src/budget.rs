//! How much memory a run needs, checked against what the machine has before the run starts.
//!
//! A simulated network holds every packet it carries: in the delay lines of its links, in its
//! queues and in the senders' records of what is unacknowledged. A scenario with a huge
//! bandwidth-delay product or a million flows would grow until the allocator aborts the
//! process minutes later; instead the run is refused at once with the estimate and the limit.
//!
//! The estimate is an upper bound of the simulator's own data, built from costs measured on
//! this simulator (proto transport, single thread, peak RSS of `longhaul sim`):
//!
//! * **packets**: the network holds at most, on each link, its rate times the longest round
//!   trip of any flow (data one way, ACKs the other) in MTU-sized packets, plus every queue's
//!   limit in both directions and every flow's host queue. A Reno flow at 10 and 100 Gb/s over
//!   180 ms used 250–400 bytes per packet of that bound (sent records, pooled header buffers,
//!   delay-line slots, and deques that double as they grow); [`PACKET_BYTES`] rounds it up.
//! * **flows**: 10,000 and 40,000 flows cost 27–30 KiB each besides their samples
//!   ([`FLOW_BYTES`]), plus their RTT histogram, which allocates buckets up to the largest
//!   sample: 8 KiB per power of two of nanoseconds above 2^10 (156 KiB at 180 ms), counted
//!   here for RTTs up to four times the longest round trip (queueing).
//! * **samples**: each flow keeps a sample of its series per `output.interval` (49 bytes each
//!   measured, [`FLOW_SAMPLE_BYTES`]); each link direction keeps its queue series.
//!
//! The limit is the memory the kernel says is available now (`MemAvailable` in
//! `/proc/meminfo`); where that cannot be read the check is skipped.

use crate::engine::SimError;
use crate::scenario::{Checked, QueueSpec};

/// Bytes per packet the network can hold (measured 250–400, rounded up).
pub const PACKET_BYTES: u64 = 512;
/// Bytes per flow besides its samples (measured 27–30 KiB).
pub const FLOW_BYTES: u64 = 32 << 10;
/// Bytes per flow per sample interval (measured 49).
pub const FLOW_SAMPLE_BYTES: u64 = 64;
/// Bytes per link direction per sample interval (queue length and delay).
pub const LINK_SAMPLE_BYTES: u64 = 32;
/// Bytes per record of the drop log.
pub const DROP_RECORD_BYTES: u64 = 64;

/// What a run is expected to hold at its peak.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Packets the network can hold at once (links' rate × longest RTT, plus queues).
    pub packets: f64,
    /// Flows, each of a `count` counted; cross-traffic transfers not included.
    pub flows: u64,
    /// Bytes per flow besides its samples: its state and its RTT histogram.
    pub flow_bytes: u64,
    /// Samples each series keeps.
    pub samples: u64,
    /// All of it, in bytes.
    pub bytes: f64,
}

/// The peak memory a checked scenario's run needs (an upper bound; see the module comment).
pub fn estimate(checked: &Checked) -> Estimate {
    let s = &checked.scenario;
    let queue_packets = |q: &QueueSpec, mtu: u32| -> f64 {
        q.packets
            .map(|p| p as f64)
            .or(q.bytes.map(|b| b.0 as f64 / mtu as f64))
            .unwrap_or(0.0)
    };
    // The longest round trip any flow sees: every link's delay both ways, plus the flow's own.
    let links_rtt: f64 = s.links.iter().map(|l| 2.0 * l.delay.0 as f64 * 1e-9).sum();
    let flow_rtt = s
        .flows
        .iter()
        .map(|f| f.extra_rtt.0 as f64 * 1e-9 + 2.0 * f.access.delay.map_or(0.0, |d| d.secs()))
        .fold(0.0, f64::max);
    let rtt = links_rtt + flow_rtt;
    let mut packets = 0.0;
    for l in &s.links {
        let mtu = l.mtu.max(1);
        packets += l.rate.0 * rtt / (8.0 * mtu as f64);
        packets += queue_packets(&l.queue, mtu);
        packets += queue_packets(l.reverse_queue.as_ref().unwrap_or(&l.queue), mtu);
    }
    for f in &s.flows {
        if f.access.rate.is_some() {
            packets += f.count as f64 * f.access.packets.unwrap_or(1000) as f64;
        }
    }
    let flows = checked.flows.len() as u64;
    let flow_bytes = FLOW_BYTES + {
        let mut d = longhaul_metrics::online::DelayAccumulator::new();
        d.record_ns((4.0 * rtt * 1e9).min(u64::MAX as f64) as u64);
        d.memory_bytes() as u64
    };
    let samples = s.duration.0 / s.output.interval.0.max(1) + 1;
    let directions = 2 * s.links.len() as u64;
    let drop_log = if s.output.drop_log {
        s.output.drop_log_limit as f64 * DROP_RECORD_BYTES as f64
    } else {
        0.0
    };
    let bytes = packets * PACKET_BYTES as f64
        + (flows * flow_bytes) as f64
        + samples as f64 * (flows * FLOW_SAMPLE_BYTES + directions * LINK_SAMPLE_BYTES) as f64
        + drop_log;
    Estimate {
        packets,
        flows,
        flow_bytes,
        samples,
        bytes,
    }
}

/// The memory available to a new run, from `/proc/meminfo`; `None` where it cannot be read.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&info)
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn parse_mem_available(info: &str) -> Option<u64> {
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Refuse a run whose estimate exceeds `limit` bytes, saying what it needs and what to change.
pub fn check(checked: &Checked, limit: u64) -> Result<(), SimError> {
    let e = estimate(checked);
    if e.bytes <= limit as f64 {
        return Ok(());
    }
    Err(SimError::Memory {
        message: format!(
            "the run needs about {} of memory but {} is available (MemAvailable): \
             {:.3e} packets in flight × {PACKET_BYTES} B (links' rate × longest RTT, plus \
             queues), {} flows × {} KiB, {} samples per series; lower the rates, delays or \
             queue sizes, run fewer flows, or raise output.interval",
            human(e.bytes),
            human(limit as f64),
            e.packets,
            e.flows,
            e.flow_bytes >> 10,
            e.samples,
        ),
    })
}

/// Bytes in the largest binary unit that keeps three digits.
fn human(bytes: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut x = bytes;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    format!("{x:.1} {}", UNITS[u])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_is_read_in_bytes() {
        let info =
            "MemTotal:       24684000 kB\nMemFree:  178000 kB\nMemAvailable:   24121000 kB\n";
        assert_eq!(parse_mem_available(info), Some(24_121_000 * 1024));
        assert_eq!(parse_mem_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human(512.0), "512.0 B");
        assert_eq!(human(4.5 * (1u64 << 30) as f64), "4.5 GiB");
    }
}
