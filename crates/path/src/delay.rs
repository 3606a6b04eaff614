//! Propagation delay with optional jitter, reordering and duplication.
//!
//! A packet whose last bit leaves the bottleneck at `d` is released at `d + delay` (mahimahi
//! `DelayQueue`, netem `delay`). The packets wait in a `DelayLine` ordered by release time.
//!
//! Jitter: a normally distributed offset with standard deviation `jitter` is added, clamped so a
//! packet is never released before it left the bottleneck. Unlike netem (whose jitter reorders
//! packets unless `rate` is also set), jitter here preserves order — a packet is not released
//! before the one in front of it — because a real path's variable delay does not let packets
//! overtake one another. Reordering is a separate, explicit knob.
//!
//! Reordering: with probability `reorder_p` a packet's release is brought forward by `reorder_by`
//! (netem sends such packets immediately; a fixed shift keeps the rest of the delay and makes
//! the reordering depth controllable). Duplication: with probability `duplicate_p` a second copy
//! is released right after the original (netem `duplicate`).
//!
//! Times are nanoseconds on the driver's clock (`u64`). The model keeps no clock and no random generator: the caller passes each packet's departure
//! time and its own random stream, and the model draws only for what is configured — a normal
//! deviate for jitter, then a uniform number each for reordering and duplication.

use rand::Rng;
use rand_distr::{Distribution, Normal};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The largest jitter allowed, as a multiple of the delay: beyond, the clamp at the departure
/// time would dominate and the delays would no longer follow the configured distribution.
pub const MAX_JITTER_OVER_DELAY: u64 = 10;

/// Delay-stage parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct DelayConfig {
    /// One-way propagation delay, in ns.
    pub delay_ns: u64,
    /// Standard deviation of the normally distributed jitter, in ns (0: none); jitter never
    /// reorders.
    pub jitter_ns: u64,
    /// Probability that a packet is released `reorder_by_ns` early.
    pub reorder_p: f64,
    /// How far forward a reordered packet's release is brought, in ns.
    pub reorder_by_ns: u64,
    /// Probability that a packet is duplicated.
    pub duplicate_p: f64,
}

impl DelayConfig {
    /// A constant delay: no jitter, reordering or duplication.
    pub fn constant(delay_ns: u64) -> Self {
        DelayConfig {
            delay_ns,
            ..Default::default()
        }
    }

    /// True when every packet gets exactly `delay_ns` and nothing is reordered or duplicated.
    pub fn is_constant(&self) -> bool {
        self.jitter_ns == 0 && self.reorder_p == 0.0 && self.duplicate_p == 0.0
    }

    /// Refuses settings that are not a delay distribution: probabilities outside [0, 1),
    /// reordering without a shift, jitter more than [`MAX_JITTER_OVER_DELAY`] × the delay. The
    /// error is the setting as a scenario names it (`jitter`, `reorder`, `reorder_by`,
    /// `duplicate`) and what is wrong.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.delay_ns > 0 && self.jitter_ns > self.delay_ns * MAX_JITTER_OVER_DELAY {
            return Err((
                "jitter",
                format!(
                    "jitter larger than {MAX_JITTER_OVER_DELAY}× the delay is not a delay \
                 distribution; lower `jitter`"
                ),
            ));
        }
        for (what, p) in [("reorder", self.reorder_p), ("duplicate", self.duplicate_p)] {
            if !(p.is_finite() && (0.0..1.0).contains(&p)) {
                return Err((what, format!("{p} is not a probability in [0, 1)")));
            }
        }
        if self.reorder_p > 0.0 && self.reorder_by_ns == 0 {
            return Err((
                "reorder_by",
                "reordering needs a shift (`reorder_by` > 0), or packets stay in order".into(),
            ));
        }
        Ok(())
    }
}

/// Computes release times.
#[derive(Debug, Clone)]
pub struct DelayModel {
    cfg: DelayConfig,
    last_release: u64,
}

/// Release time of a packet, and of its duplicate if one is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// Release time, in ns.
    pub at: u64,
    /// Release time of the duplicate, if one is made.
    pub duplicate_at: Option<u64>,
    /// The packet was released early on purpose (reordering).
    pub reordered: bool,
}

impl DelayModel {
    /// A delay stage that has released nothing yet.
    pub fn new(cfg: DelayConfig) -> Self {
        Self {
            cfg,
            last_release: 0,
        }
    }

    /// The stage's settings.
    pub fn config(&self) -> &DelayConfig {
        &self.cfg
    }

