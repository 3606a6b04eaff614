//! The scenario file: one TOML document that describes an experiment.
//!
//! The same file drives `longhaul sim` (this simulator) and `longhaul lab` (the emulator), so it
//! speaks of links, queues, flows and cross traffic, never of simulator internals. Every table
//! rejects unknown keys, and every error names the file, the field (as a path such as
//! `links[0].queue.kind`) and what is allowed. `docs/scenario.md` is the user's copy of this
//! schema.
//!
//! ```toml
//! name = "dumbbell-fast"        # shown in reports (default: the file name)
//! duration = "60s"              # simulated time
//! seed = 1                      # every random choice derives from it
//! transport = "proto"           # longhaul's transport (default), or "model": a compact
//!                               # TCP-like model with 40-byte headers and an ACK per packet,
//!                               # or "proto_secure": longhaul's transport with its Noise
//!                               # handshake and every datagram sealed (27 bytes more each)
//!
//! [[links]]                     # a duplex link; each direction has its own queue
//! name = "core"
//! rate = "1gbit"                # capacity each way (`reverse_rate` to differ)
//! # trace = "cell.up"           # or a mahimahi trace file, instead of `rate` (relative to
//! #                             # this file; `reverse_trace` for the ACK direction)
//! delay = "90ms"                # one-way propagation delay
//! jitter = "0ms"                # standard deviation of a normal delay offset (keeps order)
//! reorder = 0.0                 # probability that a packet arrives `reorder_by` early
//! reorder_by = "0ms"
//! duplicate = 0.0               # probability that a packet arrives twice
//! mtu = 1500                    # bytes on the wire per full packet (default 1500)
//! overhead = "0B"               # framing the link adds to each packet: serialisation time,
//!                               # byte limits and RED count size + overhead (Ethernet: 38)
//! distance_km = 10037           # for bit-meters/second (default 0)
//! loss = 0.0                    # random loss probability, data direction, or a model:
//! # loss = { model = "gilbert_elliott", p = 0.01, r = 0.25, loss_good = 0, loss_bad = 1 }
//! reverse_loss = 0.0            # the same for the ACK direction
//! queue = { kind = "droptail", packets = 1000 }   # or bytes = "1.5M"
//! # queue = { kind = "red", packets = 1000, min_th = 50, max_th = 150, max_p = 0.1,
//! #           weight = 0.002, gentle = true, ecn = true }
//! # reverse_queue = { ... }     # the ACK direction's queue (default: same as `queue`)
//!
//! [topology]
//! kind = "dumbbell"             # every flow crosses `bottleneck`
//! bottleneck = "core"
//! # kind = "parking_lot"; chain = ["a", "b", "c"]: flows name a contiguous `path` of the chain
//!
//! [[flows]]
//! cc = "fast:alpha=200"         # or a table: cc = { name = "fast", alpha = 200 }
//! count = 1                     # identical flows (ids are assigned in file order)
//! start = "0s"                  # when the sender starts
//! stop = "60s"                  # when it stops sending (default: the end)
//! extra_rtt = "0ms"             # added round-trip delay on this flow's access path
//! path = ["core"]               # parking lot only: the links this flow crosses, in order
//! bytes = "1G"                  # optional transfer size (default: unlimited bulk transfer)
//! access = { rate = "10gbit", delay = "0ms", packets = 10000 }  # the sender's own link
//! # access.on_full = "block"  # full host queue: the sender waits ("block") or, as Linux 2.4,
//! #                           # the packet is dropped and the sender backs off ("drop")
//! ecn = false                   # send ECN-capable packets
//! stack = "model"               # transport = "model": "model" (an ACK per packet) or
//!                               # "linux-2.4" (delayed ACKs, window growth per ACK)
//! host_stalls = { sender = { rate = "4/s", mean = "2.5ms" }, receiver = { rate = "10/s", mean = "3ms" } }
//!                               # each host now and then stops running its network stack
//!                               # for an exponential time of mean `mean`, `rate` times a
//!                               # second of running (default: never; `crate::stall`)
//!
//! [[cross_traffic]]
//! kind = "poisson"              # cbr | poisson | onoff | web
//! link = "core"
//! rate = "100mbit"              # average offered rate
//! packet_size = 1500            # bytes (default: the link's MTU)
//! start = "0s"; stop = "60s"
//! on = "100ms"; off = "100ms"   # onoff: mean on/off periods (exponential)
//! size = "100k"; shape = 1.2    # web: mean transfer size, Pareto shape
//! responsive = false            # true: each transfer is a flow with `cc` (default reno)
//!
//! [output]
//! interval = "100ms"            # time-series sampling interval (default: the first of 100 ms,
//!                               # 200 ms, 250 ms, 500 ms, 1 s, 2 s, 5 s, 10 s at least as long
//!                               # as the longest flow's RTT, so a bin spans a round trip)
//! drop_log = true               # record every drop (time, link, flow, reason)
//! drop_log_limit = 100000       # at most this many records (later drops are only counted)
//! ```
//!
//! `--set key=value` overrides any field before validation, by dotted path with array indices:
//! `--set duration=30s --set flows.0.cc=reno --set links.0.queue.packets=500`. The value is read
//! as TOML when it parses as TOML (`500`, `true`, `{ name = "fast" }`) and as a string otherwise.

