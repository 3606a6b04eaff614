//! `getsockopt(TCP_INFO)`: the kernel's view of a TCP connection (cwnd, RTT, retransmits).
//!
//! The layout is `struct tcp_info` of include/uapi/linux/tcp.h up to `tcpi_snd_wnd` (Linux 5.4).
//! The kernel copies `min(optlen, sizeof its struct)` bytes and returns the length it wrote, so an
//! older kernel leaves later fields zero; [`TcpStats::fields`] says how many bytes were filled.

use std::io;
use std::os::fd::AsRawFd;

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct RawTcpInfo {
    state: u8,
    ca_state: u8,
    retransmits: u8,
    probes: u8,
    backoff: u8,
    options: u8,
    wscale: u8,
    flags: u8,
    rto: u32,
    ato: u32,
    snd_mss: u32,
    rcv_mss: u32,
    unacked: u32,
    sacked: u32,
    lost: u32,
    retrans: u32,
    fackets: u32,
    last_data_sent: u32,
    last_ack_sent: u32,
    last_data_recv: u32,
    last_ack_recv: u32,
    pmtu: u32,
    rcv_ssthresh: u32,
    rtt: u32,
    rttvar: u32,
    snd_ssthresh: u32,
    snd_cwnd: u32,
    advmss: u32,
    reordering: u32,
    rcv_rtt: u32,
    rcv_space: u32,
    total_retrans: u32,
    pacing_rate: u64,
    max_pacing_rate: u64,
    bytes_acked: u64,
    bytes_received: u64,
    segs_out: u32,
    segs_in: u32,
    notsent_bytes: u32,
    min_rtt: u32,
    data_segs_in: u32,
    data_segs_out: u32,
    delivery_rate: u64,
    busy_time: u64,
    rwnd_limited: u64,
    sndbuf_limited: u64,
    delivered: u32,
    delivered_ce: u32,
    bytes_sent: u64,
    bytes_retrans: u64,
    dsack_dups: u32,
    reord_seen: u32,
    rcv_ooopack: u32,
    snd_wnd: u32,
}

/// The fields of `TCP_INFO` that perf reports.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TcpStats {
    /// Congestion-avoidance state (`tcpi_ca_state`): 0 open, 1 disorder, 2 CWR, 3 recovery,
    /// 4 loss ([`CA_OPEN`]).
    pub ca_state: u8,
    /// Congestion window, segments (`tcpi_snd_cwnd`).
    pub cwnd_pkts: u32,
    /// Sender MSS, bytes.
    pub mss: u32,
    /// Smoothed RTT, microseconds.
    pub rtt_us: u32,
    /// RTT variation, microseconds (`tcpi_rttvar`).
    pub rttvar_us: u32,
    /// The kernel's windowed minimum RTT, microseconds (`tcpi_min_rtt`, Linux 4.6+; 0 if absent).
    pub min_rtt_us: u32,
    /// Segments retransmitted over the connection's life.
    pub total_retrans: u32,
    /// Data segments sent, retransmissions included (Linux 4.6+).
    pub data_segs_out: u32,
    /// Segments in flight (`tcpi_unacked`).
    pub unacked: u32,
    /// Bytes written by the application and not yet sent (`tcpi_notsent_bytes`, Linux 4.6+).
    pub notsent_bytes: u32,
    /// Bytes acknowledged (`tcpi_bytes_acked`, Linux 4.1+).
    pub bytes_acked: u64,
    /// Segments delivered, SACKed ones included (`tcpi_delivered`, Linux 4.18+).
    pub delivered: u32,
    /// Delivery-rate estimate, bytes per second (Linux 4.9+).
    pub delivery_rate_bytes_per_s: u64,
    /// The kernel's pacing rate, bytes per second (`tcpi_pacing_rate`).
    pub pacing_rate_bytes_per_s: u64,
    /// Path MTU.
    pub pmtu: u32,
    /// Time the connection had data unacknowledged or unsent, microseconds (`tcpi_busy_time`,
    /// Linux 4.10+, jiffy resolution). The two below are parts of it.
    pub busy_us: u64,
    /// Of `busy_us`, time the receiver's window held the sender back (`tcpi_rwnd_limited`).
    pub rwnd_limited_us: u64,
    /// Of `busy_us`, time the send buffer limited the sender: cwnd not full, nothing left
    /// unsent, the application waiting for space (`tcpi_sndbuf_limited`).
    pub sndbuf_limited_us: u64,
    /// How many bytes of `struct tcp_info` the kernel filled.
    pub fields: usize,
}

