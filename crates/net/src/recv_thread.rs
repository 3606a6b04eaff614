//! The receiving thread: reads the socket and opens the sealed datagrams it can, so that the
//! receiver's loop only acts on them.
//!
//! A receiver of a sealed 10 Gb/s transfer spends about as much time reading the socket and in
//! the AEAD (AES-256-GCM there) as in everything else its connection does. Opening a datagram changes nothing in
//! the connection (`longhaul_proto::secure::opener`): with a copy of a session's receive keys
//! (an [`Opener`]) this thread decrypts and authenticates it where it was read, and the loop
//! hands the connection the plain packet (`Connection::handle_opened`), which checks the key's
//! generation and the replay window before anything in it counts. A datagram this thread
//! cannot open — from an address with no session yet (a handshake), not sealed, or sealed
//! under a key its copy does not hold — goes to the loop as it arrived; one that fails to
//! authenticate is reported as such and counted by its connection.
//!
//! The loop publishes each session's opener in [`Openers`] whenever the connection's keys move
//! (`Connection::opener_epoch`) and removes it when the session ends; the thread takes a new
//! copy of the table when its version changes. A copy out of date costs nothing but a pass to
//! the loop: the connection judges every datagram against its keys of the moment.
//!
//! Batches: up to [`RECV_BATCH`] reads or [`RECV_BATCH_BYTES`] bytes, as the loop reads on its
//! own, at most [`QUEUE`] waiting; while they wait, the thread waits too and the socket's
//! buffer absorbs what arrives, as it does when the loop is busy. The thread wakes the loop
//! through a socket pair the loop polls with its socket; dropping the [`RecvThread`] stops the
//! thread (within [`POLL_TICK`]).

use crate::recv::PeerMap;
use crate::socket::{split, Reader, Received, MAX_GRO_BYTES, RECV_BATCH, RECV_BATCH_BYTES};
use longhaul_proto::{OpenAttempt, Opener};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::time::TimeSpec;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Batches that may wait for the loop.
pub const QUEUE: usize = 4;
/// How often an idle thread looks whether it should stop, milliseconds.
pub const POLL_TICK: u16 = 50;

/// One datagram of a batch.
#[derive(Clone, Debug)]
pub struct Arrived {
    /// The sender's address.
    pub from: SocketAddr,
    /// When it entered the host: the kernel's stamp (wall clock), or the thread's reading of
    /// the wall clock as it read the datagram where the kernel gave none.
    pub stamp: TimeSpec,
    /// Where it lies in the batch's bytes.
    pub range: Range<usize>,
    /// What the thread made of it: opened, failed to authenticate, or passed on as it arrived.
    pub attempt: OpenAttempt,
}

/// Datagrams read together, opened where possible.
#[derive(Debug, Default)]
pub struct InBatch {
    /// Room for a batch, allocated (and zeroed) once; `datagrams` say which bytes hold what.
    pub bytes: Vec<u8>,
    /// Bytes of `bytes` filled.
    pub used: usize,
    /// The datagrams, in the order they were read.
    pub datagrams: Vec<Arrived>,
    /// System calls that read them.
    pub calls: u64,
    /// The error that ended the read (not `WouldBlock`), for the loop to act on.
    pub error: Option<io::Error>,
}

/// Each session's receive keys, by the sender's address, for the thread.
#[derive(Default)]
pub struct Openers {
    table: Mutex<PeerMap<Opener>>,
    version: AtomicU64,
}

impl Openers {
    /// Sets `peer`'s opener (its session's receive keys) for the thread.
    pub fn publish(&self, peer: SocketAddr, opener: Opener) {
        self.table
            .lock()
            .expect("not poisoned")
            .insert(peer, opener);
        self.version.fetch_add(1, Ordering::Release);
    }

    /// Removes `peer`'s opener: its session ended.
    pub fn remove(&self, peer: &SocketAddr) {
        if self
            .table
            .lock()
            .expect("not poisoned")
            .remove(peer)
            .is_some()
        {
            self.version.fetch_add(1, Ordering::Release);
        }
    }

    /// A copy of the table if it changed since `seen` (which is updated).
    fn changed(&self, seen: &mut u64) -> Option<PeerMap<Opener>> {
        let v = self.version.load(Ordering::Acquire);
        if v == *seen {
            return None;
        }
        let table = self.table.lock().expect("not poisoned").clone();
        *seen = v;
        Some(table)
    }
}

