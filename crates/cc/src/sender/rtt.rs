//! Round-trip time estimation and the retransmission timeout (RFC 6298, RFC 9002 §5).
//!
//! Each ACK that newly acknowledges the largest packet it covers yields one sample: now minus the
//! echoed send timestamp (µs). From the samples the estimator keeps
//! - `min_rtt`, the smallest sample ever seen (the propagation delay, for delay-based control);
//! - `srtt`, an exponentially weighted mean with gain 1/8;
//! - `rttvar`, the mean deviation with gain 1/4.
//!
//! The first sample sets `srtt = R` and `rttvar = R/2`. Later samples first subtract the peer's
//! reported ACK delay when that does not take the sample below `min_rtt` (RFC 9002 §5.3: the
//! delay is the receiver's, not the path's), then `rttvar = 3/4·rttvar + 1/4·|srtt − R|` and
//! `srtt = 7/8·srtt + 1/8·R` (RFC 6298 §2.3, rttvar updated with the old srtt).
//!
//! The timeout is `srtt + max(4·rttvar, G) + max_ack_delay` (RFC 9002's PTO, which adds the
//! peer's permitted ACK delay to RFC 6298's RTO), kept within `[min_rto, max_rto]` and doubled per
//! consecutive expiry (RFC 6298 §5.5, [`backed_off`]). Before any sample the configured initial RTO is used
//! (RFC 6298 §2.1: 1 s). G, the clock granularity, is 1 ms (RFC 9002's kGranularity).
//!
//! All arithmetic is in integer nanoseconds so simulations are reproducible bit for bit.

use std::time::Duration;

/// RFC 9002's kGranularity.
pub const GRANULARITY: Duration = Duration::from_millis(1);

/// The estimator's state in integer nanoseconds: `Duration`'s multiplications and divisions
/// normalise seconds and nanoseconds on every step, several times the cost of `u64`
/// arithmetic on the per-ACK path, for the same values (the divisors here, 2, 4 and 8, divide
/// 10^9, so `Duration`'s division rounds exactly as the integer one does).
#[derive(Clone, Debug)]
pub struct RttEstimator {
    latest_ns: u64,
    /// `None` until the first sample.
    srtt_ns: Option<u64>,
    rttvar_ns: u64,
    min_rtt_ns: Option<u64>,
    initial_rto: Duration,
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl RttEstimator {
    /// An estimator with no sample yet, using `initial_rto` until the first one.
    pub fn new(initial_rto: Duration) -> RttEstimator {
        RttEstimator {
            latest_ns: 0,
            srtt_ns: None,
            rttvar_ns: 0,
            min_rtt_ns: None,
            initial_rto,
        }
    }

    /// Feed one sample (`rtt`, not yet corrected) with the peer's reported `ack_delay`.
    pub fn update(&mut self, rtt: Duration, ack_delay: Duration) {
        let rtt = ns(rtt);
        self.latest_ns = rtt;
        let min = self.min_rtt_ns.map_or(rtt, |m| m.min(rtt));
        self.min_rtt_ns = Some(min);
        match self.srtt_ns {
            None => {
                self.srtt_ns = Some(rtt);
                self.rttvar_ns = rtt / 2;
            }
            Some(srtt) => {
                let ack_delay = ns(ack_delay);
                let adjusted = if rtt >= min.saturating_add(ack_delay) {
                    rtt - ack_delay
                } else {
                    rtt
                };
                let dev = srtt.abs_diff(adjusted);
                self.rttvar_ns = (self.rttvar_ns * 3 + dev) / 4;
                self.srtt_ns = Some((srtt * 7 + adjusted) / 8);
            }
        }
    }

    /// The most recent sample.
    pub fn latest(&self) -> Duration {
        Duration::from_nanos(self.latest_ns)
    }

    /// Smoothed RTT, if any sample was taken.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt_ns.map(Duration::from_nanos)
    }

    /// Smoothed RTT, or the initial RTO's third (RFC 9002's 333 ms for a 1 s RTO) before samples.
    pub fn srtt_or_initial(&self) -> Duration {
        self.srtt().unwrap_or(self.initial_rto / 3)
    }

    /// The RTT variation (mean deviation); zero before the first sample.
    pub fn rttvar(&self) -> Duration {
        Duration::from_nanos(self.rttvar_ns)
    }