/// `TCP_CA_Open`: no loss or reordering being handled; cwnd is the window in use.
pub const CA_OPEN: u8 = 0;

/// Read `TCP_INFO` of a connected TCP socket.
pub fn tcp_stats(sock: &impl AsRawFd) -> io::Result<TcpStats> {
    let mut raw = RawTcpInfo::default();
    let mut len = std::mem::size_of::<RawTcpInfo>() as libc::socklen_t;
    // SAFETY: `raw` is a plain-old-data struct of `len` bytes; the kernel writes at most `len`
    // bytes into it and stores the length written in `len`.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut raw as *mut RawTcpInfo).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(TcpStats {
        ca_state: raw.ca_state,
        cwnd_pkts: raw.snd_cwnd,
        mss: raw.snd_mss,
        rtt_us: raw.rtt,
        rttvar_us: raw.rttvar,
        min_rtt_us: raw.min_rtt,
        total_retrans: raw.total_retrans,
        data_segs_out: raw.data_segs_out,
        unacked: raw.unacked,
        notsent_bytes: raw.notsent_bytes,
        bytes_acked: raw.bytes_acked,
        delivered: raw.delivered,
        delivery_rate_bytes_per_s: raw.delivery_rate,
        pacing_rate_bytes_per_s: raw.pacing_rate,
        pmtu: raw.pmtu,
        busy_us: raw.busy_time,
        rwnd_limited_us: raw.rwnd_limited,
        sndbuf_limited_us: raw.sndbuf_limited,
        fields: len as usize,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_kernel_header() {
        // 8 one-byte fields + 24 u32 = 104; + 4 u64 = 136; + 6 u32 = 160; delivery_rate 168;
        // busy/rwnd/sndbuf 192; delivered(_ce) 200; bytes_sent/retrans 216; dsack/reord 224;
        // rcv_ooopack/snd_wnd 232 (sizeof(struct tcp_info) in Linux 5.4).
        assert_eq!(std::mem::size_of::<RawTcpInfo>(), 232);
    }

    #[test]
    fn a_loopback_connection_reports_cwnd_and_mss() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let s = tcp_stats(&c).unwrap();
        assert!(s.cwnd_pkts >= 1, "{s:?}");
        assert!(s.mss > 0 && s.mss <= 65535, "{s:?}");
        assert!(s.fields >= 104);
    }

    #[test]
    fn a_sender_whose_receiver_does_not_read_is_busy_and_held_back() {
        use std::io::Write;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (_peer, _) = l.accept().unwrap(); // never reads
        c.set_nonblocking(true).unwrap();
        let chunk = vec![0u8; 64 << 10];
        let filled = std::time::Instant::now();
        // Until the receiver's window and the send buffer are both full.
        while filled.elapsed() < std::time::Duration::from_secs(10) {
            match c.write(&chunk) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("{e}"),
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        let s = tcp_stats(&c).unwrap();
        // Jiffy resolution (≤ 10 ms); a loaded host only makes the wall-clock wait longer.
        assert!(s.busy_us >= 150_000, "{s:?}");
        let held = s.rwnd_limited_us + s.sndbuf_limited_us;
        assert!(held > 0 && held <= s.busy_us, "{s:?}");
        // The receiver's window is closed, so what was written beyond it waits unsent.
        assert!(s.notsent_bytes > 0, "{s:?}");
    }
}
