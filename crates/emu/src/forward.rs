//! The per-direction I/O loop: TUN in → path model → delay line → TUN out.
//!
//! One thread per direction. Each turn of the loop
//! 1. reads up to `READ_BATCH` packets from the input TUN (non-blocking) — fewer when a release
//!    falls due meanwhile — timestamps each on the monotonic clock and asks the model for its
//!    fate (per wire packet: a TCP super-packet from a TUN with offloads is as many decisions as
//!    it has segments, see `crate::gso` and `arrive_super`); delivered packets go into the delay
//!    line with the release time the model computed, those RED marked with CE set in their IP
//!    header (`crate::ecn`);
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

use crate::coalesce::{Chunk, Coalescer};
use crate::gso::{self, VNET_HDR_LEN};
use crate::model::path::{PathCounters, PathModel, Verdict};
use crate::model::Nanos;
use crate::observe::{EventLog, Lateness, LatenessSummary, PcapWriter};
use crate::sys::clock::{minimize_timer_slack, now_ns, Waiter, Wake};
use crate::sys::tun::{read_packet, write_packet};
use serde::{Deserialize, Serialize};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Packets read per turn before releasing due packets (bounds the release latency under load).
const READ_BATCH: usize = 32;

/// I/O-level counters (things the model does not see).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct IoCounters {
    /// Failed reads from the input TUN, and frames it handed over that could not be used (longer
    /// than the MTU, or a malformed super-packet).
    pub read_errors: u64,
    /// Writes to the output TUN that failed (the packet is lost in the host).
    pub write_errors: u64,
    /// Packets dropped because the delay line reached its memory cap.
    pub dropped_memory: u64,
    /// Wire packets still in the delay line when the emulator stopped (never delivered).
    pub in_flight_at_exit: u64,
    /// TCP super-packets read (TUN offloads, `crate::gso`).
    pub super_packets: u64,
    /// Wire packets in those super-packets.
    pub super_packet_segments: u64,
    /// Super-packets that left as more than one packet, or were cut into wire packets for the
    /// event log or pcap files, because their segments' fates or release times differed.
    pub super_packets_cut: u64,
}

/// What one direction reports when it stops (`emulator.json`'s `directions`; it reads back, so a
/// recorded run's link metrics can be rebuilt from it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DirectionReport {
    /// The direction's name (`a→b`, `b→a`).
    pub direction: String,
    /// What the path model did with the packets.
    pub counters: PathCounters,
    /// What the I/O loop counted besides the model.
    pub io: IoCounters,
    /// How late packets were written relative to their computed release times.
    pub lateness: LatenessSummary,
    /// Time from arrival to the last bit leaving the bottleneck (queueing + serialisation) of
    /// delivered packets, in ms — docs/measurements.md's `queue_delay_ms`.
    pub queue_delay_ms: QueueDelay,
    /// Time the direction ran, in seconds.
    pub elapsed_s: f64,
    /// Delivered IP bytes × 8 / elapsed.
    pub throughput_bps: f64,
    /// Capacity from the configuration (None = unlimited).
    pub capacity_bps: Option<f64>,
    /// throughput / capacity (0 when unlimited).
    pub utilization: f64,
}

/// Queueing-delay summary in milliseconds, from an HDR histogram of 3 significant digits
/// (`observe::Lateness`): each percentile and the maximum is the upper end of its value's bucket
/// and the mean sums bucket midpoints, so each is within 1/1024 of the exact value (values in
/// [2^k, 2^(k+1)) ns share buckets 2^(k−10) ns wide). Percentiles are nearest-rank: the value
/// of rank ⌈q·N⌉ among the N delivered packets.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct QueueDelay {
    /// Mean, in ms.
    pub mean: f64,
    /// Median, in ms (absent from reports written before it was recorded: 0).
    #[serde(default)]
    pub p50: f64,
    /// 95th percentile, in ms.
    pub p95: f64,
    /// 99th percentile, in ms.
    pub p99: f64,
    /// Largest, in ms.
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
            p50: s.p50_ns as f64 / 1e6,
            p95: p95 as f64 / 1e6,
            p99: s.p99_ns as f64 / 1e6,
            max: s.max_ns as f64 / 1e6,
        }
    }
}

