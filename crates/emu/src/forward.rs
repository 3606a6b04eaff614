//! The per-direction I/O loop: TUN in → path model → delay line → TUN out.
//!
//! One thread per direction. Each turn of the loop
//! 1. reads up to `READ_BATCH` packets from the input TUN (non-blocking), timestamps each on the
//!    monotonic clock and asks the model for its fate; delivered packets go into the delay line
//!    with the release time the model computed;
//! 2. writes every packet whose release time has come, recording its lateness;
//! 3. if the input had nothing more, waits for input or for the next release time (timerfd a few
//!    microseconds early, then a spin — `sys::clock::Waiter`).
//!
//! Release times come from the model, never from "now + delay", so when a write is late the
//! packets behind it keep their schedule (seed 001's dummynet problem). Packet buffers are recycled
//! through a free list: after warm-up, forwarding allocates nothing.
//!
//! Overload is handled by the model (the queue drops and counts); the loop itself has one more
//! guard: if the delay line would exceed `max_buffered_bytes` of memory, packets are dropped and
//! counted as `dropped_memory` instead of growing without bound.

use crate::model::path::{PathCounters, PathModel, Verdict};
use crate::model::Nanos;
use crate::observe::{EventLog, Lateness, LatenessSummary, PcapWriter};
use crate::sys::clock::{minimize_timer_slack, now_ns, Waiter, Wake};
use crate::sys::tun::{read_packet, write_packet};
use serde::Serialize;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Packets read per turn before releasing due packets (bounds the release latency under load).
const READ_BATCH: usize = 32;

/// I/O-level counters (things the model does not see).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct IoCounters {
    pub read_errors: u64,
    pub write_errors: u64,
    /// Packets dropped because the delay line reached its memory cap.
    pub dropped_memory: u64,
    /// Packets still in the delay line when the emulator stopped (never delivered).
    pub in_flight_at_exit: u64,
}

/// What one direction reports when it stops.
#[derive(Debug, Clone, Serialize)]
pub struct DirectionReport {
    pub direction: String,
    pub counters: PathCounters,
    pub io: IoCounters,
    pub lateness: LatenessSummary,
    /// Time from arrival to the last bit leaving the bottleneck (queueing + serialisation) of
    /// delivered packets, in ms — DESIGN.md's `queue_delay_ms`.
    pub queue_delay_ms: QueueDelay,
    pub elapsed_s: f64,
    /// Delivered IP bytes × 8 / elapsed.
    pub throughput_bps: f64,
    /// Capacity from the configuration (None = unlimited).
    pub capacity_bps: Option<f64>,
    /// throughput / capacity (0 when unlimited).
    pub utilization: f64,
}

/// Queueing-delay summary in milliseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct QueueDelay {
    pub mean: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl QueueDelay {
    fn from_histogram(h: &Lateness) -> Self {
        let s = h.summary();
        if s.count == 0 {
            return Self::default();
        }
        let p95 = h.quantile_ns(0.95);
        Self {
            mean: s.mean_ns / 1e6,
            p95: p95 as f64 / 1e6,
            p99: s.p99_ns as f64 / 1e6,
            max: s.max_ns as f64 / 1e6,
        }
    }
}

/// Optional observers for one direction.
#[derive(Default, Clone)]
pub struct Observers {
    pub log: Option<Arc<Mutex<EventLog>>>,
    /// Capture of the input side (packets as its host sent them).
    pub pcap_in: Option<Arc<Mutex<PcapWriter>>>,
    /// Capture of the output side (packets as its host received them).
    pub pcap_out: Option<Arc<Mutex<PcapWriter>>>,
}

