//! The path MTU, by datagram packetization-layer path MTU discovery (DPLPMTUD, RFC 8899).
//!
//! A router whose next hop has a smaller MTU than a packet drops it when its don't-fragment
//! bit is set, and should say so with an ICMP "fragmentation needed" (IPv6 "packet too big")
//! message. Many paths lose or filter that message: the packet then disappears without a word
//! (a PMTU "black hole", RFC 2923 §2.1). RFC 8899 finds the path MTU without relying on ICMP:
//! the sender sends *probe packets* of chosen sizes with the don't-fragment bit set, and a size
//! counts as passing only when the far end acknowledges a probe of it (§4.1, §5). Here a probe
//! is a probe ping padded to the size tried ([`crate::wire`]), sent with the kernel's
//! path-MTU probing mode (`IP_PMTUDISC_PROBE`), and the far end's pong is its acknowledgment.
//!
//! [`MtuSearch`] is the search, sans IO:
//!
//! - it starts from RFC 8899's `BASE_PLPMTU` ([`BASE`], 1200 bytes, §5.1.2), which nearly every
//!   path carries, and tries the largest size (the interface's MTU) in the same round: a path
//!   without a narrower hop is done in one round;
//! - each round then tries several sizes spread over the sizes still in doubt, a k-ary search:
//!   from 1200 to 1500 bytes the path MTU is found to the byte in four rounds;
//! - every size is sent several times ([`copies`]) and only a size none of whose probes
//!   arrived counts as too big (§4.1's "probe loss is not a reliable signal"), so that a random
//!   loss is not read as a too-big size; a larger size arriving overrides a smaller one's
//!   losses (those were random);
//! - a size the local interface refuses (`EMSGSIZE` at the send) is too big, and an ICMP
//!   message that reports the path MTU ([`MtuSearch::too_big_reported`], §4.6) lowers the sizes
//!   in doubt to it; the search still confirms the reported size with its own probes.
//!
//! The result is the largest size that arrived and the smallest that never did: the path MTU
//! lies between the first and one byte less than the second.

use crate::estimate::Estimate;
use std::collections::BTreeMap;

/// RFC 8899's `BASE_PLPMTU`: the size every path is expected to carry (§5.1.2: 1200 bytes,
/// which the IPv6 minimum MTU of 1280 leaves room for).
pub const BASE: u32 = 1200;

/// Sizes tried per round after the first.
pub const PER_ROUND: usize = 7;

/// How many probes of each size make a lost size believable as too big: enough that all of
/// them being lost at random is less likely than 1 in 10,000, at a random loss rate of
/// `loss` (the upper end of its interval), from 2 to 8.
pub fn copies(loss: f64) -> usize {
    if loss.is_nan() || loss <= 0.0 {
        return 2;
    }
    if loss >= 1.0 {
        return 8;
    }
    ((1e-4f64).ln() / loss.ln()).ceil().clamp(2.0, 8.0) as usize
}

/// What became of one size's probes in a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeFate {
    /// At least one probe of it arrived.
    Arrived,
    /// Every probe of it was lost.
    Lost,
    /// The local interface refused it (`EMSGSIZE`).
    Refused,
}

/// The search for the path MTU (bytes of IP packet).
#[derive(Clone, Debug)]
pub struct MtuSearch {
    base: u32,
    max: u32,
    copies: usize,
    max_rounds: usize,
    rounds: usize,
    /// What each size tried gave: arrived beats lost.
    tried: BTreeMap<u32, SizeFate>,
    /// The path MTU an ICMP message reported, if any.
    reported: Option<u32>,
}

impl MtuSearch {
    /// A search from `base` (at most `max`) to `max`, the interface's MTU, sending `copies`
    /// probes of each size, for at most `max_rounds` rounds.
    pub fn new(base: u32, max: u32, copies: usize, max_rounds: usize) -> MtuSearch {
        MtuSearch {
            base: base.min(max),
            max,
            copies: copies.max(1),
            max_rounds,
            rounds: 0,
            tried: BTreeMap::new(),
            reported: None,
        }
    }

    /// Probes of each size per round.
    pub fn copies(&self) -> usize {
        self.copies
    }

    /// The largest size that arrived (0: none yet).
    pub fn low(&self) -> u32 {
        self.tried
            .iter()
            .rev()
            .find(|(_, o)| **o == SizeFate::Arrived)
            .map_or(0, |(s, _)| *s)
    }

    /// The smallest size above [`Self::low`] known to be too big (`max + 1`: none).
    pub fn high(&self) -> u32 {
        let low = self.low();
        let tried = self
            .tried
            .range(low + 1..)
            .find(|(_, o)| **o != SizeFate::Arrived)
            .map(|(s, _)| *s);
        let reported = self.reported.filter(|r| *r >= low).map(|r| r + 1);
        [tried, reported, Some(self.max + 1)]
            .into_iter()
            .flatten()
            .min()
            .expect("max + 1 is there")
    }