use crate::delay::DelayConfig;
use crate::red::RedParams;
use crate::trace::Trace;
use crate::units::{Bytes, EventRate, Nanos, Rate};
use longhaul_cc::CcSpec;
use serde::{Deserialize, Serialize};
use std::path::Path;
use thiserror::Error;

mod check;
mod link_loss;
mod overrides;

pub use check::{MAX_FLOWS, MAX_RATE_BPS, MAX_SAMPLES, MIN_RATE_BPS};
pub use link_loss::LinkLoss;
pub use overrides::apply_override;

/// A scenario as written in the file, with defaults not yet applied.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Shown in reports (default: the file's name).
    #[serde(default)]
    pub name: Option<String>,
    /// Simulated time.
    pub duration: Nanos,
    /// Every random choice (loss, RED, cross traffic, BBR's phase) derives from it (default 1).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Which transport carries the flows.
    #[serde(default)]
    pub transport: TransportKind,
    /// The duplex links.
    pub links: Vec<LinkSpec>,
    /// How the links are connected.
    pub topology: TopologySpec,
    /// The flows.
    pub flows: Vec<FlowSpec>,
    /// Cross-traffic sources.
    #[serde(default)]
    pub cross_traffic: Vec<CrossSpec>,
    /// Time-series and drop-log settings.
    #[serde(default)]
    pub output: OutputSpec,
}

fn default_seed() -> u64 {
    1
}

/// The transport the simulated flows run.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// longhaul's own transport (`longhaul-proto`), exactly as `longhaul send` runs it.
    #[default]
    Proto,
    /// The simulator's compact TCP-like model (40-byte headers, an ACK per packet).
    Model,
    /// longhaul's own transport with security on, as `longhaul send` runs it across the
    /// internet: the Noise handshake, then every datagram sealed (27 bytes of seal each, and
    /// the cost of encryption in the simulator's own run time). Off by default for speed.
    ProtoSecure,
}

/// One duplex link (`[[links]]`); each direction has its own queue.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Unique among the links.
    pub name: String,
    /// Capacity in the data direction; with `trace`, the trace's mean rate (filled in by the
    /// checks: a file gives one or the other).
    #[serde(default = "no_rate")]
    pub rate: Rate,
    /// Capacity in the ACK direction (default: `rate`, or the `trace`; with `reverse_trace`,
    /// its mean rate).
    #[serde(default)]
    pub reverse_rate: Option<Rate>,
    /// A mahimahi trace file (`crate::trace`) whose delivery opportunities set the data
    /// direction's capacity instead of `rate`; a relative path is read from the scenario
    /// file's directory.
    #[serde(default)]
    pub trace: Option<String>,
    /// The ACK direction's trace (default: `trace`, unless `reverse_rate` is given).
    #[serde(default)]
    pub reverse_trace: Option<String>,
    /// One-way propagation delay.
    pub delay: Nanos,
    /// Standard deviation of a normally distributed offset added to each packet's delay, both
    /// directions; a packet never overtakes the one before it (`crate::delay`).
    #[serde(default)]
    pub jitter: Nanos,
    /// Probability that a packet's delay is cut by `reorder_by`, so it overtakes those sent
    /// just before it; both directions.
    #[serde(default)]
    pub reorder: f64,
    /// How much earlier a reordered packet arrives.
    #[serde(default)]
    pub reorder_by: Nanos,
    /// Probability that a packet is duplicated: a copy arrives with it (netem's `duplicate`);
    /// both directions.
    #[serde(default)]
    pub duplicate: f64,
    /// Bytes on the wire of a full packet (default 1500).
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// Framing the link adds to every packet in both directions (Ethernet's preamble, header,
    /// FCS and gap: 38 bytes): each packet occupies its size plus this much of the link's
    /// capacity and queue (`crate::queue`); default 0.
    #[serde(default = "no_overhead")]
    pub overhead: Bytes,
    /// Length, for bit-meters per second (default 0).
    #[serde(default)]
    pub distance_km: f64,
    /// Random loss on the wire, data direction: a probability per packet or a model
    /// (`crate::loss`).
    #[serde(default)]
    pub loss: LinkLoss,
    /// Random loss on the wire, ACK direction.
    #[serde(default)]
    pub reverse_loss: LinkLoss,
    /// The data direction's output queue (default: drop-tail, 1000 packets).
    #[serde(default)]
    pub queue: QueueSpec,
    /// The ACK direction's output queue (default: same as `queue`).
    #[serde(default)]
    pub reverse_queue: Option<QueueSpec>,
}