/// Optional observers for one direction.
#[derive(Default, Clone)]
pub struct Observers {
    /// The per-packet event log shared by both directions.
    pub log: Option<Arc<Mutex<EventLog>>>,
    /// Capture of the input side (packets as its host sent them).
    pub pcap_in: Option<Arc<Mutex<PcapWriter>>>,
    /// Capture of the output side (packets as its host received them).
    pub pcap_out: Option<Arc<Mutex<PcapWriter>>>,
}

/// Everything one direction's thread needs.
pub struct Direction {
    /// The direction's name in logs and reports (`a→b`, `b→a`).
    pub name: String,
    /// The TUN device packets are read from.
    pub input: Arc<OwnedFd>,
    /// The TUN device packets are written to.
    pub output: Arc<OwnedFd>,
    /// The direction's path model.
    pub model: PathModel,
    /// Capacity from the configuration, in bits per second (`None`: unlimited), for the report's
    /// utilization.
    pub capacity_bps: Option<f64>,
    /// The link MTU in bytes: larger frames from the input are counted as read errors.
    pub mtu: u32,
    /// Memory cap of the delay line, in bytes.
    pub max_buffered_bytes: u64,
    /// How long before each release the thread stops sleeping and spins, in ns.
    pub spin_ns: u64,
    /// SCHED_FIFO priority for this thread (0 = normal scheduling).
    pub realtime_priority: i32,
    /// CPU to pin this thread to.
    pub cpu: Option<usize>,
    /// Event log and pcap captures, if any.
    pub observers: Observers,
    /// Set to end the loop.
    pub stop: Arc<AtomicBool>,
    /// The instant cross traffic and traces count from (`Emulator::set_zero`), applied to the
    /// model before each packet read.
    pub zero: Arc<AtomicU64>,
    /// Per-flow extra delay (empty: none).
    pub port_delays: Vec<crate::model::port_delay::PortDelay>,
    /// The TUN devices carry virtio headers and TCP super-packets (`crate::gso`).
    pub offload: bool,
    /// `Options::coalesce_ns`.
    pub coalesce_ns: u64,
}

/// Histogram of queueing delays of delivered packets (same HDR histogram as lateness).
#[derive(Default)]
struct QueueDelayHist(Lateness);

/// A frame in the delay line: one wire packet, or several segments of a super-packet.
struct Packet {
    buf: Box<[u8]>,
    len: u32,
    /// Wire packets it carries.
    segments: u32,
}

/// Recycled packet buffers in size classes — one wire packet, then powers of two up to a 64 KB
/// super-packet — so that after warm-up forwarding allocates nothing, and a frame in the delay
/// line holds at most twice its size (a run of two 1500 B segments cut from a super-packet
/// waits in a 4 KB buffer, not a 64 KB one).
struct Buffers {
    /// (buffer size, free buffers of that size), ascending.
    classes: Vec<(usize, Vec<Box<[u8]>>)>,
    /// Bytes of the buffers now in the delay line (the memory the cap applies to).
    in_line: u64,
}

impl Buffers {
    fn new(small_len: usize, large_len: usize) -> Self {
        let mut sizes = vec![small_len];
        let mut size = small_len.next_power_of_two();
        while size < large_len {
            if size > small_len {
                sizes.push(size);
            }
            size *= 2;
        }
        if large_len > small_len {
            sizes.push(large_len);
        }
        Self {
            classes: sizes.into_iter().map(|s| (s, Vec::new())).collect(),
            in_line: 0,
        }
    }

    /// A buffer of at least `len` bytes (`len` at most the largest class).
    fn get(&mut self, len: usize) -> Box<[u8]> {
        let k = self
            .classes
            .iter()
            .position(|(size, _)| *size >= len)
            .unwrap_or(self.classes.len() - 1);
        let (size, free) = &mut self.classes[k];
        free.pop()
            .unwrap_or_else(|| vec![0u8; *size].into_boxed_slice())
    }

