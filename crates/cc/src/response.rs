//! Response functions: a loss-based controller's average window, in packets, against the
//! probability `p` that a packet is lost, each capped by the path where the experiment uses it.
//!
//! Sources:
//! * Reno — Mathis, Semke, Mahdavi, Ott, "The Macroscopic Behavior of the TCP Congestion
//!   Avoidance Algorithm", CCR 27(3), 1997: `rate = MSS/RTT · C/√p`, `C = √(3/2)` for one
//!   packet of growth per RTT and a halving per loss, losses evenly spaced (their eq. 3). The
//!   window is `C/√p` packets.
//! * HighSpeed — RFC 3649 §5: `w = 0.12/p^0.835` above `Low_Window` = 38 packets (standard TCP's
//!   `1.2/√p` below it, §5's "w ≤ Low_Window" case).
//! * Scalable — seed 003 (Kelly, "Scalable TCP", PFLDnet 2003; CCR 33(2), 2003), constants
//!   a = 0.01 per acknowledged packet, b = 0.125 per loss. Between two losses `1/p` packets are
//!   sent, the window grows by `a` per packet and must give back `b·W` at the loss, so losses
//!   come at `W = a/(b·p)`; the growth is ×(1+a) per RTT, so a cycle lasts
//!   `ln(1/(1−b))/a` RTTs and the average window is `(1/p)` packets over that many RTTs:
//!   `a/(p·ln(1/(1−b)))` ≈ 0.0749/p. This is the rate-independent recovery (13.4 RTTs per loss
//!   whatever the window) written as a response function; above the legacy window (16 in
//!   Kelly's paper, 100 in Linux) only, which every loss rate of the sweep is.
//! * CUBIC — RFC 9438 §5.1 (as RFC 8312 §5.1): with deterministic loss the cubic curve averages
//!   `AVG_W_cubic = (C·(3+β)/(4·(1−β)))^(1/4) · RTT^(3/4) / p^(3/4)` packets (RTT in seconds,
//!   C = 0.4, β = 0.7), and the Reno-friendly region's AIMD(α = 3(1−β)/(1+β), β) averages
//!   `AVG_W_est = √(α·(1+β)/(2·(1−β)·p)) = √(3/(2p))`, Reno's; CUBIC runs at the larger.
//!
//! All four assume losses one every `1/p` packets (periodic); the experiment's losses are
//! random (Bernoulli), which the tolerances of its claims account for (`experiments/response.rs`).

/// Reno's constant: `√(3/2)`, one packet per RTT, halving, periodic loss (Mathis et al.).
pub const MATHIS_C: f64 = 1.224_744_871_391_589;

/// The share of its window Reno keeps at a loss: Mathis et al.'s halving, also Vegas's and
/// FAST's response to a loss. The deepest decrease here: CUBIC keeps β = 0.7, Scalable 1 − b =
/// 0.875, HighSpeed 1 − b(w) with b(w) ≤ 0.5 (RFC 3649 §5).
pub const RENO_BETA: f64 = 0.5;

/// RFC 3649's `Low_Window`: HighSpeed is standard TCP at or below it.
pub const HS_LOW_WINDOW: f64 = 38.0;

/// Seed 003's Scalable increase: packets added per packet acknowledged.
pub const SCALABLE_A: f64 = 0.01;
/// Seed 003's Scalable decrease: the fraction of the window given up at a loss.
pub const SCALABLE_B: f64 = 0.125;

/// RFC 9438's CUBIC scaling constant C, packets/s³.
pub const CUBIC_C: f64 = 0.4;
/// RFC 9438's CUBIC β: the fraction of the window kept at a loss.
pub const CUBIC_BETA: f64 = 0.7;

/// Reno's average window (packets) at loss probability `p` (Mathis et al. 1997).
pub fn reno_window(p: f64) -> f64 {
    MATHIS_C / p.sqrt()
}

/// HighSpeed TCP's average window (RFC 3649 §5), standard TCP's at or below `Low_Window`.
pub fn highspeed_window(p: f64) -> f64 {
    let w = 0.12 / p.powf(0.835);
    if w > HS_LOW_WINDOW {
        w
    } else {
        reno_window(p)
    }
}

/// Scalable TCP's average window with Kelly's a and b: `a/(p·ln(1/(1−b)))`.
pub fn scalable_window(p: f64) -> f64 {
    SCALABLE_A / (p * (1.0 / (1.0 - SCALABLE_B)).ln())
}

/// CUBIC's average window (RFC 9438 §5.1) at loss probability `p` and round-trip time `rtt_s`:
/// the larger of the cubic curve's average and the Reno-friendly estimate's.
pub fn cubic_window(p: f64, rtt_s: f64) -> f64 {
    let b = CUBIC_BETA;
    let cubic =
        (CUBIC_C * (3.0 + b) / (4.0 * (1.0 - b))).powf(0.25) * rtt_s.powf(0.75) / p.powf(0.75);
    let alpha = 3.0 * (1.0 - b) / (1.0 + b);
    let est = (alpha * (1.0 + b) / (2.0 * (1.0 - b) * p)).sqrt();
    cubic.max(est)
}

