//! iperf-style text: a header per stream, a line per interval and stream (plus `[SUM]` with more
//! than one stream), and a closing total. Transfers are in binary units (MBytes = 2^20 bytes) and
//! bitrates in decimal ones (Mbits/sec = 10^6 bit/s), as iperf prints them; the congestion window
//! is `tcpi_snd_cwnd × tcpi_snd_mss` bytes.

use super::client::{ClientConfig, Interval, PerfRun, Progress, StreamSetup};
use longhaul_metrics::summary::Summary;
use longhaul_metrics::units;
use std::fmt::Write as _;
use std::io::Write;

/// `1.10 GBytes`, `56.0 MBytes`, `512 KBytes` (three significant digits, binary units).
pub fn format_bytes(b: f64) -> String {
    let (v, u) = if b >= (1u64 << 30) as f64 {
        (b / (1u64 << 30) as f64, "GBytes")
    } else if b >= (1u64 << 20) as f64 {
        (b / (1u64 << 20) as f64, "MBytes")
    } else if b >= 1024.0 {
        (b / 1024.0, "KBytes")
    } else {
        (b, "Bytes")
    };
    format!("{} {u}", sig3(v))
}

/// `182 ms`, `1.25 ms`, `31 us` (RTTs on loopback are microseconds); `-` when undefined.
pub fn format_ms(ms: f64) -> String {
    if !ms.is_finite() {
        "-".to_string()
    } else if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else if ms >= 1.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{:.0} us", ms * 1e3)
    }
}

/// `9.45 Gbits/sec`, `235 Mbits/sec`.
pub fn format_bitrate(bps: f64) -> String {
    let (v, u) = if bps >= 1e9 {
        (bps / 1e9, "Gbits/sec")
    } else if bps >= 1e6 {
        (bps / 1e6, "Mbits/sec")
    } else if bps >= 1e3 {
        (bps / 1e3, "Kbits/sec")
    } else {
        (bps, "bits/sec")
    };
    format!("{} {u}", sig3(v))
}

