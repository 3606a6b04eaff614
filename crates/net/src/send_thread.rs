//! The sending thread: seals and sends the datagrams the connection's thread writes.
//!
//! At 10 Gb/s a sealed transfer's sender spends about as much time in AES-GCM and in the
//! kernel's `send` as in everything else the connection does (bench/README.md, "Where a
//! sealed run's CPU goes"). Both are work on bytes that are already decided: the connection
//! fixes each datagram's packet number, its seal number and its key when it writes it
//! (`Connection::poll_transmit_unsealed`), so the encryption and the system call can run on
//! another core while the connection goes on with the next batch and with the ACKs.
//!
//! The connection's thread fills a [`OutBatch`] (datagrams back to back, each with its pending
//! seal) and hands it over through a bounded queue ([`QUEUE`] batches: at most 4 × 64 KB wait);
//! when the queue is full, handing over waits for the sending thread, which never waits on the
//! socket, so the wait is one batch's work at most. The sending thread applies every seal,
//! then sends the batch (one GSO send, or one datagram per call where the kernel refuses) and
//! hands the batch back, emptied for reuse, with what happened: sent, dropped because the
//! socket was full (the connection's thread then reports the batch's data packets as local
//! drops, as it does when it sends itself), or an error such as a refused port. No datagram
//! leaves before its seal is applied: the thread seals a whole batch before its first send.
//!
//! Order is kept: one queue, one thread, batches sent in the order written; the CLOSE a
//! closing connection writes last goes out last. Dropping the [`SendThread`] closes the queue;
//! the thread sends what is queued and ends, and the drop waits for it.

use crate::socket::send_datagrams;
use longhaul_proto::PendingSeal;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Batches that may wait for the sending thread.
pub const QUEUE: usize = 4;

/// Datagrams to send together: back to back in `bytes`, all `segment` bytes long but the last.
#[derive(Debug, Default)]
pub struct OutBatch {
    /// The datagrams, back to back.
    pub bytes: Vec<u8>,
    /// Bytes of each datagram but the last: the GSO segment size.
    pub segment: usize,
    /// Datagrams in the batch.
    pub count: usize,
    /// Each sealed datagram's offset in `bytes` and its seal.
    pub seals: Vec<(usize, PendingSeal)>,
    /// The data packet numbers in the batch, for local drops.
    pub pns: Vec<u64>,
}

impl OutBatch {
    /// Empties the batch for reuse, keeping its allocations.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.segment = 0;
        self.count = 0;
        self.seals.clear();
        self.pns.clear();
    }

    /// Apply every pending seal (in place; lengths do not change). False if one could not be
    /// applied (the connection wrote no room for it: a defect), and then nothing of the batch
    /// may leave.
    fn seal(&mut self) -> bool {
        let mut all = true;
        for (at, seal) in self.seals.drain(..) {
            let len = seal.len();
            let sealed = self
                .bytes
                .get_mut(at..at + len)
                .and_then(|datagram| seal.apply(datagram));
            all &= sealed == Some(len);
        }
        all
    }
}

impl OutBatch {
    /// Seal the batch and send it to `peer` (`None`: a connected socket), as GSO segments of
    /// `segment` bytes if `gso` is set (cleared where the kernel refuses). What the sending thread does
    /// with each batch, and the connection's thread with its own when no sending thread runs.
    /// Returns what became of it and the system calls it took.
    pub(crate) fn transmit(
        &mut self,
        sock: &UdpSocket,
        peer: Option<SocketAddr>,
        gso: &mut bool,
    ) -> (SendOutcome, u64) {
        let mut calls = 0;
        if !self.seal() {
            let e = io::Error::other("a datagram could not be sealed; none was sent");
            return (SendOutcome::Failed(e), calls);
        }
        let sent = send_datagrams(
            sock,
            peer,
            &self.bytes,
            self.segment,
            self.count,
            gso,
            &mut calls,
        );
        let outcome = match sent {
            Ok(()) => SendOutcome::Sent,
            Err(e) if crate::socket::is_full(&e) => SendOutcome::Full,
            Err(e) => SendOutcome::Failed(e),
        };
        (outcome, calls)
    }
}

/// What became of a batch.
#[derive(Debug)]
pub enum SendOutcome {
    /// Every datagram left.
    Sent,
    /// The socket (or the device queue behind it) was full: nothing of it left.
    Full,
    /// The socket failed otherwise.
    Failed(io::Error),
}

/// A batch handed back.
#[derive(Debug)]
pub struct Report {
    /// The batch, its bytes and seals gone; its `count` and `pns` still say what it held.
    pub batch: OutBatch,
    /// What became of it.
    pub outcome: SendOutcome,
    /// System calls it took.
    pub calls: u64,
    /// Whether GSO is still on after it (false: the kernel refused it, the thread sends one
    /// datagram per call from now on).
    pub gso: bool,
}

/// The handle the connection's thread keeps.
pub struct SendThread {
    queue: Option<SyncSender<OutBatch>>,
    reports: Receiver<Report>,
    /// Batches back from the thread, for reuse.
    spare: Vec<OutBatch>,
    thread: Option<JoinHandle<()>>,
}

impl SendThread {
    /// Start sending on `sock` (a clone of the connection's socket) to `peer` (`None`: the
    /// socket is connected), with GSO if `gso`.
    pub fn start(sock: UdpSocket, peer: Option<SocketAddr>, gso: bool) -> io::Result<SendThread> {
        let (queue, batches) = mpsc::sync_channel::<OutBatch>(QUEUE);
        let (report, reports) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("longhaul-send".into())
            .spawn(move || {
                let mut gso = gso;
                for mut batch in batches {
                    let (outcome, calls) = batch.transmit(&sock, peer, &mut gso);
                    batch.bytes.clear();
                    if report
                        .send(Report {
                            batch,
                            outcome,
                            calls,
                            gso,
                        })
                        .is_err()
                    {
                        return;
                    }
                }
            })?;
        Ok(SendThread {
            queue: Some(queue),
            reports,
            spare: Vec::new(),
            thread: Some(thread),
        })
    }

    /// An empty batch to fill (reused when one has come back).
    pub fn batch(&mut self) -> OutBatch {
        self.spare.pop().unwrap_or_default()
    }

    /// Queue `batch`; waits while [`QUEUE`] batches are waiting already.
    pub fn send(&mut self, batch: OutBatch) -> io::Result<()> {
        self.queue
            .as_ref()
            .ok_or_else(|| io::Error::other("the sending thread was finished"))?
            .send(batch)
            .map_err(|_| io::Error::other("the sending thread has stopped"))
    }

    /// The next report of a batch the thread has finished, if any. The caller clears and
    /// returns the batch with [`SendThread::reuse`].
    pub fn report(&mut self) -> Option<Report> {
        self.reports.try_recv().ok()
    }

    /// Hands a batch back to be filled again.
    pub fn reuse(&mut self, mut batch: OutBatch) {
        batch.clear();
        // Enough to fill the queue and the batch being built; more were only a burst's.
        if self.spare.len() < QUEUE + 2 {
            self.spare.push(batch);
        }
    }
}

impl SendThread {
    /// Close the queue and wait until the thread has sent everything queued; the reports not
    /// yet taken remain to be taken with [`SendThread::report`].
    pub fn finish(&mut self) {
        // The thread sends what is queued, then finds the queue closed and ends.
        self.queue = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for SendThread {
    fn drop(&mut self) {
        self.finish();
    }
}
