//! The simulation loop: builds the network of a checked scenario, then runs events in virtual
//! time until the scenario's duration.
//!
//! Topology. Every scenario link becomes two ports (data direction, ACK direction). A flow's
//! data route is its access port (if it has one) followed by its path's forward ports; its ACK
//! route is the path's reverse ports in reverse order followed by its access port's reverse.
//! The access port carries the flow's own NIC rate and delay plus half its `extra_rtt` each
//! way, so flows can have different RTTs through a shared bottleneck. An access path with no
//! rate and no delay is omitted (it would only cost events).
//!
//! Endpoints. Each flow is a sender and a receiver endpoint; the engine calls `poll_transmit`
//! until it returns nothing after every packet or timer delivered to an endpoint, and keeps at
//! most one live timer event per endpoint (`armed`): an earlier deadline schedules a new event,
//! a later one waits for the pending event to fire and re-arm (lazy timers, §4.2 of
//! notes/simulation.md). A sender behind a rated access port is polled only while that port's
//! queue has room (the way a Linux socket blocks on a full qdisc), so hosts do not drop their
//! own packets.
//!
//! Determinism. Time is integer ns; events at the same time run in scheduling order; every
//! random stream (per port, per cross source, per controller) is seeded from the scenario seed
//! and the element's index, so the same scenario and seed give the same result bit for bit.

use crate::bufpool::BufPool;
use crate::cross::CrossSource;
use crate::events::{Ev, EventQueue};
use crate::histogram::Histogram;
use crate::packet::{Dir, Packet, NO_BUF};
use crate::port::{Enqueued, Limit, Port};
use crate::red::{Red, RedParams};
use crate::scenario::{Checked, CrossKind, QueueKind, QueueSpec, TopologyKind};
use crate::summary::*;
use crate::transport::model::{ModelConfig, ModelReceiver, ModelSender};
use crate::transport::Endpoint;
use longhaul_cc::{CcSpec, Setup};
use rand::Rng;
use rand_pcg::Pcg64Mcg;
use thiserror::Error;

/// Header bytes per packet: TCP/IP without options, as seed 000 counts them.
pub const HEADER_BYTES: u32 = 40;
const NONE: u64 = u64::MAX;
/// Flow indices at or above this are unresponsive cross-traffic sources.
const CROSS_FLOW: u32 = 1 << 31;
const PROGRESS_EVERY: u64 = 1 << 20;

#[derive(Debug, Error)]
pub enum SimError {
    #[error("flow {flow}: cannot build congestion control `{cc}`: {message}")]
    Controller {
        flow: String,
        cc: String,
        message: String,
    },
}

/// Where a run is, for progress displays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    pub sim_ns: u64,
    pub duration_ns: u64,
    pub events: u64,
    pub packets: u64,
}

struct Flow {
    /// The scenario flow id, or `None` for a responsive cross-traffic transfer.
    id: Option<u32>,
    cross: Option<usize>,
    fwd: Box<[u32]>,
    rev: Box<[u32]>,
    sender: Option<Box<ModelSender>>,
    receiver: Option<Box<ModelReceiver>>,
    /// Pending timer per side (sender, receiver), or NONE.
    armed: [u64; 2],
    /// Rated access port and the queue room the sender may fill.
    access: Option<(u32, u64)>,
    dropped: u64,
    delivered_at_sample: u64,
    cc_name: String,
    start: u64,
    stop: u64,
    /// Kept after a transfer finishes and its state is released.
    final_delivered: u64,
}

impl Flow {
    fn delivered(&self) -> u64 {
        self.receiver
            .as_ref()
            .map(|r| r.delivered_bytes)
            .unwrap_or(self.final_delivered)
    }
}

struct CrossState {
    src: CrossSource,
    port: u32,
    /// Responsive: controller and delivered payload.
    cc: Option<CcSpec>,
    delivered: u64,
}

pub struct Engine<'a> {
    checked: &'a Checked,
    now: u64,
    end: u64,
    events: EventQueue,
    ports: Vec<Port>,
    port_rng: Vec<Pcg64Mcg>,
    /// Per scenario link: (forward port, reverse port).
    link_ports: Vec<(u32, u32)>,
    flows: Vec<Flow>,
    cross: Vec<CrossState>,
    bufs: BufPool,
    scratch: Vec<u8>,
    series: TimeSeries,
    drops: Vec<DropRecord>,
    drops_unlogged: u64,
    per_second: Vec<u64>,
    delivered_at_second: u64,
    event_count: u64,
    packet_count: u64,
}

