//! The simulator's TCP senders agree. Every controller runs the same scenarios on the compact
//! model (`transport = "model"`) and on longhaul's own transport (`transport = "proto"`), and,
//! where the scenario is one flow over one bottleneck, in `longhaul_cc::bottleneck` too. The
//! model exists for speed; these tests hold it to the transport it stands in for.
//!
//! The path: 40 Mb/s, 50 ms round trip (a bandwidth-delay product, BDP, of 166.7 packets of
//! 1500 bytes), one BDP of drop-tail buffer. Three scenarios: clean (the buffer is the only
//! loss) and two flows sharing the bottleneck, 120 s each, enough whole sawtooth cycles that the
//! one cut off at the end weighs little (Reno's is 12.8 s here, CUBIC's 7.6); random loss of
//! 0.1 % of data packets, 60 s.
//!
//! **Seeds.** Every comparison with proto is of means over eight seeds per transport. The seed
//! draws each flow's start uniformly over one round trip (as flows start in reality, unaligned
//! to the path's clock) and, on the lossy path, the random losses; on the shared path the two
//! flows start apart, which moves which of them a full queue drops first and so the split. Each
//! metric is compared with an allowance for the transports' deliberate differences (listed in
//! `crates/sim/src/transport/model.rs`) plus three standard errors of the difference of the two
//! means, each transport's standard error measured from the spread between its eight seeds.
//!
//! What is compared (means over the run; the window is sampled every 100 ms):
//! - **Utilization**, proto's scaled by 1460/1443: its data packets carry 1443 payload bytes in
//!   1500 (UDP, IP and its own 29-byte header) where TCP's carry 1460.
//! - **Loss**: packets declared lost ÷ sent.
//! - **Mean queue**, packets waiting at the bottleneck, sampled every 100 ms.
//! - **Mean window**, packets (two flows: the sum).
//! - **Sawtooth cycle**: the mean time between a window's reductions, over whole cycles (from
//!   the reduction that ends slow start to the last), a measure free of the sawtooth's phase;
//!   compared where both sides have at least three reductions.
//! - **Jain's index** of two flows.
//!
//! Allowances against proto, each from a deliberate difference:
//! - Utilization: proto's handshake (one round trip of the run, 0.04 points), one slow-start
//!   overshoot that proto's paced slow start may avoid ((BDP + buffer) ÷ packets sent per flow,
//!   0.08 points) and a round trip of window growth per congestion epoch lost to ACKs every
//!   second packet (one of the ≈ 150 round trips of a Reno epoch here, 0.67 points). BBR and
//!   Lion send at a rate, not a window: whether the payload scaling applies to what they send
//!   depends on whether their rate counts proto's larger headers, so they get the whole scaling
//!   (1.2 points) besides. Measured (model − proto, clean path): window controllers +0.05 to
//!   +0.20 points, BBR −0.61, Lion −0.51.
//! - Loss: 25 % of the larger, plus one slow-start overshoot per flow ((BDP + buffer) packets):
//!   proto paces slow start at 2·cwnd/srtt and the model sends in ACK-clocked bursts, so one of
//!   them may overflow the buffer there and the other not; how far a window overshoots the
//!   buffer in congestion avoidance depends on how its ACKs are spaced (every second packet,
//!   pacing bursts), the 25 %.
//! - Mean queue: two packets per flow, the packet an ACK every second packet leaves
//!   unacknowledged, and the packet time that packet's ACK waits, which a delay-based
//!   controller (FAST, Vegas) reads as one more packet queued (measured on the clean path:
//!   FAST 1.6, Vegas 0.6, window controllers at most 1.5 packets; shared 2.8 for two FAST
//!   flows). Where proto's token-bucket pacer sends bursts (`longhaul_proto::pacer::
//!   DEFAULT_BURST`, 10 packets) and the model does not, 10 more per flow: BBR and Lion, which
//!   pace below their window (Lion's queue: 4.1 packets on the model, 8.5 on proto), and every
//!   controller on the lossy path, where each loss recovery leaves the sender idle and the
//!   next window leaves as bursts (FAST: 43.1 packets on the model, 38.2 on proto).
//! - Jain's index: 0.01 (a 55:45 split): which flow's packets a full drop-tail queue drops
//!   depends on packet spacing (Floyd and Jacobson's phase effects), which ACKs every second
//!   packet and pacing change; measured, HighSpeed's index is 0.9999 on the model and 0.9990 on
//!   proto with standard errors of 0.0002. It still fails a transport that starves one flow
//!   where the other shares.
//! - Two BBR flows are compared in every measure: over 120 s they fill the buffer on both
//!   transports (mean queue 139.2 ± 3.2 packets on the model, 143.4 ± 1.1 on proto; loss 2.2 %
//!   on both), though proto's ACK every second packet gives them fewer delivery-rate samples.
//! - The window and the cycle are not compared with proto: proto detects a loss later (ACKs
//!   every second packet, its probe timeout) and so reduces from a window grown further, which
//!   shifts the cycle by up to 0.43 s of CUBIC's 6 (two flows) and the window by the packets
//!   it grew meanwhile; a window-limited flow's queue, which is compared, is its window less
//!   the BDP.
//!
//! Against `bottleneck.rs`, which shares the model's packet size, its ACK per packet and its
//! lack of a handshake, the allowances are those of measurement only: utilization and loss
//! within the packets in flight when a run ends ((BDP + buffer) ÷ packets sent); queue and
//! window within one packet per flow (its queue counts the packet being sent, which is
//! subtracted, and is sampled at a different instant of the 100 ms); the cycle within one
//! sampling interval (0.1 s). On the clean path both are deterministic and start at 0, so one
//! run each is compared; on the lossy path they draw their losses from different generators,
//! so means over eight seeds, with three standard errors added.
//!
//! **Controls.** `a_perturbed_controller_on_one_side_is_caught` runs the model with one of the
//! controller's defining parameters moved and proto or `bottleneck.rs` unchanged, and requires
//! a disagreement; its comment lists what these comparisons do not resolve.

