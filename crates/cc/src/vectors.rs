//! Shared test vectors: recorded event sequences with the expected controller outputs.
//!
//! For every algorithm and preset, a few event sequences are recorded from the closed loop in
//! [`crate::bottleneck`] (slow start into congestion avoidance, random loss, a retransmission
//! timeout, a long equilibrium with stretch ACKs). After every event the file holds the window,
//! threshold, pacing rate, burst and phase the Rust reference produced. The files in
//! `testdata/cc-vectors/` are written by `longhaul cc vectors`; the Rust tests replay them
//! exactly, and the kernel (eBPF) implementations replay them within a stated tolerance, so
//! both are held to the same behaviour.
//!
//! Format (version 1), one JSON file per algorithm/preset, `<algorithm>[-<preset>].json`:
//! `{ format, algorithm, preset, spec, params, setup, sequences: [ { name, description,
//! path, steps: [ { event, cwnd, ssthresh, pacing_rate, max_burst, phase } ] } ] }`.
//! Events are [`Event`] in serde form: tagged by `type`, times and durations in integer ns.
//! Packet-sent events are not recorded (no kernel hook corresponds to them) and are not fed to
//! the controller while recording, so a replay sees exactly what the recording saw.

use crate::bottleneck::{self, PathConfig};
use crate::controller::{CongestionControl, Setup};
use crate::event::Event;
use crate::params::ParamError;
use crate::registry::{algorithms, CcSpec};
use crate::time::Time;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The current format version.
pub const FORMAT: u32 = 1;

/// One vector file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VectorFile {
    /// The format version the file was written in ([`FORMAT`]).
    pub format: u32,
    /// The algorithm's registry name.
    pub algorithm: String,
    /// The preset the spec names, if any.
    pub preset: Option<String>,
    /// The canonical spec string; parsing it rebuilds the controller.
    pub spec: String,
    /// Every parameter's value, for implementations that do not parse specs.
    pub params: serde_json::Map<String, serde_json::Value>,
    /// The controller's setup (MSS, initial and bounding windows, seed) for every sequence.
    pub setup: Setup,
    /// The recorded sequences.
    pub sequences: Vec<Sequence>,
}

/// One recorded event sequence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sequence {
    /// The recording's name (`slow_start_and_avoidance`, `random_loss`, `timeout`, `equilibrium`,
    /// `delayed_ack_jitter`).
    pub name: String,
    /// One line on the path and what the sequence exercises.
    pub description: String,
    /// The path it was recorded on (for people; replay needs only the events).
    pub path: PathSummary,
    /// Every recorded event, with the controller's outputs after it.
    pub steps: Vec<Step>,
}

/// The recording path, in plain units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathSummary {
    /// Bottleneck rate in bits per second, headers included.
    pub rate_bps: f64,
    /// Round-trip propagation delay, in milliseconds.
    pub base_rtt_ms: f64,
    /// Bottleneck buffer, in packets.
    pub buffer_packets: u32,
    /// Probability that the link loses a packet at random.
    pub random_loss: f64,
    /// The receiver acknowledges every `ack_every` packets.
    pub ack_every: u32,
}

/// An event and the controller's outputs after it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The event fed to the controller.
    pub event: Event,
    /// Congestion window after the event, in packets.
    pub cwnd: f64,
    /// Slow-start threshold after the event, in packets.
    pub ssthresh: f64,
    /// Pacing rate after the event, in bytes per second (`None`: the transport's default).
    pub pacing_rate: Option<u64>,
    /// Largest burst after the event, in packets (`None`: the transport decides).
    pub max_burst: Option<u32>,
    /// Phase name after the event.
    pub phase: String,
}

impl Step {
    /// The step that feeding `event` to `cc` made: the event and the controller's outputs after
    /// it.
    pub fn after(event: Event, cc: &dyn CongestionControl) -> Step {
        Step {
            event,
            cwnd: cc.cwnd(),
            ssthresh: cc.ssthresh(),
            pacing_rate: cc.pacing_rate(),
            max_burst: cc.max_burst(),
            phase: cc.phase().to_string(),
        }
    }
}

