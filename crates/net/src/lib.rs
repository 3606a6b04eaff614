//! # longhaul-net: the transport over UDP, and a file-transfer tool on it
//!
//! For hosts where the kernel's TCP cannot be changed: the same sans-IO connection
//! (`longhaul-proto`, with any controller from `longhaul-cc` — FAST, Scalable, HighSpeed, Lion,
//! BBR …) that the simulator drives in virtual time, driven here by a UDP socket in real time.
//!
//! The main entry points: [`send::send_paths`] sends files and trees with [`send::SendOptions`]
//! and reports a [`send::SendReport`]; a [`recv::Receiver`] serves any number of senders into a
//! directory ([`recv::RecvOptions`]); [`socket::UdpPort`] is the socket both drive.
//!
//! - [`socket`]: the driver's pieces — a non-blocking socket with large buffers and UDP GSO/GRO,
//!   sending what the connection has ready (a full socket is a local drop the connection
//!   resends), reading what arrived, and sleeping until the next datagram or deadline with
//!   nanosecond resolution.
//! - [`mtu`]: the size of a sender's datagrams: fixed, or searched up to what the route
//!   carries (path MTU discovery in the connection, don't-fragment probing on the socket).
//! - [`framing`]: the transfer protocol on the connection's two streams: a manifest of
//!   entries, the receiver's plan for each (send from a resume point, skip, refuse), each
//!   file's bytes and digest, and the receiver's verdicts.
//! - [`hashlist`]: a file's digest, BLAKE3 over its 1 MiB chunks' BLAKE3 digests, which
//!   serves both the resume journal and the final check with one pass over the bytes.
//! - [`manifest`]: the sender's walk of the paths given (files, directories, links).
//! - [`path`]: which relative paths a receiver accepts, and names escaped for printing.
//! - [`store`] and [`journal`]: the receiver's part files, resume journals, and the rules that
//!   keep writes inside its directory and off any real name until the data is verified.
//! - [`feed`] and [`part`]: the file's bytes read and hashed (sender), written, hashed and
//!   journaled (receiver) on a thread of their own, through bounded queues, so the
//!   connection's thread only moves datagrams.
//! - [`send_thread`]: sealing and sending on a thread of their own, so that a sender's
//!   connection thread only decides what to send.
//! - [`send`]: `longhaul send PATH… HOST[:PORT]` — files and trees over one connection.
//! - [`recv`]: `longhaul recv` — any number of senders at once into a directory.
//! - [`recv_thread`]: reading the socket and opening sealed datagrams on a thread of their
//!   own, so that a receiver's loop only acts on them.
//! - [`destination`]: the last argument of `longhaul send`, an ssh destination or a running
//!   receiver.
//! - [`ssh`]: `longhaul send PATH… [user@]host:DIR` — the that starts the receiver on the far host through ssh and learns its port and key
//!   from its [`announce`] line.
//! - [`admission`]: which handshakes get a session (retry tokens, per-source limits,
//!   eviction of half-open sessions).
//! - [`trust`]: whom each end trusts (a key given, `known_hosts` with trust on first use,
//!   `authorized_keys`), as the handshake's security settings.
//! - [`summary`]: the `-J` summaries of `send` and `recv`, as typed JSON.
//! - [`text`]: what `send` and `recv` print for people (progress, summaries, notes).
//! - [`keys`]: key pairs and trust, ssh-style — `longhaul keygen`'s files, the receiver's
//!   `authorized_keys`, the sender's `known_hosts` (trust on first use), fingerprints.
//!
//! Not here: ECN marks from the socket (the connection can take them:
//! `handle_packet_ecn`), one transfer striped over several connections (`-P N`, as bbcp and
//! GridFTP), and a thread per session for a receiver of many senders at once.

#![warn(missing_docs)]

pub mod admission;
pub mod announce;
pub mod destination;
pub mod direct;
pub mod feed;
pub mod framing;
pub mod hashlist;
pub mod journal;
pub mod keys;
pub mod manifest;
pub mod mtu;
pub mod part;
pub mod path;
pub mod recv;
pub mod recv_thread;
pub mod send;
pub mod send_thread;
pub mod service;
pub mod socket;
pub mod ssh;
pub mod store;
pub mod summary;
pub mod text;
pub mod trust;

use std::net::SocketAddr;
use std::time::Duration;
use thiserror::Error;

/// Whether the socket's work (sealing and sending, reading and opening) runs on threads of its
/// own unless told: where the host has at least 4 cores. A sender then keeps four threads busy
/// (its connection's, the sending thread, two reading the file), a receiver three or more (its
/// loop, which also hashes, the receiving thread and the writing thread). On the 2-vCPU test machine, where both
/// ends of a loopback transfer share the two cores, handing datagrams between threads cost
/// more than it saved (bench/README.md, "The socket's work on threads of its own").
pub fn io_threads_by_default() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() >= 4)
}

/// The UDP port `longhaul recv` listens on by default.
pub const DEFAULT_PORT: u16 = 5301;

