//! The network cases: one sending and one receiving thread move the same bytes over a
//! loopback UDP socket pair, in one of two shapes and four ways.
//!
//! **Shapes.** `gso`: sends of 64,768 bytes (44 segments of 1,472 bytes, as longhaul sends on a
//! 1500-byte path) with `UDP_SEGMENT`; the receiving socket has `UDP_GRO`, so each send
//! arrives as one buffer and its segment size. `64k`: single datagrams of 65,507 bytes, the
//! largest a UDP/IPv4 datagram carries and what longhaul sends after path MTU discovery on
//! loopback (MTU 65536).
//!
//! **Ways.** `syscall`: one `sendmsg` per send and one blocking `recvmsg` per buffer, as
//! `crates/net/src/socket.rs` does. `uring`: io_uring `SendMsg` and `RecvMsg` requests, up to
//! `depth` in flight and submitted per `io_uring_enter` at each end. `zerocopy`: `sendmsg` with
//! `MSG_ZEROCOPY` (`SO_ZEROCOPY` on), the completions read from the socket's error queue before
//! a buffer is used again; the receiver as in `syscall`. `uring-zc`: io_uring `SendMsgZc` (its
//! second completion frees the buffer) and io_uring `RecvMsg`. Loopback delivers to a local
//! socket, which may hold the bytes indefinitely, so the kernel copies a zero-copy send's pages
//! on delivery; the completions say whether it did, and the tool counts it.
//!
//! The sender sends from 64 buffers of 64 KiB filled once with pseudo-random bytes and never
//! written again, so only the socket's own work is measured (longhaul builds each datagram
//! just before sending it). The receiver counts bytes and datagrams (by the GRO segment size)
//! and the case fails unless both are what was sent. [`crate::flow::Window`] keeps the
//! bytes in flight under the receiving socket's buffer, so nothing is dropped.

use crate::flow::{Window, STALL};
use crate::measure::{thread_cpu, Start, Stopwatch};
use anyhow::{anyhow, bail, ensure, Context, Result};
use io_uring::types::{CancelBuilder, Fd, SubmitArgs, Timespec};
use io_uring::{cqueue, opcode, squeue, IoUring};
use std::io;
use std::mem::{size_of, zeroed};
use std::net::UdpSocket;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// A GSO segment: a 1500-byte packet less the IPv4 and UDP headers.
pub const SEGMENT: usize = 1472;
/// Segments of a GSO send (64,768 bytes: longhaul's sends stay under 65,000).
pub const GSO_SEGMENTS: usize = 44;
/// The largest UDP/IPv4 datagram's payload (65,535 less 28 bytes of headers).
pub const BIG: usize = 65_507;
/// Sending buffers, each [`SLOT`] bytes.
const SLOTS: usize = 64;
const SLOT: usize = 64 << 10;
/// The receiving socket's buffer asked for (root may exceed `net.core.rmem_max`).
const RCVBUF: usize = 32 << 20;
const SNDBUF: usize = 8 << 20;
/// Most bytes in flight (less where the socket's buffer is smaller).
const WINDOW: u64 = 8 << 20;

// Linux's values, which the libc crate does not export for every target.
const SO_ZEROCOPY: libc::c_int = 60;
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;
const IORING_SEND_ZC_REPORT_USAGE: u16 = 8;
const IORING_NOTIF_USAGE_ZC_COPIED: u32 = 1 << 31;

/// How the bytes are cut into sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// 44 × 1,472-byte GSO segments per send.
    Gso,
    /// One 65,507-byte datagram per send.
    Big,
}

impl Shape {
    fn send_len(self) -> usize {
        match self {
            Shape::Gso => SEGMENT * GSO_SEGMENTS,
            Shape::Big => BIG,
        }
    }

    fn segment(self) -> Option<u16> {
        match self {
            Shape::Gso => Some(SEGMENT as u16),
            Shape::Big => None,
        }
    }
}