/// The controllers with a response function, and each one's window at `p` and `rtt_s`. `None`
/// for a controller the sources give none for (FAST, Vegas, BBR, Lion) and for `p` ≤ 0 or not
/// a number.
pub fn window(cc: &str, p: f64, rtt_s: f64) -> Option<f64> {
    if !(p > 0.0 && p.is_finite()) {
        return None;
    }
    match cc {
        "reno" => Some(reno_window(p)),
        "highspeed" => Some(highspeed_window(p)),
        "scalable" => Some(scalable_window(p)),
        "cubic" => Some(cubic_window(p, rtt_s)),
        _ => None,
    }
}

/// How fast the window falls with `p` (`w ∝ p^−e`) near `p`: the exponent `e`, for turning a
/// relative error in the loss rate into one in the window. `None` as for [`window`].
pub fn loss_exponent(cc: &str, p: f64, rtt_s: f64) -> Option<f64> {
    let w = window(cc, p, rtt_s)?;
    let w2 = window(cc, p * 1.01, rtt_s)?;
    Some((w / w2).ln() / 1.01_f64.ln())
}

/// A window of `w` packets of `payload_bytes` each per `rtt_s` as a rate in b/s, at most
/// `capacity_bps`.
pub fn capped_rate_bps(w: f64, payload_bytes: f64, rtt_s: f64, capacity_bps: f64) -> f64 {
    (w * payload_bytes * 8.0 / rtt_s).min(capacity_bps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn reno_is_mathis() {
        // 1.2247/√1e-6 = 1224.7; 1.2247/√1e-4 = 122.47.
        assert!(close(reno_window(1e-6), 1224.74, 1e-5));
        assert!(close(reno_window(1e-4), 122.474, 1e-5));
        assert!((MATHIS_C - (1.5f64).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn highspeed_is_rfc3649() {
        // 0.12 / (1e-6)^0.835 = 0.12 · 10^5.01 = 12,281; RFC 3649's table: w = 12,279 at 1e-6.
        assert!(close(highspeed_window(1e-6), 12_281.0, 1e-3));
        // 0.12 · 10^3.34 = 262.6 at 1e-4.
        assert!(close(highspeed_window(1e-4), 262.6, 1e-3));
        // 1e-2: 0.12 · 10^1.67 = 5.6 < 38, so standard TCP's 1.2247/0.1 = 12.2.
        assert!(close(highspeed_window(1e-2), 12.247, 1e-3));
    }

    #[test]
    fn scalable_is_inverse_in_p() {
        // 0.01 / (1e-5 · ln(8/7)) = 0.01 / (1e-5 · 0.133531) = 7,488.9.
        assert!(close(scalable_window(1e-5), 7_488.9, 1e-4));
        assert!(close(
            scalable_window(1e-4) * 10.0,
            scalable_window(1e-5),
            1e-12
        ));
    }

    #[test]
    fn cubic_is_rfc9438_with_the_reno_friendly_region() {
        // (0.4·3.7/1.2)^(1/4) = 1.05382; 0.18^(3/4) = 0.276497; 1e-6^(−3/4) = 31,622.8:
        // 9,214.2 packets.
        assert!(close(cubic_window(1e-6, 0.18), 9_214.2, 1e-3));
        // At 1e-4: 1.05382 · 0.276497 · 1000 = 291.4 > Reno's 122.5.
        assert!(close(cubic_window(1e-4, 0.18), 291.4, 1e-3));
        // A short RTT makes the cubic curve slow: at 1 ms and 1e-4 it is 1.05382 · 0.005623 ·
        // 1000 = 5.9 packets, under the Reno-friendly 122.5, which wins.
        assert!(close(cubic_window(1e-4, 0.001), 122.474, 1e-4));
    }

    #[test]
    fn exponents_and_edges() {
        assert!(close(loss_exponent("reno", 1e-6, 0.18).unwrap(), 0.5, 1e-9));
        assert!(close(
            loss_exponent("highspeed", 1e-6, 0.18).unwrap(),
            0.835,
            1e-9
        ));
        assert!(close(
            loss_exponent("scalable", 1e-6, 0.18).unwrap(),
            1.0,
            1e-9
        ));
        assert!(close(
            loss_exponent("cubic", 1e-6, 0.18).unwrap(),
            0.75,
            1e-9
        ));
        assert_eq!(window("fast", 1e-6, 0.18), None);
        assert_eq!(window("reno", 0.0, 0.18), None);
        assert_eq!(window("reno", f64::NAN, 0.18), None);
        // 1,224.7 packets of 1443 bytes per 180 ms = 78.55 Mb/s; a 1 Gb/s cap leaves it.
        assert!(close(
            capped_rate_bps(reno_window(1e-6), 1443.0, 0.18, 1e9),
            78.55e6,
            1e-3
        ));
        assert_eq!(capped_rate_bps(1e9, 1443.0, 0.18, 1e9), 1e9);
    }
}
