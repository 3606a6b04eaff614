//! From a scenario file (the one `longhaul sim` takes) to a lab plan: one emulated bottleneck,
//! the flows that cross it, and what the emulator must generate.
//!
//! The lab has one emulated path between two namespaces, so it runs the part of the scenario
//! format that maps onto one bottleneck:
//!
//! | scenario                                  | lab                                              |
//! |-------------------------------------------|--------------------------------------------------|
//! | `topology.kind = "dumbbell"`              | the emulated path a → b                          |
//! | bottleneck `rate`, `reverse_rate`         | rate of a → b (data), b → a (ACKs; default: same)|
//! | bottleneck `delay`                        | one-way delay, both directions                   |
//! | bottleneck `mtu`                          | MTU of both TUN devices                          |
//! | `queue` / `reverse_queue` droptail        | the emulator's droptail (packets or bytes)       |
//! | `queue` RED (`gentle = false`, no ECN)    | the emulator's RED, thresholds × MTU in bytes    |
//! | `loss`, `reverse_loss`                    | Bernoulli loss per direction                     |
//! | `flows[i]`: `cc`, `count`, `start`, `stop`| one kernel TCP connection each (`longhaul perf`) |
//! | `flows[i].extra_rtt`                      | extra delay by port: ⌈extra/2⌉ on a → b, ⌊extra/2⌋ on b → a |
//! | `cross_traffic` cbr/poisson/onoff         | the emulator's cross traffic at the bottleneck   |
//! | `seed`, `output.interval`                 | emulator random streams; series interval         |
//!
//! **Per-flow RTT.** Every flow crosses the same emulated path (so the queue is shared exactly as
//! on a dumbbell); each flow's perf server listens on its own port in namespace b, and the
//! emulator adds the flow's extra delay, keyed by that port, after the bottleneck
//! (`longhaul_emu::model::port_delay`). Data (to the port) and ACKs (from it) both match, so half
//! of `extra_rtt` is added each way.
//!
//! Everything else is refused with an error that names the field: a parking lot (several
//! bottlenecks), access links (`flows[i].access` — each sender would need its own emulated NIC),
//! fixed-size transfers (`bytes`), ECN, RED's gentle mode, cross traffic that is responsive, of
//! kind `web`, on another link, or limited in time. `transport` is ignored: the lab always runs
//! the kernel's TCP; the summary records that.

use crate::error::LabError;
use longhaul_emu::config::{DirectionConfig, LinkConfig, RateConfig};
use longhaul_emu::model::cross::{CrossConfig, CrossKind as EmuCross};
use longhaul_emu::model::delay::DelayConfig;
use longhaul_emu::model::loss::LossConfig;
use longhaul_emu::model::port_delay::PortDelay;
use longhaul_emu::model::queue::QueueLimits;
use longhaul_emu::model::red::RedConfig;
use longhaul_sim::scenario::{CrossKind, QueueKind, QueueSpec, TopologyKind};
use longhaul_sim::Checked;
use std::time::Duration;

/// First port of the per-flow perf servers (flow id k listens on `FIRST_PORT + k`).
pub const FIRST_PORT: u16 = 5302;

/// The congestion controls the running kernel provides itself (Linux `tcp_*.c`).
pub const KERNEL_NATIVE: [&str; 3] = ["reno", "cubic", "bbr"];
/// Those longhaul loads as eBPF `struct_ops` (crates/kernel).
pub const EBPF: [&str; 4] = ["fast", "scalable", "highspeed", "vegas"];

/// One kernel TCP flow.
#[derive(Debug, Clone, PartialEq)]
pub struct LabFlow {
    /// 1-based, as in the simulator's summary.
    pub id: u32,
    /// Algorithm name (`fast`, `cubic`, ...).
    pub cc: String,
    /// Parameters that differ from the algorithm's defaults, as `key=value`.
    pub params: Vec<String>,
    pub start: Duration,
    pub stop: Duration,
    /// Added round-trip time of this flow.
    pub extra_rtt: Duration,
    /// Port of this flow's server in namespace b; the emulator's per-flow delay keys on it.
    pub port: u16,
}

/// Everything a lab run needs.
#[derive(Debug, Clone)]
pub struct LabPlan {
    pub name: String,
    pub seed: u64,
    pub duration: Duration,
    /// Series interval (`output.interval`).
    pub interval: Duration,
    /// Bottleneck link: name, capacity (b/s), MTU, distance.
    pub link_name: String,
    pub capacity_bps: f64,
    pub mtu: u32,
    pub distance_km: f64,
    pub one_way_delay: Duration,
    /// The queue as configured, e.g. "droptail 2000p".
    pub queue: String,
    /// Largest buffer the bottleneck queue can hold, bytes (for socket-buffer sizing).
    pub queue_bytes: u64,
    pub emulator: LinkConfig,
    pub flows: Vec<LabFlow>,
    /// Log every drop (`output.drop_log`), at most this many.
    pub drop_log: bool,
    pub drop_log_limit: usize,
}

