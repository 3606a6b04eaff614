//! Time as the controllers see it: an explicit `now`, never a clock read.
//!
//! [`Time`] is a point in virtual or real time, counted in nanoseconds from an epoch the driver
//! chooses (the simulator's start, or the transport's first event). Spans are plain
//! [`std::time::Duration`]s. Integer nanoseconds keep simulations bit-for-bit reproducible.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A point in time, in nanoseconds since the driver's epoch.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(u64);

impl Time {
    /// The epoch itself.
    pub const ZERO: Time = Time(0);
    /// A time later than any the drivers produce; useful as "never".
    pub const MAX: Time = Time(u64::MAX);

    /// `ns` nanoseconds after the epoch.
    pub const fn from_nanos(ns: u64) -> Time {
        Time(ns)
    }
    /// `us` microseconds after the epoch (saturating).
    pub const fn from_micros(us: u64) -> Time {
        Time(us.saturating_mul(1_000))
    }
    /// `ms` milliseconds after the epoch (saturating).
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms.saturating_mul(1_000_000))
    }
    /// `s` seconds after the epoch, truncated to whole nanoseconds; negative values give the epoch.
    pub fn from_secs_f64(s: f64) -> Time {
        Time((s * 1e9).max(0.0) as u64)
    }
    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Whole microseconds since the epoch, truncated.
    pub const fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    /// Seconds since the epoch.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// `self - earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
    /// `self - d`, or `None` if that would be before the epoch.
    pub fn checked_sub(self, d: Duration) -> Option<Time> {
        self.0.checked_sub(duration_nanos(d)).map(Time)
    }
}

/// A duration in whole nanoseconds, saturating at `u64::MAX` (584 years).
pub fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(duration_nanos(d)))
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Duration> for Time {
    type Output = Time;
    fn sub(self, d: Duration) -> Time {
        Time(self.0.saturating_sub(duration_nanos(d)))
    }
}

impl Sub<Time> for Time {
    type Output = Duration;
    fn sub(self, earlier: Time) -> Duration {
        self.saturating_since(earlier)
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        let t = Time::from_millis(5);
        assert_eq!((t - Duration::from_secs(1)), Time::ZERO);
        assert_eq!(Time::MAX + Duration::from_secs(1), Time::MAX);
        assert_eq!(Time::from_millis(3) - Time::from_millis(5), Duration::ZERO);
        assert_eq!(
            Time::from_millis(5) - Time::from_millis(3),
            Duration::from_millis(2)
        );
        assert_eq!(Time::from_micros(1500).as_micros(), 1500);
    }
}
