//! Available bandwidth by Self-Loading Periodic Streams (SLoPS).
//!
//! A stream of `K` packets sent at a constant rate `R` through a link whose free capacity is
//! `A`: if `R > A` the link's queue grows for the stream's whole length and the one-way delays
//! trend upward; if `R < A` they do not (Jain and Dovrolis, "End-to-end available bandwidth:
//! measurement methodology, dynamics, and relation with TCP throughput", SIGCOMM 2002). The
//! clocks' offset does not matter, only the delays' trend.
//!
//! The trend of one stream ([`trend`]): split its delays into `Γ = ⌊√K⌋` groups in send order
//! and take each group's median `m₁ … m_Γ` (robust to single outliers). Then
//!
//! - PCT, the pairwise comparison test: the fraction of `k` with `m_k > m_{k−1}` (about 1/2
//!   for noise, 1 for a steady increase);
//! - PDT, the pairwise difference test: `(m_Γ − m₁) / Σ|m_k − m_{k−1}|` (about 0 for noise,
//!   1 for a steady increase).
//!
//! Steps of the medians up to [`NOISE`] (1 µs) count as no change. PCT above 0.66 or PDT above 0.55 says *increasing*, PCT below 0.54 or PDT below 0.45 says
//! *not increasing*, between is ambiguous; the stream is increasing when one test says so and
//! the other does not say the contrary (pathload's thresholds and rule). A stream that loses
//! more than 10 % of its packets is increasing: the queue overflowed.
//!
//! The [`Search`] is pathload's: a bisection on the rate with fleets and a grey region. It
//! starts with the bracket `[0, C]` (the capacity bounds the available bandwidth) and sends a
//! *fleet* of streams at one rate. The fleet is increasing if at least [`AGREE`] of its
//! streams are, not increasing if at least that share are not; otherwise the available
//! bandwidth varied across the fleet around that rate, and the rate joins the *grey region*
//! `[G₋, G₊]`. A not-increasing fleet raises the bracket's lower end to its rate (the mean
//! its streams achieved), an increasing one lowers the upper end. The next rate is the
//! bracket's middle, or with a grey region the middle between it and the nearer open side
//! (above it first); the search stops when the bracket, less the grey region, is narrower
//! than the resolution asked on both sides, or after the fleets allowed. The estimate is the
//! bracket's middle and the bracket its interval: with cross traffic whose rate varies, the
//! available bandwidth is a range, and the bracket holds the rates at which it varied.

use crate::estimate::{quantile, sorted, Estimate};
use crate::train::Train;
use serde::Serialize;

/// A stream's delay trend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Trend {
    /// The delays grow: the stream was faster than the available bandwidth.
    Increasing,
    /// The delays do not grow: the stream fitted.
    NotIncreasing,
    /// The two tests disagree, or both are in their grey zone.
    Ambiguous,
}

/// The two statistics of a stream's delays and the trend they decide.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TrendTest {
    /// The pairwise comparison test, 0..1.
    pub pct: f64,
    /// The pairwise difference test, −1..1.
    pub pdt: f64,
    /// What they decide.
    pub trend: Trend,
}

/// Changes of the group medians up to this many seconds are timestamp noise, not a trend.
pub const NOISE: f64 = 1e-6;

/// The fraction of a stream's packets lost above which the stream counts as increasing.
pub const LOSS_INCREASING: f64 = 0.1;

/// The trend of the one-way delays of `stream` (sent at a constant rate); `None` for fewer than
/// 9 arrivals (three groups of three).
pub fn trend(stream: &Train) -> Option<TrendTest> {
    let lost = stream.lost() as f64 / stream.packets.len().max(1) as f64;
    let d = stream.delays();
    let groups = (d.len() as f64).sqrt().floor() as usize;
    if groups < 3 {
        return None;
    }
    let size = d.len() / groups;
    let m: Vec<f64> = (0..groups)
        .map(|g| quantile(&sorted(d[g * size..(g + 1) * size].iter().copied()), 0.5))
        .collect::<Option<_>>()?;
    let ups = m.windows(2).filter(|w| w[1] > w[0] + NOISE).count();
    let pct = ups as f64 / (groups - 1) as f64;
    let total: f64 = m.windows(2).map(|w| (w[1] - w[0]).abs()).sum();
    let pdt = if total > NOISE * (groups - 1) as f64 {
        (m[groups - 1] - m[0]) / total
    } else {
        0.0
    };
    let say = |x: f64, up: f64, down: f64| {
        if x > up {
            Trend::Increasing
        } else if x < down {
            Trend::NotIncreasing
        } else {
            Trend::Ambiguous
        }
    };
    use Trend::*;
    let trend = if lost > LOSS_INCREASING {
        Increasing
    } else {
        match (say(pct, 0.66, 0.54), say(pdt, 0.55, 0.45)) {
            (Increasing, Increasing | Ambiguous) | (Ambiguous, Increasing) => Increasing,
            (NotIncreasing, NotIncreasing | Ambiguous) | (Ambiguous, NotIncreasing) => {
                NotIncreasing
            }
            _ => Ambiguous,
        }
    };
    Some(TrendTest { pct, pdt, trend })
}

