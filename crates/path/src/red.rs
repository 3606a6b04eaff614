//! Random Early Detection (S. Floyd, V. Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1(4), 1993), with the "gentle" extension (Floyd, 2000) and ECN
//! marking (RFC 3168).
//!
//! RED keeps an exponentially weighted average of the queue length, `avg ← (1−w)·avg + w·q`,
//! updated at every arrival. Below `min_th` nothing is dropped. Between `min_th` and `max_th` an
//! arriving packet is dropped (or, if it is ECN-capable and ECN is on, marked) with probability
//! `pb = max_p·(avg−min_th)/(max_th−min_th)`, spread out by the count of packets since the last
//! drop: `pa = pb / (1 − count·pb)`, so drops come roughly evenly rather than in clusters. Above
//! `max_th` every packet is dropped; "gentle" RED instead ramps `pb` from `max_p` to 1 between
//! `max_th` and `2·max_th`. When the queue has been idle, the average decays as if `m` small
//! packets had arrived to an empty queue, `m = idle_time / transmission_time`.
//!
//! Sizes are in packets for a packet-limited queue and in bytes for a byte-limited one (the
//! queue's own unit). Defaults when a scenario omits them (`QueueSpec::red_params`): `max_th` = half the queue limit,
//! `min_th` = `max_th`/3 (Floyd's advice that `max_th` be at least twice `min_th`), `max_p` =
//! 0.1, `weight` = 0.002 (the paper's value), `gentle` = true (ns-2 and Linux `tc red` practice).
//! Deviation: in the region above `max_th` (or above `2·max_th` when gentle), ECN-capable packets
//! are dropped rather than marked, as Linux's `harddrop`-less RED does only for the probabilistic
//! region — a persistently full queue must shed load.

/// RED's settings, in the queue's unit (packets or bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    /// Average queue where early drops start.
    pub min_th: f64,
    /// Average queue where the drop probability reaches `max_p`.
    pub max_th: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
    /// EWMA weight of the average queue.
    pub weight: f64,
    /// Ramp the drop probability from `max_p` to 1 between `max_th` and `2·max_th`.
    pub gentle: bool,
    /// Mark ECN-capable packets instead of dropping them early.
    pub ecn: bool,
}

/// RED's verdict on an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedVerdict {
    /// Admit the packet.
    Accept,
    /// Early (probabilistic) congestion signal: drop, or mark if the packet is ECN-capable.
    Early,
    /// Forced drop: the average is beyond the region where RED marks.
    Forced,
}

/// One queue's RED state.
#[derive(Clone, Debug)]
pub struct Red {
    /// Its settings.
    pub params: RedParams,
    /// Average queue length.
    pub avg: f64,
    /// Packets since the last early signal (−1 while below `min_th`).
    count: i64,
    /// When the queue last became empty, if it is empty.
    idle_since: Option<u64>,
}

impl Red {
    /// RED with an empty average.
    pub fn new(params: RedParams) -> Red {
        Red {
            params,
            avg: 0.0,
            count: -1,
            idle_since: Some(0),
        }
    }

    /// Note that the queue drained at `at`.
    pub fn queue_emptied(&mut self, at: u64) {
        if self.idle_since.is_none() {
            self.idle_since = Some(at);
        }
    }

