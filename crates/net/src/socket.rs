//! A UDP socket as a connection's network side, and the driver loop's clock and wait.
//!
//! The sans-IO [`Connection`] decides what to send and when; this module moves its datagrams:
//! [`flush`] hands every datagram the connection has ready to the socket, [`wait`] sleeps until
//! a datagram arrives or the connection's next deadline (`poll_timeout`, which includes the
//! pacer's next release) with `ppoll`'s nanosecond timeout, so pacing is as fine as the kernel's
//! timers (Linux's default slack is 50 µs; the pacer's burst allowance absorbs it).
//!
//! One datagram per system call (`send_to`/`recv_from`): at 1 Gb/s and 1500-byte packets that is
//! 83 k calls a second each way, within one core's reach; `sendmmsg`/GSO batching is the step
//! beyond that and is not taken here.

use longhaul_proto::{Connection, PacketKind, Time};
use nix::poll::{ppoll, PollFd, PollFlags};
use nix::sys::time::TimeSpec;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// Socket buffers to ask for: a burst of a window at 1 Gb/s × 200 ms is 25 MB, but what the
/// socket buffer must absorb is only what arrives between two turns of the loop. Linux caps the
/// request at `net.core.{r,w}mem_max` (`longhaul tune` prints the sysctl).
pub const SOCKET_BUFFER: usize = 8 << 20;

/// Datagrams read per turn of the loop before the connection gets to send.
const RECV_BATCH: usize = 256;

/// Nanoseconds since the driver started: the connection's clock.
#[derive(Clone, Copy)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    pub fn start() -> Clock {
        Clock {
            start: Instant::now(),
        }
    }

    pub fn now(&self) -> Time {
        Time::from_nanos(self.start.elapsed().as_nanos() as u64)
    }

    pub fn instant(&self, t: Time) -> Instant {
        self.start + Duration::from_nanos(t.as_nanos())
    }
}

/// Bind a non-blocking UDP socket with large buffers; returns the buffer sizes granted.
pub fn bind(addr: SocketAddr) -> io::Result<(UdpSocket, usize, usize)> {
    let domain = socket2::Domain::for_address(addr);
    let s = socket2::Socket::new(domain, socket2::Type::DGRAM, Some(socket2::Protocol::UDP))?;
    if addr.is_ipv6() && addr.ip().is_unspecified() {
        // Serve IPv4 peers too, as mapped addresses.
        let _ = s.set_only_v6(false);
    }
    // A refused size is not fatal: the transfer is merely more exposed to bursts.
    let _ = s.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = s.set_send_buffer_size(SOCKET_BUFFER);
    s.bind(&addr.into())?;
    s.set_nonblocking(true)?;
    let (r, w) = (s.recv_buffer_size()?, s.send_buffer_size()?);
    Ok((s.into(), r, w))
}

/// Counters of what the socket did, beside the connection's own.
#[derive(Clone, Copy, Debug, Default)]
pub struct SocketStats {
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    /// Data packets the kernel would not take (a full socket or device queue): handed back to
    /// the connection as local drops, which it resends and counts as congestion.
    pub local_drops: u64,
    /// The socket was full when the loop last sent: wait for it to drain.
    pub blocked: bool,
}

/// Send what `conn` has ready to `peer` (`None`: a connected socket). Stops early when the
/// socket is full; other send errors are returned (a connected socket reports the peer's ICMP
/// port-unreachable as `ConnectionRefused`).
pub fn flush(
    sock: &UdpSocket,
    peer: Option<SocketAddr>,
    conn: &mut Connection,
    now: Time,
    buf: &mut [u8],
    stats: &mut SocketStats,
) -> io::Result<()> {
    stats.blocked = false;
    while let Some(t) = conn.poll_transmit(now, buf) {
        let sent = match peer {
            Some(p) => sock.send_to(&buf[..t.len], p),
            None => sock.send(&buf[..t.len]),
        };
        match sent {
            Ok(_) => stats.datagrams_sent += 1,
            Err(e) if is_full(&e) => {
                if t.kind == PacketKind::Data {
                    if let Some(pn) = t.packet_number {
                        conn.on_local_drop(now, pn);
                    }
                }
                stats.local_drops += 1;
                stats.blocked = true;
                return Ok(());
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn is_full(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::WouldBlock || e.raw_os_error() == Some(libc_enobufs())
}

fn libc_enobufs() -> i32 {
    nix::errno::Errno::ENOBUFS as i32
}

/// Read up to a batch of datagrams; `deliver` gets each with its source.
pub fn receive(
    sock: &UdpSocket,
    buf: &mut [u8],
    stats: &mut SocketStats,
    mut deliver: impl FnMut(SocketAddr, &[u8]),
) -> io::Result<()> {
    for _ in 0..RECV_BATCH {
        match sock.recv_from(buf) {
            Ok((n, from)) => {
                stats.datagrams_received += 1;
                deliver(from, &buf[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            // A connected socket hears of an earlier datagram's ICMP error here.
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Sleep until `sock` is readable (or writable, when `want_write`), or until `deadline`.
/// Returns at once when the deadline has passed; a signal ends the wait early.
pub fn wait(sock: &UdpSocket, deadline: Option<Instant>, want_write: bool) -> io::Result<()> {
    let timeout = match deadline {
        Some(d) => {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            Some(TimeSpec::from_duration(left))
        }
        None => None,
    };
    let mut events = PollFlags::POLLIN;
    if want_write {
        events |= PollFlags::POLLOUT;
    }
    let mut fds = [PollFd::new(sock.as_fd(), events)];
    match ppoll(&mut fds, timeout, None) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(()),
        Err(e) => Err(io::Error::from(e)),
    }
}

/// The earliest of two optional deadlines.
pub fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}
