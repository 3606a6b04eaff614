//! The effective queue and the maximum burst size (MBS), from bursts of growing size.
//!
//! A burst of `n` packets sent at a rate `R` above the bottleneck's capacity `C` builds a queue
//! there: its last packet waits about `n·s·(1 − C/R) / C`, and the burst's one-way delays rise
//! from the first packet to the last by that much. The rise grows with `n` until the queue holds
//! its buffer `B`; from then on the delay stays at `B/C` and the queue drops what does not fit.
//! So:
//!
//! - the *effective queue* is the largest queueing delay seen (the rise within a burst, first
//!   packet to slowest, so the clocks' offset cancels) times the capacity, plus the packet
//!   that waited (it waits behind the rest of a full queue): `B ≈ q_max · C + s`;
//! - the *maximum burst size* is the largest burst that arrived whole, at the rate it was
//!   sent: `MBS ≈ B / (1 − C/R)` — the quantity seed 002 (LBNL's packet-drop-avoidance
//!   paper) paces by: "Any burst sent into the network that exceeds the MBS will potentially
//!   cause a router on the path to drop packets."
//!
//! [`BurstSearch`] grows the burst by a factor (1.5 by default) from a small size, each burst
//! after the queue has drained, and stops at the first burst that loses packets to the queue
//! ([`overflowed`]: the one-way delay stopped rising at the first loss, where a full drop-tail
//! queue holds it; an isolated random loss, after which the delay goes on rising, does not end
//! the search), or when the
//! queueing delay stops growing with the burst (a queue that caps delay without dropping, or
//! a sender no faster than the path; a burst a busy sender spread out, sent at less than 0.9
//! of the fastest before it, does not count), or at a size limit. The last burst overshoots the MBS by
//! at most the growth factor, so it drops at most about `(growth − 1) · MBS` packets.

use crate::estimate::Estimate;
use crate::train::Train;
use serde::Serialize;

/// One burst: its size, what it lost and the queueing delay it built.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Burst {
    /// Packets sent.
    pub packets: usize,
    /// Bytes sent (on the wire).
    pub bytes: u64,
    /// Packets lost.
    pub lost: usize,
    /// The rise of the one-way delay within the burst, seconds.
    pub queueing: f64,
    /// The rate it was sent at, bit/s.
    pub rate: f64,
    /// Its losses were the queue's ([`overflowed`]), not random.
    pub overflowed: bool,
}

/// Whether the losses of `burst` are a full queue's. A drop-tail queue that fills holds the
/// one-way delay at its most from then on: the packets that still get in, after the first loss,
/// wait no longer than the last one before it. Past a random loss the delay goes on rising as
/// before it. So the losses are the queue's when the delay rose after the first loss by less
/// than half of what the rise before it, continued, would give; or, with no packet arriving
/// after the first loss, when at least two packets were lost (two random losses in a row, at
/// the very end, are unlikely). A burst whose delay did not rise before its first loss built no
/// queue: its losses are random; so are losses before the second arrival.
pub fn overflowed(burst: &Train) -> bool {
    // The first loss after two arrivals (a queue that drops a burst's first packets is not
    // being filled by it).
    let mut arrived = 0;
    let Some(first_loss) = burst.packets.iter().position(|p| {
        arrived += usize::from(p.received.is_some());
        p.received.is_none() && arrived >= 2
    }) else {
        return false;
    };
    let delay = |i: usize| {
        let p = &burst.packets[i];
        p.received.map(|r| (i as f64, r - p.sent))
    };
    let before: Vec<(f64, f64)> = (0..first_loss).filter_map(delay).collect();
    let after: Vec<(f64, f64)> = (first_loss + 1..burst.packets.len())
        .filter_map(delay)
        .collect();
    if after.is_empty() {
        return burst.lost() >= 2;
    }
    let (Some(&(i0, d0)), Some(&(i1, d1))) = (before.first(), before.last()) else {
        return false;
    };
    let slope = if i1 > i0 { (d1 - d0) / (i1 - i0) } else { 0.0 };
    if slope <= 0.0 {
        return false;
    }
    let (last, _) = after[after.len() - 1];
    let rise = after.iter().map(|a| a.1).fold(f64::NEG_INFINITY, f64::max) - d1;
    rise < 0.5 * slope * (last - i1)
}