    /// Judge an arrival at `now` that finds `q` waiting (in the queue's unit). `tx_ns` is the
    /// transmission time of a typical packet (for the idle decay) and `u` a uniform [0, 1)
    /// draw.
    pub fn on_arrival(&mut self, now: u64, q: f64, tx_ns: u64, u: f64) -> RedVerdict {
        let p = self.params;
        match self.idle_since.take() {
            Some(since) if q == 0.0 => {
                let m = now.saturating_sub(since) as f64 / tx_ns.max(1) as f64;
                self.avg *= (1.0 - p.weight).powf(m);
            }
            _ => {}
        }
        self.avg = (1.0 - p.weight) * self.avg + p.weight * q;
        let avg = self.avg;
        let pb = if avg < p.min_th {
            self.count = -1;
            return RedVerdict::Accept;
        } else if avg < p.max_th {
            p.max_p * (avg - p.min_th) / (p.max_th - p.min_th)
        } else if p.gentle && avg < 2.0 * p.max_th {
            p.max_p + (1.0 - p.max_p) * (avg - p.max_th) / p.max_th
        } else {
            self.count = 0;
            return RedVerdict::Forced;
        };
        self.count += 1;
        let denom = 1.0 - self.count as f64 * pb;
        let pa = if denom <= 0.0 {
            1.0
        } else {
            (pb / denom).min(1.0)
        };
        if u < pa {
            self.count = 0;
            RedVerdict::Early
        } else {
            RedVerdict::Accept
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> RedParams {
        RedParams {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            weight: 0.5,
            gentle: false,
            ecn: false,
        }
    }

    #[test]
    fn average_follows_the_ewma_and_thresholds_apply() {
        let mut r = Red::new(params());
        // Non-empty arrivals: avg = 0.5·avg + 0.5·q.
        assert_eq!(r.on_arrival(0, 4.0, 1000, 0.0), RedVerdict::Accept);
        assert_eq!(r.avg, 2.0);
        assert_eq!(r.on_arrival(0, 4.0, 1000, 0.0), RedVerdict::Accept);
        assert_eq!(r.avg, 3.0);
        // avg = 0.5·3 + 0.5·9 = 6 ≥ min_th: pb = 0.1·(6−5)/10 = 0.01; count 0 ⇒ pa = pb.
        assert_eq!(r.on_arrival(0, 9.0, 1000, 0.0100), RedVerdict::Accept);
        assert_eq!(r.avg, 6.0);
        // avg stays 6, count 1 ⇒ pa = 0.01/(1 − 0.01) = 0.010101…: u = 0.0101 is a signal.
        assert_eq!(r.on_arrival(0, 6.0, 1000, 0.0101), RedVerdict::Early);
        // avg = 0.5·6 + 0.5·40 = 23 ≥ max_th: forced.
        assert_eq!(r.on_arrival(0, 40.0, 1000, 0.99), RedVerdict::Forced);
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut r = Red::new(params());
        r.on_arrival(0, 16.0, 1000, 0.5);
        assert_eq!(r.avg, 8.0);
        r.queue_emptied(1_000);
        // 3 transmission times idle: avg = 8·0.5³ = 1, then the arrival's own update: 0.5.
        r.on_arrival(4_000, 0.0, 1000, 0.5);
        assert!((r.avg - 0.5).abs() < 1e-12, "{}", r.avg);
    }

    #[test]
    fn gentle_ramps_to_one_at_twice_max_th() {
        let mut r = Red::new(RedParams {
            gentle: true,
            weight: 1.0,
            ..params()
        });
        // avg = 22.5: pb = 0.1 + 0.9·7.5/15 = 0.55 = pa (count 0); u = 0.54 signals.
        assert_eq!(r.on_arrival(0, 22.5, 1000, 0.54), RedVerdict::Early);
        assert_eq!(r.on_arrival(0, 30.0, 1000, 0.0), RedVerdict::Forced);
    }

    #[test]
    fn early_signals_are_spaced_uniformly() {
        // At an average halfway between the thresholds p_b = max_p/2 = 0.05. With the count
        // raised before p_a = p_b/(1 − count·p_b) and reset on a signal, P(gap > k) =
        // (1 − (k+1)·p_b)/(1 − p_b): gaps are uniform on 1..=19 (the even spacing Floyd
        // and Jacobson aim for), of mean 10 and variance 30. Of n = 200,000 arrivals about 20,000 are signalled,
        // so the mean gap has sd √(30/20,000) = 0.039; 0.2 is 5 of them.
        use rand::{Rng, SeedableRng};
        let mut r = Red::new(RedParams {
            min_th: 15_000.0,
            max_th: 45_000.0,
            weight: 1.0,
            ..params()
        });
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        let n = 200_000;
        let signals = (0..n)
            .filter(|_| r.on_arrival(0, 30_000.0, 1000, rng.gen()) == RedVerdict::Early)
            .count();
        let gap = n as f64 / signals as f64;
        assert!((gap - 10.0).abs() < 0.2, "mean gap {gap}");
    }
}