    /// Whether the base size failed: nothing can be measured in packets of it.
    pub fn base_failed(&self) -> bool {
        self.low() == 0 && self.tried.contains_key(&self.base)
    }

    /// Whether the search is over: the path MTU is known to the byte, the base failed, or the
    /// rounds are spent.
    pub fn done(&self) -> bool {
        self.base_failed()
            || (self.low() > 0 && self.high() - self.low() <= 1)
            || self.rounds >= self.max_rounds
    }

    /// The sizes to try in the next round, each [`Self::copies`] times; `None` when the search
    /// is over. The first round tries the base and the largest size; the later ones
    /// [`PER_ROUND`] sizes spread evenly between what arrived and what did not.
    pub fn next_round(&self) -> Option<Vec<u32>> {
        if self.done() {
            return None;
        }
        if self.low() == 0 {
            return Some(if self.base < self.max {
                vec![self.base, self.max]
            } else {
                vec![self.base]
            });
        }
        let (low, high) = (self.low(), self.high());
        let span = u64::from(high - low);
        let k = PER_ROUND as u64;
        let mut sizes: Vec<u32> = (1..=k)
            .map(|i| low + (span * i / (k + 1)) as u32)
            .filter(|s| *s > low && *s < high)
            .collect();
        // The size an ICMP message reported is tried as such: it is likely the answer.
        if let Some(r) = self.reported.filter(|r| *r > low && *r < high) {
            sizes.push(r);
        }
        sizes.sort_unstable();
        sizes.dedup();
        Some(sizes)
    }

    /// Takes a round's outcomes: each size tried and what became of its probes.
    pub fn record(&mut self, round: &[(u32, SizeFate)]) {
        self.rounds += 1;
        for &(size, o) in round {
            let e = self.tried.entry(size).or_insert(o);
            if o == SizeFate::Arrived {
                *e = o;
            }
        }
    }

    /// An ICMP message said the path MTU is `mtu`: sizes above it are taken as too big (a
    /// report below the base, or below a size that arrived, is not believed: RFC 8899 §4.6.2).
    pub fn too_big_reported(&mut self, mtu: u32) {
        if mtu >= self.base && mtu >= self.low() && mtu < self.max {
            self.reported = Some(self.reported.map_or(mtu, |r| r.min(mtu)));
        }
    }

