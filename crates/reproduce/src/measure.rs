//! Measurements the claims need beyond the result summary's averages, computed from its time
//! series: steady-state means (after a warm-up), window-recovery times after losses, and the
//! time a window takes to climb between two sizes.

use longhaul_metrics::summary::{FlowSummary, LinkSummary, Summary};

/// Mean of `v` over the samples whose time `t` is at or after `from_s`; NaN when there are none.
pub fn mean_after(t: &[f64], v: &[f64], from_s: f64) -> f64 {
    let (sum, n) = t
        .iter()
        .zip(v)
        .filter(|(ti, vi)| **ti >= from_s && vi.is_finite())
        .fold((0.0, 0usize), |(s, n), (_, v)| (s + v, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// A flow's mean throughput (b/s, payload delivered to the application) from `from_s` to the
/// end. With `from_s` = 0 this is the summary's own throughput (payload delivered ÷ duration),
/// which includes slow start.
pub fn flow_throughput_after(flow: &FlowSummary, from_s: f64) -> f64 {
    if from_s <= 0.0 {
        return flow.throughput_bps;
    }
    match &flow.series {
        // In-order delivery where the series has it (the simulator's), else what was carried.
        Some(s) if !s.goodput_bps.is_empty() => mean_after(&s.t, &s.goodput_bps, from_s),
        Some(s) => mean_after(&s.t, &s.throughput_bps, from_s),
        None => f64::NAN,
    }
}

/// Every flow's throughput from `from_s` to the end, in flow order.
pub fn throughputs_after(summary: &Summary, from_s: f64) -> Vec<f64> {
    summary
        .flows
        .iter()
        .map(|f| flow_throughput_after(f, from_s))
        .collect()
}

/// The mean number of packets waiting in a link's queue from `from_s` to the end.
pub fn queue_pkts_after(link: &LinkSummary, from_s: f64) -> f64 {
    match &link.series {
        Some(s) => mean_after(&s.t, &s.queue_pkts, from_s),
        None => f64::NAN,
    }
}

/// Jain's fairness index (Σx)²/(n·Σx²); NaN for no flows or no throughput.
pub fn jain(xs: &[f64]) -> f64 {
    longhaul_metrics::fairness::jain_index(xs).unwrap_or(f64::NAN)
}

/// Median; NaN for an empty slice.
pub fn median(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// A recovery ends when the window is back within this fraction of its old size: sampled
/// peaks differ by a fraction of a percent from one loss to the next, and the next loss may come
/// before the exact old sample is matched.
pub const REGAIN: f64 = 0.995;

/// Loss-recovery times: for each window reduction (a sample more than `min_drop` (a fraction)
/// below the largest window since the last recovery) the time from the last sample at that
/// largest window to the first sample that is back to [`REGAIN`] of it. Reductions before
/// `from_s`, and one still unrecovered at the end, are not counted.
///
/// This is Kelly's "recovery time" (seed 003): how long after a loss the sender needs to send
/// at its old rate again. If the window falls again by `min_drop` before it has recovered (a
/// second loss), the first recovery is abandoned and timing starts again from the second peak.
pub fn recovery_times(t: &[f64], cwnd: &[f64], min_drop: f64, from_s: f64) -> Vec<f64> {
    let mut times = Vec::new();
    let (mut peak, mut peak_t) = (f64::NAN, f64::NAN);
    // While recovering: the largest window since the reduction, and when it was seen.
    let mut recovering: Option<(f64, f64)> = None;
    for (&ti, &w) in t.iter().zip(cwnd) {
        if !w.is_finite() {
            continue;
        }
        if peak.is_nan() {
            (peak, peak_t) = (w, ti);
            continue;
        }
        match recovering {
            Some((local, local_t)) => {
                if w >= peak * REGAIN {
                    if peak_t >= from_s {
                        times.push(ti - peak_t);
                    }
                    recovering = None;
                    (peak, peak_t) = (w, ti);
                } else if w < local * (1.0 - min_drop) {
                    // A second reduction before recovery: time the recovery from its peak.
                    (peak, peak_t) = (local, local_t);
                    recovering = Some((w, ti));
                } else if w > local {
                    recovering = Some((w, ti));
                }
            }
            None => {
                if w >= peak {
                    (peak, peak_t) = (w, ti);
                } else if w < peak * (1.0 - min_drop) {
                    recovering = Some((w, ti));
                }
            }
        }
    }
    times
}

/// The time a window takes to climb from `w_from` to `w_to` packets, measured after `after_s`.
///
/// The climb is timed from the later of `after_s` and the first sample at or above `w_from` to
/// the first sample at or above `w_to`. If the window already exceeded `w_from` at `after_s`,
/// the measured part of the climb is scaled to the whole distance (a linear climb, as Reno's
/// congestion avoidance is). `None` when the window never gets to `w_to`.
pub fn climb_time(t: &[f64], cwnd: &[f64], after_s: f64, w_from: f64, w_to: f64) -> Option<f64> {
    let mut start: Option<(f64, f64)> = None;
    for (&ti, &w) in t.iter().zip(cwnd) {
        if ti < after_s || !w.is_finite() {
            continue;
        }
        match start {
            None => {
                if w >= w_to {
                    return None;
                }
                if w >= w_from {
                    start = Some((ti, w));
                }
            }
            Some((t0, w0)) => {
                if w >= w_to {
                    let measured = ti - t0;
                    return Some(measured * (w_to - w_from) / (w - w0));
                }
            }
        }
    }
    None
}

/// A run's aggregate throughput (b/s) and loss rate (packets dropped ÷ sent, over all its flows;
/// NaN if it sent nothing).
pub fn throughput_and_loss(s: &Summary) -> (f64, f64) {
    let thr = s.flows.iter().map(|f| f.throughput_bps).sum();
    let sent: f64 = s
        .flows
        .iter()
        .map(|f| f.packets_sent.unwrap_or(0) as f64)
        .sum();
    let lost: f64 = s
        .flows
        .iter()
        .map(|f| {
            f.packets_lost
                .map_or(f.loss_rate * f.packets_sent.unwrap_or(0) as f64, |l| {
                    l as f64
                })
        })
        .sum();
    (thr, if sent > 0.0 { lost / sent } else { f64::NAN })
}