/// Everything one direction's thread needs.
pub struct Direction {
    pub name: String,
    pub input: Arc<OwnedFd>,
    pub output: Arc<OwnedFd>,
    pub model: PathModel,
    pub capacity_bps: Option<f64>,
    pub mtu: u32,
    pub max_buffered_bytes: u64,
    pub spin_ns: u64,
    /// SCHED_FIFO priority for this thread (0 = normal scheduling).
    pub realtime_priority: i32,
    /// CPU to pin this thread to.
    pub cpu: Option<usize>,
    pub observers: Observers,
    pub stop: Arc<AtomicBool>,
    /// Per-flow extra delay (empty: none).
    pub port_delays: Vec<crate::model::port_delay::PortDelay>,
}

/// Histogram of queueing delays of delivered packets (same HDR histogram as lateness).
#[derive(Default)]
struct QueueDelayHist(Lateness);

struct Packet {
    buf: Box<[u8]>,
    len: u32,
}

impl Direction {
    /// Runs until `stop` is set; returns the report.
    pub fn run(mut self) -> DirectionReport {
        minimize_timer_slack();
        if let Some(cpu) = self.cpu {
            if let Err(e) = crate::sys::clock::pin_to_cpu(cpu) {
                tracing::warn!("{}: cannot pin to CPU {cpu}: {e}", self.name);
            }
        }
        let in_fd = self.input.as_raw_fd();
        let out_fd = self.output.as_raw_fd();
        // SAFETY: the Arc keeps the fd open for the life of this function.
        let borrowed = unsafe { BorrowedFd::borrow_raw(in_fd) };
        let mut waiter = match Waiter::new(borrowed, self.spin_ns, self.realtime_priority) {
            Ok(w) => w,
            Err(e) => {
                tracing::error!("{}: cannot create timer: {e}", self.name);
                return self.report(
                    0.0,
                    Lateness::default(),
                    &QueueDelayHist::default(),
                    IoCounters::default(),
                );
            }
        };
        // Room for one MTU packet plus a byte to notice anything larger (counted as read error).
        let buf_len = self.mtu as usize + 1;
        let max_packets = (self.max_buffered_bytes / buf_len as u64).max(64) as usize;
        let mut pool: Vec<Box<[u8]>> = Vec::new();
        let mut line: crate::model::delay::DelayLine<Packet> = Default::default();
        let mut lateness = Lateness::default();
        let mut qdelay = QueueDelayHist::default();
        let mut io = IoCounters::default();
        if self.realtime_priority > 0 && !waiter.is_realtime() {
            tracing::warn!("{}: could not get real-time priority", self.name);
        }
        let rt_offset = crate::sys::clock::realtime_ns().saturating_sub(now_ns());
        let start = now_ns();
        let dir = self.name.clone();

        while !self.stop.load(Ordering::Relaxed) {
            // 1. Ingress.
            let mut input_drained = false;
            for _ in 0..READ_BATCH {
                let mut buf = pool
                    .pop()
                    .unwrap_or_else(|| vec![0u8; buf_len].into_boxed_slice());
                match read_packet(in_fd, &mut buf) {
                    Ok(Some(n)) => {
                        let now = now_ns();
                        if n > self.mtu as usize {
                            io.read_errors += 1;
                            pool.push(buf);
                            continue;
                        }
                        if let Some(p) = &self.observers.pcap_in {
                            p.lock().unwrap().write(now + rt_offset, &buf[..n]);
                        }
                        self.arrive(
                            now,
                            buf,
                            n as u32,
                            &mut line,
                            &mut pool,
                            &mut io,
                            &mut qdelay,
                            max_packets,
                        );
                    }
                    Ok(None) => {
                        pool.push(buf);
                        input_drained = true;
                        break;
                    }
                    Err(e) => {
                        io.read_errors += 1;
                        tracing::warn!("{dir}: read: {e}");
                        pool.push(buf);
                        input_drained = true;
                        break;
                    }
                }
            }
            // 2. Egress of everything due.
            loop {
                let now = now_ns();
                let Some((at, pkt)) = line.pop_due(now) else {
                    break;
                };
                let bytes = &pkt.buf[..pkt.len as usize];
                if write_packet(out_fd, bytes).is_err() {
                    io.write_errors += 1;
                }
                lateness.record(now - at);
                if let Some(p) = &self.observers.pcap_out {
                    p.lock().unwrap().write(now + rt_offset, bytes);
                }
                if let Some(l) = &self.observers.log {
                    l.lock().unwrap().line(format_args!(
                        "{now} {dir} deliver {} - - late={}",
                        pkt.len,
                        now - at
                    ));
                }
                pool.push(pkt.buf);
            }
            // 3. Wait.
            if input_drained {
                let next = line.next_release();
                if next.is_none_or(|t| t > now_ns()) {
                    match waiter.wait(next, Duration::from_millis(50)) {
                        Wake::Input | Wake::Deadline | Wake::Spurious => {}
                    }
                }
            }
        }
        io.in_flight_at_exit = line.len() as u64;
        let elapsed = (now_ns() - start) as f64 / 1e9;
        self.report(elapsed, lateness, &qdelay, io)
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn arrive(
        &mut self,
        now: Nanos,
        buf: Box<[u8]>,
        len: u32,
        line: &mut crate::model::delay::DelayLine<Packet>,
        pool: &mut Vec<Box<[u8]>>,
        io: &mut IoCounters,
        qdelay: &mut QueueDelayHist,
        max_packets: usize,
    ) {
        let outcome = self.model.on_arrival(now, len);
        let dir = &self.name;
        if let Some(l) = &self.observers.log {
            let mut l = l.lock().unwrap();
            l.line(format_args!("{now} {dir} arrive {len} - -"));
            match outcome.verdict {
                Verdict::Drop(r) => l.line(format_args!(
                    "{now} {dir} drop {len} {} {} {}",
                    outcome.queue_packets,
                    outcome.queue_bytes,
                    r.as_str()
                )),
                Verdict::Deliver { departure, release } => l.line(format_args!(
                    "{now} {dir} enqueue {len} {} {} depart={departure} release={}{}",
                    outcome.queue_packets,
                    outcome.queue_bytes,
                    release.at,
                    if release.duplicate_at.is_some() {
                        " duplicate"
                    } else {
                        ""
                    }
                )),
            }
        }
        match outcome.verdict {
            Verdict::Drop(_) => pool.push(buf),
            Verdict::Deliver {
                mut release,
                departure,
            } => {
                qdelay.0.record(departure - now);
                let extra =
                    crate::model::port_delay::extra_delay(&self.port_delays, &buf[..len as usize]);
                if extra > 0 {
                    release.at += extra;
                    release.duplicate_at = release.duplicate_at.map(|t| t + extra);
                }
                if line.len() >= max_packets {
                    io.dropped_memory += 1;
                    pool.push(buf);
                    return;
                }
                if let Some(dup_at) = release.duplicate_at {
                    let mut copy = pool
                        .pop()
                        .unwrap_or_else(|| vec![0u8; buf.len()].into_boxed_slice());
                    copy[..len as usize].copy_from_slice(&buf[..len as usize]);
                    line.push(dup_at, Packet { buf: copy, len });
                }
                line.push(release.at, Packet { buf, len });
            }
        }
    }

    fn report(
        &self,
        elapsed_s: f64,
        lateness: Lateness,
        qdelay: &QueueDelayHist,
        io: IoCounters,
    ) -> DirectionReport {
        let c = *self.model.counters();
        let throughput_bps = if elapsed_s > 0.0 {
            c.delivered_bytes as f64 * 8.0 / elapsed_s
        } else {
            0.0
        };
        DirectionReport {
            queue_delay_ms: QueueDelay::from_histogram(&qdelay.0),
            utilization: self.capacity_bps.map_or(0.0, |cap| throughput_bps / cap),
            direction: self.name.clone(),
            counters: c,
            io,
            lateness: lateness.summary(),
            elapsed_s,
            throughput_bps,
            capacity_bps: self.capacity_bps,
        }
    }
}