/// One stream of a search: the rate achieved and its trend.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Stream {
    /// The rate the sender achieved, bit/s.
    pub rate: f64,
    /// The delays' statistics and trend.
    pub test: TrendTest,
}

/// The share of a fleet's streams that must agree for the fleet to decide (pathload's `f`).
pub const AGREE: f64 = 0.7;

/// The bisection, with fleets and a grey region, for the rate at which streams start to queue.
#[derive(Clone, Debug)]
pub struct Search {
    low: f64,
    high: f64,
    grey: Option<(f64, f64)>,
    resolution: f64,
    fleet: usize,
    max_fleets: usize,
    fleets: usize,
    streams: Vec<Stream>,
    /// The streams of the fleet being sent.
    current: Vec<Stream>,
}

impl Search {
    /// A search below `capacity` (bit/s) with fleets of `fleet` streams, that stops when its
    /// bracket is narrower than `resolution` (bit/s) outside the grey region or after
    /// `max_fleets` fleets.
    pub fn new(capacity: f64, resolution: f64, fleet: usize, max_fleets: usize) -> Search {
        Search {
            low: 0.0,
            high: capacity,
            grey: None,
            resolution,
            fleet: fleet.max(1),
            max_fleets,
            fleets: 0,
            streams: Vec::new(),
            current: Vec::new(),
        }
    }

    /// The rate of the fleet being sent or of the next one, bit/s; `None` when the search
    /// is over. The bracket, the grey region and the fleet count change only when a fleet
    /// completes, so every stream of a fleet is asked the same rate.
    pub fn next_rate(&self) -> Option<f64> {
        if self.fleets >= self.max_fleets {
            return None;
        }
        let res = self.resolution;
        match self.grey {
            None => (self.high - self.low > res).then(|| (self.low + self.high) / 2.0),
            Some((g_low, g_high)) => {
                if self.high - g_high > res {
                    Some((g_high + self.high) / 2.0)
                } else if g_low - self.low > res {
                    Some((self.low + g_low) / 2.0)
                } else {
                    None
                }
            }
        }
    }

    /// Takes the stream sent at the rate asked; a stream too short to judge is ignored. The
    /// fleet decides once it is complete.
    pub fn record(&mut self, stream: &Train) {
        let (Some(rate), Some(test)) = (stream.send_rate(), trend(stream)) else {
            return;
        };
        let s = Stream { rate, test };
        self.streams.push(s);
        self.current.push(s);
        if self.current.len() < self.fleet {
            return;
        }
        let n = self.current.len() as f64;
        let share = |t: Trend| self.current.iter().filter(|s| s.test.trend == t).count() as f64 / n;
        let rate = self.current.iter().map(|s| s.rate).sum::<f64>() / n;
        let (up, flat) = (share(Trend::Increasing), share(Trend::NotIncreasing));
        self.current.clear();
        self.fleets += 1;
        if up >= AGREE {
            self.high = self.high.min(rate.max(self.low));
        } else if flat >= AGREE {
            self.low = self.low.max(rate.min(self.high));
        } else {
            let (g_low, g_high) = self.grey.unwrap_or((rate, rate));
            self.grey = Some((g_low.min(rate), g_high.max(rate)));
        }
        // The grey region lies inside the bracket.
        self.grey = self.grey.and_then(|(g_low, g_high)| {
            let (g_low, g_high) = (g_low.max(self.low), g_high.min(self.high));
            (g_low <= g_high).then_some((g_low, g_high))
        });
    }