fn default_mtu() -> u32 {
    1500
}

fn no_overhead() -> Bytes {
    Bytes(0)
}

/// `rate` when a file gives none (it then needs a `trace`).
fn no_rate() -> Rate {
    Rate(f64::NAN)
}

impl LinkSpec {
    /// The delay line of each direction (`crate::delay`): `delay`, `jitter`, `reorder`,
    /// `reorder_by` and `duplicate`.
    pub fn delay_config(&self) -> DelayConfig {
        DelayConfig {
            delay_ns: self.delay.0,
            jitter_ns: self.jitter.0,
            reorder_p: self.reorder,
            reorder_by_ns: self.reorder_by.0,
            duplicate_p: self.duplicate,
        }
    }
}

/// The traces a link's two directions follow, read by the checks (`None`: a constant rate).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkTraces {
    /// The data direction's.
    pub forward: Option<Trace>,
    /// The ACK direction's.
    pub reverse: Option<Trace>,
}

/// A queue discipline.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    /// First in, first out; arrivals to a full queue are dropped.
    Droptail,
    /// Random Early Detection ([`crate::red`]).
    Red,
}

/// A queue discipline and its size. Sizes are in packets or in bytes (not both).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    /// The discipline.
    pub kind: QueueKind,
    /// Size in packets (waiting, not counting the one being transmitted).
    #[serde(default)]
    pub packets: Option<u64>,
    /// Size in bytes (waiting, not counting the packet being transmitted).
    #[serde(default)]
    pub bytes: Option<Bytes>,
    /// RED: average queue (packets, or bytes for a byte-sized queue) where dropping starts.
    #[serde(default)]
    pub min_th: Option<f64>,
    /// RED: average queue where the drop probability reaches `max_p`.
    #[serde(default)]
    pub max_th: Option<f64>,
    /// RED: drop probability at `max_th` (default 0.1).
    #[serde(default)]
    pub max_p: Option<f64>,
    /// RED: EWMA weight of the average queue (Floyd & Jacobson: 0.002).
    #[serde(default)]
    pub weight: Option<f64>,
    /// RED: ramp the drop probability from `max_p` to 1 between `max_th` and 2·`max_th`.
    #[serde(default)]
    pub gentle: Option<bool>,
    /// RED: mark ECN-capable packets instead of dropping them.
    #[serde(default)]
    pub ecn: Option<bool>,
}

impl QueueSpec {
    /// RED's settings from this table, each one it omits at its default (`crate::red`'s
    /// header); `limit` is the queue's size in its own unit (packets or bytes).
    pub fn red_params(&self, limit: f64) -> RedParams {
        let max_th = self.max_th.unwrap_or(limit / 2.0);
        RedParams {
            min_th: self.min_th.unwrap_or(max_th / 3.0),
            max_th,
            max_p: self.max_p.unwrap_or(0.1),
            weight: self.weight.unwrap_or(0.002),
            gentle: self.gentle.unwrap_or(true),
            ecn: self.ecn.unwrap_or(false),
        }
    }
}

