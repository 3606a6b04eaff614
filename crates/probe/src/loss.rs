//! Random loss with a Wilson score interval, and reordering.
//!
//! The losses counted here are those of packets that did not queue at the bottleneck (pings,
//! and streams slower than the available bandwidth): what is lost there is lost at random, not
//! to a full buffer. A proportion `k/n` is given with Wilson's score interval (Wilson, "Probable
//! inference, the law of succession, and statistical inference", JASA 22, 1927),
//!
//! ```text
//! center = (p + z²/2n) / (1 + z²/n),   half = z·√(p(1−p)/n + z²/4n²) / (1 + z²/n)
//! ```
//!
//! which, unlike the normal approximation `p ± z√(p(1−p)/n)`, never leaves [0, 1] and does not
//! collapse to a point when no loss was seen: 0 of 1000 packets still allows up to 0.38 %.
//!
//! A packet is *reordered* when it arrives strictly before a packet sent ahead of it (RFC 4737's
//! "reordered" singleton: its arrival is out of send order).

use crate::estimate::Estimate;
use crate::train::Train;

/// The z of a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Wilson's score interval `(low, high)` of `k` events in `n` trials at `z`; `(0, 1)` for no
/// trials. Its bounds at `k = 0` and `k = n` are exactly 0 and 1 (in floating point
/// `center − half` leaves a residue of about 1e-19 there).
pub fn wilson(k: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (nf, p) = (n as f64, k as f64 / n as f64);
    let z2 = z * z;
    let denom = 1.0 + z2 / nf;
    let center = (p + z2 / (2.0 * nf)) / denom;
    let half = z * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt() / denom;
    let low = if k == 0 {
        0.0
    } else {
        (center - half).max(0.0)
    };
    let high = if k >= n {
        1.0
    } else {
        (center + half).min(1.0)
    };
    (low, high)
}

/// The loss rate over `trains`, with its 95 % Wilson interval; `None` for no packets.
pub fn random_loss<'a>(trains: impl IntoIterator<Item = &'a Train>) -> Option<Estimate> {
    let (mut lost, mut sent) = (0u64, 0u64);
    for t in trains {
        lost += t.lost() as u64;
        sent += t.packets.len() as u64;
    }
    if sent == 0 {
        return None;
    }
    let (low, high) = wilson(lost, sent, Z95);
    Some(Estimate {
        value: lost as f64 / sent as f64,
        low,
        high,
        unit: "1",
        interval: format!("95 % Wilson interval, {lost} lost of {sent}"),
        method: "losses of packets that did not queue",
        samples: sent as usize,
    })
}

/// How many packets of `train` arrived strictly before a packet sent ahead of them.
pub fn reordered(train: &Train) -> usize {
    let mut latest = f64::NEG_INFINITY;
    let mut count = 0;
    for r in train.packets.iter().filter_map(|p| p.received) {
        if r < latest {
            count += 1;
        } else {
            latest = r;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Path;
    use crate::train::Packet;

    #[test]
    fn wilson_matches_published_values() {
        // Newcombe (Statistics in Medicine 17, 1998), table II: 81/263 → 0.2553–0.3662;
        // 15/148 → 0.0624–0.1605; 0/10 → 0–0.2775.
        let close =
            |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).abs() < 5e-5 && (a.1 - b.1).abs() < 5e-5;
        assert!(
            close(wilson(81, 263, Z95), (0.2553, 0.3662)),
            "{:?}",
            wilson(81, 263, Z95)
        );
        assert!(
            close(wilson(15, 148, Z95), (0.0624, 0.1605)),
            "{:?}",
            wilson(15, 148, Z95)
        );
        assert!(
            close(wilson(0, 10, Z95), (0.0, 0.2775)),
            "{:?}",
            wilson(0, 10, Z95)
        );
        // No event, or every one: the bounds are exact, whatever n.
        for n in [1, 10, 2320, 1_000_000] {
            assert_eq!(wilson(0, n, Z95).0, 0.0, "{n}");
            assert_eq!(wilson(n, n, Z95).1, 1.0, "{n}");
        }
        assert_eq!(wilson(0, 0, Z95), (0.0, 1.0));
    }

    #[test]
    fn random_loss_is_inside_its_interval() {
        let mut path = Path::new(100e6, 0.02, 1e6);
        path.loss = 0.01;
        let trains: Vec<Train> = (0..40)
            .map(|i| path.train(i as f64, 250, 1200, 20e6))
            .collect();
        let e = random_loss(&trains).unwrap();
        assert_eq!(e.samples, 10_000);
        assert!(e.low < 0.01 && 0.01 < e.high, "{e:?}");
        assert!(e.high - e.low < 0.005, "{e:?}");
        assert!((e.value - 0.01).abs() < 0.003, "{e:?}");
    }

    #[test]
    fn reordering_counts_packets_overtaken() {
        let p = |sent: f64, received: Option<f64>| Packet {
            bytes: 1000,
            sent,
            received,
        };
        let t = Train::new(vec![
            p(0.0, Some(1.0)),
            p(0.1, Some(1.3)),
            p(0.2, Some(1.2)),
            p(0.3, None),
            p(0.4, Some(1.25)),
            p(0.5, Some(1.4)),
        ]);
        assert_eq!(reordered(&t), 2);
        assert_eq!(t.lost(), 1);
    }
}
