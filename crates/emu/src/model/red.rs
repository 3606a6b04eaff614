//! Random Early Detection (S. Floyd and V. Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1(4), 1993; Linux `include/net/red.h`).
//!
//! RED keeps an exponentially weighted moving average of the queue length,
//! `avg ← (1−w)·avg + w·q`, computed at each arrival. Below `min_th` nothing is dropped; between
//! `min_th` and `max_th` the base drop probability rises linearly,
//! `p_b = max_p·(avg−min_th)/(max_th−min_th)`, and is spread out by the count of packets since the
//! last drop, `p_a = p_b/(1 − count·p_b)`, so that drops are evenly spaced rather than clustered
//! (the paper's "uniform" variant); at or above `max_th` every arrival is dropped.
//!
//! When a packet arrives to an empty queue the average decays as if `m` small packets had been
//! sent during the idle time, `avg ← (1−w)^m·avg` with `m = idle / typical_tx_time` (paper §4,
//! Linux `red_calc_qavg_from_idle_time`).
//!
//! Units: the queue length and thresholds are in bytes, as in Linux `tc-red(8)`.
//! Deviation: no ECN marking (the emulator carries opaque IP packets); "gentle" mode is not
//! implemented. With `weight = 1` the average is the instantaneous queue, which makes the onset of
//! drops exactly `min_th` (used by the validation tests).

use super::Nanos;
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
}

/// RED's decision for one arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedVerdict {
    /// Admit the packet.
    Accept,
    /// Probabilistic drop between the thresholds.
    EarlyDrop,
    /// Average at or above `max_th`.
    ForcedDrop,
}

/// RED state.
#[derive(Debug, Clone)]
pub struct Red {
    cfg: RedConfig,
    avg: f64,
    count: i64,
    idle_since: Option<Nanos>,
    rng: SmallRng,
}

impl Red {
    /// RED with an empty average and its own random stream from `seed`.
    pub fn new(cfg: RedConfig, seed: u64) -> Self {
        Self {
            cfg,
            avg: 0.0,
            count: -1,
            idle_since: None,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// The current average queue length, in bytes.
    pub fn average_bytes(&self) -> f64 {
        self.avg
    }

    /// Notes that the queue became empty at `t` (for the idle-time decay).
    pub fn queue_emptied(&mut self, t: Nanos) {
        self.idle_since.get_or_insert(t);
    }

    /// Called for each arrival with the current queue length in bytes; `tx_time_ns` is the time
    /// to send a typical packet (for the idle decay).
    pub fn on_arrival(&mut self, now: Nanos, queue_bytes: u64, tx_time_ns: Nanos) -> RedVerdict {
        let w = self.cfg.weight;
        if queue_bytes == 0 {
            if let Some(since) = self.idle_since.take() {
                let m = now.saturating_sub(since) as f64 / tx_time_ns.max(1) as f64;
                self.avg *= (1.0 - w).powf(m);
            }
        } else {
            self.idle_since = None;
        }
        self.avg = (1.0 - w) * self.avg + w * queue_bytes as f64;

        let (min, max) = (self.cfg.min_bytes as f64, self.cfg.max_bytes as f64);
        if self.avg < min {
            self.count = -1;
            return RedVerdict::Accept;
        }
        if self.avg >= max {
            self.count = 0;
            return RedVerdict::ForcedDrop;
        }
        self.count += 1;
        let pb = self.cfg.max_p * (self.avg - min) / (max - min);
        let pa = if self.count as f64 * pb >= 1.0 {
            1.0
        } else {
            pb / (1.0 - self.count as f64 * pb)
        };
        if self.rng.gen::<f64>() < pa {
            self.count = 0;
            RedVerdict::EarlyDrop
        } else {
            RedVerdict::Accept
        }
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
        }
    }

    #[test]
    fn instantaneous_red_never_drops_below_min_and_always_at_max() {
        let mut r = Red::new(cfg(1.0), 1);
        for q in (0..15_000).step_by(100) {
            assert_eq!(r.on_arrival(0, q, 1000), RedVerdict::Accept, "q={q}");
        }
        assert_eq!(r.on_arrival(0, 45_000, 1000), RedVerdict::ForcedDrop);
        assert_eq!(r.on_arrival(0, 90_000, 1000), RedVerdict::ForcedDrop);
    }

    #[test]
    fn early_drop_rate_follows_the_uniform_spacing() {
        // At avg halfway between thresholds p_b = 0.05. With count incremented before
        // p_a = p_b/(1 − count·p_b) and reset to 0 on a drop, P(gap > k) = (1 − (k+1)p_b)/(1 − p_b),
        // so gaps are uniform on 1..=1/p_b − 1 = 1..=19 and their mean is 10 packets.
        let mut r = Red::new(cfg(1.0), 3);
        let n = 200_000;
        let drops = (0..n)
            .filter(|_| r.on_arrival(0, 30_000, 1000) == RedVerdict::EarlyDrop)
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
