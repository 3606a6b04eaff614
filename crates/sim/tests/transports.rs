//! The simulator's TCP senders agree. Every controller runs the same scenarios on the compact
//! model (`transport = "model"`) and on longhaul's own transport (`transport = "proto"`), and,
//! where the scenario is one flow over one bottleneck, in `longhaul_cc::bottleneck` too. The
//! model exists for speed; these tests hold it to the transport it stands in for.
//!
//! The path: 40 Mb/s, 50 ms round trip (a bandwidth-delay product, BDP, of 166.7 packets of
//! 1500 bytes), one BDP of drop-tail buffer, 30 s. Three scenarios: clean (the buffer is the only
//! loss), random loss of 0.1 % of data packets, and two flows sharing the bottleneck.
//!
//! What is compared, and the tolerance each comes with (the deliberate differences they stem
//! from are listed in `crates/sim/src/transport/model.rs`):
//! - **Utilization** within 2 points, after scaling proto's by 1460/1443: its data packets carry
//!   1443 payload bytes in 1500 (UDP, IP and its own 29-byte header) where TCP's carry 1460. The 2
//!   points cover proto's handshake (one round trip, 0.2 points of 30 s), one slow-start exit's
//!   worth of drops that proto's default pacing avoids ((BDP + buffer)/packets sent, 0.3 points
//!   per flow), and a round trip of window growth per congestion epoch lost to ACKs every second
//!   packet (one of the ≈ 150 round trips of a Reno epoch here, 0.7 points).
//! - **Loss** (packets declared lost ÷ sent) within 25 % of the larger, plus one slow-start
//!   overshoot per flow ((BDP + buffer) packets): proto paces slow start at 2·cwnd/srtt and the
//!   model sends in ACK-clocked bursts, so one of them may overflow the buffer there and the other
//!   not; how far a window overshoots the buffer in congestion avoidance depends on how its ACKs
//!   are spaced (every second packet, pacing bursts), the 25 %.
//! - **Mean queueing delay** at the bottleneck within 1 + 10 packets per flow: the packet an
//!   ACK every second packet leaves unacknowledged, and proto's pacing burst of 10 packets
//!   (`longhaul_proto::pacer::DEFAULT_BURST`).
//! - **Window series** (sampled every 100 ms; for two flows, their sum): the median absolute
//!   difference within 0.1 BDP, between the sorted series (the windows' distributions): proto's
//!   handshake and its paced slow start move the first overflow, and with it the phase of every
//!   later sawtooth, by a few round trips. The model and `bottleneck.rs` share packet size, ACKs
//!   and the absence of a handshake, so on the clean path their series are compared point by
//!   point: deterministic sawtooths that must stay in phase. BBR and Lion pace at a rate below
//!   their window, which only caps them, and the phase of its oscillation follows their probing
//!   timers: theirs are compared as distributions everywhere.
//! - **Jain's fairness index** of two flows within 0.25: which flow's packets a full drop-tail
//!   queue drops depends on packet spacing (Floyd and Jacobson's phase effects), so a 30-s run
//!   can end with a 70:30 split (index 0.84) where the other transport's ends even. The bound
//!   still fails a transport that starves one flow where the other shares.
//!
//! One exception, measured: two BBR flows keep a standing queue that depends on how often they
//! are acknowledged (7 ms on proto, 30 on the model; 32 on proto acknowledging every packet), a
//! deliberate difference, so only their utilization and fairness are compared.
//!
//! Against `bottleneck.rs`, which has the model's packet size and its ACK per packet, the same
//! tolerances apply on the clean path.
//!
//! **The lossy path** is compared over eight seeds per transport: the random losses differ
//! between transports (and `bottleneck.rs` draws them with a generator of its own), so one run
//! against one run compares two samples of the loss process. The means of utilization, loss and
//! mean queue are compared with the clean path's allowance for each plus three standard errors
//! of the difference of the two means, each transport's standard error measured from the
//! spread between its eight seeds; the window series are pooled over the seeds and compared as
//! distributions.
//!
//! **Controls.** `a_perturbed_controller_on_one_side_is_caught` runs the model with one of the
//! controller's defining parameters moved and proto unchanged, and requires a disagreement; its
//! comment lists what these tolerances cannot resolve.

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
const SECS: u64 = 30;
const LOSS: f64 = 0.001;
/// Payload bytes per 1500-byte packet: TCP/IP (the model, `bottleneck.rs`) and proto.
const TCP_MSS: f64 = 1460.0;
const PROTO_MSS: f64 = 1443.0;
/// Serialisation time of one packet, ms.
const TX_MS: f64 = 1500.0 * 8.0 / RATE_BPS * 1000.0;

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
}

