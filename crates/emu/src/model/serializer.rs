//! Constant-rate serialiser with logical timestamps.
//!
//! A bottleneck of rate R transmits a packet of B bytes in 8·B/R seconds, one packet after the
//! other. The finish time of packet k is
//!
//! ```text
//!     start_k  = max(arrival_k, finish_{k-1})
//!     finish_k = start_k + 8·B_k / R
//! ```
//!
//! (the "virtual finish time" of fair queueing, Demers/Keshav/Shenker 1989, and the "logical
//! timestamps" of stack-rs/rattan). Computing finish times instead of sleeping for them means a
//! late timer only delays the *write* of one packet; it never shifts the schedule of the packets
//! behind it, so timer error does not accumulate (dummynet's drift, seed 001: "bandwidth
//! fluctuates significantly with workload").
//!
//! Rounding: 8·B/R is rarely a whole number of nanoseconds. Adding rounded durations packet by
//! packet would drift by up to 1 ns per packet. Instead, during a busy period (the link never idle)
//! we keep the exact number of bits sent since the period began and compute
//! `finish = period_start + ceil(bits · 10⁹ / R)` in 128-bit integers, so every finish time is the
//! exact value rounded up, independently of how many packets came before. The period restarts
//! when a packet arrives to an idle link.

use super::Nanos;

/// Byte-accurate constant-rate serialiser.
#[derive(Debug, Clone)]
pub struct RateSerializer {
    rate_bps: u64,
    /// Start of the current busy period.
    period_start: Nanos,
    /// Bits finished in the current busy period.
    period_bits: u128,
    /// Finish time of the last packet (the link is busy until then).
    busy_until: Nanos,
}

impl RateSerializer {
    /// A serialiser at `rate_bps` bits per second (must be > 0; checked by the config).
    pub fn new(rate_bps: u64) -> Self {
        assert!(rate_bps > 0, "rate must be positive");
        Self {
            rate_bps,
            period_start: 0,
            period_bits: 0,
            busy_until: 0,
        }
    }

    /// The serialiser's rate, in bits per second.
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// The instant the link becomes idle.
    pub fn busy_until(&self) -> Nanos {
        self.busy_until
    }

    /// Serialises `bytes` arriving at `arrival`; returns the time its last bit leaves.
    pub fn transmit(&mut self, arrival: Nanos, bytes: u32) -> Nanos {
        if arrival >= self.busy_until {
            // Idle link: a new busy period starts with this packet.
            self.period_start = arrival;
            self.period_bits = 0;
        }
        self.period_bits += 8 * bytes as u128;
        let ns = (self.period_bits * 1_000_000_000).div_ceil(self.rate_bps as u128);
        self.busy_until = self.period_start + ns as Nanos;
        self.busy_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_packet_on_idle_link_takes_8b_over_r() {
        // 1500 B at 1 Gb/s = 12 000 bits / 1e9 b/s = 12 µs.
        let mut s = RateSerializer::new(1_000_000_000);
        assert_eq!(s.transmit(1_000, 1500), 1_000 + 12_000);
    }

    #[test]
    fn back_to_back_packets_finish_byte_exact_without_drift() {
        // 3 Gb/s: 1500 B takes 4000 ns exactly; 1 B takes 8/3 ns (not an integer).
        let mut s = RateSerializer::new(3_000_000_000);
        // 1000 one-byte packets arriving together: packet k finishes at ceil(8k/3) ns.
        for k in 1..=1000u64 {
            let f = s.transmit(0, 1);
            assert_eq!(f, (8 * k).div_ceil(3), "packet {k}");
        }
        // After 1000 bytes (8000 bits) the total is ceil(8000/3) = 2667 ns, not 1000·3 = 3000
        // as per-packet rounding up would give.
        assert_eq!(s.busy_until(), 2667);
    }

    #[test]
    fn idle_gap_restarts_the_busy_period() {
        let mut s = RateSerializer::new(100_000_000); // 100 Mb/s: 1500 B = 120 µs
        assert_eq!(s.transmit(0, 1500), 120_000);
        // Arrives while busy: queued behind the first.
        assert_eq!(s.transmit(50_000, 1500), 240_000);
        // Arrives after the link went idle: starts at its own arrival.
        assert_eq!(s.transmit(1_000_000, 1500), 1_120_000);
    }

    #[test]
    fn long_run_matches_rate_exactly() {
        // 10 000 packets of 1500 B at 1 Gb/s = 120 Mbit = 0.12 s exactly.
        let mut s = RateSerializer::new(1_000_000_000);
        let mut last = 0;
        for _ in 0..10_000 {
            last = s.transmit(0, 1500);
        }
        assert_eq!(last, 120_000_000);
    }
}
