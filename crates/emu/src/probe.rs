//! Traffic for validating and benchmarking an emulated path: UDP ping, paced UDP flood, and a
//! kernel TCP bulk transfer, each end running on a thread inside its host's namespace (`setns`
//! is per thread, so no extra processes or external tools are needed).

use crate::emulator::{Emulator, Side};
use crate::sys::clock::{now_ns, realtime_ns};
use crate::sys::netns;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// SCHED_FIFO priority of probe threads (the forwarders run at 10).
pub const PROBE_PRIORITY: i32 = 5;

/// Runs `f` on a new thread inside the namespace of `side` (or the caller's, for the host side
/// of a shell).
pub fn spawn_on<T: Send + 'static>(
    emu: &Emulator,
    side: Side,
    f: impl FnOnce() -> T + Send + 'static,
) -> JoinHandle<std::io::Result<T>> {
    let ns = emu.namespace(side).map(String::from);
    let cpus = emu.host_cpus().map(<[usize]>::to_vec);
    std::thread::spawn(move || {
        if let Some(ns) = ns {
            netns::enter(&ns).map_err(std::io::Error::other)?;
        }
        if let Some(cpus) = cpus {
            crate::sys::clock::confine_to_cpus(&cpus).map_err(std::io::Error::from)?;
        }
        // Traffic generators get real-time priority too (below the forwarders'), so on a busy
        // machine the offered load is what was asked for. They are not under the forwarders'
        // real-time budget: charging their CPU time to it (measured) demoted the forwarder early
        // in each second and cost the 1 Gb/s flood 1–17 % of its rate under load.
        crate::sys::clock::make_realtime(PROBE_PRIORITY);
        Ok(f())
    })
}

fn join<T>(h: JoinHandle<std::io::Result<T>>) -> std::io::Result<T> {
    h.join()
        .map_err(|_| std::io::Error::other("probe thread panicked"))?
}

/// One datagram as the kernel handed it over.
#[derive(Debug, Clone, Copy)]
pub struct Received {
    /// Payload bytes.
    pub bytes: usize,
    /// Kernel receive timestamp (SO_TIMESTAMPNS, CLOCK_REALTIME ns): the instant the packet
    /// entered the host's stack, independent of when the reading thread woke up.
    pub at_ns: u64,
    /// Packets the socket had dropped for want of buffer space before this one was queued
    /// (SO_RXQ_OVFL; 0 when the socket did not ask for it). The count is taken when the packet
    /// is queued, so the drops between two packets happened between their timestamps.
    pub socket_drops: u32,
}

/// Receives one datagram with its kernel receive timestamp and, on a socket that enabled
/// SO_RXQ_OVFL, the socket's drop count.
pub fn recv_timestamped(s: &UdpSocket, buf: &mut [u8]) -> std::io::Result<Received> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags, SockaddrStorage};
    use std::os::fd::AsRawFd;
    let mut iov = [std::io::IoSliceMut::new(buf)];
    // Room for SCM_TIMESTAMPNS, the SCM_TIMESTAMPING triple the kernel adds to received
    // packets on a socket that also asked for SO_TIMESTAMPING, and SO_RXQ_OVFL's counter.
    let mut space = nix::cmsg_space!(nix::sys::time::TimeSpec, [nix::sys::time::TimeSpec; 3], u32);
    let msg =
        recvmsg::<SockaddrStorage>(s.as_raw_fd(), &mut iov, Some(&mut space), MsgFlags::empty())
            .map_err(std::io::Error::from)?;
    let mut at_ns = None;
    let mut socket_drops = 0;
    for c in msg.cmsgs().map_err(std::io::Error::from)? {
        match c {
            ControlMessageOwned::ScmTimestampns(t) => at_ns = Some(timespec_ns(&t)),
            // Sent only once the count is non-zero.
            ControlMessageOwned::RxqOvfl(n) => socket_drops = n,
            _ => {}
        }
    }
    Ok(Received {
        bytes: msg.bytes,
        at_ns: at_ns.unwrap_or_else(realtime_ns),
        socket_drops,
    })
}