fn scenario(cc: &str, path: Path, transport: &str) -> String {
    let loss = if path == Path::Lossy { LOSS } else { 0.0 };
    let count = path.flows();
    format!(
        r#"
duration = "{SECS}s"
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
[[flows]]
cc = "{cc}"
count = {count}
"#,
        half = RTT_MS / 2
    )
}

/// What one run measured, or the means over seeds (`over_seeds`).
#[derive(Debug, Clone)]
struct Measured {
    utilization: f64,
    loss: f64,
    queue_ms: f64,
    /// Window, packets, every 100 ms: the flows' sum.
    cwnd: Vec<f64>,
    jain: f64,
    sent: u64,
    /// Standard errors of the utilization, loss and mean queue over seeds (zero for one run).
    se: [f64; 3],
}

/// Seeds per transport on the lossy path.
const SEEDS: u64 = 8;

/// The means over `SEEDS` seeds, with their standard errors (the between-seed standard
/// deviation ÷ √seeds); the window series are pooled, so they are compared as distributions.
fn over_seeds(run: impl Fn(u64) -> Measured) -> Measured {
    let runs: Vec<Measured> = (1..=SEEDS).map(run).collect();
    let stat = |f: &dyn Fn(&Measured) -> f64| {
        let mut s = RunningStats::new();
        runs.iter().for_each(|r| s.push(f(r)));
        let (mean, var) = (s.mean().unwrap(), s.variance_sample().unwrap());
        (mean, (var / runs.len() as f64).sqrt())
    };
    let (utilization, su) = stat(&|r| r.utilization);
    let (loss, sl) = stat(&|r| r.loss);
    let (queue_ms, sq) = stat(&|r| r.queue_ms);
    Measured {
        utilization,
        loss,
        queue_ms,
        cwnd: runs.iter().flat_map(|r| r.cwnd.iter().copied()).collect(),
        jain: stat(&|r| r.jain).0,
        sent: runs.iter().map(|r| r.sent).min().unwrap_or(0),
        se: [su, sl, sq],
    }
}

fn sim(cc: &str, path: Path, transport: &str, seed: u64) -> Measured {
    let toml = scenario(cc, path, transport);
    let sets = [format!("seed={seed}")];
    let c = Scenario::parse(&toml, "test.toml", "test", &sets).unwrap_or_else(|e| panic!("{e}"));
    measured(&run(&c, &mut |_| {}).unwrap())
}

fn measured(o: &Outcome) -> Measured {
    let s = &o.summary;
    let link = s.links.iter().find(|l| l.name == "l").unwrap();
    let sent: u64 = s.flows.iter().map(|f| f.packets_sent.unwrap()).sum();
    let lost: u64 = s.flows.iter().map(|f| f.packets_lost.unwrap()).sum();
    let mut cwnd = vec![0.0; s.flows[0].series.as_ref().unwrap().cwnd_pkts.len()];
    for f in &s.flows {
        for (a, b) in cwnd.iter_mut().zip(&f.series.as_ref().unwrap().cwnd_pkts) {
            *a += b;
        }
    }
    Measured {
        utilization: s.aggregate.utilization,
        loss: lost as f64 / sent as f64,
        queue_ms: link.queue_delay_ms.mean,
        cwnd,
        jain: s.aggregate.jain,
        sent,
        se: [0.0; 3],
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
        Duration::from_secs(SECS),
        Duration::from_millis(100),
        &mut |_, _| {},
    );
    // Its queue counts the packet being sent; the simulator's delay is the wait before it.
    let waiting = samples
        .iter()
        .map(|s| s.queue.saturating_sub(1) as f64)
        .sum::<f64>()
        / samples.len() as f64;
    Measured {
        utilization: totals.utilization,
        loss: totals.losses_detected as f64 / totals.sent_packets as f64,
        queue_ms: waiting * TX_MS,
        cwnd: samples.iter().map(|s| s.cwnd).collect(),
        jain: 1.0,
        sent: totals.sent_packets,
        se: [0.0; 3],
    }
}

