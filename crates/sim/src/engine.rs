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
//! a later one waits for the pending event to fire and re-arm (lazy timers). A sender behind a rated access port is polled only while that port's
//! queue has room (the way a Linux socket blocks on a full qdisc), so hosts do not drop their
//! own packets — unless the flow asks for Linux 2.4's behaviour (`access.on_full = "drop"`):
//! then the sender is polled regardless, a packet that finds the host queue full is dropped
//! there (reason `host_queue_full`) and handed back to the sender as a local congestion signal
//! (`FlowSender::on_local_drop`), and the sender is not polled again until its next event, as
//! Linux 2.4's `tcp_write_xmit` stops at the first failed transmission.
//!
//! Determinism. Time is integer ns; events at the same time run in a fixed
//! order of their kind and index (`events`), not of when they were scheduled; every
//! random stream (per port, per cross source, per controller) is seeded from the scenario seed
//! and the element's index, so the same scenario and seed give the same result bit for bit.

mod split;

pub use split::SplitWhen;

use crate::bufpool::BufPool;
use crate::cross::CrossSource;
use crate::events::{Ev, EventQueue};
use crate::packet::{Dir, Packet, NO_BUF};
use crate::port::DropReason;
use crate::port::{Enqueued, Limit, Port};
use crate::red::{Red, RedParams};
use crate::scenario::{Checked, CrossKind, OnFull, QueueKind, QueueSpec, TopologyKind};
use crate::scenario::{Stack, TransportKind};
use crate::summary::*;
use crate::transport::model::{ModelConfig, ModelReceiver, ModelSender};
use crate::transport::proto::{ProtoReceiver, ProtoSender, IP_UDP_OVERHEAD};
use crate::transport::{AnyReceiver, AnySender, Endpoint, FlowReceiver, FlowSender};
use longhaul_cc::{CcSpec, Setup};
use longhaul_metrics::assemble::{aggregate, flow_summary, AggregateCounts, Bottleneck};
use longhaul_metrics::assemble::{Distance, FlowCounts, LossBasis};
use longhaul_metrics::loss::{LossLedger, REASON_AQM, REASON_QUEUE_FULL, REASON_RANDOM};
use longhaul_metrics::summary::Summary;
use longhaul_metrics::summary::{AggregateSeries, FlowSeries, LinkSeries, LinkSummary, Mode};
use longhaul_metrics::throughput::{self, Capacity};
use rand::Rng;
use rand_pcg::Pcg64Mcg;
use std::collections::BTreeMap;
use thiserror::Error;

/// Header bytes per packet: TCP/IP without options, as seed 000 counts them.
pub const HEADER_BYTES: u32 = 40;
const NONE: u64 = u64::MAX;
/// The summary's drop reason for a packet its sender's full host queue dropped.
pub const REASON_HOST_QUEUE_FULL: &str = "host_queue_full";
/// Flow indices at or above this are unresponsive cross-traffic sources.
const CROSS_FLOW: u32 = 1 << 31;
const PROGRESS_EVERY: u64 = 1 << 20;

#[derive(Debug, Error)]
pub enum SimError {
    #[error("{message}")]
    Memory { message: String },
    #[error("flow {flow}: cannot configure the transport: {message}")]
    Transport { flow: String, message: String },
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
    sender: Option<Box<AnySender>>,
    receiver: Option<Box<AnyReceiver>>,
    /// Pending timer per side (sender, receiver), or NONE.
    armed: [u64; 2],
    /// Rated access port, the queue room the sender may fill, and what a full queue does.
    access: Option<(u32, u64, OnFull)>,
    dropped: u64,
    /// Where and why this flow's data packets were dropped.
    ledger: LossLedger,
    delivered_at_sample: u64,
    /// The sender's cumulative losses and retransmissions at the last sample.
    lost_at_sample: u64,
    retransmits_at_sample: u64,
    /// Kept after a transfer finishes and its state is released.
    final_delivered: u64,
}