fn timespec_ns(t: &nix::sys::time::TimeSpec) -> u64 {
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

fn enable_timestamps(s: &UdpSocket) -> std::io::Result<()> {
    use nix::sys::socket::{setsockopt, sockopt, TimestampingFlag as F};
    setsockopt(s, sockopt::ReceiveTimestampns, &true).map_err(std::io::Error::from)?;
    // Transmit timestamps (Documentation/networking/timestamping.rst): the kernel stamps each
    // sent packet in the device's transmit function — for a TUN device, `tun_net_xmit`, the
    // moment the packet enters the emulator's input queue — and returns the stamp on the
    // socket's error queue (OPT_TSONLY: without the packet).
    let flags = F::SOF_TIMESTAMPING_TX_SOFTWARE
        | F::SOF_TIMESTAMPING_SOFTWARE
        | F::SOF_TIMESTAMPING_OPT_TSONLY;
    setsockopt(s, sockopt::Timestamping, &flags).map_err(std::io::Error::from)
}

/// Sends `pkt` and returns the kernel's transmit timestamp of it (CLOCK_REALTIME ns, taken when
/// the packet reached the device), or the time just before the send when the kernel gave none
/// within 2 ms. The socket must have `enable_timestamps`.
fn send_timestamped(s: &UdpSocket, pkt: &[u8], to: Option<SocketAddrV4>) -> std::io::Result<u64> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags, SockaddrStorage};
    use std::os::fd::AsRawFd;
    // Stamps of earlier sends still queued (e.g. one that came after its 2 ms) must not be
    // taken for this one.
    while let Some(_stale) = errqueue_stamp(s)? {}
    let before = realtime_ns();
    match to {
        Some(a) => s.send_to(pkt, a)?,
        None => s.send(pkt)?,
    };
    let give_up = now_ns() + 2_000_000;
    loop {
        match errqueue_stamp(s)? {
            Some(t) if t > 0 => return Ok(t),
            _ => {}
        }
        if now_ns() > give_up {
            return Ok(before);
        }
        std::thread::yield_now();
    }

    /// The next error-queue entry's transmit stamp: None when the queue is empty, Some(0) for an
    /// entry without one (an ICMP error).
    fn errqueue_stamp(s: &UdpSocket) -> std::io::Result<Option<u64>> {
        let mut buf = [0u8; 64];
        let mut iov = [std::io::IoSliceMut::new(&mut buf)];
        let mut space = nix::cmsg_space!([nix::sys::time::TimeSpec; 3], [u8; 64]);
        let msg = match recvmsg::<SockaddrStorage>(
            s.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_ERRQUEUE | MsgFlags::MSG_DONTWAIT,
        ) {
            Ok(m) => m,
            Err(nix::errno::Errno::EAGAIN) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let mut ts = None;
        for c in msg.cmsgs().map_err(std::io::Error::from)? {
            if let ControlMessageOwned::ScmTimestampsns(t) = c {
                ts = Some(timespec_ns(&t.system));
            }
        }
        Ok(Some(ts.unwrap_or(0)))
    }
}

/// One probe's four timestamps (CLOCK_REALTIME ns): sent by a, received by b, sent back by b,
/// received by a. Send stamps are the kernel's at the emulator's TUN device, receive stamps the
/// kernel's when the emulator's write entered the host stack.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProbeTimes {
    /// When a sent the probe (kernel send stamp), ns since the Unix epoch.
    pub a_tx: u64,
    /// When b received it, ns since the Unix epoch.
    pub b_rx: u64,
    /// When b sent the echo back, ns since the Unix epoch.
    pub b_tx: u64,
    /// When a received the echo, ns since the Unix epoch.
    pub a_rx: u64,
}

impl ProbeTimes {
    /// Round-trip time without b's turnaround (RFC 5357's TWAMP formula).
    pub fn rtt_ns(&self) -> u64 {
        (self.a_rx.saturating_sub(self.a_tx)).saturating_sub(self.b_tx.saturating_sub(self.b_rx))
    }
    /// One-way delay a→b in ns (meaningful because both ends share this machine's clock).
    pub fn forward_ns(&self) -> u64 {
        self.b_rx.saturating_sub(self.a_tx)
    }
    /// One-way delay b→a in ns.
    pub fn reverse_ns(&self) -> u64 {
        self.a_rx.saturating_sub(self.b_tx)
    }
}