/// How the bytes are sent and received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    Syscall,
    Uring,
    ZeroCopy,
    UringZc,
}

/// The sends of one case.
#[derive(Clone, Copy)]
struct Plan {
    total: u64,
    shape: Shape,
}

impl Plan {
    fn sends(&self) -> u64 {
        self.total.div_ceil(self.shape.send_len() as u64)
    }

    /// Bytes of send `i` (the last may be shorter).
    fn len(&self, i: u64) -> usize {
        let per = self.shape.send_len() as u64;
        (self.total - i * per).min(per) as usize
    }

    /// Datagrams the receiver must count.
    fn datagrams(&self) -> u64 {
        match self.shape {
            Shape::Big => self.sends(),
            Shape::Gso => (0..self.sends())
                .map(|i| self.len(i).div_ceil(SEGMENT) as u64)
                .sum(),
        }
    }
}

/// What one end of a case did.
#[derive(Default)]
pub struct End {
    /// The thread's CPU time over the transfer.
    pub cpu: Duration,
    /// System calls it made (`io_uring_enter` counts once however many requests it carried).
    pub calls: u64,
}

/// What a network case measured, beside the wall and process time its caller takes.
pub struct NetRun {
    pub sender: End,
    pub receiver: End,
    /// Zero-copy sends the kernel reported copying, and all zero-copy sends.
    pub copied: Option<(u64, u64)>,
}

/// A message header with its own address, vector and control space, for one request at a time.
/// Its fields point into it, so it stays where it is (boxed, or on the stack while used).
#[repr(C)]
struct Msg {
    hdr: libc::msghdr,
    iov: libc::iovec,
    name: libc::sockaddr_in,
    cmsg: Cmsg,
}

/// Ancillary-data space, aligned for `cmsghdr`.
#[repr(C, align(8))]
struct Cmsg([u8; 64]);

impl Msg {
    fn new() -> Msg {
        // SAFETY: all fields are plain C structs and bytes, for which zero is valid.
        unsafe { zeroed() }
    }

    /// Point at `bytes` to send, with a GSO segment size if given.
    fn for_send(&mut self, bytes: &[u8], segment: Option<u16>) {
        self.iov = libc::iovec {
            iov_base: bytes.as_ptr() as *mut libc::c_void,
            iov_len: bytes.len(),
        };
        self.hdr = Msg::new().hdr;
        self.hdr.msg_iov = &mut self.iov;
        self.hdr.msg_iovlen = 1;
        if let Some(seg) = segment {
            // SAFETY: CMSG_SPACE of a u16 is well within the 64 bytes of `cmsg`, so
            // CMSG_FIRSTHDR is non-null and its data lies inside `cmsg`.
            unsafe {
                self.hdr.msg_control = self.cmsg.0.as_mut_ptr().cast();
                self.hdr.msg_controllen = libc::CMSG_SPACE(size_of::<u16>() as u32) as _;
                let c = libc::CMSG_FIRSTHDR(&self.hdr);
                (*c).cmsg_level = libc::SOL_UDP;
                (*c).cmsg_type = libc::UDP_SEGMENT;
                (*c).cmsg_len = libc::CMSG_LEN(size_of::<u16>() as u32) as _;
                std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<u16>(), seg);
            }
        }
    }

    /// Point at `buf` to receive into, with room for the source and the GRO segment size.
    fn for_recv(&mut self, buf: &mut [u8]) {
        self.iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        self.hdr = Msg::new().hdr;
        self.hdr.msg_iov = &mut self.iov;
        self.hdr.msg_iovlen = 1;
        self.hdr.msg_name = (&mut self.name as *mut libc::sockaddr_in).cast();
        self.hdr.msg_namelen = size_of::<libc::sockaddr_in>() as u32;
        self.hdr.msg_control = self.cmsg.0.as_mut_ptr().cast();
        self.hdr.msg_controllen = self.cmsg.0.len() as _;
    }

    /// After a receive: the GRO segment size, if the kernel coalesced; an error if the
    /// datagram or its ancillary data was cut off.
    fn received(&self) -> Result<Option<usize>> {
        if self.hdr.msg_flags & libc::MSG_TRUNC != 0 {
            bail!("a datagram was longer than the 64 KiB buffer");
        }
        if self.hdr.msg_flags & libc::MSG_CTRUNC != 0 {
            bail!("the kernel cut off a read's ancillary data (the GRO segment size)");
        }
        let mut segment = None;
        // SAFETY: the kernel wrote `msg_controllen` bytes of well-formed cmsgs into `cmsg`;
        // CMSG_FIRSTHDR/NXTHDR stay within them.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&self.hdr);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_UDP && (*c).cmsg_type == libc::UDP_GRO {
                    let s = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::c_int>());
                    segment = Some(s as usize);
                }
                c = libc::CMSG_NXTHDR(&self.hdr, c);
            }
        }
        Ok(segment)
    }
}

