//! A simulator scenario's link on the emulator: the one mapping `longhaul lab` and `longhaul emu
//! pair|shell --scenario` share, so both read a scenario's link identically.
//!
//! | scenario (`longhaul_path::scenario`)       | emulator                                         |
//! |--------------------------------------------|--------------------------------------------------|
//! | `rate`, `reverse_rate`                     | rate a → b (data), b → a (ACKs; default: same)   |
//! | `trace`, `reverse_trace`                   | the same mahimahi traces a → b, b → a            |
//! | `delay`, `jitter`, `reorder`, `reorder_by`, `duplicate` | the delay line, both directions     |
//! | `mtu`                                      | MTU of both TUN devices                          |
//! | `overhead`                                 | framing bytes per packet, both directions        |
//! | `queue` / `reverse_queue` droptail         | droptail in packets or bytes                     |
//! | `queue` RED (gentle or not, `ecn`)         | RED in the queue's unit, marking CE with `ecn`   |
//! | `loss`, `reverse_loss`                     | Bernoulli or Gilbert–Elliott loss on the wire    |
//! | `cross_traffic` of every kind, `start`, `stop` | the same generators at the bottleneck (`reverse`: b → a) |
//! | `seed`                                     | the random streams (a → b `seed`, b → a `seed + 1`) |
//!
//! Times (a cross source's `start` and `stop`, a trace's opportunities) count from the
//! emulator's zero point: the emulator's start, or the instant its driver gives
//! (`Emulator::set_zero`; `longhaul lab` gives the start of its flows, the simulator's time 0).
//! A source without `stop` runs for as long as the emulator does.
//!
//! What the emulator cannot do is refused with an [`Unsupported`] that names the field: cross
//! traffic that is responsive (it needs hosts of its own: `longhaul lab` runs it,
//! [`emulated_link_beside_hosts`]) or on another link.

use crate::config::{DirectionConfig, LinkConfig, RateConfig};
use crate::model::cross::CrossConfig;
use crate::model::queue::QueueLimits;
use crate::model::red::{RedConfig, RedUnit};
use longhaul_path::scenario::{LinkLoss, QueueKind, QueueSpec, TopologyKind};
use longhaul_path::trace::Trace;
use longhaul_path::Checked;
use thiserror::Error;

/// A scenario field the emulator cannot honour.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("{file}: field `{field}`: {message}")]
pub struct Unsupported {
    /// The scenario file.
    pub file: String,
    /// The field, as a path such as `links[0].queue.ecn`.
    pub field: String,
    /// Why not, and what to write instead.
    pub message: String,
}