fn median_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    let mut d: Vec<f64> = a.iter().zip(b).map(|(x, y)| (x - y).abs()).collect();
    d.sort_by(f64::total_cmp);
    d[d.len() / 2]
}

fn sorted(a: &[f64]) -> Vec<f64> {
    let mut a = a.to_vec();
    a.sort_by(f64::total_cmp);
    a
}

/// Compare two runs of the same scenario; `scale` converts `b`'s utilization to `a`'s payload
/// per packet. Returns what disagrees beyond its tolerance.
fn disagreements(
    cc: &str,
    path: Path,
    a: &Measured,
    b: &Measured,
    scale: f64,
    in_phase: bool,
) -> Vec<String> {
    let flows = path.flows() as f64;
    let rate_based = cc.starts_with("bbr") || cc.starts_with("lion");
    let mut out = Vec::new();
    let mut check = |what: &str, ok: bool, detail: String| {
        if !ok {
            out.push(format!("{what}: {detail}"));
        }
    };
    // Three standard errors of the difference of two means over seeds (zero for single runs).
    let noise = |i: usize, scale: f64| 3.0 * (a.se[i].powi(2) + (b.se[i] * scale).powi(2)).sqrt();
    let (ua, ub) = (a.utilization, b.utilization * scale);
    let util_tol = 0.02 + noise(0, scale);
    check(
        "utilization",
        (ua - ub).abs() <= util_tol,
        format!("{ua:.4} vs {ub:.4} (±{util_tol:.4})"),
    );
    let overshoot = flows * (BDP + BUFFER as f64) / a.sent.min(b.sent) as f64;
    let loss_tol = 0.25 * a.loss.max(b.loss) + overshoot + noise(1, 1.0);
    check(
        "loss",
        (a.loss - b.loss).abs() <= loss_tol,
        format!("{:.5} vs {:.5} (±{loss_tol:.5})", a.loss, b.loss),
    );
    let queue_tol = flows * (1 + DEFAULT_BURST) as f64 * TX_MS + noise(2, 1.0);
    check(
        "mean queue",
        (a.queue_ms - b.queue_ms).abs() <= queue_tol,
        format!(
            "{:.2} vs {:.2} ms (±{queue_tol:.2})",
            a.queue_ms, b.queue_ms
        ),
    );
    let n = a.cwnd.len().min(b.cwnd.len());
    let (wa, wb) = (&a.cwnd[..n], &b.cwnd[..n]);
    let mad = if in_phase && !rate_based {
        median_abs_diff(wa, wb)
    } else {
        median_abs_diff(&sorted(wa), &sorted(wb))
    } / BDP;
    check("window", mad <= 0.1, format!("{mad:.3} BDP"));
    if path == Path::Shared {
        check(
            "Jain's index",
            (a.jain - b.jain).abs() <= 0.25,
            format!("{:.3} vs {:.3}", a.jain, b.jain),
        );
    }
    out
}

/// The model running `model_cc` against proto running `proto_cc` (the same controller, except
/// in the one-sided controls below).
fn model_vs_proto_disagreements(model_cc: &str, proto_cc: &str, path: Path) -> Vec<String> {
    let (m, p) = if path == Path::Lossy {
        (
            over_seeds(|s| sim(model_cc, path, "model", s)),
            over_seeds(|s| sim(proto_cc, path, "proto", s)),
        )
    } else {
        (
            sim(model_cc, path, "model", 1),
            sim(proto_cc, path, "proto", 1),
        )
    };
    let cc = proto_cc;
    eprintln!(
        "{cc} {path:?}: model {:.4} util, {:.5} loss, {:.2} ms queue; proto {:.4}, {:.5}, {:.2} ms",
        m.utilization, m.loss, m.queue_ms, p.utilization, p.loss, p.queue_ms
    );
    let mut bad = disagreements(cc, path, &m, &p, TCP_MSS / PROTO_MSS, false);
    if cc.starts_with("bbr") && path == Path::Shared {
        // Two BBR flows: with proto's ACK every second packet their delivery-rate samples are
        // fewer and lower than with the model's ACK per packet, the bandwidth filter's maximum
        // lower, and the standing queue shorter (7 ms against 30). With proto acknowledging
        // every packet the two agree (30.0 and 31.9 ms): the ACK policy, a deliberate
        // difference, not a fault. Utilization and fairness must still agree.
        bad.retain(|d| d.starts_with("utilization") || d.starts_with("Jain"));
    }
    bad
}

