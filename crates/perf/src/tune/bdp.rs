//! The arithmetic of a long fat path: bandwidth-delay product, socket buffers, Reno's ramp time.
//!
//! **BDP.** A sender keeps a path full only if it has a bandwidth-delay product of data in flight:
//! `BDP = rate × RTT`. 1 Gb/s × 180 ms = 180 Mbit = 22,500,000 bytes. The window, and so the socket
//! buffers at both ends, must hold that much.
//!
//! **Buffers are 2 × BDP.** Linux counts socket memory including per-packet overhead (`skb`
//! truesize), and advertises only part of the receive buffer as window: historically half
//! (`tcp_adv_win_scale = 1`), since Linux 6.6 a measured payload/truesize ratio that is typically
//! about the same. For the same reason `setsockopt(SO_RCVBUF, x)` is granted `2x` — the FAQ's
//! "we requested 32MByte windows and were allocated 48MByte windows" (a 2.4 kernel, which added
//! half instead of doubling). So we recommend autotuning maxima of 2 × BDP, rounded up to a power
//! of two as ESnet's fasterdata tables are (64 MB, 128 MB, 256 MB ...). We never recommend lowering
//! a value, and cap at 2 GiB − 1, the largest value the kernel's `int` fields hold (fasterdata's
//! "TCP buffer size set to the maximum (2GB)" for 100G).
//!
//! **Reno's ramp.** Reno grows its window by one segment per RTT in congestion avoidance; with
//! delayed ACKs (one ACK per two segments, the Linux default of the FAQ's time) by half a segment.
//! The rate `cwnd/RTT` therefore grows at `0.5 · MTU / RTT²` per second — the FAQ's
//! `y = y0 + 0.5·t·MTU/RTT²` — and climbing from 200 to 1000 Mb/s at 180 ms with 1500-byte packets
//! takes `800e6 / (0.5 · 1500·8 / 0.18²) = 4320 s`, the FAQ's "about 4500 seconds (over an hour!)".
//! With 9000-byte jumbo frames the slope is six times steeper: 720 s. We count the full MTU per
//! segment, as the FAQ does; counting payload only (MSS 1460) would be 2.7 % slower.

use std::time::Duration;

/// The largest value `net.core.rmem_max` and the `tcp_rmem` fields hold (a C `int`).
pub const KERNEL_INT_MAX: u64 = i32::MAX as u64;

/// The path a host is tuned for.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PathSpec {
    /// Bottleneck rate, bits per second.
    pub rate_bps: f64,
    /// Round-trip time (propagation; the minimum RTT); in JSON `rtt_s`, seconds.
    #[serde(rename = "rtt_s", serialize_with = "seconds")]
    pub rtt: Duration,
    /// MTU of the path, bytes.
    pub mtu: u32,
}

/// A duration as seconds (`0.1`), as the project's JSON reports give times.
fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl PathSpec {
    /// Bandwidth-delay product in bytes: `rate × RTT / 8`, rounded up.
    pub fn bdp_bytes(&self) -> u64 {
        bdp_bytes(self.rate_bps, self.rtt)
    }

    /// BDP in MTU-sized packets, rounded up.
    pub fn bdp_packets(&self) -> u64 {
        self.bdp_bytes().div_ceil(self.mtu.max(1) as u64)
    }

    /// The socket buffer one stream needs: 2 × BDP rounded up to a power of two, capped at
    /// [`KERNEL_INT_MAX`].
    pub fn buffer_bytes(&self) -> u64 {
        buffer_for_bdp(self.bdp_bytes())
    }
}

/// `rate × RTT / 8`, in bytes, rounded up. Integer arithmetic on whole bits per second and
/// nanoseconds, so that 10 Gb/s × 85 ms is exactly 106,250,000 (0.085 has no exact binary form).
pub fn bdp_bytes(rate_bps: f64, rtt: Duration) -> u64 {
    let bits_ns = (rate_bps.max(0.0).round() as u128) * rtt.as_nanos();
    bits_ns.div_ceil(8_000_000_000).min(u64::MAX as u128) as u64
}

/// 2 × BDP rounded up to a power of two, capped at [`KERNEL_INT_MAX`].
pub fn buffer_for_bdp(bdp: u64) -> u64 {
    let want = bdp.saturating_mul(2).max(1);
    want.checked_next_power_of_two()
        .unwrap_or(u64::MAX)
        .min(KERNEL_INT_MAX)
}

/// How fast Reno's rate grows in congestion avoidance, bits per second per second:
/// `segment_bits / (acks_per_increase · RTT²)`; `acks_per_increase` is 2 with delayed ACKs.
pub fn reno_slope_bps_per_s(rtt: Duration, segment_bytes: u32, delayed_acks: bool) -> f64 {
    let b = if delayed_acks { 2.0 } else { 1.0 };
    let r = rtt.as_secs_f64();
    segment_bytes as f64 * 8.0 / (b * r * r)
}