/// The connection settings of a real host: congestion control `cc` with `security`, packets
/// that fill a path MTU of `mtu` bytes, receive window and send buffer of `window` bytes, an
/// idle timeout, and bursts of [`longhaul_proto::HOST_BURST_TIME`] of the pacing rate (not a
/// simulator's timer wake-ups of 10 packets).
pub fn host_config(
    cc: longhaul_cc::CcSpec,
    security: longhaul_proto::secure::Security,
    mtu: u32,
    window: u64,
    idle_timeout: Duration,
) -> Result<longhaul_proto::Config, longhaul_proto::ConfigError> {
    let mut c = longhaul_proto::Config::new(cc);
    c.security = security;
    let mss = c.mss_for(mtu);
    c.mss = mss;
    c.setup.mss = mss;
    c.recv_window = window;
    c.send_buffer = window;
    c.idle_timeout = Some(idle_timeout);
    c.burst_time = longhaul_proto::HOST_BURST_TIME;
    c.validate()?;
    Ok(c)
}

/// The ranges of the transfer's settings as people give them, each check returning the value
/// it accepts or why not.
pub mod ranges {
    use std::time::Duration;

    /// The window (receive window and send buffer): below 64 KiB a long path cannot be filled
    /// at all; above 4 GiB (a 10 Gb/s path at 3 s RTT) it is a mistake, and it bounds the
    /// receiver's memory per sender.
    pub fn window(w: u64) -> Result<u64, String> {
        if !(64 << 10..=4 << 30).contains(&w) {
            return Err(
                "the window must be between 64K and 4G (the path's bandwidth-delay product)".into(),
            );
        }
        Ok(w)
    }

    /// The idle timeout: at least 1 s, longer than the path's round trip.
    pub fn idle_timeout(d: Duration) -> Result<Duration, String> {
        if d < Duration::from_secs(1) {
            return Err(
                "the idle timeout must be at least 1s (longer than the path's round trip)".into(),
            );
        }
        Ok(d)
    }

    /// The connect timeout: at least 1 s. Shorter than the handshake's first resend
    /// (`initial_rto`, 1 s, as TCP's first SYN resend in Linux), it gives up before a lost INIT
    /// or SYN is sent again; 0 gives up before the first answer can arrive.
    pub fn connect_timeout(d: Duration) -> Result<Duration, String> {
        if d < Duration::from_secs(1) {
            return Err(
                "the connect timeout must be at least 1s (an unanswered handshake is \
                        sent again after 1 s)"
                    .into(),
            );
        }
        Ok(d)
    }

    /// The progress interval: at least 10 ms.
    pub fn progress_interval(d: Duration) -> Result<Duration, String> {
        if d < Duration::from_millis(10) {
            return Err("the progress interval must be at least 10ms".into());
        }
        Ok(d)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn each_range_keeps_its_bounds() {
            assert!(window(64 << 10).is_ok() && window(4 << 30).is_ok());
            assert!(window((64 << 10) - 1).is_err() && window((4 << 30) + 1).is_err());
            let s = Duration::from_secs(1);
            assert!(idle_timeout(s).is_ok() && idle_timeout(s / 2).is_err());
            assert!(connect_timeout(s).is_ok() && connect_timeout(s / 2).is_err());
            let ms = Duration::from_millis(10);
            assert!(progress_interval(ms).is_ok() && progress_interval(ms / 2).is_err());
        }
    }
}

/// A receiver's address from `HOST`, `HOST:PORT` or `[IPv6]:PORT` (the port defaults to
/// [`DEFAULT_PORT`]); the error says why not, for people.
pub fn resolve(to: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(mut a) = to.to_socket_addrs() {
        if let Some(a) = a.next() {
            return Ok(a);
        }
    }
    let host = to.trim_start_matches('[').trim_end_matches(']');
    (host, DEFAULT_PORT)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {to:?} (HOST, HOST:PORT or [IPv6]:PORT): {e}"))?
        .next()
        .ok_or_else(|| format!("{to:?} resolves to no address"))
}

/// Why a transfer, or a receiver, stopped.
#[derive(Debug, Error)]
pub enum NetError {
    /// A local file or directory could not be read or created: (path, error).
    #[error("{0}: {1}")]
    File(String, std::io::Error),
    /// The command line asks for something impossible (`--name` with several paths, two paths
    /// arriving under one name).
    #[error("{0}")]
    Usage(String),
    /// The receiver's key is refused by the trust check (`known_hosts`, `--peer-key`).
    #[error("the receiver's key is not trusted: {0}")]
    Trust(String),
    /// A key or trust file is missing, unsafe or malformed.
    #[error(transparent)]
    Keys(#[from] keys::KeyError),
    /// The receiving directory is not a directory.
    #[error("{0} is not a directory")]
    NotADirectory(String),
    /// The UDP socket failed.
    #[error("socket: {0}")]
    Socket(std::io::Error),
    /// The receiver's host answered with ICMP port unreachable.
    #[error("nothing listens on {0} (ICMP port unreachable): is `longhaul recv` running there?")]
    PortClosed(SocketAddr),
    /// The handshake had no answer within the connect timeout: (peer, timeout).
    #[error("no answer from {0} within {1:?}: check the address, the port and any firewall on the path (UDP)")]
    NoAnswer(SocketAddr, Duration),
    /// The receiver sent FATAL, with its reason.
    #[error("the receiver stopped the transfer: {0}")]
    Refused(String),
    /// The connection closed before the transfer finished, with what is known of why.
    #[error("{0}")]
    Closed(String),
    /// Stopped by the user (Ctrl-C); the receiver keeps what arrived for a resume.
    #[error("interrupted; the receiver keeps what arrived: run the same command again to resume")]
    Interrupted,
    /// The peer broke the transfer protocol.
    #[error(transparent)]
    Framing(#[from] framing::FramingError),
    /// The connection settings are invalid.
    #[error("connection settings: {0}")]
    Config(#[from] longhaul_proto::ConfigError),
}