impl LabPlan {
    /// Maps a checked scenario; `file` names it in errors.
    pub fn from_scenario(checked: &Checked, file: &str) -> Result<LabPlan, LabError> {
        let s = &checked.scenario;
        let unsupported = |field: String, message: &str| LabError::Unsupported {
            file: file.to_string(),
            field,
            message: message.to_string(),
        };
        if s.topology.kind != TopologyKind::Dumbbell {
            return Err(unsupported(
                "topology.kind".into(),
                "only a dumbbell maps onto one emulated bottleneck; a parking lot needs several",
            ));
        }
        let name = s.topology.bottleneck.as_deref().unwrap_or_default();
        let li = s
            .links
            .iter()
            .position(|l| l.name == name)
            .expect("checked: the bottleneck names a link");
        let link = &s.links[li];
        let mtu = link.mtu;
        let fwd_queue = map_queue(&link.queue, mtu, &format!("links[{li}].queue"), file)?;
        let rev_queue = match &link.reverse_queue {
            Some(q) => map_queue(q, mtu, &format!("links[{li}].reverse_queue"), file)?,
            None => fwd_queue.clone(),
        };
        let rate_bps = link.rate.0.round() as u64;
        let rev_bps = link.reverse_rate.map_or(rate_bps, |r| r.0.round() as u64);
        let delay = DelayConfig {
            delay_ns: link.delay.0,
            ..Default::default()
        };
        let loss = |p: f64| {
            if p > 0.0 {
                LossConfig::Bernoulli { p }
            } else {
                LossConfig::None
            }
        };
        let mut a_to_b = DirectionConfig {
            rate: RateConfig::Constant { bps: rate_bps },
            delay,
            queue: fwd_queue.limits,
            red: fwd_queue.red,
            loss: loss(link.loss),
            seed: s.seed,
            ..Default::default()
        };
        let mut b_to_a = DirectionConfig {
            rate: RateConfig::Constant { bps: rev_bps },
            delay,
            queue: rev_queue.limits,
            red: rev_queue.red,
            loss: loss(link.reverse_loss),
            seed: s.seed.wrapping_add(1),
            ..Default::default()
        };

        // Flows.
        let mut flows = Vec::new();
        for (i, f) in s.flows.iter().enumerate() {
            let field = |k: &str| format!("flows[{i}].{k}");
            let a = &f.access;
            if a.rate.is_some() || a.delay.is_some() || a.packets.is_some() {
                return Err(unsupported(
                    field("access"),
                    "per-sender access links are not emulated; fold the access rate into the \
                     bottleneck (the lab's bottleneck is the one link) and remove `access`",
                ));
            }
            if f.bytes.is_some() {
                return Err(unsupported(
                    field("bytes"),
                    "lab flows are timed bulk transfers (start..stop); remove `bytes`",
                ));
            }
            if f.ecn {
                return Err(unsupported(
                    field("ecn"),
                    "the emulator does not mark ECN; set `ecn = false`",
                ));
            }
        }
        for cf in &checked.flows {
            let spec = &s.flows[cf.spec];
            let field = |k: &str| format!("flows[{}].{k}", cf.spec);
            let cc = cf.cc.algorithm.to_string();
            let params: Vec<String> = cf
                .cc
                .params
                .non_default()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            if KERNEL_NATIVE.contains(&cc.as_str()) {
                if !params.is_empty() {
                    return Err(unsupported(
                        field("cc"),
                        &format!(
                            "`{cc}` is the kernel's own and takes no per-run parameters \
                             (given: {}); remove them",
                            params.join(",")
                        ),
                    ));
                }
            } else if !EBPF.contains(&cc.as_str()) {
                return Err(unsupported(
                    field("cc"),
                    &format!(
                        "`{cc}` has no kernel implementation; the lab runs {} and {}",
                        KERNEL_NATIVE.join(", "),
                        EBPF.join(", ")
                    ),
                ));
            }
            let id = cf.id + 1;
            let port = FIRST_PORT
                .checked_add(cf.id as u16)
                .filter(|_| cf.id < 1000)
                .ok_or_else(|| unsupported(field("count"), "at most 1000 flows"))?;
            flows.push(LabFlow {
                id,
                cc,
                params,
                start: Duration::from_nanos(cf.start),
                stop: Duration::from_nanos(cf.stop),
                extra_rtt: Duration::from_nanos(spec.extra_rtt.0),
                port,
            });
        }
        for f in &flows {
            let extra = f.extra_rtt.as_nanos() as u64;
            if extra > 0 {
                a_to_b.port_delays.push(PortDelay {
                    port: f.port,
                    extra_ns: extra.div_ceil(2),
                });
                b_to_a.port_delays.push(PortDelay {
                    port: f.port,
                    extra_ns: extra / 2,
                });
            }
        }

        // Cross traffic.
        for (i, c) in s.cross_traffic.iter().enumerate() {
            let field = |k: &str| format!("cross_traffic[{i}].{k}");
            if c.link != link.name {
                return Err(unsupported(
                    field("link"),
                    &format!(
                        "cross traffic runs at the emulated bottleneck `{}` only",
                        link.name
                    ),
                ));
            }
            if c.responsive {
                return Err(unsupported(
                    field("responsive"),
                    "the emulator's cross traffic is unresponsive; for competing TCP add a flow",
                ));
            }
            let chk = &checked.cross[i];
            if chk.start != 0 || chk.stop != s.duration.0 {
                return Err(unsupported(
                    field("start"),
                    "the emulator's cross traffic runs for the whole experiment; remove start/stop",
                ));
            }
            let kind =
                match c.kind {
                    CrossKind::Cbr => EmuCross::Cbr,
                    CrossKind::Poisson => EmuCross::Poisson,
                    CrossKind::Onoff => EmuCross::OnOff {
                        mean_on_ns: c.on.map_or(0, |d| d.0),
                        mean_off_ns: c.off.map_or(0, |d| d.0),
                    },
                    CrossKind::Web => return Err(unsupported(
                        field("kind"),
                        "`web` cross traffic is not generated by the emulator; use cbr, poisson \
                         or onoff",
                    )),
                };
            let cfg = CrossConfig {
                kind,
                rate_bps: c.rate.0,
                packet_bytes: chk.packet_size,
            };
            if c.reverse {
                b_to_a.cross.push(cfg);
            } else {
                a_to_b.cross.push(cfg);
            }
        }

        let emulator = LinkConfig {
            a_to_b,
            b_to_a,
            mtu,
        };
        emulator
            .validate()
            .map_err(|e| unsupported(format!("links[{li}]"), &e.to_string()))?;
        Ok(LabPlan {
            name: checked.name.clone(),
            seed: s.seed,
            duration: Duration::from_nanos(s.duration.0),
            interval: Duration::from_nanos(s.output.interval.0.max(1_000_000)),
            link_name: link.name.clone(),
            capacity_bps: link.rate.0,
            mtu,
            distance_km: link.distance_km,
            one_way_delay: Duration::from_nanos(link.delay.0),
            queue: fwd_queue.describe,
            queue_bytes: fwd_queue.max_bytes,
            emulator,
            flows,
            drop_log: s.output.drop_log,
            drop_log_limit: s.output.drop_log_limit,
        })
    }