/// A recording scenario.
struct Recipe {
    name: &'static str,
    description: &'static str,
    path: PathConfig,
    duration: Duration,
}

const MAX_STEPS: usize = 4000;

fn recipes(mss: u32) -> Vec<Recipe> {
    let ms = Duration::from_millis;
    let mut start = PathConfig::new(4e6, ms(60), mss);
    start.buffer_packets = 40;
    start.ack_every = 2;
    let mut lossy = start.clone();
    lossy.buffer_packets = 100;
    lossy.random_loss = 0.02;
    lossy.seed = 3;
    let mut outage = start.clone();
    outage.outages = vec![(Time::from_millis(1200), Time::from_millis(2200))];
    let mut long = PathConfig::new(8e6, ms(50), mss);
    long.buffer_packets = 400;
    long.ack_every = 16;
    let mut jittery = PathConfig::new(100e6, ms(20), mss);
    jittery.buffer_packets *= 2;
    jittery.ack_every = 3;
    jittery.ack_delay = ms(2);
    vec![
        Recipe {
            name: "slow_start_and_avoidance",
            description: "4 Mb/s, 60 ms, 40-packet buffer (2 BDP), delayed ACKs: slow start, \
                          buffer overflow, recovery, congestion avoidance",
            path: start,
            duration: Duration::from_secs(3),
        },
        Recipe {
            name: "random_loss",
            description: "4 Mb/s, 60 ms, 100-packet buffer, 2 % random loss",
            path: lossy,
            duration: Duration::from_secs(3),
        },
        Recipe {
            name: "timeout",
            description: "4 Mb/s, 60 ms, 40-packet buffer; the link drops everything from 1.2 s \
                          to 2.2 s, so the retransmission timer fires (with backoff)",
            path: outage,
            duration: Duration::from_secs(4),
        },
        Recipe {
            name: "equilibrium",
            description: "8 Mb/s, 50 ms, 400-packet buffer, stretch ACKs of 16 packets, 10 s: \
                          long equilibrium for delay-based controllers",
            path: long,
            duration: Duration::from_secs(10),
        },
        Recipe {
            name: "delayed_ack_jitter",
            description: "100 Mb/s, 20 ms, 2-BDP buffer, an ACK every 3 packets or after 2 ms: \
                          the delayed-ACK timer's samples peak above the queue, a jittery path \
                          (Lion's startup ends early and its probing climbs)",
            path: jittery,
            duration: Duration::from_secs(4),
        },
    ]
}

/// The specs that get vector files: each algorithm's defaults and each of its presets.
pub fn vector_specs() -> Vec<(String, CcSpec)> {
    let mut out = Vec::new();
    for a in algorithms() {
        out.push((
            a.name.to_string(),
            CcSpec::default_for(a.name).expect("registered"),
        ));
        for p in a.presets {
            let spec: CcSpec = format!("{}:preset={}", a.name, p.name)
                .parse()
                .expect("preset");
            out.push((format!("{}-{}", a.name, p.name), spec));
        }
    }
    out
}

/// Record the vector file for one spec.
pub fn generate(spec: &CcSpec) -> Result<VectorFile, ParamError> {
    // The recipes' paths put 40 header bytes on each packet; the controller is told the same.
    let setup = Setup {
        header_bytes: 40,
        ..Setup::default()
    };
    let mut sequences = Vec::new();
    for r in recipes(setup.mss) {
        let mut cc = spec.build(&setup)?;
        let mut steps = Vec::new();
        bottleneck::run(
            &r.path,
            &setup,
            cc.as_mut(),
            r.duration,
            r.duration,
            &mut |ev, cc| {
                if steps.len() < MAX_STEPS {
                    steps.push(Step::after(*ev, cc));
                }
            },
        );
        sequences.push(Sequence {
            name: r.name.to_string(),
            description: r.description.to_string(),
            path: PathSummary {
                rate_bps: r.path.rate_bps,
                base_rtt_ms: r.path.base_rtt.as_secs_f64() * 1e3,
                buffer_packets: r.path.buffer_packets,
                random_loss: r.path.random_loss,
                ack_every: r.path.ack_every,
            },
            steps,
        });
    }
    let params = spec
        .params
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                serde_json::to_value(v).unwrap_or(serde_json::Value::Null),
            )
        })
        .collect();
    Ok(VectorFile {
        format: FORMAT,
        algorithm: spec.algorithm.to_string(),
        preset: spec.params.preset().map(str::to_string),
        spec: spec.to_string(),
        params,
        setup,
        sequences,
    })
}