impl Default for QueueSpec {
    /// 1000 packets of drop-tail, Linux's default `txqueuelen`.
    fn default() -> Self {
        QueueSpec {
            kind: QueueKind::Droptail,
            packets: Some(1000),
            bytes: None,
            min_th: None,
            max_th: None,
            max_p: None,
            weight: None,
            gentle: None,
            ecn: None,
        }
    }
}

/// How flows share the links.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    /// Every flow crosses one bottleneck link.
    Dumbbell,
    /// A chain of links; each flow crosses a contiguous run of it.
    ParkingLot,
}

/// The `[topology]` table.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    /// Dumbbell or parking lot.
    pub kind: TopologyKind,
    /// Dumbbell: the shared link.
    #[serde(default)]
    pub bottleneck: Option<String>,
    /// Parking lot: the chain of links, in data order.
    #[serde(default)]
    pub chain: Option<Vec<String>>,
}

/// A sender's own access link (its NIC and the path to the first router).
#[derive(Clone, Debug, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AccessSpec {
    /// Rate of the sender's NIC; unlimited when absent.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// One-way delay of the access link (both directions).
    #[serde(default)]
    pub delay: Option<Nanos>,
    /// Host queue (txqueuelen) in packets; default 1000.
    #[serde(default)]
    pub packets: Option<u64>,
    /// What a full host queue does to the sender's next packet (needs `rate`).
    #[serde(default)]
    pub on_full: OnFull,
}

/// What happens when a sender hands a packet to its full host queue.
///
/// `Block` is Linux since TCP small queues (2.6.x–today): the socket waits for room, nothing is
/// lost and the sender only learns that its window was not the limit. `Drop` is Linux 2.4: the
/// device queue (pfifo_fast, `txqueuelen` packets) drops the packet, `dev_queue_xmit` returns
/// `NET_XMIT_DROP`, and `tcp_transmit_skb` calls `tcp_enter_cwr` — a local congestion signal
/// that reduces the window once per window of data; the segment was never counted as sent and
/// goes out again with the next transmission (web100 counts these as "SendStall").
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum OnFull {
    /// The sender waits for room; nothing is lost (Linux since TCP small queues).
    #[default]
    Block,
    /// The packet is dropped at the host and taken as a congestion signal (Linux 2.4).
    Drop,
}

/// One `[[flows]]` entry: `count` identical flows.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Congestion control: a spec string (`"fast:alpha=200"`) or a table (`{ name = "fast", alpha =
    /// 200 }`).
    pub cc: toml::Value,
    /// Identical flows (default 1); ids are assigned in file order.
    #[serde(default = "one")]
    pub count: u32,
    /// When the application starts writing.
    #[serde(default)]
    pub start: Nanos,
    /// When it stops writing (default: the end of the run).
    #[serde(default)]
    pub stop: Option<Nanos>,
    /// Round-trip delay added on the flow's own access path, half each way.
    #[serde(default)]
    pub extra_rtt: Nanos,
    /// Parking lot only: the links crossed, in order (default: the whole chain).
    #[serde(default)]
    pub path: Option<Vec<String>>,
    /// A transfer of this size instead of a bulk flow.
    #[serde(default)]
    pub bytes: Option<Bytes>,
    /// The sender's own link (NIC rate, delay, host queue).
    #[serde(default)]
    pub access: AccessSpec,
    /// Send ECN-capable packets.
    #[serde(default)]
    pub ecn: bool,
    /// Which TCP the model transport imitates (`transport = "model"` only).
    #[serde(default)]
    pub stack: Stack,
    /// Random pauses of the flow's hosts (`crate::stall`).
    #[serde(default, skip_serializing_if = "HostStallsSpec::is_none")]
    pub host_stalls: HostStallsSpec,
}

/// When a flow's two hosts stop running their network stack (`crate::stall`); a host not
/// named never stalls.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostStallsSpec {
    /// The sender host's stalls.
    #[serde(default)]
    pub sender: Option<StallSpec>,
    /// The receiver host's stalls.
    #[serde(default)]
    pub receiver: Option<StallSpec>,
}

impl HostStallsSpec {
    /// Neither host stalls.
    pub fn is_none(&self) -> bool {
        self.sender.is_none() && self.receiver.is_none()
    }
}

/// One host's stalls: they begin at `rate` per second of running (exponential gaps) and last
/// an exponential time of mean `mean`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StallSpec {
    /// How often the host stalls, per second of running; 0 means never.
    pub rate: EventRate,
    /// Mean length of a stall.
    pub mean: Nanos,
}

