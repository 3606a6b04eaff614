//! `longhaul send PATH… HOST`: files, directories and links to a `longhaul recv`, over one
//! connection.
//!
//! The loop, each turn: read the datagrams that arrived, let due timers act, read the
//! receiver's messages (plans, verdicts), top up the connection's send buffer (the manifest,
//! then each planned file's bytes and digest, at most `rate_limit`), send what the connection
//! has ready, then sleep until the next datagram, deadline or report. A file has arrived only
//! when the receiver says `DONE` with the digest the sender computed: acknowledged bytes are in
//! the receiver's memory, not yet on its disk.
//!
//! Resuming: the receiver's plan may offer a prefix of a file it holds from a cut transfer.
//! The sender hashes the same prefix of its own file, chunk by chunk, and starts after it only
//! if the digests agree (otherwise from zero); meanwhile it keeps the connection alive. The
//! prefix's chunk digests are also the start of the file's digest (`hashlist`), so no byte is
//! hashed twice.
//!
//! Its part `sender` holds what goes on the stream and what comes back; here: the options,
//! the loop that drives the connection over the socket, and the reports.

mod sender;

use crate::manifest;
use crate::mtu::PathMtu;
use crate::socket::{self, Clock, SocketStats, UdpPort};
use crate::NetError;
use longhaul_proto::{CloseReason, Config, Connection, Side, Stats};
use sender::Sender;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How [`send_paths`] sends.
pub struct SendOptions {
    /// The connection settings; a `pmtu_max` is the path MTU search's cap, which the route
    /// lowers ([`crate::mtu::fit_to_route`]).
    pub config: Config,
    /// The name to store a single path under (default: its own name).
    pub name: Option<String>,
    /// Follow symbolic links inside directories (default: send them as links).
    pub follow_links: bool,
    /// Resume from what the receiver kept of a cut transfer (default); `false` starts over.
    pub resume: bool,
    /// Cap on the rate of file bytes, bits per second.
    pub rate_limit: Option<u64>,
    /// How often `progress` is called.
    pub interval: Duration,
    /// Give up when the handshake has had no answer for this long.
    pub connect_timeout: Duration,
    /// Use UDP segmentation offload where the kernel has it (see [`crate::socket`]).
    pub offload: bool,
    /// Seal and send datagrams on a thread of their own ([`crate::send_thread`]); `None`:
    /// where the host has the cores for it ([`crate::io_threads_by_default`]).
    pub send_thread: Option<bool>,
    /// Called once with the receiver's authenticated key when the handshake completes, before
    /// any file byte is sent (trust on first use records it here); an error ends the transfer.
    pub on_peer_key: Option<TrustHook>,
}

/// See [`SendOptions::on_peer_key`].
pub type TrustHook = Box<dyn FnMut(&[u8; 32]) -> Result<(), String>>;

/// One report interval.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Since the connection started.
    pub elapsed: Duration,
    /// File bytes to move in this session (what the receiver did not already hold).
    pub total: u64,
    /// Of those, acknowledged by the receiver.
    pub done: u64,
    /// Files verified and stored by the receiver.
    pub files_done: usize,
    /// Files to send.
    pub files_total: usize,
    /// The file being sent now.
    pub current: Option<String>,
    /// The connection's counters and estimates (cwnd, RTT, losses).
    pub stats: Stats,
    /// The socket's counters.
    pub socket: SocketStats,
}

/// What happened to one entry.
#[derive(Clone, Debug)]
pub struct FileReport {
    /// The path as the receiver names it.
    pub path: String,
    /// The file's size, bytes (0 for a directory or link).
    pub size: u64,
    /// Bytes moved in this session.
    pub sent: u64,
    /// Bytes the receiver already held from a cut transfer (verified, not moved again).
    pub resumed: u64,
    /// Of the bytes sent, those read from the disk around the page cache, which did not hold
    /// them (`feed`).
    pub read_direct: u64,
    /// What became of it.
    pub outcome: Outcome,
}

/// What became of one entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Stored and verified; the file's digest (`hashlist`: BLAKE3 over its 1 MiB chunks'
    /// BLAKE3 digests) in hex.
    Stored(String),
    /// Not sent, and nothing wrong (already there; a directory or link now in place).
    Skipped(String),
    /// Refused by the receiver's plan, or failed.
    Failed(String),
}

