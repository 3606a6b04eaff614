//! Window arithmetic shared by the loss-based algorithms (Linux `tcp_cong.c` semantics, in
//! floating point so fractional per-ACK increases such as Scalable's 0.01 are exact), and the
//! reactions to loss and timeout that every loss-based controller shares.

use crate::controller::Setup;

/// The smallest threshold a reduction leaves: 2 packets (the floor of Linux
/// `tcp_reno_ssthresh` and of every loss-based `ssthresh` hook built on it).
pub const MIN_SSTHRESH: f64 = 2.0;

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

/// Multiplicative decrease on the first loss of a window: the threshold becomes `threshold`
/// (at least [`MIN_SSTHRESH`]) and the window drops to it at once. The transport's recovery
/// (SACK, PRR) decides what is sent meanwhile; later losses of the same window change nothing,
/// so callers invoke this only for `LossEvent::first_in_window`.
pub fn reduce_to_threshold(setup: &Setup, cwnd: &mut f64, ssthresh: &mut f64, threshold: f64) {
    *ssthresh = threshold.max(MIN_SSTHRESH);
    *cwnd = setup.clamp_cwnd(*ssthresh);
}

/// True if a retransmission timeout lowers the threshold: only the first of a series does, so a
/// backed-off timer does not shrink it again (Linux `tcp_enter_loss` recomputes `ssthresh` only
/// when not already in the Loss state).
pub fn timeout_lowers_threshold(consecutive: u32) -> bool {
    consecutive <= 1
}

/// After a retransmission timeout: the threshold becomes `threshold` when one is given (see
/// [`timeout_lowers_threshold`]), at least [`MIN_SSTHRESH`], and the window restarts from
/// `restart` packets, in slow start.
pub fn restart_after_timeout(
    setup: &Setup,
    cwnd: &mut f64,
    ssthresh: &mut f64,
    threshold: Option<f64>,
    restart: f64,
) {
    if let Some(t) = threshold {
        *ssthresh = t.max(MIN_SSTHRESH);
    }
    *cwnd = setup.clamp_cwnd(restart);
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
    fn reduction_sets_threshold_and_window_with_a_floor_of_two() {
        let setup = Setup::default();
        let (mut w, mut s) = (100.0, f64::INFINITY);
        reduce_to_threshold(&setup, &mut w, &mut s, 50.0);
        assert_eq!((w, s), (50.0, 50.0));
        reduce_to_threshold(&setup, &mut w, &mut s, 0.5);
        assert_eq!((w, s), (2.0, 2.0));
    }

    #[test]
    fn only_the_first_timeout_of_a_series_lowers_the_threshold() {
        let setup = Setup::default();
        let (mut w, mut s) = (64.0, 1000.0);
        assert!(timeout_lowers_threshold(1) && !timeout_lowers_threshold(2));
        restart_after_timeout(&setup, &mut w, &mut s, Some(32.0), 1.0);
        assert_eq!((w, s), (1.0, 32.0));
        restart_after_timeout(&setup, &mut w, &mut s, None, 2.0);
        assert_eq!((w, s), (2.0, 32.0));
        restart_after_timeout(&setup, &mut w, &mut s, Some(1.0), 1.0);
        assert_eq!(s, 2.0);
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
