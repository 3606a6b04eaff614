//! # longhaul-net: the transport over UDP, and a file-transfer tool on it
//!
//! For hosts where the kernel's TCP cannot be changed: the same sans-IO connection
//! (`longhaul-proto`, with any controller from `longhaul-cc` — FAST, Scalable, HighSpeed, Lion,
//! BBR …) that the simulator drives in virtual time, driven here by a UDP socket in real time.
//!
//! - [`socket`]: the driver's pieces — a non-blocking socket with large buffers and UDP GSO/GRO,
//!   sending what the connection has ready (a full socket is a local drop the connection
//!   resends), reading what arrived, and sleeping until the next datagram or deadline with
//!   nanosecond resolution.
//! - [`framing`]: the file-transfer format on the connection's two streams (name, size, bytes,
//!   SHA-256; the receiver's `OK`/`ERR` verdict).
//! - [`send`]: `longhaul send FILE HOST[:PORT]` — one file over one connection, with progress.
//! - [`recv`]: `longhaul recv` — files from any number of senders into a directory, each
//!   written to a part file and renamed only once its digest matched and it is on disk.
//! - [`keys`]: key pairs and trust, ssh-style — `longhaul keygen`'s files, the receiver's
//!   `authorized_keys`, the sender's `known_hosts` (trust on first use), fingerprints.
//!
//! Not here (yet): ECN marks from the socket (the connection can take them:
//! `handle_packet_ecn`), kernel receive timestamps (`SO_TIMESTAMPNS`; each datagram is stamped
//! as the loop reads it), resuming a cut transfer, encryption, a thread per core for several
//! transfers at 10 Gb/s and beyond.

pub mod framing;
pub mod keys;
pub mod recv;
pub mod send;
pub mod socket;

use std::net::SocketAddr;
use std::time::Duration;
use thiserror::Error;

/// The UDP port `longhaul recv` listens on by default.
pub const DEFAULT_PORT: u16 = 5301;

#[derive(Debug, Error)]
pub enum NetError {
    #[error("{0}: {1}")]
    File(String, std::io::Error),
    #[error("{0} is not a regular file")]
    NotAFile(String),
    #[error("{0} is not a directory")]
    NotADirectory(String),
    #[error("socket: {0}")]
    Socket(std::io::Error),
    #[error("nothing listens on {0} (ICMP port unreachable): is `longhaul recv` running there?")]
    PortClosed(SocketAddr),
    #[error("no answer from {0} within {1:?}: check the address, the port and any firewall on the path (UDP)")]
    NoAnswer(SocketAddr, Duration),
    #[error("the receiver refused the file: {0}")]
    Refused(String),
    #[error("the receiver stored data hashing to {theirs}, but the file hashes to {ours}")]
    DigestMismatch { ours: String, theirs: String },
    #[error("{0}")]
    Closed(String),
    #[error("interrupted; the receiver discards the partial file")]
    Interrupted,
    #[error(transparent)]
    Framing(#[from] framing::FramingError),
    #[error("connection settings: {0}")]
    Config(#[from] longhaul_proto::ConfigError),
}