/// Round-trip times of `count` small UDP probes from a to b and back, one every `interval`,
/// in nanoseconds; lost probes are left out. See `udp_probe`.
pub fn udp_ping(emu: &Emulator, count: usize, interval: Duration) -> std::io::Result<Vec<u64>> {
    Ok(udp_probe(emu, count, interval)?
        .iter()
        .map(ProbeTimes::rtt_ns)
        .collect())
}

/// Sends `count` small UDP probes from a to b and back, one every `interval`, and returns the
/// timestamps of those that returned. The RTT is measured as TWAMP does (RFC 5357): (a's receive −
/// a's send) − (b's send − b's receive), with kernel timestamps taken at the TUN devices
/// (`enable_timestamps`), so neither end's scheduling delay nor its socket path counts as path
/// delay: what is left is the emulator's share, including how late it notices an arrival.
/// Both ends share the machine's clock, so the one-way times are meaningful too.
pub fn udp_probe(
    emu: &Emulator,
    count: usize,
    interval: Duration,
) -> std::io::Result<Vec<ProbeTimes>> {
    let port = 47001;
    let b = emu.address(Side::B);
    let a = emu.address(Side::A);
    // With pinned forwarders the probe threads share their CPU, so neither a probe's send nor
    // its release needs a cross-CPU wake-up (README "Timing"); a busy-polling forwarder owns
    // its CPU, and the probes stay on the hosts' CPUs (`spawn_on`).
    let cpu = emu.forwarder_cpu().filter(|_| emu.host_cpus().is_none());
    let pin = move || {
        if let Some(c) = cpu {
            let _ = crate::sys::clock::pin_to_cpu(c);
        }
    };
    let (ready_tx, ready_rx) = mpsc::channel();
    let echo = spawn_on(emu, Side::B, move || -> std::io::Result<Vec<(u64, u64)>> {
        pin();
        let s = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port))?;
        enable_timestamps(&s)?;
        s.set_read_timeout(Some(Duration::from_secs(3)))?;
        let _ = ready_tx.send(());
        let mut buf = [0u8; 64];
        // (b_rx, b_tx) per probe number.
        let mut times = vec![(0u64, 0u64); count];
        loop {
            let Ok(Received {
                bytes: n,
                at_ns: rx_at,
                ..
            }) = recv_timestamped(&s, &mut buf)
            else {
                return Ok(times);
            };
            if n != 4 {
                return Ok(times); // "stop"
            }
            let k = u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize;
            // The reply goes to the fixed probe port on a.
            let tx_at = send_timestamped(&s, &buf[..4], Some(SocketAddrV4::new(a, port + 1)))?;
            if let Some(t) = times.get_mut(k) {
                *t = (rx_at, tx_at);
            }
        }
    });
    let _ = ready_rx.recv_timeout(Duration::from_secs(5));
    let client = spawn_on(emu, Side::A, move || -> std::io::Result<Vec<(u64, u64)>> {
        pin();
        let s = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port + 1))?;
        enable_timestamps(&s)?;
        s.connect(SocketAddrV4::new(b, port))?;
        let rs = s.try_clone()?;
        let receiver = std::thread::spawn(move || -> std::io::Result<Vec<u64>> {
            pin();
            crate::sys::clock::make_realtime(PROBE_PRIORITY);
            rs.set_read_timeout(Some(Duration::from_secs(3)))?;
            let mut buf = [0u8; 64];
            let mut rx = vec![0u64; count];
            let mut got = 0;
            while got < count {
                let Ok(Received {
                    bytes: n,
                    at_ns: rx_at,
                    ..
                }) = recv_timestamped(&rs, &mut buf)
                else {
                    break; // timeout: the rest are lost
                };
                if n != 4 {
                    continue;
                }
                let k = u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize;
                if let Some(t) = rx.get_mut(k) {
                    *t = rx_at;
                    got += 1;
                }
            }
            Ok(rx)
        });
        let start = now_ns();
        let mut tx = vec![0u64; count];
        for (k, t) in tx.iter_mut().enumerate() {
            let due = start + interval.as_nanos() as u64 * k as u64;
            let now = now_ns();
            if due > now {
                std::thread::sleep(Duration::from_nanos(due - now));
            }
            *t = send_timestamped(&s, &(k as u32).to_le_bytes(), None)?;
        }
        let rx = receiver
            .join()
            .map_err(|_| std::io::Error::other("receiver panicked"))??;
        let _ = s.send(b"stop!");
        Ok(tx.into_iter().zip(rx).collect())
    });
    let a_times = join(client)??;
    let b_times = join(echo)??;
    Ok(a_times
        .into_iter()
        .zip(b_times)
        .filter(|((a_tx, a_rx), (b_rx, b_tx))| *a_tx > 0 && *a_rx > 0 && *b_rx > 0 && *b_tx > 0)
        .map(|((a_tx, a_rx), (b_rx, b_tx))| ProbeTimes {
            a_tx,
            b_rx,
            b_tx,
            a_rx,
        })
        .collect())
}

