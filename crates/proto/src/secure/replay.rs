//! The anti-replay window: which seal numbers have already been accepted.
//!
//! Every sealed datagram carries a seal number, counted up by its sender, and an attacker on the
//! path can record a datagram and send it again: it still authenticates. The receiver therefore
//! remembers which recent numbers it has accepted and refuses each a second time. Datagrams
//! arrive out of order, so "larger than the newest" is not enough; the window keeps one bit per
//! number for the newest [`REPLAY_WINDOW`] numbers (as IPsec, RFC 6479, and WireGuard do), and
//! everything older than the window is refused as too old: the sender has long since declared
//! such a packet lost and resent its data in a new one.
//!
//! The bitmap is a ring of 64-bit words. Advancing the newest number clears the words it moves
//! past (at most the whole ring), so the cost per datagram is constant and nothing is
//! allocated: the window is a fixed 1 KiB array.
//!
//! Two calls, in this order: [`ReplayWindow::check`] before decrypting (cheap rejection of
//! duplicates and stale numbers, which costs an attacker's replay nothing but a lookup), and
//! [`ReplayWindow::mark`] only after the datagram authenticated — a forged datagram must not move
//! the window, or it could push genuine datagrams out of it.

/// Words in the ring.
const WORDS: usize = 128;
/// Seal numbers the window spans: numbers within this distance of the newest accepted are
/// remembered one by one (the bit ring's width; the oldest word is partly reused, so a number
/// is remembered for at least `REPLAY_WINDOW - 63` positions behind the newest, and refused as
/// too old once its word has left the ring).
pub const REPLAY_WINDOW: u64 = (WORDS * 64) as u64;

/// Why a seal number was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replay {
    /// This number was accepted before.
    Duplicate,
    /// The number lies behind the window (`oldest` is the oldest still remembered).
    TooOld {
        /// The oldest seal number the window still accepts.
        oldest: u64,
    },
}

/// Which recent seal numbers were accepted. See the module documentation.
#[derive(Clone)]
pub struct ReplayWindow {
    bits: [u64; WORDS],
    /// The largest number accepted so far.
    newest: Option<u64>,
}

impl std::fmt::Debug for ReplayWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayWindow")
            .field("newest", &self.newest)
            .finish_non_exhaustive()
    }
}

impl Default for ReplayWindow {
    fn default() -> Self {
        Self::new()
    }
}

impl ReplayWindow {
    /// A window that has accepted nothing.
    pub fn new() -> ReplayWindow {
        ReplayWindow {
            bits: [0; WORDS],
            newest: None,
        }
    }

    /// The largest number accepted so far.
    pub fn newest(&self) -> Option<u64> {
        self.newest
    }

    /// The oldest number the window still remembers (numbers below it are refused as too
    /// old); 0 before anything was accepted.
    pub fn oldest(&self) -> u64 {
        match self.newest {
            None => 0,
            Some(n) => ((n >> 6).saturating_sub(WORDS as u64 - 1)) << 6,
        }
    }

    /// Whether `n` may be accepted: `Ok` if it is new. Changes nothing.
    pub fn check(&self, n: u64) -> Result<(), Replay> {
        let Some(newest) = self.newest else {
            return Ok(());
        };
        if n > newest {
            return Ok(());
        }
        if (newest >> 6) - (n >> 6) >= WORDS as u64 {
            return Err(Replay::TooOld {
                oldest: self.oldest(),
            });
        }
        let (word, bit) = Self::slot(n);
        if self.bits[word] & bit != 0 {
            return Err(Replay::Duplicate);
        }
        Ok(())
    }

    /// Record `n` as accepted (after it authenticated). `n` must have passed [`check`]; a number
    /// behind the window is ignored.
    ///
    /// [`check`]: ReplayWindow::check
    pub fn mark(&mut self, n: u64) {
        match self.newest {
            Some(newest) if n <= newest => {
                if (newest >> 6) - (n >> 6) >= WORDS as u64 {
                    return;
                }
            }
            _ => {
                // Clear the words between the old newest word (exclusive) and n's (inclusive).
                let from = self.newest.map_or(0, |x| (x >> 6) + 1);
                let to = n >> 6;
                if self.newest.is_none() || to - from + 1 >= WORDS as u64 {
                    self.bits = [0; WORDS];
                } else {
                    for w in from..=to {
                        self.bits[(w % WORDS as u64) as usize] = 0;
                    }
                }
                self.newest = Some(n);
            }
        }
        let (word, bit) = Self::slot(n);
        self.bits[word] |= bit;
    }

    #[inline]
    fn slot(n: u64) -> (usize, u64) {
        (((n >> 6) % WORDS as u64) as usize, 1u64 << (n & 63))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn accepts_each_number_once_in_any_order_within_the_window() {
        let mut w = ReplayWindow::new();
        for n in [5u64, 3, 9, 4, 0, 100, 64, 63, 65] {
            assert_eq!(w.check(n), Ok(()), "{n}");
            w.mark(n);
            assert_eq!(w.check(n), Err(Replay::Duplicate), "{n}");
        }
        assert_eq!(w.check(6), Ok(()));
        assert_eq!(w.newest(), Some(100));
    }

    #[test]
    fn numbers_behind_the_window_are_too_old() {
        let mut w = ReplayWindow::new();
        w.mark(0);
        w.mark(REPLAY_WINDOW + 10);
        assert!(matches!(w.check(0), Err(Replay::TooOld { .. })));
        assert!(matches!(w.check(63), Err(Replay::TooOld { .. })));
        // Everything in the ring's other words is still remembered one by one.
        assert_eq!(w.check(w.oldest()), Ok(()));
        assert_eq!(w.check(REPLAY_WINDOW + 9), Ok(()));
        assert_eq!(w.oldest(), 64);
        // A jump far ahead forgets everything behind it.
        w.mark(u64::MAX - 1);
        assert!(matches!(
            w.check(REPLAY_WINDOW + 10),
            Err(Replay::TooOld { .. })
        ));
        assert_eq!(w.check(u64::MAX), Ok(()));
        assert_eq!(w.check(u64::MAX - 2), Ok(()));
        assert_eq!(w.check(u64::MAX - 1), Err(Replay::Duplicate));
    }

    /// Against a set of every number ever accepted: the window never accepts a number twice,
    /// and never refuses a fresh number within `REPLAY_WINDOW - 63` of the newest.
    #[test]
    fn agrees_with_a_set_of_everything_accepted() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(9);
        let mut w = ReplayWindow::new();
        let mut seen = HashSet::new();
        let mut top = 0u64;
        for _ in 0..200_000 {
            // Mostly near the top, sometimes far behind or far ahead.
            let n = match rng.gen_range(0..10) {
                0 => top.saturating_sub(rng.gen_range(0..3 * REPLAY_WINDOW)),
                1 => top + rng.gen_range(0..3 * REPLAY_WINDOW),
                _ => (top + rng.gen_range(0..200)).saturating_sub(150),
            };
            let fresh = !seen.contains(&n);
            match w.check(n) {
                Ok(()) => {
                    assert!(fresh, "{n} accepted twice");
                    w.mark(n);
                    seen.insert(n);
                    top = top.max(n);
                }
                Err(Replay::Duplicate) => assert!(!fresh, "fresh {n} called a duplicate"),
                Err(Replay::TooOld { .. }) => {
                    assert!(top - n > REPLAY_WINDOW - 64, "{n} refused, newest {top}")
                }
            }
        }
    }
}
