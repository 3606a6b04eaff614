//! Random loss: Bernoulli and Gilbert–Elliott, as clock-free state machines.
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
//! The model keeps only the chain's state; the caller supplies the random stream to each
//! decision, so each engine keeps its own reproducible generator (the emulator a seeded
//! `SmallRng` per direction, the simulator its per-port stream). A decision draws a uniform
//! number only for a probability above zero: one for the loss, then one for the chain's move.

use rand::Rng;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which random-loss model a direction uses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
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
        /// Loss probability in the Good state (default 0).
        #[serde(default)]
        loss_good: f64,
        /// Loss probability in the Bad state (default 1: Gilbert's original channel).
        #[serde(default = "one")]
        loss_bad: f64,
    },
}

fn one() -> f64 {
    1.0
}

/// A loss model's parameter out of range: which one, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct LossError {
    /// The parameter as the model's table names it (`p`, `r`, `loss_good`, `loss_bad`).
    pub field: &'static str,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for LossError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for LossError {}

/// `p` as a probability in [0, 1], or in [0, 1) when `allow_one` is false.
fn probability(field: &'static str, p: f64, allow_one: bool) -> Result<(), LossError> {
    if p.is_finite() && p >= 0.0 && (p < 1.0 || (allow_one && p <= 1.0)) {
        Ok(())
    } else {
        let range = if allow_one { "[0, 1]" } else { "[0, 1)" };
        Err(LossError {
            field,
            message: format!("{p} is not a probability in {range}"),
        })
    }
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

    /// Refuses parameters that are not probabilities, and a model that in the long run loses
    /// every packet (no transfer could finish over it).
    pub fn check(&self) -> Result<(), LossError> {
        match *self {
            LossConfig::None => Ok(()),
            LossConfig::Bernoulli { p } => probability("p", p, false),
            LossConfig::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => {
                probability("p", p, true)?;
                probability("r", r, true)?;
                probability("loss_good", loss_good, true)?;
                probability("loss_bad", loss_bad, true)?;
                if r == 0.0 && p > 0.0 && loss_bad >= 1.0 {
                    return Err(LossError {
                        field: "r",
                        message: "with r = 0 and loss_bad = 1 every packet is lost once the \
                                  chain turns Bad; set r > 0"
                            .into(),
                    });
                }
                if loss_good >= 1.0 {
                    return Err(LossError {
                        field: "loss_good",
                        message: "1 loses every packet in the Good state; use a value below 1"
                            .into(),
                    });
                }
                Ok(())
            }
        }
    }
}

/// The loss process: the model and, for Gilbert–Elliott, the chain's state.
#[derive(Debug, Clone)]
pub struct LossModel {
    cfg: LossConfig,
    bad: bool,
}

impl LossModel {
    /// A loss process in the Good state.
    pub fn new(cfg: LossConfig) -> Self {
        Self { cfg, bad: false }
    }

    /// The model it runs.
    pub fn config(&self) -> LossConfig {
        self.cfg
    }

    /// Decides whether the next packet is lost, drawing from `rng` (see the module comment for
    /// which draws are made).
    #[inline]
    pub fn lose<R: Rng + ?Sized>(&mut self, rng: &mut R) -> bool {
        match self.cfg {
            LossConfig::None => false,
            LossConfig::Bernoulli { p } => p > 0.0 && rng.gen::<f64>() < p,
            LossConfig::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => {
                let loss_p = if self.bad { loss_bad } else { loss_good };
                let lost = loss_p > 0.0 && rng.gen::<f64>() < loss_p;
                let flip = if self.bad { r } else { p };
                if flip > 0.0 && rng.gen::<f64>() < flip {
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
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    /// Losses in `n` packets of a process with its own stream from `seed`.
    fn count_lost(cfg: LossConfig, n: u64, seed: u64) -> u64 {
        let mut m = LossModel::new(cfg);
        let mut rng = SmallRng::seed_from_u64(seed);
        (0..n).filter(|_| m.lose(&mut rng)).count() as u64
    }

    #[test]
    fn bernoulli_one_percent_within_binomial_bound() {
        // The count is within 4 binomial standard deviations of n·p (a false failure has
        // probability < 1e-4).
        let n = 1_000_000;
        let p = 0.01;
        for seed in [1, 2, 3] {
            let lost = count_lost(LossConfig::Bernoulli { p }, n, seed) as f64;
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
        assert_eq!(count_lost(LossConfig::None, 10_000, 1), 0);
        assert_eq!(count_lost(LossConfig::Bernoulli { p: 0.0 }, 10_000, 1), 0);
        assert_eq!(
            count_lost(LossConfig::Bernoulli { p: 1.0 }, 10_000, 1),
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
        let mut m = LossModel::new(cfg);
        let mut rng = SmallRng::seed_from_u64(7);
        let n = 2_000_000;
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        for _ in 0..n {
            let l = m.lose(&mut rng);
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
    fn same_stream_same_sequence() {
        let cfg = LossConfig::Bernoulli { p: 0.3 };
        let (mut a, mut b) = (LossModel::new(cfg), LossModel::new(cfg));
        let (mut ra, mut rb) = (SmallRng::seed_from_u64(42), SmallRng::seed_from_u64(42));
        for _ in 0..1000 {
            assert_eq!(a.lose(&mut ra), b.lose(&mut rb));
        }
    }

    #[test]
    fn checks_name_the_parameter() {
        let e = LossConfig::Bernoulli { p: 1.0 }.check().unwrap_err();
        assert_eq!(e.field, "p");
        assert!(e.message.contains("[0, 1)"), "{e}");
        let ge = |p, r, loss_good, loss_bad| LossConfig::GilbertElliott {
            p,
            r,
            loss_good,
            loss_bad,
        };
        assert_eq!(ge(0.01, 0.25, 0.0, 1.0).check(), Ok(()));
        assert_eq!(ge(0.01, 1.5, 0.0, 1.0).check().unwrap_err().field, "r");
        assert_eq!(ge(0.01, 0.0, 0.0, 1.0).check().unwrap_err().field, "r");
        assert_eq!(
            ge(0.01, 0.2, 1.0, 1.0).check().unwrap_err().field,
            "loss_good"
        );
        assert_eq!(
            ge(0.01, 0.2, 0.0, f64::NAN).check().unwrap_err().field,
            "loss_bad"
        );
    }

    #[test]
    fn gilbert_elliott_table_defaults_to_gilberts_channel() {
        let cfg: LossConfig =
            toml::from_str("model = \"gilbert_elliott\"\np = 0.01\nr = 0.25\n").unwrap();
        assert_eq!(
            cfg,
            LossConfig::GilbertElliott {
                p: 0.01,
                r: 0.25,
                loss_good: 0.0,
                loss_bad: 1.0
            }
        );
    }
}
