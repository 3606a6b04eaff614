//! A UDP socket as a connection's network side, and the driver loop's clock and wait.
//!
//! Sending (batches, GSO), receiving (GRO, arrival stamps) and waiting act on one socket's
//! options and counters, which is why they share this file and it runs past 800 lines.
//!
//! The sans-IO [`Connection`] decides what to send and when; [`UdpPort`] moves its datagrams:
//! `flush` hands every datagram the connection has ready to the kernel, `receive` reads what
//! arrived, `wait` sleeps until a datagram arrives or the connection's next deadline
//! (`poll_timeout`, which includes the pacer's next release) with `ppoll`'s nanosecond timeout,
//! so pacing is as fine as the kernel's timers (Linux's default slack is 50 µs; the pacer's burst
//! allowance absorbs it).
//!
//! **Segmentation offload.** At 1 Gb/s and 1500-byte packets a datagram per system call is 83 k
//! calls a second each way; at 10 Gb/s it is more than a core can make. With UDP GSO (Linux
//! ≥ 4.18, `UDP_SEGMENT`) the datagrams that one `flush` produces back to back — a paced burst —
//! leave in one `send` of up to [`MAX_SEGMENTS`] equal-sized segments (the last may be shorter),
//! which the kernel (or the NIC) cuts into datagrams. The segment size goes with each send (a
//! `UDP_SEGMENT` control message), as the full data packet's size, which path MTU discovery
//! changes, is when the batch is built; a batch holds only full data packets and one shorter
//! last datagram, and anything else (an ACK, a larger probe) goes in a batch of its own. With
//! UDP GRO (`UDP_GRO`, Linux ≥ 5.0) the
//! receiving kernel hands over runs of a flow's datagrams in one buffer with their segment size,
//! which `receive` cuts apart again. Neither changes what is on the wire, nor the timing of the
//! datagrams within a burst (they leave back to back either way). Where the kernel or the route
//! refuses (an old kernel, a device without checksum offload), the port falls back to one
//! datagram per call.
//!
//! **Payloads from the file's chunks.** A data packet's payload is not copied into the batch:
//! it is lent from the chunk the application gave (`Connection::poll_transmit_vectored`). With
//! security off the send is one `sendmsg` of header and payload slices (`send_datagrams`);
//! with security on the datagram's seal encrypts the payload from the chunk into the batch
//! (why, and how a chunk is kept from being refilled meanwhile, in [`crate::send_thread`]).
//!
//! **A sending thread.** With [`UdpPort::start_send_thread`], `flush` builds the same batches
//! with their seals pending and hands them to [`crate::send_thread`], which seals and sends
//! them on another core; what it met (a full socket, an error) comes back at the next `flush`.
//!
//! **Arrival times.** An ACK's arrival time is half of an RTT sample, and RTT is FAST's and
//! Vegas's congestion signal: a loop that reads a datagram a few milliseconds after it arrived
//! (busy hashing the file, preempted on a loaded host) would report queueing that is not on the
//! path. So the kernel stamps each datagram as it arrives (`SO_TIMESTAMPNS`, wall clock) and
//! `receive` converts the stamp to the connection's clock by the lag since it was taken; where
//! the stamp is missing, the datagram is stamped as it is read. (So it is for the first few
//! milliseconds after the first socket on a host asks for stamps: the kernel switches stamping
//! on asynchronously and meanwhile stamps a datagram when it is read.) The connection's `now`
//! must not run backwards, so a datagram that waited while the loop read the clock for other
//! work is handled at that later time; its stamp goes with it ([`Arrival`]) and is what its RTT
//! sample and the ACK delay it starts count from (`Connection::handle_packet_at`). How many
//! arrivals the clock floor moves, and by how much, through the emulated long path is in
//! bench/README.md ("The receiving host's cost per packet").

use crate::recv_thread::{Openers, RecvThread};
use crate::send_thread::{OutBatch, SendOutcome, SendThread};
use longhaul_proto::{Connection, OpenAttempt, Time};
use nix::errno::Errno;
use nix::poll::{ppoll, PollFd, PollFlags};
use nix::sys::socket::{
    recvmsg, sendmsg, setsockopt, sockopt, ControlMessage, ControlMessageOwned, MsgFlags,
    SockaddrLike, SockaddrStorage,
};
use nix::sys::time::TimeSpec;
use std::cell::Cell;
use std::io::{self, IoSlice, IoSliceMut};
use std::net::{SocketAddr, UdpSocket};
use std::ops::Range;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The receive buffer to ask for: it must absorb what arrives between two turns of the loop,
/// counted at the kernel's cost of each datagram held (a 64 KiB datagram on loopback costs more
/// than its bytes). With 8 MiB a loopback receiver of 64 KiB datagrams still overflowed now and
/// then (660–1,010 datagrams resent per 2 GiB); with 32 MiB none (bench/README.md,
/// "Datagrams received into the file's piece"). Linux caps the request at
/// `net.core.rmem_max` for an unprivileged process (`longhaul tune` prints the sysctl) and
/// doubles what it grants, for bookkeeping. The buffer is a limit, not memory taken up front.
pub const RECV_SOCKET_BUFFER: usize = 32 << 20;
/// The send buffer to ask for (capped at `net.core.wmem_max` likewise): a batch of GSO sends
/// must fit; more only queues datagrams in the kernel, out of the pacer's reach.
pub const SEND_SOCKET_BUFFER: usize = 8 << 20;

