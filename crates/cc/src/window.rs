//! Window arithmetic shared by the loss-based algorithms (Linux `tcp_cong.c` semantics, in
//! floating point so fractional per-ACK increases such as Scalable's 0.01 are exact).

/// Slow start: grow by the acked packets but not past `ssthresh` (Linux `tcp_slow_start`).
/// Returns the acked packets left over beyond `ssthresh`, which callers feed into congestion
/// avoidance so a stretch ACK that crosses the threshold is not partly lost.
pub fn slow_start(cwnd: &mut f64, ssthresh: f64, acked: f64) -> f64 {
    let grown = (*cwnd + acked).min(ssthresh.max(*cwnd));
    let used = grown - *cwnd;
    *cwnd = grown;
    (acked - used).max(0.0)
}

/// Additive increase: `acked/w` packets, i.e. one packet per `w` acked (Linux
/// `tcp_cong_avoid_ai`). With `w = cwnd` that is Reno's one packet per round trip.
pub fn additive_increase(cwnd: &mut f64, w: f64, acked: f64) {
    if w > 0.0 {
        *cwnd += acked / w;
    }
}

/// True while in slow start (Linux `tcp_in_slow_start`).
pub fn in_slow_start(cwnd: f64, ssthresh: f64) -> bool {
    cwnd < ssthresh
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_stops_at_threshold_and_returns_leftover() {
        let mut w = 10.0;
        assert_eq!(slow_start(&mut w, 100.0, 5.0), 0.0);
        assert_eq!(w, 15.0);
        let mut w = 98.0;
        assert_eq!(slow_start(&mut w, 100.0, 5.0), 3.0);
        assert_eq!(w, 100.0);
    }

    #[test]
    fn additive_increase_is_one_packet_per_window() {
        let mut w = 50.0;
        for _ in 0..50 {
            additive_increase(&mut w, 50.0, 1.0);
        }
        assert!((w - 51.0).abs() < 1e-9);
    }
}