    /// The smallest RTT sample seen; `None` before the first.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt_ns.map(Duration::from_nanos)
    }

    /// The base retransmission timeout (before backoff).
    pub fn rto(&self, max_ack_delay: Duration, min_rto: Duration, max_rto: Duration) -> Duration {
        match self.srtt_ns {
            None => self.initial_rto,
            Some(srtt) => {
                let rto = srtt
                    .saturating_add((self.rttvar_ns * 4).max(ns(GRANULARITY)))
                    .saturating_add(ns(max_ack_delay));
                Duration::from_nanos(rto).max(min_rto).min(max_rto)
            }
        }
    }

    /// RFC 9002 §6.1.2: the time threshold for declaring a packet lost,
    /// `9/8 · max(srtt, latest_rtt)`, at least the granularity.
    pub fn loss_delay(&self) -> Duration {
        let base = match self.srtt_ns {
            Some(srtt) => srtt.max(self.latest_ns),
            None => return (self.srtt_or_initial().max(self.latest()) * 9 / 8).max(GRANULARITY),
        };
        Duration::from_nanos(base * 9 / 8).max(GRANULARITY)
    }
}

/// `rto` doubled for each of `expiries` consecutive timeouts, at most `max_rto` (RFC 6298 §5.5;
/// the ceiling of §2.5 bounds it, not a count of doublings).
pub fn backed_off(rto: Duration, expiries: u32, max_rto: Duration) -> Duration {
    rto.saturating_mul(1u32 << expiries.min(16)).min(max_rto)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut r = RttEstimator::new(Duration::from_secs(1));
        assert_eq!(r.rto(ms(0), ms(0), ms(60_000)), Duration::from_secs(1));
        r.update(ms(100), ms(0));
        assert_eq!(r.srtt(), Some(ms(100)));
        assert_eq!(r.rttvar(), ms(50));
        // RTO = 100 + 4·50 = 300 ms (RFC 6298 §2.2).
        assert_eq!(r.rto(ms(0), ms(0), ms(60_000)), ms(300));
    }

    #[test]
    fn later_samples_follow_rfc6298_gains() {
        let mut r = RttEstimator::new(Duration::from_secs(1));
        r.update(ms(100), ms(0));
        r.update(ms(200), ms(0));
        // rttvar = 3/4·50 + 1/4·|100−200| = 62.5 ms; srtt = 7/8·100 + 1/8·200 = 112.5 ms.
        assert_eq!(r.rttvar(), Duration::from_micros(62_500));
        assert_eq!(r.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(r.min_rtt(), Some(ms(100)));
        // RTO = 112.5 + 250 = 362.5 ms, plus a 25 ms max ACK delay.
        assert_eq!(
            r.rto(ms(25), ms(0), ms(60_000)),
            Duration::from_micros(387_500)
        );
        // The floor and ceiling apply.
        assert_eq!(r.rto(ms(0), Duration::from_secs(1), ms(60_000)), ms(1000));
        assert_eq!(r.rto(ms(0), ms(0), ms(200)), ms(200));
    }

    #[test]
    fn ack_delay_is_subtracted_only_above_min_rtt() {
        let mut r = RttEstimator::new(Duration::from_secs(1));
        r.update(ms(100), ms(0));
        // 130 ms with 20 ms of ACK delay counts as 110 ms.
        r.update(ms(130), ms(20));
        assert_eq!(r.srtt(), Some(Duration::from_micros(101_250)));
        // 105 ms with 20 ms of delay would go below min_rtt: used as is.
        let before = r.srtt().unwrap();
        r.update(ms(105), ms(20));
        assert_eq!(r.srtt().unwrap(), (before * 7 + ms(105)) / 8);
    }

    #[test]
    fn backoff_doubles_up_to_the_ceiling() {
        assert_eq!(backed_off(ms(300), 0, ms(60_000)), ms(300));
        assert_eq!(backed_off(ms(300), 3, ms(60_000)), ms(2400));
        assert_eq!(backed_off(ms(300), 40, ms(60_000)), ms(60_000));
    }

    #[test]
    fn loss_delay_is_nine_eighths_of_the_larger_rtt() {
        let mut r = RttEstimator::new(Duration::from_secs(1));
        r.update(ms(80), ms(0));
        assert_eq!(r.loss_delay(), ms(90));
        r.update(ms(160), ms(0));
        // srtt = 90 ms, latest 160 ms → 180 ms.
        assert_eq!(r.loss_delay(), ms(180));
    }
}
