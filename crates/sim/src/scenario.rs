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
//! delay = "90ms"                # one-way propagation delay
//! mtu = 1500                    # bytes on the wire per full packet (default 1500)
//! distance_km = 10037           # for bit-meters/second (default 0)
//! loss = 0.0                    # random loss probability, data direction
//! reverse_loss = 0.0            # random loss probability, ACK direction
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

use crate::units::{Bytes, EventRate, Nanos, Rate};
use longhaul_cc::CcSpec;
use serde::{Deserialize, Serialize};
use std::path::Path;
use thiserror::Error;

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
    /// Capacity in the data direction.
    pub rate: Rate,
    /// Capacity in the ACK direction (default: `rate`).
    #[serde(default)]
    pub reverse_rate: Option<Rate>,
    /// One-way propagation delay.
    pub delay: Nanos,
    /// Bytes on the wire of a full packet (default 1500).
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// Length, for bit-meters per second (default 0).
    #[serde(default)]
    pub distance_km: f64,
    /// Random loss probability per packet, data direction.
    #[serde(default)]
    pub loss: f64,
    /// Random loss probability per packet, ACK direction.
    #[serde(default)]
    pub reverse_loss: f64,
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

    /// Apply defaults and check every cross-reference and range.
    pub fn check(mut self, file: &str, default_name: &str) -> Result<Checked, ScenarioError> {
        let err = |field: String, message: String| ScenarioError::Field {
            file: file.to_string(),
            field,
            message,
        };
        let dur = self.duration.0;
        if dur == 0 {
            return Err(err("duration".into(), "must be positive".into()));
        }
        if self.links.is_empty() {
            return Err(err(
                "links".into(),
                "at least one [[links]] table is needed".into(),
            ));
        }
        let link_names: Vec<&str> = self.links.iter().map(|l| l.name.as_str()).collect();
        let known = link_names.join(", ");
        let find_link = |name: &str, field: String| {
            link_names
                .iter()
                .position(|n| *n == name)
                .ok_or_else(|| err(field, format!("no link named `{name}`; links are: {known}")))
        };
        for (i, l) in self.links.iter().enumerate() {
            if link_names[..i].contains(&l.name.as_str()) {
                return Err(err(
                    format!("links[{i}].name"),
                    format!("`{}` is used by two links", l.name),
                ));
            }
            if !(576..=65535).contains(&l.mtu) {
                return Err(err(
                    format!("links[{i}].mtu"),
                    format!("{} is outside 576..=65535 bytes", l.mtu),
                ));
            }
            for (f, p) in [("loss", l.loss), ("reverse_loss", l.reverse_loss)] {
                if !(0.0..1.0).contains(&p) {
                    return Err(err(
                        format!("links[{i}].{f}"),
                        format!("{p} is not a probability in [0, 1)"),
                    ));
                }
            }
            if !(l.distance_km >= 0.0 && l.distance_km.is_finite()) {
                return Err(err(
                    format!("links[{i}].distance_km"),
                    "must be a non-negative number of kilometres".into(),
                ));
            }
            check_rate(l.rate, &format!("links[{i}].rate"), &err)?;
            if let Some(r) = l.reverse_rate {
                check_rate(r, &format!("links[{i}].reverse_rate"), &err)?;
            }
            check_queue(&l.queue, &format!("links[{i}].queue"), &err)?;
            if let Some(q) = &l.reverse_queue {
                check_queue(q, &format!("links[{i}].reverse_queue"), &err)?;
            }
        }

        let topo = &self.topology;
        let chain: Vec<usize> = match topo.kind {
            TopologyKind::Dumbbell => {
                let b = topo.bottleneck.as_deref().ok_or_else(|| {
                    err(
                        "topology.bottleneck".into(),
                        format!("a dumbbell needs `bottleneck = \"LINK\"`; links are: {known}"),
                    )
                })?;
                if topo.chain.is_some() {
                    return Err(err(
                        "topology.chain".into(),
                        "only a parking_lot has a chain; a dumbbell has `bottleneck`".into(),
                    ));
                }
                vec![find_link(b, "topology.bottleneck".into())?]
            }
            TopologyKind::ParkingLot => {
                let c = topo.chain.as_ref().ok_or_else(|| {
                    err(
                        "topology.chain".into(),
                        "a parking lot needs `chain = [\"LINK\", …]` (two or more links)".into(),
                    )
                })?;
                if c.len() < 2 {
                    return Err(err(
                        "topology.chain".into(),
                        "a parking lot needs two or more links".into(),
                    ));
                }
                if topo.bottleneck.is_some() {
                    return Err(err(
                        "topology.bottleneck".into(),
                        "a parking lot has a `chain`, not a single bottleneck".into(),
                    ));
                }
                let mut idx = Vec::new();
                for (j, n) in c.iter().enumerate() {
                    let k = find_link(n, format!("topology.chain[{j}]"))?;
                    if idx.contains(&k) {
                        return Err(err(
                            format!("topology.chain[{j}]"),
                            format!("`{n}` appears twice in the chain"),
                        ));
                    }
                    idx.push(k);
                }
                idx
            }
        };

        if self.flows.is_empty() {
            return Err(err(
                "flows".into(),
                "at least one [[flows]] table is needed".into(),
            ));
        }
        let total: u64 = self.flows.iter().map(|f| f.count as u64).sum();
        if total > MAX_FLOWS {
            return Err(err(
                "flows".into(),
                format!(
                    "{total} flows in all (the sum of `count`); the simulator runs at most \
                     {MAX_FLOWS} (each keeps about 32 KiB of state and its series)"
                ),
            ));
        }
        let mut flows = Vec::new();
        for (i, f) in self.flows.iter().enumerate() {
            let cc = CcSpec::from_toml(&f.cc)
                .map_err(|e| err(format!("flows[{i}].cc"), e.to_string()))?;
            if f.count == 0 {
                return Err(err(
                    format!("flows[{i}].count"),
                    "must be at least 1".into(),
                ));
            }
            let stop = f.stop.map(|s| s.0).unwrap_or(dur).min(dur);
            if f.start.0 >= stop {
                return Err(err(
                    format!("flows[{i}].start"),
                    format!(
                        "starts at {} s, not before its stop at {} s",
                        f.start.secs(),
                        stop as f64 * 1e-9
                    ),
                ));
            }
            let path = match (topo.kind, &f.path) {
                (TopologyKind::Dumbbell, None) => chain.clone(),
                (TopologyKind::Dumbbell, Some(_)) => {
                    return Err(err(
                        format!("flows[{i}].path"),
                        "dumbbell flows all cross the bottleneck; `path` is for parking_lot".into(),
                    ))
                }
                (TopologyKind::ParkingLot, None) => chain.clone(),
                (TopologyKind::ParkingLot, Some(p)) => {
                    let mut idx = Vec::new();
                    for (j, n) in p.iter().enumerate() {
                        idx.push(find_link(n, format!("flows[{i}].path[{j}]"))?);
                    }
                    let contiguous =
                        !idx.is_empty() && chain.windows(idx.len()).any(|w| w == idx.as_slice());
                    if !contiguous {
                        return Err(err(
                            format!("flows[{i}].path"),
                            format!(
                                "must be a contiguous run of the chain [{}] in order",
                                topo.chain
                                    .as_ref()
                                    .map(|c| c.join(", "))
                                    .unwrap_or_default()
                            ),
                        ));
                    }
                    idx
                }
            };
            if f.stack != Stack::Model && self.transport != TransportKind::Model {
                return Err(err(
                    format!("flows[{i}].stack"),
                    "imitating a TCP stack needs `transport = \"model\"`".into(),
                ));
            }
            if f.access.on_full == OnFull::Drop && f.access.rate.is_none() {
                return Err(err(
                    format!("flows[{i}].access.on_full"),
                    "`drop` needs a host queue: give the access link a `rate` (the NIC)".into(),
                ));
            }
            if let Some(r) = f.access.rate {
                check_rate(r, &format!("flows[{i}].access.rate"), &err)?;
            }
            for (host, stall) in [
                ("sender", f.host_stalls.sender),
                ("receiver", f.host_stalls.receiver),
            ] {
                if let Some(st) = stall {
                    check_stall(st, &format!("flows[{i}].host_stalls.{host}"), &err)?;
                }
            }
            if let Some(r) = f.access.packets {
                if r == 0 {
                    return Err(err(
                        format!("flows[{i}].access.packets"),
                        "must be at least 1".into(),
                    ));
                }
            }
            for _ in 0..f.count {
                flows.push(CheckedFlow {
                    id: flows.len() as u32,
                    spec: i,
                    cc: cc.clone(),
                    path: path.clone(),
                    start: f.start.0,
                    stop,
                });
            }
        }

        let mut cross = Vec::new();
        for (i, c) in self.cross_traffic.iter().enumerate() {
            let link = find_link(&c.link, format!("cross_traffic[{i}].link"))?;
            check_rate(c.rate, &format!("cross_traffic[{i}].rate"), &err)?;
            let packet_size = c
                .packet_size
                .map(|b| b.0)
                .unwrap_or(self.links[link].mtu as u64);
            if !(40..=self.links[link].mtu as u64).contains(&packet_size) {
                return Err(err(
                    format!("cross_traffic[{i}].packet_size"),
                    format!(
                        "{packet_size} bytes is outside 40..={} (the link's MTU)",
                        self.links[link].mtu
                    ),
                ));
            }
            let stop = c.stop.map(|s| s.0).unwrap_or(dur).min(dur);
            if c.start.0 >= stop {
                return Err(err(
                    format!("cross_traffic[{i}].start"),
                    "must be before its stop and the end of the run".into(),
                ));
            }
            let need = |field: &str, present: bool, kind: &str| {
                if present {
                    Ok(())
                } else {
                    Err(err(
                        format!("cross_traffic[{i}].{field}"),
                        format!("`{kind}` cross traffic needs `{field}`"),
                    ))
                }
            };
            let forbid = |field: &str, present: bool, kind: &str| {
                if present {
                    Err(err(
                        format!("cross_traffic[{i}].{field}"),
                        format!("`{kind}` cross traffic does not use `{field}`"),
                    ))
                } else {
                    Ok(())
                }
            };
            match c.kind {
                CrossKind::Cbr | CrossKind::Poisson => {
                    let k = if c.kind == CrossKind::Cbr {
                        "cbr"
                    } else {
                        "poisson"
                    };
                    forbid("on", c.on.is_some(), k)?;
                    forbid("off", c.off.is_some(), k)?;
                    forbid("size", c.size.is_some(), k)?;
                    forbid("shape", c.shape.is_some(), k)?;
                    if c.responsive {
                        return Err(err(
                            format!("cross_traffic[{i}].responsive"),
                            format!("`{k}` traffic is a packet process; responsive traffic is `web` or `onoff`"),
                        ));
                    }
                }
                CrossKind::Onoff => {
                    need("on", c.on.is_some_and(|d| d.0 > 0), "onoff")?;
                    need("off", c.off.is_some(), "onoff")?;
                    forbid("size", c.size.is_some(), "onoff")?;
                    forbid("shape", c.shape.is_some(), "onoff")?;
                }
                CrossKind::Web => {
                    forbid("on", c.on.is_some(), "web")?;
                    forbid("off", c.off.is_some(), "web")?;
                    if let Some(s) = c.shape {
                        if !(s > 1.0 && s.is_finite()) {
                            return Err(err(
                                format!("cross_traffic[{i}].shape"),
                                format!("{s}: a Pareto shape must exceed 1 for a finite mean size"),
                            ));
                        }
                    }
                    if c.size.is_some_and(|s| s.0 < packet_size) {
                        return Err(err(
                            format!("cross_traffic[{i}].size"),
                            "the mean transfer size must be at least one packet".into(),
                        ));
                    }
                }
            }
            let cc = match (&c.cc, c.responsive) {
                (Some(_), false) => {
                    return Err(err(
                        format!("cross_traffic[{i}].cc"),
                        "only responsive cross traffic has a congestion control; set `responsive = true`".into(),
                    ))
                }
                (Some(v), true) => Some(
                    CcSpec::from_toml(v).map_err(|e| err(format!("cross_traffic[{i}].cc"), e.to_string()))?,
                ),
                (None, true) => Some(
                    CcSpec::default_for("reno").map_err(|e| err(format!("cross_traffic[{i}].cc"), e.to_string()))?,
                ),
                (None, false) => None,
            };
            if c.responsive && c.reverse {
                return Err(err(
                    format!("cross_traffic[{i}].reverse"),
                    "responsive cross traffic runs in the data direction only".into(),
                ));
            }
            cross.push(CheckedCross {
                link,
                packet_size: packet_size as u32,
                cc,
                start: c.start.0,
                stop,
            });
        }
        if self.output.interval == AUTO_INTERVAL {
            let longest_rtt = flows
                .iter()
                .map(|f: &CheckedFlow| {
                    let path: u64 = f.path.iter().map(|&l| 2 * self.links[l].delay.0).sum();
                    path + self.flows[f.spec].extra_rtt.0
                })
                .max()
                .unwrap_or(0);
            self.output.interval = interval_for_rtt(longest_rtt);
        }
        if self.output.interval.0 == 0 {
            return Err(err("output.interval".into(), "must be positive".into()));
        }
        // Every flow and every queue keeps one sample per interval in memory for the whole
        // run; a tiny interval over a long run would exhaust it.
        let samples = dur / self.output.interval.0;
        if samples > MAX_SAMPLES {
            return Err(err(
                "output.interval".into(),
                format!(
                    "{} over {} is {samples} samples per series, more than the {MAX_SAMPLES} \
                     kept in memory: use an interval of at least {}",
                    fmt_ns(self.output.interval.0),
                    fmt_ns(dur),
                    fmt_ns(dur.div_ceil(MAX_SAMPLES)),
                ),
            ));
        }
        let name = self
            .name
            .clone()
            .unwrap_or_else(|| default_name.to_string());
        Ok(Checked {
            scenario: self,
            flows,
            cross,
            name,
        })
    }
}

