//! Convergence time and recovery time of a time series.
//!
//! RFC 5166 §2.3 lists "response to sudden changes or to transient events" and convergence time
//! among the metrics of congestion control; seed 003 (Scalable TCP) argues that its recovery time
//! after a loss does not depend on the rate, and seed 004 that Reno's grows with RTT²/MTU. The
//! definitions used here:
//!
//! * **Convergence time**: the first time t_k from which *every* later sample stays within
//!   ±tolerance of the target, |v − target| ≤ tolerance·|target|. The target is either known (a
//!   fair share, C/n) or the series' own final value ([`final_value`]: the mean over a tail window).
//!   A series that ends outside the band has not converged (`None`).
//! * **Recovery time**: after an event at t_e (a loss, a competing flow leaving), the pre-event level
//!   L is the mean of the samples in [t_e − window, t_e). Once the series has dipped below
//!   fraction·L, the recovery time is the time from t_e to the first later sample back at or above
//!   fraction·L. A series that never dips below fraction·L recovered in 0 s; one that dips and never
//!   comes back has not recovered (`None`).
//!
//! Series are slices of (t seconds, value) pairs in increasing time.

/// Mean of the samples in the last `tail_s` seconds (t ≥ t_last − tail_s). `None` if empty.
pub fn final_value(series: &[(f64, f64)], tail_s: f64) -> Option<f64> {
    let t_last = series.last()?.0;
    mean_where(series, |t| t >= t_last - tail_s)
}

/// The time (same clock as the series) from which the series stays within ±`tolerance` (a
/// fraction: 0.1 = ±10 %) of `target`. Subtract the start of the experiment for a duration.
pub fn convergence_time(series: &[(f64, f64)], target: f64, tolerance: f64) -> Option<f64> {
    let band = tolerance.abs() * target.abs();
    let inside = |v: f64| (v - target).abs() <= band;
    // Walk back from the end while samples are inside the band.
    let mut first_inside = None;
    for (i, &(_, v)) in series.iter().enumerate().rev() {
        if inside(v) {
            first_inside = Some(i);
        } else {
            break;
        }
    }
    first_inside.map(|i| series[i].0)
}

/// The mean of the samples in [`event_t` − `window_s`, `event_t`): the level before an event.
pub fn pre_event_level(series: &[(f64, f64)], event_t: f64, window_s: f64) -> Option<f64> {
    mean_where(series, |t| t >= event_t - window_s && t < event_t)
}

/// Seconds from `event_t` until the series is back at `fraction` (0.9 = 90 %) of its pre-event
/// level, measured over `window_s` before the event. See the module comment for the cases.
pub fn recovery_time(
    series: &[(f64, f64)],
    event_t: f64,
    window_s: f64,
    fraction: f64,
) -> Option<f64> {
    let level = pre_event_level(series, event_t, window_s)?;
    if level <= 0.0 {
        return None;
    }
    let threshold = fraction * level;
    let after = series.iter().skip_while(|(t, _)| *t < event_t);
    let mut dipped = false;
    for &(t, v) in after {
        if !dipped {
            dipped = v < threshold;
        } else if v >= threshold {
            return Some(t - event_t);
        }
    }
    if dipped {
        None
    } else {
        Some(0.0)
    }
}

fn mean_where(series: &[(f64, f64)], keep: impl Fn(f64) -> bool) -> Option<f64> {
    let (sum, n) = series
        .iter()
        .filter(|(t, _)| keep(*t))
        .fold((0.0, 0u64), |(s, n), (_, v)| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window that doubles each second from 1 to 64, then sits at 100 ± 5.
    fn ramp() -> Vec<(f64, f64)> {
        let mut s: Vec<(f64, f64)> = (0..7).map(|i| (f64::from(i), f64::from(1 << i))).collect();
        s.extend([
            (7.0, 120.0),
            (8.0, 95.0),
            (9.0, 105.0),
            (10.0, 100.0),
            (11.0, 96.0),
        ]);
        s
    }

    #[test]
    fn convergence_to_a_known_target() {
        let s = ramp();
        // ±10 % of 100: 120 at t=7 is outside, from t=8 on all inside.
        assert_eq!(convergence_time(&s, 100.0, 0.10), Some(8.0));
        // ±25 %: 120 is inside too, 64 at t=6 is not.
        assert_eq!(convergence_time(&s, 100.0, 0.25), Some(7.0));
        // ±1 %: the last sample (96) is outside: not converged.
        assert_eq!(convergence_time(&s, 100.0, 0.01), None);
        assert_eq!(convergence_time(&[], 100.0, 0.1), None);
    }

    #[test]
    fn convergence_to_the_final_value() {
        let s = ramp();
        // Mean of t ≥ 9: (105 + 100 + 96)/3 = 100.333…
        let f = final_value(&s, 2.0).unwrap();
        assert!((f - 301.0 / 3.0).abs() < 1e-12);
        assert_eq!(convergence_time(&s, f, 0.10), Some(8.0));
    }

    /// 1 Gb/s flow, a loss at t = 10 s halves it, then +100 Mb/s per second.
    fn loss_at_ten() -> Vec<(f64, f64)> {
        (0..20)
            .map(|i| {
                let t = f64::from(i);
                let v = if i < 10 {
                    1000.0
                } else {
                    500.0 + 100.0 * (t - 10.0)
                };
                (t, v.min(1000.0))
            })
            .collect()
    }

    #[test]
    fn recovery_after_a_loss() {
        let s = loss_at_ten();
        assert_eq!(pre_event_level(&s, 10.0, 5.0), Some(1000.0));
        // 90 % of 1000 = 900 is reached at t = 14 (500 + 4·100): 4 s.
        assert_eq!(recovery_time(&s, 10.0, 5.0, 0.9), Some(4.0));
        // 100 %: t = 15.
        assert_eq!(recovery_time(&s, 10.0, 5.0, 1.0), Some(5.0));
        // 40 %: never dipped below 400, recovered at once.
        assert_eq!(recovery_time(&s, 10.0, 5.0, 0.4), Some(0.0));
    }

    #[test]
    fn no_recovery_or_no_baseline() {
        let mut s = loss_at_ten();
        s.truncate(13); // ends at 700
        assert_eq!(recovery_time(&s, 10.0, 5.0, 0.9), None);
        assert_eq!(recovery_time(&s, 0.0, 5.0, 0.9), None); // nothing before t = 0
    }
}