/// The most stalls a host may be given per second of running: one per 100 µs, far more than
/// any host measured; beyond, the stall events would outnumber the packets.
pub const MAX_STALL_RATE: f64 = 10_000.0;

/// The TCP behaviour of a flow on the model transport.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
pub enum Stack {
    /// An ACK for every packet; the window grows by the packets each ACK acknowledges.
    #[default]
    #[serde(rename = "model")]
    Model,
    /// Linux 2.4: the receiver acknowledges every second packet (at once when a packet arrives
    /// out of order, within 40 ms otherwise: `tcp_send_delayed_ack`, `TCP_ATO_MIN`), and the
    /// sender's window grows once per ACK, whatever it acknowledges (`tcp_cong_avoid`; byte
    /// counting, RFC 3465, came later): half a packet per RTT in congestion avoidance.
    #[serde(rename = "linux-2.4")]
    Linux24,
}

fn one() -> u32 {
    1
}

/// A cross-traffic arrival process.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CrossKind {
    /// Constant bit rate.
    Cbr,
    /// Poisson arrivals (exponential gaps).
    Poisson,
    /// Exponential on and off periods, CBR while on.
    Onoff,
    /// Poisson arrivals of Pareto-sized transfers.
    Web,
}

impl CrossKind {
    /// The scenario file's name for it (`kind = "web"`).
    pub fn name(self) -> &'static str {
        match self {
            CrossKind::Cbr => "cbr",
            CrossKind::Poisson => "poisson",
            CrossKind::Onoff => "onoff",
            CrossKind::Web => "web",
        }
    }
}

/// One `[[cross_traffic]]` source.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CrossSpec {
    /// The arrival process.
    pub kind: CrossKind,
    /// The link it loads.
    pub link: String,
    /// Average offered rate.
    pub rate: Rate,
    /// Bytes per packet (default: the link's MTU).
    #[serde(default)]
    pub packet_size: Option<Bytes>,
    /// When it starts.
    #[serde(default)]
    pub start: Nanos,
    /// When it stops (default: the end of the run).
    #[serde(default)]
    pub stop: Option<Nanos>,
    /// On/off: mean on period.
    #[serde(default)]
    pub on: Option<Nanos>,
    /// On/off: mean off period.
    #[serde(default)]
    pub off: Option<Nanos>,
    /// Web: mean transfer size.
    #[serde(default)]
    pub size: Option<Bytes>,
    /// Web: Pareto shape of transfer sizes (must exceed 1 for a finite mean).
    #[serde(default)]
    pub shape: Option<f64>,
    /// True: traffic is carried by congestion-controlled flows that back off.
    #[serde(default)]
    pub responsive: bool,
    /// Congestion control of responsive traffic (default `reno`).
    #[serde(default)]
    pub cc: Option<toml::Value>,
    /// Send in the link's reverse (ACK) direction instead of the data direction.
    #[serde(default)]
    pub reverse: bool,
}

/// The `[output]` table.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Time-series sampling interval ([`AUTO_INTERVAL`]: chosen from the flows' RTTs).
    #[serde(default = "default_interval")]
    pub interval: Nanos,
    /// Record each drop in the drop log (default true).
    #[serde(default = "yes")]
    pub drop_log: bool,
    /// Drop records kept; later drops are only counted (default 100,000).
    #[serde(default = "default_drop_log_limit")]
    pub drop_log_limit: usize,
}

/// `output.interval` when the file gives none: chosen in `check` from the flows' RTTs.
pub const AUTO_INTERVAL: Nanos = Nanos(u64::MAX);

/// The intervals chosen from when none is given: they divide a second (so per-second figures
/// such as the CoV stay defined) or are whole seconds.
pub const AUTO_INTERVALS_MS: &[u64] = &[100, 200, 250, 500, 1000, 2000, 5000, 10_000];

fn default_interval() -> Nanos {
    AUTO_INTERVAL
}

