//! Random loss: Bernoulli and Gilbert–Elliott.
//!
//! *Bernoulli* (mahimahi `IIDLoss`, netem `loss random`): every packet is lost independently with
//! probability p.
//!
//! *Gilbert–Elliott* (E. N. Gilbert, "Capacity of a burst-noise channel", Bell Syst. Tech. J. 1960;
//! E. O. Elliott 1963; the four-parameter form of netem `loss gemodel p r 1-h 1-k`, RFC 6534 §2): a
//! two-state Markov chain. In the Good state a packet is lost with probability `loss_good` (netem
//! 1-k), in the Bad state with `loss_bad` (netem 1-h). After each packet the chain moves Good→Bad
//! with probability `p` and Bad→Good with probability `r`. The stationary probability of Bad is
//! p/(p+r), so the mean loss rate is (r·loss_good + p·loss_bad)/(p+r), and the mean length of a
//! Bad sojourn is 1/r packets — losses come in bursts, as on a fading radio link or a
//! periodically overflowing router.
//!
//! Randomness comes from a seeded `SmallRng`, so a run is reproducible (mahimahi seeds from
//! `random_device` and is not).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// Which random-loss model a direction uses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum LossConfig {
    /// No random loss.
    #[default]
    None,
    /// Every packet is lost independently with probability `p`.
    Bernoulli {
        /// Loss probability per packet.
        p: f64,
    },
    /// Bursty loss from a two-state Markov chain (Good, Bad).
    GilbertElliott {
        /// Probability of moving from Good to Bad after a packet.
        p: f64,
        /// Probability of moving from Bad to Good after a packet.
        r: f64,
        /// Loss probability in the Good state.
        loss_good: f64,
        /// Loss probability in the Bad state.
        loss_bad: f64,
    },
}

impl LossConfig {
    /// The long-run loss probability the model produces.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossConfig::None => 0.0,
            LossConfig::Bernoulli { p } => p,
            LossConfig::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => {
                if p + r == 0.0 {
                    loss_good
                } else {
                    (r * loss_good + p * loss_bad) / (p + r)
                }
            }
        }
    }
}

/// The loss process itself.
#[derive(Debug, Clone)]
pub struct LossModel {
    cfg: LossConfig,
    bad: bool,
    rng: SmallRng,
}

impl LossModel {
    /// A loss process in the Good state with its own random stream from `seed`.
    pub fn new(cfg: LossConfig, seed: u64) -> Self {
        Self {
            cfg,
            bad: false,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// Decides whether the next packet is lost.
    pub fn lose(&mut self) -> bool {
        match self.cfg {
            LossConfig::None => false,
            LossConfig::Bernoulli { p } => p > 0.0 && self.rng.gen::<f64>() < p,
            LossConfig::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => {
                let loss_p = if self.bad { loss_bad } else { loss_good };
                let lost = loss_p > 0.0 && self.rng.gen::<f64>() < loss_p;
                let flip = if self.bad { r } else { p };
                if flip > 0.0 && self.rng.gen::<f64>() < flip {
                    self.bad = !self.bad;
                }
                lost
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Count losses in `n` packets and check them against the binomial bound: the count is within
    /// 4 standard deviations of n·p (a false failure has probability < 1e-4).
    fn check_rate(cfg: LossConfig, n: u64, seed: u64) -> u64 {
        let mut m = LossModel::new(cfg, seed);
        (0..n).filter(|_| m.lose()).count() as u64
    }

    #[test]
    fn bernoulli_one_percent_within_binomial_bound() {
        let n = 1_000_000;
        let p = 0.01;
        for seed in [1, 2, 3] {
            let lost = check_rate(LossConfig::Bernoulli { p }, n, seed) as f64;
            let sd = (n as f64 * p * (1.0 - p)).sqrt(); // 99.5
            assert!(
                (lost - n as f64 * p).abs() < 4.0 * sd,
                "seed {seed}: {lost} lost of {n}, expected 10000 ± {}",
                4.0 * sd
            );
        }
    }

    #[test]
    fn no_loss_and_certain_loss() {
        assert_eq!(check_rate(LossConfig::None, 10_000, 1), 0);
        assert_eq!(check_rate(LossConfig::Bernoulli { p: 0.0 }, 10_000, 1), 0);
        assert_eq!(
            check_rate(LossConfig::Bernoulli { p: 1.0 }, 10_000, 1),
            10_000
        );
    }

    #[test]
    fn gilbert_elliott_mean_and_burstiness() {
        // p = 0.01, r = 0.25, loss only in Bad: mean loss = 0.01/0.26 = 3.846 %, bursts of mean
        // length 1/r = 4 packets.
        let cfg = LossConfig::GilbertElliott {
            p: 0.01,
            r: 0.25,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        assert!((cfg.mean_loss() - 0.01 / 0.26).abs() < 1e-12);
        let mut m = LossModel::new(cfg, 7);
        let n = 2_000_000;
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        for _ in 0..n {
            let l = m.lose();
            lost += l as u64;
            if l && !prev {
                bursts += 1;
            }
            prev = l;
        }
        let rate = lost as f64 / n as f64;
        assert!((rate - 0.03846).abs() < 0.002, "loss rate {rate}");
        let mean_burst = lost as f64 / bursts as f64;
        assert!((mean_burst - 4.0).abs() < 0.2, "mean burst {mean_burst}");
    }

    #[test]
    fn same_seed_same_sequence() {
        let cfg = LossConfig::Bernoulli { p: 0.3 };
        let mut a = LossModel::new(cfg, 42);
        let mut b = LossModel::new(cfg, 42);
        for _ in 0..1000 {
            assert_eq!(a.lose(), b.lose());
        }
    }
}