/// What a session measured.
#[derive(Clone, Debug)]
pub struct SendReport {
    /// The receiver's address.
    pub peer: SocketAddr,
    /// Each entry of the manifest, in order.
    pub files: Vec<FileReport>,
    /// From the first handshake packet to the receiver's last verdict.
    pub duration: Duration,
    /// The connection's counters at the end.
    pub stats: Stats,
    /// The socket's counters at the end.
    pub socket: SocketStats,
    /// Whether GSO and GRO were in use on the sender's socket.
    pub offloads: (bool, bool),
    /// Whether a sending thread sealed and sent the datagrams.
    pub send_thread: bool,
    /// The receiver's authenticated key (`None`: security off).
    pub peer_key: Option<[u8; 32]>,
    /// The AEAD suite the handshake settled on (`None`: security off).
    pub cipher: Option<String>,
    /// The size of the datagrams, and how it was settled.
    pub path_mtu: PathMtu,
}

impl SendReport {
    /// File bytes moved in this session.
    pub fn bytes_sent(&self) -> u64 {
        self.files.iter().map(|f| f.sent).sum()
    }
    /// Bytes the receiver already held from a cut transfer, over all files.
    pub fn bytes_resumed(&self) -> u64 {
        self.files.iter().map(|f| f.resumed).sum()
    }
    /// Entries that were refused or failed.
    pub fn failed(&self) -> usize {
        self.files
            .iter()
            .filter(|f| matches!(f.outcome, Outcome::Failed(_)))
            .count()
    }
    /// File bytes per second moved, handshake and final round trip included.
    pub fn goodput_bps(&self) -> f64 {
        self.bytes_sent() as f64 * 8.0 / self.duration.as_secs_f64().max(1e-9)
    }
}

/// Send `paths` to the receiver at `peer`; `progress` is called every `options.interval` and
/// `stop` (Ctrl-C) closes the connection and returns [`NetError::Interrupted`].
pub fn send_paths(
    paths: &[PathBuf],
    peer: SocketAddr,
    options: SendOptions,
    stop: &AtomicBool,
    mut progress: impl FnMut(&Progress),
) -> Result<SendReport, NetError> {
    let manifest = manifest::collect(paths, options.name.as_deref(), options.follow_links)?;
    let local: SocketAddr = if peer.is_ipv6() {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    };
    let max_datagram = options.config.max_datagram_size();
    let mut port = UdpPort::bind(local, max_datagram, options.offload).map_err(NetError::Socket)?;
    // Connected: datagrams from anyone else are filtered out, and a closed port is reported.
    port.socket().connect(peer).map_err(NetError::Socket)?;
    let mut config = options.config.clone();
    let route = crate::mtu::fit_to_route(port.socket(), &mut config);
    let send_thread = options
        .send_thread
        .unwrap_or_else(crate::io_threads_by_default);
    if send_thread {
        port.start_send_thread().map_err(NetError::Socket)?;
    }
    let clock = Clock::start();
    let conn = Connection::new(config, Side::Client, clock.now())?;
    let mut s = Sender::new(conn, manifest.items, manifest.unsent, &options);
    let mut on_peer_key = options.on_peer_key;
    let mut inbuf = vec![0u8; 65_536];
    let mut next_report = Instant::now() + options.interval;
    let started = Instant::now();
    let mut established_once = false;

    loop {
        if stop.load(Ordering::Relaxed) {
            port.close(None, &mut s.conn, clock.now());
            return Err(NetError::Interrupted);
        }
        let mut recv_err = None;
        port.receive(&mut inbuf, &clock, |_, d, at| {
            // Each datagram at its own arrival time (see `socket`): RTT samples are the
            // controller's congestion signal. A datagram the connection rejects is counted in
            // its stats; the transfer goes on.
            let _ = s.conn.handle_packet_at(at.now, at.stamped, d, false);
        })
        .unwrap_or_else(|e| recv_err = Some(e));
        if let Some(e) = recv_err {
            return Err(refused_or(e, peer));
        }
        // A connection that closed is no longer established: whether it ever was decides
        // between "no answer" and "stopped answering".
        established_once |= s.conn.is_established();
        let now = clock.now();
        if s.conn.poll_timeout().is_some_and(|t| t <= now) {
            s.conn.handle_timeout(now);
        }
        if let (Some(key), Some(hook)) = (s.conn.peer_key(), on_peer_key.as_mut()) {
            if let Err(why) = hook(&key) {
                port.close(None, &mut s.conn, clock.now());
                return Err(NetError::Trust(why));
            }
            on_peer_key = None;
        }
        if let Err(e) = s.read_messages() {
            port.close(None, &mut s.conn, clock.now());
            return Err(e);
        }
        if s.bye {
            let stats = s.conn.stats();
            port.close(None, &mut s.conn, clock.now());
            return Ok(SendReport {
                peer,
                files: s.reports,
                duration: started.elapsed(),
                stats,
                socket: port.stats,
                offloads: port.offloads(),
                send_thread,
                peer_key: s.conn.peer_key(),
                cipher: s.conn.cipher().map(|c| c.name().to_string()),
                path_mtu: PathMtu::new(&stats, s.conn.config().base_mtu(), route),
            });
        }
        // No file byte before the hook has accepted the receiver's key.
        let wake = match if on_peer_key.is_some() && s.conn.is_secure() {
            Ok(None)
        } else {
            s.top_up()
        } {
            Ok(w) => w,
            Err(e) => {
                port.close(None, &mut s.conn, clock.now());
                return Err(e);
            }
        };
        if s.conn.is_closed() {
            return Err(closed_error(
                s.conn.close_reason(),
                established_once,
                s.progress_bytes(),
                started.elapsed(),
            ));
        }
        if !established_once && started.elapsed() > options.connect_timeout {
            return Err(NetError::NoAnswer(peer, options.connect_timeout));
        }
        let now = clock.now();
        port.flush(None, &mut s.conn, now)
            .map_err(|e| refused_or(e, peer))?;

        if Instant::now() >= next_report {
            progress(&s.progress(started.elapsed(), port.stats));
            next_report += options.interval;
        }
        let deadline = s.conn.poll_timeout().map(|t| clock.instant(t));
        let wake = socket::earliest(wake, Some(next_report));
        port.wait(socket::earliest(deadline, wake))
            .map_err(NetError::Socket)?;
    }
}