    /// Release time(s) of a packet that left the bottleneck at `departure`, drawing from `rng`.
    pub fn release<R: Rng + ?Sized>(&mut self, departure: u64, rng: &mut R) -> Release {
        let mut at = departure + self.cfg.delay_ns;
        if self.cfg.jitter_ns > 0 {
            let n = Normal::new(0.0, self.cfg.jitter_ns as f64).expect("finite sd");
            let off = n.sample(rng);
            at = (at as f64 + off).max(departure as f64).round() as u64;
            at = at.max(self.last_release);
        }
        let mut reordered = false;
        if self.cfg.reorder_p > 0.0 && rng.gen::<f64>() < self.cfg.reorder_p {
            at = at.saturating_sub(self.cfg.reorder_by_ns).max(departure);
            reordered = true;
        } else {
            self.last_release = self.last_release.max(at);
        }
        let duplicate_at =
            (self.cfg.duplicate_p > 0.0 && rng.gen::<f64>() < self.cfg.duplicate_p).then_some(at);
        Release {
            at,
            duplicate_at,
            reordered,
        }
    }
}

/// Packets waiting for their release time, earliest first. Insertion is O(1) when release times
/// arrive in order (the common case: constant delay) and walks back from the tail otherwise.
#[derive(Debug)]
pub struct DelayLine<T> {
    q: VecDeque<(u64, T)>,
}

impl<T> Default for DelayLine<T> {
    fn default() -> Self {
        Self { q: VecDeque::new() }
    }
}

impl<T> DelayLine<T> {
    /// Adds `item` to be released at `at` (ns), after any item due at the same time.
    pub fn push(&mut self, at: u64, item: T) {
        let mut i = self.q.len();
        while i > 0 && self.q[i - 1].0 > at {
            i -= 1;
        }
        if i == self.q.len() {
            self.q.push_back((at, item));
        } else {
            self.q.insert(i, (at, item));
        }
    }

    /// Release time of the earliest packet.
    pub fn next_release(&self) -> Option<u64> {
        self.q.front().map(|(t, _)| *t)
    }

    /// Removes the earliest packet if its release time is ≤ `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<(u64, T)> {
        match self.q.front() {
            Some((t, _)) if *t <= now => self.q.pop_front(),
            _ => None,
        }
    }

    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// True when nothing is waiting.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Removes every waiting packet, earliest first.
    pub fn drain(&mut self) -> impl Iterator<Item = (u64, T)> + '_ {
        self.q.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    /// A delay stage and its own random stream from `seed`.
    fn model(cfg: DelayConfig, seed: u64) -> (DelayModel, SmallRng) {
        (DelayModel::new(cfg), SmallRng::seed_from_u64(seed))
    }

    #[test]
    fn constant_delay_adds_exactly() {
        let (mut m, mut rng) = model(
            DelayConfig {
                delay_ns: 90_000_000,
                ..Default::default()
            },
            1,
        );
        let r = m.release(5, &mut rng);
        assert_eq!(r.at, 90_000_005);
        assert_eq!(r.duplicate_at, None);
    }

    #[test]
    fn jitter_keeps_order_and_never_precedes_departure() {
        let (mut m, mut rng) = model(
            DelayConfig {
                delay_ns: 1_000,
                jitter_ns: 5_000,
                ..Default::default()
            },
            9,
        );
        let mut last = 0;
        let mut sum = 0i128;
        for k in 0..10_000u64 {
            let dep = k * 100;
            let r = m.release(dep, &mut rng);
            assert!(r.at >= dep && r.at >= last);
            sum += r.at as i128 - dep as i128;
            last = r.at;
        }
        // Mean extra delay is ≥ the configured delay (the clamps only push later).
        assert!(sum / 10_000 >= 1_000);
    }

    #[test]
    fn reordered_packets_overtake_by_the_configured_shift() {
        let (mut m, mut rng) = model(
            DelayConfig {
                delay_ns: 10_000,
                reorder_p: 1.0,
                reorder_by_ns: 4_000,
                ..Default::default()
            },
            1,
        );
        let r = m.release(100, &mut rng);
        assert!(r.reordered);
        assert_eq!(r.at, 6_100);
    }

    #[test]
    fn duplicates_at_the_configured_rate() {
        let (mut m, mut rng) = model(
            DelayConfig {
                duplicate_p: 0.1,
                ..Default::default()
            },
            4,
        );
        let d = (0..100_000)
            .filter(|&k| m.release(k, &mut rng).duplicate_at.is_some())
            .count() as f64;
        // Binomial sd = sqrt(1e5·0.1·0.9) = 94.9; 4 sd bound.
        assert!((d - 10_000.0).abs() < 380.0, "{d}");
    }

    #[test]
    fn delay_line_orders_by_release_time() {
        let mut l = DelayLine::default();
        l.push(10, 'a');
        l.push(30, 'c');
        l.push(20, 'b');
        assert_eq!(l.next_release(), Some(10));
        assert_eq!(l.pop_due(9), None);
        assert_eq!(l.pop_due(25), Some((10, 'a')));
        assert_eq!(l.pop_due(25), Some((20, 'b')));
        assert_eq!(l.pop_due(25), None);
        assert_eq!(l.len(), 1);
    }
}