use longhaul_cc::bottleneck::{self, PathConfig};
use longhaul_cc::{CcSpec, Setup};
use longhaul_metrics::online::RunningStats;
use longhaul_proto::pacer::DEFAULT_BURST;
use longhaul_sim::{run, Outcome, Scenario};
use std::time::Duration;

const RATE_BPS: f64 = 40e6;
const RTT_MS: u64 = 50;
const BDP: f64 = RATE_BPS * RTT_MS as f64 / 1000.0 / 8.0 / 1500.0;
const BUFFER: u32 = 167;
const LOSS: f64 = 0.001;
/// Payload bytes per 1500-byte packet: TCP/IP (the model, `bottleneck.rs`) and proto.
const TCP_MSS: f64 = 1460.0;
const PROTO_MSS: f64 = 1443.0;
/// Sampling interval of the window series, s.
const SAMPLE_S: f64 = 0.1;
/// Seeds per transport and path.
const SEEDS: u64 = 8;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Path {
    Clean,
    Lossy,
    Shared,
}

impl Path {
    fn flows(self) -> usize {
        if self == Path::Shared {
            2
        } else {
            1
        }
    }

    /// Simulated seconds: enough whole sawtooth cycles that the one cut off at the end weighs
    /// little (Reno's is 12.8 s here).
    fn secs(self) -> u64 {
        if self == Path::Lossy {
            60
        } else {
            120
        }
    }
}

/// When flow `flow` starts with `seed`, µs: uniform over one round trip (a SplitMix64 hash of
/// the two).
fn start_us(seed: u64, flow: usize) -> u64 {
    let mut z = (seed * 64 + flow as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) % (RTT_MS * 1000)
}

