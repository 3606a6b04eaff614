//! The sending thread: seals and sends the datagrams the connection's thread writes.
//!
//! At 10 Gb/s a sealed transfer's sender spends about as much time in the AEAD (AES-256-GCM
//! there) and in the kernel's `send` as in everything else the connection does
//! (bench/README.md, "Where a sealed run's CPU goes"). Both are work on bytes that are already decided: the connection
//! fixes each datagram's packet number, its seal number and its key when it writes it
//! (`Connection::poll_transmit_vectored`), so the encryption and the system call can run on
//! another core while the connection goes on with the next batch and with the ACKs.
//!
//! The connection's thread fills a [`OutBatch`] (datagrams back to back, each with its pending
//! seal, and a data packet as its header and its payload lent from the file chunk it lies in:
//! below) and hands it over through a bounded queue ([`QUEUE`] batches: at
//! most 4 × 64 KB wait);
//! when the queue is full, handing over waits for the sending thread, which never waits on the
//! socket, so the wait is one batch's work at most. The sending thread applies every seal,
//! then sends the batch (one GSO send, or one datagram per call where the kernel refuses) and
//! hands the batch back, emptied for reuse, with what happened: sent, dropped because the
//! socket was full (the connection's thread then reports the batch's data packets as local
//! drops, as it does when it sends itself), or an error such as a refused port. No datagram
//! leaves before its seal is applied: the thread seals a whole batch before its first send.
//!
//! **Payloads lent, not copied.** A plain data packet's payload is already in memory, in the
//! chunk of the file the application gave the connection (`Connection::write_owned`).
//! Copying it into the batch, next to its header, only for the kernel to copy it again cost a
//! plain loopback sender about a tenth of its CPU (bench/README.md). So the batch holds the
//! header's bytes and a [`Payload`], a shared reference to the payload's range of the chunk,
//! and the send is one `sendmsg` whose iovec list alternates headers and payloads (at most
//! [`MAX_PARTS`], far below Linux's 1024); GSO cuts the concatenated bytes every segment size
//! whatever the slices, so the datagrams that leave are the bytes a copy would have made. A
//! chunk is shared, not borrowed: the connection offers it back to the file reader only once
//! it is acknowledged and no payload of it remains, so a batch waiting here (or carrying a
//! retransmission of bytes the receiver has meanwhile acknowledged) never reads a chunk being
//! refilled. The thread drops a batch's payloads as soon as it is sent, before the report
//! goes back. With security on the payload is lent to the datagram's seal instead: the
//! connection writes the header and leaves room after it, and applying the seal here encrypts
//! the payload from the chunk into that room, tag last (`longhaul_proto::PendingSeal`), so the
//! datagram is one run of the batch's bytes and the file byte is read once, by the AEAD, on
//! this thread. Handshakes, ACKs and closes are written whole.
//!
//! Order is kept: one queue, one thread, batches sent in the order written; the CLOSE a
//! closing connection writes last goes out last. Dropping the [`SendThread`] closes the queue;
//! the thread sends what is queued and ends, and the drop waits for it.

use crate::socket::{send_datagrams, MAX_PARTS};
use longhaul_proto::{PacketKind, Payload, PendingSeal, Transmit};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Batches that may wait for the sending thread.
pub const QUEUE: usize = 4;

/// Datagrams to send together, all `segment` bytes long but the last: what the connection
/// wrote of each (the datagram whole, or a data packet's header when its payload is lent) back
/// to back, and the lent payloads, each to go right after its header.
#[derive(Debug, Default)]
pub struct OutBatch {
    /// What the connection wrote, in `bytes[..written]`. The vector keeps its length from one
    /// batch to the next (only `written` goes back to 0): the room offered for a datagram is
    /// not cleared first, as the connection writes every byte it returns.
    bytes: Vec<u8>,
    written: usize,
    /// Each lent payload, with the offset in `bytes` it follows (its header's end), in order.
    payloads: Vec<(usize, Payload)>,
    /// Bytes of the datagrams in all, lent payloads included.
    len: usize,
    /// Each sealed datagram's offset in `bytes` and its seal.
    seals: Vec<(usize, PendingSeal)>,
    /// Bytes of each datagram but the last: the GSO segment size.
    pub segment: usize,
    /// Datagrams in the batch.
    pub count: usize,
    /// The data packet numbers in the batch, for local drops.
    pub pns: Vec<u64>,
}