/// Result of a UDP flood.
#[derive(Debug, Clone)]
pub struct FloodResult {
    /// Packets the sender handed to its socket (including those the host refused with ENOBUFS).
    pub sent: u64,
    /// Packets the receiver read (not those its socket dropped).
    pub received: u64,
    /// UDP payload bytes the receiver read.
    pub received_bytes: u64,
    /// Kernel receive timestamp of every packet read, in arrival order.
    pub arrivals_ns: Vec<u64>,
    /// For every packet read, the socket's drop count when it was queued (SO_RXQ_OVFL). A
    /// receiver starved of CPU overflows its socket; the packets it lost still crossed the
    /// path, and the rates below count them.
    pub socket_drops_at: Vec<u32>,
    /// Everything the receiving socket dropped, read when the flood was over (SO_MEMINFO): also
    /// the drops after the last packet it queued, which no packet reports.
    pub socket_drops: u64,
}

impl FloodResult {
    /// Packets that reached the receiving host between arrivals `i` and `j` (indices into
    /// `arrivals_ns`): those read plus those its socket dropped in between.
    fn reached_between(&self, i: usize, j: usize) -> u64 {
        let dropped = self.socket_drops_at[j].saturating_sub(self.socket_drops_at[i]);
        (j - i) as u64 + dropped as u64
    }

    /// Rate at which packets reached the receiving host, in IP bits per second between the
    /// first and last packet (IP length = UDP payload + 28).
    pub fn ip_rate_bps(&self, payload: usize) -> f64 {
        let n = self.arrivals_ns.len();
        if n < 2 {
            return 0.0;
        }
        self.rate_between(0, n - 1, payload)
    }

    /// Rate at which packets reached the receiving host, in IP bits per second over the middle
    /// 80 % of the packets: the steady state, without the start (the queue still filling; a
    /// stall then would compress or stretch the whole measurement) and the end (the queue
    /// draining after the sender stopped), as iperf3's `--omit` leaves out slow start.
    pub fn steady_ip_rate_bps(&self, payload: usize) -> f64 {
        let n = self.arrivals_ns.len();
        if n < 2 {
            return 0.0;
        }
        let (i, j) = (n / 10, n - 1 - n / 10);
        if j <= i {
            return 0.0;
        }
        self.rate_between(i, j, payload)
    }

    fn rate_between(&self, i: usize, j: usize, payload: usize) -> f64 {
        let ip_bits = self.reached_between(i, j) as f64 * (payload + 28) as f64 * 8.0;
        ip_bits / ((self.arrivals_ns[j] - self.arrivals_ns[i]) as f64 / 1e9)
    }
}