/// Most segments in one GSO send (Linux's `UDP_MAX_SEGMENTS` is 128; a 64 KB send of 1472-byte
/// datagrams holds 44).
pub const MAX_SEGMENTS: usize = 64;
/// Largest GSO send (the IP packet's 16-bit length, less headers).
const MAX_GSO_BYTES: usize = 65_000;
/// Largest buffer a GRO read can fill.
pub(crate) const MAX_GRO_BYTES: usize = 65_535;

/// Datagrams (or GRO buffers) read per turn of the loop before the connection gets to send.
pub const RECV_BATCH: usize = 256;
/// Bytes read per turn of the loop, at most (and a datagram more): what a turn stores in the
/// connection's reassembly pages is then still in the core's 2 MiB L2 cache when the
/// application reads it out, and the ACKs for it leave sooner. Unbounded, a turn on loopback
/// read up to 16 MiB (256 GRO buffers), and copying the pages out took three times as long
/// as copying them in (bench/README.md, "A turn of the receive loop reads at most 512 KiB").
pub const RECV_BATCH_BYTES: usize = 512 << 10;

/// Nanoseconds since the driver started: the connection's clock. It never runs backwards for
/// the connection: a datagram's arrival time (`arrival`) is no earlier than the latest time
/// the clock gave out.
pub struct Clock {
    start: Instant,
    /// The latest time `now` or `arrival` returned.
    given: Cell<Time>,
}

impl Clock {
    /// A clock that reads 0 now.
    pub fn start() -> Clock {
        Clock {
            start: Instant::now(),
            given: Cell::new(Time::ZERO),
        }
    }

    /// The time now; never earlier than a time given out before.
    pub fn now(&self) -> Time {
        let t = self.read();
        self.given.set(t);
        t
    }

    /// The instant of time `t` on this clock.
    pub fn instant(&self, t: Time) -> Instant {
        self.start + Duration::from_nanos(t.as_nanos())
    }

    fn read(&self) -> Time {
        Time::from_nanos(self.start.elapsed().as_nanos() as u64)
    }

    /// The times to give the connection for a datagram the kernel stamped at `stamp`.
    fn arrival(&self, stamp: Option<TimeSpec>) -> Arrival {
        let stamped = self.stamped(stamp);
        let now = stamped.max(self.given.get());
        self.given.set(now);
        Arrival { now, stamped }
    }

    /// The arrival time on this clock of a datagram the kernel stamped at `stamp` (wall
    /// clock): now, less the time since the stamp. The lag is read on the wall clock alone, so
    /// the two clocks need no common origin; a lag that is negative or over a second (the wall
    /// clock was stepped in between) is not believed, and the datagram counts as arriving now.
    fn stamped(&self, stamp: Option<TimeSpec>) -> Time {
        let Some(ts) = stamp else { return self.read() };
        let (now, wall) = self.read_both();
        let Some(wall) = wall else { return now };
        let stamped = Duration::new(
            ts.tv_sec().max(0) as u64,
            ts.tv_nsec().clamp(0, 999_999_999) as u32,
        );
        match wall.checked_sub(stamped) {
            Some(lag) if lag < Duration::from_secs(1) => {
                Time::from_nanos(now.as_nanos().saturating_sub(lag.as_nanos() as u64))
            }
            _ => now,
        }
    }

    /// This clock and the wall clock read together. A thread preempted between the two
    /// readings would put every stamp converted with them early by as long as it waited, and
    /// an RTT sample short by as much (a preempted sender beside a real-time emulator measured
    /// a 50 ms path's minimum at 48.9 ms); so the wall clock is read between two readings of
    /// this one, again if they lie more than [`PAIR_WIDTH`] apart, and paired with the later
    /// one: a stamp may come out late by the pair's width, never early.
    fn read_both(&self) -> (Time, Option<Duration>) {
        let mut tries = 0;
        loop {
            let before = self.read();
            let wall = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .ok();
            let after = self.read();
            tries += 1;
            if after - before <= PAIR_WIDTH || tries == 3 {
                return (after, wall);
            }
        }
    }
}

/// Widest pair of clock readings `Clock::read_both` accepts at once (a vDSO clock read takes
/// tens of ns; a pair wider than this had the thread preempted in between).
const PAIR_WIDTH: Duration = Duration::from_micros(20);

/// When a datagram arrived, on the connection's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// The kernel's stamp: when the datagram entered the host. For RTT samples and ACK delays
    /// (`Connection::handle_packet_at`).
    pub stamped: Time,
    /// The stamp, but no earlier than any time the clock gave out before: the connection's
    /// `now`, which must not run backwards. Later than `stamped` when the loop read the clock
    /// after the datagram arrived and before it read the datagram (busy, or preempted).
    pub now: Time,
}

/// Counters of what the socket did, beside the connection's own.
#[derive(Clone, Copy, Debug, Default)]
pub struct SocketStats {
    /// Datagrams handed to the kernel.
    pub datagrams_sent: u64,
    /// System calls that sent them (fewer than datagrams with GSO).
    pub send_calls: u64,
    /// Of the data packets' payload bytes, those sent from where the application gave them
    /// (lent by `Connection::poll_transmit_vectored`) rather than copied into a batch first.
    /// Security off only: a payload lent to a seal lands in the batch as ciphertext.
    pub bytes_lent: u64,
    /// Datagrams read.
    pub datagrams_received: u64,
    /// System calls that read them (fewer than datagrams with GRO).
    pub recv_calls: u64,
    /// Data packets the kernel would not take (a full socket or device queue): handed back to
    /// the connection as local drops, which it resends and counts as congestion.
    pub local_drops: u64,
    /// The socket was full when the loop last sent: wait for it to drain.
    pub blocked: bool,
}

