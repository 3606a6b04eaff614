//! Pacing: a token bucket that spreads packets at the controller's rate in bursts of at most
//! the controller's burst size.
//!
//! The bucket holds at most `burst` bytes and fills at `rate` bytes per second; a packet may
//! leave when the bucket holds its length. It is kept as a virtual clock `v` (picoseconds): the
//! bucket's content at `now` is `(now − v)·rate`, capped by resetting `v` to at least
//! `now − burst/rate`; sending `len` bytes advances `v` by `len/rate`. The next release time
//! when the bucket is short is therefore `v + len/rate`, which is what the connection reports
//! from `poll_timeout`. Picoseconds keep the schedule exact to well under a nanosecond per
//! packet even at 100 Gb/s (a 9000-byte packet every 720 ns).
//!
//! The rate comes from [`CongestionControl::pacing_rate`] and the burst from
//! [`CongestionControl::max_burst`]; when the controller leaves them to the transport, the rate
//! is Linux's default (`tcp_update_pacing_rate`: 2·cwnd/srtt in slow start, 1.2·cwnd/srtt after;
//! RFC 9002 §7.7 suggests the same form with N = 1.25) and the burst is [`DEFAULT_BURST`]
//! packets. Before the first RTT sample nothing is paced (the initial window goes out at once,
//! as in Linux).
//!
//! [`Train`] is the same clock in the shape of Linux's internal pacing (`tcp_internal_pacing`):
//! a train of `burst` packets (a TSO segment of `tso_segs` packets) leaves back to back, and the
//! next train waits until every byte sent before it is paid for at the rate (`len /
//! sk_pacing_rate`); the bucket keeps no credit, so idle time earns no burst beyond the train.
//!
//! [`CongestionControl::pacing_rate`]: crate::CongestionControl::pacing_rate
//! [`CongestionControl::max_burst`]: crate::CongestionControl::max_burst

use crate::time::Time;

/// Burst size, in packets, when the controller does not choose one (Linux's fq quantum is two
/// packets; ten, the initial window, keeps the per-wakeup cost low at high rates).
pub const DEFAULT_BURST: u32 = 10;

const PS_PER_NS: u128 = 1_000;
const PS_PER_SEC: u128 = 1_000_000_000_000;

/// The token bucket, kept as a virtual clock (see the module header).
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// Virtual clock, picoseconds since the epoch.
    v_ps: u128,
}

impl Pacer {
    /// A pacer whose bucket is full from the epoch on.
    pub fn new() -> Pacer {
        Pacer::default()
    }

    /// Picoseconds to send `bytes` at `rate` bytes/s, rounded up. 64-bit division when the
    /// product fits (always, for bursts below 18 MB): 128-bit division costs ~10× more.
    fn ps_for(bytes: u64, rate: u64) -> u128 {
        let rate = rate.max(1);
        match bytes.checked_mul(PS_PER_SEC as u64) {
            Some(p) => p.div_ceil(rate) as u128,
            None => (bytes as u128 * PS_PER_SEC).div_ceil(rate as u128),
        }
    }

    /// How long `bytes` take at `rate` bytes/s, rounded up to the nanosecond: how long a
    /// bucket of `bytes` takes to fill.
    pub fn time_for(bytes: u64, rate: u64) -> std::time::Duration {
        let ns = Self::ps_for(bytes, rate).div_ceil(PS_PER_NS);
        std::time::Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// Refill: the bucket never holds more than `burst_bytes`.
    fn refill(&mut self, now: Time, rate: u64, burst_bytes: u64) {
        let now_ps = now.as_nanos() as u128 * PS_PER_NS;
        let floor = now_ps.saturating_sub(Self::ps_for(burst_bytes, rate));
        self.v_ps = self.v_ps.max(floor);
    }

    /// When a packet of `len` bytes may leave: `now` or later.
    pub fn release_time(&mut self, now: Time, len: u64, rate: u64, burst_bytes: u64) -> Time {
        self.refill(now, rate, burst_bytes);
        let at_ps = self.v_ps + Self::ps_for(len, rate);
        let now_ps = now.as_nanos() as u128 * PS_PER_NS;
        if at_ps <= now_ps {
            now
        } else {
            // 64-bit division while the clock fits (213 days in picoseconds).
            let ns = match u64::try_from(at_ps) {
                Ok(ps) => ps.div_ceil(PS_PER_NS as u64),
                Err(_) => u64::try_from(at_ps.div_ceil(PS_PER_NS)).unwrap_or(u64::MAX),
            };
            Time::from_nanos(ns)
        }
    }

    /// A packet of `len` bytes left at `now` (the caller checked `release_time(..) <= now`).
    pub fn on_sent(&mut self, now: Time, len: u64, rate: u64, burst_bytes: u64) {
        self.refill(now, rate, burst_bytes);
        self.commit(len, rate);
    }

    /// [`Pacer::on_sent`] right after a `release_time` at the same instant with the same rate
    /// and burst, which left nothing to refill: one division less per packet.
    pub fn commit(&mut self, len: u64, rate: u64) {
        self.v_ps += Self::ps_for(len, rate);
    }
}

/// Pacing in Linux's train shape (see the module header).
#[derive(Clone, Debug, Default)]
pub struct Train {
    clock: Pacer,
    /// Packets the current train may still send back to back.
    left: u32,
}

impl Train {
    /// A pacer whose first train may leave at once.
    pub fn new() -> Train {
        Train::default()
    }