    fn put(&mut self, b: Box<[u8]>) {
        if let Some((_, free)) = self.classes.iter_mut().find(|(size, _)| *size == b.len()) {
            free.push(b);
        }
    }
}

/// Per-thread state of the loop.
struct State {
    line: crate::model::delay::DelayLine<Packet>,
    bufs: Buffers,
    lateness: Lateness,
    qdelay: QueueDelayHist,
    io: IoCounters,
    chunks: Vec<Chunk>,
    rt_offset: Nanos,
    /// Memory cap of the delay line: `max_buffered_bytes`, but room for 64 frames at least.
    cap_bytes: u64,
}

/// A direction started on its thread: its I/O state, ready to take turns of the loop.
pub struct Running {
    d: Direction,
    st: State,
    in_fd: std::os::fd::RawFd,
    out_fd: std::os::fd::RawFd,
    read_len: usize,
    start: Nanos,
}

impl Direction {
    /// Runs until `stop` is set; returns the report.
    pub fn run(self) -> DirectionReport {
        minimize_timer_slack();
        self.pin();
        let in_fd = self.input.as_raw_fd();
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
        if self.realtime_priority > 0 && !waiter.is_realtime() {
            tracing::warn!("{}: could not get real-time priority", self.name);
        }
        let stop = self.stop.clone();
        let mut r = self.start();
        while !stop.load(Ordering::Relaxed) {
            // 3. Wait, when the input had nothing more.
            if r.turn(READ_BATCH) {
                let next = r.next_release();
                if next.is_none_or(|t| t > now_ns()) {
                    match waiter.wait(next, Duration::from_millis(50)) {
                        Wake::Input | Wake::Deadline | Wake::Spurious => {}
                    }
                }
            }
        }
        r.finish()
    }

    /// Pins the calling thread to `self.cpu`, if set.
    pub(crate) fn pin(&self) {
        if let Some(cpu) = self.cpu {
            if let Err(e) = crate::sys::clock::pin_to_cpu(cpu) {
                tracing::warn!("{}: cannot pin to CPU {cpu}: {e}", self.name);
            }
        }
    }

    /// Sets up the loop's state (buffers, delay line, statistics) on the calling thread.
    pub fn start(self) -> Running {
        let vnet = self.vnet_len();
        // Room for one MTU packet plus a byte to notice anything larger (counted as read error);
        // with offloads, reads take up to a 64 KB super-packet.
        let small_len = vnet + self.mtu as usize + 1;
        let large_len = crate::sys::tun::MAX_OFFLOAD_FRAME + 1;
        let read_len = if self.offload { large_len } else { small_len };
        let st = State {
            line: Default::default(),
            bufs: Buffers::new(small_len, large_len),
            lateness: Lateness::default(),
            qdelay: QueueDelayHist::default(),
            io: IoCounters::default(),
            chunks: Vec::with_capacity(64),
            rt_offset: crate::sys::clock::realtime_ns().saturating_sub(now_ns()),
            cap_bytes: self.max_buffered_bytes.max(64 * read_len as u64),
        };
        Running {
            in_fd: self.input.as_raw_fd(),
            out_fd: self.output.as_raw_fd(),
            d: self,
            st,
            read_len,
            start: now_ns(),
        }
    }
}