/// A non-blocking UDP socket with large buffers and, where the kernel has them, GSO and GRO.
pub struct UdpPort {
    sock: UdpSocket,
    /// Sends are segmented by the kernel (GSO): the socket takes `UDP_SEGMENT`.
    gso: bool,
    /// How datagrams are read (GRO, arrival stamps).
    reader: Reader,
    /// Receive buffer the kernel granted, bytes (Linux reports twice the usable size).
    pub recv_buffer: usize,
    /// The batch being built and sent here when no sending thread runs.
    batch: OutBatch,
    /// Where `flush` hands its batches when sealing and sending run on a thread of their own.
    send_thread: Option<SendThread>,
    /// What reads the socket (and opens datagrams) when that runs on a thread of its own.
    recv_thread: Option<RecvThread>,
    /// What the socket did so far.
    pub stats: SocketStats,
}

impl UdpPort {
    /// Bind to `addr`. `max_datagram` is the connection's largest datagram; `offload` asks for
    /// GSO and GRO.
    pub fn bind(addr: SocketAddr, max_datagram: usize, offload: bool) -> io::Result<UdpPort> {
        let domain = socket2::Domain::for_address(addr);
        let s = socket2::Socket::new(domain, socket2::Type::DGRAM, Some(socket2::Protocol::UDP))?;
        if addr.is_ipv6() && addr.ip().is_unspecified() {
            // Serve IPv4 peers too, as mapped addresses.
            let _ = s.set_only_v6(false);
        }
        // Linux caps a request at net.core.{r,w}mem_max unless the process may override it
        // (CAP_NET_ADMIN: SO_RCVBUFFORCE); a refused size is not fatal, the transfer is merely
        // more exposed to bursts. (On loopback with rmem_max at 4 MiB a receiver busy hashing
        // overflowed its socket with 3.4 % of a 3 GiB transfer; with the full size, nothing.)
        if setsockopt(&s, sockopt::RcvBufForce, &RECV_SOCKET_BUFFER).is_err() {
            let _ = s.set_recv_buffer_size(RECV_SOCKET_BUFFER);
        }
        if setsockopt(&s, sockopt::SndBufForce, &SEND_SOCKET_BUFFER).is_err() {
            let _ = s.set_send_buffer_size(SEND_SOCKET_BUFFER);
        }
        s.bind(&addr.into())?;
        s.set_nonblocking(true)?;
        let recv_buffer = s.recv_buffer_size()?;
        let sock: UdpSocket = s.into();
        let (mut gso, mut gro) = (false, false);
        if offload {
            // Segment sizes go with each send; 0 here says the kernel has the option and leaves
            // a datagram sent without one whole.
            gso = setsockopt(&sock, sockopt::UdpGsoSegment, &0).is_ok();
            gro = setsockopt(&sock, sockopt::UdpGroSegment, &true).is_ok();
        }
        let timestamps = setsockopt(&sock, sockopt::ReceiveTimestampns, &true).is_ok();
        Ok(UdpPort {
            sock,
            gso,
            reader: Reader::new(gro, timestamps),
            recv_buffer,
            batch: OutBatch::with_capacity(MAX_GSO_BYTES + max_datagram, MAX_SEGMENTS),
            send_thread: None,
            recv_thread: None,
            stats: SocketStats::default(),
        })
    }

    /// Turns the kernel's receive coalescing (GRO) on or off, where it was asked for at
    /// `bind`: off, every datagram is read with its own arrival stamp.
    pub fn set_receive_coalescing(&self, on: bool) {
        if self.reader.gro {
            let _ = setsockopt(&self.sock, sockopt::UdpGroSegment, &on);
        }
    }

    /// The socket.
    pub fn socket(&self) -> &UdpSocket {
        &self.sock
    }

    /// Whether sends are segmented by the kernel (GSO) and reads coalesced (GRO).
    pub fn offloads(&self) -> (bool, bool) {
        (self.gso, self.reader.gro)
    }

    /// From now on, seal and send on a thread of its own ([`crate::send_thread`]); for a
    /// connected socket with one connection.
    pub fn start_send_thread(&mut self) -> io::Result<()> {
        let sock = self.sock.try_clone()?;
        self.send_thread = Some(SendThread::start(sock, None, self.gso)?);
        Ok(())
    }

    /// From now on, read the socket (and open sealed datagrams) on a thread of its own
    /// ([`crate::recv_thread`]); `receive_batch` then takes what it read.
    pub fn start_recv_thread(&mut self) -> io::Result<()> {
        let sock = self.sock.try_clone()?;
        self.recv_thread = Some(RecvThread::start(sock, self.reader.another())?);
        Ok(())
    }

    /// Where the sessions' receive keys go for the receiving thread, if one runs.
    pub fn openers(&self) -> Option<&Arc<Openers>> {
        self.recv_thread.as_ref().map(|t| &t.openers)
    }

    /// Take one batch the receiving thread read, if one is waiting: `deliver` gets each
    /// datagram with its source, its arrival time on `clock` and what opening it gave. Returns
    /// whether there was a batch (more may wait); a read error the thread met is returned.
    pub fn receive_batch(
        &mut self,
        clock: &Clock,
        mut deliver: impl FnMut(SocketAddr, &mut [u8], Arrival, OpenAttempt),
    ) -> io::Result<bool> {
        let Some(thread) = self.recv_thread.as_mut() else {
            return Ok(false);
        };
        let Some(mut batch) = thread.take() else {
            return Ok(false);
        };
        self.stats.recv_calls += batch.calls;
        for d in &batch.datagrams {
            self.stats.datagrams_received += 1;
            let at = clock.arrival(Some(d.stamp));
            deliver(d.from, &mut batch.bytes[d.range.clone()], at, d.attempt);
        }
        let error = batch.error.take();
        thread.reuse(batch);
        match error {
            Some(e) => Err(e),
            None => Ok(true),
        }
    }