/// Which of a scenario's links to emulate: `name` if given, else the dumbbell's bottleneck, else
/// the only link. The error names the links there are.
pub fn link_index(checked: &Checked, name: Option<&str>, file: &str) -> Result<usize, Unsupported> {
    let s = &checked.scenario;
    let names = s
        .links
        .iter()
        .map(|l| l.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let wanted = match name {
        Some(n) => n.to_string(),
        None if s.topology.kind == TopologyKind::Dumbbell => {
            s.topology.bottleneck.clone().unwrap_or_default()
        }
        None if s.links.len() == 1 => s.links[0].name.clone(),
        None => {
            return Err(Unsupported {
                file: file.to_string(),
                field: "topology.kind".into(),
                message: format!(
                    "a parking lot has several links ({names}); choose one with --link NAME"
                ),
            })
        }
    };
    s.links
        .iter()
        .position(|l| l.name == wanted)
        .ok_or_else(|| Unsupported {
            file: file.to_string(),
            field: "links".into(),
            message: format!("no [[links]] entry named `{wanted}` (links: {names})"),
        })
}

/// One link of a scenario as the emulator runs it: both directions' rate, delay, queue, loss,
/// and the cross traffic that loads this link. Flows are not part of it (their per-port delays
/// are added by `longhaul lab`'s plan). `longhaul emu pair|shell --scenario` uses this too, so
/// the lab and the bare emulator read a scenario's link identically.
#[derive(Debug, Clone)]
pub struct EmulatedLink {
    /// The emulator's link settings.
    pub config: LinkConfig,
    /// The data direction's queue as mapped.
    pub queue: MappedQueue,
    /// b → a capacity, bits/s (`reverse_rate`, default `rate`).
    pub reverse_capacity_bps: u64,
}

/// Maps `links[li]` of a checked scenario, and the `cross_traffic` entries, onto the emulator.
/// Refuses (naming the field) what the emulator cannot do: cross traffic that is responsive or
/// on another link.
pub fn emulated_link(
    checked: &Checked,
    li: usize,
    file: &str,
) -> Result<EmulatedLink, Unsupported> {
    map_link(checked, li, file, false)
}

/// As [`emulated_link`], for a driver that runs responsive cross traffic on hosts of its own
/// (`longhaul lab`): responsive entries on this link are left out of the emulator's settings
/// instead of refused. Cross traffic on another link is still refused.
pub fn emulated_link_beside_hosts(
    checked: &Checked,
    li: usize,
    file: &str,
) -> Result<EmulatedLink, Unsupported> {
    map_link(checked, li, file, true)
}

fn map_link(
    checked: &Checked,
    li: usize,
    file: &str,
    hosts_run_responsive: bool,
) -> Result<EmulatedLink, Unsupported> {
    let s = &checked.scenario;
    let unsupported = |field: String, message: &str| Unsupported {
        file: file.to_string(),
        field,
        message: message.to_string(),
    };
    let link = &s.links[li];
    let mtu = link.mtu;
    let fwd_queue = map_queue(&link.queue, mtu);
    let rev_queue = match &link.reverse_queue {
        Some(q) => map_queue(q, mtu),
        None => fwd_queue.clone(),
    };
    let rate_bps = link.rate.0.round() as u64;
    let rev_bps = link.reverse_rate.map_or(rate_bps, |r| r.0.round() as u64);
    let delay = link.delay_config();
    let traces = checked.traces.get(li).cloned().unwrap_or_default();
    // A direction's rate: its trace (named as the file names it), else a constant.
    let rate = |trace: Option<Trace>, name: Option<&String>, bps: u64| match trace {
        Some(trace) => RateConfig::Trace {
            path: name.cloned().unwrap_or_default(),
            trace,
        },
        None => RateConfig::Constant { bps },
    };
    let fwd_rate = rate(traces.forward, link.trace.as_ref(), rate_bps);
    let rev_name = link.reverse_trace.as_ref().or(link.trace.as_ref());
    let rev_rate = rate(traces.reverse, rev_name, rev_bps);
    // One direction: its rate, queue, random loss and random stream; the delay and the
    // framing overhead are shared.
    let overhead_bytes = u32::try_from(link.overhead.0).expect("checked: at most the MTU");
    let direction =
        |rate: RateConfig, queue: &MappedQueue, loss: LinkLoss, seed: u64| DirectionConfig {
            rate,
            delay,
            queue: queue.limits,
            red: queue.red,
            loss: loss.config(),
            overhead_bytes,
            seed,
            ..Default::default()
        };
    let mut a_to_b = direction(fwd_rate, &fwd_queue, link.loss, s.seed);
    let mut b_to_a = direction(
        rev_rate,
        &rev_queue,
        link.reverse_loss,
        s.seed.wrapping_add(1),
    );
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
        if c.responsive && hosts_run_responsive {
            continue;
        }
        if c.responsive {
            return Err(unsupported(
                field("responsive"),
                "the emulator's cross traffic is unresponsive; for competing TCP add a flow",
            ));
        }
        // The simulator's generator, from the zero point's `start` to its `stop` (without
        // one, for as long as the emulator runs).
        let chk = &checked.cross[i];
        let cfg = CrossConfig {
            stop_ns: if c.stop.is_some() { chk.stop } else { u64::MAX },
            ..CrossConfig::from_scenario(c, chk)
        };
        if c.reverse {
            b_to_a.cross.push(cfg);
        } else {
            a_to_b.cross.push(cfg);
        }
    }
    Ok(EmulatedLink {
        config: LinkConfig {
            a_to_b,
            b_to_a,
            mtu,
        },
        queue: fwd_queue,
        reverse_capacity_bps: rev_bps,
    })
}

