//! The bottleneck's transmitter: when a packet's last bit leaves the link.
//!
//! A link of rate R sends a packet of B bytes in 8·B/R seconds, one packet after the other, so
//! packet k finishes at
//!
//! ```text
//!     start_k  = max(arrival_k, finish_{k-1})
//!     finish_k = start_k + 8·B_k / R
//! ```
//!
//! (the "virtual finish time" of fair queueing, Demers, Keshav and Shenker 1989; the "logical
//! timestamps" of stack-rs/rattan). Computing finish times instead of waiting for them means a
//! driver that is late (the emulator's timer) delays the *write* of one packet, never the
//! schedule of the packets behind it, so its error does not accumulate.
//!
//! **Rounding.** 8·B/R is rarely a whole number of nanoseconds, and adding rounded times
//! packet by packet would drift by up to half a nanosecond per packet. Instead, during a busy
//! period (the link never idle) the serialiser keeps the exact number of bits sent since the
//! period began, and a packet's finish is `period_start + bits·10⁹/R` rounded to the nearest
//! nanosecond: every finish time is within 0.5 ns of the exact one however long the busy
//! period, and a rate is exact over any run. The quotient and remainder of `bits·10⁹/R` are
//! kept as the period goes (the per-size step is cached), so a packet costs an addition and a
//! comparison, not a division. A period restarts when a packet arrives to an idle link. The
//! rate is taken to the nearest bit per second: the emulator's rates are whole numbers of bits
//! per second, and so are a scenario's as written (`124.4mbit` is 124,400,000); a fractional
//! one moves by less than half a bit per second.
//!
//! **Traces.** A link whose capacity follows a mahimahi trace serialises by the trace's
//! delivery opportunities instead ([`crate::trace::TraceSerializer`]).

use crate::trace::{Trace, TraceSerializer};

/// A constant-rate transmitter, exact over each busy period.
#[derive(Clone, Debug)]
pub struct RateSerializer {
    /// Bits per second, a whole number.
    rate: u64,
    /// Start of the current busy period, ns.
    period_start: u64,
    /// `bits·10⁹ / rate` of the bits sent in the current busy period: whole ns and remainder
    /// (in units of 1/rate ns).
    period_ns: u64,
    period_rem: u64,
    /// When the last packet given finishes (the link is busy until then).
    busy_until: u64,
    /// The last size seen and its `8·size·10⁹ / rate` as whole ns and remainder.
    step: (u32, u64, u64),
}

impl RateSerializer {
    /// A transmitter of `rate_bps` bits per second, taken to the nearest whole bit per second
    /// (at least 1 and finite: the scenario and the emulator's configuration check it).
    pub fn new(rate_bps: f64) -> RateSerializer {
        let rate = rate_bps.round();
        assert!(
            rate >= 1.0 && rate < u64::MAX as f64,
            "rate must be at least 1 bit/s and finite"
        );
        RateSerializer {
            rate: rate as u64,
            period_start: 0,
            period_ns: 0,
            period_rem: 0,
            busy_until: 0,
            step: (0, 0, 0),
        }
    }

    /// The rate, bits per second.
    pub fn rate_bps(&self) -> f64 {
        self.rate as f64
    }

    /// Serialises `bytes` arriving at `arrival`; returns when its last bit leaves.
    #[inline]
    pub fn transmit(&mut self, arrival: u64, bytes: u32) -> u64 {
        if arrival >= self.busy_until {
            // An idle link: a busy period starts with this packet.
            self.period_start = arrival;
            self.period_ns = 0;
            self.period_rem = 0;
        }
        if self.step.0 != bytes {
            // 8·bytes·10⁹ < 2^50 for any packet: no overflow.
            let n = bytes as u64 * 8_000_000_000;
            self.step = (bytes, n / self.rate, n % self.rate);
        }
        self.period_ns += self.step.1;
        self.period_rem += self.step.2;
        if self.period_rem >= self.rate {
            self.period_rem -= self.rate;
            self.period_ns += 1;
        }
        // Round half up: the remainder is at least half the rate.
        let up = self.period_rem >= self.rate - self.rate / 2;
        self.busy_until = self.period_start + self.period_ns + up as u64;
        self.busy_until
    }
}

/// What sets when packets leave the link.
#[derive(Clone, Debug)]
pub enum Serializer {
    /// No rate limit: a packet leaves when it arrives (a pure delay).
    Unlimited,
    /// A constant rate.
    Rate(RateSerializer),
    /// A mahimahi trace's delivery opportunities.
    Trace(TraceSerializer),
}

impl Serializer {
    /// A constant rate of `rate_bps`.
    pub fn rate(rate_bps: f64) -> Serializer {
        Serializer::Rate(RateSerializer::new(rate_bps))
    }

    /// `trace`'s opportunities, counted from `epoch` (ns).
    pub fn trace(trace: Trace, epoch: u64) -> Serializer {
        Serializer::Trace(TraceSerializer::new(trace, epoch))
    }

    /// The same link with nothing sent yet.
    pub fn fresh(&self) -> Serializer {
        match self {
            Serializer::Unlimited => Serializer::Unlimited,
            Serializer::Rate(r) => Serializer::rate(r.rate_bps()),
            Serializer::Trace(t) => Serializer::trace(t.trace().clone(), t.epoch()),
        }
    }