fn refused_or(e: std::io::Error, peer: SocketAddr) -> NetError {
    if e.kind() == std::io::ErrorKind::ConnectionRefused {
        NetError::PortClosed(peer)
    } else {
        NetError::Socket(e)
    }
}

fn closed_error(
    reason: Option<CloseReason>,
    established: bool,
    bytes: u64,
    after: Duration,
) -> NetError {
    use longhaul_proto::CloseCode;
    NetError::Closed(match reason {
        Some(r) if r.code == CloseCode::PeerKeyMismatch => "the receiver presented a key other \
            than the one expected (--peer-key, or its known_hosts line): it may be an impostor, \
            and nothing was sent. If its key changed on purpose, remove its line from \
            known_hosts"
            .to_string(),
        Some(r) if r.code == CloseCode::Unauthorized => "the receiver does not authorize this \
            sender's key: add the line `longhaul keygen --show` prints here to the receiver's \
            ~/.longhaul/authorized_keys"
            .to_string(),
        Some(r) if r.code == CloseCode::HandshakeFailed => "the secure handshake failed: are \
            both ends started alike (one with --insecure, the other not), and of one version?"
            .to_string(),
        Some(r) if r.by_peer && r.code == CloseCode::TimedOut => format!(
            "the receiver stopped hearing from this sender mid-transfer and closed the \
             connection, after {bytes} file bytes were acknowledged in {:.1} s (is the path \
             down in one direction?); run the same command again to resume",
            after.as_secs_f64()
        ),
        Some(r) if r.by_peer => format!("the receiver closed the connection ({:?})", r.code),
        Some(r) if !established => format!("no handshake answer ({:?})", r.code),
        Some(r) => format!(
            "the receiver stopped answering mid-transfer, after {bytes} file bytes were \
             acknowledged in {:.1} s ({:?}); run the same command again to resume",
            after.as_secs_f64(),
            r.code
        ),
        None => "the connection closed".to_string(),
    })
}