/// Sends UDP datagrams of `payload` bytes from a to b at `rate_bps` (IP bits per second) for
/// `duration`, or as a burst of `burst` packets when `burst > 0`.
pub fn udp_flood(
    emu: &Emulator,
    payload: usize,
    rate_bps: f64,
    duration: Duration,
    burst: u64,
) -> std::io::Result<FloodResult> {
    let port = 47002;
    let b = emu.address(Side::B);
    let (ready_tx, ready_rx) = mpsc::channel();
    let quiet = Duration::from_millis(
        emu_delay_ms(emu) * 2 + 500, // wait past the path's delay before concluding
    );
    let rx = spawn_on(emu, Side::B, move || -> std::io::Result<FloodResult> {
        let s = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port))?;
        // Room for most of a 1 Gb/s flood while the reader waits for a CPU; what overflows
        // anyway is counted (SO_RXQ_OVFL) rather than taken for path loss.
        set_rcvbuf(&s, 256 << 20);
        enable_timestamps(&s)?;
        nix::sys::socket::setsockopt(&s, nix::sys::socket::sockopt::RxqOvfl, &1)
            .map_err(std::io::Error::from)?;
        s.set_read_timeout(Some(quiet))?;
        let _ = ready_tx.send(());
        let mut r = FloodResult {
            sent: 0,
            received: 0,
            received_bytes: 0,
            arrivals_ns: Vec::with_capacity(1 << 16),
            socket_drops_at: Vec::with_capacity(1 << 16),
            socket_drops: 0,
        };
        let mut buf = vec![0u8; 65_536];
        // The first wait covers the sender's start-up.
        s.set_read_timeout(Some(quiet + Duration::from_secs(2)))?;
        while let Ok(got) = recv_timestamped(&s, &mut buf) {
            if r.received == 0 {
                s.set_read_timeout(Some(quiet))?;
            }
            r.arrivals_ns.push(got.at_ns);
            r.socket_drops_at.push(got.socket_drops);
            r.received += 1;
            r.received_bytes += got.bytes as u64;
        }
        r.socket_drops = socket_drops(&s)?;
        Ok(r)
    });
    let _ = ready_rx.recv_timeout(Duration::from_secs(5));
    let tx = spawn_on(emu, Side::A, move || -> std::io::Result<u64> {
        let s = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0))?;
        s.connect(SocketAddrV4::new(b, port))?;
        let buf = vec![0x5au8; payload];
        let mut sent = 0u64;
        if burst > 0 {
            for _ in 0..burst {
                // A blocking send never drops locally; the burst reaches the TUN queue intact
                // as long as it fits its txqueuelen.
                s.send(&buf)?;
                sent += 1;
            }
            return Ok(sent);
        }
        // Paced by catching up: every wake-up sends what is due by then, then sleeps ~100 µs
        // (longer on machines with coarse timers). Bursts stay far below the TUN queue.
        let gap = (payload + 28) as f64 * 8.0 * 1e9 / rate_bps;
        let start = now_ns();
        let total = (duration.as_nanos() as f64 / gap) as u64;
        while sent < total {
            let due = (((now_ns() - start) as f64 / gap) as u64 + 1).min(total);
            if sent >= due {
                std::thread::sleep(Duration::from_micros(100));
                continue;
            }
            match s.send(&buf) {
                Ok(_) => sent += 1,
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => sent += 1,
                Err(e) => return Err(e),
            }
        }
        Ok(sent)
    });
    let sent = join(tx)??;
    let mut r = join(rx)??;
    r.sent = sent;
    Ok(r)
}

/// The longer one-way delay of the two directions, in ms.
fn emu_delay_ms(emu: &Emulator) -> u64 {
    let l = emu.link();
    l.a_to_b.delay.delay_ns.max(l.b_to_a.delay.delay_ns) / 1_000_000
}

/// Packets the socket has dropped so far (SO_MEMINFO's SK_MEMINFO_DROPS, the counter
/// SO_RXQ_OVFL reports per packet).
fn socket_drops(s: &UdpSocket) -> std::io::Result<u64> {
    use std::os::fd::AsRawFd;
    // include/uapi/linux/sock_diag.h: SK_MEMINFO_VARS counters.
    const SK_MEMINFO_VARS: usize = 9;
    let mut info = [0u32; SK_MEMINFO_VARS];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `info` and sets `len`.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MEMINFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(info[libc::SK_MEMINFO_DROPS as usize] as u64)
}

fn set_rcvbuf(s: &UdpSocket, bytes: i32) {
    use std::os::fd::AsRawFd;
    // SAFETY: setsockopt with a valid int option. SO_RCVBUFFORCE needs CAP_NET_ADMIN (we are
    // root); fall back to SO_RCVBUF.
    unsafe {
        let v = bytes;
        let p = &v as *const i32 as *const libc::c_void;
        let l = std::mem::size_of::<i32>() as libc::socklen_t;
        if libc::setsockopt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, p, l) != 0 {
            libc::setsockopt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUF, p, l);
        }
    }
}

/// Result of a TCP transfer.
#[derive(Debug, Clone, Copy)]
pub struct TcpResult {
    /// Bytes the receiver read.
    pub bytes: u64,
    /// Time from accept to end of stream at the receiver, in seconds.
    pub seconds: f64,
}