/// The first of [`AUTO_INTERVALS_MS`] at least as long as `rtt_ns`: a bin shorter than a
/// round trip samples a window-based sender's once-per-RTT bursts and aliases into bands.
pub fn interval_for_rtt(rtt_ns: u64) -> Nanos {
    let ms = AUTO_INTERVALS_MS
        .iter()
        .copied()
        .find(|&ms| ms * 1_000_000 >= rtt_ns)
        .unwrap_or(*AUTO_INTERVALS_MS.last().expect("a list of intervals"));
    Nanos(ms * 1_000_000)
}
fn yes() -> bool {
    true
}
fn default_drop_log_limit() -> usize {
    100_000
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            interval: default_interval(),
            drop_log: true,
            drop_log_limit: default_drop_log_limit(),
        }
    }
}

/// What went wrong with a scenario, naming the file and the field.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{file}: cannot read the scenario: {error}")]
    Io {
        /// The file as named.
        file: String,
        /// Why it could not be read.
        error: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("{file}: not valid TOML: {message}")]
    Syntax {
        /// The file as named.
        file: String,
        /// The TOML parser's message.
        message: String,
    },
    /// A field has a value the simulator cannot use.
    #[error("{file}: field `{field}`: {message}")]
    Field {
        /// The file as named.
        file: String,
        /// The field, as a path (`links[0].queue.kind`).
        field: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// A `--set` override cannot be applied.
    #[error("--set {assignment}: {message}")]
    Override {
        /// The `--set` assignment as given.
        assignment: String,
        /// What is wrong with it.
        message: String,
    },
}

/// A scenario with every default applied and every reference checked.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The scenario as read, with its `--set` overrides.
    pub scenario: Scenario,
    /// The flows expanded by `count`, in id order.
    pub flows: Vec<CheckedFlow>,
    /// Per cross-traffic source: the link index and, if responsive, its controller.
    pub cross: Vec<CheckedCross>,
    /// Per link, the traces its directions follow.
    pub traces: Vec<LinkTraces>,
    /// The scenario's name, or the file's when it gives none.
    pub name: String,
}

/// One flow after `count` is expanded.
#[derive(Clone, Debug)]
pub struct CheckedFlow {
    /// The flow's id, in file order from 0.
    pub id: u32,
    /// Index into `scenario.flows`.
    pub spec: usize,
    /// Its congestion control, validated.
    pub cc: CcSpec,
    /// Link indices in data order.
    pub path: Vec<usize>,
    /// When the application starts writing, ns.
    pub start: u64,
    /// When it stops writing, ns (at most the run's duration).
    pub stop: u64,
}

/// One cross-traffic source, checked.
#[derive(Clone, Debug)]
pub struct CheckedCross {
    /// Index of the link it loads.
    pub link: usize,
    /// Bytes per packet.
    pub packet_size: u32,
    /// Responsive traffic's congestion control; `None` for unresponsive traffic.
    pub cc: Option<CcSpec>,
    /// When it starts, ns.
    pub start: u64,
    /// When it stops, ns (at most the run's duration).
    pub stop: u64,
}

impl Scenario {
    /// Read, override and check a scenario file.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Checked, ScenarioError> {
        Self::load_source(path, overrides).map(|(checked, _)| checked)
    }

    /// Read, override and check a scenario file, and return the text it held beside the
    /// result: what a run records (hashes) must be what it ran, not a second read of a file
    /// that may have changed or gone since.
    pub fn load_source(
        path: &Path,
        overrides: &[String],
    ) -> Result<(Checked, String), ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| ScenarioError::Io {
            file: file.clone(),
            error,
        })?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into());
        let checked = Self::parse(&text, &file, &stem, overrides)?;
        Ok((checked, text))
    }

    /// Parse scenario text. `file` names it in errors; `default_name` is used when the file has
    /// no `name`.
    pub fn parse(
        text: &str,
        file: &str,
        default_name: &str,
        overrides: &[String],
    ) -> Result<Checked, ScenarioError> {
        let mut doc: toml::Value = toml::from_str(text).map_err(|e| ScenarioError::Syntax {
            file: file.to_string(),
            message: e.to_string(),
        })?;
        for assignment in overrides {
            apply_override(&mut doc, assignment)?;
        }
        let scenario: Scenario = serde_path_to_error::deserialize(doc).map_err(|e| {
            let field = e.path().to_string();
            ScenarioError::Field {
                file: file.to_string(),
                field: if field == "." {
                    "(top level)".into()
                } else {
                    field
                },
                // toml appends "in `table`" on a second line; the field path says it better.
                message: e
                    .into_inner()
                    .to_string()
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string(),
            }
        })?;
        scenario.check(file, default_name)
    }
}
