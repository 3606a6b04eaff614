//! From a scenario file (the one `longhaul sim` takes) to a lab plan: one emulated bottleneck,
//! the flows that cross it, the responsive cross traffic beside them, and what the emulator
//! must generate.
//!
//! The lab has one emulated path between two namespaces, so it runs the part of the scenario
//! format that maps onto one bottleneck. The bottleneck link itself (rate, delay, MTU, queue,
//! loss, cross traffic) is mapped by `longhaul_emu::scenario`, the mapping `longhaul emu
//! --scenario` uses too; this module adds what only the lab runs:
//!
//! | scenario                                  | lab                                              |
//! |-------------------------------------------|--------------------------------------------------|
//! | `topology.kind = "dumbbell"`              | the emulated path a → b                          |
//! | `flows[i]`: `cc`, `count`, `start`, `stop`| one kernel TCP connection each (`longhaul perf`) |
//! | `flows[i].extra_rtt`                      | extra delay by port: ⌈extra/2⌉ on a → b, ⌊extra/2⌋ on b → a |
//! | `cross_traffic[i]` `web`/`onoff`, `responsive`, `cc`, `start`, `stop` | kernel TCP transfers a → b on the simulator's schedule (`crate::responsive`) |
//! | `flows[i].ecn`                            | `net.ipv4.tcp_ecn = 1` in both namespaces (every flow alike) |
//! | `output.interval`                         | the series interval                              |
//!
//! **Per-flow RTT.** Every flow crosses the same emulated path (so the queue is shared exactly as
//! on a dumbbell); each flow's perf server listens on its own port in namespace b, and the
//! emulator adds the flow's extra delay, keyed by that port, after the bottleneck
//! (`longhaul_emu::model::port_delay`). Data (to the port) and ACKs (from it) both match, so half
//! of `extra_rtt` is added each way.
//!
//! **Responsive cross traffic.** Each responsive entry becomes a [`LabCross`]: its transfers
//! (web transfers, or an on/off source's on periods) begin at the times and carry the sizes
//! that the simulator's source for the entry draws with the simulator's seed
//! ([`LabCross::schedule`]), each a kernel TCP connection from namespace a to the entry's
//! receiver in namespace b on port `FIRST_CROSS_PORT + i`, above every flow's port, so no
//! flow's extra delay applies to it. Its congestion control is loaded as a flow's is. The
//! emulator generates the unresponsive entries only.
//!
//! **Time zero.** The experiment starts when the first flow may start: the lab makes that
//! instant the emulator's zero point (`Emulator::set_zero`), so cross traffic's `start` and
//! `stop`, responsive transfers' times and a rate trace's opportunities count from it, as they
//! count from 0 in the simulator.
//!
//! Everything else is refused with an error that names the field: a parking lot (several
//! bottlenecks), access links (`flows[i].access` — each sender would need its own emulated NIC),
//! fixed-size transfers (`bytes`), flows that differ in `ecn` (the kernel's ECN setting is its
//! namespace's, and every flow sends from namespace a), host stalls (`host_stalls`: the
//! simulator's model of what the lab's own hosts do), cross traffic on another link than the
//! bottleneck (responsive or not), a responsive entry's `cc` without a kernel implementation.
//! Unresponsive cross traffic of every kind, `web` included, runs the simulator's generator in
//! the emulator. `transport` is ignored: the lab always runs the kernel's TCP; the summary
//! records that.

use crate::error::LabError;
use longhaul_cc::CcSpec;
use longhaul_emu::config::LinkConfig;
use longhaul_emu::model::port_delay::PortDelay;
use longhaul_emu::scenario::{emulated_link_beside_hosts, EmulatedLink};
use longhaul_sim::cross::{CrossConfig, CrossSource, ResponsiveTransfers};
use longhaul_sim::scenario::TopologyKind;
use longhaul_sim::Checked;
use std::time::Duration;