    /// Close `conn` and send its close packet now (best effort: the peer's idle timer covers a
    /// lost one); a sending thread, if there is one, sends it and stops.
    pub fn close(&mut self, peer: Option<SocketAddr>, conn: &mut Connection, now: Time) {
        conn.close();
        let _ = self.flush(peer, conn, now);
        let _ = self.stop_send_thread(conn, now);
    }

    /// Wait until the sending thread (if one runs) has sent everything handed to it, and take
    /// its last reports into the counters; sends after this are the loop's own again.
    pub fn stop_send_thread(&mut self, conn: &mut Connection, now: Time) -> io::Result<()> {
        let Some(mut thread) = self.send_thread.take() else {
            return Ok(());
        };
        thread.finish();
        self.take_reports(&mut thread, conn, now).map(|_| ())
    }

    /// Send what `conn` has ready to `peer` (`None`: a connected socket). Stops early when the
    /// socket is full; other send errors are returned (a connected socket reports the peer's
    /// ICMP port-unreachable as `ConnectionRefused`). With a sending thread, the errors and
    /// full sockets it met since the last call are what this one reports.
    pub fn flush(
        &mut self,
        peer: Option<SocketAddr>,
        conn: &mut Connection,
        now: Time,
    ) -> io::Result<()> {
        let mut thread = self.send_thread.take();
        let result = self.flush_via(peer, thread.as_mut(), conn, now);
        self.send_thread = thread;
        result
    }

    /// `flush`, the batches sent here or handed to the sending thread, which seals and sends
    /// them there.
    fn flush_via(
        &mut self,
        peer: Option<SocketAddr>,
        mut thread: Option<&mut SendThread>,
        conn: &mut Connection,
        now: Time,
    ) -> io::Result<()> {
        // A batch found the socket full (on the sending thread, since the last call): wait
        // for it to drain, as when it is found full here.
        self.stats.blocked = match thread.as_deref_mut() {
            Some(t) => self.take_reports(t, conn, now)?,
            None => false,
        };
        if self.stats.blocked {
            return Ok(());
        }
        // The size of a full data packet now: a batch is made of these.
        let full = conn.data_datagram_size();
        let mut batch = match thread.as_deref_mut() {
            Some(t) => t.batch(),
            None => std::mem::take(&mut self.batch),
        };
        let mut result: io::Result<bool> = Ok(true);
        loop {
            // Room for what the connection has next; once a batch has begun, only for another
            // of its segments (a larger datagram, a probe, waits for the next batch).
            let max = match batch.count {
                0 => conn.datagram_room(),
                _ => batch.segment,
            };
            // A data packet's payload in a file chunk is lent, not written into the batch:
            // it goes from the chunk to the kernel, or to its seal (`send_thread`).
            let Some((t, seal, payload)) = conn.poll_transmit_vectored(now, batch.room(max)) else {
                break;
            };
            let len = batch.push(&t, seal, payload);
            self.stats.bytes_lent += (len - t.len) as u64;
            // A batch grows while its datagrams are full data packets; a shorter one ends it.
            let segment = self.gso && len == full && len == batch.segment;
            let room = batch.len() + full <= MAX_GSO_BYTES && batch.count < MAX_SEGMENTS;
            if !(segment && room) {
                result = self.dispatch(peer, thread.as_deref_mut(), &mut batch, conn, now);
                if !matches!(result, Ok(true)) {
                    break;
                }
            }
        }
        if batch.count > 0 && matches!(result, Ok(true)) {
            result = self.dispatch(peer, thread.as_deref_mut(), &mut batch, conn, now);
        }
        match thread {
            Some(t) => t.reuse(batch),
            None => {
                batch.clear();
                self.batch = batch;
            }
        }
        result.map(|_| ())
    }

    /// Send `batch` here, or hand it to the sending thread (`batch` is then a fresh one).
    /// Returns whether to go on: false when it found the socket full here.
    fn dispatch(
        &mut self,
        peer: Option<SocketAddr>,
        thread: Option<&mut SendThread>,
        batch: &mut OutBatch,
        conn: &mut Connection,
        now: Time,
    ) -> io::Result<bool> {
        if let Some(t) = thread {
            let next = t.batch();
            t.send(std::mem::replace(batch, next))?;
            return Ok(true);
        }
        let (outcome, calls) = batch.transmit(&self.sock, peer, &mut self.gso);
        let full = self.account(batch, outcome, calls, conn, now);
        batch.clear();
        self.stats.blocked = matches!(full, Ok(true));
        full.map(|full| !full)
    }

    /// Take the sending thread's reports into the counters ([`UdpPort::account`]). Returns
    /// whether a batch found the socket full; an error the thread met is returned.
    fn take_reports(
        &mut self,
        thread: &mut SendThread,
        conn: &mut Connection,
        now: Time,
    ) -> io::Result<bool> {
        let mut full = false;
        while let Some(r) = thread.report() {
            if !r.gso {
                self.gso = false;
            }
            let counted = self.account(&r.batch, r.outcome, r.calls, conn, now);
            thread.reuse(r.batch);
            full |= counted?;
        }
        Ok(full)
    }