impl Running {
    /// One turn of the loop: (1) reads what the input has, up to `max_reads` frames, and
    /// (2) writes every packet whose release time has come. Returns whether the input was
    /// drained (nothing more to read now), i.e. whether the caller may wait.
    #[inline]
    pub fn turn(&mut self, max_reads: usize) -> bool {
        let Self {
            d,
            st,
            in_fd,
            out_fd,
            read_len,
            ..
        } = self;
        let (in_fd, out_fd, read_len) = (*in_fd, *out_fd, *read_len);
        // 1. Ingress.
        let mut input_drained = false;
        for _ in 0..max_reads {
            let mut buf = st.bufs.get(read_len);
            match read_packet(in_fd, &mut buf) {
                Ok(Some(n)) => {
                    let now = now_ns();
                    d.ingest(now, buf, n, st);
                    // A release is due: serve it before reading more (with offloads one
                    // read copies up to 64 KB, so a full batch of reads can take 100s of µs).
                    if st.line.next_release().is_some_and(|t| t <= now) {
                        break;
                    }
                }
                Ok(None) => {
                    st.bufs.put(buf);
                    input_drained = true;
                    break;
                }
                Err(e) => {
                    st.io.read_errors += 1;
                    tracing::warn!("{}: read: {e}", d.name);
                    st.bufs.put(buf);
                    input_drained = true;
                    break;
                }
            }
        }
        // 2. Egress of everything due.
        let vnet = d.vnet_len();
        let dir = &d.name;
        loop {
            let now = now_ns();
            let Some((at, pkt)) = st.line.pop_due(now) else {
                break;
            };
            let frame = &pkt.buf[..pkt.len as usize];
            if write_packet(out_fd, frame).is_err() {
                st.io.write_errors += 1;
            }
            st.lateness.record(now - at);
            if let Some(p) = &d.observers.pcap_out {
                p.lock().unwrap().write(now + st.rt_offset, &frame[vnet..]);
            }
            if let Some(l) = &d.observers.log {
                let (bytes, late) = (pkt.len as usize - vnet, now - at);
                let mut l = l.lock().unwrap();
                // No allocation per line: the segments field only when there are several.
                if pkt.segments > 1 {
                    l.line(format_args!(
                        "{now} {dir} deliver {bytes} - - late={late} segments={}",
                        pkt.segments
                    ));
                } else {
                    l.line(format_args!("{now} {dir} deliver {bytes} - - late={late}"));
                }
            }
            st.bufs.in_line -= pkt.buf.len() as u64;
            st.bufs.put(pkt.buf);
        }
        input_drained
    }

    /// When the next packet in the delay line is due (None: the line is empty).
    #[inline]
    pub fn next_release(&self) -> Option<Nanos> {
        self.st.line.next_release()
    }

    /// Stops: counts what is still in the delay line and reports.
    pub fn finish(mut self) -> DirectionReport {
        self.st.io.in_flight_at_exit = self.st.line.drain().map(|(_, p)| p.segments as u64).sum();
        let elapsed = (now_ns() - self.start) as f64 / 1e9;
        let st = self.st;
        self.d.report(elapsed, st.lateness, &st.qdelay, st.io)
    }
}

impl Direction {
    /// Bytes of virtio header in front of each packet.
    fn vnet_len(&self) -> usize {
        if self.offload {
            VNET_HDR_LEN
        } else {
            0
        }
    }

    /// Whether the observers must see wire packets (pcap files are written): then
    /// super-packets are cut into wire packets on arrival and every checksum completed. The
    /// event log does not need that: it records the path's decisions, which are made per wire
    /// segment either way (`log_arrival`), and a `deliver` line names the segments it carries.
    fn shows_wire(&self) -> bool {
        let o = &self.observers;
        o.pcap_in.is_some() || o.pcap_out.is_some()
    }

