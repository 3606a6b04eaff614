//! `longhaul recv`: receive files, directories and links into a directory, from any number of
//! senders at once.
//!
//! One socket, one thread, one [`Connection`](longhaul_proto::Connection) per sender address,
//! and per connection one session of the transfer protocol (`framing`): the sender's manifest
//! is answered entry by entry with a plan (send from the resume point, skip, refuse), then
//! each file's bytes go to its part file (`store`), are verified against the sender's digest
//! and renamed into place before the sender hears `DONE`. A session cut in the middle keeps
//! its part files and journals for the next one; a full disk stops the session with `FATAL`
//! and keeps them too.
//!
//! Its parts: `session` (one sender's session of the transfer protocol) and `door` (where a
//! datagram goes: its session, or admission to a new one). Here: the [`Receiver`], its loop,
//! and what it reports.

mod door;
mod session;

use crate::admission::{Limits, Tokens};
use crate::service::Service;
use crate::socket::{self, Clock, UdpPort};
use crate::store::Store;
use crate::NetError;
use door::Door;
use longhaul_proto::{Config, OpenAttempt, Stats, Time};
use session::{Phase, Session, Whose};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How soon the loop looks again while a file's writer has bytes to write (what it writes opens
/// the receive window, and frees its queue; nothing else tells this thread): 1 MB of a 2 GB/s
/// disk, a quarter of one batch of pieces, and a stalled disk costs 2,000 wake-ups a second.
const DISK_RETRY: Duration = Duration::from_micros(500);
/// How soon the loop looks again for files placed, while some are being placed.
const PLACE_RETRY: Duration = Duration::from_micros(200);

/// A session of the same sender that holds a part file another one asks for is taken to be
/// gone (a killed process, a path that went down) once nothing was heard from it for this
/// long: more than twice the sender's keepalive interval. The newer session then takes its
/// part files over; before that, it waits.
pub const STALE_AFTER: Duration = Duration::from_secs(5);

/// How long a session waits for a part file another live session (or another receiver
/// process) is writing before the file is refused as busy.
pub const BUSY_WAIT: Duration = Duration::from_secs(5);

/// How often a session waiting for a busy part file looks again.
const BUSY_RETRY: Duration = Duration::from_millis(50);

/// How a [`Receiver`] serves.
#[derive(Clone)]
pub struct RecvOptions {
    /// The connection settings each session uses.
    pub config: Config,
    /// The directory files are received into.
    pub dir: PathBuf,
    /// Replace existing files that differ (same size and mtime are skipped regardless).
    pub overwrite: bool,
    /// Keep nothing: receive and verify each file, then drop it (`dir` is not used). For
    /// measuring a path and the transport without a disk.
    pub discard: bool,
    /// Refuse files larger than this.
    pub max_size: u64,
    /// Sessions at once, per source address, and when to demand retry tokens.
    pub limits: Limits,
    /// Use UDP segmentation offload and receive coalescing where the kernel has them.
    pub offload: bool,
    /// Keep the part files of every authenticated sender under this name instead of under the
    /// sender's key. A receiver started over ssh with a one-time key uses the ssh user's name,
    /// so a transfer started again over ssh (with another one-time key) resumes.
    pub sender_name: Option<String>,
    /// Read the socket and open sealed datagrams on a thread of their own
    /// ([`crate::recv_thread`]); `None`: where the host has the cores for it
    /// ([`crate::io_threads_by_default`]).
    pub recv_thread: Option<bool>,
    /// Another protocol served beside transfers ([`crate::service`]: `longhaul probe`'s far
    /// end), to the same keys and admission.
    pub service: Option<Arc<dyn Service>>,
    /// Serve transfers; without, a sender's session ends with FATAL at its first message (a
    /// receiver that only serves `service`).
    pub transfers: bool,
}

/// One file's outcome.
#[derive(Clone, Debug)]
pub struct FileOutcome {
    /// The file's path as the sender named it.
    pub path: String,
    /// File bytes this session wrote (excluding a resumed prefix).
    pub bytes: u64,
    /// Bytes a resumed transfer did not need to move again.
    pub resumed: u64,
    /// The stored file's digest, or why it was not stored.
    pub result: Result<String, String>,
}

