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
//! The [`Search`] is a bisection on the rate: it starts with the bracket `[0, C]` (the capacity
//! bounds the available bandwidth), sends a stream at the bracket's middle, raises the lower
//! end to the rate achieved by a stream that did not increase and lowers the upper end to that
//! of one that did (or was ambiguous: that rate is within the noise of the turning point), and
//! stops when the bracket is narrower than the resolution asked. The estimate is the bracket's
//! middle and the bracket its interval. An ambiguous stream is sent again at the same rate
//! once before it counts (pathload sends fleets of streams for the same reason).

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

/// The bisection for the rate at which streams start to queue.
#[derive(Clone, Debug)]
pub struct Search {
    low: f64,
    high: f64,
    resolution: f64,
    max_streams: usize,
    streams: Vec<Stream>,
    again: Option<f64>,
}

impl Search {
    /// A search below `capacity` (bit/s) that stops when its bracket is narrower than
    /// `resolution` (bit/s) or after `max_streams` streams.
    pub fn new(capacity: f64, resolution: f64, max_streams: usize) -> Search {
        Search {
            low: 0.0,
            high: capacity,
            resolution,
            max_streams,
            streams: Vec::new(),
            again: None,
        }
    }

    /// The rate of the next stream to send, bit/s; `None` when the search is over.
    pub fn next_rate(&self) -> Option<f64> {
        let open = self.high - self.low > self.resolution && self.streams.len() < self.max_streams;
        open.then(|| self.again.unwrap_or((self.low + self.high) / 2.0))
    }

    /// Takes the stream sent at the last rate asked; a stream too short to judge is ignored.
    pub fn record(&mut self, stream: &Train) {
        let (Some(rate), Some(test)) = (stream.send_rate(), trend(stream)) else {
            return;
        };
        self.streams.push(Stream { rate, test });
        let asked = self.again.take();
        if test.trend == Trend::Ambiguous && asked.is_none() {
            self.again = Some(rate);
            return;
        }
        match test.trend {
            Trend::NotIncreasing => self.low = self.low.max(rate.min(self.high)),
            Trend::Increasing | Trend::Ambiguous => self.high = self.high.min(rate.max(self.low)),
        }
    }

    /// The streams sent so far.
    pub fn streams(&self) -> &[Stream] {
        &self.streams
    }

    /// The bracket's middle, bit/s; `None` before any stream.
    pub fn estimate(&self) -> Option<Estimate> {
        (!self.streams.is_empty()).then(|| Estimate {
            value: (self.low + self.high) / 2.0,
            low: self.low,
            high: self.high,
            unit: "bit/s",
            interval: format!(
                "the bracket between streams that fitted and streams that queued, after {}",
                self.streams.len()
            ),
            method: "SLoPS: one-way delay trend of periodic streams (Jain and Dovrolis 2002)",
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

    /// Runs a search on `path` with streams of 100 packets; returns its estimate.
    fn search(path: &mut Path, capacity: f64) -> (Estimate, usize) {
        let mut s = Search::new(capacity, 0.03 * capacity, 12);
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
        assert!(n <= 6, "{n} streams");
    }

    #[test]
    fn a_quiet_path_has_its_capacity_free() {
        let mut path = Path::new(100e6, 0.02, 1e6);
        let (e, _) = search(&mut path, 100e6);
        assert!(e.value > 0.95 * 100e6, "{e:?}");
    }
}