    /// One frame of `n` bytes read at `now` in `buf`.
    fn ingest(&mut self, now: Nanos, buf: Box<[u8]>, n: usize, st: &mut State) {
        let zero = self.zero.load(Ordering::Acquire);
        if zero != self.model.zero() {
            self.model.set_zero(zero);
        }
        let vnet = self.vnet_len();
        let mtu = self.mtu as usize;
        if !self.offload {
            if n > mtu {
                st.io.read_errors += 1;
                st.bufs.put(buf);
                return;
            }
            self.capture_in(now, &buf[..n], st);
            self.arrive(now, buf, n, st);
            return;
        }
        match gso::parse(&buf[..n]) {
            Err(e) => {
                st.io.read_errors += 1;
                tracing::debug!("{}: unusable frame from the TUN: {e}", self.name);
                st.bufs.put(buf);
            }
            Ok(None) => {
                if n < vnet || n - vnet > mtu {
                    st.io.read_errors += 1;
                    st.bufs.put(buf);
                    return;
                }
                // An ordinary packet: into a wire-sized buffer, so the 64 KB one is read into
                // again instead of waiting in the delay line.
                let mut small = st.bufs.get(n);
                small[..n].copy_from_slice(&buf[..n]);
                st.bufs.put(buf);
                if self.shows_wire() {
                    gso::finish_checksum(&mut small[..n]);
                }
                self.capture_in(now, &small[vnet..n], st);
                self.arrive(now, small, n, st);
            }
            Ok(Some(sp)) => {
                if sp.segment_ip_len(0) as usize > mtu {
                    st.io.read_errors += 1;
                    st.bufs.put(buf);
                    return;
                }
                st.io.super_packets += 1;
                st.io.super_packet_segments += sp.segments() as u64;
                if self.shows_wire() {
                    st.io.super_packets_cut += 1;
                    for i in 0..sp.segments() {
                        let len = sp.chunk_frame_len(i, 1);
                        let mut seg = st.bufs.get(len);
                        sp.write_chunk(&buf[..n], i, 1, &mut seg, true);
                        self.capture_in(now, &seg[vnet..len], st);
                        self.arrive(now, seg, len, st);
                    }
                    st.bufs.put(buf);
                } else {
                    self.arrive_super(now, buf, n, sp, st);
                }
            }
        }
    }

    fn capture_in(&self, now: Nanos, packet: &[u8], st: &State) {
        if let Some(p) = &self.observers.pcap_in {
            p.lock().unwrap().write(now + st.rt_offset, packet);
        }
    }

    /// Puts a frame into the delay line, unless that would exceed the memory cap.
    fn enqueue(&self, st: &mut State, at: Nanos, buf: Box<[u8]>, len: usize, segments: usize) {
        if st.bufs.in_line + buf.len() as u64 > st.cap_bytes {
            st.io.dropped_memory += segments as u64;
            st.bufs.put(buf);
            return;
        }
        st.bufs.in_line += buf.len() as u64;
        st.line.push(
            at,
            Packet {
                buf,
                len: len as u32,
                segments: segments as u32,
            },
        );
    }

    /// The event log's lines for one wire packet (or super-packet segment) reaching the path:
    /// `arrive`, then `enqueue` or `drop` with the queue right after the decision.
    fn log_arrival(&self, now: Nanos, ip_len: u32, outcome: &crate::model::path::Decision) {
        let Some(l) = &self.observers.log else {
            return;
        };
        let dir = &self.name;
        let mut l = l.lock().unwrap();
        l.line(format_args!("{now} {dir} arrive {ip_len} - -"));
        match outcome.verdict {
            Verdict::Drop(r) => l.line(format_args!(
                "{now} {dir} drop {ip_len} {} {} {}",
                outcome.queue_packets,
                outcome.queue_bytes,
                r.as_str()
            )),
            Verdict::Deliver {
                departure,
                release,
                marked,
            } => l.line(format_args!(
                "{now} {dir} enqueue {ip_len} {} {} depart={departure} release={}{}{}",
                outcome.queue_packets,
                outcome.queue_bytes,
                release.at,
                if release.duplicate_at.is_some() {
                    " duplicate"
                } else {
                    ""
                },
                if marked { " ce" } else { "" }
            )),
        }
    }

    /// One wire packet (frame of `len` bytes, virtio header included when offloading).
    #[inline]
    fn arrive(&mut self, now: Nanos, mut buf: Box<[u8]>, len: usize, st: &mut State) {
        let vnet = self.vnet_len();
        let ip_len = (len - vnet) as u32;
        let capable = crate::ecn::is_capable(&buf[vnet..len]);
        let outcome = self.model.on_arrival(now, ip_len, capable);
        self.log_arrival(now, ip_len, &outcome);
        match outcome.verdict {
            Verdict::Drop(_) => st.bufs.put(buf),
            Verdict::Deliver {
                mut release,
                departure,
                marked,
            } => {
                if marked {
                    crate::ecn::set_ce(&mut buf[vnet..len]);
                }
                st.qdelay.0.record(departure - now);
                let extra =
                    crate::model::port_delay::extra_delay(&self.port_delays, &buf[vnet..len]);
                if extra > 0 {
                    release.at += extra;
                    release.duplicate_at = release.duplicate_at.map(|t| t + extra);
                }
                if let Some(dup_at) = release.duplicate_at {
                    let mut copy = st.bufs.get(len);
                    copy[..len].copy_from_slice(&buf[..len]);
                    self.enqueue(st, dup_at, copy, len, 1);
                }
                self.enqueue(st, release.at, buf, len, 1);
            }
        }
    }