/// What happened in one session (one sender's connection).
#[derive(Clone, Debug)]
pub struct Received {
    /// The sender's address.
    pub peer: SocketAddr,
    /// From the session's first datagram to its end.
    pub duration: Duration,
    /// Each file the sender sent, with its outcome.
    pub files: Vec<FileOutcome>,
    /// Entries skipped (already there, directories, links), with the reason.
    pub skipped: Vec<(String, String)>,
    /// Entries refused, with the reason.
    pub refused: Vec<(String, String)>,
    /// Why the session ended early, if it did.
    pub error: Option<String>,
    /// The sender spoke the transfer protocol, of this version or another (a stray handshake
    /// is not a transfer).
    pub genuine: bool,
    /// The sender's authenticated public key (`None` when security is off).
    pub sender_key: Option<[u8; 32]>,
    /// The connection's counters at the end (datagrams rejected, authentication failures…).
    pub stats: Stats,
    /// Datagrams from addresses without a session that opened none (not a handshake, or one
    /// that did not decode), counted by the receiver since the previous transfer's report
    /// (reported with transfers only: `genuine`).
    pub without_session: u64,
    /// File bytes received straight into the piece they were written from, never copied in
    /// user space (`read_batch`).
    pub in_place: u64,
    /// A session of [`RecvOptions::service`], not a transfer: what it did
    /// ([`ServiceSession::summary`](crate::service::ServiceSession::summary)).
    pub service: Option<String>,
}