/// Why a [`BurstSearch`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Stop {
    /// A burst lost packets: the queue overflowed.
    Loss,
    /// The queueing delay stopped growing with the burst.
    Saturated,
    /// The size limit was reached without either.
    Limit,
}

/// A burst sent at less than this share of the fastest before it left a busy sender spread out:
/// that its queueing delay did not grow says nothing of the queue.
const SLOWED: f64 = 0.9;

/// Whether the search ends after the last of `bursts`: at a loss to the queue; when the queueing delay did
/// not grow by 5 % over the largest before it, the burst sent at least [`SLOWED`] of the
/// fastest earlier burst's rate (a slower one, a busy sender's, is no evidence, and the search
/// goes on); at `max_packets`.
fn stop_after(bursts: &[Burst], max_packets: usize) -> Option<Stop> {
    let (b, earlier) = bursts.split_last()?;
    let before = earlier.iter().map(|b| b.queueing).fold(0.0, f64::max);
    let fastest = earlier.iter().map(|b| b.rate).fold(0.0, f64::max);
    if b.lost > 0 && b.overflowed {
        Some(Stop::Loss)
    } else if bursts.len() >= 3 && b.queueing < 1.05 * before && b.rate >= SLOWED * fastest {
        Some(Stop::Saturated)
    } else if b.packets >= max_packets {
        Some(Stop::Limit)
    } else {
        None
    }
}

/// The search for the burst that fills the bottleneck's queue.
#[derive(Clone, Debug)]
pub struct BurstSearch {
    next: usize,
    growth: f64,
    max_packets: usize,
    bursts: Vec<Burst>,
    stop: Option<Stop>,
}

impl BurstSearch {
    /// Bursts from `first` packets, growing by `growth` (> 1), up to `max_packets`.
    pub fn new(first: usize, growth: f64, max_packets: usize) -> BurstSearch {
        BurstSearch {
            next: first.max(2),
            growth: growth.max(1.1),
            max_packets,
            bursts: Vec::new(),
            stop: None,
        }
    }

    /// The size of the next burst, packets; `None` when the search is over.
    pub fn next_size(&self) -> Option<usize> {
        if self.stop.is_some() {
            return None;
        }
        Some(self.next.min(self.max_packets))
    }

    /// Why the search stopped, if it has.
    pub fn stopped(&self) -> Option<Stop> {
        self.stop
    }

    /// The bursts sent so far.
    pub fn bursts(&self) -> &[Burst] {
        &self.bursts
    }

    /// Takes the burst sent at the last size asked.
    pub fn record(&mut self, burst: &Train) {
        let d = burst.delays();
        let (lo, hi) = d
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        let b = Burst {
            packets: burst.packets.len(),
            bytes: burst.packets.iter().map(|p| u64::from(p.bytes)).sum(),
            lost: burst.lost(),
            queueing: if d.len() >= 2 { hi - lo } else { 0.0 },
            rate: burst.send_rate().unwrap_or(0.0),
            overflowed: overflowed(burst),
        };
        self.bursts.push(b);
        self.stop = stop_after(&self.bursts, self.max_packets);
        self.next = ((b.packets as f64 * self.growth).ceil() as usize).max(b.packets + 1);
    }

