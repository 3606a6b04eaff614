//! Flow control between the sending and the receiving thread of a network case.
//!
//! UDP over loopback never blocks the sender on the receiver: a datagram the receiving socket
//! has no room for is dropped. So the sender keeps at most a window of bytes in flight (handed
//! to the kernel, not yet read by the receiver), well under the receiving socket's buffer, and
//! when the window is full it sleeps (`park`) until the receiver has read half of it. The
//! handshake costs one wake-up per half window (megabytes), alike in every case, so it does not
//! weigh on the comparison. A stalled receiver (a lost datagram, a failed read) ends the case
//! with an error instead of a hang.

use anyhow::{bail, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::OnceLock;
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// How long the receiver may take nothing before the sender gives up.
pub const STALL: Duration = Duration::from_secs(5);

/// The bytes in flight between one sender and one receiver.
pub struct Window {
    /// Bytes the sender handed to the kernel (written by the sender only).
    sent: AtomicU64,
    /// Bytes the receiver read (written by the receiver only).
    received: AtomicU64,
    /// The sender sleeps until the receiver frees half the window.
    waiting: AtomicBool,
    /// The receiver failed: the sender stops.
    failed: AtomicBool,
    limit: u64,
    sender: OnceLock<Thread>,
}

impl Window {
    /// A window of `limit` bytes.
    pub fn new(limit: u64) -> Window {
        Window {
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
            waiting: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            limit,
            sender: OnceLock::new(),
        }
    }

    /// Called once by the sending thread before it sends.
    pub fn register_sender(&self) {
        let _ = self.sender.set(thread::current());
    }

    /// Whether `len` more bytes fit in the window now.
    pub fn room(&self, len: u64) -> bool {
        self.sent.load(Relaxed) - self.received.load(SeqCst) + len <= self.limit
    }

    /// Wait until `len` more bytes fit; `parks` counts the sleeps. Fails when the receiver
    /// failed or took nothing for [`STALL`].
    pub fn admit(&self, len: u64, parks: &mut u64) -> Result<()> {
        let mut last = self.received.load(SeqCst);
        let mut since = Instant::now();
        loop {
            if self.room(len) {
                return Ok(());
            }
            self.waiting.store(true, SeqCst);
            // Checked again after saying so: either this sees the receiver's latest count, or
            // the receiver sees `waiting` (both sides use SeqCst).
            if self.room(len) {
                self.waiting.store(false, Relaxed);
                return Ok(());
            }
            if self.failed.load(SeqCst) {
                bail!("the receiver failed");
            }
            let now = self.received.load(SeqCst);
            if now != last {
                (last, since) = (now, Instant::now());
            } else if since.elapsed() > STALL {
                bail!(
                    "the receiver read nothing for {STALL:?} with {} bytes in flight \
                     (datagrams lost?)",
                    self.sent.load(Relaxed) - now
                );
            }
            *parks += 1;
            thread::park_timeout(Duration::from_millis(100));
        }
    }

    /// The sender handed `len` more bytes to the kernel.
    pub fn sent(&self, len: u64) {
        self.sent.fetch_add(len, Relaxed);
    }

    /// The receiver has read `total` bytes so far; wakes a waiting sender once half the window
    /// is free.
    pub fn received(&self, total: u64) {
        self.received.store(total, SeqCst);
        if self.waiting.load(SeqCst)
            && self.sent.load(Relaxed).saturating_sub(total) <= self.limit / 2
            && self.waiting.swap(false, SeqCst)
        {
            if let Some(t) = self.sender.get() {
                t.unpark();
            }
        }
    }

    /// The receiver stopped with an error: wake the sender to stop too.
    pub fn fail(&self) {
        self.failed.store(true, SeqCst);
        if let Some(t) = self.sender.get() {
            t.unpark();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_sender_waits_for_the_receiver_and_never_exceeds_the_window() {
        let w = Arc::new(Window::new(1000));
        let total = 100_000u64;
        let rx = {
            let w = w.clone();
            thread::spawn(move || {
                let mut got = 0;
                let mut most = 0;
                while got < total {
                    let sent = w.sent.load(SeqCst);
                    most = most.max(sent - got);
                    if sent > got {
                        got += (sent - got).min(150);
                        w.received(got);
                    } else {
                        thread::yield_now();
                    }
                }
                most
            })
        };
        w.register_sender();
        let (mut done, mut parks) = (0, 0);
        while done < total {
            w.admit(100, &mut parks).unwrap();
            w.sent(100);
            done += 100;
        }
        let most = rx.join().unwrap();
        assert!(most <= 1000, "{most} bytes were in flight");
        assert!(most >= 500, "the window was never used: {most}");
    }

    #[test]
    fn a_failed_receiver_stops_the_sender() {
        let w = Window::new(100);
        w.register_sender();
        w.sent(100);
        w.fail();
        let e = w.admit(1, &mut 0).unwrap_err();
        assert!(e.to_string().contains("receiver failed"), "{e}");
    }
}
