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
//! Linux 2.4's `tcp_write_xmit` stops at the first failed transmission. A host given
//! `host_stalls` stops now and then: while it is stalled, what reaches it waits and it sends
//! nothing (`stalls`).
//!
//! Determinism. Time is integer ns; events at the same time run in a fixed
//! order of their kind and index (`events`), not of when they were scheduled; every
//! random stream (per port, per cross source, per controller) is seeded from the scenario seed
//! and the element's index, so the same scenario and seed give the same result bit for bit.
//!
//! The engine is split by concept: `build` (the network from the scenario), `run` (the event
//! loop), `links` (packets through ports, drops), `endpoints` (senders and receivers, their
//! timers and transports), `stalls` (hosts that pause), `cross_traffic`, `sample` (the time
//! series), and the outcome: `link_report`, `flow_report` and `outcome`; `split` runs the same
//! engine on two threads.

mod build;
mod cross_traffic;
mod endpoints;
mod flow_report;
mod link_report;
mod links;
mod outcome;
mod run;
mod sample;
mod split;
mod stalls;

pub use split::SplitWhen;

// Shared by the engine's modules (each has `use super::*`).
use crate::bufpool::BufPool;
use crate::cross::{CrossConfig, CrossSource};
use crate::events::{Ev, EventQueue};
use crate::packet::{Dir, Packet, NO_BUF};
use crate::port::DropReason;
use crate::port::{Enqueued, Port, QueueLimits};
use crate::red::Red;
use crate::scenario::{Checked, OnFull, QueueKind, QueueSpec, TopologyKind};
use crate::scenario::{Scenario, Stack, TransportKind};
use crate::stall::HostStall;
use crate::summary::*;
use crate::transport::model::{ModelConfig, ModelReceiver, ModelSender};
use crate::transport::proto::{ProtoReceiver, ProtoSender, IP_UDP_OVERHEAD};
use crate::transport::{AnyReceiver, AnySender, Endpoint, FlowReceiver, FlowSender};
use longhaul_cc::{CcSpec, Setup};
use longhaul_metrics::assemble::{aggregate, flow_summary, AggregateCounts, Bottleneck};
use longhaul_metrics::assemble::{Distance, FlowCounts, LossBasis};
use longhaul_metrics::loss::{
    LossLedger, REASON_AQM, REASON_QUEUE_FULL, REASON_RANDOM, REASON_TOO_BIG,
};
use longhaul_metrics::summary::ResponsiveCross;
use longhaul_metrics::summary::Summary;
use longhaul_metrics::summary::{AggregateSeries, FlowSeries, LinkSeries, LinkSummary, Mode};
use longhaul_metrics::throughput::{self, Capacity};
use longhaul_path::delay::DelayConfig;
use longhaul_path::loss::LossConfig;
use longhaul_path::serializer::Serializer;
use longhaul_path::trace::Trace;
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

/// Why a checked scenario could not be run.
#[derive(Debug, Error)]
pub enum SimError {
    /// The run would not fit in the memory available ([`crate::budget`]).
    #[error("{message}")]
    Memory {
        /// The estimate, the memory available and what to change.
        message: String,
    },
    /// A flow's transport refused its configuration.
    #[error("flow {flow}: cannot configure the transport: {message}")]
    Transport {
        /// The flow's id.
        flow: String,
        /// The transport's refusal.
        message: String,
    },
    /// A flow's congestion control could not be built.
    #[error("flow {flow}: cannot build congestion control `{cc}`: {message}")]
    Controller {
        /// The flow's id.
        flow: String,
        /// The congestion control's spec.
        cc: String,
        /// Why it could not be built.
        message: String,
    },
}

/// Where a run is, for progress displays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// Simulated time reached, ns.
    pub sim_ns: u64,
    /// The run's simulated duration, ns.
    pub duration_ns: u64,
    /// Events processed so far.
    pub events: u64,
    /// Packets handed to a port so far (once per hop).
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
    /// Payload bytes that reached the receiving host, retransmissions included: what the path
    /// carried for this flow, the series' throughput (in-order delivery is its goodput).
    arrived: u64,
    arrived_at_sample: u64,
    /// When the receiver last delivered payload in order: a flow whose application stopped
    /// writing goes on until its send buffer has drained.
    last_delivery: u64,
    /// The sender's cumulative losses and retransmissions at the last sample.
    lost_at_sample: u64,
    retransmits_at_sample: u64,
    /// Kept after a transfer finishes and its state is released.
    final_delivered: u64,
    /// Each host's stalls (sender, receiver), if it has any (`stalls`).
    stalls: [Option<Box<HostStall>>; 2],
}

impl Flow {
    /// A flow over the routes `fwd` and `rev` with no endpoints yet, no timer armed, and
    /// nothing delivered, lost or dropped.
    fn new(id: Option<u32>, cross: Option<usize>, fwd: Box<[u32]>, rev: Box<[u32]>) -> Flow {
        Flow {
            id,
            cross,
            fwd,
            rev,
            sender: None,
            receiver: None,
            armed: [NONE; 2],
            access: None,
            dropped: 0,
            ledger: LossLedger::new(),
            delivered_at_sample: 0,
            arrived: 0,
            arrived_at_sample: 0,
            last_delivery: 0,
            lost_at_sample: 0,
            retransmits_at_sample: 0,
            final_delivered: 0,
            stalls: [None, None],
        }
    }

    fn delivered(&self) -> u64 {
        self.receiver
            .as_ref()
            .map(|r| r.delivered_bytes())
            .unwrap_or(self.final_delivered)
    }
}

struct CrossState {
    src: CrossSource,
    /// Index of the link it loads.
    link: usize,
    port: u32,
    /// Responsive: controller, delivered payload and transfers completed.
    cc: Option<CcSpec>,
    delivered: u64,
    completed: u64,
}

/// One run: the network built from a checked scenario, its pending events and its counters.
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
    arrived_at_sample: u64,
    /// Raw events, when the run keeps them (`keep_trace`).
    trace: Option<Box<crate::trace::Trace>>,
    drops: Vec<DropRecord>,
    drops_unlogged: u64,
    per_second: Vec<u64>,
    delivered_at_second: u64,
    event_count: u64,
    packet_count: u64,
    /// Set while the run is split across two threads (`split`).
    link: Option<Box<split::Link>>,
}

/// The MTU of a flow's path: its smallest link's (1500 for an empty path).
fn path_mtu(sc: &Scenario, path: &[usize]) -> u32 {
    path.iter().map(|&l| sc.links[l].mtu).min().unwrap_or(1500)
}

/// The seed of the random stream of the scenario's `cross_traffic[index]` source (its packets,
/// or its responsive transfers' sizes and times), from the scenario's seed. The lab draws
/// responsive transfers from the same stream.
pub fn cross_seed(scenario_seed: u64, index: usize) -> u64 {
    mix(scenario_seed, 2_000_000 + index as u64)
}

fn mix(seed: u64, stream: u64) -> u64 {
    // SplitMix64 finaliser: independent, well-spread seeds per element.
    let mut z = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
