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
    /// The datagram ends before a field it must hold.
    #[error("packet truncated: {what} needs {needed} bytes, only {got} present")]
    Truncated {
        /// The part being read (a header, a frame).
        what: &'static str,
        /// Bytes it needs.
        needed: usize,
        /// Bytes left in the datagram.
        got: usize,
    },
    /// The version byte is not this build's ([`crate::packet::VERSION`]).
    #[error("unknown protocol version {0} (this build speaks version {v})", v = crate::packet::VERSION)]
    UnknownVersion(u8),
    /// A packet type this version does not know.
    #[error("unknown packet type {0}")]
    UnknownType(u8),
    /// Flag bits that must be zero are set.
    #[error("{what}: reserved flag bits set ({flags:#04x})")]
    ReservedFlags {
        /// The header or frame whose flags they are.
        what: &'static str,
        /// The flags byte as received.
        flags: u8,
    },
    /// Bytes left after the packet's last field.
    #[error("{0} trailing bytes after the packet")]
    TrailingBytes(usize),
    /// A data packet's length field disagrees with the payload it carries.
    #[error("data packet declares {declared} payload bytes but carries {carried}")]
    PayloadLength {
        /// Payload bytes the header declares.
        declared: usize,
        /// Payload bytes present.
        carried: usize,
    },
    /// Data whose end lies beyond the 62-bit stream offset space.
    #[error("stream offset {offset} + length {len} overflows the 62-bit offset space")]
    OffsetOverflow {
        /// The data's stream offset, bytes.
        offset: u64,
        /// Its length, bytes.
        len: u64,
    },
    /// A packet number beyond the 62-bit packet-number space.
    #[error("packet number {0} exceeds the 62-bit packet-number space")]
    PacketNumberTooLarge(u64),
    /// An ACK frame's ranges are malformed (none, too many, one that ends below its start…);
    /// says how.
    #[error("ACK frame is malformed: {0}")]
    BadAckRanges(&'static str),
    /// One end sends real payload bytes and the other synthetic ones (byte counts only).
    #[error("peer uses {peer} payloads but this side is configured for {local} payloads; configure both ends alike")]
    ModeMismatch {
        /// This side's mode (`real` or `synthetic`).
        local: &'static str,
        /// The peer's mode.
        peer: &'static str,
    },
    /// Data beyond what this side's receive window allows.
    #[error("data [{offset}, {end}) lies beyond the receive window, which ends at {limit}")]
    OutOfWindow {
        /// The data's first stream offset.
        offset: u64,
        /// The stream offset just past its end.
        end: u64,
        /// The stream offset the window ends at.
        limit: u64,
    },
    /// A packet number so far ahead of those seen that it cannot be genuine.
    #[error("packet number {pn} is too far ahead of the largest received ({largest})")]
    PacketNumberOutOfWindow {
        /// The packet's number.
        pn: u64,
        /// The largest packet number received so far.
        largest: u64,
    },
    /// An ACK of a packet number this side never sent.
    #[error("ACK acknowledges packet {acked}, but only packets below {next} were sent")]
    AckOfUnsentPacket {
        /// The packet number acknowledged.
        acked: u64,
        /// The next packet number this side would send.
        next: u64,
    },
    /// An ACK claims more stream bytes arrived than were sent.
    #[error("ACK claims stream bytes up to {cumulative} arrived, but only {sent} were sent")]
    CumulativeBeyondSent {
        /// The cumulative stream offset the ACK claims.
        cumulative: u64,
        /// Stream bytes sent so far.
        sent: u64,
    },
    /// A handshake echoes a timestamp later than this side's clock now reads.
    #[error("timestamp echo {echo_us} µs lies in the future (now {now_us} µs)")]
    FutureTimestamp {
        /// The echoed timestamp, µs on this side's clock.
        echo_us: u64,
        /// This side's clock now, µs.
        now_us: u64,
    },
    /// An end of stream that contradicts data or an end of stream seen before.
    #[error("fin at offset {fin} conflicts with data or an earlier fin ending at {known}")]
    FinConflict {
        /// The stream offset the new fin puts the end at.
        fin: u64,
        /// Where data already received, or the earlier fin, ends.
        known: u64,
    },
    /// Out-of-order data that would need more ranges than the receiver keeps.
    #[error("data at offset {offset} would open a gap beyond the {max} out-of-order ranges a receiver holds")]
    TooManyRanges {
        /// The data's stream offset.
        offset: u64,
        /// The most out-of-order ranges the receiver holds.
        max: usize,
    },
    /// A packet of a type the connection does not take in its state: (packet, state).
    #[error("{0} packet not expected in this connection state ({1})")]
    UnexpectedPacket(&'static str, &'static str),
    /// The connection is closed; nothing more is accepted.
    #[error("connection is closed")]
    Closed,
    /// An address-validation token longer than 64 bytes.
    #[error("address-validation token of {0} bytes is longer than the 64 allowed")]
    TokenTooLong(usize),
    /// A packet in the clear on a connection that accepts only sealed datagrams (its type).
    #[error("a clear {0} packet arrived, but this connection accepts only sealed datagrams: ignored (forged, or the peer runs without security)")]
    Unsealed(&'static str),
    /// A sealed datagram before the handshake produced keys to open it.
    #[error("sealed datagram arrived before the handshake produced keys: dropped")]
    NoKeysYet,
    /// A sealed datagram that does not authenticate.
    #[error("sealed datagram failed authentication (forged, damaged or replayed under another key): dropped")]
    AuthenticationFailed,
    /// A sealed datagram whose seal number was accepted before.
    #[error("sealed datagram {0} was accepted before: replay dropped")]
    Replayed(u64),
    /// A sealed datagram older than the anti-replay window remembers.
    #[error("sealed datagram {seal_number} is behind the anti-replay window (oldest accepted {oldest}): dropped")]
    TooOld {
        /// The datagram's seal number.
        seal_number: u64,
        /// The oldest seal number the window still accepts.
        oldest: u64,
    },
    /// A sealed datagram under a key phase this side holds no key for.
    #[error("sealed datagram's key phase {phase} is neither the current one ({current}), the previous one, nor shortly after it: dropped")]
    UnknownKeyPhase {
        /// The datagram's key phase.
        phase: u8,
        /// This side's current key phase.
        current: u8,
    },
    /// A handshake message that is malformed, does not authenticate, or has no handshake to
    /// belong to; says why.
    #[error("handshake message refused: {0}")]
    Handshake(&'static str),
    /// A handshake message already processed (a retransmitted copy).
    #[error("{0} repeated: already processed, ignored")]
    RepeatedHandshake(&'static str),
    /// A RETRY the client does not act on; says why.
    #[error("RETRY ignored: {0}")]
    RetryIgnored(&'static str),
}

/// Why a [`crate::Config`] was refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ConfigError {
    /// The MSS is outside the range a datagram can carry.
    #[error("mss {0} is out of range: it must be between 64 and {max} bytes ({sealed} with security on)", max = crate::packet::MAX_PAYLOAD, sealed = crate::packet::MAX_PAYLOAD as usize - crate::packet::SEAL_OVERHEAD)]
    Mss(u32),
    /// The path MTU search's bound is above the largest IP packet.
    #[error("pmtu_max {0} is out of range: an IP packet is at most {max} bytes", max = crate::pmtu::MAX_MTU)]
    PathMtu(u32),
    /// A setting below its minimum.
    #[error("{name} must be at least {min} (got {value})")]
    TooSmall {
        /// The setting, with its unit.
        name: &'static str,
        /// Its smallest allowed value.
        min: u64,
        /// The value given.
        value: u64,
    },
    /// The congestion-control spec is invalid.
    #[error("congestion control: {0}")]
    Cc(#[from] longhaul_cc::ParamError),
    /// The security settings (identity, keys) cannot set up a handshake; says why.
    #[error("the handshake could not be set up with this identity: {0}")]
    Security(&'static str),
}
