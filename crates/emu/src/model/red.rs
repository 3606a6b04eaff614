//! The emulator's RED settings: the queue discipline both engines share (`longhaul_path::red`:
//! Floyd and Jacobson's Random Early Detection, with the gentle extension and ECN marking). The
//! thresholds are in the queue's own unit, packets or bytes ([`RedUnit`]), as the scenario gives
//! them; the `[link]` shorthand and `--red` give bytes, as Linux `tc-red(8)` sizes them. The
//! bottleneck (`longhaul_path::queue`) judges each arrival on what waits, in that unit;
//! `path::PathModel` draws each decision's uniform number from a stream of its own. With `ecn`,
//! an early signal on an ECN-capable IP packet sets CE in its header (`crate::ecn`) instead of
//! dropping it, and a packet that is not ECN-capable is dropped, as Linux's RED does with
//! `ecn`. With `weight = 1` the average is the instantaneous queue, which makes the onset of
//! signals exactly `min` (used by the validation tests).

pub use longhaul_path::queue::RedUnit;
use longhaul_path::red::RedParams;
use serde::{Deserialize, Serialize};

/// RED parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RedConfig {
    /// Lower threshold of the average queue, in `unit`.
    pub min: f64,
    /// Upper threshold, in `unit`.
    pub max: f64,
    /// What the thresholds and the average count: waiting packets or waiting wire bytes.
    pub unit: RedUnit,
    /// Signal probability at `max` (Floyd's max_p, typically 0.02–0.1).
    pub max_p: f64,
    /// EWMA weight w (Floyd suggests 0.002; 1 = instantaneous queue).
    pub weight: f64,
    /// Ramp the signal probability from `max_p` to 1 between `max` and twice it, instead of
    /// dropping every arrival above `max` (the simulator's default).
    #[serde(default)]
    pub gentle: bool,
    /// Mark ECN-capable packets (set CE) instead of dropping them early.
    #[serde(default)]
    pub ecn: bool,
}

impl RedConfig {
    /// RED in bytes that only drops, as the `[link]` shorthand and `--red` give it.
    pub fn bytes(min: u64, max: u64, max_p: f64, weight: f64, gentle: bool) -> Self {
        Self {
            min: min as f64,
            max: max as f64,
            unit: RedUnit::Bytes,
            max_p,
            weight,
            gentle,
            ecn: false,
        }
    }

    /// The shared state machine's settings.
    pub fn params(&self) -> RedParams {
        RedParams {
            min_th: self.min,
            max_th: self.max,
            max_p: self.max_p,
            weight: self.weight,
            gentle: self.gentle,
            ecn: self.ecn,
        }
    }

    /// The thresholds as reports show them: `min=75000B max=225000B` or `min=50p max=150p`.
    pub fn describe_thresholds(&self) -> String {
        let u = match self.unit {
            RedUnit::Packets => "p",
            RedUnit::Bytes => "B",
        };
        format!("min={}{u} max={}{u}", self.min, self.max)
    }
}
