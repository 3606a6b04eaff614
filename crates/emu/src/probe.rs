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
    std::thread::spawn(move || {
        if let Some(ns) = ns {
            netns::enter(&ns).map_err(std::io::Error::other)?;
        }
        // Traffic generators get real-time priority too (below the forwarders'), so on a busy
        // machine the offered load is what was asked for.
        crate::sys::clock::make_realtime(PROBE_PRIORITY);
        Ok(f())
    })
}

fn join<T>(h: JoinHandle<std::io::Result<T>>) -> std::io::Result<T> {
    h.join()
        .map_err(|_| std::io::Error::other("probe thread panicked"))?
}

/// Receives one datagram with its kernel receive timestamp (SO_TIMESTAMPNS, CLOCK_REALTIME ns):
/// the instant the packet entered the host's stack, independent of when this thread woke up.
pub fn recv_timestamped(s: &UdpSocket, buf: &mut [u8]) -> std::io::Result<(usize, u64)> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags, SockaddrStorage};
    use std::os::fd::AsRawFd;
    let mut iov = [std::io::IoSliceMut::new(buf)];
    let mut space = nix::cmsg_space!(nix::sys::time::TimeSpec);
    let msg =
        recvmsg::<SockaddrStorage>(s.as_raw_fd(), &mut iov, Some(&mut space), MsgFlags::empty())
            .map_err(std::io::Error::from)?;
    let mut ts = None;
    for c in msg.cmsgs().map_err(std::io::Error::from)? {
        if let ControlMessageOwned::ScmTimestampns(t) = c {
            ts = Some(t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64);
        }
    }
    let n = msg.bytes;
    Ok((n, ts.unwrap_or_else(realtime_ns)))
}

fn enable_timestamps(s: &UdpSocket) -> std::io::Result<()> {
    nix::sys::socket::setsockopt(s, nix::sys::socket::sockopt::ReceiveTimestampns, &true)
        .map_err(std::io::Error::from)
}

/// Round-trip times of `count` small UDP probes from a to b and back, one every `interval`,
/// measured as TWAMP does (RFC 5357): (a's receive − a's send) − (b's send − b's receive), with
/// kernel receive timestamps, so neither end's scheduling delay counts as path delay.
/// Lost probes are left out. Returns RTTs in nanoseconds.
pub fn udp_ping(emu: &Emulator, count: usize, interval: Duration) -> std::io::Result<Vec<u64>> {
    let port = 47001;
    let b = emu.address(Side::B);
    let a = emu.address(Side::A);
    let (ready_tx, ready_rx) = mpsc::channel();
    let echo = spawn_on(emu, Side::B, move || -> std::io::Result<()> {
        let s = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port))?;
        enable_timestamps(&s)?;
        s.set_read_timeout(Some(Duration::from_secs(3)))?;
        let _ = ready_tx.send(());
        let mut buf = [0u8; 64];
        loop {
            let Ok((n, rx_at)) = recv_timestamped(&s, &mut buf) else {
                return Ok(());
            };
            if n != 20 {
                return Ok(()); // "stop"
            }
            buf[4..12].copy_from_slice(&rx_at.to_le_bytes());
            let tx_at = realtime_ns();
            buf[12..20].copy_from_slice(&tx_at.to_le_bytes());
            // The reply goes to the fixed probe port on a.
            s.send_to(&buf[..20], (a, port + 1))?;
        }
    });
    let _ = ready_rx.recv_timeout(Duration::from_secs(5));
    let client = spawn_on(emu, Side::A, move || -> std::io::Result<Vec<u64>> {
        let s = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port + 1))?;
        enable_timestamps(&s)?;
        s.connect(SocketAddrV4::new(b, port))?;
        let sent_at: std::sync::Arc<Vec<std::sync::atomic::AtomicU64>> =
            std::sync::Arc::new((0..count).map(|_| Default::default()).collect());
        let rs = s.try_clone()?;
        let sa = sent_at.clone();
        let receiver = std::thread::spawn(move || -> std::io::Result<Vec<u64>> {
            crate::sys::clock::make_realtime(PROBE_PRIORITY);
            rs.set_read_timeout(Some(Duration::from_secs(3)))?;
            let mut buf = [0u8; 64];
            let mut rtts = Vec::with_capacity(count);
            while rtts.len() < count {
                let Ok((n, rx_at)) = recv_timestamped(&rs, &mut buf) else {
                    break; // timeout: the rest are lost
                };
                if n != 20 {
                    continue;
                }
                let k = u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize;
                let b_rx = u64::from_le_bytes(buf[4..12].try_into().unwrap());
                let b_tx = u64::from_le_bytes(buf[12..20].try_into().unwrap());
                let tx = sa[k.min(count - 1)].load(std::sync::atomic::Ordering::SeqCst);
                rtts.push((rx_at - tx).saturating_sub(b_tx - b_rx));
            }
            Ok(rtts)
        });
        let start = now_ns();
        for k in 0..count {
            let due = start + interval.as_nanos() as u64 * k as u64;
            let now = now_ns();
            if due > now {
                std::thread::sleep(Duration::from_nanos(due - now));
            }
            let mut p = [0u8; 20];
            p[..4].copy_from_slice(&(k as u32).to_le_bytes());
            sent_at[k].store(realtime_ns(), std::sync::atomic::Ordering::SeqCst);
            s.send(&p)?;
        }
        let rtts = receiver
            .join()
            .map_err(|_| std::io::Error::other("receiver panicked"))??;
        let _ = s.send(b"stop");
        Ok(rtts)
    });
    let rtts = join(client)??;
    let _ = join(echo);
    Ok(rtts)
}

/// Result of a UDP flood.
#[derive(Debug, Clone, Copy)]
pub struct FloodResult {
    pub sent: u64,
    pub received: u64,
    pub received_bytes: u64,
    /// Kernel receive timestamps of the first and last packet (CLOCK_REALTIME ns).
    pub first_ns: u64,
    pub last_ns: u64,
}

impl FloodResult {
    /// Receive rate in IP bits per second between the first and last packet (IP length = UDP
    /// payload + 28).
    pub fn ip_rate_bps(&self, payload: usize) -> f64 {
        if self.received < 2 {
            return 0.0;
        }
        let ip_bits = (self.received - 1) as f64 * (payload + 28) as f64 * 8.0;
        ip_bits / ((self.last_ns - self.first_ns) as f64 / 1e9)
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
        set_rcvbuf(&s, 64 << 20);
        enable_timestamps(&s)?;
        s.set_read_timeout(Some(quiet))?;
        let _ = ready_tx.send(());
        let mut r = FloodResult {
            sent: 0,
            received: 0,
            received_bytes: 0,
            first_ns: 0,
            last_ns: 0,
        };
        let mut buf = vec![0u8; 65_536];
        // The first wait covers the sender's start-up.
        s.set_read_timeout(Some(quiet + Duration::from_secs(2)))?;
        while let Ok((n, t)) = recv_timestamped(&s, &mut buf) {
            if r.received == 0 {
                r.first_ns = t;
                s.set_read_timeout(Some(quiet))?;
            }
            r.last_ns = t;
            r.received += 1;
            r.received_bytes += n as u64;
        }
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
    pub bytes: u64,
    pub seconds: f64,
}

impl TcpResult {
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