/// Events reported while serving.
pub enum Event<'a> {
    /// A file's outcome is known: the sender's address and the outcome.
    File(SocketAddr, &'a FileOutcome),
    /// A session ended.
    Session(&'a Received),
}

/// A table by peer address, as the receiver keeps its sessions and their keys: looked up for
/// every datagram, so hashed with foldhash rather than the standard library's SipHash, which
/// took 1.6 % of the receiver's CPU samples at 1,500-byte datagrams against under 1 % for
/// foldhash (bench/README.md, "The receiver hashes while the bytes are hot"). foldhash is
/// seeded at random per table; its weaker resistance to chosen collisions matters little
/// here, since admission keeps a table to at most `max_sessions` peers (64 by default).
pub(crate) type PeerMap<V> = HashMap<SocketAddr, V, foldhash::fast::RandomState>;

/// A receiver: one UDP socket that serves any number of senders into one directory.
pub struct Receiver {
    port: UdpPort,
    local: SocketAddr,
    options: RecvOptions,
    store: Store,
    sessions: PeerMap<Session>,
    tokens: Tokens,
    clock: Clock,
    /// Datagrams without a session since the last session's report.
    without_session: u64,
    /// Receive coalescing is off while a service session is served.
    uncoalesced: bool,
    /// The sender whose datagram came last: the next read goes into its file's piece, where
    /// it can (`read_batch`).
    landing: Option<SocketAddr>,
}

impl Receiver {
    /// Binds `port` on `ip`, or without one on every IPv6 and IPv4 address (IPv4 alone on a
    /// host without IPv6), and opens the receiving directory.
    pub fn bind_port(
        ip: Option<std::net::IpAddr>,
        port: u16,
        options: RecvOptions,
    ) -> Result<Receiver, NetError> {
        let any6 = SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, port));
        let any4 = SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, port));
        match ip {
            Some(ip) => Receiver::bind(SocketAddr::new(ip, port), options),
            None => {
                Receiver::bind(any6, options.clone()).or_else(|_| Receiver::bind(any4, options))
            }
        }
    }

    /// Binds `addr` and opens the receiving directory (its staging directory is created if
    /// missing).
    pub fn bind(addr: SocketAddr, options: RecvOptions) -> Result<Receiver, NetError> {
        if !options.discard && !options.dir.is_dir() {
            return Err(NetError::NotADirectory(options.dir.display().to_string()));
        }
        options.config.validate()?;
        let store = if options.discard {
            Store::discarding()
        } else {
            Store::open(&options.dir, options.overwrite)
                .map_err(|e| NetError::File(options.dir.display().to_string(), e))?
        };
        let max_datagram = options.config.max_datagram_size();
        let mut port =
            UdpPort::bind(addr, max_datagram, options.offload).map_err(NetError::Socket)?;
        if options
            .recv_thread
            .unwrap_or_else(crate::io_threads_by_default)
        {
            port.start_recv_thread().map_err(NetError::Socket)?;
        }
        let local = port.socket().local_addr().map_err(NetError::Socket)?;
        Ok(Receiver {
            port,
            local,
            options,
            store,
            sessions: PeerMap::default(),
            tokens: Tokens::new(),
            clock: Clock::start(),
            without_session: 0,
            uncoalesced: false,
            landing: None,
        })
    }

    /// The address the socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The socket's receive buffer as granted: datagrams beyond it while the loop is busy
    /// (writing to disk) are dropped, and the sender sees loss.
    pub fn recv_buffer(&self) -> usize {
        self.port.recv_buffer
    }

    /// Whether GSO and GRO are in use.
    pub fn offloads(&self) -> (bool, bool) {
        self.port.offloads()
    }

    /// Whether a receiving thread reads the socket and opens datagrams.
    pub fn has_recv_thread(&self) -> bool {
        self.port.openers().is_some()
    }

    /// The receiving directory (`/dev/null` when discarding).
    pub fn dir(&self) -> &Path {
        self.store.root()
    }

    /// Serve until `stop` is set, or after `limit` genuine sessions (senders that spoke the
    /// transfer protocol) have ended; `event` hears of each file and each session.
    pub fn serve(
        &mut self,
        stop: &AtomicBool,
        limit: Option<usize>,
        mut event: impl FnMut(Event),
    ) -> Result<usize, NetError> {
        let mut inbuf = vec![0u8; 65_536];
        let mut app = vec![0u8; 1 << 20];
        let mut ended = 0;
        let openers = self.port.openers().cloned();
        while !stop.load(Ordering::Relaxed) && limit.is_none_or(|l| ended < l) {
            let more = self.receive(&mut inbuf)?;
            let now = self.clock.now();
            // The receiving thread has more read: take it after this turn, without sleeping.
            let mut deadline: Option<Time> = more.then_some(now);
            for ((peer, serial, id), result) in self.store.placed() {
                if let Some(s) = self.sessions.get_mut(&peer).filter(|s| s.serial == serial) {
                    s.placed(&mut self.store, id, result);
                }
            }
            // Nothing tells this thread when a file is placed: look again soon.
            if self.store.placing() > 0 {
                deadline = Some(deadline.map_or(now + PLACE_RETRY, |d| d.min(now + PLACE_RETRY)));
            }
            let mut closed = Vec::new();
            let mut waiting = Vec::new();
            for (peer, s) in self.sessions.iter_mut() {
                if s.conn.poll_timeout().is_some_and(|t| t <= now) {
                    s.conn.handle_timeout(now);
                }
                s.advance(&self.options, &mut self.store, &mut app);
                // A service's client may time datagrams (a probe's trains): while one is
                // served, each datagram is read with its own arrival stamp, none coalesced.
                if s.is_service() && !self.uncoalesced {
                    self.port.set_receive_coalescing(false);
                    self.uncoalesced = true;
                }
                // The receiving thread opens with the keys of the moment.
                if let Some(table) = &openers {
                    let epoch = s.conn.opener_epoch();
                    if epoch != s.published_epoch {
                        if let Some(o) = s.conn.opener() {
                            table.publish(*peer, o);
                        }
                        s.published_epoch = epoch;
                    }
                }
                if let Some(c) = &s.conflict {
                    waiting.push((*peer, s.sender.clone(), c.holder));
                }
                for f in &s.report.files[s.reported..] {
                    event(Event::File(*peer, f));
                }
                s.reported = s.report.files.len();
                // Before the flush: what the disk wrote since may open the window.
                let unwritten = s.hold_unwritten();
                // Unconnected socket: a full buffer is a local drop, other errors are the
                // peer's (an ICMP error for one sender must not stop the others).
                let _ = self.port.flush(Some(*peer), &mut s.conn, now);
                // The sender closes after reading BYE or FATAL; a vanished one times out.
                let over =
                    matches!(s.phase, Phase::Over) && s.out.is_empty() && s.conn.is_send_complete();
                // A handshake abandoned half-way holds a slot until it expires.
                let abandoned = !s.past_handshake()
                    && s.last_heard.elapsed() > self.options.limits.handshake_timeout;
                if abandoned && s.report.error.is_none() {
                    s.report.error = Some(format!(
                        "the handshake did not finish within {} s",
                        self.options.limits.handshake_timeout.as_secs_f64()
                    ));
                }
                if s.conn.is_closed() || over || abandoned {
                    closed.push(*peer);
                }
                // Nothing tells this thread when the writer takes or writes a piece: look
                // again soon.
                let disk = (s.waiting_for_disk() || unwritten > 0).then(|| now + DISK_RETRY);
                deadline = [deadline, s.conn.poll_timeout(), disk]
                    .into_iter()
                    .flatten()
                    .min();
            }
            // A session of the same sender that holds a part file another one asks for, and
            // that has been silent for STALE_AFTER, is from a process that died or a path that
            // went down: the newer session takes its part files over. A live one keeps them.
            for (peer, sender, holder) in &waiting {
                let Some(other) = holder.filter(|h| h != peer && !closed.contains(h)) else {
                    continue;
                };
                if let Some(s) = self.sessions.get_mut(&other) {
                    let silent = s.last_heard.elapsed();
                    if s.sender == *sender && silent >= STALE_AFTER {
                        s.report.error = Some(format!(
                            "replaced by a newer session of the same sender, from {peer}, \
                             which asked for a file this one held (nothing was heard from this \
                             one for {:.0} s)",
                            silent.as_secs_f64()
                        ));
                        s.conn.close();
                        let _ = self.port.flush(Some(other), &mut s.conn, now);
                        closed.push(other);
                    }
                }
            }
            for peer in closed {
                let mut s = self.sessions.remove(&peer).expect("listed");
                if let Some(table) = &openers {
                    table.remove(&peer);
                }
                s.suspend_all(&mut self.store);
                if let Whose::Service(g) = &s.whose {
                    s.report.service = Some(g.summary());
                    // A client of the service ends by closing the connection.
                    let by_peer = s.conn.close_reason().is_some_and(|r| r.by_peer);
                    if !by_peer && s.report.error.is_none() {
                        s.report.error = Some(s.end_reason());
                    }
                } else if !matches!(s.phase, Phase::Over) && s.report.error.is_none() {
                    s.report.error = Some(s.end_reason());
                }
                s.report.duration = s.started.elapsed();
                s.report.stats = s.conn.stats();
                if s.report.genuine {
                    s.report.without_session = std::mem::take(&mut self.without_session);
                }
                // What the receiver serves: transfers, or else the service's sessions.
                let served = if self.options.transfers {
                    s.report.genuine
                } else {
                    s.report.service.is_some()
                };
                if served {
                    ended += 1;
                }
                event(Event::Session(&s.report));
            }
            if self.uncoalesced && !self.sessions.values().any(Session::is_service) {
                self.port.set_receive_coalescing(true);
                self.uncoalesced = false;
            }
            for (peer, _, _) in waiting {
                if let Some(s) = self.sessions.get_mut(&peer) {
                    // Go on at once with what the session already holds, or look again soon.
                    let next = if s.retry_conflict(&mut self.store) {
                        now
                    } else {
                        now + BUSY_RETRY
                    };
                    deadline = Some(deadline.map_or(next, |d| d.min(next)));
                }
            }
            let deadline = deadline.map(|t| self.clock.instant(t));
            // Wake at least every 100 ms to look at `stop`.
            let tick = Instant::now() + Duration::from_millis(100);
            self.port
                .wait(socket::earliest(deadline, Some(tick)))
                .map_err(NetError::Socket)?;
        }
        for (peer, mut s) in self.sessions.drain() {
            s.suspend_all(&mut self.store);
            if let Some(table) = &openers {
                table.remove(&peer);
            }
        }
        Ok(ended)
    }

    /// Read what arrived (or take what the receiving thread read) and hand it to the
    /// sessions; returns whether the receiving thread may have more waiting.
    fn receive(&mut self, inbuf: &mut [u8]) -> Result<bool, NetError> {
        let mut door = Door {
            sessions: &mut self.sessions,
            options: &self.options,
            tokens: &self.tokens,
            store: &mut self.store,
            secure: self.options.config.security.is_on(),
            replies: Vec::new(),
            openers: self.port.openers().cloned(),
            without_session: &mut self.without_session,
            heard: Instant::now(),
        };
        let clock = &self.clock;
        let mut more = false;
        let result = if self.port.openers().is_some() {
            self.port
                .receive_batch(clock, |from, d, at, attempt| match attempt {
                    OpenAttempt::Pass => door.datagram(from, d, at),
                    OpenAttempt::Opened(o) => {
                        if let Some(s) = door.sessions.get_mut(&from) {
                            if s.opened(door.store, at, o, d).is_ok() {
                                s.last_heard = Instant::now();
                            }
                        }
                    }
                    OpenAttempt::Failed => {
                        if let Some(s) = door.sessions.get_mut(&from) {
                            s.conn.handle_open_failed();
                        }
                    }
                })
                .map(|taken| more = taken)
        } else {
            read_batch(&mut self.port, clock, &mut door, &mut self.landing, inbuf)
        };
        let replies = std::mem::take(&mut door.replies);
        for (to, reply) in replies {
            let _ = self.port.socket().send_to(&reply, to);
        }
        match result {
            Ok(()) => Ok(more),
            // An ICMP error for an unconnected socket names no peer we could act on.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Ok(false),
            Err(e) => Err(NetError::Socket(e)),
        }
    }
}

