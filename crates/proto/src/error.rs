//! Errors: why a packet was rejected, and why a configuration was refused.
//!
//! A rejected packet never changes the connection's state (except that a `Close` from the peer
//! closes it, and that a handshake the peer cannot complete ends the connection); the driver
//! may count the error and carry on. None of these errors is fatal to the
//! connection: a corrupt or stale datagram on a real network is normal.

use thiserror::Error;

/// Why an incoming datagram was not accepted.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PacketError {
    #[error("packet truncated: {what} needs {needed} bytes, only {got} present")]
    Truncated {
        what: &'static str,
        needed: usize,
        got: usize,
    },
    #[error("unknown protocol version {0} (this build speaks version {v})", v = crate::packet::VERSION)]
    UnknownVersion(u8),
    #[error("unknown packet type {0}")]
    UnknownType(u8),
    #[error("{what}: reserved flag bits set ({flags:#04x})")]
    ReservedFlags { what: &'static str, flags: u8 },
    #[error("{0} trailing bytes after the packet")]
    TrailingBytes(usize),
    #[error("data packet declares {declared} payload bytes but carries {carried}")]
    PayloadLength { declared: usize, carried: usize },
    #[error("stream offset {offset} + length {len} overflows the 62-bit offset space")]
    OffsetOverflow { offset: u64, len: u64 },
    #[error("packet number {0} exceeds the 62-bit packet-number space")]
    PacketNumberTooLarge(u64),
    #[error("ACK frame is malformed: {0}")]
    BadAckRanges(&'static str),
    #[error("peer uses {peer} payloads but this side is configured for {local} payloads; configure both ends alike")]
    ModeMismatch {
        local: &'static str,
        peer: &'static str,
    },
    #[error("data [{offset}, {end}) lies beyond the receive window, which ends at {limit}")]
    OutOfWindow { offset: u64, end: u64, limit: u64 },
    #[error("packet number {pn} is too far ahead of the largest received ({largest})")]
    PacketNumberOutOfWindow { pn: u64, largest: u64 },
    #[error("ACK acknowledges packet {acked}, but only packets below {next} were sent")]
    AckOfUnsentPacket { acked: u64, next: u64 },
    #[error("ACK claims stream bytes up to {cumulative} arrived, but only {sent} were sent")]
    CumulativeBeyondSent { cumulative: u64, sent: u64 },
    #[error("timestamp echo {echo_us} µs lies in the future (now {now_us} µs)")]
    FutureTimestamp { echo_us: u64, now_us: u64 },
    #[error("fin at offset {fin} conflicts with data or an earlier fin ending at {known}")]
    FinConflict { fin: u64, known: u64 },
    #[error("data at offset {offset} would open a gap beyond the {max} out-of-order ranges a receiver holds")]
    TooManyRanges { offset: u64, max: usize },
    #[error("{0} packet not expected in this connection state ({1})")]
    UnexpectedPacket(&'static str, &'static str),
    #[error("connection is closed")]
    Closed,
    #[error("address-validation token of {0} bytes is longer than the 64 allowed")]
    TokenTooLong(usize),
    #[error("a clear {0} packet arrived, but this connection accepts only sealed datagrams: ignored (forged, or the peer runs without security)")]
    Unsealed(&'static str),
    #[error("sealed datagram arrived before the handshake produced keys: dropped")]
    NoKeysYet,
    #[error("sealed datagram failed authentication (forged, damaged or replayed under another key): dropped")]
    AuthenticationFailed,
    #[error("sealed datagram {0} was accepted before: replay dropped")]
    Replayed(u64),
    #[error("sealed datagram {seal_number} is behind the anti-replay window (oldest accepted {oldest}): dropped")]
    TooOld { seal_number: u64, oldest: u64 },
    #[error("sealed datagram's key phase {phase} is neither the current one ({current}), the previous one, nor shortly after it: dropped")]
    UnknownKeyPhase { phase: u8, current: u8 },
    #[error("handshake message refused: {0}")]
    Handshake(&'static str),
    #[error("{0} repeated: already processed, ignored")]
    RepeatedHandshake(&'static str),
    #[error("RETRY ignored: {0}")]
    RetryIgnored(&'static str),
}

/// Why a [`crate::Config`] was refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ConfigError {
    #[error("mss {0} is out of range: it must be between 64 and {max} bytes ({sealed} with security on)", max = crate::packet::MAX_PAYLOAD, sealed = crate::packet::MAX_PAYLOAD as usize - crate::packet::SEAL_OVERHEAD)]
    Mss(u32),
    #[error("{name} must be at least {min} (got {value})")]
    TooSmall {
        name: &'static str,
        min: u64,
        value: u64,
    },
    #[error("congestion control: {0}")]
    Cc(#[from] longhaul_cc::ParamError),
    #[error("the handshake could not be set up with this identity: {0}")]
    Security(&'static str),
}