    /// A TCP super-packet: the model decides for each wire segment; runs of consecutive
    /// delivered segments whose release times lie within `coalesce_ns` (in order) travel on as
    /// one packet, released with the last of them (`crate::coalesce`). When that is the whole super-packet it is
    /// forwarded as read; otherwise each run is cut out (`gso::SuperPacket::write_chunk`).
    fn arrive_super(
        &mut self,
        now: Nanos,
        frame: Box<[u8]>,
        n: usize,
        sp: gso::SuperPacket,
        st: &mut State,
    ) {
        let extra =
            crate::model::port_delay::extra_delay(&self.port_delays, &frame[VNET_HDR_LEN..n]);
        // The segments share the super-packet's IP header, and its ECN field.
        let capable = crate::ecn::is_capable(&frame[VNET_HDR_LEN..n]);
        let segments = sp.segments();
        let mut chunks = std::mem::take(&mut st.chunks);
        let mut runs = Coalescer::new(self.coalesce_ns);
        for i in 0..segments {
            let ip_len = sp.segment_ip_len(i);
            let outcome = self.model.on_arrival(now, ip_len, capable);
            self.log_arrival(now, ip_len, &outcome);
            match outcome.verdict {
                Verdict::Drop(_) => runs.dropped(&mut chunks),
                Verdict::Deliver {
                    departure,
                    release,
                    marked,
                } => {
                    st.qdelay.0.record(departure - now);
                    let dup = release.duplicate_at.map(|t| t + extra);
                    runs.delivered(i, release.at + extra, dup, marked, &mut chunks);
                }
            }
        }
        runs.finish(&mut chunks);
        if let [whole] = chunks[..] {
            if whole.count == segments {
                let mut frame = frame;
                if whole.ce {
                    crate::ecn::set_ce(&mut frame[VNET_HDR_LEN..n]);
                }
                self.enqueue(st, whole.at, frame, n, segments);
                chunks.clear();
                st.chunks = chunks;
                return;
            }
        }
        if chunks.len() > 1 || chunks.first().is_some_and(|c| c.count != segments) {
            st.io.super_packets_cut += 1;
        }
        for c in &chunks {
            let len = sp.chunk_frame_len(c.first, c.count);
            let mut b = st.bufs.get(len);
            sp.write_chunk(&frame[..n], c.first, c.count, &mut b, false);
            if c.ce {
                crate::ecn::set_ce(&mut b[VNET_HDR_LEN..len]);
            }
            self.enqueue(st, c.at, b, len, c.count);
        }
        st.bufs.put(frame);
        chunks.clear();
        st.chunks = chunks;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_in_power_of_two_classes_and_are_reused() {
        // MTU 1500 with virtio headers: wire packets 1511 B, super-packets 65 546 B.
        let small = VNET_HDR_LEN + 1500 + 1;
        let large = crate::sys::tun::MAX_OFFLOAD_FRAME + 1;
        let mut b = Buffers::new(small, large);
        let sizes: Vec<usize> = b.classes.iter().map(|c| c.0).collect();
        assert_eq!(sizes, [small, 2048, 4096, 8192, 16384, 32768, 65536, large]);
        assert_eq!(b.get(1200).len(), small);
        // A run of two 1500 B segments (10 + 2 × 1500 bytes) takes a 4 KB buffer.
        let two = b.get(VNET_HDR_LEN + 3000);
        assert_eq!(two.len(), 4096);
        let addr = two.as_ptr();
        b.put(two);
        let again = b.get(2500);
        assert_eq!(again.as_ptr(), addr, "recycled, not reallocated");
        assert_eq!(b.get(65_540).len(), large);
    }
}