impl Flow {
    fn delivered(&self) -> u64 {
        self.receiver
            .as_ref()
            .map(|r| r.delivered_bytes())
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
    flow_series: Vec<FlowSeries>,
    /// Per port: its queue-length and throughput series, and the payload bytes it had sent at
    /// the last sample. Recorded for both directions of every link and for rated access
    /// (host) queues; `None` for ports that never hold a queue (unrated access delays).
    port_series: Vec<Option<(LinkSeries, u64)>>,
    aggregate_series: AggregateSeries,
    delivered_at_sample: u64,
    drops: Vec<DropRecord>,
    drops_unlogged: u64,
    per_second: Vec<u64>,
    delivered_at_second: u64,
    event_count: u64,
    packet_count: u64,
    /// Set while the run is split across two threads (`split`).
    link: Option<Box<split::Link>>,
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
    /// An engine for `checked` with no network, no events and nothing counted yet.
    fn empty(checked: &'a Checked) -> Engine<'a> {
        Engine {
            checked,
            now: 0,
            end: checked.scenario.duration.0,
            events: EventQueue::default(),
            ports: Vec::new(),
            port_rng: Vec::new(),
            link_ports: Vec::new(),
            flows: Vec::new(),
            cross: Vec::new(),
            bufs: BufPool::default(),
            scratch: Vec::with_capacity(2048),
            flow_series: Vec::new(),
            port_series: Vec::new(),
            aggregate_series: AggregateSeries::default(),
            delivered_at_sample: 0,
            drops: Vec::new(),
            drops_unlogged: 0,
            per_second: Vec::new(),
            delivered_at_second: 0,
            event_count: 0,
            packet_count: 0,
            link: None,
        }
    }

    /// Build the network; refuses a run that would not fit in the machine's memory
    /// (`budget`).
    pub fn new(checked: &'a Checked) -> Result<Engine<'a>, SimError> {
        if let Some(limit) = crate::budget::available_memory() {
            crate::budget::check(checked, limit)?;
        }
        let sc = &checked.scenario;
        let mut e = Engine::empty(checked);
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
            e.record_series(f);
            e.record_series(r);
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
                if spec.access.rate.is_some() {
                    e.record_series(fwd);
                }
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
            let base_rtt: u64 =
                2 * (f.path.iter().map(|&l| sc.links[l].delay.0).sum::<u64>() + access_delay);
            let rate = f
                .path
                .iter()
                .map(|&l| sc.links[l].rate.0)
                .fold(f64::INFINITY, f64::min);
            let (sender, receiver) = make_endpoints(
                sc.transport,
                cc,
                &f.cc,
                setup,
                Endpoints {
                    mtu,
                    start: f.start,
                    stop: f.stop,
                    bytes: spec.bytes.map(|b| b.0),
                    ecn: spec.ecn,
                    bdp_bytes: (rate * base_rtt as f64 / 8e9) as u64,
                    linux24: spec.stack == Stack::Linux24,
                },
            )
            .map_err(|message| SimError::Transport {
                flow: f.id.to_string(),
                message,
            })?;
            e.flows.push(Flow {
                id: Some(f.id),
                cross: None,
                fwd: fwd.into(),
                rev: rev.into(),
                sender: Some(sender),
                receiver: Some(receiver),
                armed: [NONE; 2],
                access: access.and_then(|a| a.2.map(|l| (a.0, l, spec.access.on_full))),
                dropped: 0,
                ledger: LossLedger::new(),
                delivered_at_sample: 0,
                lost_at_sample: 0,
                retransmits_at_sample: 0,
                final_delivered: 0,
            });
            e.flow_series.push(FlowSeries::default());
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
        e.events.push(0, Ev::Sample);
        e.events.push(1_000_000_000, Ev::Second);
        Ok(e)
    }

    fn add_port(&mut self, mut p: Port) -> u32 {
        let i = self.ports.len() as u32;
        p.index = i as usize;
        self.ports.push(p);
        self.port_series.push(None);
        self.port_rng.push(Pcg64Mcg::new(
            mix(self.checked.scenario.seed, i as u64) as u128 | 1,
        ));
        i
    }

    /// Sample this port's queue length and throughput at the output interval.
    fn record_series(&mut self, port: u32) {
        self.port_series[port as usize] = Some((LinkSeries::default(), 0));
    }

    /// Run to the end of the scenario.
    /// Run to the end on up to `threads` threads (two at most: see `split` for when a run can
    /// be split; the result is the same bit for bit either way).
    pub fn run_on(
        self,
        threads: usize,
        when: SplitWhen,
        progress: &mut dyn FnMut(&Progress),
    ) -> Outcome {
        match split::plan(&self, when) {
            Some(cut) if threads >= 2 => self.run_split(cut, progress),
            _ => self.run(progress),
        }
    }

    /// Let every sender start (at time 0, before any event).
    fn start(&mut self) {
        for i in 0..self.flows.len() {
            self.pump(i, 0);
        }
    }

    /// Run to the end on this thread.
    pub fn run(mut self, progress: &mut dyn FnMut(&Progress)) -> Outcome {
        self.start();
        let mut next_report = PROGRESS_EVERY;
        while let Some((t, ev)) = self.events.pop_until(self.end) {
            self.now = t;
            self.event_count += 1;
            self.dispatch(ev);
            if self.event_count >= next_report {
                next_report += PROGRESS_EVERY;
                progress(&self.progress());
            }
        }
        self.now = self.end;
        progress(&self.progress());
        self.finish()
    }

    #[inline(always)]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive(p) => self.on_arrive(p),
            Ev::Timer(x) => self.on_timer((x / 2) as usize, (x % 2) as usize),
            Ev::Cross(s) => self.on_cross(s as usize),
            Ev::Transfer(s) => self.on_transfer(s as usize),
            Ev::Sample => self.on_sample(),
            Ev::Second => self.on_second(),
        }
    }

    fn progress(&self) -> Progress {
        Progress {
            sim_ns: self.now,
            duration_ns: self.end,
            events: self.event_count,
            packets: self.packet_count,
        }
    }

    /// Offer `pkt` to port `port` now. Inlined into its callers so that a packet just built
    /// field by field goes into the delay line from registers: through memory, the port's wide
    /// copy of it would wait on the narrow stores of its fields (a store-forwarding stall, the
    /// largest single cost of this function when it was called).
    #[inline(always)]
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
        let remote = p.remote;
        let (verdict, pkt) = p.enqueue(self.now, pkt, u_red, u_loss);
        match verdict {
            Enqueued::Sent { arrival, head } => {
                if head {
                    self.events.push(arrival, Ev::Arrive(port));
                }
                if remote {
                    self.send_across(arrival, pkt);
                }
            }
            Enqueued::Dropped { at, reason } => {
                if pkt.buf != NO_BUF {
                    self.bufs.release(pkt.buf);
                }
                let p = &self.ports[port as usize];
                let location = |flow: Option<u32>| {
                    if p.link == usize::MAX {
                        format!("access:{}", flow.map(|f| f.to_string()).unwrap_or_default())
                    } else if p.reverse {
                        format!("{} (reverse)", self.checked.scenario.links[p.link].name)
                    } else {
                        self.checked.scenario.links[p.link].name.clone()
                    }
                };
                let flow = if pkt.flow >= CROSS_FLOW {
                    None
                } else {
                    let f = &mut self.flows[pkt.flow as usize];
                    if pkt.dir == Dir::Forward && pkt.payload > 0 {
                        f.dropped += 1;
                        f.ledger.record(&location(f.id), summary_reason(reason), 1);
                    }
                    f.id
                };
                let out = &self.checked.scenario.output;
                if out.drop_log {
                    if self.drops.len() < out.drop_log_limit {
                        let link = location(flow);
                        if let Some(l) = self.link.as_mut() {
                            l.note_drop(self.events.last_key());
                        }
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
        self.pump_from(fi, side, self.now);
    }

    /// `pump`, with timers no earlier than `earliest` (a timer that has just fired and still
    /// reports a due deadline is retried a nanosecond later rather than at the same instant,
    /// which could repeat forever).
    fn pump_from(&mut self, fi: usize, side: usize, earliest: u64) {
        let now = self.now;
        let mut wake = NONE;
        loop {
            let mut host_full = false;
            if side == 0 {
                if let Some((ap, room, on_full)) = self.flows[fi].access {
                    let port = &mut self.ports[ap as usize];
                    if port.waiting_packets(now) >= room {
                        if on_full == OnFull::Block {
                            wake = port.next_departure(now).unwrap_or(now + 1);
                            break;
                        }
                        host_full = true;
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
            let Some(out) = pkt else { break };
            if host_full {
                self.host_drop(fi, out);
                break;
            }
            let buf = if self.scratch.is_empty() {
                NO_BUF
            } else {
                self.bufs.put(&self.scratch)
            };
            // A new value with the routing fields, not four narrow stores into the old one: the
            // port copies the packet at once with wide loads, which a store buffer holding
            // byte-sized writes to the same bytes cannot serve (a store-forwarding stall).
            let pkt = Packet {
                flow: fi as u32,
                hop: 0,
                dir: if side == 0 {
                    Dir::Forward
                } else {
                    Dir::Reverse
                },
                buf,
                ..out
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
        // A deadline already past fires now (the timer event must match `armed` to run).
        let deadline = deadline.max(earliest);
        if deadline < f.armed[side] {
            f.armed[side] = deadline;
            self.events
                .push(deadline, Ev::Timer((fi * 2 + side) as u32));
        }
    }

    /// The sender's packet found its host queue full (`on_full = "drop"`): count and log the
    /// drop, and hand the packet back to the sender.
    fn host_drop(&mut self, fi: usize, pkt: Packet) {
        let now = self.now;
        let f = &mut self.flows[fi];
        let location = format!("access:{}", f.id.map(|i| i.to_string()).unwrap_or_default());
        if pkt.payload > 0 {
            f.dropped += 1;
            f.ledger.record(&location, REASON_HOST_QUEUE_FULL, 1);
        }
        if let Some(s) = f.sender.as_mut() {
            s.on_local_drop(now, &pkt);
        }
        let out = &self.checked.scenario.output;
        if out.drop_log {
            if self.drops.len() < out.drop_log_limit {
                if let Some(l) = self.link.as_mut() {
                    l.note_drop(self.events.last_key());
                }
                self.drops.push(DropRecord {
                    time_s: now as f64 * 1e-9,
                    link: location,
                    direction: "forward",
                    flow: self.flows[fi].id,
                    reason: DropReason::HostQueueFull.as_str(),
                });
            } else {
                self.drops_unlogged += 1;
            }
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
        self.pump_from(fi, side, now + 1);
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
                size: size as u16,
                payload: size.saturating_sub(HEADER_BYTES) as u16,
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
        let rtt = 2 * sc.links[link].delay.0;
        let ends = Endpoints {
            mtu,
            start: now,
            stop: u64::MAX,
            bytes: Some(bytes),
            ecn: false,
            bdp_bytes: (sc.links[link].rate.0 * rtt as f64 / 8e9) as u64,
            linux24: false,
        };
        let Ok((sender, receiver)) = make_endpoints(sc.transport, cc, &spec, setup, ends) else {
            return;
        };
        let (fp, rp) = self.link_ports[link];
        let fi = self.flows.len();
        self.flows.push(Flow {
            id: None,
            cross: Some(s),
            fwd: vec![fp].into(),
            rev: vec![rp].into(),
            sender: Some(sender),
            receiver: Some(receiver),
            armed: [NONE; 2],
            access: None,
            dropped: 0,
            ledger: LossLedger::new(),
            delivered_at_sample: 0,
            lost_at_sample: 0,
            retransmits_at_sample: 0,
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
        // Split run: the far part's receivers and port, as they were at this instant.
        let far = self.far_snapshot();
        if now > 0 {
            // Each sample closes the interval (now − dt, now]; it is stamped with its start.
            let t = (now - dt) as f64 / 1e9;
            let per_s = 8e9 / dt as f64;
            for (i, f) in self.flows.iter_mut().enumerate() {
                if f.id.is_none() {
                    continue;
                }
                let d = far
                    .as_ref()
                    .map_or_else(|| f.delivered(), |s| s.delivered[i]);
                let s = &mut self.flow_series[i];
                let snap = f.sender.as_ref().map(|s| s.snapshot()).unwrap_or_default();
                s.t.push(t);
                s.throughput_bps
                    .push((d - f.delivered_at_sample) as f64 * per_s);
                f.delivered_at_sample = d;
                s.cwnd_pkts.push(snap.cwnd);
                // No RTT sample yet is a gap (NaN, JSON `null`), not a zero-millisecond RTT.
                s.rtt_ms.push(if snap.srtt_ns > 0 {
                    snap.srtt_ns as f64 / 1e6
                } else {
                    f64::NAN
                });
                s.inflight_pkts
                    .push(snap.bytes_in_flight as f64 / snap.mss.max(1) as f64);
                // Counts in the interval; a finished flow's released sender counts none.
                s.lost_pkts
                    .push(snap.packets_lost.saturating_sub(f.lost_at_sample) as f64);
                s.retransmits
                    .push(snap.retransmits.saturating_sub(f.retransmits_at_sample) as f64);
                f.lost_at_sample = f.lost_at_sample.max(snap.packets_lost);
                f.retransmits_at_sample = f.retransmits_at_sample.max(snap.retransmits);
            }
            for (p, series) in self.ports.iter_mut().zip(&mut self.port_series) {
                let Some((q, at_sample)) = series else {
                    continue;
                };
                let (sent, waiting_packets, waiting_bytes) = match &far {
                    Some(s) if s.port == p.index as u32 => {
                        (s.sent_payload, s.waiting_packets, s.waiting_bytes)
                    }
                    _ => {
                        let (_, unsent) = p.unsent(now);
                        let sent = p.stats.payload_out - unsent;
                        (sent, p.waiting_packets(now), p.waiting_bytes(now))
                    }
                };
                q.t.push(t);
                q.queue_pkts.push(waiting_packets as f64);
                q.queue_bytes.push(waiting_bytes as f64);
                q.throughput_bps.push((sent - *at_sample) as f64 * per_s);
                *at_sample = sent;
            }
            let d = match &far {
                Some(s) => s.total_delivered(&self.flows),
                None => self.total_delivered(),
            };
            self.aggregate_series.t.push(t);
            self.aggregate_series
                .throughput_bps
                .push((d - self.delivered_at_sample) as f64 * per_s);
            self.delivered_at_sample = d;
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
        let d = match self.far_snapshot() {
            Some(s) => s.total_delivered(&self.flows),
            None => self.total_delivered(),
        };
        self.per_second.push(d - self.delivered_at_second);
        self.delivered_at_second = d;
        if self.now + 1_000_000_000 <= self.end {
            self.events.push(self.now + 1_000_000_000, Ev::Second);
        }
    }

    fn finish(mut self) -> Outcome {
        let sc = &self.checked.scenario;
        let run_s = self.end as f64 / 1e9;
        let mut links = Vec::new();
        let mut ports = Vec::new();
        for (i, l) in sc.links.iter().enumerate() {
            let (fp, rp) = self.link_ports[i];
            for (port, reverse) in [(fp, false), (rp, true)] {
                let p = &mut self.ports[port as usize];
                let (unsent_n, unsent_payload) = p.unsent(self.end);
                let cap = if reverse {
                    l.reverse_rate.unwrap_or(l.rate).0
                } else {
                    l.rate.0
                };
                let st = &p.stats;
                let payload_bps = (st.payload_out - unsent_payload) as f64 * 8.0 / run_s;
                let mut by_reason = BTreeMap::new();
                for (reason, n) in [
                    (REASON_QUEUE_FULL, st.drops_queue),
                    (REASON_AQM, st.drops_red),
                    (REASON_RANDOM, st.drops_loss),
                ] {
                    if n > 0 {
                        by_reason.insert(reason.to_string(), n);
                    }
                }
                let q = &st.queue_delay;
                let queue = match (&p.red, p.limit) {
                    (None, Limit::Packets(n)) => format!("droptail {n}p"),
                    (None, Limit::Bytes(b)) => format!("droptail {b}B"),
                    (Some(r), Limit::Packets(n)) => format!(
                        "red {n}p min_th={} max_th={}{}",
                        r.params.min_th,
                        r.params.max_th,
                        if r.params.ecn { " ecn" } else { "" }
                    ),
                    (Some(r), Limit::Bytes(b)) => format!(
                        "red {b}B min_th={} max_th={}{}",
                        r.params.min_th,
                        r.params.max_th,
                        if r.params.ecn { " ecn" } else { "" }
                    ),
                };
                ports.push(PortReport {
                    link: l.name.clone(),
                    direction: if reverse { "reverse" } else { "forward" },
                    packets: st.packets_out - unsent_n,
                    drops_queue_full: st.drops_queue,
                    drops_red: st.drops_red,
                    drops_random: st.drops_loss,
                    ecn_marks: st.ecn_marks,
                    max_queue_packets: st.max_backlog_packets.saturating_sub(1),
                    queue_at_end_packets: unsent_n,
                });
                links.push(LinkSummary {
                    name: if reverse {
                        format!("{} (reverse)", l.name)
                    } else {
                        l.name.clone()
                    },
                    capacity_bps: cap,
                    utilization: throughput::utilization(payload_bps, cap, l.mtu),
                    drops: st.drops(),
                    queue_delay_ms: q.stats_ms_above(0.0).into(),
                    mtu: Some(l.mtu),
                    delay_ms: Some(l.delay.0 as f64 / 1e6),
                    distance_km: Some(l.distance_km),
                    queue: Some(queue),
                    drops_by_reason: by_reason,
                    packets_forwarded: Some(st.packets_out - unsent_n),
                    series: self.port_series[port as usize].take().map(|s| s.0),
                });
            }
        }
        // Rated access (host) queues, named as in the drop log: `access:ID`. In seed 000's
        // runs each 1 Gb/s host link is slower than the path, so a window-based sender's
        // backlog waits here rather than at the shared bottleneck.
        for (i, cf) in self.checked.flows.iter().enumerate() {
            let Some((ap, _, _)) = self.flows[i].access else {
                continue;
            };
            let p = &mut self.ports[ap as usize];
            let Some(rate) = p.rate_bps else { continue };
            let (unsent_n, unsent_payload) = p.unsent(self.end);
            let st = &p.stats;
            let payload_bps = (st.payload_out - unsent_payload) as f64 * 8.0 / run_s;
            let mut by_reason = BTreeMap::new();
            let host_drops: u64 = self.flows[i]
                .ledger
                .rows()
                .iter()
                .filter(|r| r.reason == REASON_HOST_QUEUE_FULL)
                .map(|r| r.packets)
                .sum();
            if host_drops > 0 {
                by_reason.insert(REASON_HOST_QUEUE_FULL.to_string(), host_drops);
            }
            let q = &st.queue_delay;
            let mtu = cf
                .path
                .iter()
                .map(|&l| sc.links[l].mtu)
                .min()
                .unwrap_or(1500);
            let limit = match p.limit {
                Limit::Packets(n) => format!("host {n}p"),
                Limit::Bytes(b) => format!("host {b}B"),
            };
            links.push(LinkSummary {
                name: format!("access:{}", cf.id),
                capacity_bps: rate,
                utilization: throughput::utilization(payload_bps, rate, mtu),
                drops: st.drops() + host_drops,
                queue_delay_ms: q.stats_ms_above(0.0).into(),
                mtu: Some(mtu),
                delay_ms: Some(p.delay_ns as f64 / 1e6),
                distance_km: None,
                queue: Some(limit),
                drops_by_reason: by_reason,
                packets_forwarded: Some(st.packets_out - unsent_n),
                series: self.port_series[ap as usize].take().map(|s| s.0),
            });
        }
        // The links aggregate utilization is judged against: the path every flow of a dumbbell
        // shares, or a parking lot's chain of bottlenecks.
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
        let slowest = |path: &[usize]| {
            path.iter()
                .copied()
                .min_by(|&a, &b| {
                    let pa = throughput::payload_capacity_bps(sc.links[a].rate.0, sc.links[a].mtu);
                    let pb = throughput::payload_capacity_bps(sc.links[b].rate.0, sc.links[b].mtu);
                    pa.total_cmp(&pb)
                })
                .expect("paths are not empty")
        };
        // What limits each flow: the slowest link of its path, or its own access link (the
        // host's card) when that is slower — seed 000's Table 1 flows are limited by their
        // 1 Gb/s cards, not by the 2.5 Gb/s circuit they share.
        let limits: Vec<FlowLimit> = self
            .checked
            .flows
            .iter()
            .map(|cf| {
                let b = &sc.links[slowest(&cf.path)];
                let link = Capacity {
                    rate_bps: b.rate.0,
                    mtu: b.mtu,
                };
                match sc.flows[cf.spec].access.rate {
                    Some(r) if r.0 < b.rate.0 => FlowLimit {
                        capacity: Capacity {
                            rate_bps: r.0,
                            ..link
                        },
                        access: true,
                    },
                    _ => FlowLimit {
                        capacity: link,
                        access: false,
                    },
                }
            })
            .collect();
        let mut flows = Vec::new();
        for (i, cf) in self.checked.flows.iter().enumerate() {
            let f = &self.flows[i];
            let s = f.sender.as_ref().expect("scenario flows keep their state");
            let snap = s.snapshot();
            let h = s.rtt();
            let min_rtt = h.min().unwrap_or(0) as f64;
            flows.push(flow_summary(FlowCounts {
                id: cf.id,
                cc: cf.cc.algorithm.to_string(),
                params: Some(cf.cc.to_string()),
                bytes_delivered: f.delivered(),
                active_s: (cf.stop.min(self.end) - cf.start) as f64 / 1e9,
                start_s: Some(cf.start as f64 / 1e9),
                stop_s: Some(cf.stop.min(self.end) as f64 / 1e9),
                capacity: Some(limits[i].capacity),
                distance_km: Some(cf.path.iter().map(|&l| sc.links[l].distance_km).sum()),
                min_rtt_ms: min_rtt / 1e6,
                queueing_delay_ms: Some(h.stats_ms_above(min_rtt)),
                packets_sent: Some(snap.packets_sent),
                packets_lost: Some(f.dropped),
                retransmits: snap.retransmits,
                loss_basis: LossBasis::Drops,
                interval_bps: per_second(&self.flow_series[i], sc.output.interval.0),
                drops: f.ledger.rows(),
                series: Some(std::mem::take(&mut self.flow_series[i])),
            }));
        }
        // Aggregate utilization is that of the most loaded bottleneck: for each link of the
        // chain, the payload of the scenario's flows that cross it ÷ the capacity they can use
        // there, net of headers, and the largest of these. That capacity is the link's, or the
        // sum of the flows' own limits (their access links) when that is smaller, so a flow
        // held to its 1 Gb/s card is not judged against a 2.5 Gb/s link. On a dumbbell every
        // flow crosses the shared path, so this is the flows' total ÷ the slowest shared link
        // (docs/measurements.md's definition). On a parking lot a long flow counts once on
        // every link it crosses, so the sum of all flows is never divided by one link's
        // capacity (it would read above 100 %).
        let bottlenecks = chain
            .iter()
            .map(|&l| {
                let crossing: Vec<usize> = (0..self.checked.flows.len())
                    .filter(|&i| self.checked.flows[i].path.contains(&l))
                    .collect();
                let bytes: u64 = crossing.iter().map(|&i| self.flows[i].delivered()).sum();
                let link = &sc.links[l];
                let own: f64 = crossing
                    .iter()
                    .map(|&i| limits[i].capacity.payload_bps())
                    .sum();
                let link_payload = throughput::payload_capacity_bps(link.rate.0, link.mtu);
                if own < link_payload && crossing.iter().all(|&i| limits[i].access) {
                    let ids: Vec<String> = crossing
                        .iter()
                        .map(|&i| self.checked.flows[i].id.to_string())
                        .collect();
                    let by = match ids.as_slice() {
                        [one] => format!("the access link of flow {one}"),
                        _ => format!("the access links of flows {}", ids.join(", ")),
                    };
                    Bottleneck {
                        name: Some(by),
                        capacity_bps: crossing.iter().map(|&i| limits[i].capacity.rate_bps).sum(),
                        payload_bps: own,
                        bytes,
                    }
                } else {
                    Bottleneck {
                        name: Some(link.name.clone()),
                        capacity_bps: link.rate.0,
                        payload_bps: link_payload,
                        bytes,
                    }
                }
            })
            .collect();
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
                let active = (c.stop - c.start) as f64 / 1e9;
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
        let mut meta = BTreeMap::new();
        meta.insert(
            "simulator".into(),
            format!("longhaul-sim {}", env!("CARGO_PKG_VERSION")),
        );
        meta.insert("events".into(), self.event_count.to_string());
        meta.insert(
            "transport".into(),
            match sc.transport {
                TransportKind::Proto => "proto".into(),
                TransportKind::Model => "model".into(),
                TransportKind::ProtoSecure => "proto_secure".into(),
            },
        );
        let aggregate = aggregate(
            &flows,
            AggregateCounts {
                bytes_delivered: self.total_delivered(),
                span_s: run_s,
                interval_bps: self.per_second.iter().map(|&b| b as f64 * 8.0).collect(),
                bottlenecks,
                distance: Distance::PerFlow,
                series: Some(std::mem::take(&mut self.aggregate_series)),
            },
        );
        let summary = Summary {
            scenario: self.checked.name.clone(),
            mode: Mode::Sim,
            duration_s: run_s,
            seed: sc.seed,
            links,
            flows,
            aggregate,
            claims: Vec::new(),
            meta,
            provenance: None,
        };
        Outcome {
            summary,
            cross_traffic: cross,
            ports,
            drops: std::mem::take(&mut self.drops),
            drops_unlogged: self.drops_unlogged,
            events: self.event_count,
            packet_hops: self.packet_count,
            threads: 1,
        }
    }
}

/// The summary's name for a drop reason (`longhaul_metrics::loss`).
fn summary_reason(r: DropReason) -> &'static str {
    match r {
        DropReason::QueueFull => REASON_QUEUE_FULL,
        DropReason::RedEarly | DropReason::RedForced => REASON_AQM,
        DropReason::RandomLoss => REASON_RANDOM,
        DropReason::HostQueueFull => REASON_HOST_QUEUE_FULL,
    }
}

/// A flow's throughput over whole 1-s intervals, from its sampled series (when the sampling
/// interval divides a second; otherwise no per-flow CoV is reported).
fn per_second(series: &FlowSeries, interval_ns: u64) -> Vec<f64> {
    if interval_ns == 0 || 1_000_000_000 % interval_ns != 0 {
        return Vec::new();
    }
    let k = (1_000_000_000 / interval_ns) as usize;
    series
        .throughput_bps
        .chunks_exact(k)
        .map(|c| c.iter().sum::<f64>() / k as f64)
        .collect()
}

/// What a flow's endpoints are created with.
struct Endpoints {
    /// Path MTU: bytes on the wire of a full packet.
    mtu: u32,
    start: u64,
    stop: u64,
    bytes: Option<u64>,
    ecn: bool,
    /// Bottleneck rate × base RTT, to size buffers and windows.
    bdp_bytes: u64,
    /// Model transport: Linux 2.4's delayed ACKs and per-ACK growth (`stack = "linux-2.4"`).
    linux24: bool,
}

/// A flow's two endpoints.
type FlowEnds = (Box<AnySender>, Box<AnyReceiver>);

/// A sender and a receiver of the scenario's transport.
fn make_endpoints(
    kind: TransportKind,
    cc: Box<dyn longhaul_cc::CongestionControl>,
    spec: &CcSpec,
    setup: Setup,
    e: Endpoints,
) -> Result<FlowEnds, String> {
    match kind {
        TransportKind::Model => {
            let cfg = ModelConfig {
                mss: e.mtu - HEADER_BYTES,
                header: HEADER_BYTES,
                start: e.start,
                stop: e.stop,
                bytes: e.bytes,
                ecn: e.ecn,
                linux24: e.linux24,
            };
            Ok((
                Box::new(AnySender::Model(ModelSender::new(cfg, cc))),
                Box::new(AnyReceiver::Model(ModelReceiver::with_delayed_acks(
                    HEADER_BYTES,
                    e.linux24,
                ))),
            ))
        }
        TransportKind::Proto | TransportKind::ProtoSecure => {
            let mut config = longhaul_proto::Config::new(spec.clone());
            if kind == TransportKind::ProtoSecure {
                // One key pair for every end, trusted by every end: the simulation exercises
                // the handshake and the sealing, not key management.
                config.security = longhaul_proto::Security::noise(
                    longhaul_proto::Identity::from_private([0x5a; 32]),
                    longhaul_proto::PeerPolicy::Any,
                );
            }
            config.mss = e.mtu - IP_UDP_OVERHEAD - config.data_overhead() as u32;
            config.setup = setup;
            config.synthetic = true;
            config.idle_timeout = None;
            // Windows and buffers never limit a simulated bulk transfer: 4 BDPs, at least the
            // transport's defaults.
            let window = (4 * e.bdp_bytes).max(config.recv_window);
            config.recv_window = window;
            config.send_buffer = window;
            let receiver = ProtoReceiver::new(config.clone()).map_err(|err| err.to_string())?;
            Ok((
                Box::new(AnySender::Proto(ProtoSender::new(
                    config, e.start, e.stop, e.bytes, e.ecn,
                ))),
                Box::new(AnyReceiver::Proto(receiver)),
            ))
        }
    }
}

/// The capacity that limits one flow: the slowest link of its path, or its access link.
#[derive(Clone, Copy)]
struct FlowLimit {
    capacity: Capacity,
    /// The flow's own access link (its host's card), not a link of the path.
    access: bool,
}