    /// The path MTU found: the largest size that arrived, with the interval up to one byte
    /// below the smallest that did not; `None` if no size arrived.
    pub fn estimate(&self) -> Option<Estimate> {
        let low = self.low();
        if low == 0 {
            return None;
        }
        let high = self.high() - 1;
        let interval = if high >= self.max {
            format!("the largest size tried ({}) arrived", self.max)
        } else if self.reported.is_some_and(|r| r + 1 == self.high()) {
            format!(
                "between the largest probe that arrived and the MTU an ICMP message reported \
                 ({high})"
            )
        } else {
            format!(
                "between the largest probe that arrived and one byte below the smallest of \
                 which none of {} arrived",
                self.copies
            )
        };
        Some(Estimate {
            value: f64::from(low),
            low: f64::from(low),
            high: f64::from(high),
            unit: "bytes",
            interval,
            method: "datagram PLPMTUD (RFC 8899): don't-fragment probes of growing size, a \
                     k-ary search from 1200 bytes",
            samples: self.tried.len() * self.copies,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// A path that carries packets up to `mtu` bytes, loses each at random with `loss`, and
    /// (when `refuse_above` is set) whose local interface refuses sizes above it.
    struct Path {
        mtu: u32,
        loss: f64,
        refuse_above: Option<u32>,
        rng: SmallRng,
        sent: usize,
    }

    impl Path {
        fn new(mtu: u32, loss: f64) -> Path {
            Path {
                mtu,
                loss,
                refuse_above: None,
                rng: SmallRng::seed_from_u64(3),
                sent: 0,
            }
        }

        /// Runs the search to its end; its estimate.
        fn search(&mut self, s: &mut MtuSearch) -> Option<Estimate> {
            while let Some(sizes) = s.next_round() {
                let round: Vec<(u32, SizeFate)> = sizes
                    .iter()
                    .map(|&size| {
                        if self.refuse_above.is_some_and(|r| size > r) {
                            return (size, SizeFate::Refused);
                        }
                        let arrived = (0..s.copies())
                            .filter(|_| {
                                self.sent += 1;
                                size <= self.mtu && self.rng.gen::<f64>() >= self.loss
                            })
                            .count();
                        let o = if arrived > 0 {
                            SizeFate::Arrived
                        } else {
                            SizeFate::Lost
                        };
                        (size, o)
                    })
                    .collect();
                s.record(&round);
            }
            s.estimate()
        }
    }

    #[test]
    fn a_black_hole_is_found_to_the_byte_at_every_boundary() {
        for mtu in [1200, 1201, 1279, 1400, 1401, 1492, 1499, 1500] {
            let mut s = MtuSearch::new(BASE, 1500, 2, 8);
            let e = Path::new(mtu, 0.0)
                .search(&mut s)
                .expect("the base arrives");
            assert_eq!(
                (e.value, e.low, e.high),
                (mtu.into(), mtu.into(), mtu.into())
            );
            assert!(s.done() && s.rounds <= 4, "{mtu}: {} rounds", s.rounds);
        }
    }

    #[test]
    fn a_path_without_a_narrower_hop_takes_one_round() {
        let mut s = MtuSearch::new(BASE, 9000, 3, 8);
        let e = Path::new(9000, 0.0).search(&mut s).unwrap();
        assert_eq!((e.value, s.rounds), (9000.0, 1));
        assert!(
            e.interval.contains("largest size tried (9000) arrived"),
            "{e:?}"
        );
    }

    #[test]
    fn random_loss_is_not_read_as_a_too_big_size() {
        // 5 % loss, the copies its rule asks for (4): over many searches on a 1400-byte path,
        // none ends below 1400, and every interval holds it.
        let n = copies(0.05);
        assert_eq!(n, 4);
        let mut path = Path::new(1400, 0.05);
        for seed in 0..200 {
            path.rng = SmallRng::seed_from_u64(seed);
            let mut s = MtuSearch::new(BASE, 1500, n, 8);
            let e = path.search(&mut s).unwrap();
            assert!(e.low <= 1400.0 && 1400.0 <= e.high, "seed {seed}: {e:?}");
            assert_eq!(e.value, 1400.0, "seed {seed}: {e:?}");
        }
        // With one probe per size the same loss misleads some searches: the copies matter.
        let wrong = (0..200)
            .filter(|&seed| {
                path.rng = SmallRng::seed_from_u64(seed);
                let mut s = MtuSearch::new(BASE, 1500, 1, 8);
                path.search(&mut s).is_none_or(|e| e.value != 1400.0)
            })
            .count();
        assert!(wrong > 10, "{wrong} of 200 wrong with one probe per size");
    }

    #[test]
    fn a_larger_size_arriving_overrides_a_smaller_ones_losses() {
        let mut s = MtuSearch::new(BASE, 1500, 2, 8);
        s.record(&[(1200, SizeFate::Arrived), (1500, SizeFate::Lost)]);
        s.record(&[(1300, SizeFate::Lost), (1450, SizeFate::Arrived)]);
        assert_eq!((s.low(), s.high()), (1450, 1500));
        // The same size lost in one round and arrived in another: it arrived.
        s.record(&[(1475, SizeFate::Arrived), (1480, SizeFate::Lost)]);
        s.record(&[(1480, SizeFate::Arrived)]);
        assert_eq!((s.low(), s.high()), (1480, 1500));
    }

    #[test]
    fn the_interface_and_icmp_bound_the_search() {
        // The local interface refuses above 1492; the path carries 1492.
        let mut path = Path::new(1500, 0.0);
        path.refuse_above = Some(1492);
        let mut s = MtuSearch::new(BASE, 1500, 2, 8);
        assert_eq!(path.search(&mut s).unwrap().value, 1492.0);

        // An ICMP message reports 1400: the next round tries it, and the search ends there.
        let mut s = MtuSearch::new(BASE, 1500, 2, 8);
        s.record(&[(1200, SizeFate::Arrived), (1500, SizeFate::Lost)]);
        s.too_big_reported(1400);
        assert!(s.next_round().unwrap().contains(&1400));
        s.record(&[(1400, SizeFate::Arrived)]);
        let e = s.estimate().unwrap();
        assert!(s.done());
        assert_eq!((e.low, e.high), (1400.0, 1400.0));
        assert!(e.interval.contains("ICMP"), "{e:?}");
        // A report below the base or below what arrived is not believed.
        s.too_big_reported(1000);
        s.too_big_reported(1300);
        assert_eq!(s.high(), 1401);
    }

    #[test]
    fn a_path_that_carries_not_even_the_base_gives_no_estimate() {
        let mut s = MtuSearch::new(BASE, 1500, 3, 8);
        assert_eq!(Path::new(1000, 0.0).search(&mut s), None);
        assert!(s.base_failed() && s.done());
        assert_eq!(s.next_round(), None);
    }

    #[test]
    fn a_search_cut_short_states_what_it_knows() {
        let mut s = MtuSearch::new(BASE, 1500, 2, 2);
        let e = Path::new(1433, 0.0).search(&mut s).unwrap();
        assert!(
            e.low <= 1433.0 && 1433.0 <= e.high && e.high > e.low,
            "{e:?}"
        );
        assert_eq!(s.rounds, 2);
    }

    #[test]
    fn copies_grow_with_the_loss_rate() {
        assert_eq!(copies(0.0), 2);
        assert_eq!(copies(f64::NAN), 2);
        assert_eq!(copies(0.001), 2);
        assert_eq!(copies(0.01), 2);
        assert_eq!(copies(0.05), 4);
        assert_eq!(copies(0.16), 6);
        assert_eq!(copies(0.5), 8);
        assert_eq!(copies(1.0), 8);
    }
}