/// The handle the loop keeps.
pub struct RecvThread {
    batches: Option<Receiver<InBatch>>,
    spare: SyncSender<InBatch>,
    wake: UnixStream,
    /// Each session's receive keys, which the loop keeps up to date for the thread.
    pub openers: Arc<Openers>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl RecvThread {
    /// Read `sock` (a clone of the loop's socket) as `reader` would.
    pub(crate) fn start(sock: UdpSocket, reader: Reader) -> io::Result<RecvThread> {
        let (wake, waker) = UnixStream::pair()?;
        wake.set_nonblocking(true)?;
        waker.set_nonblocking(true)?;
        let (tx, batches) = mpsc::sync_channel::<InBatch>(QUEUE);
        // Batches come back for reuse; more than the queue and one being filled are dropped.
        let (spare, spares) = mpsc::sync_channel::<InBatch>(QUEUE + 1);
        let openers = Arc::new(Openers::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (table, halt) = (openers.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("longhaul-recv".into())
            .spawn(move || run(sock, reader, tx, spares, waker, table, halt))?;
        Ok(RecvThread {
            batches: Some(batches),
            spare,
            wake,
            openers,
            stop,
            thread: Some(thread),
        })
    }

    /// What the loop polls (readable when a batch may be waiting).
    pub fn wake_fd(&self) -> BorrowedFd<'_> {
        self.wake.as_fd()
    }

    /// The next batch, if one is waiting. The wake-up signal is drained first, so a batch
    /// queued after this returns `None` leaves the signal set for the next poll.
    pub fn take(&mut self) -> Option<InBatch> {
        let mut sink = [0u8; 64];
        while matches!((&self.wake).read(&mut sink), Ok(n) if n > 0) {}
        self.batches.as_ref()?.try_recv().ok()
    }

    /// Hands a batch back to be filled again.
    pub fn reuse(&mut self, mut batch: InBatch) {
        batch.used = 0;
        batch.datagrams.clear();
        batch.calls = 0;
        batch.error = None;
        let _ = self.spare.try_send(batch);
    }
}

impl Drop for RecvThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // A thread waiting to queue a batch finds the queue gone.
        self.batches = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(
    sock: UdpSocket,
    mut reader: Reader,
    tx: SyncSender<InBatch>,
    spares: Receiver<InBatch>,
    mut waker: UnixStream,
    openers: Arc<Openers>,
    stop: Arc<AtomicBool>,
) {
    let mut seen = 0;
    let mut table: PeerMap<Opener> = PeerMap::default();
    // A batch that read nothing is kept for the next turn.
    let mut held: Option<InBatch> = None;
    while !stop.load(Ordering::Relaxed) {
        let mut fds = [PollFd::new(sock.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(POLL_TICK)) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => {
                let batch = InBatch {
                    error: Some(io::Error::from(e)),
                    ..InBatch::default()
                };
                let _ = tx.send(batch);
                return;
            }
        }
        if let Some(t) = openers.changed(&mut seen) {
            table = t;
        }
        let mut batch = held
            .take()
            .or_else(|| spares.try_recv().ok())
            .unwrap_or_default();
        fill(&sock, &mut reader, &mut batch);
        for d in &mut batch.datagrams {
            if let Some(opener) = table.get(&d.from) {
                d.attempt = opener.open(&mut batch.bytes[d.range.clone()]);
            }
        }
        if batch.datagrams.is_empty() && batch.error.is_none() {
            held = Some(batch);
            continue;
        }
        if tx.send(batch).is_err() {
            return;
        }
        // One byte says "look"; a full pair already says so.
        let _ = waker.write(&[1]);
    }
}

/// Read what the socket holds, up to a batch.
fn fill(sock: &UdpSocket, reader: &mut Reader, batch: &mut InBatch) {
    if batch.bytes.len() < RECV_BATCH_BYTES + MAX_GRO_BYTES {
        batch.bytes.resize(RECV_BATCH_BYTES + MAX_GRO_BYTES, 0);
    }
    for _ in 0..RECV_BATCH {
        if batch.used >= RECV_BATCH_BYTES {
            return;
        }
        let at = batch.used;
        let got: io::Result<Received> = reader.read(sock, &mut batch.bytes[at..at + MAX_GRO_BYTES]);
        match got {
            Ok((n, from, segment, stamp)) => {
                batch.used += n;
                batch.calls += 1;
                let stamp = stamp.unwrap_or_else(wall_clock);
                for d in split(n, segment) {
                    batch.datagrams.push(Arrived {
                        from,
                        stamp,
                        range: at + d.start..at + d.end,
                        attempt: OpenAttempt::Pass,
                    });
                }
            }
            Err(e) => {
                match e.kind() {
                    io::ErrorKind::WouldBlock => return,
                    io::ErrorKind::Interrupted => continue,
                    // An ICMP error on an unconnected socket names no peer to act on.
                    io::ErrorKind::ConnectionRefused => continue,
                    _ => {
                        batch.error = Some(e);
                        return;
                    }
                }
            }
        }
    }
}

fn wall_clock() -> TimeSpec {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    TimeSpec::from_duration(now)
}