/// Seconds Reno takes to climb from `from_bps` to `to_bps` (seed 004's formula).
pub fn reno_ramp_time_s(
    from_bps: f64,
    to_bps: f64,
    rtt: Duration,
    segment_bytes: u32,
    delayed_acks: bool,
) -> f64 {
    (to_bps - from_bps).max(0.0) / reno_slope_bps_per_s(rtt, segment_bytes, delayed_acks)
}

/// Seconds Reno takes to regain full rate after one loss halves its window.
pub fn reno_recovery_after_loss_s(p: &PathSpec, delayed_acks: bool) -> f64 {
    reno_ramp_time_s(p.rate_bps / 2.0, p.rate_bps, p.rtt, p.mtu, delayed_acks)
}

/// The transmit queue length fasterdata recommends: 10000 for 10 Gb/s and faster NICs, the Linux
/// default 1000 below.
pub fn txqueuelen_for(rate_bps: f64) -> u64 {
    if rate_bps >= 10e9 {
        10_000
    } else {
        1_000
    }
}

/// `net.core.netdev_max_backlog` per fasterdata: 250000 for 10G at ≥ 100 ms or 40G and faster,
/// 30000 for 10G, the kernel default 1000 otherwise.
pub fn netdev_backlog_for(rate_bps: f64, rtt: Duration) -> u64 {
    if rate_bps >= 40e9 || (rate_bps >= 10e9 && rtt >= Duration::from_millis(100)) {
        250_000
    } else if rate_bps >= 10e9 {
        30_000
    } else {
        1_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(rate: f64, rtt_ms: u64, mtu: u32) -> PathSpec {
        PathSpec {
            rate_bps: rate,
            rtt: Duration::from_millis(rtt_ms),
            mtu,
        }
    }

    #[test]
    fn one_gigabit_at_180_ms_is_22_5_megabytes() {
        let p = path(1e9, 180, 1500);
        assert_eq!(p.bdp_bytes(), 22_500_000);
        assert_eq!(p.bdp_packets(), 15_000);
        // 2 × 22.5 MB = 45 MB → 64 MiB.
        assert_eq!(p.buffer_bytes(), 64 << 20);
    }

    #[test]
    fn ten_gigabit_at_85_ms_and_100_gigabit_at_200_ms() {
        let p = path(10e9, 85, 9000);
        assert_eq!(p.bdp_bytes(), 106_250_000);
        assert_eq!(p.bdp_packets(), 11_806); // 106.25e6 / 9000 = 11805.6
        assert_eq!(p.buffer_bytes(), 256 << 20); // 212.5 MB → 256 MiB
        let p = path(100e9, 200, 9000);
        assert_eq!(p.bdp_bytes(), 2_500_000_000);
        // 5 GB would not fit the kernel's int: capped.
        assert_eq!(p.buffer_bytes(), 2_147_483_647);
        // fasterdata: "a 10Gbps flow across a 100ms network requires 120MB of buffering" (125 MB).
        assert_eq!(path(10e9, 100, 1500).bdp_bytes(), 125_000_000);
    }

    #[test]
    fn seed_004_reno_takes_over_an_hour_from_200_to_1000_mbps() {
        let rtt = Duration::from_millis(180);
        // Slope 0.5 · 12000 bit / 0.0324 s² = 185,185 b/s per second; 800e6 / that = 4320 s,
        // the FAQ's "about 4500 seconds (over an hour!)".
        let t = reno_ramp_time_s(200e6, 1000e6, rtt, 1500, true);
        assert!((t - 4320.0).abs() < 1e-6, "{t}");
        assert!(t > 3600.0);
        // Jumbo frames: six times as fast.
        let j = reno_ramp_time_s(200e6, 1000e6, rtt, 9000, true);
        assert!((j - 720.0).abs() < 1e-6, "{j}");
        // One ACK per segment doubles the slope.
        assert!((reno_ramp_time_s(200e6, 1000e6, rtt, 1500, false) - 2160.0).abs() < 1e-6);
        // After one loss at 1 Gb/s: rate·RTT²/(2·MTU·8) per ACK-per-segment = 1350 s, ×2 delayed.
        let p = path(1e9, 180, 1500);
        assert!((reno_recovery_after_loss_s(&p, false) - 1350.0).abs() < 1e-6);
        assert!((reno_recovery_after_loss_s(&p, true) - 2700.0).abs() < 1e-6);
    }

    #[test]
    fn queue_lengths_follow_fasterdata() {
        assert_eq!(txqueuelen_for(1e9), 1_000);
        assert_eq!(txqueuelen_for(10e9), 10_000);
        assert_eq!(netdev_backlog_for(10e9, Duration::from_millis(50)), 30_000);
        assert_eq!(
            netdev_backlog_for(10e9, Duration::from_millis(150)),
            250_000
        );
        assert_eq!(netdev_backlog_for(40e9, Duration::from_millis(10)), 250_000);
        assert_eq!(netdev_backlog_for(1e9, Duration::from_millis(180)), 1_000);
    }

    #[test]
    fn buffer_rounding() {
        assert_eq!(buffer_for_bdp(0), 1);
        assert_eq!(buffer_for_bdp(1 << 20), 2 << 20); // exact power stays
        assert_eq!(buffer_for_bdp((1 << 20) + 1), 4 << 20);
    }
}
