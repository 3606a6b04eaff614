//! The naive forwarder: the baseline the benchmark compares against.
//!
//! Two threads, each doing a blocking `read` from one TUN and an immediate `write` to the other,
//! with no model, no timestamps and no delay — the cheapest possible user-space path between two
//! namespaces (the "naive TUN forwarder" whose 1.74 Gb/s at 1500 B and 8.28 Gb/s at 9000 B the
//! emulator must beat while doing real work per packet).
//!
//! It uses `poll` with a 50 ms timeout between reads so it can be stopped; under load the poll is
//! skipped because reads keep succeeding.

use crate::sys::tun::{read_packet, write_packet};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Forwards `input` → `output` until `stop`; counts forwarded packets into `forwarded`.
/// `max_frame`: the largest read (the MTU, or a super-packet with its virtio header when the
/// devices have offloads: then the header is forwarded untouched with the packet).
pub fn forward(
    input: Arc<OwnedFd>,
    output: Arc<OwnedFd>,
    max_frame: usize,
    stop: Arc<AtomicBool>,
    forwarded: Arc<AtomicU64>,
) {
    let (i, o) = (input.as_raw_fd(), output.as_raw_fd());
    let mut buf = vec![0u8; max_frame + 1];
    while !stop.load(Ordering::Relaxed) {
        match read_packet(i, &mut buf) {
            Ok(Some(n)) => {
                let _ = write_packet(o, &buf[..n]);
                forwarded.fetch_add(1, Ordering::Relaxed);
            }
            _ => {
                let mut pfd = libc::pollfd {
                    fd: i,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                unsafe { libc::poll(&mut pfd, 1, 50) };
            }
        }
    }
}

/// Runs `forward` and reports like a model-driven direction (only packet counts are known).
pub fn run_reported(
    name: String,
    input: Arc<OwnedFd>,
    output: Arc<OwnedFd>,
    max_frame: usize,
    stop: Arc<AtomicBool>,
    realtime_priority: i32,
) -> crate::forward::DirectionReport {
    if realtime_priority > 0 {
        crate::sys::clock::make_realtime(realtime_priority);
    }
    let n = Arc::new(AtomicU64::new(0));
    let t = std::time::Instant::now();
    forward(input, output, max_frame, stop, n.clone());
    let packets = n.load(Ordering::Relaxed);
    crate::forward::DirectionReport {
        direction: name,
        counters: crate::model::path::PathCounters {
            arrived_packets: packets,
            delivered_packets: packets,
            ..Default::default()
        },
        io: Default::default(),
        lateness: Default::default(),
        queue_delay_ms: Default::default(),
        utilization: 0.0,
        elapsed_s: t.elapsed().as_secs_f64(),
        throughput_bps: 0.0,
        capacity_bps: None,
    }
}