/// Bytes and datagrams received.
#[derive(Default)]
struct Tally {
    bytes: u64,
    datagrams: u64,
}

impl Tally {
    fn add(&mut self, n: usize, segment: Option<usize>) {
        self.bytes += n as u64;
        self.datagrams += match segment {
            Some(s) if s > 0 => n.div_ceil(s) as u64,
            _ => 1,
        };
    }

    fn check(&self, plan: &Plan) -> Result<()> {
        ensure!(
            self.bytes == plan.total && self.datagrams == plan.datagrams(),
            "received {} bytes in {} datagrams, sent {} in {}",
            self.bytes,
            self.datagrams,
            plan.total,
            plan.datagrams()
        );
        Ok(())
    }
}

fn set_int(fd: RawFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: the option value is a c_int that lives across the call.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&v as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as u32,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn get_int(fd: RawFd, level: libc::c_int, name: libc::c_int) -> io::Result<libc::c_int> {
    let mut v: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as u32;
    // SAFETY: `v` and `len` are valid for the kernel to write.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            level,
            name,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc == 0 {
        Ok(v)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Ask for a socket buffer of `size` (over the host's cap where allowed); returns what the
/// kernel granted (doubled, for its bookkeeping).
fn buffer(fd: RawFd, force: libc::c_int, plain: libc::c_int, size: usize) -> Result<u64> {
    if set_int(fd, libc::SOL_SOCKET, force, size as libc::c_int).is_err() {
        set_int(fd, libc::SOL_SOCKET, plain, size as libc::c_int).context("socket buffer")?;
    }
    Ok(get_int(fd, libc::SOL_SOCKET, plain)? as u64)
}

/// A connected sender and a receiver with GRO on loopback, and the window for them.
fn sockets(zerocopy: bool, shape: Shape) -> Result<(UdpSocket, UdpSocket, u64)> {
    let rx = UdpSocket::bind("127.0.0.1:0").context("binding the receiver")?;
    let tx = UdpSocket::bind("127.0.0.1:0").context("binding the sender")?;
    tx.connect(rx.local_addr()?)
        .context("connecting the sender")?;
    let granted = buffer(
        rx.as_raw_fd(),
        libc::SO_RCVBUFFORCE,
        libc::SO_RCVBUF,
        RCVBUF,
    )?;
    buffer(
        tx.as_raw_fd(),
        libc::SO_SNDBUFFORCE,
        libc::SO_SNDBUF,
        SNDBUF,
    )?;
    set_int(rx.as_raw_fd(), libc::SOL_UDP, libc::UDP_GRO, 1).context("UDP_GRO on the receiver")?;
    rx.set_read_timeout(Some(STALL))?;
    if zerocopy {
        set_int(tx.as_raw_fd(), libc::SOL_SOCKET, SO_ZEROCOPY, 1)
            .context("SO_ZEROCOPY on the sender")?;
    }
    // A GSO buffer's true size is a little over its payload: a quarter of the granted buffer
    // leaves room to spare.
    let window = (granted / 4).min(WINDOW);
    ensure!(
        window >= 4 * shape.send_len() as u64,
        "the receiving socket's buffer ({granted} bytes) is too small: raise net.core.rmem_max"
    );
    Ok((tx, rx, window))
}

/// The sending buffers: [`SLOTS`] × [`SLOT`] pseudo-random bytes.
fn slots() -> Vec<u8> {
    let mut b = vec![0u8; SLOTS * SLOT];
    blake3::Hasher::new_derive_key("longhaul bench/io sending buffers")
        .finalize_xof()
        .fill(&mut b);
    b
}

fn slot(buffers: &[u8], i: usize, len: usize) -> &[u8] {
    &buffers[i * SLOT..i * SLOT + len]
}

/// A ring for one thread: single issuer, completions' work deferred to the waits (the setup
/// io_uring's authors advise for one thread per ring), or a plain one on kernels before 6.1.
pub fn ring(entries: u32) -> Result<IoUring> {
    IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| IoUring::new(entries))
        .context("io_uring_setup")
}

fn enter(ring: &IoUring, what: &str) -> Result<()> {
    let ts = Timespec::from(STALL);
    let args = SubmitArgs::new().timespec(&ts);
    loop {
        match ring.submitter().submit_with_args(1, &args) {
            Ok(_) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => {
                bail!("{what}: nothing completed for {STALL:?}")
            }
            Err(e) => return Err(e).context(format!("{what}: io_uring_enter")),
        }
    }
}

fn push(ring: &mut IoUring, e: &squeue::Entry) -> Result<()> {
    // SAFETY: every entry points at a `Msg` and buffers that outlive the request: a sender
    // waits for each of its completions, a receiver cancels what is in flight before its
    // buffers go (`UringReceiver`'s drop).
    unsafe { ring.submission().push(e) }.map_err(|_| anyhow!("the submission queue is full"))
}

/// Run one case: `total` bytes, `depth` io_uring requests in flight at each end.
pub fn run(way: Way, shape: Shape, total: u64, depth: usize, clock: &Stopwatch) -> Result<NetRun> {
    ensure!(
        (1..=SLOTS).contains(&depth),
        "depth {depth}: from 1 to {SLOTS}"
    );
    let plan = Plan { total, shape };
    let (tx, rx, limit) = sockets(way == Way::ZeroCopy, shape)?;
    let window = Window::new(limit);
    let start = Start::new(2);
    let (window, start) = (&window, &start);
    std::thread::scope(|s| {
        let sender = s.spawn(move || -> Result<(End, Option<(u64, u64)>)> {
            window.register_sender();
            let prepared = Sender::new(way, depth);
            start.wait();
            let mut sender = prepared?;
            let c0 = thread_cpu()?;
            let out = sender.run(tx.as_raw_fd(), plan, window);
            let cpu = thread_cpu()? - c0;
            let (calls, copied) = out?;
            Ok((End { cpu, calls }, copied))
        });
        let receiver = s.spawn(move || -> Result<End> {
            let prepared = Receiver::new(way, depth, rx.as_raw_fd());
            start.wait();
            let run = || -> Result<End> {
                let mut receiver = prepared?;
                let c0 = thread_cpu()?;
                let (tally, calls) = receiver.run(plan, window)?;
                let cpu = thread_cpu()? - c0;
                tally.check(&plan)?;
                Ok(End { cpu, calls })
            };
            let out = run();
            if out.is_err() {
                window.fail();
            }
            out
        });
        start.release(clock)?;
        let sent = sender
            .join()
            .map_err(|_| anyhow!("the sending thread panicked"));
        let got = receiver
            .join()
            .map_err(|_| anyhow!("the receiving thread panicked"));
        match (sent.and_then(|r| r), got.and_then(|r| r)) {
            (Ok((sender, copied)), Ok(receiver)) => Ok(NetRun {
                sender,
                receiver,
                copied,
            }),
            (Err(e), Ok(_)) => Err(e.context("sender")),
            (Ok(_), Err(e)) => Err(e.context("receiver")),
            (Err(s), Err(r)) => Err(anyhow!("sender: {s:#}; receiver: {r:#}")),
        }
    })
}

/// The sending end, set up before the clock starts.
enum Sender {
    Syscall { buffers: Vec<u8> },
    ZeroCopy { buffers: Vec<u8> },
    Uring(Box<UringSender>),
}

impl Sender {
    fn new(way: Way, depth: usize) -> Result<Sender> {
        let buffers = slots();
        Ok(match way {
            Way::Syscall => Sender::Syscall { buffers },
            Way::ZeroCopy => Sender::ZeroCopy { buffers },
            Way::Uring | Way::UringZc => Sender::Uring(Box::new(UringSender {
                ring: ring(2 * depth as u32)?,
                msgs: (0..depth).map(|_| Msg::new()).collect(),
                buffers,
                zerocopy: way == Way::UringZc,
            })),
        })
    }

    /// Send the plan; returns the system calls made and, for zero-copy, the sends copied.
    fn run(&mut self, fd: RawFd, plan: Plan, window: &Window) -> Result<(u64, Option<(u64, u64)>)> {
        match self {
            Sender::Syscall { buffers } => send_syscall(fd, plan, window, buffers),
            Sender::ZeroCopy { buffers } => send_zerocopy(fd, plan, window, buffers),
            Sender::Uring(u) => u.run(fd, plan, window),
        }
    }
}

/// One `sendmsg` of `bytes` on a connected socket.
fn sendmsg(fd: RawFd, bytes: &[u8], segment: Option<u16>, flags: libc::c_int) -> io::Result<()> {
    let mut m = Msg::new();
    m.for_send(bytes, segment);
    loop {
        // SAFETY: `m` points at `bytes` and its own control space, alive across the call.
        let n = unsafe { libc::sendmsg(fd, &m.hdr, flags) };
        if n >= 0 {
            return match n as usize == bytes.len() {
                true => Ok(()),
                false => Err(io::Error::other(format!(
                    "sent {n} of {} bytes",
                    bytes.len()
                ))),
            };
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn send_syscall(
    fd: RawFd,
    plan: Plan,
    window: &Window,
    buffers: &[u8],
) -> Result<(u64, Option<(u64, u64)>)> {
    let (mut calls, mut parks) = (0, 0);
    for i in 0..plan.sends() {
        let len = plan.len(i);
        window.admit(len as u64, &mut parks)?;
        sendmsg(
            fd,
            slot(buffers, i as usize % SLOTS, len),
            plan.shape.segment(),
            0,
        )
        .with_context(|| format!("sendmsg of {len} bytes"))?;
        calls += 1;
        window.sent(len as u64);
    }
    Ok((calls + parks, None))
}

/// The zero-copy completions of one socket, read from its error queue.
struct Completions {
    /// Send `i` completed.
    done: Vec<bool>,
    /// Every send before this one completed.
    low: u64,
    /// Sends the kernel copied after all.
    copied: u64,
    calls: u64,
}

impl Completions {
    /// Read what the error queue holds now.
    fn reap(&mut self, fd: RawFd) -> Result<()> {
        loop {
            let mut cmsg = Cmsg([0; 64]);
            // SAFETY: zero is a valid msghdr.
            let mut m: libc::msghdr = unsafe { zeroed() };
            m.msg_control = cmsg.0.as_mut_ptr().cast();
            m.msg_controllen = cmsg.0.len() as _;
            // SAFETY: `m` points at `cmsg`, alive across the call; no data vector.
            let n = unsafe { libc::recvmsg(fd, &mut m, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
            self.calls += 1;
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::WouldBlock => return Ok(()),
                    io::ErrorKind::Interrupted => continue,
                    _ => return Err(e).context("reading the error queue"),
                }
            }
            // SAFETY: as in `Msg::received`.
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(&m);
                while !c.is_null() {
                    if (*c).cmsg_level == libc::SOL_IP && (*c).cmsg_type == libc::IP_RECVERR {
                        let ee = std::ptr::read_unaligned(
                            libc::CMSG_DATA(c).cast::<libc::sock_extended_err>(),
                        );
                        self.note(&ee)?;
                    }
                    c = libc::CMSG_NXTHDR(&m, c);
                }
            }
        }
    }

    fn note(&mut self, ee: &libc::sock_extended_err) -> Result<()> {
        ensure!(
            ee.ee_origin == SO_EE_ORIGIN_ZEROCOPY && ee.ee_errno == 0,
            "an error-queue message that is no zero-copy completion: origin {}, errno {}",
            ee.ee_origin,
            ee.ee_errno
        );
        let (lo, hi) = (ee.ee_info as usize, ee.ee_data as usize);
        ensure!(
            lo <= hi && hi < self.done.len(),
            "completion of sends {lo}..={hi}, made {}",
            self.done.len()
        );
        self.done[lo..=hi].fill(true);
        if ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0 {
            self.copied += (hi - lo + 1) as u64;
        }
        while self.done.get(self.low as usize) == Some(&true) {
            self.low += 1;
        }
        Ok(())
    }

    /// Wait until the error queue holds something, then read it.
    fn wait(&mut self, fd: RawFd) -> Result<()> {
        let mut p = libc::pollfd {
            fd,
            events: 0, // POLLERR is always reported
            revents: 0,
        };
        loop {
            // SAFETY: one valid pollfd.
            let n = unsafe { libc::poll(&mut p, 1, STALL.as_millis() as i32) };
            self.calls += 1;
            match n {
                0 => bail!("no zero-copy completion for {STALL:?}"),
                n if n > 0 => break,
                _ => {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(e).context("poll");
                    }
                }
            }
        }
        self.reap(fd)
    }
}

fn send_zerocopy(
    fd: RawFd,
    plan: Plan,
    window: &Window,
    buffers: &[u8],
) -> Result<(u64, Option<(u64, u64)>)> {
    let sends = plan.sends();
    let mut zc = Completions {
        done: vec![false; sends as usize],
        low: 0,
        copied: 0,
        calls: 0,
    };
    let (mut calls, mut parks) = (0, 0);
    for i in 0..sends {
        let len = plan.len(i);
        window.admit(len as u64, &mut parks)?;
        // The buffer's previous send must be complete.
        let need = (i + 1).saturating_sub(SLOTS as u64);
        if zc.low < need {
            zc.reap(fd)?;
            while zc.low < need {
                zc.wait(fd)?;
            }
        }
        let bytes = slot(buffers, i as usize % SLOTS, len);
        loop {
            calls += 1;
            match sendmsg(fd, bytes, plan.shape.segment(), libc::MSG_ZEROCOPY) {
                Ok(()) => break,
                // Out of option memory for the completions: read some and try again.
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => zc.wait(fd)?,
                Err(e) => return Err(e).context(format!("sendmsg(MSG_ZEROCOPY) of {len} bytes")),
            }
        }
        window.sent(len as u64);
    }
    while zc.low < sends {
        zc.wait(fd)?;
    }
    Ok((calls + parks + zc.calls, Some((zc.copied, sends))))
}

/// io_uring sends, `msgs.len()` in flight. Request `s` sends from buffers `s`, `s + depth`, …
/// in turn, so a buffer is written to the socket only by the request that owns it, and only
/// after its previous send (for zero-copy: its notification) completed.
struct UringSender {
    ring: IoUring,
    msgs: Box<[Msg]>,
    buffers: Vec<u8>,
    zerocopy: bool,
}

impl UringSender {
    fn run(&mut self, fd: RawFd, plan: Plan, window: &Window) -> Result<(u64, Option<(u64, u64)>)> {
        let depth = self.msgs.len();
        let turns = SLOTS / depth;
        let mut free: Vec<usize> = (0..depth).rev().collect();
        let mut uses = vec![0usize; depth];
        let mut lens = vec![0usize; depth];
        let (mut next, mut busy, mut calls, mut parks, mut copied) =
            (0u64, 0usize, 0u64, 0u64, 0u64);
        let sends = plan.sends();
        while next < sends || busy > 0 {
            while next < sends && !free.is_empty() && window.room(plan.len(next) as u64) {
                let s = free.pop().expect("checked");
                let len = plan.len(next);
                let b = s + depth * (uses[s] % turns);
                uses[s] += 1;
                lens[s] = len;
                self.msgs[s].for_send(slot(&self.buffers, b, len), plan.shape.segment());
                let hdr = &self.msgs[s].hdr;
                let e = match self.zerocopy {
                    true => opcode::SendMsgZc::new(Fd(fd), hdr)
                        .ioprio(IORING_SEND_ZC_REPORT_USAGE)
                        .build(),
                    false => opcode::SendMsg::new(Fd(fd), hdr).build(),
                };
                push(&mut self.ring, &e.user_data(s as u64))?;
                window.sent(len as u64);
                next += 1;
                busy += 1;
            }
            if busy == 0 {
                // The window is full and nothing is in flight here: wait for the receiver.
                window.admit(plan.len(next) as u64, &mut parks)?;
                continue;
            }
            enter(&self.ring, "sending")?;
            calls += 1;
            for c in self.ring.completion() {
                let s = c.user_data() as usize;
                if cqueue::notif(c.flags()) {
                    if c.result() as u32 & IORING_NOTIF_USAGE_ZC_COPIED != 0 {
                        copied += 1;
                    }
                    free.push(s);
                    busy -= 1;
                    continue;
                }
                if c.result() < 0 {
                    let e = io::Error::from_raw_os_error(-c.result());
                    return Err(e).context(format!("io_uring send of {} bytes", lens[s]));
                }
                ensure!(
                    c.result() as usize == lens[s],
                    "sent {} of {} bytes",
                    c.result(),
                    lens[s]
                );
                if !cqueue::more(c.flags()) {
                    free.push(s);
                    busy -= 1;
                }
            }
        }
        Ok((calls + parks, self.zerocopy.then_some((copied, sends))))
    }
}

/// The receiving end, set up before the clock starts.
enum Receiver {
    Syscall { fd: RawFd, buf: Vec<u8> },
    Uring(Box<UringReceiver>),
}

impl Receiver {
    fn new(way: Way, depth: usize, fd: RawFd) -> Result<Receiver> {
        Ok(match way {
            Way::Syscall | Way::ZeroCopy => Receiver::Syscall {
                fd,
                buf: vec![1; SLOT],
            },
            Way::Uring | Way::UringZc => Receiver::Uring(Box::new(UringReceiver {
                ring: ring(2 * depth as u32)?,
                fd,
                msgs: (0..depth).map(|_| Msg::new()).collect(),
                bufs: (0..depth).map(|_| vec![1; SLOT]).collect(),
            })),
        })
    }

    /// Receive until the plan's bytes are in; returns them and the system calls made.
    fn run(&mut self, plan: Plan, window: &Window) -> Result<(Tally, u64)> {
        match self {
            Receiver::Syscall { fd, buf } => recv_syscall(*fd, buf, plan, window),
            Receiver::Uring(u) => u.run(plan, window),
        }
    }
}

fn recv_syscall(fd: RawFd, buf: &mut [u8], plan: Plan, window: &Window) -> Result<(Tally, u64)> {
    let mut t = Tally::default();
    let mut calls = 0;
    let mut m = Msg::new();
    while t.bytes < plan.total {
        m.for_recv(buf);
        // SAFETY: `m` points at `buf` and its own name and control space, alive across the call.
        let n = unsafe { libc::recvmsg(fd, &mut m.hdr, 0) };
        calls += 1;
        if n < 0 {
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => bail!(
                    "nothing arrived for {STALL:?} after {} of {} bytes (datagrams lost?)",
                    t.bytes,
                    plan.total
                ),
                _ => return Err(e).context("recvmsg"),
            }
        }
        t.add(n as usize, m.received()?);
        window.received(t.bytes);
    }
    Ok((t, calls))
}

/// io_uring receives, `msgs.len()` in flight, each into its own buffer.
struct UringReceiver {
    ring: IoUring,
    fd: RawFd,
    msgs: Box<[Msg]>,
    bufs: Vec<Vec<u8>>,
}

impl UringReceiver {
    fn arm(&mut self, s: usize) -> Result<()> {
        self.msgs[s].for_recv(&mut self.bufs[s]);
        let e = opcode::RecvMsg::new(Fd(self.fd), &mut self.msgs[s].hdr).build();
        push(&mut self.ring, &e.user_data(s as u64))
    }

    fn run(&mut self, plan: Plan, window: &Window) -> Result<(Tally, u64)> {
        let mut t = Tally::default();
        let mut calls = 0;
        for s in 0..self.msgs.len() {
            self.arm(s)?;
        }
        let mut done = Vec::with_capacity(self.msgs.len());
        while t.bytes < plan.total {
            enter(
                &self.ring,
                &format!("receiving after {} of {} bytes", t.bytes, plan.total),
            )?;
            calls += 1;
            done.extend(
                self.ring
                    .completion()
                    .map(|c| (c.user_data() as usize, c.result())),
            );
            for (s, res) in done.drain(..) {
                if res < 0 {
                    let e = io::Error::from_raw_os_error(-res);
                    return Err(e).context("io_uring recvmsg");
                }
                t.add(res as usize, self.msgs[s].received()?);
                if t.bytes < plan.total {
                    self.arm(s)?;
                }
            }
            window.received(t.bytes);
        }
        Ok((t, calls))
    }
}

impl Drop for UringReceiver {
    /// Cancel the receives still in flight before their buffers go.
    fn drop(&mut self) {
        let all = CancelBuilder::fd(Fd(self.fd)).all();
        let _ = self
            .ring
            .submitter()
            .register_sync_cancel(Some(Timespec::from(STALL)), all);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_counts_its_sends_and_datagrams() {
        let p = Plan {
            total: 2 * 64_768 + 1473,
            shape: Shape::Gso,
        };
        assert_eq!(p.sends(), 3);
        assert_eq!(p.len(2), 1473);
        assert_eq!(p.datagrams(), 2 * 44 + 2);
        let p = Plan {
            total: 65_507 * 3,
            shape: Shape::Big,
        };
        assert_eq!((p.sends(), p.len(2), p.datagrams()), (3, 65_507, 3));
    }

    /// Every way moves every byte in both shapes, its datagrams counted by their GRO segment
    /// size, with a last send shorter than the others; the zero-copy ways hear of every send.
    #[test]
    fn every_way_moves_every_byte() {
        let total = (16 << 20) + 1473;
        for shape in [Shape::Gso, Shape::Big] {
            for way in [Way::Syscall, Way::Uring, Way::ZeroCopy, Way::UringZc] {
                let clock = Stopwatch::default();
                let r = run(way, shape, total, 4, &clock)
                    .unwrap_or_else(|e| panic!("{way:?} {shape:?}: {e:#}"));
                let s = clock.stop().unwrap();
                assert!(s.wall > 0.0 && r.sender.calls > 0 && r.receiver.calls > 0);
                let sends = total.div_ceil(shape.send_len() as u64);
                match way {
                    Way::ZeroCopy | Way::UringZc => {
                        let (copied, all) = r.copied.unwrap();
                        assert_eq!(all, sends);
                        assert!(copied <= all);
                    }
                    _ => assert!(r.copied.is_none()),
                }
                if way == Way::Syscall {
                    assert!(r.sender.calls >= sends);
                }
            }
        }
    }
}