/// The scenario; `seed` also draws each flow's start (`None`: every flow starts at 0).
fn scenario(cc: &str, path: Path, transport: &str, seed: Option<u64>) -> String {
    let loss = if path == Path::Lossy { LOSS } else { 0.0 };
    let mut toml = format!(
        r#"
duration = "{secs}s"
transport = "{transport}"
[[links]]
name = "l"
rate = "40mbit"
delay = "{half}ms"
loss = {loss}
queue = {{ kind = "droptail", packets = {BUFFER} }}
[topology]
kind = "dumbbell"
bottleneck = "l"
"#,
        secs = path.secs(),
        half = RTT_MS / 2
    );
    for flow in 0..path.flows() {
        let start = seed.map_or(0, |s| start_us(s, flow));
        toml += &format!("[[flows]]\ncc = \"{cc}\"\nstart = \"{start}us\"\n");
    }
    toml
}

/// What is compared, per run or as means over seeds.
const METRICS: [&str; 6] = [
    "utilization",
    "loss",
    "mean queue (packets)",
    "mean window (packets)",
    "sawtooth cycle (s)",
    "Jain's index",
];

/// What one run measured (`se` zero), or the means over seeds with their standard errors.
#[derive(Debug, Clone)]
struct Measured {
    /// In the order of `METRICS`; the cycle is NaN where a flow's window has fewer than three
    /// reductions.
    mean: [f64; 6],
    se: [f64; 6],
    /// Fewest packets sent in one run.
    sent: u64,
}

/// Mean time between a window's reductions (a sample ≥ 5 % below the one before, the first of
/// a falling run), from the second (the first ends slow start) to the last: whole cycles only.
fn cycle_s(cwnd: &[f64]) -> f64 {
    let falls: Vec<usize> = (1..cwnd.len())
        .filter(|&i| cwnd[i] < 0.95 * cwnd[i - 1] && (i < 2 || cwnd[i - 1] >= 0.95 * cwnd[i - 2]))
        .collect();
    if falls.len() < 3 {
        return f64::NAN;
    }
    (falls[falls.len() - 1] - falls[1]) as f64 * SAMPLE_S / (falls.len() - 2) as f64
}

/// The means over `SEEDS` seeds and their standard errors (the between-seed standard
/// deviation ÷ √seeds).
fn over_seeds(run: impl Fn(u64) -> Measured) -> Measured {
    let runs: Vec<Measured> = (1..=SEEDS).map(run).collect();
    let mut out = Measured {
        mean: [0.0; 6],
        se: [0.0; 6],
        sent: runs.iter().map(|r| r.sent).min().unwrap_or(0),
    };
    for i in 0..METRICS.len() {
        let mut s = RunningStats::new();
        runs.iter().for_each(|r| s.push(r.mean[i]));
        // A cycle missing in one run (NaN) leaves the metric out.
        out.mean[i] = s.mean().unwrap_or(f64::NAN);
        out.se[i] = (s.variance_sample().unwrap_or(f64::NAN) / runs.len() as f64).sqrt();
    }
    out
}

fn sim(cc: &str, path: Path, transport: &str, seed: Option<u64>) -> Measured {
    let toml = scenario(cc, path, transport, seed);
    let sets = [format!("seed={}", seed.unwrap_or(1))];
    let c = Scenario::parse(&toml, "test.toml", "test", &sets).unwrap_or_else(|e| panic!("{e}"));
    measured(&run(&c, &mut |_| {}).unwrap())
}