/// Read up to a batch of datagrams, as [`UdpPort::receive`] does, and hand each to `door`.
///
/// **Received where the bytes go.** A file's bytes arrive in data packets that mostly come in
/// order. When the last read brought one datagram (not a coalesced GRO run) from a session
/// whose file takes the stream's next bytes now, the next read goes straight into that file's
/// piece, `Connection::data_prefix` bytes before where its next bytes go
/// ([`Piece::land`](crate::part::Piece::land)). A data packet that continues the stream then
/// has its payload (opened in place, when sealed) exactly there, and the connection, taking it
/// (`Connection::handle_datagram`), leaves it in place: no copy of those bytes in user space
/// at all. The piece's bytes the headers covered are put back before anything reads the
/// piece. Another sender's datagram or a coalesced run read there is copied out to `inbuf`
/// and handled as if read there; any other packet of the session (out of order, an ACK) is
/// handled where it lies, its payload bytes copied to wherever they belong. With 1,500-byte
/// datagrams, which GRO coalesces, reads go to `inbuf`; with 64 KiB ones (loopback) this
/// removed the receiver's copy of each byte into the piece (bench/README.md, "Datagrams
/// received into the file's piece").
fn read_batch(
    port: &mut UdpPort,
    clock: &Clock,
    door: &mut Door,
    landing: &mut Option<SocketAddr>,
    inbuf: &mut [u8],
) -> std::io::Result<()> {
    let mut taken = 0;
    for _ in 0..socket::RECV_BATCH {
        if taken >= socket::RECV_BATCH_BYTES {
            break;
        }
        let mut land = landing.and_then(|p| Some((p, door.land(p)?)));
        let got = match &mut land {
            Some((_, l)) => port.read_once(l.area(), clock),
            None => port.read_once(inbuf, clock),
        };
        let got = match got {
            Ok(Some(got)) => got,
            other => {
                if let Some((peer, l)) = land {
                    door.not_landed(peer, l, inbuf, 0);
                }
                return other.map(|_| ());
            }
        };
        taken += got.len;
        match land {
            Some((peer, l)) if peer == got.from && got.is_single() => {
                door.landed(peer, l, got.len, got.at);
                continue;
            }
            Some((peer, l)) => door.not_landed(peer, l, inbuf, got.len),
            None => {}
        }
        for d in got.datagrams() {
            door.datagram(got.from, &mut inbuf[d], got.at);
        }
        // A coalesced run does not land (its datagrams after the first would be copied out
        // and back): the next read goes into the piece only after one that was not.
        *landing = (got.is_single() && door.sessions.contains_key(&got.from)).then_some(got.from);
    }
    Ok(())
}