    /// The effective queue, bytes: the largest queueing delay times `capacity` (an estimate
    /// in bit/s, whose interval carries into this one), plus one `packet`, ± one packet; a
    /// lower bound with no upper end when the search stopped at its size limit.
    pub fn queue(&self, capacity: &Estimate, packet: u32) -> Option<Estimate> {
        let q = self
            .bursts
            .iter()
            .map(|b| b.queueing)
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))?;
        let packet = f64::from(packet);
        // The packet that finds the queue full waits behind all of it but its own bytes.
        let value = q * capacity.value / 8.0 + packet;
        let full = self.stop != Some(Stop::Limit);
        Some(Estimate {
            value,
            low: q * capacity.low / 8.0,
            high: if full {
                q * capacity.high / 8.0 + 2.0 * packet
            } else {
                f64::INFINITY
            },
            unit: "bytes",
            interval: if full {
                "the capacity's interval times the queueing delay, ± one packet".into()
            } else {
                "a lower bound: no burst filled the queue".into()
            },
            method: "largest queueing delay of growing bursts times the capacity",
            samples: self.bursts.len(),
        })
    }

    /// The maximum burst size, bytes: the largest burst that arrived whole, bracketed by the
    /// smallest that did not (no upper end if none lost).
    pub fn mbs(&self) -> Option<Estimate> {
        let whole = self
            .bursts
            .iter()
            .filter(|b| b.lost == 0)
            .map(|b| b.bytes)
            .max()?;
        let broken = self
            .bursts
            .iter()
            .filter(|b| b.lost > 0)
            .map(|b| b.bytes)
            .min();
        let rate = self.bursts.iter().map(|b| b.rate).fold(0.0, f64::max);
        Some(Estimate {
            value: whole as f64,
            low: whole as f64,
            high: broken.map_or(f64::INFINITY, |b| b as f64),
            unit: "bytes",
            interval: format!(
                "between the largest burst that arrived whole and the smallest that lost packets, sent at up to {:.0} Mb/s",
                rate / 1e6
            ),
            method: "bursts of growing size until loss (seed 002's maximum burst size)",
            samples: self.bursts.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Path;

    /// Runs a search on `path` with bursts sent at `rate`, 1 s apart.
    fn search(path: &mut Path, rate: f64, max: usize) -> BurstSearch {
        let mut s = BurstSearch::new(8, 1.5, max);
        let mut t = 0.0;
        while let Some(n) = s.next_size() {
            s.record(&path.train(t, n, 1200, rate));
            t += 1.0;
        }
        s
    }

    fn capacity(c: f64) -> Estimate {
        Estimate {
            value: c,
            low: c,
            high: c,
            unit: "bit/s",
            interval: String::new(),
            method: "given",
            samples: 1,
        }
    }

    #[test]
    fn the_queue_is_found_whatever_rate_the_bursts_are_sent_at() {
        // 50 Mb/s, 40 ms RTT, a buffer of half the BDP: 125 000 bytes.
        for rate in [1e9, 100e6] {
            let mut path = Path::new(50e6, 0.02, 125_000.0);
            let s = search(&mut path, rate, 5000);
            assert_eq!(s.stopped(), Some(Stop::Loss));
            let q = s.queue(&capacity(50e6), 1200).unwrap();
            assert!((q.value / 125_000.0 - 1.0).abs() < 0.02, "{rate}: {q:?}");
            assert!(q.low <= 125_000.0 && 125_000.0 <= q.high, "{q:?}");
            // The MBS depends on the rate: B / (1 − C/R).
            let mbs = s.mbs().unwrap();
            let expected = 125_000.0 / (1.0 - 50e6 / rate);
            assert!(
                mbs.low <= expected && expected <= mbs.high,
                "{rate}: {mbs:?}"
            );
            assert!(mbs.high <= 1.5 * mbs.low + 1200.0, "{mbs:?}");
        }
    }

    #[test]
    fn a_burst_a_busy_sender_spread_out_does_not_end_the_search() {
        let burst = |packets, queueing, rate| Burst {
            packets,
            bytes: packets as u64 * 1500,
            lost: 0,
            queueing,
            rate,
            overflowed: false,
        };
        let grown = [burst(10, 0.001, 3e9), burst(15, 0.0015, 3e9)];
        // The third burst's delay did not grow: at full speed the queue caps it ...
        let mut b = grown.to_vec();
        b.push(burst(23, 0.0015, 2.9e9));
        assert_eq!(stop_after(&b, 1000), Some(Stop::Saturated));
        // ... but sent at half the speed (a preempted sender), it proves nothing: go on.
        b[2].rate = 1.5e9;
        assert_eq!(stop_after(&b, 1000), None);
        // Loss to the queue and the size limit end it whatever the rate; a random loss does not.
        b[2].lost = 1;
        assert_eq!(stop_after(&b, 1000), None);
        b[2].overflowed = true;
        assert_eq!(stop_after(&b, 1000), Some(Stop::Loss));
        b[2].lost = 0;
        assert_eq!(stop_after(&b, 23), Some(Stop::Limit));
    }

    #[test]
    fn random_losses_do_not_end_the_search_before_the_queue_fills() {
        // 2 % random loss: nearly every burst of 50 packets or more loses one at random. The
        // search still goes on to the burst that overflows the 125 kB buffer.
        let mut went_past_random_losses = 0;
        for seed in 0..20 {
            let mut path = Path::new(50e6, 0.02, 125_000.0);
            path.loss = 0.02;
            path.reseed(seed);
            let s = search(&mut path, 1e9, 5000);
            // At the loss, or at the delay the full queue caps (a burst whose drops mingle
            // with a random loss).
            let stop = s.stopped();
            assert!(
                matches!(stop, Some(Stop::Loss | Stop::Saturated)),
                "seed {seed}: {stop:?}"
            );
            let q = s.queue(&capacity(50e6), 1200).unwrap();
            assert!(
                (q.value / 125_000.0 - 1.0).abs() < 0.05,
                "seed {seed}: {q:?} after {:?}",
                s.bursts()
            );
            if s.bursts().iter().any(|b| b.lost > 0 && !b.overflowed) {
                went_past_random_losses += 1;
            }
        }
        // The test means something: most searches met a random loss on their way.
        assert!(
            went_past_random_losses >= 10,
            "{went_past_random_losses} of 20"
        );
    }

    #[test]
    fn losses_are_the_queues_when_the_delay_stops_rising() {
        let p = |i: usize, delay: Option<f64>| crate::train::Packet {
            bytes: 1500,
            sent: i as f64 * 1e-5,
            received: delay.map(|d| i as f64 * 1e-5 + d),
        };
        // Rising by 0.1 ms a packet, then one lost and the rise goes on: random.
        let rising = |i: usize| Some(1e-4 * i as f64);
        let random: Vec<_> = (0..20)
            .map(|i| p(i, rising(i).filter(|_| i != 10)))
            .collect();
        assert!(!overflowed(&Train::new(random)));
        // Rising to 1 ms, then three of every four lost, the rest held at 1 ms: the queue's.
        let full: Vec<_> = (0..40)
            .map(|i| match i {
                0..=10 => p(i, rising(i)),
                _ if i % 4 == 0 => p(i, Some(1e-3)),
                _ => p(i, None),
            })
            .collect();
        assert!(overflowed(&Train::new(full)));
        // Only the last packets lost: two or more are the queue's, one is not known to be.
        let tail = |lost: usize| -> Vec<_> {
            (0..20)
                .map(|i| p(i, rising(i).filter(|_| i < 20 - lost)))
                .collect()
        };
        assert!(overflowed(&Train::new(tail(3))));
        assert!(!overflowed(&Train::new(tail(1))));
        // No loss, nothing to judge.
        assert!(!overflowed(&Train::new(
            (0..5).map(|i| p(i, rising(i))).collect()
        )));
    }

    #[test]
    fn a_search_that_never_fills_the_queue_gives_a_lower_bound() {
        let mut path = Path::new(50e6, 0.02, 10e6);
        let s = search(&mut path, 1e9, 200);
        assert_eq!(s.stopped(), Some(Stop::Limit));
        let q = s.queue(&capacity(50e6), 1200).unwrap();
        assert!(q.high.is_infinite());
        // 200 packets at 1 Gb/s into 50 Mb/s leave 199 · 1200 · 0.95 bytes queued ahead of the
        // last.
        assert!(
            (q.value / (199.0 * 1200.0 * 0.95 + 1200.0) - 1.0).abs() < 0.02,
            "{q:?}"
        );
        assert!(s.mbs().unwrap().high.is_infinite());
    }
}
