//! The emulator's RED: the queue discipline both engines share (`longhaul_path::red`: Floyd and
//! Jacobson's Random Early Detection, with the gentle extension), sized in bytes as Linux
//! `tc-red(8)` sizes it, with a random stream of its own.
//!
//! The shared state machine keeps the average queue and decides; this wrapper gives it the
//! emulator's units (bytes, nanoseconds) and draws the uniform number each decision needs.
//! Deviation: no ECN marking (the emulator carries opaque IP packets, so an early signal is a
//! drop). With `weight = 1` the average is the instantaneous queue, which makes the onset of
//! drops exactly `min_bytes` (used by the validation tests).

use super::Nanos;
use longhaul_path::red::RedParams;
pub use longhaul_path::red::RedVerdict;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
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

/// RED state.
#[derive(Debug, Clone)]
pub struct Red {
    red: longhaul_path::red::Red,
    rng: SmallRng,
}

impl Red {
    /// RED with an empty average and its own random stream from `seed`.
    pub fn new(cfg: RedConfig, seed: u64) -> Self {
        Self {
            red: longhaul_path::red::Red::new(RedParams {
                min_th: cfg.min_bytes as f64,
                max_th: cfg.max_bytes as f64,
                max_p: cfg.max_p,
                weight: cfg.weight,
                gentle: cfg.gentle,
                ecn: false,
            }),
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// The current average queue length, in bytes.
    pub fn average_bytes(&self) -> f64 {
        self.red.avg
    }

    /// Notes that the queue became empty at `t` (for the idle-time decay).
    pub fn queue_emptied(&mut self, t: Nanos) {
        self.red.queue_emptied(t);
    }

    /// Called for each arrival with the current queue length in bytes; `tx_time_ns` is the time
    /// to send a typical packet (for the idle decay).
    pub fn on_arrival(&mut self, now: Nanos, queue_bytes: u64, tx_time_ns: Nanos) -> RedVerdict {
        let u = self.rng.gen::<f64>();
        self.red.on_arrival(now, queue_bytes as f64, tx_time_ns, u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(weight: f64) -> RedConfig {
        RedConfig {
            min_bytes: 15_000,
            max_bytes: 45_000,
            max_p: 0.1,
            weight,
            gentle: false,
        }
    }

    #[test]
    fn instantaneous_red_never_drops_below_min_and_always_at_max() {
        let mut r = Red::new(cfg(1.0), 1);
        for q in (0..15_000).step_by(100) {
            assert_eq!(r.on_arrival(0, q, 1000), RedVerdict::Accept, "q={q}");
        }
        assert_eq!(r.on_arrival(0, 45_000, 1000), RedVerdict::Forced);
        assert_eq!(r.on_arrival(0, 90_000, 1000), RedVerdict::Forced);
    }

    #[test]
    fn gentle_red_ramps_above_max_and_forces_only_at_twice_max() {
        let mut r = Red::new(
            RedConfig {
                gentle: true,
                ..cfg(1.0)
            },
            5,
        );
        // Halfway between max and 2·max the base probability is max_p + (1 − max_p)/2 = 0.55:
        // some arrivals pass, most are dropped early, none is forced.
        let n = 10_000;
        let early = (0..n)
            .filter(|_| r.on_arrival(0, 67_500, 1000) == RedVerdict::Early)
            .count();
        assert!(early > n / 2 && early < n, "{early} of {n} dropped early");
        assert_eq!(r.on_arrival(0, 90_000, 1000), RedVerdict::Forced);
    }

    #[test]
    fn early_drop_rate_follows_the_uniform_spacing() {
        // At avg halfway between thresholds p_b = 0.05. With count incremented before
        // p_a = p_b/(1 − count·p_b) and reset to 0 on a drop, P(gap > k) = (1 − (k+1)p_b)/(1 − p_b),
        // so gaps are uniform on 1..=1/p_b − 1 = 1..=19 and their mean is 10 packets.
        let mut r = Red::new(cfg(1.0), 3);
        let n = 200_000;
        let drops = (0..n)
            .filter(|_| r.on_arrival(0, 30_000, 1000) == RedVerdict::Early)
            .count();
        let gap = n as f64 / drops as f64;
        assert!((gap - 10.0).abs() < 0.2, "mean gap {gap}");
    }

    #[test]
    fn average_follows_ewma_and_decays_when_idle() {
        let mut r = Red::new(cfg(0.5), 1);
        r.on_arrival(0, 10_000, 1000);
        assert_eq!(r.average_bytes(), 5_000.0);
        r.on_arrival(0, 10_000, 1000);
        assert_eq!(r.average_bytes(), 7_500.0);
        // Empty for 2 typical transmission times: avg *= 0.5² then the 0-byte sample halves it.
        r.queue_emptied(1_000);
        r.on_arrival(3_000, 0, 1000);
        assert!((r.average_bytes() - 7_500.0 * 0.25 * 0.5).abs() < 1e-9);
    }
}
