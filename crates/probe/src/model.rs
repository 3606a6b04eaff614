//! A small path for the estimators' tests: a tail-drop FIFO of `buffer` bytes before a link of
//! `rate` bit/s, a one-way delay, optional constant-rate or Poisson cross traffic through the
//! same queue, random loss after it, and a receiver clock with its own epoch. Times are seconds.

use crate::train::{Packet, Train};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Cross traffic through the bottleneck's queue.
#[derive(Clone, Copy, Debug)]
pub enum Cross {
    /// None.
    Off,
    /// Packets of `bytes` at a constant `rate` bit/s.
    Constant { rate: f64, bytes: u32 },
    /// Packets of `bytes` with exponential gaps, averaging `rate` bit/s.
    Poisson { rate: f64, bytes: u32 },
}

/// The path and its state.
pub struct Path {
    pub rate: f64,
    pub buffer: f64,
    pub delay: f64,
    pub loss: f64,
    pub cross: Cross,
    /// The receiver's clock minus the sender's.
    pub offset: f64,
    busy_until: f64,
    next_cross: f64,
    rng: SmallRng,
}

impl Path {
    pub fn new(rate: f64, delay: f64, buffer: f64) -> Path {
        Path {
            rate,
            buffer,
            delay,
            loss: 0.0,
            cross: Cross::Off,
            offset: 1234.5,
            busy_until: 0.0,
            next_cross: 0.0,
            rng: SmallRng::seed_from_u64(7),
        }
    }

    /// Puts a packet of `bytes` into the queue at `t`; when it leaves the link, or `None` if
    /// the queue is full.
    fn enqueue(&mut self, t: f64, bytes: u32) -> Option<f64> {
        let backlog = (self.busy_until - t).max(0.0) * self.rate / 8.0;
        if backlog + f64::from(bytes) > self.buffer {
            return None;
        }
        self.busy_until = self.busy_until.max(t) + f64::from(bytes) * 8.0 / self.rate;
        Some(self.busy_until)
    }

    /// Gives the random stream (loss, Poisson gaps) the seed `seed`.
    pub fn reseed(&mut self, seed: u64) {
        self.rng = SmallRng::seed_from_u64(seed);
    }

    /// Runs the cross traffic up to `t`.
    fn cross_until(&mut self, t: f64) {
        let (rate, bytes, poisson) = match self.cross {
            Cross::Off => return,
            Cross::Constant { rate, bytes } => (rate, bytes, false),
            Cross::Poisson { rate, bytes } => (rate, bytes, true),
        };
        let mean_gap = f64::from(bytes) * 8.0 / rate;
        while self.next_cross <= t {
            let at = self.next_cross;
            let _ = self.enqueue(at, bytes);
            let gap = if poisson {
                -mean_gap * (1.0 - self.rng.gen::<f64>()).ln()
            } else {
                mean_gap
            };
            self.next_cross = at + gap;
        }
    }

    /// Sends one packet of `bytes` at `t` (times must not decrease between calls).
    pub fn send(&mut self, t: f64, bytes: u32) -> Packet {
        self.cross_until(t);
        let left = self.enqueue(t, bytes);
        let lost = self.loss > 0.0 && self.rng.gen::<f64>() < self.loss;
        Packet {
            bytes,
            sent: t,
            received: left.filter(|_| !lost).map(|l| l + self.delay + self.offset),
        }
    }

    /// Sends `n` packets of `bytes` from `t` at `rate` bit/s; returns the train.
    pub fn train(&mut self, t: f64, n: usize, bytes: u32, rate: f64) -> Train {
        let gap = f64::from(bytes) * 8.0 / rate;
        Train::new(
            (0..n)
                .map(|i| self.send(t + i as f64 * gap, bytes))
                .collect(),
        )
    }
}