fn measured(o: &Outcome) -> Measured {
    let s = &o.summary;
    let link = s.links.iter().find(|l| l.name == "l").unwrap();
    let sent: u64 = s.flows.iter().map(|f| f.packets_sent.unwrap()).sum();
    let lost: u64 = s.flows.iter().map(|f| f.packets_lost.unwrap()).sum();
    let windows: Vec<&[f64]> = s
        .flows
        .iter()
        .map(|f| f.series.as_ref().unwrap().cwnd_pkts.as_slice())
        .collect();
    let flows = windows.len() as f64;
    let window = windows
        .iter()
        .map(|w| w.iter().sum::<f64>() / w.len() as f64)
        .sum::<f64>();
    let queue = &link.series.as_ref().unwrap().queue_pkts;
    let cycle = windows.iter().map(|w| cycle_s(w)).sum::<f64>() / flows;
    Measured {
        mean: [
            s.aggregate.utilization,
            lost as f64 / sent as f64,
            queue.iter().sum::<f64>() / queue.len() as f64,
            window,
            cycle,
            s.aggregate.jain,
        ],
        se: [0.0; 6],
        sent,
    }
}

fn bottleneck_run(cc: &str, path: Path, seed: u64) -> Measured {
    let spec: CcSpec = cc.parse().unwrap();
    let setup = Setup::for_mtu(1500);
    let mut ctl = spec.build(&setup).unwrap();
    let mut p = PathConfig::new(RATE_BPS, Duration::from_millis(RTT_MS), setup.mss);
    p.buffer_packets = BUFFER;
    p.seed = seed;
    if path == Path::Lossy {
        p.random_loss = LOSS;
    }
    let (samples, totals) = bottleneck::run(
        &p,
        &setup,
        ctl.as_mut(),
        Duration::from_secs(path.secs()),
        Duration::from_secs_f64(SAMPLE_S),
        &mut |_, _| {},
    );
    let n = samples.len() as f64;
    // Its queue counts the packet being sent; the simulator's delay is the wait before it.
    let waiting = samples
        .iter()
        .map(|s| s.queue.saturating_sub(1) as f64)
        .sum::<f64>();
    let cwnd: Vec<f64> = samples.iter().map(|s| s.cwnd).collect();
    Measured {
        mean: [
            totals.utilization,
            totals.losses_detected as f64 / totals.sent_packets as f64,
            waiting / n,
            cwnd.iter().sum::<f64>() / n,
            cycle_s(&cwnd),
            1.0,
        ],
        se: [0.0; 6],
        sent: totals.sent_packets,
    }
}

/// Which transport `b` is, for the allowances.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Other {
    Proto,
    Bottleneck,
}

/// The allowance per metric (`METRICS`' order) for the transports' deliberate differences;
/// `None`: not compared. The file's header derives each.
fn allowances(cc: &str, path: Path, other: Other, a: &Measured, b: &Measured) -> [Option<f64>; 6] {
    let flows = path.flows() as f64;
    let rate_based = cc.starts_with("bbr") || cc.starts_with("lion");
    let secs = path.secs() as f64;
    let rtt_s = RTT_MS as f64 / 1000.0;
    let sent = a.sent.min(b.sent) as f64;
    // Packets that the buffer and the path hold: one slow-start overshoot, or what is in
    // flight when a run ends.
    let full = flows * (BDP + BUFFER as f64) / sent;
    let shared = |x: f64| (path == Path::Shared).then_some(x);
    match other {
        Other::Proto => {
            let mut util = rtt_s / secs + full + 1.0 / 150.0;
            if rate_based {
                util += 1.0 - PROTO_MSS / TCP_MSS;
            }
            let mut queue = 2.0 * flows;
            if rate_based || path == Path::Lossy {
                queue += flows * DEFAULT_BURST as f64;
            }
            [
                Some(util),
                Some(0.25 * a.mean[1].max(b.mean[1]) + full),
                Some(queue),
                None,
                None,
                shared(0.01),
            ]
        }
        Other::Bottleneck => [
            Some(full),
            Some(full),
            Some(flows),
            Some(flows),
            Some(SAMPLE_S),
            None,
        ],
    }
}