    /// A traced link counts its trace from `epoch` on ([`TraceSerializer::rebase`]); other
    /// links have no epoch.
    pub fn rebase(&mut self, epoch: u64) {
        if let Serializer::Trace(t) = self {
            t.rebase(epoch);
        }
    }

    /// True for a link with a rate (constant or traced): one where a queue can form.
    #[inline]
    pub fn is_limited(&self) -> bool {
        !matches!(self, Serializer::Unlimited)
    }

    /// The capacity in bits per second: the rate, or a trace's mean rate; `None` when
    /// unlimited.
    pub fn mean_rate_bps(&self) -> Option<f64> {
        match self {
            Serializer::Unlimited => None,
            Serializer::Rate(r) => Some(r.rate_bps()),
            Serializer::Trace(t) => Some(t.trace().mean_rate_bps()),
        }
    }

    /// Serialisation time of a `bytes`-byte packet at the capacity (a trace's mean rate),
    /// rounded to the nearest ns; 0 when unlimited. RED's idle decay counts in this unit.
    pub fn typical_tx_ns(&self, bytes: u32) -> u64 {
        match self.mean_rate_bps() {
            Some(r) => (bytes as f64 * 8e9 / r).round() as u64,
            None => 0,
        }
    }

    /// Serialises `bytes` arriving at `arrival` (arrivals in time order); returns when its last
    /// bit leaves: `arrival` itself on an unlimited link.
    #[inline]
    pub fn transmit(&mut self, arrival: u64, bytes: u32) -> u64 {
        match self {
            Serializer::Unlimited => arrival,
            Serializer::Rate(r) => r.transmit(arrival, bytes),
            Serializer::Trace(t) => t.transmit(arrival, bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_packet_on_an_idle_link_takes_8b_over_r() {
        // 1500 B at 1 Gb/s = 12,000 bits / 1e9 b/s = 12 µs.
        let mut s = RateSerializer::new(1e9);
        assert_eq!(s.transmit(1_000, 1500), 13_000);
    }

    #[test]
    fn packets_queue_behind_each_other_and_an_idle_link_starts_afresh() {
        let mut s = Serializer::rate(100e6); // 100 Mb/s: 1500 B = 120 µs
        assert_eq!(s.transmit(0, 1500), 120_000);
        // Arrives while busy: behind the first.
        assert_eq!(s.transmit(50_000, 1500), 240_000);
        // Arrives after the link went idle: starts at its own arrival.
        assert_eq!(s.transmit(1_000_000, 1500), 1_120_000);
    }

    #[test]
    fn finish_times_are_exact_over_a_busy_period_to_the_nearest_ns() {
        // 3 Gb/s: a byte takes 8/3 ns. 1000 one-byte packets back to back: packet k finishes
        // at 8k/3 ns rounded to the nearest (k = 1: 2.67 → 3; k = 2: 5.33 → 5), and the last
        // at 2666.67 → 2667 ns. Rounding each packet's time instead would give 3 ns a packet
        // and 3000 ns at the end.
        let mut s = RateSerializer::new(3e9);
        let mut last = 0;
        for k in 1..=1000u64 {
            last = s.transmit(0, 1);
            assert_eq!(last, (8.0 * k as f64 / 3.0).round() as u64, "packet {k}");
        }
        assert_eq!(last, 2667);
        // 10 Gb/s, alternating 1500 B (1200 ns) and 52 B (41.6 ns): after n pairs the exact
        // time is 1241.6·n ns; at n = 100,000 it is 124,160,000 exactly.
        let mut s = RateSerializer::new(10e9);
        for k in 1..=200_000u64 {
            last = s.transmit(0, if k % 2 == 1 { 1500 } else { 52 });
            if k == 2 {
                assert_eq!(last, 1242); // 1241.6
            }
        }
        assert_eq!(last, 124_160_000);
        // A tie rounds up: 1 B at 16 Gb/s is 0.5 ns.
        assert_eq!(RateSerializer::new(16e9).transmit(0, 1), 1);
        // 10,000 packets of 1500 B at 1 Gb/s = 120 Mbit = 0.12 s.
        let mut s = RateSerializer::new(1e9);
        for _ in 0..10_000 {
            last = s.transmit(0, 1500);
        }
        assert_eq!(last, 120_000_000);
    }

    #[test]
    fn unlimited_releases_at_arrival_and_a_trace_at_its_opportunities() {
        let mut u = Serializer::Unlimited;
        assert_eq!(u.transmit(7, 1500), 7);
        assert_eq!(u.mean_rate_bps(), None);
        assert_eq!(u.typical_tx_ns(1500), 0);
        // One opportunity every 2 ms: 1504 B per 2 ms = 6.016 Mb/s.
        let t = Trace::parse("t", "2\n").unwrap();
        let mut s = Serializer::trace(t, 1_000);
        assert_eq!(s.transmit(0, 1500), 2_001_000);
        assert_eq!(s.transmit(0, 1500), 4_001_000);
        assert!((s.mean_rate_bps().unwrap() - 6.016e6).abs() < 1e-6);
        // 1500 B at 6.016 Mb/s = 1,994,680.8 ns.
        assert_eq!(s.typical_tx_ns(1500), 1_994_681);
        // A fresh copy has sent nothing.
        assert_eq!(s.fresh().transmit(0, 1500), 2_001_000);
    }
}