fn sig3(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The lines printed when the streams are connected.
pub fn header(cfg: &ClientConfig, streams: &[StreamSetup]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Connecting to host {}, port {}", cfg.host, cfg.port);
    for (i, st) in streams.iter().enumerate() {
        let _ = writeln!(
            s,
            "[{:>3}] local {} port {} connected to {} port {} (cc {})",
            i + 1,
            st.local.ip(),
            st.local.port(),
            st.remote.ip(),
            st.remote.port(),
            st.cc
        );
    }
    if let Some(st) = streams.first() {
        let granted = format_bytes(st.send_buffer.granted as f64);
        let _ = match st.send_buffer.requested {
            Some(r) if r != st.send_buffer.granted => writeln!(
                s,
                "TCP window size: {granted} (WARNING: requested {}; Linux doubles the request and caps it at net.core.wmem_max)",
                format_bytes(r as f64)
            ),
            Some(_) => writeln!(s, "TCP window size: {granted}"),
            None => writeln!(s, "TCP window size: {granted} (default; autotuned up to net.ipv4.tcp_wmem)"),
        };
    }
    let _ = writeln!(
        s,
        "[ ID] Interval           Transfer     Bitrate          Retr         Cwnd       RTT"
    );
    s
}

/// The lines of one interval.
pub fn interval_lines(i: &Interval) -> String {
    let mut s = String::new();
    let dt = (i.end_s - i.start_s).max(1e-9);
    for (n, st) in i.streams.iter().enumerate() {
        let cwnd = st.tcp.cwnd_pkts as f64 * st.tcp.mss as f64;
        let _ = writeln!(
            s,
            "[{:>3}] {:>6.2}-{:<6.2} sec  {:>12}  {:>15}  {:>4}  {:>12}  {:>9}",
            n + 1,
            i.start_s,
            i.end_s,
            format_bytes(st.bytes as f64),
            format_bitrate(st.bytes as f64 * 8.0 / dt),
            st.retransmits,
            format_bytes(cwnd),
            format_ms(st.tcp.rtt_us as f64 / 1e3)
        );
    }
    if i.streams.len() > 1 {
        let _ = writeln!(
            s,
            "[SUM] {:>6.2}-{:<6.2} sec  {:>12}  {:>15}  {:>4}",
            i.start_s,
            i.end_s,
            format_bytes(i.bytes() as f64),
            format_bitrate(i.bytes() as f64 * 8.0 / dt),
            i.retransmits()
        );
    }
    s
}

/// The closing lines: per-stream and total transfer over the whole run, min RTT, queueing delay,
/// and b·m/s when the distance is known.
pub fn footer(run: &PerfRun, summary: &Summary) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -"
    );
    let _ = writeln!(
        s,
        "[ ID] Interval           Transfer     Bitrate          Retr   min RTT  queueing mean/p95"
    );
    for f in &summary.flows {
        let b = f.bytes_delivered.unwrap_or(0) as f64;
        let _ = writeln!(
            s,
            "[{:>3}] {:>6.2}-{:<6.2} sec  {:>12}  {:>15}  {:>4}  {:>9}  {}/{}  delivered",
            f.id,
            0.0,
            summary.duration_s,
            format_bytes(b),
            format_bitrate(f.throughput_bps),
            f.retransmits,
            format_ms(f.min_rtt_ms),
            format_ms(f.queueing_delay_ms.mean),
            format_ms(f.queueing_delay_ms.p95)
        );
    }
    let a = &summary.aggregate;
    if summary.flows.len() > 1 {
        let retr: u64 = summary.flows.iter().map(|f| f.retransmits).sum();
        let _ = writeln!(
            s,
            "[SUM] {:>6.2}-{:<6.2} sec  {:>12}  {:>15}  {:>4}  Jain {:.3}",
            0.0,
            summary.duration_s,
            format_bytes(a.bytes_delivered.unwrap_or(0) as f64),
            format_bitrate(a.throughput_bps),
            retr,
            a.jain
        );
    }
    let _ = writeln!(
        s,
        "Sent for {:.2} s; the last interval includes {:.2} s until the server had read everything.",
        run.send_s,
        run.duration_s - run.send_s
    );
    if a.bmps.is_finite() {
        let _ = writeln!(
            s,
            "Distance-rate product: {} = {} × 10^15 b·m/s",
            units::format_bmps_lsr(a.bmps),
            units::format_bmps_e15(a.bmps)
        );
    }
    if a.utilization.is_finite() {
        let _ = writeln!(
            s,
            "Utilization: {:.1} % of the capacity net of 40-byte headers",
            a.utilization * 100.0
        );
    }
    s
}

/// Progress printed to stdout as it happens.
pub struct TextProgress;

impl Progress for TextProgress {
    fn connected(&mut self, cfg: &ClientConfig, streams: &[StreamSetup]) {
        print!("{}", header(cfg, streams));
        let _ = std::io::stdout().flush();
    }
    fn interval(&mut self, i: &Interval) {
        print!("{}", interval_lines(i));
        let _ = std::io::stdout().flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_as_iperf_prints_them() {
        // Seed 004: 56.0 MBytes in 2.0 s = 235 Mbits/sec.
        assert_eq!(format_bytes(56.0 * 1048576.0), "56.0 MBytes");
        assert_eq!(
            format_bitrate(56.0 * 1048576.0 * 8.0 / 2.0),
            "235 Mbits/sec"
        );
        assert_eq!(format_bytes(48.0 * 1048576.0), "48.0 MBytes");
        assert_eq!(format_bytes(3.0 * 1073741824.0), "3.00 GBytes");
        assert_eq!(format_bitrate(886e6), "886 Mbits/sec");
        assert_eq!(format_bitrate(1.0e9), "1.00 Gbits/sec");
        assert_eq!(format_ms(182.4), "182 ms");
        assert_eq!(format_ms(0.031), "31 us");
        assert_eq!(format_ms(f64::NAN), "-");
    }
}