fn model_vs_proto(cc: &str, path: Path) {
    let bad = model_vs_proto_disagreements(cc, cc, path);
    assert!(bad.is_empty(), "{cc} {path:?}, model vs proto: {bad:?}");
}

fn model_vs_bottleneck(cc: &str, path: Path) {
    if path == Path::Clean {
        let m = sim(cc, path, "model", 1);
        let b = bottleneck_run(cc, path, 1);
        let bad = disagreements(cc, path, &m, &b, 1.0, true);
        assert!(
            bad.is_empty(),
            "{cc} clean, model vs bottleneck.rs: {bad:?}"
        );
        return;
    }
    // Independent loss processes: compare the means over seeds, every metric.
    let m = over_seeds(|s| sim(cc, path, "model", s));
    let b = over_seeds(|s| bottleneck_run(cc, path, s));
    let bad = disagreements(cc, path, &m, &b, 1.0, false);
    assert!(
        bad.is_empty(),
        "{cc} lossy, means over {SEEDS} seeds, model vs bottleneck.rs: {bad:?}"
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
/// controller moved by 25–300 % and proto with the defaults, on the paths where that moves a
/// compared measure past its tolerance; every one must be reported as a disagreement.
///
/// What these tolerances do not resolve, measured on the clean path (model perturbed against
/// proto unperturbed, and the unperturbed pair beside it): Vegas with α/β doubled queues 3.9
/// packets more (unperturbed 0.9; the allowance is 11, proto's pacing burst and the packet an
/// ACK every second packet leaves); CUBIC with C + 30 % and Lion with probe_gain + 30 %,
/// mbs_decrease 0.5 or loss_decrease 0.6 move no measure here beyond the two transports' own
/// difference (queue within 1 packet of it, window distribution within 0.01 BDP); Scalable with
/// b + 30 % moves the window distribution by 0.05 BDP, under the 0.1 that the sawtooth's phase
/// at the end of 30 s accounts for (a 30-s run holds about 3.6 of Reno's 8-s cycles here, so a
/// partial cycle weighs up to a quarter of the samples). Those parameters are held by the
/// shared vectors and the controllers' unit tests (bench/mutants/RESULTS.md), not by this
/// differential test.
#[test]
fn a_perturbed_controller_on_one_side_is_caught() {
    let controls = [
        (
            "fast:alpha=65,pace=false",
            "fast:alpha=50,pace=false",
            Path::Clean,
        ),
        (
            "fast:alpha=65,pace=false",
            "fast:alpha=50,pace=false",
            Path::Shared,
        ),
        ("reno:beta=0.65", "reno", Path::Clean),
        ("cubic:beta=0.8", "cubic", Path::Clean),
        ("scalable:b=0.25", "scalable", Path::Clean),
        ("scalable:b=0.25", "scalable", Path::Shared),
        ("bbr:cwnd_gain=2.6", "bbr", Path::Clean),
        ("vegas:alpha=8,beta=16", "vegas", Path::Shared),
    ];
    let mut missed = Vec::new();
    for (model_cc, proto_cc, path) in controls {
        let bad = model_vs_proto_disagreements(model_cc, proto_cc, path);
        eprintln!("model {model_cc} vs proto {proto_cc}, {path:?}: {bad:?}");
        if bad.is_empty() {
            missed.push(format!("{model_cc} vs {proto_cc} ({path:?})"));
        }
    }
    assert!(missed.is_empty(), "not caught: {missed:?}");
}
