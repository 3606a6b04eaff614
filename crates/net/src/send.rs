//! `longhaul send`: one file to a `longhaul recv`, over one connection.
//!
//! The loop, each turn: read the datagrams that arrived, let due timers act, top up the
//! connection's send buffer from the file (hashing what it reads), read the receiver's status
//! line, send what the connection has ready, then sleep until the next datagram or deadline. The
//! transfer has succeeded only when the receiver says `OK` with the digest the sender computed:
//! acknowledged bytes are in the receiver's memory, not yet on its disk.

use crate::framing::{self, Header, Status, DIGEST_LEN};
use crate::socket::{self, Clock, SocketStats, UdpPort};
use crate::NetError;
use longhaul_proto::{CloseReason, Config, Connection, Side, Stats};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::Read;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// File bytes read per refill of the connection's send buffer.
const READ_CHUNK: usize = 1 << 20;

pub struct SendOptions {
    pub config: Config,
    /// The name to store the file under (default: the file's own name).
    pub name: Option<String>,
    /// How often `progress` is called.
    pub interval: Duration,
    /// Give up when the handshake has had no answer for this long.
    pub connect_timeout: Duration,
    /// Use UDP segmentation offload where the kernel has it (see [`crate::socket`]).
    pub offload: bool,
}

/// One report interval, or the whole transfer.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Since the connection started.
    pub elapsed: Duration,
    /// File bytes the receiver has acknowledged.
    pub bytes_acked: u64,
    pub file_size: u64,
    /// The connection's counters and estimates (cwnd, RTT, losses).
    pub stats: Stats,
    pub socket: SocketStats,
}

/// What a completed transfer measured.
#[derive(Clone, Debug)]
pub struct SendReport {
    pub name: String,
    pub peer: SocketAddr,
    pub size: u64,
    pub sha256: String,
    /// From the first handshake packet to the receiver's `OK`.
    pub duration: Duration,
    pub stats: Stats,
    pub socket: SocketStats,
    /// Whether GSO and GRO were in use on the sender's socket.
    pub offloads: (bool, bool),
}

impl SendReport {
    /// File bytes per second of the whole transfer, handshake and final round trip included.
    pub fn goodput_bps(&self) -> f64 {
        self.size as f64 * 8.0 / self.duration.as_secs_f64().max(1e-9)
    }
}