/// Compare `a` (the model) with `b`; `scale` converts `b`'s utilization to `a`'s payload per
/// packet. Returns what disagrees beyond its tolerance: the allowance plus three standard
/// errors of the difference of the two means.
fn disagreements(cc: &str, path: Path, other: Other, a: &Measured, b: &Measured) -> Vec<String> {
    let scale = if other == Other::Proto {
        TCP_MSS / PROTO_MSS
    } else {
        1.0
    };
    let mut out = Vec::new();
    for (i, allowance) in allowances(cc, path, other, a, b).into_iter().enumerate() {
        let Some(allowance) = allowance else { continue };
        let s = if i == 0 { scale } else { 1.0 };
        let (x, y) = (a.mean[i], b.mean[i] * s);
        if x.is_nan() || y.is_nan() {
            // No whole cycles: compared only where both have them.
            continue;
        }
        let tol = allowance + 3.0 * (a.se[i].powi(2) + (b.se[i] * s).powi(2)).sqrt();
        if (x - y).abs() > tol {
            out.push(format!("{}: {x:.5} vs {y:.5} (±{tol:.5})", METRICS[i]));
        }
    }
    out
}

fn show(label: &str, m: &Measured) -> String {
    let parts: Vec<String> = (0..METRICS.len())
        .map(|i| format!("{:.5}±{:.5}", m.mean[i], m.se[i]))
        .collect();
    format!("{label} {}", parts.join(" "))
}

/// The model running `model_cc` against proto running `proto_cc` (the same controller, except
/// in the one-sided controls below), means over seeds.
fn model_vs_proto_disagreements(model_cc: &str, proto_cc: &str, path: Path) -> Vec<String> {
    let m = over_seeds(|s| sim(model_cc, path, "model", Some(s)));
    let p = over_seeds(|s| sim(proto_cc, path, "proto", Some(s)));
    eprintln!("{proto_cc} {path:?}: {}", show("model", &m));
    eprintln!("{proto_cc} {path:?}: {}", show("proto", &p));
    disagreements(proto_cc, path, Other::Proto, &m, &p)
}

fn model_vs_proto(cc: &str, path: Path) {
    let bad = model_vs_proto_disagreements(cc, cc, path);
    assert!(bad.is_empty(), "{cc} {path:?}, model vs proto: {bad:?}");
}

/// The model running `model_cc` against `bottleneck.rs` running `bottleneck_cc`: on the clean
/// path one run each (both deterministic, starting at 0), on the lossy path means over seeds.
fn model_vs_bottleneck_disagreements(
    model_cc: &str,
    bottleneck_cc: &str,
    path: Path,
) -> Vec<String> {
    let (m, b) = if path == Path::Clean {
        (
            sim(model_cc, path, "model", None),
            bottleneck_run(bottleneck_cc, path, 1),
        )
    } else {
        (
            over_seeds(|s| sim(model_cc, path, "model", Some(s))),
            over_seeds(|s| bottleneck_run(bottleneck_cc, path, s)),
        )
    };
    eprintln!("{bottleneck_cc} {path:?}: {}", show("model", &m));
    eprintln!("{bottleneck_cc} {path:?}: {}", show("bottleneck.rs", &b));
    disagreements(bottleneck_cc, path, Other::Bottleneck, &m, &b)
}

fn model_vs_bottleneck(cc: &str, path: Path) {
    let bad = model_vs_bottleneck_disagreements(cc, cc, path);
    assert!(
        bad.is_empty(),
        "{cc} {path:?}, model vs bottleneck.rs: {bad:?}"
    );
}

macro_rules! controllers {
    ($($name:ident: $cc:expr,)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn clean_path_model_and_proto_agree() {
                model_vs_proto($cc, Path::Clean)
            }
            #[test]
            fn clean_path_model_and_bottleneck_agree() {
                model_vs_bottleneck($cc, Path::Clean)
            }
            #[test]
            fn random_loss_model_and_proto_agree() {
                model_vs_proto($cc, Path::Lossy)
            }
            #[test]
            fn random_loss_model_and_bottleneck_agree() {
                model_vs_bottleneck($cc, Path::Lossy)
            }
            #[test]
            fn two_flows_model_and_proto_agree() {
                model_vs_proto($cc, Path::Shared)
            }
        }
    )*};
}