    /// When the next packet may leave at `rate` bytes/s: `now` while a train is under way or
    /// once the trains before are paid for, else the time they will be.
    pub fn release_time(&mut self, now: Time, rate: u64) -> Time {
        if self.left > 0 {
            return now;
        }
        self.clock.release_time(now, 0, rate, 0)
    }

    /// A packet of `len` bytes left at `now` (no earlier than `release_time`), in trains of
    /// `burst` packets.
    pub fn on_sent(&mut self, now: Time, len: u64, rate: u64, burst: u32) {
        self.clock.on_sent(now, len, rate, 0);
        if self.left == 0 {
            self.left = burst.max(1);
        }
        self.left -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Send as soon as allowed, `n` packets, and list the departure times in µs.
    fn schedule(n: usize, len: u64, rate: u64, burst_pkts: u64) -> Vec<u64> {
        let mut p = Pacer::new();
        let mut now = Time::from_millis(10);
        let mut out = Vec::new();
        for _ in 0..n {
            let t = p.release_time(now, len, rate, burst_pkts * len);
            now = now.max(t);
            p.on_sent(now, len, rate, burst_pkts * len);
            out.push(now.as_micros());
        }
        out
    }

    #[test]
    fn burst_then_one_packet_per_interval() {
        // 1000-byte packets at 1 MB/s: one per millisecond after a burst of 3.
        let t = schedule(6, 1000, 1_000_000, 3);
        assert_eq!(t, vec![10_000, 10_000, 10_000, 11_000, 12_000, 13_000]);
    }

    #[test]
    fn high_rates_are_exact() {
        // 9000-byte packets at 12.5 GB/s (100 Gb/s): 720 ns apart, burst of 1.
        let mut p = Pacer::new();
        let mut now = Time::from_millis(1);
        let mut times = Vec::new();
        for _ in 0..1001 {
            now = now.max(p.release_time(now, 9000, 12_500_000_000, 9000));
            p.on_sent(now, 9000, 12_500_000_000, 9000);
            times.push(now.as_nanos());
        }
        assert_eq!(times[1] - times[0], 720);
        assert_eq!(times[1000] - times[0], 720_000);
    }

    #[test]
    fn commit_after_release_time_equals_on_sent() {
        let (rate, burst) = (3_000_000, 4500);
        let (mut a, mut b) = (Pacer::new(), Pacer::new());
        let mut now = Time::from_millis(5);
        for i in 0..50u64 {
            let len = 900 + (i * 37) % 600;
            let ta = a.release_time(now, 1500, rate, burst);
            let tb = b.release_time(now, 1500, rate, burst);
            assert_eq!(ta, tb);
            now = now.max(ta) + std::time::Duration::from_micros(i % 7 * 100);
            // `a` asks again at the send instant, as a driver does; `b` commits.
            assert!(a.release_time(now, 1500, rate, burst) <= now);
            a.on_sent(now, len, rate, burst);
            assert!(b.release_time(now, 1500, rate, burst) <= now);
            b.commit(len, rate);
            assert_eq!(a.v_ps, b.v_ps, "packet {i}");
        }
    }

    #[test]
    fn trains_leave_whole_and_wait_for_their_bytes() {
        // Trains of 3 packets of 1000 bytes at 1 MB/s: 3 at once, then 3 ms later the next 3.
        let mut p = Train::new();
        let mut now = Time::from_millis(10);
        let mut out = Vec::new();
        for _ in 0..9 {
            now = now.max(p.release_time(now, 1_000_000));
            p.on_sent(now, 1000, 1_000_000, 3);
            out.push(now.as_micros());
        }
        assert_eq!(
            out,
            vec![10_000, 10_000, 10_000, 13_000, 13_000, 13_000, 16_000, 16_000, 16_000]
        );
        // Idle time earns no credit: after a second's pause one train goes, then the wait.
        now = Time::from_millis(2000);
        for _ in 0..3 {
            assert_eq!(p.release_time(now, 1_000_000), now);
            p.on_sent(now, 1000, 1_000_000, 3);
        }
        assert_eq!(
            p.release_time(now, 1_000_000),
            now + std::time::Duration::from_millis(3)
        );
    }

    #[test]
    fn idle_time_earns_at_most_one_burst() {
        let mut p = Pacer::new();
        let rate = 1_000_000;
        let now = Time::from_secs_f64(1.0);
        p.on_sent(now, 1000, rate, 2000);
        // After 10 s idle, only 2 packets may go at once.
        let later = Time::from_secs_f64(11.0);
        for _ in 0..2 {
            assert_eq!(p.release_time(later, 1000, rate, 2000), later);
            p.on_sent(later, 1000, rate, 2000);
        }
        assert_eq!(
            p.release_time(later, 1000, rate, 2000),
            later + std::time::Duration::from_millis(1)
        );
    }
}