fn mix(seed: u64, stream: u64) -> u64 {
    // SplitMix64 finaliser: independent, well-spread seeds per element.
    let mut z = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn queue_limit(q: &QueueSpec) -> Limit {
    match (q.packets, q.bytes) {
        (Some(p), _) => Limit::Packets(p),
        (None, Some(b)) => Limit::Bytes(b.0),
        (None, None) => Limit::Packets(1000),
    }
}

fn make_red(q: &QueueSpec) -> Option<Red> {
    (q.kind == QueueKind::Red).then(|| {
        let limit = match queue_limit(q) {
            Limit::Packets(p) => p as f64,
            Limit::Bytes(b) => b as f64,
        };
        Red::new(RedParams::from_spec(q, limit))
    })
}

impl<'a> Engine<'a> {
    pub fn new(checked: &'a Checked) -> Result<Engine<'a>, SimError> {
        let sc = &checked.scenario;
        let mut e = Engine {
            checked,
            now: 0,
            end: sc.duration.0,
            events: EventQueue::default(),
            ports: Vec::new(),
            port_rng: Vec::new(),
            link_ports: Vec::new(),
            flows: Vec::new(),
            cross: Vec::new(),
            bufs: BufPool::default(),
            scratch: Vec::with_capacity(2048),
            series: TimeSeries {
                interval_s: sc.output.interval.secs(),
                ..TimeSeries::default()
            },
            drops: Vec::new(),
            drops_unlogged: 0,
            per_second: Vec::new(),
            delivered_at_second: 0,
            event_count: 0,
            packet_count: 0,
        };
        for (i, l) in sc.links.iter().enumerate() {
            let rq = l.reverse_queue.as_ref().unwrap_or(&l.queue);
            let f = e.add_port(Port::new(
                i,
                false,
                Some(l.rate.0),
                l.delay.0,
                l.loss,
                queue_limit(&l.queue),
                make_red(&l.queue),
                l.mtu,
            ));
            let r = e.add_port(Port::new(
                i,
                true,
                Some(l.reverse_rate.unwrap_or(l.rate).0),
                l.delay.0,
                l.reverse_loss,
                queue_limit(rq),
                make_red(rq),
                l.mtu,
            ));
            e.link_ports.push((f, r));
            e.series.queues.push(QueueSeries {
                link: l.name.clone(),
                direction: "forward",
                ..QueueSeries::default()
            });
        }
        for f in &checked.flows {
            let spec = &sc.flows[f.spec];
            let mtu = f
                .path
                .iter()
                .map(|&l| sc.links[l].mtu)
                .min()
                .unwrap_or(1500);
            let access_delay = spec.access.delay.map(|d| d.0).unwrap_or(0) + spec.extra_rtt.0 / 2;
            let access = if spec.access.rate.is_some() || access_delay > 0 {
                let limit = spec.access.packets.unwrap_or(1000);
                let fwd = e.add_port(Port::new(
                    usize::MAX,
                    false,
                    spec.access.rate.map(|r| r.0),
                    access_delay,
                    0.0,
                    Limit::Packets(limit),
                    None,
                    mtu,
                ));
                let rev = e.add_port(Port::new(
                    usize::MAX,
                    true,
                    None,
                    access_delay + spec.extra_rtt.0 % 2,
                    0.0,
                    Limit::Packets(limit),
                    None,
                    mtu,
                ));
                Some((fwd, rev, spec.access.rate.is_some().then_some(limit)))
            } else {
                None
            };
            let mut fwd: Vec<u32> = access.iter().map(|a| a.0).collect();
            fwd.extend(f.path.iter().map(|&l| e.link_ports[l].0));
            let mut rev: Vec<u32> = f.path.iter().rev().map(|&l| e.link_ports[l].1).collect();
            rev.extend(access.iter().map(|a| a.1));
            let setup = Setup {
                seed: mix(sc.seed, 1_000_000 + f.id as u64),
                ..Setup::for_mtu(mtu)
            };
            let cc = f.cc.build(&setup).map_err(|err| SimError::Controller {
                flow: f.id.to_string(),
                cc: f.cc.to_string(),
                message: err.to_string(),
            })?;
            let cfg = ModelConfig {
                mss: mtu - HEADER_BYTES,
                header: HEADER_BYTES,
                start: f.start,
                stop: f.stop,
                bytes: spec.bytes.map(|b| b.0),
                ecn: spec.ecn,
            };
            e.flows.push(Flow {
                id: Some(f.id),
                cross: None,
                fwd: fwd.into(),
                rev: rev.into(),
                sender: Some(Box::new(ModelSender::new(cfg, cc))),
                receiver: Some(Box::new(ModelReceiver::new(HEADER_BYTES))),
                armed: [NONE; 2],
                access: access.and_then(|a| a.2.map(|l| (a.0, l))),
                dropped: 0,
                delivered_at_sample: 0,
                cc_name: f.cc.to_string(),
                start: f.start,
                stop: f.stop,
                final_delivered: 0,
            });
            e.series.flows.push(FlowSeries {
                id: f.id,
                ..FlowSeries::default()
            });
        }
        for (i, c) in checked.cross.iter().enumerate() {
            let spec = &sc.cross_traffic[i];
            let l = &sc.links[c.link];
            let port = if spec.reverse {
                e.link_ports[c.link].1
            } else {
                e.link_ports[c.link].0
            };
            let src = CrossSource::new(
                spec.kind,
                c.link,
                spec.reverse,
                spec.rate.0,
                c.packet_size,
                c.start,
                c.stop,
                spec.on.map(|d| d.0).unwrap_or(0),
                spec.off.map(|d| d.0).unwrap_or(0),
                spec.size.map(|b| b.0).unwrap_or(100 * 1024),
                spec.shape.unwrap_or(1.2),
                l.rate.0,
                mix(sc.seed, 2_000_000 + i as u64),
            );
            let first = src.first_event();
            let responsive = c.cc.is_some();
            e.cross.push(CrossState {
                src,
                port,
                cc: c.cc.clone(),
                delivered: 0,
            });
            if responsive {
                e.events.push(first, Ev::Transfer(i as u32));
            } else {
                e.events.push(first, Ev::Cross(i as u32));
            }
        }
        for i in 0..e.flows.len() {
            e.pump(i, 0);
        }
        e.events.push(0, Ev::Sample);
        e.events.push(1_000_000_000, Ev::Second);
        Ok(e)
    }

    fn add_port(&mut self, mut p: Port) -> u32 {
        let i = self.ports.len() as u32;
        p.index = i as usize;
        self.ports.push(p);
        self.port_rng.push(Pcg64Mcg::new(
            mix(self.checked.scenario.seed, i as u64) as u128 | 1,
        ));
        i
    }

    /// Run to the end of the scenario.
    pub fn run(mut self, progress: &mut dyn FnMut(&Progress)) -> Outcome {
        let mut next_report = PROGRESS_EVERY;
        while let Some(t) = self.events.peek_time() {
            if t > self.end {
                break;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.event_count += 1;
            match ev {
                Ev::Arrive(p) => self.on_arrive(p),
                Ev::Timer(x) => self.on_timer((x / 2) as usize, (x % 2) as usize),
                Ev::Cross(s) => self.on_cross(s as usize),
                Ev::Transfer(s) => self.on_transfer(s as usize),
                Ev::Sample => self.on_sample(),
                Ev::Second => self.on_second(),
            }
            if self.event_count >= next_report {
                next_report += PROGRESS_EVERY;
                progress(&self.progress());
            }
        }
        self.now = self.end;
        progress(&self.progress());
        self.finish()
    }

    fn progress(&self) -> Progress {
        Progress {
            sim_ns: self.now,
            duration_ns: self.end,
            events: self.event_count,
            packets: self.packet_count,
        }
    }

    /// Offer `pkt` to port `port` now.
    fn enqueue(&mut self, port: u32, pkt: Packet) {
        let p = &mut self.ports[port as usize];
        let rng = &mut self.port_rng[port as usize];
        let u_red = if p.red.is_some() {
            rng.gen::<f64>()
        } else {
            0.0
        };
        let u_loss = if p.loss > 0.0 { rng.gen::<f64>() } else { 1.0 };
        self.packet_count += 1;
        match p.enqueue(self.now, pkt, u_red, u_loss).0 {
            Enqueued::Sent { arrival, head } => {
                if head {
                    self.events.push(arrival, Ev::Arrive(port));
                }
            }
            Enqueued::Dropped { at, reason } => {
                if pkt.buf != NO_BUF {
                    self.bufs.release(pkt.buf);
                }
                let flow = if pkt.flow >= CROSS_FLOW {
                    None
                } else {
                    let f = &mut self.flows[pkt.flow as usize];
                    if pkt.dir == Dir::Forward && pkt.payload > 0 {
                        f.dropped += 1;
                    }
                    f.id
                };
                let out = &self.checked.scenario.output;
                if out.drop_log {
                    if self.drops.len() < out.drop_log_limit {
                        let p = &self.ports[port as usize];
                        let link = if p.link == usize::MAX {
                            format!("access:{}", flow.map(|f| f.to_string()).unwrap_or_default())
                        } else {
                            self.checked.scenario.links[p.link].name.clone()
                        };
                        self.drops.push(DropRecord {
                            time_s: at as f64 * 1e-9,
                            link,
                            direction: if p.reverse { "reverse" } else { "forward" },
                            flow,
                            reason: reason.as_str(),
                        });
                    } else {
                        self.drops_unlogged += 1;
                    }
                }
            }
        }
    }

    fn on_arrive(&mut self, port: u32) {
        let now = self.now;
        // Deliver every packet that has arrived by now; schedule the next head.
        while let Some((pkt, next)) = self.ports[port as usize].pop_arrived(now) {
            self.forward(pkt);
            match next {
                Some(t) if t <= now => continue,
                Some(t) => {
                    self.events.push(t, Ev::Arrive(port));
                    break;
                }
                None => break,
            }
        }
    }

    /// Move a packet that reached the end of hop `pkt.hop` on to its next hop or endpoint.
    fn forward(&mut self, mut pkt: Packet) {
        if pkt.flow >= CROSS_FLOW {
            return; // cross traffic leaves the network after its link
        }
        let fi = pkt.flow as usize;
        let f = &self.flows[fi];
        let route = if pkt.dir == Dir::Forward {
            &f.fwd
        } else {
            &f.rev
        };
        let next = pkt.hop as usize + 1;
        if next < route.len() {
            pkt.hop = next as u8;
            let port = route[next];
            self.enqueue(port, pkt);
            return;
        }
        let side = if pkt.dir == Dir::Forward { 1 } else { 0 };
        let now = self.now;
        {
            let bytes: &[u8] = if pkt.buf != NO_BUF {
                self.bufs.get(pkt.buf)
            } else {
                &[]
            };
            let f = &mut self.flows[fi];
            match side {
                0 => {
                    if let Some(s) = f.sender.as_mut() {
                        s.handle_packet(now, &pkt, bytes)
                    }
                }
                _ => {
                    if let Some(r) = f.receiver.as_mut() {
                        r.handle_packet(now, &pkt, bytes)
                    }
                }
            }
        }
        if pkt.buf != NO_BUF {
            self.bufs.release(pkt.buf);
        }
        self.pump(fi, side);
        if side == 0 && self.flows[fi].cross.is_some() {
            self.maybe_release(fi);
        }
    }

    /// Drain an endpoint's transmissions and re-arm its timer.
    fn pump(&mut self, fi: usize, side: usize) {
        let now = self.now;
        let mut wake = NONE;
        loop {
            if side == 0 {
                if let Some((ap, room)) = self.flows[fi].access {
                    let port = &mut self.ports[ap as usize];
                    if port.waiting_packets(now) >= room {
                        wake = port.next_departure(now).unwrap_or(now + 1);
                        break;
                    }
                }
            }
            self.scratch.clear();
            let f = &mut self.flows[fi];
            let pkt = match side {
                0 => f
                    .sender
                    .as_mut()
                    .and_then(|s| s.poll_transmit(now, &mut self.scratch)),
                _ => f
                    .receiver
                    .as_mut()
                    .and_then(|r| r.poll_transmit(now, &mut self.scratch)),
            };
            let Some(mut pkt) = pkt else { break };
            pkt.flow = fi as u32;
            pkt.hop = 0;
            pkt.dir = if side == 0 {
                Dir::Forward
            } else {
                Dir::Reverse
            };
            pkt.buf = if self.scratch.is_empty() {
                NO_BUF
            } else {
                self.bufs.put(&self.scratch)
            };
            let f = &self.flows[fi];
            let port = if side == 0 { f.fwd[0] } else { f.rev[0] };
            self.enqueue(port, pkt);
        }
        let f = &mut self.flows[fi];
        let deadline = match side {
            0 => f.sender.as_ref().and_then(|s| s.poll_timeout()),
            _ => f.receiver.as_ref().and_then(|r| r.poll_timeout()),
        }
        .unwrap_or(NONE)
        .min(wake);
        if deadline < f.armed[side] {
            f.armed[side] = deadline;
            self.events
                .push(deadline.max(now), Ev::Timer((fi * 2 + side) as u32));
        }
    }

    fn on_timer(&mut self, fi: usize, side: usize) {
        let now = self.now;
        let f = &mut self.flows[fi];
        if f.armed[side] != now {
            return; // superseded by an earlier deadline that already fired
        }
        f.armed[side] = NONE;
        match side {
            0 => {
                if let Some(s) = f.sender.as_mut() {
                    if s.poll_timeout().is_some_and(|d| d <= now) {
                        s.handle_timeout(now);
                    }
                }
            }
            _ => {
                if let Some(r) = f.receiver.as_mut() {
                    if r.poll_timeout().is_some_and(|d| d <= now) {
                        r.handle_timeout(now);
                    }
                }
            }
        }
        self.pump(fi, side);
    }

    fn on_cross(&mut self, s: usize) {
        let now = self.now;
        let c = &mut self.cross[s];
        let (emit, next) = c.src.fire(now);
        let port = c.port;
        let size = c.src.packet_size;
        if let Some(t) = next {
            self.events.push(t, Ev::Cross(s as u32));
        }
        if emit {
            let pkt = Packet {
                flow: CROSS_FLOW + s as u32,
                size,
                payload: size,
                ..Packet::EMPTY
            };
            self.enqueue(port, pkt);
        }
    }

    /// Start a responsive cross-traffic transfer: a congestion-controlled flow over the link.
    fn on_transfer(&mut self, s: usize) {
        let now = self.now;
        let sc = &self.checked.scenario;
        let c = &mut self.cross[s];
        if now >= c.src.stop {
            return;
        }
        let (bytes, next) = match c.src.kind {
            CrossKind::Onoff => {
                let (on, off) = c.src.on_off_periods();
                let bytes = (c.src.peak_rate_bps() * on as f64 * 1e-9 / 8.0) as u64;
                (bytes.max(1), now + on + off)
            }
            _ => (c.src.transfer_size(), now + c.src.next_transfer_gap()),
        };
        c.src.transfers += 1;
        let link = c.src.link;
        let mtu = sc.links[link].mtu;
        let spec = c.cc.clone().expect("responsive source has a controller");
        let setup = Setup {
            seed: mix(sc.seed, 3_000_000 + c.src.transfers),
            ..Setup::for_mtu(mtu)
        };
        if next < c.src.stop {
            self.events.push(next, Ev::Transfer(s as u32));
        }
        let Ok(cc) = spec.build(&setup) else { return };
        let cfg = ModelConfig {
            mss: mtu - HEADER_BYTES,
            header: HEADER_BYTES,
            start: now,
            stop: u64::MAX,
            bytes: Some(bytes),
            ecn: false,
        };
        let (fp, rp) = self.link_ports[link];
        let fi = self.flows.len();
        self.flows.push(Flow {
            id: None,
            cross: Some(s),
            fwd: vec![fp].into(),
            rev: vec![rp].into(),
            sender: Some(Box::new(ModelSender::new(cfg, cc))),
            receiver: Some(Box::new(ModelReceiver::new(HEADER_BYTES))),
            armed: [NONE; 2],
            access: None,
            dropped: 0,
            delivered_at_sample: 0,
            cc_name: spec.to_string(),
            start: now,
            stop: u64::MAX,
            final_delivered: 0,
        });
        self.pump(fi, 0);
    }

    /// Free a finished responsive transfer's state (its packets are all acknowledged).
    fn maybe_release(&mut self, fi: usize) {
        let f = &mut self.flows[fi];
        if f.sender.as_ref().is_some_and(|s| s.snapshot().finished) {
            let d = f.delivered();
            f.final_delivered = d;
            f.sender = None;
            f.receiver = None;
            if let Some(s) = f.cross {
                self.cross[s].delivered += d;
            }
        }
    }

    fn on_sample(&mut self) {
        let now = self.now;
        let dt = self.checked.scenario.output.interval.0;
        self.series.time_s.push(now as f64 * 1e-9);
        for (i, f) in self.flows.iter_mut().enumerate() {
            if f.id.is_none() {
                continue;
            }
            let d = f.delivered();
            let s = &mut self.series.flows[i];
            let snap = f.sender.as_ref().map(|s| s.snapshot()).unwrap_or_default();
            let tput = if now == 0 {
                0.0
            } else {
                (d - f.delivered_at_sample) as f64 * 8e9 / dt as f64
            };
            f.delivered_at_sample = d;
            s.throughput_bps.push(tput);
            s.cwnd_packets.push(snap.cwnd);
            s.rtt_ms.push(snap.srtt_ns as f64 * 1e-6);
            s.in_flight_bytes.push(snap.bytes_in_flight);
        }
        for (l, &(fp, _)) in self.link_ports.iter().enumerate() {
            let p = &mut self.ports[fp as usize];
            let q = &mut self.series.queues[l];
            q.packets.push(p.waiting_packets(now));
            q.bytes.push(p.waiting_bytes(now));
        }
        if now + dt <= self.end {
            self.events.push(now + dt, Ev::Sample);
        }
    }

    fn total_delivered(&self) -> u64 {
        self.flows
            .iter()
            .filter(|f| f.id.is_some())
            .map(|f| f.delivered())
            .sum()
    }

    fn on_second(&mut self) {
        let d = self.total_delivered();
        self.per_second.push(d - self.delivered_at_second);
        self.delivered_at_second = d;
        if self.now + 1_000_000_000 <= self.end {
            self.events.push(self.now + 1_000_000_000, Ev::Second);
        }
    }

    fn finish(mut self) -> Outcome {
        let sc = &self.checked.scenario;
        let dur_s = self.end as f64 / 1e9;
        // Packets still waiting at the end were never transmitted.
        let end = self.end;
        let mut unsent = Vec::new();
        for p in self.ports.iter_mut() {
            let n = p.waiting_packets(end);
            unsent.push((n, p.waiting_bytes(end)));
        }
        let link_summary = |p: &Port, name: &str, cap: f64| {
            let (n, b) = unsent[p.index];
            LinkSummary {
                name: name.to_string(),
                direction: if p.reverse { "reverse" } else { "forward" },
                capacity_bps: cap,
                utilization: (p.stats.bytes_out - b) as f64 * 8.0 / (cap * dur_s),
                drops: p.stats.drops(),
                drops_queue_full: p.stats.drops_queue,
                drops_red: p.stats.drops_red,
                drops_random: p.stats.drops_loss,
                ecn_marks: p.stats.ecn_marks,
                packets: p.stats.packets_out - n,
                max_queue_packets: p.stats.max_backlog_packets.saturating_sub(1),
                queue_at_end_packets: n,
                queue_delay_ms: delay_stats(&p.stats.queue_delay, 0.0),
            }
        };
        let mut links = Vec::new();
        for (i, l) in sc.links.iter().enumerate() {
            let (fp, rp) = self.link_ports[i];
            links.push(link_summary(&self.ports[fp as usize], &l.name, l.rate.0));
            let rr = l.reverse_rate.unwrap_or(l.rate).0;
            links.push(link_summary(&self.ports[rp as usize], &l.name, rr));
        }
        // The reference bottleneck for aggregate utilization.
        let chain: Vec<usize> = match sc.topology.kind {
            TopologyKind::Dumbbell => self.checked.flows[0].path.clone(),
            TopologyKind::ParkingLot => {
                let names = sc.topology.chain.clone().unwrap_or_default();
                names
                    .iter()
                    .filter_map(|n| sc.links.iter().position(|l| &l.name == n))
                    .collect()
            }
        };
        let net = |l: usize| {
            let link = &sc.links[l];
            link.rate.0 * (link.mtu - HEADER_BYTES) as f64 / link.mtu as f64
        };
        let mut flows = Vec::new();
        let mut tputs = Vec::new();
        let mut agg_bytes = 0u64;
        let mut agg_bmps = 0.0;
        for (i, cf) in self.checked.flows.iter().enumerate() {
            let f = &self.flows[i];
            let d = f.delivered();
            agg_bytes += d;
            let active = (cf.stop.min(self.end) - cf.start) as f64 * 1e-9;
            let tput = d as f64 * 8.0 / active;
            let cap = cf
                .path
                .iter()
                .map(|&l| net(l))
                .fold(f64::INFINITY, f64::min);
            let dist_m: f64 = cf
                .path
                .iter()
                .map(|&l| sc.links[l].distance_km * 1000.0)
                .sum();
            let s = f.sender.as_ref().expect("scenario flows keep their state");
            let snap = s.snapshot();
            let min_rtt = s.rtt.min().unwrap_or(0) as f64;
            let q = delay_stats(&s.rtt, min_rtt);
            tputs.push(tput);
            agg_bmps += tput * dist_m;
            flows.push(FlowSummary {
                id: cf.id,
                cc: f.cc_name.clone(),
                throughput_bps: tput,
                utilization: tput / cap,
                min_rtt_ms: min_rtt * 1e-6,
                queueing_delay_ms: q,
                loss_rate: if snap.packets_sent == 0 {
                    0.0
                } else {
                    f.dropped as f64 / snap.packets_sent as f64
                },
                retransmits: snap.retransmits,
                bmps: tput * dist_m,
                bmps_1e15: tput * dist_m * 1e-15,
                bytes_delivered: d,
                packets_sent: snap.packets_sent,
                packets_dropped: f.dropped,
                start_s: f.start as f64 * 1e-9,
                stop_s: f.stop.min(self.end) as f64 * 1e-9,
                path: cf.path.iter().map(|&l| sc.links[l].name.clone()).collect(),
            });
        }
        let agg_tput = agg_bytes as f64 * 8.0 / dur_s;
        let ref_cap = chain.iter().map(|&l| net(l)).fold(f64::INFINITY, f64::min);
        let per_sec: Vec<f64> = self.per_second.iter().map(|&b| b as f64 * 8.0).collect();
        // Responsive transfers still running at the end count what they delivered so far.
        for f in &self.flows {
            if let (Some(s), Some(_)) = (f.cross, &f.receiver) {
                self.cross[s].delivered += f.delivered();
            }
        }
        let cross = self
            .checked
            .cross
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let st = &self.cross[i];
                let active = (c.stop - c.start) as f64 * 1e-9;
                let responsive = c.cc.is_some();
                let bytes = if responsive {
                    st.delivered
                } else {
                    st.src.bytes
                };
                CrossSummary {
                    kind: match st.src.kind {
                        CrossKind::Cbr => "cbr",
                        CrossKind::Poisson => "poisson",
                        CrossKind::Onoff => "onoff",
                        CrossKind::Web => "web",
                    },
                    link: sc.links[c.link].name.clone(),
                    responsive,
                    rate_bps: bytes as f64 * 8.0 / active,
                    packets: st.src.packets,
                    transfers: st.src.transfers,
                }
            })
            .collect();
        let summary = Summary {
            scenario: self.checked.name.clone(),
            mode: "sim",
            duration_s: dur_s,
            seed: sc.seed,
            links,
            flows,
            aggregate: Aggregate {
                throughput_bps: agg_tput,
                utilization: agg_tput / ref_cap,
                jain: jain(&tputs),
                cov: cov(&per_sec),
                bmps: agg_bmps,
                bmps_1e15: agg_bmps * 1e-15,
            },
            cross_traffic: cross,
            events: self.event_count,
        };
        Outcome {
            summary,
            series: std::mem::take(&mut self.series),
            drops: std::mem::take(&mut self.drops),
            drops_unlogged: self.drops_unlogged,
        }
    }
}

/// Mean, p95 and p99 of a histogram of ns values minus `offset` ns, in ms.
fn delay_stats(h: &Histogram, offset: f64) -> DelayStats {
    if h.count() == 0 {
        return DelayStats {
            mean: 0.0,
            p95: 0.0,
            p99: 0.0,
        };
    }
    let ms = |v: f64| ((v - offset).max(0.0)) * 1e-6;
    DelayStats {
        mean: ms(h.mean()),
        p95: ms(h.quantile(0.95)),
        p99: ms(h.quantile(0.99)),
    }
}