    /// The streams sent so far.
    pub fn streams(&self) -> &[Stream] {
        &self.streams
    }

    /// The bracket's middle, bit/s; `None` before any fleet decided.
    pub fn estimate(&self) -> Option<Estimate> {
        (self.fleets > 0).then(|| Estimate {
            value: (self.low + self.high) / 2.0,
            low: self.low,
            high: self.high,
            unit: "bit/s",
            interval: format!(
                "the bracket between fleets that fitted and fleets that queued, after {} fleets of {}{}",
                self.fleets,
                self.fleet,
                match self.grey {
                    Some((a, b)) => format!(
                        "; the available bandwidth varied between {:.1} and {:.1} Mb/s",
                        a / 1e6,
                        b / 1e6
                    ),
                    None => String::new(),
                }
            ),
            method: "SLoPS with pathload's fleets and grey region: one-way delay trend of periodic streams (Jain and Dovrolis 2002)",
            samples: self.streams.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cross, Path};

    #[test]
    fn streams_above_the_free_rate_increase_and_below_do_not() {
        let mut path = Path::new(100e6, 0.02, 1e6);
        path.cross = Cross::Constant {
            rate: 40e6,
            bytes: 1500,
        };
        let over = trend(&path.train(0.0, 100, 1200, 70e6)).unwrap();
        assert_eq!(over.trend, Trend::Increasing, "{over:?}");
        assert!(over.pct > 0.9 && over.pdt > 0.9, "{over:?}");
        let under = trend(&path.train(1.0, 100, 1200, 50e6)).unwrap();
        assert_eq!(under.trend, Trend::NotIncreasing, "{under:?}");
    }

    /// Runs a search on `path` with fleets of 5 streams of 100 packets; returns its estimate.
    fn search(path: &mut Path, capacity: f64) -> (Estimate, usize) {
        let mut s = Search::new(capacity, 0.03 * capacity, 5, 12);
        let mut t = 0.0;
        while let Some(rate) = s.next_rate() {
            s.record(&path.train(t, 100, 1200, rate));
            t += 0.5;
        }
        (s.estimate().unwrap(), s.streams().len())
    }

    #[test]
    fn the_search_finds_the_free_rate_beside_steady_cross_traffic() {
        let mut path = Path::new(100e6, 0.02, 1e6);
        path.cross = Cross::Constant {
            rate: 40e6,
            bytes: 1500,
        };
        let (e, n) = search(&mut path, 100e6);
        assert!((e.value / 60e6 - 1.0).abs() < 0.05, "{e:?}");
        assert!(e.low <= 60e6 * 1.01 && 60e6 <= e.high * 1.01, "{e:?}");
        assert!(n <= 6 * 5, "{n} streams");
    }

    #[test]
    fn the_bracket_holds_the_free_rate_beside_poisson_cross_traffic() {
        // 40 of 100 Mb/s taken by Poisson cross traffic: over a 100-packet stream the free
        // rate varies around 60 Mb/s, and single streams above it often do not queue. The
        // fleets' bracket must hold 60 Mb/s, within a resolution step, whatever the arrivals.
        for start in [0.0, 100.0, 200.0, 300.0, 400.0] {
            let mut path = Path::new(100e6, 0.02, 1e6);
            path.cross = Cross::Poisson {
                rate: 40e6,
                bytes: 1500,
            };
            let mut s = Search::new(100e6, 0.03 * 100e6, 5, 12);
            let mut t = start;
            while let Some(rate) = s.next_rate() {
                s.record(&path.train(t, 100, 1200, rate));
                t += 0.5;
            }
            let e = s.estimate().unwrap();
            assert!(
                e.low - 3e6 <= 60e6 && 60e6 <= e.high + 3e6,
                "{e:?} {:?}",
                s.streams()
                    .iter()
                    .map(|x| ((x.rate / 1e6).round(), x.test.trend))
                    .collect::<Vec<_>>()
            );
            assert!((e.value / 60e6 - 1.0).abs() < 0.15, "{e:?}");
        }
    }

    #[test]
    fn a_quiet_path_has_its_capacity_free() {
        let mut path = Path::new(100e6, 0.02, 1e6);
        let (e, _) = search(&mut path, 100e6);
        assert!(e.value > 0.95 * 100e6, "{e:?}");
    }
}