/// A scenario queue mapped onto the emulator's droptail limits and RED.
#[derive(Debug, Clone)]
pub struct MappedQueue {
    /// The drop-tail limits in packets and bytes.
    pub limits: QueueLimits,
    /// RED, when the scenario's queue is RED.
    pub red: Option<RedConfig>,
    /// E.g. "droptail 2000p".
    pub describe: String,
    /// Largest buffer the queue can hold, bytes.
    pub max_bytes: u64,
}

fn map_queue(q: &QueueSpec, mtu: u32) -> MappedQueue {
    let limits = QueueLimits {
        packets: q.packets,
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
            let p = q.red_params(
                q.packets
                    .map(|p| p as f64)
                    .or(q.bytes.map(|b| b.0 as f64))
                    .unwrap_or(0.0),
            );
            // Thresholds in the queue's own unit, as the simulator runs them.
            Some(RedConfig {
                min: p.min_th,
                max: p.max_th,
                unit: if q.packets.is_some() {
                    RedUnit::Packets
                } else {
                    RedUnit::Bytes
                },
                max_p: p.max_p,
                weight: p.weight,
                gentle: p.gentle,
                ecn: p.ecn,
            })
        }
    };
    let describe = match &red {
        None => format!("droptail {size}"),
        Some(r) => format!(
            "red {size} {} max_p={} w={}{}{}",
            r.describe_thresholds(),
            r.max_p,
            r.weight,
            if r.gentle { " gentle" } else { "" },
            if r.ecn { " ecn" } else { "" }
        ),
    };
    MappedQueue {
        limits,
        red,
        describe,
        max_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use longhaul_path::Scenario;

    const PATH: &str = r#"
duration = "10s"
[[links]]
name = "core"
rate = "100mbit"
delay = "20ms"
queue = { kind = "red", packets = 600, min_th = 50, max_th = 150, ecn = false }
[[links]]
name = "edge"
rate = "1gbit"
delay = "1ms"
[[flows]]
cc = "reno"
"#;

    fn checked(topology: &str) -> Checked {
        Scenario::parse(&format!("{PATH}{topology}"), "t.toml", "t", &[]).unwrap()
    }

    #[test]
    fn the_bottleneck_is_the_default_link_and_names_are_checked() {
        let c = checked("[topology]\nkind = \"dumbbell\"\nbottleneck = \"core\"\n");
        assert_eq!(link_index(&c, None, "t.toml"), Ok(0));
        assert_eq!(link_index(&c, Some("edge"), "t.toml"), Ok(1));
        let e = link_index(&c, Some("wan"), "t.toml").unwrap_err();
        assert_eq!(e.field, "links");
        assert!(e.message.contains("core, edge"), "{e}");
    }

    #[test]
    fn a_parking_lot_needs_a_chosen_link() {
        let c = checked(
            "[topology]\nkind = \"parking_lot\"\nchain = [\"core\", \"edge\"]\n[[flows]]\ncc = \"reno\"\npath = [\"core\"]\n",
        );
        let e = link_index(&c, None, "t.toml").unwrap_err();
        assert!(e.to_string().contains("--link NAME"), "{e}");
    }

    #[test]
    fn a_gentle_red_link_maps_in_its_own_unit() {
        let c = checked("[topology]\nkind = \"dumbbell\"\nbottleneck = \"core\"\n");
        let l = emulated_link(&c, 0, "t.toml").unwrap();
        let red = l.config.a_to_b.red.unwrap();
        assert_eq!(
            (red.min, red.max, red.unit, red.gentle, red.ecn),
            (50.0, 150.0, RedUnit::Packets, true, false)
        );
        assert_eq!(
            l.queue.describe,
            "red 600p min=50p max=150p max_p=0.1 w=0.002 gentle"
        );
        // The simulator's RED state machine, with the same settings.
        let sim = c.scenario.links[0].queue.red_params(600.0);
        assert_eq!(red.params(), sim);
        assert_eq!(
            l.config.a_to_b.rate,
            RateConfig::Constant { bps: 100_000_000 }
        );
        assert_eq!(l.config.a_to_b.delay.delay_ns, 20_000_000);
    }

    #[test]
    fn red_with_ecn_in_bytes_and_the_links_overhead_map_as_the_simulator_runs_them() {
        let text = PATH.replace(
            "queue = { kind = \"red\", packets = 600, min_th = 50, max_th = 150, ecn = false }",
            "overhead = \"38B\"\n\
             queue = { kind = \"red\", bytes = \"1M\", min_th = 100000, max_th = 300000, ecn = true }",
        ) + "[topology]\nkind = \"dumbbell\"\nbottleneck = \"core\"\n";
        let c = Scenario::parse(&text, "t.toml", "t", &[]).unwrap();
        let l = emulated_link(&c, 0, "t.toml").unwrap();
        for d in [&l.config.a_to_b, &l.config.b_to_a] {
            assert_eq!(d.overhead_bytes, 38);
            let red = d.red.unwrap();
            assert_eq!(
                (red.min, red.max, red.unit, red.ecn),
                (100_000.0, 300_000.0, RedUnit::Bytes, true)
            );
            assert_eq!(
                red.params(),
                c.scenario.links[0].queue.red_params(1048576.0)
            );
            assert_eq!(d.queue.bytes, Some(1 << 20));
        }
        assert!(
            l.queue.describe.ends_with(" gentle ecn"),
            "{}",
            l.queue.describe
        );
        assert_eq!(l.config.validate(), Ok(()));
        // Without the key, no overhead.
        let c = checked("[topology]\nkind = \"dumbbell\"\nbottleneck = \"core\"\n");
        let l = emulated_link(&c, 0, "t.toml").unwrap();
        assert_eq!(l.config.a_to_b.overhead_bytes, 0);
    }

    #[test]
    fn loss_models_and_the_delay_line_map_to_the_same_models() {
        use crate::model::loss::LossConfig;
        let c = Scenario::parse(
            &format!(
                "{}[topology]\nkind = \"dumbbell\"\nbottleneck = \"core\"\n",
                PATH.replace(
                    "delay = \"20ms\"",
                    "delay = \"20ms\"\njitter = \"1ms\"\nreorder = 0.01\nreorder_by = \"2ms\"\nreverse_loss = 0.002\n\
                     loss = { model = \"gilbert_elliott\", p = 0.01, r = 0.25, loss_good = 0.001 }"
                )
            ),
            "t.toml",
            "t",
            &[],
        )
        .unwrap();
        let l = emulated_link(&c, 0, "t.toml").unwrap();
        assert_eq!(
            l.config.a_to_b.loss,
            LossConfig::GilbertElliott {
                p: 0.01,
                r: 0.25,
                loss_good: 0.001,
                loss_bad: 1.0
            }
        );
        assert_eq!(l.config.b_to_a.loss, LossConfig::Bernoulli { p: 0.002 });
        for d in [l.config.a_to_b.delay, l.config.b_to_a.delay] {
            assert_eq!(
                (d.delay_ns, d.jitter_ns, d.reorder_p, d.reorder_by_ns),
                (20_000_000, 1_000_000, 0.01, 2_000_000)
            );
        }
        assert_eq!(l.config.validate(), Ok(()));
    }

    #[test]
    fn web_cross_traffic_maps_onto_the_simulators_generator() {
        use crate::model::cross::CrossProcess;
        let c = checked(
            "[topology]\nkind = \"dumbbell\"\nbottleneck = \"core\"\n\
             [[cross_traffic]]\nkind = \"web\"\nlink = \"core\"\nrate = \"10mbit\"\nsize = \"200k\"\n",
        );
        let l = emulated_link(&c, 0, "t.toml").unwrap();
        let x = l.config.a_to_b.cross[0];
        assert_eq!(
            x.kind,
            CrossProcess::Web {
                mean_bytes: 200 * 1024,
                shape: 1.2
            }
        );
        assert_eq!((x.rate_bps, x.packet_bytes), (10e6, 1500));
        assert_eq!(l.config.validate(), Ok(()));
    }

    /// The bare emulator refuses responsive cross traffic; a driver with hosts of its own gets
    /// the link without it, and the unresponsive entries beside it. Cross traffic on another
    /// link is refused either way.
    #[test]
    fn responsive_cross_traffic_is_left_to_a_driver_with_hosts() {
        let c = checked(
            "[topology]\nkind = \"dumbbell\"\nbottleneck = \"core\"\n\
             [[cross_traffic]]\nkind = \"web\"\nlink = \"core\"\nrate = \"10mbit\"\nresponsive = true\n\
             [[cross_traffic]]\nkind = \"cbr\"\nlink = \"core\"\nrate = \"3mbit\"\n",
        );
        let e = emulated_link(&c, 0, "t.toml").unwrap_err();
        assert_eq!(e.field, "cross_traffic[0].responsive");
        let l = emulated_link_beside_hosts(&c, 0, "t.toml").unwrap();
        let kinds: Vec<_> = l.config.a_to_b.cross.iter().map(|x| x.kind).collect();
        assert_eq!(kinds, [crate::model::cross::CrossProcess::Cbr]);
        assert_eq!(l.config.a_to_b.cross[0].rate_bps, 3e6);
        assert!(l.config.b_to_a.cross.is_empty());
        let elsewhere = checked(
            "[topology]\nkind = \"dumbbell\"\nbottleneck = \"core\"\n\
             [[cross_traffic]]\nkind = \"onoff\"\nlink = \"edge\"\nrate = \"10mbit\"\n\
             on = \"1s\"\noff = \"1s\"\nresponsive = true\n",
        );
        for e in [
            emulated_link(&elsewhere, 0, "t.toml").unwrap_err(),
            emulated_link_beside_hosts(&elsewhere, 0, "t.toml").unwrap_err(),
        ] {
            assert_eq!(e.field, "cross_traffic[0].link");
        }
    }

    #[test]
    fn cross_traffic_limited_in_time_keeps_its_start_and_stop() {
        let c = checked(
            "[topology]\nkind = \"dumbbell\"\nbottleneck = \"core\"\n\
             [[cross_traffic]]\nkind = \"cbr\"\nlink = \"core\"\nrate = \"10mbit\"\n\
             start = \"1s\"\nstop = \"4s\"\n\
             [[cross_traffic]]\nkind = \"poisson\"\nlink = \"core\"\nrate = \"5mbit\"\n\
             start = \"2s\"\nreverse = true\n",
        );
        let l = emulated_link(&c, 0, "t.toml").unwrap();
        let (fwd, rev) = (l.config.a_to_b.cross[0], l.config.b_to_a.cross[0]);
        assert_eq!((fwd.start_ns, fwd.stop_ns), (1_000_000_000, 4_000_000_000));
        // No `stop`: for as long as the emulator runs, not the scenario's duration.
        assert_eq!((rev.start_ns, rev.stop_ns), (2_000_000_000, u64::MAX));
        assert_eq!(l.config.validate(), Ok(()));
    }

    #[test]
    fn duplication_and_rate_traces_map_to_the_same_models() {
        let dir = std::env::temp_dir().join(format!("lh-emu-scenario-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // 1504 B per ms up (12.032 Mb/s), twice that down.
        std::fs::write(dir.join("up.trace"), "1\n").unwrap();
        std::fs::write(dir.join("down.trace"), "1\n1\n").unwrap();
        let text = PATH.replace(
            "rate = \"100mbit\"\ndelay = \"20ms\"",
            "trace = \"up.trace\"\nreverse_trace = \"down.trace\"\ndelay = \"20ms\"\nduplicate = 0.01",
        ) + "[topology]\nkind = \"dumbbell\"\nbottleneck = \"core\"\n";
        let file = dir.join("t.toml");
        std::fs::write(&file, text).unwrap();
        let c = Scenario::load(&file, &[]).unwrap();
        let l = emulated_link(&c, 0, "t.toml").unwrap();
        let up = &l.config.a_to_b;
        match &up.rate {
            RateConfig::Trace { path, trace } => {
                assert_eq!(path, "up.trace");
                assert_eq!(Some(trace), c.traces[0].forward.as_ref());
            }
            r => panic!("{r:?}"),
        }
        assert!((up.capacity_bps().unwrap() - 12.032e6).abs() < 1e-3);
        let down = &l.config.b_to_a;
        assert!(matches!(&down.rate, RateConfig::Trace { path, .. } if path == "down.trace"));
        assert!((down.capacity_bps().unwrap() - 24.064e6).abs() < 1e-3);
        assert_eq!(l.reverse_capacity_bps, 24_064_000);
        for d in [up, down] {
            assert_eq!(d.delay.duplicate_p, 0.01);
        }
        assert_eq!(l.config.validate(), Ok(()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
