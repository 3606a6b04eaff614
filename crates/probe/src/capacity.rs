//! The bottleneck's capacity from the dispersion of back-to-back packets.
//!
//! Two packets of `s` bytes that leave the sender back to back leave the narrowest link `s/C`
//! apart, and nothing after it (a faster link) brings them closer (Keshav 1991). The receiver's
//! spacing gives `C = 8·s / gap`. Two things spoil single samples: cross traffic that enters the
//! queue between the two widens the gap (an underestimate), and a receiver or an interface that
//! takes packets in batches narrows some gaps to nothing and widens the next (both ways).
//!
//! - [`by_trains`]: a train of `n` packets gives one sample, `8·(bytes after the first) /
//!   (last arrival − first arrival)`; batching only moves the ends, so long trains are immune
//!   to it. With cross traffic the train measures the *asymptotic dispersion rate*, below the
//!   capacity (Dovrolis, Ramanathan and Moore, "Packet-dispersion techniques and a
//!   capacity-estimation methodology", IEEE/ACM ToN 2004). The value is the median over trains,
//!   with the interquartile range.
//! - [`by_pairs`]: every two consecutive arrivals of a train give a pair sample; the capacity is
//!   the *mode* of the samples (the densest bin 5 % wide), which cross traffic that delays only
//!   some pairs cannot move (Dovrolis et al., §IV).
//!
//! A train counts only if the bottleneck spread it: it arrived at least 20 % slower than it was
//! sent. A train the sender could not send faster than the path measures the sender.

use crate::estimate::{median_iqr, quantile, sorted, Estimate};
use crate::train::Train;

/// How much slower than it was sent a train must arrive to count.
pub const SPREAD: f64 = 1.2;

/// Whether the bottleneck spread `train` (its arrival rate is at least [`SPREAD`] times below
/// its send rate).
fn spread(train: &Train) -> Option<f64> {
    let (sent, received) = (train.send_rate()?, train.receive_rate()?);
    (sent >= SPREAD * received).then_some(received)
}

/// The median over `trains` of their arrival rates, bit/s; `None` when no train was spread by
/// the path.
pub fn by_trains(trains: &[Train]) -> Option<Estimate> {
    median_iqr(
        trains.iter().filter_map(spread),
        "bit/s",
        "trains",
        "train dispersion, median over trains (Dovrolis et al. 2004)",
    )
}

/// The mode of the pair samples of the trains the path spread, bit/s; `None` for none.
pub fn by_pairs(trains: &[Train]) -> Option<Estimate> {
    let mut rates = Vec::new();
    for t in trains.iter().filter(|t| spread(t).is_some()) {
        rates.extend(
            t.arrivals()
                .windows(2)
                .filter(|w| w[1].0 > w[0].0)
                .map(|w| f64::from(w[1].1) * 8.0 / (w[1].0 - w[0].0)),
        );
    }
    let s = sorted(rates);
    // The densest window [x, 1.05·x] over the samples, found with two pointers.
    let (mut best, mut j) = ((0, 0), 0);
    for i in 0..s.len() {
        while j < s.len() && s[j] <= s[i] * 1.05 {
            j += 1;
        }
        if j - i > best.1 - best.0 {
            best = (i, j);
        }
    }
    let bin = &s[best.0..best.1];
    Some(Estimate {
        value: quantile(bin, 0.5)?,
        low: bin[0],
        high: bin[bin.len() - 1],
        unit: "bit/s",
        interval: format!(
            "the modal bin: {} of {} pair samples within 5 %",
            bin.len(),
            s.len()
        ),
        method: "packet-pair dispersion, mode of pair samples (Keshav 1991; Dovrolis et al. 2004)",
        samples: s.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cross, Path};

    fn trains(path: &mut Path, n: usize, rate: f64) -> Vec<Train> {
        (0..30)
            .map(|i| path.train(i as f64 * 0.2, n, 1200, rate))
            .collect()
    }

    #[test]
    fn trains_find_the_capacity_of_a_quiet_path() {
        let mut path = Path::new(50e6, 0.02, 250_000.0);
        let e = by_trains(&trains(&mut path, 50, 1e9)).unwrap();
        assert!((e.value / 50e6 - 1.0).abs() < 0.01, "{e:?}");
        assert_eq!(e.samples, 30);
        let p = by_pairs(&trains(&mut path, 50, 1e9)).unwrap();
        assert!((p.value / 50e6 - 1.0).abs() < 0.01, "{p:?}");
    }

    #[test]
    fn trains_sent_slower_than_the_path_say_nothing() {
        let mut path = Path::new(50e6, 0.02, 250_000.0);
        assert_eq!(by_trains(&trains(&mut path, 50, 40e6)), None);
        assert_eq!(by_pairs(&trains(&mut path, 50, 40e6)), None);
    }

    #[test]
    fn the_pair_mode_sees_through_cross_traffic_where_trains_do_not() {
        // 15 Mb/s of Poisson cross traffic in 1500-byte packets through a 50 Mb/s link.
        let mut path = Path::new(50e6, 0.02, 250_000.0);
        path.cross = Cross::Poisson {
            rate: 15e6,
            bytes: 1500,
        };
        // Sent at twice the capacity, so that cross traffic arriving meanwhile joins the queue
        // between the train's packets.
        let t = trains(&mut path, 50, 100e6);
        let pairs = by_pairs(&t).unwrap();
        assert!((pairs.value / 50e6 - 1.0).abs() < 0.03, "{pairs:?}");
        let whole = by_trains(&t).unwrap();
        assert!(whole.value < 0.9 * 50e6, "{whole:?}");
    }
}