/// Send `path` to the receiver at `peer`; `progress` is called every `options.interval` and
/// `stop` (Ctrl-C) closes the connection and returns [`NetError::Interrupted`].
pub fn send_file(
    path: &Path,
    peer: SocketAddr,
    options: SendOptions,
    stop: &AtomicBool,
    mut progress: impl FnMut(&Progress),
) -> Result<SendReport, NetError> {
    let open_err = |e| NetError::File(path.display().to_string(), e);
    let mut file = File::open(path).map_err(open_err)?;
    let meta = file.metadata().map_err(open_err)?;
    if !meta.is_file() {
        return Err(NetError::NotAFile(path.display().to_string()));
    }
    let size = meta.len();
    let name = match options.name {
        Some(n) => n,
        None => path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| NetError::NotAFile(path.display().to_string()))?
            .to_string(),
    };
    let header = Header {
        name: name.clone(),
        size,
    }
    .encode()?;

    let local: SocketAddr = if peer.is_ipv6() {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    };
    let max_datagram = options.config.max_datagram_size();
    let mut port = UdpPort::bind(local, max_datagram, options.offload).map_err(NetError::Socket)?;
    // Connected: datagrams from anyone else are filtered out, and a closed port is reported.
    port.socket().connect(peer).map_err(NetError::Socket)?;

    let clock = Clock::start();
    let mut conn = Connection::new(options.config.clone(), Side::Client, clock.now())?;
    let mut inbuf = vec![0u8; 65_536];

    // The stream: header, file, digest. `pending[at..]` has yet to enter the connection.
    let mut pending = header;
    let mut at = 0;
    let mut hasher = Sha256::new();
    let mut file_left = size;
    let mut digest: Option<[u8; DIGEST_LEN]> = None;
    let mut finished = false;

    let mut status_line = Vec::new();
    let mut status: Option<Status> = None;
    let mut next_report = Instant::now() + options.interval;
    let started = Instant::now();
    let header_len = pending.len() as u64;

    loop {
        if stop.load(Ordering::Relaxed) {
            close_now(&mut port, &mut conn, &clock);
            return Err(NetError::Interrupted);
        }
        let mut recv_err = None;
        port.receive(&mut inbuf, &clock, |_, d, arrived| {
            // Each datagram at its own arrival time (see `socket`): RTT samples are the
            // controller's congestion signal. A datagram the connection rejects is counted in
            // its stats; the transfer goes on.
            let _ = conn.handle_packet(arrived, d);
        })
        .unwrap_or_else(|e| recv_err = Some(e));
        if let Some(e) = recv_err {
            return Err(refused_or(e, peer));
        }
        let now = clock.now();
        if conn.poll_timeout().is_some_and(|t| t <= now) {
            conn.handle_timeout(now);
        }

        // Top up the send buffer.
        while !finished {
            if at < pending.len() {
                let n = conn.write(&pending[at..]);
                at += n;
                if at < pending.len() {
                    break;
                }
            }
            if file_left > 0 {
                pending.resize(READ_CHUNK.min(file_left as usize), 0);
                file.read_exact(&mut pending)
                    .map_err(|e| NetError::File(path.display().to_string(), e))?;
                hasher.update(&pending);
                file_left -= pending.len() as u64;
                at = 0;
            } else if digest.is_none() {
                let d: [u8; DIGEST_LEN] = hasher.clone().finalize().into();
                digest = Some(d);
                pending = d.to_vec();
                at = 0;
            } else {
                conn.finish();
                finished = true;
            }
        }

        // The receiver's verdict.
        if status.is_none() {
            let mut piece = [0u8; 512];
            loop {
                let n = conn.read(&mut piece);
                if n == 0 {
                    break;
                }
                status_line.extend_from_slice(&piece[..n]);
            }
            if status_line.contains(&b'\n') || status_line.len() > framing::MAX_STATUS {
                let end = status_line.iter().position(|&b| b == b'\n');
                let line = &status_line[..end.map_or(status_line.len(), |e| e + 1)];
                status = Some(Status::parse(line)?);
            }
        }
        match &status {
            Some(Status::Err(why)) => {
                close_now(&mut port, &mut conn, &clock);
                return Err(NetError::Refused(why.clone()));
            }
            Some(Status::Ok(theirs)) => {
                let ours = framing::hex(&digest.unwrap_or_default());
                if digest.is_none() || *theirs != ours {
                    close_now(&mut port, &mut conn, &clock);
                    return Err(NetError::DigestMismatch {
                        ours,
                        theirs: theirs.clone(),
                    });
                }
                let duration = started.elapsed();
                let stats = conn.stats();
                close_now(&mut port, &mut conn, &clock);
                return Ok(SendReport {
                    name,
                    peer,
                    size,
                    sha256: ours,
                    duration,
                    stats,
                    socket: port.stats,
                    offloads: port.offloads(),
                });
            }
            None => {}
        }
        if conn.is_closed() {
            return Err(closed_error(conn.close_reason(), conn.is_established()));
        }
        if !conn.is_established() && started.elapsed() > options.connect_timeout {
            return Err(NetError::NoAnswer(peer, options.connect_timeout));
        }

        let now = clock.now();
        port.flush(None, &mut conn, now)
            .map_err(|e| refused_or(e, peer))?;

        if Instant::now() >= next_report {
            let stats = conn.stats();
            progress(&Progress {
                elapsed: started.elapsed(),
                bytes_acked: stats.bytes_acked.saturating_sub(header_len).min(size),
                file_size: size,
                stats,
                socket: port.stats,
            });
            next_report += options.interval;
        }
        let deadline = conn.poll_timeout().map(|t| clock.instant(t));
        port.wait(socket::earliest(deadline, Some(next_report)))
            .map_err(NetError::Socket)?;
    }
}

/// Send the close packet (best effort: the peer's idle timer covers a lost one).
fn close_now(port: &mut UdpPort, conn: &mut Connection, clock: &Clock) {
    conn.close();
    let _ = port.flush(None, conn, clock.now());
}

fn refused_or(e: std::io::Error, peer: SocketAddr) -> NetError {
    if e.kind() == std::io::ErrorKind::ConnectionRefused {
        NetError::PortClosed(peer)
    } else {
        NetError::Socket(e)
    }
}

fn closed_error(reason: Option<CloseReason>, established: bool) -> NetError {
    NetError::Closed(match reason {
        Some(r) if r.by_peer => format!("the receiver closed the connection ({:?})", r.code),
        Some(r) if !established => format!("no handshake answer ({:?})", r.code),
        Some(r) => format!(
            "the connection gave up ({:?}): the receiver stopped answering",
            r.code
        ),
        None => "the connection closed".to_string(),
    })
}