/// Where a replay first disagreed with a vector file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{sequence} step {step}: expected {expected}, got {got}")]
pub struct Mismatch {
    /// The sequence's name (`-` when the spec itself could not be built).
    pub sequence: String,
    /// The index of the first differing step within the sequence.
    pub step: usize,
    /// The recorded outputs (or the spec, when it did not build).
    pub expected: String,
    /// What the replay produced (or the build error).
    pub got: String,
}

/// Replay a vector file through the Rust reference and require identical outputs.
pub fn replay(file: &VectorFile) -> Result<usize, Mismatch> {
    let spec: CcSpec = file.spec.parse().map_err(|e: ParamError| Mismatch {
        sequence: "-".into(),
        step: 0,
        expected: file.spec.clone(),
        got: e.to_string(),
    })?;
    let mut checked = 0;
    for seq in &file.sequences {
        let mut cc = spec.build(&file.setup).map_err(|e| Mismatch {
            sequence: seq.name.clone(),
            step: 0,
            expected: file.spec.clone(),
            got: e.to_string(),
        })?;
        for (i, step) in seq.steps.iter().enumerate() {
            step.event.apply(cc.as_mut());
            let got = Step::after(step.event, cc.as_ref());
            if got != *step {
                return Err(Mismatch {
                    sequence: seq.name.clone(),
                    step: i,
                    expected: format!("{step:?}"),
                    got: format!("{got:?}"),
                });
            }
            checked += 1;
        }
    }
    Ok(checked)
}
/// One vector file as it is kept in `testdata/cc-vectors/`: its file name, its JSON text (with a
/// final newline), its spec and how many steps its sequences hold.
#[derive(Clone, Debug)]
pub struct Rendered {
    /// `NAME.json`.
    pub file_name: String,
    /// The spec it was recorded with.
    pub spec: CcSpec,
    /// The file's text.
    pub text: String,
    /// Steps over all its sequences.
    pub steps: usize,
}

/// Every vector file ([`vector_specs`]), generated and rendered.
pub fn render_all() -> Result<Vec<Rendered>, ParamError> {
    let mut out = Vec::new();
    for (name, spec) in vector_specs() {
        let file = generate(&spec)?;
        let mut text = serde_json::to_string(&file).expect("a vector file has string keys only");
        text.push('\n');
        let steps = file.sequences.iter().map(|s| s.steps.len()).sum();
        out.push(Rendered {
            file_name: format!("{name}.json"),
            spec,
            text,
            steps,
        });
    }
    Ok(out)
}

/// Whether `dir` holds every file of `rendered` as rendered; the error lists those it does not
/// (missing or different), which `longhaul cc vectors` writes anew.
pub fn check(dir: &std::path::Path, rendered: &[Rendered]) -> Result<(), String> {
    let differ: Vec<String> = rendered
        .iter()
        .map(|r| (dir.join(&r.file_name), &r.text))
        .filter(|(path, text)| std::fs::read_to_string(path).unwrap_or_default() != **text)
        .map(|(path, _)| path.display().to_string())
        .collect();
    if differ.is_empty() {
        return Ok(());
    }
    Err(format!(
        "vectors differ from the code: {} (run `longhaul cc vectors` and review the change)",
        differ.join(", ")
    ))
}
