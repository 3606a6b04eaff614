//! The emulator's RED settings: the queue discipline both engines share (`longhaul_path::red`:
//! Floyd and Jacobson's Random Early Detection, with the gentle extension), sized in bytes as
//! Linux `tc-red(8)` sizes it. The bottleneck (`longhaul_path::queue`) judges each arrival on
//! the bytes waiting; `path::PathModel` draws each decision's uniform number from a stream of
//! its own. Deviation: no ECN marking (the emulator carries opaque IP packets, so an early
//! signal is a drop). With `weight = 1` the average is the instantaneous queue, which makes the
//! onset of drops exactly `min_bytes` (used by the validation tests).

use longhaul_path::red::RedParams;
use serde::{Deserialize, Serialize};

/// RED parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RedConfig {
    /// Lower threshold in bytes of average queue.
    pub min_bytes: u64,
    /// Upper threshold in bytes.
    pub max_bytes: u64,
    /// Drop probability at `max_bytes` (Floyd's max_p, typically 0.02–0.1).
    pub max_p: f64,
    /// EWMA weight w (Floyd suggests 0.002; 1 = instantaneous queue).
    pub weight: f64,
    /// Ramp the drop probability from `max_p` to 1 between `max_bytes` and twice it, instead
    /// of dropping every arrival above `max_bytes` (the simulator's default).
    #[serde(default)]
    pub gentle: bool,
}

impl RedConfig {
    /// The shared state machine's settings: thresholds in bytes, never marking ECN.
    pub fn params(&self) -> RedParams {
        RedParams {
            min_th: self.min_bytes as f64,
            max_th: self.max_bytes as f64,
            max_p: self.max_p,
            weight: self.weight,
            gentle: self.gentle,
            ecn: false,
        }
    }
}