/// Most samples one time series may hold (an hour at 3.6 ms; seed 000's hour at the default
/// 100 ms is 36,000).
pub const MAX_SAMPLES: u64 = 1_000_000;

/// The fastest rate a scenario may give: the emulator's cap, and the fastest Ethernet. The
/// clock counts whole nanoseconds, so a 1500-byte packet at 400 Gb/s takes 30 ns; far above,
/// serialisation times round to 0 and a link stops limiting anything.
pub const MAX_RATE_BPS: f64 = 400e9;
/// The slowest rate: 1 kbit/s, below which a full packet takes minutes.
pub const MIN_RATE_BPS: f64 = 1e3;
/// Most flows a scenario may run (the sum of every `count`); `budget` then checks that they
/// fit in memory.
pub const MAX_FLOWS: u64 = 1_000_000;

/// A rate within [`MIN_RATE_BPS`, `MAX_RATE_BPS`].
fn check_rate(
    r: Rate,
    field: &str,
    err: &dyn Fn(String, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    if (MIN_RATE_BPS..=MAX_RATE_BPS).contains(&r.0) {
        return Ok(());
    }
    Err(err(
        field.to_string(),
        format!(
            "{:e} bit/s is outside the simulator's range, 1kbit to 400gbit: the clock counts \
             whole nanoseconds (a 1500-byte packet at 400 Gb/s takes 30 ns), and the emulator \
             caps rates at 400 Gb/s too",
            r.0
        ),
    ))
}

/// A host's stall process: a rate within [0, `MAX_STALL_RATE`] and, if it ever stalls, a
/// positive mean length.
fn check_stall(
    st: StallSpec,
    field: &str,
    err: &dyn Fn(String, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    if st.rate.0 > MAX_STALL_RATE {
        return Err(err(
            format!("{field}.rate"),
            format!(
                "{} stalls per second is more than the {MAX_STALL_RATE} allowed (one per \
                 100 us of running); give a rate such as \"4/s\"",
                st.rate.0
            ),
        ));
    }
    if st.rate.0 > 0.0 && st.mean.0 == 0 {
        return Err(err(
            format!("{field}.mean"),
            "a stall lasts a positive time: give a mean such as \"2.5ms\" (or `rate = 0` for \
             no stalls)"
                .into(),
        ));
    }
    Ok(())
}

/// A duration for an error message, in the largest unit that keeps it exact enough.
fn fmt_ns(ns: u64) -> String {
    match ns {
        n if n >= 1_000_000_000 => format!("{} s", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{} ms", n as f64 / 1e6),
        n if n >= 1_000 => format!("{} us", n as f64 / 1e3),
        n => format!("{n} ns"),
    }
}

fn check_queue(
    q: &QueueSpec,
    field: &str,
    err: &dyn Fn(String, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    match (q.packets, q.bytes) {
        (Some(_), Some(_)) => {
            return Err(err(
                field.to_string(),
                "give the size in `packets` or in `bytes`, not both".into(),
            ))
        }
        (None, None) => {
            return Err(err(
                field.to_string(),
                "needs a size: `packets = N` or `bytes = \"SIZE\"`".into(),
            ))
        }
        (Some(0), _) | (_, Some(Bytes(0))) => {
            return Err(err(
                field.to_string(),
                "a queue holds at least one packet".into(),
            ))
        }
        _ => {}
    }
    let red_only = [
        ("min_th", q.min_th.is_some()),
        ("max_th", q.max_th.is_some()),
        ("max_p", q.max_p.is_some()),
        ("weight", q.weight.is_some()),
        ("gentle", q.gentle.is_some()),
        ("ecn", q.ecn.is_some()),
    ];
    if q.kind == QueueKind::Droptail {
        if let Some((name, _)) = red_only.iter().find(|(_, set)| *set) {
            return Err(err(
                format!("{field}.{name}"),
                "is a RED parameter; set `kind = \"red\"` or remove it".into(),
            ));
        }
        return Ok(());
    }
    let limit = q
        .packets
        .map(|p| p as f64)
        .or(q.bytes.map(|b| b.0 as f64))
        .unwrap_or(0.0);
    let p = crate::red::RedParams::from_spec(q, limit);
    if !(p.min_th > 0.0 && p.min_th < p.max_th) {
        return Err(err(
            format!("{field}.min_th"),
            format!("need 0 < min_th ({}) < max_th ({})", p.min_th, p.max_th),
        ));
    }
    // The thresholds are in the queue's own unit (packets or bytes); above its limit a
    // threshold is never reached and RED silently becomes droptail.
    let unit = if q.packets.is_some() {
        "packets"
    } else {
        "bytes"
    };
    for (name, th) in [("min_th", p.min_th), ("max_th", p.max_th)] {
        if th > limit {
            return Err(err(
                format!("{field}.{name}"),
                format!(
                    "{name} ({th}) exceeds the queue limit ({limit} {unit}): RED's thresholds \
                     must lie within the queue; lower it or raise the queue's size"
                ),
            ));
        }
    }
    if !(p.max_p > 0.0 && p.max_p <= 1.0) {
        return Err(err(
            format!("{field}.max_p"),
            format!("{} is not in (0, 1]", p.max_p),
        ));
    }
    if !(p.weight > 0.0 && p.weight <= 1.0) {
        return Err(err(
            format!("{field}.weight"),
            format!("{} is not in (0, 1]", p.weight),
        ));
    }
    Ok(())
}

/// Apply one `key=value` override to the parsed document.
pub fn apply_override(doc: &mut toml::Value, assignment: &str) -> Result<(), ScenarioError> {
    let fail = |message: String| ScenarioError::Override {
        assignment: assignment.to_string(),
        message,
    };
    let (key, raw) = assignment.split_once('=').ok_or_else(|| {
        fail("expected KEY=VALUE, e.g. `duration=30s` or `flows.0.cc=reno`".into())
    })?;
    let key = key.trim();
    let raw = raw.trim();
    if key.is_empty() {
        return Err(fail("the key is empty".into()));
    }
    let value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    let parts: Vec<&str> = key.split('.').collect();
    let mut cur = doc;
    for (depth, part) in parts.iter().enumerate() {
        let last = depth + 1 == parts.len();
        let here = parts[..depth].join(".");
        cur = match cur {
            toml::Value::Table(t) => {
                if last {
                    t.insert(part.to_string(), value);
                    return Ok(());
                }
                t.entry(part.to_string())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            toml::Value::Array(a) => {
                let i: usize = part.parse().map_err(|_| {
                    fail(format!("`{here}` is a list: use an index, e.g. `{here}.0`"))
                })?;
                let len = a.len();
                let slot = a.get_mut(i).ok_or_else(|| {
                    fail(format!("`{here}` has {len} entries (indices 0..{len})"))
                })?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
            _ => return Err(fail(format!("`{here}` is a value, not a table or list"))),
        };
    }
    Ok(())
}