    /// Largest base RTT of any flow.
    pub fn max_rtt(&self) -> Duration {
        let extra = self
            .flows
            .iter()
            .map(|f| f.extra_rtt)
            .max()
            .unwrap_or_default();
        self.one_way_delay * 2 + extra
    }
}

#[derive(Clone)]
struct MappedQueue {
    limits: QueueLimits,
    red: Option<RedConfig>,
    describe: String,
    max_bytes: u64,
}

fn map_queue(q: &QueueSpec, mtu: u32, field: &str, file: &str) -> Result<MappedQueue, LabError> {
    let unsupported = |k: &str, message: &str| LabError::Unsupported {
        file: file.to_string(),
        field: format!("{field}.{k}"),
        message: message.to_string(),
    };
    let limits = QueueLimits {
        packets: q.packets.map(|p| p.min(u32::MAX as u64) as u32),
        bytes: q.bytes.map(|b| b.0),
    };
    let max_bytes = q
        .bytes
        .map(|b| b.0)
        .unwrap_or(q.packets.unwrap_or(0) * mtu as u64);
    let size = match (q.packets, q.bytes) {
        (Some(p), _) => format!("{p}p"),
        (None, Some(b)) => format!("{}B", b.0),
        _ => String::new(),
    };
    let red = match q.kind {
        QueueKind::Droptail => None,
        QueueKind::Red => {
            if q.ecn == Some(true) {
                return Err(unsupported(
                    "ecn",
                    "the emulator's RED drops; set `ecn = false`",
                ));
            }
            if q.gentle != Some(false) {
                return Err(unsupported(
                    "gentle",
                    "the emulator's RED has no gentle mode (the simulator's default); set \
                     `gentle = false` to run the same queue in both",
                ));
            }
            let p = longhaul_sim::red::RedParams::from_spec(
                q,
                q.packets
                    .map(|p| p as f64)
                    .or(q.bytes.map(|b| b.0 as f64))
                    .unwrap_or(0.0),
            );
            // Thresholds are in the queue's own unit: packets become MTU-sized bytes.
            let unit = if q.packets.is_some() { mtu as f64 } else { 1.0 };
            Some(RedConfig {
                min_bytes: (p.min_th * unit).round() as u64,
                max_bytes: (p.max_th * unit).round() as u64,
                max_p: p.max_p,
                weight: p.weight,
            })
        }
    };
    let describe = match &red {
        None => format!("droptail {size}"),
        Some(r) => format!(
            "red {size} min={}B max={}B max_p={} w={}",
            r.min_bytes, r.max_bytes, r.max_p, r.weight
        ),
    };
    Ok(MappedQueue {
        limits,
        red,
        describe,
        max_bytes,
    })
}