/// First port of the per-flow perf servers (flow id k listens on `FIRST_PORT + k`).
pub const FIRST_PORT: u16 = 5302;
/// At most this many flows (their ports `FIRST_PORT ..`), and as many cross-traffic entries.
pub const MAX_FLOWS: u16 = 1000;
/// First port of the responsive cross-traffic receivers (`cross_traffic[i]` listens on
/// `FIRST_CROSS_PORT + i`): above every flow's port, so none gets a flow's extra delay.
pub const FIRST_CROSS_PORT: u16 = FIRST_PORT + MAX_FLOWS;

/// The congestion controls the running kernel provides itself (Linux `tcp_*.c`).
pub const KERNEL_NATIVE: [&str; 3] = ["reno", "cubic", "bbr"];
/// Those longhaul loads as eBPF `struct_ops`: every algorithm crates/kernel ships.
pub fn ebpf() -> Vec<&'static str> {
    longhaul_kernel::Algorithm::ALL
        .iter()
        .map(|a| a.name())
        .collect()
}

/// One kernel TCP flow.
#[derive(Debug, Clone, PartialEq)]
pub struct LabFlow {
    /// As the simulator numbers flows (from 0, in file order), so `compare` pairs them.
    pub id: u32,
    /// Algorithm name (`fast`, `cubic`, ...).
    pub cc: String,
    /// Parameters that differ from the algorithm's defaults, as `key=value`.
    pub params: Vec<String>,
    /// When the flow starts, from the experiment's start.
    pub start: Duration,
    /// When the flow stops, from the experiment's start.
    pub stop: Duration,
    /// Added round-trip time of this flow.
    pub extra_rtt: Duration,
    /// Port of this flow's server in namespace b; the emulator's per-flow delay keys on it.
    pub port: u16,
}

/// One responsive `[[cross_traffic]]` entry: its transfers, each a kernel TCP connection
/// a → b, begin at the times and carry the sizes the simulator's source draws.
#[derive(Debug, Clone, PartialEq)]
pub struct LabCross {
    /// The entry's index in the scenario's `cross_traffic`.
    pub index: usize,
    /// The arrival process, `web` or `onoff`.
    pub kind: &'static str,
    /// The link it loads (the emulated bottleneck).
    pub link: String,
    /// The transfers' algorithm name (`reno`, `fast`, ...).
    pub cc: String,
    /// Parameters that differ from the algorithm's defaults, as `key=value`.
    pub params: Vec<String>,
    /// When its first transfer begins, from the experiment's start.
    pub start: Duration,
    /// No transfer begins at or after it (from the experiment's start); those running go on
    /// to the run's end.
    pub stop: Duration,
    /// Port of the entry's receiver in namespace b.
    pub port: u16,
    /// The simulator's source for the entry (`CrossConfig::from_scenario`).
    pub source: CrossConfig,
    /// The link's rate, bits per second, as the simulator builds the source with it.
    pub link_bps: f64,
    /// The source's random stream (`longhaul_sim::engine::cross_seed`).
    pub seed: u64,
}

impl LabCross {
    /// The transfers in order, each with its start (ns from the experiment's start) and size:
    /// the simulator's source for the same entry and seed, drawn as the simulator draws it.
    pub fn schedule(&self) -> ResponsiveTransfers {
        CrossSource::new(&self.source, 0, self.link_bps, self.seed).responsive_transfers()
    }
}