    /// What became of `batch` (sent here or by the sending thread, in `calls` system calls):
    /// counted as sent, or its data packets handed back to the connection as local drops
    /// (returns true), or its error returned.
    fn account(
        &mut self,
        batch: &OutBatch,
        outcome: SendOutcome,
        calls: u64,
        conn: &mut Connection,
        now: Time,
    ) -> io::Result<bool> {
        self.stats.send_calls += calls;
        let count = batch.count as u64;
        match outcome {
            SendOutcome::Sent => {
                self.stats.datagrams_sent += count;
                Ok(false)
            }
            SendOutcome::Full => {
                for &pn in &batch.pns {
                    conn.on_local_drop(now, pn);
                }
                self.stats.local_drops += count;
                Ok(true)
            }
            // The interface refused a size path MTU discovery raised (its MTU went down):
            // the connection goes back to the base and sends again what did not leave.
            SendOutcome::Failed(e) if is_too_big(&e) => {
                let mut handled = false;
                for &pn in &batch.pns {
                    handled |= conn.on_too_big(pn);
                }
                if handled {
                    Ok(false)
                } else {
                    Err(e)
                }
            }
            SendOutcome::Failed(e) => Err(e),
        }
    }

    /// Read up to a batch of datagrams ([`RECV_BATCH`] reads or [`RECV_BATCH_BYTES`], whichever
    /// comes first); `deliver` gets each with its source and its arrival time on `clock`
    /// (`Clock::arrival`).
    pub fn receive(
        &mut self,
        buf: &mut [u8],
        clock: &Clock,
        mut deliver: impl FnMut(SocketAddr, &[u8], Arrival),
    ) -> io::Result<()> {
        let mut taken = 0;
        for _ in 0..RECV_BATCH {
            if taken >= RECV_BATCH_BYTES {
                return Ok(());
            }
            let Some(got) = self.read_once(buf, clock)? else {
                return Ok(());
            };
            taken += got.len;
            for d in got.datagrams() {
                deliver(got.from, &buf[d], got.at);
            }
        }
        Ok(())
    }