// FAST's default α of 200 packets exceeds this path's 167-packet buffer; 50 keeps it
// delay-based here, as α is meant to be chosen below the buffer. Its `pace` option (a default)
// is off: `bottleneck.rs` sends no pacing rate, and with it the model transport refilled the
// window faster between random losses (mean utilization over 4 seeds 0.877 against 0.748;
// unpaced 0.898 against 0.891), a difference of what the loops model, not of the controller.
controllers! {
    fast: "fast:alpha=50,pace=false",
    reno: "reno",
    scalable: "scalable",
    highspeed: "highspeed",
    vegas: "vegas",
    cubic: "cubic",
    bbr: "bbr",
    lion: "lion",
}

/// The comparisons can fail. Each control runs the model with one defining parameter of the
/// controller moved and the other side (proto or `bottleneck.rs`) with the defaults, on the path
/// where that moves a compared measure past its tolerance; every one must be reported as a
/// disagreement.
///
/// Against proto, CUBIC's C + 30 % and Lion's probe_gain + 30 % show only in measures that
/// proto's deliberate differences move as much (CUBIC's cycle: 6.81 s against proto's 7.38,
/// the unperturbed model's 7.62; Lion's queue: 7.3 packets against proto's 8.5, the
/// unperturbed model's 4.1); against `bottleneck.rs` they are caught. What no comparison here
/// resolves: Lion's mbs_decrease 0.5 (from 0.75) moves the clean path's queue by 0.08 packets
/// (4.08 against 4.16 on the model, 4.13 on `bottleneck.rs`), its window by 0.2 packets and its
/// cycle by 4 ms, the shared path's queue by 0.1 packets (standard error 0.1) and nothing on
/// the lossy path: on these paths Lion's burst size is rarely cut. That parameter is left to
/// the shared vectors (`testdata/cc-vectors/lion.json`).
#[test]
fn a_perturbed_controller_on_one_side_is_caught() {
    use Other::{Bottleneck, Proto};
    let controls = [
        (
            "fast:alpha=65,pace=false",
            "fast:alpha=50,pace=false",
            Path::Clean,
            Proto,
        ),
        (
            "fast:alpha=65,pace=false",
            "fast:alpha=50,pace=false",
            Path::Shared,
            Proto,
        ),
        ("reno:beta=0.65", "reno", Path::Clean, Proto),
        ("cubic:beta=0.8", "cubic", Path::Clean, Proto),
        ("cubic:c=0.52", "cubic", Path::Clean, Bottleneck),
        ("scalable:b=0.1625", "scalable", Path::Clean, Proto),
        ("scalable:b=0.1625", "scalable", Path::Clean, Bottleneck),
        ("bbr:cwnd_gain=2.6", "bbr", Path::Clean, Bottleneck),
        ("vegas:alpha=4,beta=8", "vegas", Path::Clean, Proto),
        ("vegas:alpha=4,beta=8", "vegas", Path::Clean, Bottleneck),
        ("lion:probe_gain=0.065", "lion", Path::Clean, Bottleneck),
        ("lion:loss_decrease=0.6", "lion", Path::Lossy, Bottleneck),
    ];
    let mut missed = Vec::new();
    for (model_cc, other_cc, path, other) in controls {
        let bad = match other {
            Proto => model_vs_proto_disagreements(model_cc, other_cc, path),
            Bottleneck => model_vs_bottleneck_disagreements(model_cc, other_cc, path),
        };
        eprintln!("model {model_cc} vs {other:?} {other_cc}, {path:?}: {bad:?}");
        if bad.is_empty() {
            missed.push(format!("{model_cc} vs {other:?} {other_cc} ({path:?})"));
        }
    }
    assert!(missed.is_empty(), "not caught: {missed:?}");
}
