//! A windowed running maximum or minimum in constant space.
//!
//! BBR needs "the largest delivery rate seen in the last 10 round trips" on every ACK. Keeping
//! all samples of the window would cost memory and time proportional to the window; Kathleen
//! Nichols' algorithm keeps only three: the best sample in the window, and the best samples from
//! the later quarter and later half of it, so that when the best one ages out a good successor
//! is already known. The estimate can be briefly worse than the true windowed best (a second
//! choice taken too early), never better.
//!
//! Source: Linux `lib/win_minmax.c` (Van Jacobson, Neal Cardwell), the filter `tcp_bbr.c` uses
//! for its bandwidth estimate. Time is whatever unit the caller counts in (BBR: round trips).

/// One sample: a value and when it was taken.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample<V> {
    /// When the sample was taken, in the caller's unit (BBR: round trips).
    pub t: u64,
    /// The sampled value.
    pub v: V,
}

/// The best, second-best and third-best samples of a window (Linux `struct minmax`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MinMax<V> {
    s: [Sample<V>; 3],
}

impl<V: Copy + PartialOrd> MinMax<V> {
    /// A filter holding the single sample `v` taken at `t`.
    pub fn new(t: u64, v: V) -> MinMax<V> {
        MinMax {
            s: [Sample { t, v }; 3],
        }
    }

    /// The current windowed best.
    pub fn get(&self) -> V {
        self.s[0].v
    }

    /// Forget everything and start over from one sample.
    pub fn reset(&mut self, t: u64, v: V) -> V {
        *self = MinMax::new(t, v);
        v
    }

    /// Add a sample to a running maximum over the last `win` time units; returns the maximum.
    pub fn running_max(&mut self, win: u64, t: u64, v: V) -> V {
        self.running(win, Sample { t, v }, |a, b| a >= b)
    }

    /// Add a sample to a running minimum over the last `win` time units; returns the minimum.
    pub fn running_min(&mut self, win: u64, t: u64, v: V) -> V {
        self.running(win, Sample { t, v }, |a, b| a <= b)
    }

    /// `at_least_as_good(a, b)`: is `a` as good as `b` (>= for a max, <= for a min)?
    fn running(&mut self, win: u64, val: Sample<V>, at_least_as_good: fn(V, V) -> bool) -> V {
        // A new best, or every kept sample is outside the window: start over.
        if at_least_as_good(val.v, self.s[0].v) || val.t.saturating_sub(self.s[2].t) > win {
            return self.reset(val.t, val.v);
        }
        if at_least_as_good(val.v, self.s[1].v) {
            self.s[1] = val;
            self.s[2] = val;
        } else if at_least_as_good(val.v, self.s[2].v) {
            self.s[2] = val;
        }
        self.subwindow_update(win, val)
    }

    /// Age the kept samples: promote successors when the best expires, and refresh the
    /// second and third choices when a quarter or half of the window passed without a new one.
    fn subwindow_update(&mut self, win: u64, val: Sample<V>) -> V {
        let dt = val.t.saturating_sub(self.s[0].t);
        if dt > win {
            // The best expired: the second choice becomes best, the third second. The new
            // second choice may itself be outside the window, so this may happen twice.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.saturating_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed with no second choice: take one from the second
            // quarter.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window passed with no third choice: take one from the second half.
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_holds_a_peak_for_the_window_then_falls_to_the_next_best() {
        let mut f = MinMax::new(0, 0.0);
        assert_eq!(f.running_max(10, 0, 100.0), 100.0);
        // Lower samples for rounds 1..=10 do not displace the peak taken at round 0.
        for t in 1..=10 {
            assert_eq!(f.running_max(10, t, 50.0 + t as f64), 100.0, "round {t}");
        }
        // Round 11: the peak is 11 rounds old (> 10) and expires; the best kept successor
        // is a sample from the later part of the window, never the expired 100.
        let v = f.running_max(10, 11, 40.0);
        assert!((53.0..100.0).contains(&v), "successor {v}");
    }

    #[test]
    fn a_new_best_replaces_everything() {
        let mut f = MinMax::new(0, 5.0);
        f.running_max(10, 1, 3.0);
        assert_eq!(f.running_max(10, 2, 7.0), 7.0);
        assert_eq!(f.s, [Sample { t: 2, v: 7.0 }; 3]);
    }

    #[test]
    fn min_tracks_the_smallest_value_in_the_window() {
        let mut f = MinMax::new(0, 30);
        assert_eq!(f.running_min(100, 10, 20), 20);
        assert_eq!(f.running_min(100, 50, 25), 20);
        assert_eq!(f.running_min(100, 90, 22), 20);
        // At t = 111 the 20 from t = 10 is 101 old: the minimum becomes the best later sample.
        assert_eq!(f.running_min(100, 111, 40), 22);
    }

    #[test]
    fn a_gap_longer_than_the_window_resets() {
        let mut f = MinMax::new(0, 100.0);
        assert_eq!(f.running_max(10, 50, 1.0), 1.0);
    }
}