impl OutBatch {
    /// An empty batch with room for `bytes` bytes written and `datagrams` datagrams.
    pub fn with_capacity(bytes: usize, datagrams: usize) -> OutBatch {
        OutBatch {
            bytes: vec![0; bytes],
            payloads: Vec::with_capacity(datagrams),
            pns: Vec::with_capacity(datagrams),
            ..OutBatch::default()
        }
    }

    /// Room for the connection to write the next datagram in, `max` bytes (for
    /// `Connection::poll_transmit_vectored`); [`OutBatch::push`] then takes what it wrote.
    pub fn room(&mut self, max: usize) -> &mut [u8] {
        let end = self.written + max;
        if self.bytes.len() < end {
            self.bytes.resize(end, 0);
        }
        &mut self.bytes[self.written..end]
    }

    /// Add the datagram the connection wrote in [`OutBatch::room`]: `t.len` bytes there, with
    /// its pending seal and its lent payload. Returns the datagram's length.
    pub fn push(
        &mut self,
        t: &Transmit,
        seal: Option<PendingSeal>,
        payload: Option<Payload>,
    ) -> usize {
        let at = self.written;
        self.written += t.len;
        self.seals.extend(seal.map(|s| (at, s)));
        let mut len = t.len;
        if let Some(p) = payload {
            len += p.len();
            self.payloads.push((self.written, p));
        }
        if t.kind == PacketKind::Data {
            self.pns.extend(t.packet_number);
        }
        if self.count == 0 {
            self.segment = len;
        }
        self.count += 1;
        self.len += len;
        len
    }

    /// Bytes of the datagrams in all.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the batch holds no datagram.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Empties the batch for reuse, keeping its allocations.
    pub fn clear(&mut self) {
        self.forget_datagrams();
        self.segment = 0;
        self.count = 0;
        self.pns.clear();
    }

    /// Lets go of the datagrams' bytes, seals and lent payloads (so that their buffers may go
    /// back to the application), keeping `count` and `pns`, which say what the batch held.
    fn forget_datagrams(&mut self) {
        self.written = 0;
        self.len = 0;
        self.seals.clear();
        self.payloads.clear();
    }

    /// Apply every pending seal, each over its datagram's bytes (a payload lent to a seal is
    /// encrypted into the room after its header; lengths do not change), and let go of the
    /// payloads the seals held. False if one could not be applied (the connection wrote no room
    /// for it: a defect), and then nothing of the batch may leave.
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

    /// The datagrams as the slices to send, in order: runs of written bytes, each lent payload
    /// between them. `None` if there are more than [`MAX_PARTS`] (a batch of more than
    /// [`crate::socket::MAX_SEGMENTS`] datagrams: a defect).
    fn parts<'a>(&'a self, out: &mut [&'a [u8]; MAX_PARTS]) -> Option<usize> {
        let (mut n, mut from) = (0, 0);
        let mut add = |part: &'a [u8]| -> Option<()> {
            *out.get_mut(n)? = part;
            n += 1;
            Some(())
        };
        for (at, payload) in &self.payloads {
            if *at > from {
                add(self.bytes.get(from..*at)?)?;
            }
            add(payload.as_slice())?;
            from = *at;
        }
        if self.written > from {
            add(self.bytes.get(from..self.written)?)?;
        }
        Some(n)
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
        let mut parts: [&[u8]; MAX_PARTS] = [&[]; MAX_PARTS];
        let Some(n) = self.parts(&mut parts) else {
            let e = io::Error::other("a batch of more datagrams than one send takes");
            return (SendOutcome::Failed(e), calls);
        };
        let sent = send_datagrams(
            sock,
            peer,
            &parts[..n],
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
    /// The batch, its bytes, seals and payloads gone; its `count` and `pns` still say what it
    /// held.
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
                    // The payloads go now, not when the batch comes back: their buffers are
                    // the application's to refill as soon as nothing reads them.
                    batch.forget_datagrams();
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
