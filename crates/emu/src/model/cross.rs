//! Cross traffic generated at the bottleneck.
//!
//! Instead of an extra host sending competing traffic, the emulator injects synthetic packets
//! straight into the bottleneck queue. They take queue space and serialisation time exactly like
//! real packets (and are dropped by droptail/RED like them) but are discarded after the
//! bottleneck, so the hosts only see their effect: less capacity and more queueing delay.
//!
//! Arrival processes (the ones the Common TCP Evaluation Suite and ns-2 use for background load).
//! For every kind `rate` is the *average* offered load, as in the simulator (`sim/cross.rs`), so
//! a scenario's cross traffic offers the same load in both:
//! - `Cbr`: one packet every `8·size/rate` seconds;
//! - `Poisson`: exponential inter-arrival times with the same mean (M/·/1 offered load);
//! - `OnOff`: CBR at `rate·(on+off)/on` during ON periods, silent during OFF periods, both
//!   exponentially distributed with means `mean_on` and `mean_off` (ns-2
//!   `Application/Traffic/Exponential`, whose `rate` is the ON-period rate instead).

use super::Nanos;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};

/// One cross-traffic source.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CrossConfig {
    /// The arrival process.
    pub kind: CrossKind,
    /// Average offered load, bits per second (on/off sends faster while ON: see
    /// [`CrossConfig::peak_rate_bps`]).
    pub rate_bps: f64,
    /// Packet size in bytes.
    pub packet_bytes: u32,
}

/// An arrival process; for each, `rate_bps` is the average load.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "process", rename_all = "snake_case")]
pub enum CrossKind {
    /// Constant bit rate: one packet every `8·size/rate` seconds.
    Cbr,
    /// Exponential inter-arrival times with the CBR gap as their mean.
    Poisson,
    /// CBR at `rate·(on+off)/on` during ON periods, silent during OFF periods, both of
    /// exponentially distributed length.
    OnOff {
        /// Mean length of an ON period, in ns.
        mean_on_ns: Nanos,
        /// Mean length of an OFF period, in ns.
        mean_off_ns: Nanos,
    },
}

impl CrossConfig {
    /// Mean offered load in bits per second.
    pub fn mean_load_bps(&self) -> f64 {
        self.rate_bps
    }

    /// The rate while sending: the average for cbr and poisson, `rate·(on+off)/on` during an
    /// on/off source's ON periods.
    pub fn peak_rate_bps(&self) -> f64 {
        match self.kind {
            CrossKind::Cbr | CrossKind::Poisson => self.rate_bps,
            CrossKind::OnOff {
                mean_on_ns,
                mean_off_ns,
            } => self.rate_bps * (mean_on_ns + mean_off_ns) as f64 / mean_on_ns.max(1) as f64,
        }
    }
}

/// Generates the arrival times of one source.
#[derive(Debug, Clone)]
pub struct CrossGenerator {
    cfg: CrossConfig,
    gap_ns: f64,
    /// Next arrival, kept in f64 so CBR gaps do not round-drift.
    next: f64,
    on_until: f64,
    rng: SmallRng,
}

impl CrossGenerator {
    /// Starts generating at `start`.
    pub fn new(cfg: CrossConfig, start: Nanos, seed: u64) -> Self {
        let gap_ns = cfg.packet_bytes as f64 * 8.0 * 1e9 / cfg.peak_rate_bps();
        let mut g = Self {
            cfg,
            gap_ns,
            next: start as f64,
            on_until: f64::INFINITY,
            rng: SmallRng::seed_from_u64(seed),
        };
        if let CrossKind::OnOff { mean_on_ns, .. } = cfg.kind {
            g.on_until = start as f64 + g.exp(mean_on_ns as f64);
        }
        g
    }

    fn exp(&mut self, mean: f64) -> f64 {
        Exp::new(1.0 / mean)
            .expect("positive mean")
            .sample(&mut self.rng)
    }

    /// Size of each generated packet, in bytes.
    pub fn packet_bytes(&self) -> u32 {
        self.cfg.packet_bytes
    }

    /// Time of the next packet.
    pub fn peek(&self) -> Nanos {
        self.next as Nanos
    }

    /// Consumes the next packet and schedules the one after it.
    pub fn advance(&mut self) {
        match self.cfg.kind {
            CrossKind::Cbr => self.next += self.gap_ns,
            CrossKind::Poisson => self.next += self.exp(self.gap_ns),
            CrossKind::OnOff {
                mean_on_ns,
                mean_off_ns,
            } => {
                // Packets are spaced by `gap` in ON-time: an OFF period shifts the rest of the
                // schedule, keeping the CBR phase, so the mean load is exactly peak·on/(on+off)
                // (restarting the phase at each ON period would add half a packet per period).
                self.next += self.gap_ns;
                while self.next >= self.on_until {
                    let off = self.exp(mean_off_ns as f64);
                    let on = self.exp(mean_on_ns as f64);
                    self.next += off;
                    self.on_until += off + on;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_until(g: &mut CrossGenerator, end: Nanos) -> u64 {
        let mut n = 0;
        while g.peek() < end {
            g.advance();
            n += 1;
        }
        n
    }

    #[test]
    fn cbr_is_exactly_periodic() {
        // 12 Mb/s of 1500 B packets = 1000 packets/s, one per ms.
        let cfg = CrossConfig {
            kind: CrossKind::Cbr,
            rate_bps: 12e6,
            packet_bytes: 1500,
        };
        let mut g = CrossGenerator::new(cfg, 0, 1);
        assert_eq!(g.peek(), 0);
        g.advance();
        assert_eq!(g.peek(), 1_000_000);
        let mut g = CrossGenerator::new(cfg, 0, 1);
        assert_eq!(count_until(&mut g, 1_000_000_000), 1000);
    }

    #[test]
    fn poisson_mean_rate() {
        let cfg = CrossConfig {
            kind: CrossKind::Poisson,
            rate_bps: 12e6,
            packet_bytes: 1500,
        };
        let mut g = CrossGenerator::new(cfg, 0, 5);
        // 100 s at 1000 pkt/s: 100 000 ± 4·316.
        let n = count_until(&mut g, 100_000_000_000) as f64;
        assert!((n - 100_000.0).abs() < 1_300.0, "{n}");
    }

    #[test]
    fn on_off_rate_is_the_average_load() {
        let cfg = CrossConfig {
            kind: CrossKind::OnOff {
                mean_on_ns: 10_000_000,
                mean_off_ns: 30_000_000,
            },
            rate_bps: 3e6,
            packet_bytes: 1500,
        };
        assert_eq!(cfg.mean_load_bps(), 3e6);
        assert_eq!(cfg.peak_rate_bps(), 12e6);
        let mut g = CrossGenerator::new(cfg, 0, 11);
        // 200 s at a 25 % duty cycle of 1000 pkt/s ≈ 50 000 packets (5000 on/off cycles).
        let n = count_until(&mut g, 200_000_000_000) as f64;
        assert!((n - 50_000.0).abs() < 3_000.0, "{n}");
    }
}