impl TcpResult {
    /// Goodput in bits per second: `bytes × 8 / seconds`.
    pub fn goodput_bps(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.seconds
    }
}

/// A kernel TCP transfer from a to b: the sender writes for `duration` (or until `limit` bytes,
/// if non-zero); goodput is measured at the receiver from accept to EOF.
pub fn tcp_transfer(emu: &Emulator, duration: Duration, limit: u64) -> std::io::Result<TcpResult> {
    let port = 47003;
    let b = emu.address(Side::B);
    let (ready_tx, ready_rx) = mpsc::channel();
    let rx = spawn_on(emu, Side::B, move || -> std::io::Result<TcpResult> {
        let l = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port))?;
        let _ = ready_tx.send(());
        let (mut c, _) = l.accept()?;
        c.set_read_timeout(Some(Duration::from_secs(30)))?;
        let start = now_ns();
        let mut buf = vec![0u8; 1 << 20];
        let mut bytes = 0u64;
        loop {
            let n = c.read(&mut buf)?;
            if n == 0 {
                break;
            }
            bytes += n as u64;
        }
        Ok(TcpResult {
            bytes,
            seconds: (now_ns() - start) as f64 / 1e9,
        })
    });
    let _ = ready_rx.recv_timeout(Duration::from_secs(5));
    let tx = spawn_on(emu, Side::A, move || -> std::io::Result<u64> {
        let mut c = TcpStream::connect_timeout(
            &SocketAddrV4::new(b, port).into(),
            Duration::from_secs(10),
        )?;
        c.set_write_timeout(Some(Duration::from_secs(30)))?;
        let buf = vec![0xa5u8; 1 << 20];
        let end = now_ns() + duration.as_nanos() as u64;
        let mut sent = 0u64;
        while now_ns() < end && (limit == 0 || sent < limit) {
            let n = if limit == 0 {
                buf.len()
            } else {
                buf.len().min((limit - sent) as usize)
            };
            c.write_all(&buf[..n])?;
            sent += n as u64;
        }
        c.shutdown(std::net::Shutdown::Write)?;
        // Wait for the receiver to close so all data is acknowledged.
        let mut x = [0u8; 1];
        let _ = c.read(&mut x);
        Ok(sent)
    });
    let sent = join(tx)??;
    let r = join(rx)??;
    if r.bytes != sent {
        return Err(std::io::Error::other(format!(
            "TCP receiver got {} of {} bytes",
            r.bytes, sent
        )));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket too small for what it is sent drops the rest; every packet it queued says how
    /// many were dropped before it, and the total is there after the last.
    #[test]
    fn socket_drops_are_counted_per_packet_and_in_total() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        // The kernel doubles the value and has a floor of a few KiB: room for a handful of
        // 1000-byte datagrams (each charged its truesize, over 2 KiB on loopback).
        nix::sys::socket::setsockopt(&rx, nix::sys::socket::sockopt::RcvBuf, &(16 << 10)).unwrap();
        nix::sys::socket::setsockopt(&rx, nix::sys::socket::sockopt::RxqOvfl, &1).unwrap();
        nix::sys::socket::setsockopt(&rx, nix::sys::socket::sockopt::ReceiveTimestampns, &true)
            .unwrap();
        rx.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        let sent = 200u64;
        for k in 0..sent as u32 {
            let mut pkt = [0u8; 1000];
            pkt[..4].copy_from_slice(&k.to_le_bytes());
            tx.send(&pkt).unwrap();
        }
        let mut buf = [0u8; 2000];
        let mut got = Vec::new();
        while let Ok(r) = recv_timestamped(&rx, &mut buf) {
            assert_eq!(r.bytes, 1000);
            got.push((
                u32::from_le_bytes(buf[..4].try_into().unwrap()),
                r.socket_drops,
            ));
        }
        let total = socket_drops(&rx).unwrap();
        assert!(total > 0 && got.len() < sent as usize, "nothing dropped");
        assert_eq!(got.len() as u64 + total, sent);
        // Datagrams carry their number: the drops before the k-th one read are the numbers
        // it skipped.
        for (read, (k, drops_before)) in got.iter().enumerate() {
            assert_eq!(*k as usize, read + *drops_before as usize, "{got:?}");
        }
    }
}