    /// One read into `buf` (at least 65,535 bytes, `MAX_GRO_BYTES`: a read may bring a GRO
    /// run of datagrams); `None` when nothing is waiting. A read interrupted by a signal is
    /// tried again; a connected socket hears of an earlier datagram's ICMP error here.
    pub fn read_once(&mut self, buf: &mut [u8], clock: &Clock) -> io::Result<Option<Read>> {
        assert!(
            buf.len() >= MAX_GRO_BYTES,
            "a GRO read needs a 64 KB buffer"
        );
        loop {
            match self.reader.read(&self.sock, buf) {
                Ok((len, from, segment, stamp)) => {
                    self.stats.recv_calls += 1;
                    let got = Read {
                        len,
                        from,
                        segment,
                        at: clock.arrival(stamp),
                    };
                    self.stats.datagrams_received += got.datagrams().count() as u64;
                    return Ok(Some(got));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Sleep until the socket is readable (or writable, when the last send found it full), or
    /// until `deadline`. Returns at once when the deadline has passed; a signal ends the wait.
    pub fn wait(&self, deadline: Option<Instant>) -> io::Result<()> {
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
        // With a receiving thread, its signal says a datagram arrived.
        let mut events = match self.recv_thread {
            Some(_) => PollFlags::empty(),
            None => PollFlags::POLLIN,
        };
        if self.stats.blocked {
            events |= PollFlags::POLLOUT;
        }
        // (Without a receiving thread the second entry is the socket again, not polled.)
        let (wake, n) = match &self.recv_thread {
            Some(t) => (t.wake_fd(), 2),
            None => (self.sock.as_fd(), 1),
        };
        let mut fds = [
            PollFd::new(self.sock.as_fd(), events),
            PollFd::new(wake, PollFlags::POLLIN),
        ];
        match ppoll(&mut fds[..n], timeout, None) {
            Ok(_) | Err(Errno::EINTR) => Ok(()),
            Err(e) => Err(io::Error::from(e)),
        }
    }
}

/// How a socket's datagrams are read: with GRO runs and the kernel's arrival stamps where the
/// socket has them. The loop's port holds one; a receiving thread its own ([`Reader::another`]:
/// not a clone, whose ancillary-data space would have no capacity, so that the kernel would cut
/// off the GRO segment size and a run of datagrams would read as one).
pub(crate) struct Reader {
    pub(crate) gro: bool,
    /// The kernel stamps arrivals (`SO_TIMESTAMPNS`).
    pub(crate) timestamps: bool,
    /// Ancillary-data space for a GRO read.
    cmsg: Vec<u8>,
}

impl Reader {
    fn new(gro: bool, timestamps: bool) -> Reader {
        Reader {
            gro,
            timestamps,
            cmsg: nix::cmsg_space!(i32, TimeSpec),
        }
    }

    /// A reader of the same socket, with its own ancillary-data space.
    pub(crate) fn another(&self) -> Reader {
        Reader::new(self.gro, self.timestamps)
    }

    /// One read: the datagram (or GRO run), its source, the GRO segment size if the kernel
    /// coalesced, and the kernel's arrival stamp.
    pub(crate) fn read(&mut self, sock: &UdpSocket, buf: &mut [u8]) -> io::Result<Received> {
        if !(self.gro || self.timestamps) {
            return sock.recv_from(buf).map(|(n, from)| (n, from, None, None));
        }
        let mut iov = [IoSliceMut::new(buf)];
        let msg = recvmsg::<SockaddrStorage>(
            sock.as_raw_fd(),
            &mut iov,
            Some(&mut self.cmsg),
            MsgFlags::MSG_DONTWAIT,
        )
        .map_err(io::Error::from)?;
        if self.gro && msg.flags.contains(MsgFlags::MSG_CTRUNC) {
            // Without its segment size a coalesced run would read as one datagram.
            return Err(io::Error::other(
                "the kernel cut off a read's ancillary data (the GRO segment size)",
            ));
        }
        let (mut segment, mut stamp) = (None, None);
        if let Ok(cmsgs) = msg.cmsgs() {
            for c in cmsgs {
                match c {
                    ControlMessageOwned::UdpGroSegments(s) => segment = Some(s as usize),
                    ControlMessageOwned::ScmTimestampns(t) => stamp = Some(t),
                    _ => {}
                }
            }
        }
        let from = msg
            .address
            .as_ref()
            .and_then(to_socket_addr)
            .ok_or_else(|| io::Error::other("a datagram without a source address"))?;
        Ok((msg.bytes, from, segment, stamp))
    }
}

/// The datagrams in a read of `n` bytes: runs of `segment` bytes (a GRO read; the last may be
/// shorter), or the whole read. An empty datagram is still one.
pub(crate) fn split(n: usize, segment: Option<usize>) -> impl Iterator<Item = Range<usize>> {
    let seg = segment.filter(|&s| s > 0).unwrap_or(n.max(1));
    let count = n.div_ceil(seg).max(1);
    (0..count).map(move |i| i * seg..((i + 1) * seg).min(n))
}

fn to_socket_addr(a: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = a.as_sockaddr_in() {
        return Some(SocketAddr::V4((*v4).into()));
    }
    a.as_sockaddr_in6()
        .map(|v6| SocketAddr::V6((*v6).into()))
        .filter(|_| a.family().is_some())
}

/// What [`UdpPort::read_once`] read.
#[derive(Clone, Copy, Debug)]
pub struct Read {
    /// Bytes read.
    pub len: usize,
    /// The sender.
    pub from: SocketAddr,
    /// The GRO segment size, when the kernel coalesced a run of datagrams.
    pub segment: Option<usize>,
    /// When it arrived.
    pub at: Arrival,
}

impl Read {
    /// Where each datagram of the read lies in the buffer.
    pub fn datagrams(&self) -> impl Iterator<Item = Range<usize>> {
        split(self.len, self.segment)
    }

    /// One datagram, not a coalesced run.
    pub fn is_single(&self) -> bool {
        self.segment.is_none_or(|s| s >= self.len)
    }
}

/// What one read returned: length, source, GRO segment size, arrival stamp.
pub(crate) type Received = (usize, SocketAddr, Option<usize>, Option<TimeSpec>);

/// Most slices the datagrams of one send come in: a header and a payload for each of
/// [`MAX_SEGMENTS`] datagrams, and one run of bytes written whole.
pub const MAX_PARTS: usize = 2 * MAX_SEGMENTS + 1;
/// Linux's cap on the iovec list of one `sendmsg` (`UIO_MAXIOV`, include/uapi/linux/uio.h;
/// `EMSGSIZE` past it).
const UIO_MAXIOV: usize = 1024;
const _: () = assert!(MAX_PARTS <= UIO_MAXIOV);

/// Send `count` datagrams lying back to back in the concatenation of `parts` (each `segment`
/// bytes but the last) to `peer` (`None`: a connected socket): one GSO send of
/// `segment`-byte segments when `gso` is set, else one datagram per call. The kernel cuts
/// the bytes of a GSO send at every `segment` bytes whatever the slices they come in (it
/// copies them from the iovec list into its buffers first), so a datagram may be its header
/// and its payload, two slices. Where the route cannot segment (no checksum offload: EIO)
/// or the kernel refuses the size, GSO is switched off (`gso` cleared) and the datagrams go
/// one per call. `calls` counts the system calls.
pub(crate) fn send_datagrams(
    sock: &UdpSocket,
    peer: Option<SocketAddr>,
    parts: &[&[u8]],
    segment: usize,
    count: usize,
    gso: &mut bool,
    calls: &mut u64,
) -> io::Result<()> {
    let one_by_one = |calls: &mut u64| {
        each_datagram(parts, segment.max(1), |d| {
            *calls += 1;
            send_parts(sock, peer, d, None).map(|_| ())
        })
    };
    if count > 1 && !*gso {
        return one_by_one(calls);
    }
    *calls += 1;
    let sent = match count {
        1 => send_parts(sock, peer, parts, None),
        _ => send_parts(sock, peer, parts, Some(segment)),
    };
    match sent {
        Ok(_) => Ok(()),
        Err(e)
            if count > 1
                && matches!(
                    e.raw_os_error().map(Errno::from_raw),
                    Some(Errno::EIO | Errno::EINVAL | Errno::EOPNOTSUPP)
                ) =>
        {
            *gso = false;
            one_by_one(calls)
        }
        Err(e) => Err(e),
    }
}

/// Calls `each` with the slices of every datagram in the concatenation of `parts`, cut every
/// `segment` bytes (the last may be shorter).
fn each_datagram<'a>(
    parts: &[&'a [u8]],
    segment: usize,
    mut each: impl FnMut(&[&'a [u8]]) -> io::Result<()>,
) -> io::Result<()> {
    let mut one: [&[u8]; MAX_PARTS] = [&[]; MAX_PARTS];
    let (mut n, mut left) = (0, segment);
    for &part in parts {
        let mut part = part;
        while !part.is_empty() {
            let take = part.len().min(left);
            *one.get_mut(n).ok_or_else(too_many_parts)? = &part[..take];
            n += 1;
            part = &part[take..];
            left -= take;
            if left == 0 {
                each(&one[..n])?;
                (n, left) = (0, segment);
            }
        }
    }
    if n > 0 {
        each(&one[..n])?;
    }
    Ok(())
}

fn too_many_parts() -> io::Error {
    io::Error::other(format!("more than {MAX_PARTS} slices for one send"))
}

/// One `sendmsg` of the concatenation of `parts` (an iovec list): one datagram, or with
/// `segment` a GSO send the kernel cuts into datagrams of that size (the last may be
/// shorter), the size given with the call (`UDP_SEGMENT` control message).
fn send_parts(
    sock: &UdpSocket,
    peer: Option<SocketAddr>,
    parts: &[&[u8]],
    segment: Option<usize>,
) -> io::Result<usize> {
    let mut iov = [IoSlice::new(&[]); MAX_PARTS];
    let iov = iov.get_mut(..parts.len()).ok_or_else(too_many_parts)?;
    for (v, part) in iov.iter_mut().zip(parts) {
        *v = IoSlice::new(part);
    }
    let to = peer.map(SockaddrStorage::from);
    let sent = match segment {
        Some(segment) => {
            let segment = u16::try_from(segment).map_err(|_| io::Error::from(Errno::EINVAL))?;
            let cmsgs = [ControlMessage::UdpGsoSegments(&segment)];
            sendmsg(
                sock.as_raw_fd(),
                iov,
                &cmsgs,
                MsgFlags::empty(),
                to.as_ref(),
            )
        }
        None => sendmsg(sock.as_raw_fd(), iov, &[], MsgFlags::empty(), to.as_ref()),
    };
    sent.map_err(io::Error::from)
}

/// The socket or the device queue behind it is full: the datagrams did not leave.
pub(crate) fn is_full(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::WouldBlock || e.raw_os_error() == Some(Errno::ENOBUFS as i32)
}

/// The level and option of a path-MTU socket option for `sock`'s address family.
fn mtu_option(sock: &UdpSocket, v4: libc::c_int, v6: libc::c_int) -> io::Result<(i32, i32)> {
    Ok(if sock.local_addr()?.is_ipv6() {
        (libc::IPPROTO_IPV6, v6)
    } else {
        (libc::IPPROTO_IP, v4)
    })
}

/// Has every datagram `sock` sends leave whole with the don't-fragment bit set, whatever path
/// MTU the kernel has learnt from ICMP (`IP_PMTUDISC_PROBE`, `IPV6_PMTUDISC_PROBE`; ip(7),
/// ipv6(7)): the probe packets of RFC 8899's path MTU discovery. A datagram larger than the
/// interface's MTU fails to send with `EMSGSIZE`.
pub fn set_probe_path_mtu(sock: &UdpSocket) -> io::Result<()> {
    let (level, name) = mtu_option(sock, libc::IP_MTU_DISCOVER, libc::IPV6_MTU_DISCOVER)?;
    // IPV6_PMTUDISC_PROBE has the same value.
    let value: libc::c_int = libc::IP_PMTUDISC_PROBE;
    // SAFETY: a valid socket, and a c_int option value of its size.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The path MTU the kernel holds for a connected socket's route (`IP_MTU`, `IPV6_MTU`): the
/// interface's, unless an ICMP "fragmentation needed" (IPv6: "packet too big") lowered it.
pub fn kernel_path_mtu(sock: &UdpSocket) -> io::Result<u32> {
    let (level, name) = mtu_option(sock, libc::IP_MTU, libc::IPV6_MTU)?;
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a valid socket, and a c_int of the length given.
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            level,
            name,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r == 0 {
        u32::try_from(value).map_err(|_| io::Error::other("a negative path MTU"))
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether `e` says a datagram was too big: for the local interface at a send, or, on a
/// connected socket, that an ICMP "fragmentation needed" ("packet too big") came back.
pub fn is_too_big(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EMSGSIZE)
}

/// The earliest of two optional deadlines.
pub fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use longhaul_proto::PacketKind;

    /// The sending thread's reports: a batch that found the socket full goes back to the
    /// connection as local drops (a congestion signal, its data queued again), as when the
    /// loop sends itself; a sent batch is counted; an error comes back as the error.
    #[test]
    fn the_sending_threads_reports_count_and_a_full_socket_is_a_local_drop() {
        use longhaul_cc::CcSpec;
        use longhaul_proto::{Config, Side};
        let config = Config::new(CcSpec::default_for("reno").unwrap());
        let now = Time::from_millis(1);
        let mut c = Connection::new(config.clone(), Side::Client, now).unwrap();
        let mut s = Connection::new(config, Side::Server, now).unwrap();
        let mut buf = vec![0u8; 65_536];
        for _ in 0..4 {
            while let Some(t) = c.poll_transmit(now, &mut buf) {
                let _ = s.handle_packet(now, &buf[..t.len]);
            }
            while let Some(t) = s.poll_transmit(now, &mut buf) {
                let _ = c.handle_packet(now, &buf[..t.len]);
            }
        }
        assert!(c.is_established());
        c.write(&[7u8; 8_000]);
        let mut batch = OutBatch::default();
        while let Some(t) = c.poll_transmit(now, &mut buf) {
            if t.kind == PacketKind::Data {
                batch.pns.extend(t.packet_number);
                batch.count += 1;
            }
        }
        assert!(batch.count >= 5, "{} data packets", batch.count);
        let mut port = UdpPort::bind("127.0.0.1:0".parse().unwrap(), 1500, false).unwrap();
        let events = c.stats().congestion_events;
        let full = port.account(&batch, SendOutcome::Full, 1, &mut c, now);
        assert!(full.unwrap());
        assert_eq!(port.stats.local_drops, batch.count as u64);
        assert_eq!(port.stats.datagrams_sent, 0);
        assert_eq!(c.stats().congestion_events, events + 1);
        let again = c
            .poll_transmit(now, &mut buf)
            .expect("the dropped data goes again");
        assert!(again.retransmission, "{again:?}");

        let sent = port.account(&batch, SendOutcome::Sent, 1, &mut c, now);
        assert!(!sent.unwrap());
        assert_eq!(port.stats.datagrams_sent, batch.count as u64);
        assert_eq!(port.stats.send_calls, 2);
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        let failed = port.account(&batch, SendOutcome::Failed(refused), 1, &mut c, now);
        assert_eq!(failed.unwrap_err().kind(), io::ErrorKind::ConnectionRefused);
    }

    /// A datagram read 30 ms after it arrived carries its arrival time, not the read's.
    #[test]
    fn a_late_read_reports_the_kernel_arrival_time_within_the_floor() {
        let mut port = UdpPort::bind("127.0.0.1:0".parse().unwrap(), 1472, true).unwrap();
        assert!(port.reader.timestamps, "SO_TIMESTAMPNS refused");
        let to = port.socket().local_addr().unwrap();
        let clock = Clock::start();
        let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut buf = vec![0u8; 65_536];
        wait_for_arrival_stamps(&mut port, &peer, &clock, &mut buf);
        let before = clock.now();
        peer.send_to(b"early", to).unwrap();
        let sent = clock.now();
        std::thread::sleep(Duration::from_millis(30));
        let mut got = Vec::new();
        port.receive(&mut buf, &clock, |from, d, at| {
            got.push((from, d.to_vec(), at))
        })
        .unwrap();
        // Read after the receive: a reading before it would be a floor for the arrival.
        let read_at = clock.now();
        assert_eq!(got.len(), 1);
        let (from, data, arrival) = &got[0];
        // The connection's now is floored by the clock reading after the send.
        assert_eq!(arrival.now, sent.max(arrival.stamped));
        let at = &arrival.stamped;
        assert_eq!(*from, peer.local_addr().unwrap());
        assert_eq!(data, b"early");
        // Stamped by the kernel between the send call's start and the sleep (loopback delivers
        // within the call), so at least 25 ms before the read.
        assert!(
            *at >= before && *at <= sent + Duration::from_millis(2),
            "arrival {at:?}, sent in [{before:?}, {sent:?}]"
        );
        assert!(
            read_at - *at >= Duration::from_millis(25),
            "{at:?} vs {read_at:?}"
        );

        // The floor holds: a connection's clock never runs backwards. The stamp is still the
        // arrival, before the floor.
        let before = clock.now();
        peer.send_to(b"again", to).unwrap();
        let sent = clock.now();
        std::thread::sleep(Duration::from_millis(5));
        let floor = clock.now();
        let mut at2 = None;
        port.receive(&mut buf, &clock, |_, _, at| at2 = Some(at))
            .unwrap();
        let at2 = at2.expect("one datagram");
        assert_eq!(at2.now, floor);
        assert!(
            at2.stamped >= before && at2.stamped <= sent + Duration::from_millis(2),
            "stamped {:?}, sent in [{before:?}, {sent:?}]",
            at2.stamped
        );
    }

    /// The kernel turns arrival stamping on asynchronously (a deferred static-key switch) when
    /// the first socket on the host asks for it; until then a datagram is stamped as it is read.
    /// Probe until a datagram read 5 ms late carries an earlier stamp (at most a second).
    /// The probes leave the clock's floor behind the next datagram's arrival.
    fn wait_for_arrival_stamps(
        port: &mut UdpPort,
        peer: &UdpSocket,
        clock: &Clock,
        buf: &mut [u8],
    ) {
        let to = port.socket().local_addr().unwrap();
        for _ in 0..200 {
            peer.send_to(b"probe", to).unwrap();
            std::thread::sleep(Duration::from_millis(5));
            let mut at = None;
            port.receive(buf, clock, |_, _, t| at = Some(t.stamped))
                .unwrap();
            let read_at = clock.now();
            if at.is_some_and(|t| read_at - t >= Duration::from_millis(4)) {
                return;
            }
        }
        panic!("the kernel never stamped an arrival before it was read");
    }

    /// Root overrides the host's cap on socket buffers (SO_RCVBUFFORCE); anyone else gets
    /// what `net.core.rmem_max` allows. Linux reports twice what it granted.
    #[test]
    fn the_receive_buffer_is_full_size_when_privileged_and_capped_otherwise() {
        let port = UdpPort::bind("127.0.0.1:0".parse().unwrap(), 1472, true).unwrap();
        let cap: usize = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // SAFETY: geteuid has no preconditions.
        let granted = if unsafe { libc::geteuid() } == 0 {
            RECV_SOCKET_BUFFER
        } else {
            RECV_SOCKET_BUFFER.min(cap)
        };
        assert_eq!(port.recv_buffer, 2 * granted, "rmem_max {cap}");
    }

    #[test]
    fn a_stamp_from_the_future_or_long_ago_is_not_believed() {
        let clock = Clock::start();
        std::thread::sleep(Duration::from_millis(2));
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        let ts = |d: Duration| Some(TimeSpec::from_duration(d));
        let now = clock.now();
        let future = clock.stamped(ts(wall + Duration::from_secs(5)));
        let ancient = clock.stamped(ts(wall - Duration::from_secs(30)));
        let recent = clock.stamped(ts(wall - Duration::from_millis(1)));
        let later = clock.now();
        for t in [future, ancient] {
            assert!(t >= now && t <= later, "{t:?} not in [{now:?}, {later:?}]");
        }
        assert!(recent < now, "{recent:?} vs {now:?}");
        assert!(
            now - recent <= Duration::from_millis(2),
            "{recent:?} vs {now:?}"
        );
    }
}