/// Everything a lab run needs.
#[derive(Debug, Clone)]
pub struct LabPlan {
    /// The scenario's name.
    pub name: String,
    /// The scenario's seed: the emulator's random loss draws from it.
    pub seed: u64,
    /// The experiment's length.
    pub duration: Duration,
    /// Series interval (`output.interval`).
    pub interval: Duration,
    /// The bottleneck link's name in the scenario.
    pub link_name: String,
    /// Capacity in the data direction, bits per second.
    pub capacity_bps: f64,
    /// Capacity in the ACK direction, bits per second.
    pub reverse_capacity_bps: f64,
    /// The link's MTU, bytes.
    pub mtu: u32,
    /// The link's distance, km.
    pub distance_km: f64,
    /// The link's propagation delay, one way.
    pub one_way_delay: Duration,
    /// The queue as configured, e.g. "droptail 2000p".
    pub queue: String,
    /// Largest buffer the bottleneck queue can hold, bytes (for socket-buffer sizing).
    pub queue_bytes: u64,
    /// The emulator's settings for the bottleneck.
    pub emulator: LinkConfig,
    /// The flows send ECN-capable packets (`flows[i].ecn`): the hosts' namespaces get
    /// `net.ipv4.tcp_ecn = 1`.
    pub ecn: bool,
    /// The flows, in file order.
    pub flows: Vec<LabFlow>,
    /// Responsive cross traffic, in file order.
    pub responsive: Vec<LabCross>,
    /// Log every drop (`output.drop_log`).
    pub drop_log: bool,
    /// At most this many drops are logged (`output.drop_log_limit`).
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
        let EmulatedLink {
            config:
                LinkConfig {
                    mut a_to_b,
                    mut b_to_a,
                    ..
                },
            queue: fwd_queue,
            reverse_capacity_bps: rev_bps,
        } = emulated_link_beside_hosts(checked, li, file)?;

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
            if f.ecn != s.flows[0].ecn {
                return Err(unsupported(
                    field("ecn"),
                    "every lab flow sends from one namespace, whose net.ipv4.tcp_ecn is the \
                     kernel's ECN setting for all of them; give every flow the same `ecn`",
                ));
            }
            if !f.host_stalls.is_none() {
                return Err(unsupported(
                    field("host_stalls"),
                    "host stalls are the simulator's model of what real hosts do; the lab's \
                     hosts stall on their own: remove `host_stalls`",
                ));
            }
        }
        for cf in &checked.flows {
            let spec = &s.flows[cf.spec];
            let field = |k: &str| format!("flows[{}].{k}", cf.spec);
            let (cc, params) = kernel_cc(&cf.cc).map_err(|m| unsupported(field("cc"), &m))?;
            let id = cf.id;
            let port = FIRST_PORT
                .checked_add(cf.id as u16)
                .filter(|_| cf.id < u32::from(MAX_FLOWS))
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

        // Responsive cross traffic (on this link and in the data direction: the mapping above
        // refuses other links, the scenario's check the reverse direction).
        let mut responsive = Vec::new();
        for (i, (spec, c)) in s.cross_traffic.iter().zip(&checked.cross).enumerate() {
            let Some(cc) = &c.cc else { continue };
            let field = |k: &str| format!("cross_traffic[{i}].{k}");
            let (cc, params) = kernel_cc(cc).map_err(|m| unsupported(field("cc"), &m))?;
            let port = u16::try_from(i)
                .ok()
                .filter(|&i| i < MAX_FLOWS)
                .map(|i| FIRST_CROSS_PORT + i)
                .ok_or_else(|| unsupported(field("responsive"), "at most 1000 entries"))?;
            responsive.push(LabCross {
                index: i,
                kind: spec.kind.name(),
                link: link.name.clone(),
                cc,
                params,
                start: Duration::from_nanos(c.start),
                stop: Duration::from_nanos(c.stop),
                port,
                source: CrossConfig::from_scenario(spec, c),
                link_bps: link.rate.0,
                seed: longhaul_sim::engine::cross_seed(s.seed, i),
            });
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
            reverse_capacity_bps: rev_bps as f64,
            mtu,
            distance_km: link.distance_km,
            one_way_delay: Duration::from_nanos(link.delay.0),
            queue: fwd_queue.describe,
            queue_bytes: fwd_queue.max_bytes,
            emulator,
            ecn: s.flows.first().is_some_and(|f| f.ecn),
            flows,
            responsive,
            drop_log: s.output.drop_log,
            drop_log_limit: s.output.drop_log_limit,
        })
    }

    /// Every congestion control the run's sockets select, with its parameters: the flows'
    /// in flow order, then the responsive cross traffic's in entry order.
    pub fn controls(&self) -> Vec<(&str, &[String])> {
        let flows = self
            .flows
            .iter()
            .map(|f| (f.cc.as_str(), f.params.as_slice()));
        let cross = (self.responsive.iter()).map(|c| (c.cc.as_str(), c.params.as_slice()));
        flows.chain(cross).collect()
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

/// A congestion control as the kernel runs it: its name and the parameters that differ from
/// its defaults; or why the lab cannot run it.
fn kernel_cc(spec: &CcSpec) -> Result<(String, Vec<String>), String> {
    let cc = spec.algorithm.to_string();
    let params: Vec<String> = spec
        .params
        .differing_from_defaults()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if KERNEL_NATIVE.contains(&cc.as_str()) {
        if !params.is_empty() {
            return Err(format!(
                "`{cc}` is the kernel's own and takes no per-run parameters (given: {}); \
                 remove them",
                params.join(",")
            ));
        }
    } else if !ebpf().contains(&cc.as_str()) {
        return Err(format!(
            "`{cc}` has no kernel implementation; the lab runs {} and {}",
            KERNEL_NATIVE.join(", "),
            ebpf().join(", ")
        ));
    }
    Ok((cc, params))
}

#[cfg(test)]
mod tests {
    use super::*;
    use longhaul_emu::config::RateConfig;
    use longhaul_emu::model::cross::CrossProcess;
    use longhaul_emu::model::loss::LossConfig;
    use longhaul_emu::model::red::RedUnit;

    const BASE: &str = r#"
name = "t"
duration = "30s"
seed = 7
[[links]]
name = "core"
rate = "100mbit"
delay = "50ms"
distance_km = 5000
queue = { kind = "droptail", packets = 1000 }
[[links]]
name = "side"
rate = "1gbit"
delay = "1ms"
[topology]
kind = "dumbbell"
bottleneck = "core"
[[flows]]
cc = "fast:alpha=100"
count = 2
[[flows]]
cc = "cubic"
start = "5s"
stop = "25s"
extra_rtt = "120ms"
"#;

    fn plan(extra: &str, sets: &[&str]) -> Result<LabPlan, LabError> {
        let text = format!("{BASE}{extra}");
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        crate::plan_from_text(&text, "t.toml", "t", &sets)
    }

    fn unsupported_field(r: Result<LabPlan, LabError>) -> (String, String) {
        match r {
            Err(LabError::Unsupported { field, message, .. }) => (field, message),
            other => panic!("expected an unsupported-field error, got {other:?}"),
        }
    }

    #[test]
    fn dumbbell_maps_onto_one_bottleneck() {
        let p = plan("", &[]).unwrap();
        assert_eq!(p.capacity_bps, 100e6);
        assert_eq!(p.mtu, 1500);
        assert_eq!(p.one_way_delay, Duration::from_millis(50));
        assert_eq!(p.queue, "droptail 1000p");
        assert_eq!(p.queue_bytes, 1_500_000);
        let e = &p.emulator;
        assert_eq!(e.a_to_b.rate, RateConfig::Constant { bps: 100_000_000 });
        assert_eq!(e.b_to_a.rate, RateConfig::Constant { bps: 100_000_000 });
        assert_eq!(e.a_to_b.delay.delay_ns, 50_000_000);
        assert_eq!(e.a_to_b.queue.packets, Some(1000));
        assert_eq!((e.a_to_b.seed, e.b_to_a.seed), (7, 8));
        // count = 2 expands; ids from 0 as in the simulator; each flow its own port.
        let ids: Vec<u32> = p.flows.iter().map(|f| f.id).collect();
        assert_eq!(ids, vec![0, 1, 2]);
        let ports: Vec<u16> = p.flows.iter().map(|f| f.port).collect();
        assert_eq!(ports, vec![5302, 5303, 5304]);
        assert_eq!(p.flows[0].cc, "fast");
        assert_eq!(p.flows[0].params, vec!["alpha=100".to_string()]);
        assert!(p.flows[2].params.is_empty());
        assert_eq!(p.flows[2].start, Duration::from_secs(5));
        assert_eq!(p.flows[2].stop, Duration::from_secs(25));
        assert_eq!(p.flows[0].stop, Duration::from_secs(30));
        // 120 ms extra RTT: 60 ms each way, only for flow 3's port.
        let d = PortDelay {
            port: 5304,
            extra_ns: 60_000_000,
        };
        assert_eq!(e.a_to_b.port_delays, vec![d]);
        assert_eq!(e.b_to_a.port_delays, vec![d]);
        assert_eq!(p.max_rtt(), Duration::from_millis(220));
    }

    #[test]
    fn odd_extra_rtt_splits_without_losing_a_nanosecond() {
        let p = plan("", &["flows.1.extra_rtt=\"3ns\""]).unwrap();
        assert_eq!(p.emulator.a_to_b.port_delays[0].extra_ns, 2);
        assert_eq!(p.emulator.b_to_a.port_delays[0].extra_ns, 1);
    }

    #[test]
    fn reverse_direction_loss_red_and_cross_traffic() {
        let p = plan(
            r#"
[[cross_traffic]]
kind = "onoff"
link = "core"
rate = "20mbit"
on = "100ms"
off = "300ms"
packet_size = 1000
[[cross_traffic]]
kind = "cbr"
link = "core"
rate = "1mbit"
reverse = true
"#,
            &[
                "links.0.loss=0.001",
                "links.0.reverse_rate=\"10mbit\"",
                "links.0.queue={ kind = \"red\", packets = 600, min_th = 50, max_th = 150, max_p = 0.1, weight = 0.002, gentle = false }",
            ],
        )
        .unwrap();
        let e = &p.emulator;
        assert_eq!(e.a_to_b.loss, LossConfig::Bernoulli { p: 0.001 });
        assert_eq!(e.b_to_a.loss, LossConfig::None);
        assert_eq!(e.b_to_a.rate, RateConfig::Constant { bps: 10_000_000 });
        // RED's thresholds stay in the queue's unit, packets.
        let red = e.a_to_b.red.unwrap();
        assert_eq!(
            (red.min, red.max, red.unit),
            (50.0, 150.0, RedUnit::Packets)
        );
        assert_eq!((red.max_p, red.weight, red.gentle), (0.1, 0.002, false));
        assert_eq!(e.a_to_b.cross.len(), 1);
        assert_eq!(
            e.a_to_b.cross[0].kind,
            CrossProcess::OnOff {
                mean_on_ns: 100_000_000,
                mean_off_ns: 300_000_000
            }
        );
        assert_eq!(e.a_to_b.cross[0].packet_bytes, 1000);
        // The reverse source defaults to the link's MTU.
        assert_eq!(e.b_to_a.cross[0].kind, CrossProcess::Cbr);
        assert_eq!(e.b_to_a.cross[0].packet_bytes, 1500);
    }

    /// RED as the simulator runs it by default (gentle) runs in the lab too.
    #[test]
    fn gentle_red_maps_onto_the_emulators_gentle_red() {
        let p = plan(
            "",
            &["links.0.queue={ kind = \"red\", packets = 600, min_th = 50, max_th = 150 }"],
        )
        .unwrap();
        let red = p.emulator.a_to_b.red.unwrap();
        assert!(red.gentle);
        assert_eq!(
            (red.min, red.max, red.unit),
            (50.0, 150.0, RedUnit::Packets)
        );
    }

    /// RED that marks ECN, and flows that send ECN-capable packets, run in the lab: the
    /// emulator marks, and the hosts' kernels negotiate ECN.
    #[test]
    fn red_with_ecn_and_ecn_flows_map_onto_the_emulator_and_the_hosts() {
        let p = plan(
            "",
            &[
                "links.0.queue={ kind = \"red\", packets = 600, min_th = 50, max_th = 150, ecn = true }",
                "flows.0.ecn=true",
                "flows.1.ecn=true",
            ],
        )
        .unwrap();
        assert!(p.ecn);
        assert!(p.emulator.a_to_b.red.unwrap().ecn);
        assert!(p.queue.ends_with(" ecn"), "{}", p.queue);
        assert!(!plan("", &[]).unwrap().ecn);
    }

    /// Every kind of cross traffic, `web` included, maps onto the simulator's own generator
    /// (`longhaul_path::cross`) with the scenario's parameters, so the lab offers the load the
    /// simulator offers for the same entry: `rate` is the average in both (an on/off source at
    /// 20 Mb/s with a 25 % duty cycle offers 20 Mb/s, not 5), measured by running it.
    #[test]
    fn cross_traffic_runs_the_simulators_generator_for_every_kind() {
        use longhaul_sim::cross::{CrossConfig, CrossSource};
        for (kind, extra) in [
            ("cbr", ""),
            ("poisson", ""),
            ("onoff", "on = \"100ms\"\noff = \"300ms\""),
            ("web", "size = \"100KiB\"\nshape = 2.5"),
        ] {
            let entry = format!(
                "[[cross_traffic]]\nkind = \"{kind}\"\nlink = \"core\"\nrate = \"20mbit\"\n{extra}\n"
            );
            let p = plan(&entry, &[]).unwrap();
            let cfg = p.emulator.a_to_b.cross[0];
            let checked =
                longhaul_sim::Scenario::parse(&format!("{BASE}{entry}"), "t.toml", "t", &[])
                    .unwrap();
            let sim =
                CrossConfig::from_scenario(&checked.scenario.cross_traffic[0], &checked.cross[0]);
            assert_eq!(cfg.kind, sim.kind, "{kind}");
            assert_eq!(
                (cfg.rate_bps, cfg.packet_bytes, cfg.start_ns, cfg.stop_ns),
                (20e6, 1500, 0, u64::MAX),
                "{kind}"
            );
            // 400 s of the generator's packets (1000 on/off cycles, ~9,800 web transfers).
            let end = 400_000_000_000u64;
            let bits: f64 = CrossSource::new(&cfg, 0, p.capacity_bps, 7)
                .arrivals()
                .take_while(|&(t, _)| t < end)
                .map(|(_, size)| f64::from(size) * 8.0)
                .sum();
            let offered = bits / 400.0;
            assert!(
                (offered / 20e6 - 1.0).abs() < 0.05,
                "{kind}: the lab offers {offered} b/s for a 20 Mb/s rate"
            );
        }
    }

    /// Cross traffic limited in time keeps its times: the emulator counts them from the
    /// lab's zero point, the start of the flows, as the simulator counts them from its time 0.
    /// Duplication reaches the delay line of both directions.
    #[test]
    fn cross_traffic_in_time_and_duplication_map_as_the_simulator_runs_them() {
        let entry = "[[cross_traffic]]\nkind = \"cbr\"\nlink = \"core\"\nrate = \"10mbit\"\n\
                     start = \"1s\"\nstop = \"4s\"\n\
                     [[cross_traffic]]\nkind = \"poisson\"\nlink = \"core\"\nrate = \"5mbit\"\n\
                     start = \"2s\"\n";
        let p = plan(entry, &["links.0.duplicate=0.01"]).unwrap();
        let x = &p.emulator.a_to_b.cross;
        assert_eq!(
            (x[0].start_ns, x[0].stop_ns),
            (1_000_000_000, 4_000_000_000)
        );
        assert_eq!((x[1].start_ns, x[1].stop_ns), (2_000_000_000, u64::MAX));
        assert_eq!(p.emulator.a_to_b.delay.duplicate_p, 0.01);
        assert_eq!(p.emulator.b_to_a.delay.duplicate_p, 0.01);
    }

    #[test]
    fn refuses_what_one_bottleneck_cannot_do_naming_the_field() {
        let cases: Vec<(Result<LabPlan, LabError>, &str, &str)> = vec![
            (
                plan("", &["flows.0.access={ rate = \"1gbit\" }"]),
                "flows[0].access",
                "access",
            ),
            (plan("", &["flows.0.bytes=\"1G\""]), "flows[0].bytes", "bytes"),
            (plan("", &["flows.0.ecn=true"]), "flows[1].ecn", "same `ecn`"),
            (
                plan(
                    "",
                    &["flows.0.host_stalls={ sender = { rate = \"4/s\", mean = \"2ms\" } }"],
                ),
                "flows[0].host_stalls",
                "stall on their own",
            ),
            (
                plan("", &["flows.1.cc=\"paced:rate=50e6\""]),
                "flows[1].cc",
                "no kernel",
            ),
            (
                plan("", &["flows.1.cc=\"cubic:beta=0.5\""]),
                "flows[1].cc",
                "kernel's own",
            ),
            (
                plan(
                    "[[cross_traffic]]\nkind = \"web\"\nlink = \"side\"\nrate = \"10mbit\"\nresponsive = true\n",
                    &[],
                ),
                "cross_traffic[0].link",
                "bottleneck",
            ),
            (
                plan(
                    "[[cross_traffic]]\nkind = \"web\"\nlink = \"core\"\nrate = \"10mbit\"\nresponsive = true\ncc = \"paced:rate=5e6\"\n",
                    &[],
                ),
                "cross_traffic[0].cc",
                "no kernel",
            ),
            (
                plan(
                    "[[cross_traffic]]\nkind = \"onoff\"\nlink = \"core\"\nrate = \"10mbit\"\non = \"1s\"\noff = \"1s\"\nresponsive = true\ncc = \"cubic:beta=0.5\"\n",
                    &[],
                ),
                "cross_traffic[0].cc",
                "kernel's own",
            ),
            (
                plan(
                    "[[cross_traffic]]\nkind = \"cbr\"\nlink = \"side\"\nrate = \"10mbit\"\n",
                    &[],
                ),
                "cross_traffic[0].link",
                "bottleneck",
            ),
            (
                plan(
                    "",
                    &[
                        "topology={ kind = \"parking_lot\", chain = [\"core\", \"side\"] }",
                    ],
                ),
                "topology.kind",
                "parking lot",
            ),
        ];
        for (r, field, words) in cases {
            let (f, m) = unsupported_field(r);
            assert_eq!(f, field);
            assert!(m.contains(words), "{field}: `{m}` lacks `{words}`");
        }
    }

    const RESPONSIVE: &str =
        "[[cross_traffic]]\nkind = \"cbr\"\nlink = \"core\"\nrate = \"2mbit\"\n\
        [[cross_traffic]]\nkind = \"web\"\nlink = \"core\"\nrate = \"10mbit\"\nresponsive = true\n\
        start = \"2s\"\nstop = \"20s\"\n\
        [[cross_traffic]]\nkind = \"onoff\"\nlink = \"core\"\nrate = \"5mbit\"\non = \"200ms\"\n\
        off = \"800ms\"\nresponsive = true\ncc = \"fast:alpha=50\"\n";

    /// Responsive web and on/off traffic map onto kernel TCP transfers: each entry its own
    /// receiver port above the flows', no per-flow extra delay, its congestion control loaded
    /// after the flows'; the emulator keeps only the unresponsive entry.
    #[test]
    fn responsive_cross_traffic_maps_onto_kernel_transfers() {
        let p = plan(RESPONSIVE, &[]).unwrap();
        let x = &p.responsive;
        assert_eq!(x.len(), 2);
        assert_eq!(
            (x[0].index, x[0].kind, x[1].index, x[1].kind),
            (1, "web", 2, "onoff")
        );
        assert_eq!((x[0].cc.as_str(), x[0].params.len()), ("reno", 0));
        assert_eq!(
            (x[1].cc.as_str(), x[1].params.clone()),
            ("fast", vec!["alpha=50".into()])
        );
        assert_eq!((x[0].port, x[1].port), (6303, 6304));
        assert!(p.flows.iter().all(|f| f.port < FIRST_CROSS_PORT));
        assert_eq!(
            (x[0].start, x[0].stop),
            (Duration::from_secs(2), Duration::from_secs(20))
        );
        assert_eq!(
            (x[1].start, x[1].stop),
            (Duration::ZERO, Duration::from_secs(30))
        );
        assert_eq!((x[0].link.as_str(), x[0].link_bps), ("core", 100e6));
        // Only flow 2's port has an extra delay; the cross ports have none.
        let ports: Vec<u16> = p
            .emulator
            .a_to_b
            .port_delays
            .iter()
            .map(|d| d.port)
            .collect();
        assert_eq!(ports, [5304]);
        // The emulator generates the cbr entry only.
        let kinds: Vec<_> = p.emulator.a_to_b.cross.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, [longhaul_emu::model::cross::CrossProcess::Cbr]);
        let controls = p.controls();
        let names: Vec<&str> = controls.iter().map(|c| c.0).collect();
        assert_eq!(names, ["fast", "fast", "cubic", "reno", "fast"]);
        assert_eq!(controls[4].1, ["alpha=50".to_string()]);
    }

    /// Responsive traffic in the ACK direction is refused, naming the field (the scenario's own
    /// check: responsive transfers run in the data direction).
    #[test]
    fn responsive_cross_traffic_in_the_ack_direction_is_refused() {
        let entry = "[[cross_traffic]]\nkind = \"web\"\nlink = \"core\"\nrate = \"10mbit\"\n\
                     responsive = true\nreverse = true\n";
        match plan(entry, &[]) {
            Err(LabError::Scenario(e)) => {
                let m = e.to_string();
                assert!(m.contains("cross_traffic[0].reverse"), "{m}");
                assert!(m.contains("data direction"), "{m}");
            }
            other => panic!("{other:?}"),
        }
    }

    /// The lab's schedule is the simulator's: the same source and seed, drawn in the order the
    /// simulator draws them (web: a size then the gap to the next arrival; on/off: an on and an
    /// off period, the on period's bytes at the peak rate), and as many transfers as the
    /// simulator's engine begins over the run.
    #[test]
    fn the_schedule_is_the_simulators() {
        use longhaul_sim::cross::CrossSource;
        let text = format!("{BASE}{RESPONSIVE}");
        for seed in [7u64, 8, 9] {
            let sets = [format!("seed={seed}")];
            let checked = longhaul_sim::Scenario::parse(&text, "t.toml", "t", &sets).unwrap();
            let p = LabPlan::from_scenario(&checked, "t.toml").unwrap();
            for c in &p.responsive {
                let lab: Vec<(u64, u64)> = c.schedule().map(|t| (t.at_ns, t.bytes)).collect();
                // By hand, from the simulator's source for this entry.
                let i = c.index;
                let sim_cfg = longhaul_sim::cross::CrossConfig::from_scenario(
                    &checked.scenario.cross_traffic[i],
                    &checked.cross[i],
                );
                assert_eq!(c.source, sim_cfg);
                let stream = longhaul_sim::engine::cross_seed(seed, i);
                let mut src = CrossSource::new(&sim_cfg, 0, 100e6, stream);
                let (mut t, mut drawn) = (checked.cross[i].start, Vec::new());
                while t < checked.cross[i].stop {
                    let (bytes, next) = if c.kind == "web" {
                        (src.transfer_size(), t + src.next_transfer_gap())
                    } else {
                        let (on, off) = src.on_off_periods();
                        let b = (src.peak_rate_bps() * on as f64 * 1e-9 / 8.0) as u64;
                        (b.max(1), t + on + off)
                    };
                    drawn.push((t, bytes));
                    t = next;
                }
                assert_eq!(lab, drawn, "seed {seed}, cross_traffic[{i}]");
                assert!(lab.len() > 10, "{}", lab.len());
                assert_eq!(lab[0].0, c.start.as_nanos() as u64);
                let window = c.start.as_nanos() as u64..c.stop.as_nanos() as u64;
                assert!(lab.iter().all(|t| window.contains(&t.0)));
            }
            // The simulator's engine begins as many transfers per entry.
            let mut short = checked.clone();
            short.scenario.transport = longhaul_sim::scenario::TransportKind::Model;
            let out = longhaul_sim::run(&short, &mut |_| {}).unwrap();
            for c in &p.responsive {
                let sim = &out.summary.responsive_cross;
                let s = sim.iter().find(|s| s.index as usize == c.index).unwrap();
                assert_eq!(s.transfers, c.schedule().count() as u64, "seed {seed}");
                assert_eq!(s.transfers, out.cross_traffic[c.index].transfers);
                assert!(s.completed > 0 && s.completed <= s.transfers);
                assert!(s.bytes_delivered > 0);
            }
        }
    }

    #[test]
    fn simulator_errors_pass_through() {
        match plan("", &["flows.0.cc=\"nosuch\""]) {
            Err(LabError::Scenario(e)) => assert!(e.to_string().contains("flows[0].cc")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn emulator_limits_are_reported_as_the_link() {
        // 10 s one-way delay + 100 ms extra: the emulator refuses delays over 10 s.
        let (f, m) = unsupported_field(plan("", &["links.0.delay=\"11s\"", "duration=\"60s\""]));
        assert_eq!(f, "links[0]");
        assert!(m.contains("10 s"), "{m}");
    }
}
