//! The wire format: packet types behind a two-byte header, big-endian, fixed-width fields.
//! Every type's encoding and decoding is here, beside the diagram below, so that the format is
//! read and checked in one place: hence the file's length.
//!
//! ```text
//! every packet   version:u8 (=1)  type:u8
//!
//! the plain packets (every datagram when security is off; inside SEALED when it is on)
//! HANDSHAKE (1)  flags:u8 (bit0 response, bit1 synthetic)  recv_window:u64
//!                timestamp_us:u64  echo_us:u64                    (security off only)
//! DATA (2)       flags:u8 (bit0 fin, bit1 synthetic, bit2 padded)  packet_number:u64
//!                timestamp_us:u64  offset:u64  len:u16  payload[len]  (payload absent when
//!                synthetic)  padding (when padded: any bytes to the datagram's end)
//! ACK (3)        flags:u8 (=0)  ack_delay_us:u64  echo_us:u64  cumulative:u64
//!                max_offset:u64  ce_count:u64  n_ranges:u8  n × (high:u64 low:u64)
//! CLOSE (4)      code:u8
//!
//! the secure transport (crate::secure): the Noise handshake in clear, then only SEALED
//! INIT (5)       token_len:u8 (≤ 64)  token[token_len]  noise_message_1
//!                (client to server; padded to at least INIT_MIN_LEN bytes)
//! RESPONSE (6)   noise_message_2                                  (server to client)
//! FINISH (7)     noise_message_3                                  (client to server)
//! RETRY (8)      echo[32] (the INIT's ephemeral key)  token_len:u8  token[token_len]
//!                (a server's driver to a client: "send INIT again with this token")
//! SEALED (9)     key_phase:u8  seal_number:u64  ciphertext of a DATA, ACK or CLOSE  tag[16]
//! ```
//!
//! The design follows QUIC (RFC 9000 §12-19) where QUIC is simple: packet numbers are never
//! reused (a retransmission is new data in a new packet, so every ACK is unambiguous); data is a
//! byte stream addressed by offset; an ACK lists up to [`MAX_ACK_RANGES`] ranges of received
//! packet numbers, newest first (the SACK blocks), and echoes the sender's microsecond timestamp
//! of the largest one (TCP's timestamp option, RFC 7323) with the receiver's hold time, so the
//! sender measures RTT without keeping per-packet state for it. The ACK also carries the
//! receiver's cumulative stream offset (everything below it has arrived, like TCP's cumulative
//! ACK: it frees the send buffer even when the ACKs of individual packets were lost), the flow
//! control limit, and a cumulative count of ECN-CE marks.
//!
//! Deviations from QUIC, and why: fixed-width fields instead of variable-length integers (simpler
//! to validate, 29-byte data header, costlier only on ACKs which are rare); ACK ranges as absolute
//! (high, low) pairs (each range is checked on its own); no connection IDs (one connection per
//! socket pair); a whole plain packet sealed as one unit with a separate seal number as the
//! nonce, rather than QUIC's frames with header protection (the packet number is not secret
//! here, and one seal per datagram is one concept).
//!
//! With security on, the only clear packets are the handshake's: everything after it is SEALED,
//! [`SEAL_OVERHEAD`] (27) bytes more than the plain packet inside. The sealing, the handshake,
//! the RETRY exchange and the anti-replay rules are described in [`crate::secure`]. The
//! functions a server's driver needs before a connection exists are here:
//! [`handshake_token`] reads the token of an INIT and [`encode_retry`] answers one.
//!
//! A *padded* data packet is a path-MTU probe ([`crate::pmtu`]): a zero-length data packet
//! padded to the size being tried ([`encode_padded_probe`]); the padding means nothing and is
//! skipped.
//!
//! "Synthetic" data packets, for the simulator, carry the header with the payload length but not
//! the payload: the packet's on-wire length is the encoded length plus `len`.
//!
//! Decoding borrows from the input, never allocates and never panics; every rule a well-formed
//! packet obeys is checked and a violation is a [`PacketError`] that names it.

use crate::error::PacketError;

/// The protocol version this build speaks.
pub const VERSION: u8 = 1;
/// The most payload bytes a data packet may carry (a UDP datagram is at most 65 507 bytes).
pub const MAX_PAYLOAD: u32 = 65_507 - DATA_HEADER_LEN as u32;
/// Bytes of header in front of a data packet's payload.
pub const DATA_HEADER_LEN: usize = 2 + 1 + 8 + 8 + 8 + 2;
/// Encoded size of a handshake packet.
pub const HANDSHAKE_LEN: usize = 2 + 1 + 8 + 8 + 8;
/// Encoded size of an ACK packet without its ranges.
pub const ACK_HEADER_LEN: usize = 2 + 1 + 8 * 5 + 1;
/// Encoded size of one ACK range.
pub const ACK_RANGE_LEN: usize = 16;
/// The most ranges one ACK may carry.
pub const MAX_ACK_RANGES: usize = 32;
/// Encoded size of a close packet.
pub const CLOSE_LEN: usize = 3;
/// Packet numbers and stream offsets live below 2^62 (as in QUIC).
pub const MAX_VALUE: u64 = (1 << 62) - 1;

const TYPE_HANDSHAKE: u8 = 1;
const TYPE_DATA: u8 = 2;
const TYPE_ACK: u8 = 3;
const TYPE_CLOSE: u8 = 4;
const TYPE_INIT: u8 = 5;
const TYPE_RESPONSE: u8 = 6;
const TYPE_FINISH: u8 = 7;
const TYPE_RETRY: u8 = 8;
const TYPE_SEALED: u8 = 9;

/// Bytes of clear header in front of a sealed datagram's ciphertext: version, type, key phase
/// and seal number (all authenticated as associated data).
pub const SEAL_HEADER_LEN: usize = 2 + 1 + 8;
/// Bytes of authentication tag at the end of a sealed datagram.
pub const SEAL_TAG_LEN: usize = 16;
/// Bytes a sealed datagram adds to the plain packet inside it.
pub const SEAL_OVERHEAD: usize = SEAL_HEADER_LEN + SEAL_TAG_LEN;
/// The longest address-validation token an INIT or a RETRY carries.
pub const MAX_TOKEN_LEN: usize = 64;
/// Bytes of an INIT in front of its token.
pub const INIT_HEADER_LEN: usize = 3;
/// Length of the key a RETRY echoes (the INIT's Noise ephemeral key, its first 32 bytes).
pub const RETRY_ECHO_LEN: usize = 32;
/// An INIT is padded to at least this many bytes: no shorter than the RESPONSE or RETRY it draws.
pub const INIT_MIN_LEN: usize = 160;
/// The longest handshake datagram (INIT with the longest token, RESPONSE, FINISH, RETRY).
pub const MAX_HANDSHAKE_DATAGRAM: usize = 256;

const HS_RESPONSE: u8 = 0x01;
const HS_SYNTHETIC: u8 = 0x02;
const DATA_FIN: u8 = 0x01;
const DATA_SYNTHETIC: u8 = 0x02;
const DATA_PADDED: u8 = 0x04;

/// Which kind of packet a [`crate::Transmit`] or a decoded packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// A handshake message: the plain HANDSHAKE, or the secure INIT, RESPONSE or FINISH.
    Handshake,
    /// A DATA packet.
    Data,
    /// An ACK packet.
    Ack,
    /// A CLOSE packet.
    Close,
}

/// The opening exchange: the client's request and the server's response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handshake {
    /// True in the server's response, false in the client's request.
    pub response: bool,
    /// The sender carries synthetic payloads (lengths without bytes).
    pub synthetic: bool,
    /// The sender's receive window in bytes (its initial flow-control limit).
    pub recv_window: u64,
    /// The sender's clock when it sent the packet, µs (echoed for the first RTT sample).
    pub timestamp_us: u64,
    /// The request's timestamp, echoed in the response (0 in a request).
    pub echo_us: u64,
}

/// A data packet's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataHeader {
    /// The packet's number: consecutive, never reused (a retransmission gets a new one).
    pub packet_number: u64,
    /// The sender's clock when it sent the packet, µs (echoed by the ACK for RTT samples).
    pub timestamp_us: u64,
    /// The stream offset of the payload's first byte.
    pub offset: u64,
    /// Payload bytes.
    pub len: u16,
    /// The stream ends with this payload.
    pub fin: bool,
    /// The payload is elided: only its length travels (the simulator's mode).
    pub synthetic: bool,
}

impl DataHeader {
    /// The rules every data header obeys, encoded or not: a packet number and an end offset
    /// inside the 62-bit spaces.
    pub fn check(&self) -> Result<(), PacketError> {
        if self.packet_number > MAX_VALUE {
            return Err(PacketError::PacketNumberTooLarge(self.packet_number));
        }
        if self.offset > MAX_VALUE - self.len as u64 {
            return Err(PacketError::OffsetOverflow {
                offset: self.offset,
                len: self.len as u64,
            });
        }
        Ok(())
    }
}

/// An inclusive range of packet numbers, `low..=high`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckRange {
    /// The largest packet number in the range.
    pub high: u64,
    /// The smallest packet number in the range.
    pub low: u64,
}

/// An acknowledgement. Its ranges stay in the input buffer and are read by [`Ack::ranges`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack<'a> {
    /// How long the receiver held the largest packet before acknowledging it, µs.
    pub ack_delay_us: u64,
    /// The timestamp of the largest acknowledged packet, echoed.
    pub echo_us: u64,
    /// Every stream byte below this offset has been received.
    pub cumulative: u64,
    /// The receiver accepts stream bytes below this offset (flow control).
    pub max_offset: u64,
    /// Total ECN-CE marked packets received so far.
    pub ce_count: u64,
    raw_ranges: &'a [u8],
}

impl<'a> Ack<'a> {
    /// The largest acknowledged packet number.
    pub fn largest(&self) -> u64 {
        read_u64(self.raw_ranges, 0)
    }

    /// The ranges, newest (highest) first, each strictly below the previous with a gap.
    pub fn ranges(&self) -> impl Iterator<Item = AckRange> + 'a {
        self.raw_ranges
            .chunks_exact(ACK_RANGE_LEN)
            .map(|c| AckRange {
                high: read_u64(c, 0),
                low: read_u64(c, 8),
            })
    }

    /// How many ranges the ACK carries.
    pub fn range_count(&self) -> usize {
        self.raw_ranges.len() / ACK_RANGE_LEN
    }
}

/// Why the sender closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CloseCode {
    /// The application closed the connection.
    Application,
    /// The peer violated the protocol (mode mismatch, bad handshake).
    ProtocolError,
    /// The peer gave up waiting (retransmission limit or idle timeout).
    TimedOut,
    /// The server does not accept the client's key (not in its authorized keys).
    Unauthorized,
    /// The server's key is not the one the client expected (sent by no one: the client closes
    /// before the handshake ends, so it has no key to authenticate a close with).
    PeerKeyMismatch,
    /// The handshake could not be completed (no common cipher, a malformed message).
    HandshakeFailed,
    /// Too many datagrams failed authentication (the AEAD's integrity limit).
    IntegrityLimit,
    /// A code this build does not know.
    Other(u8),
}

impl CloseCode {
    fn to_u8(self) -> u8 {
        match self {
            CloseCode::Application => 0,
            CloseCode::ProtocolError => 1,
            CloseCode::TimedOut => 2,
            CloseCode::Unauthorized => 3,
            CloseCode::PeerKeyMismatch => 4,
            CloseCode::HandshakeFailed => 5,
            CloseCode::IntegrityLimit => 6,
            CloseCode::Other(c) => c,
        }
    }
    fn from_u8(c: u8) -> CloseCode {
        match c {
            0 => CloseCode::Application,
            1 => CloseCode::ProtocolError,
            2 => CloseCode::TimedOut,
            3 => CloseCode::Unauthorized,
            4 => CloseCode::PeerKeyMismatch,
            5 => CloseCode::HandshakeFailed,
            6 => CloseCode::IntegrityLimit,
            c => CloseCode::Other(c),
        }
    }
}

/// A decoded packet, borrowing its payload and ACK ranges from the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packet<'a> {
    /// A plain handshake (security off).
    Handshake(Handshake),
    /// A DATA packet.
    Data {
        /// Its header.
        header: DataHeader,
        /// The payload; empty for a synthetic packet.
        payload: &'a [u8],
    },
    /// An ACK packet.
    Ack(Ack<'a>),
    /// A CLOSE packet, with the reason.
    Close(CloseCode),
}

impl Packet<'_> {
    /// Which kind of packet this is.
    pub fn kind(&self) -> PacketKind {
        match self {
            Packet::Handshake(_) => PacketKind::Handshake,
            Packet::Data { .. } => PacketKind::Data,
            Packet::Ack(_) => PacketKind::Ack,
            Packet::Close(_) => PacketKind::Close,
        }
    }
}

#[inline]
fn read_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

/// A bounds-checked reader over the input.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    #[inline]
    fn need(&self, what: &'static str, n: usize) -> Result<(), PacketError> {
        let got = self.buf.len() - self.pos;
        if got < n {
            Err(PacketError::Truncated {
                what,
                needed: n,
                got,
            })
        } else {
            Ok(())
        }
    }
    #[inline]
    fn take(&mut self, n: usize) -> &'a [u8] {
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        s
    }
    #[inline]
    fn u8(&mut self) -> u8 {
        self.take(1)[0]
    }
    #[inline]
    fn u16(&mut self) -> u16 {
        let s = self.take(2);
        u16::from_be_bytes([s[0], s[1]])
    }
    #[inline]
    fn u64(&mut self) -> u64 {
        read_u64(self.take(8), 0)
    }
    #[inline]
    fn rest(&self) -> usize {
        self.buf.len() - self.pos
    }
}

/// Decode one datagram.
pub fn decode(buf: &[u8]) -> Result<Packet<'_>, PacketError> {
    let mut r = Reader { buf, pos: 0 };
    r.need("the packet header", 2)?;
    let version = r.u8();
    if version != VERSION {
        return Err(PacketError::UnknownVersion(version));
    }
    let packet = match r.u8() {
        TYPE_HANDSHAKE => {
            r.need("a handshake", HANDSHAKE_LEN - 2)?;
            let flags = r.u8();
            if flags & !(HS_RESPONSE | HS_SYNTHETIC) != 0 {
                return Err(PacketError::ReservedFlags {
                    what: "handshake",
                    flags,
                });
            }
            Packet::Handshake(Handshake {
                response: flags & HS_RESPONSE != 0,
                synthetic: flags & HS_SYNTHETIC != 0,
                recv_window: r.u64(),
                timestamp_us: r.u64(),
                echo_us: r.u64(),
            })
        }
        TYPE_DATA => {
            r.need("a data header", DATA_HEADER_LEN - 2)?;
            let flags = r.u8();
            if flags & !(DATA_FIN | DATA_SYNTHETIC | DATA_PADDED) != 0 {
                return Err(PacketError::ReservedFlags {
                    what: "data",
                    flags,
                });
            }
            let header = DataHeader {
                packet_number: r.u64(),
                timestamp_us: r.u64(),
                offset: r.u64(),
                len: r.u16(),
                fin: flags & DATA_FIN != 0,
                synthetic: flags & DATA_SYNTHETIC != 0,
            };
            header.check()?;
            let carried = if header.synthetic {
                0
            } else {
                header.len as usize
            };
            let padded = flags & DATA_PADDED != 0;
            if r.rest() != carried && !(padded && r.rest() > carried) {
                return Err(PacketError::PayloadLength {
                    declared: carried,
                    carried: r.rest(),
                });
            }
            let payload = r.take(carried);
            r.take(r.rest());
            Packet::Data { header, payload }
        }
        TYPE_ACK => {
            r.need("an ACK header", ACK_HEADER_LEN - 2)?;
            let flags = r.u8();
            if flags != 0 {
                return Err(PacketError::ReservedFlags { what: "ack", flags });
            }
            let ack_delay_us = r.u64();
            let echo_us = r.u64();
            let cumulative = r.u64();
            let max_offset = r.u64();
            let ce_count = r.u64();
            let n = r.u8() as usize;
            if n == 0 {
                return Err(PacketError::BadAckRanges("no ranges"));
            }
            if n > MAX_ACK_RANGES {
                return Err(PacketError::BadAckRanges("more ranges than allowed"));
            }
            if cumulative > MAX_VALUE || max_offset > MAX_VALUE {
                return Err(PacketError::OffsetOverflow {
                    offset: cumulative.max(max_offset),
                    len: 0,
                });
            }
            r.need("the ACK ranges", n * ACK_RANGE_LEN)?;
            let raw_ranges = r.take(n * ACK_RANGE_LEN);
            let mut prev_low: Option<u64> = None;
            for c in raw_ranges.chunks_exact(ACK_RANGE_LEN) {
                let (high, low) = (read_u64(c, 0), read_u64(c, 8));
                if high > MAX_VALUE {
                    return Err(PacketError::PacketNumberTooLarge(high));
                }
                if low > high {
                    return Err(PacketError::BadAckRanges("a range ends below its start"));
                }
                if let Some(p) = prev_low {
                    // Strictly descending with at least one missing packet in between.
                    if p == 0 || high >= p - 1 {
                        return Err(PacketError::BadAckRanges(
                            "ranges overlap, touch or are not in descending order",
                        ));
                    }
                }
                prev_low = Some(low);
            }
            Packet::Ack(Ack {
                ack_delay_us,
                echo_us,
                cumulative,
                max_offset,
                ce_count,
                raw_ranges,
            })
        }
        TYPE_CLOSE => {
            r.need("a close packet", 1)?;
            Packet::Close(CloseCode::from_u8(r.u8()))
        }
        t => return Err(PacketError::UnknownType(t)),
    };
    if r.rest() != 0 {
        return Err(PacketError::TrailingBytes(r.rest()));
    }
    Ok(packet)
}

/// A datagram's outer layer: a plain packet (decode it with [`decode`]) or one of the secure
/// transport's, borrowing from the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outer<'a> {
    /// HANDSHAKE, DATA, ACK or CLOSE in clear.
    Plain(PacketKind),
    /// INIT: the client's first handshake message.
    Init {
        /// The address-validation token from a RETRY; empty if none.
        token: &'a [u8],
        /// Noise message 1.
        message: &'a [u8],
    },
    /// RESPONSE: the server's handshake message.
    Response {
        /// Noise message 2.
        message: &'a [u8],
    },
    /// FINISH: the client's last handshake message.
    Finish {
        /// Noise message 3.
        message: &'a [u8],
    },
    /// RETRY: the server's driver asks for INIT again with a token.
    Retry {
        /// The INIT's ephemeral key, echoed (32 bytes).
        echo: &'a [u8],
        /// The token to send with the next INIT.
        token: &'a [u8],
    },
    /// SEALED: an encrypted and authenticated plain packet.
    Sealed {
        /// Which key generation sealed it, modulo 256.
        key_phase: u8,
        /// The datagram's number in its sender's sealing sequence: the AEAD nonce, and what the
        /// anti-replay window checks.
        seal_number: u64,
    },
}

/// Classify a datagram by its outer layer; checks the lengths of the secure transport's
/// packets (what lies inside a Noise message or a seal is checked when it is opened).
pub fn decode_outer(buf: &[u8]) -> Result<Outer<'_>, PacketError> {
    let mut r = Reader { buf, pos: 0 };
    r.need("the packet header", 2)?;
    let version = r.u8();
    if version != VERSION {
        return Err(PacketError::UnknownVersion(version));
    }
    let too_long = |what| {
        if buf.len() > MAX_HANDSHAKE_DATAGRAM {
            Err(PacketError::TrailingBytes(
                buf.len() - MAX_HANDSHAKE_DATAGRAM,
            ))
        } else {
            Ok(what)
        }
    };
    match r.u8() {
        TYPE_HANDSHAKE => Ok(Outer::Plain(PacketKind::Handshake)),
        TYPE_DATA => Ok(Outer::Plain(PacketKind::Data)),
        TYPE_ACK => Ok(Outer::Plain(PacketKind::Ack)),
        TYPE_CLOSE => Ok(Outer::Plain(PacketKind::Close)),
        TYPE_INIT => {
            r.need("an INIT's token length", 1)?;
            let n = r.u8() as usize;
            if n > MAX_TOKEN_LEN {
                return Err(PacketError::TokenTooLong(n));
            }
            r.need("an INIT's token and key", n + RETRY_ECHO_LEN)?;
            let token = r.take(n);
            too_long(Outer::Init {
                token,
                message: &buf[r.pos..],
            })
        }
        TYPE_RESPONSE => {
            r.need("a RESPONSE", 1)?;
            too_long(Outer::Response {
                message: &buf[r.pos..],
            })
        }
        TYPE_FINISH => {
            r.need("a FINISH", 1)?;
            too_long(Outer::Finish {
                message: &buf[r.pos..],
            })
        }
        TYPE_RETRY => {
            r.need("a RETRY", RETRY_ECHO_LEN + 1)?;
            let echo = r.take(RETRY_ECHO_LEN);
            let n = r.u8() as usize;
            if n > MAX_TOKEN_LEN {
                return Err(PacketError::TokenTooLong(n));
            }
            r.need("a RETRY's token", n)?;
            let token = r.take(n);
            if r.rest() != 0 {
                return Err(PacketError::TrailingBytes(r.rest()));
            }
            Ok(Outer::Retry { echo, token })
        }
        TYPE_SEALED => {
            r.need(
                "a sealed datagram (header, smallest packet and tag)",
                SEAL_OVERHEAD - 2 + CLOSE_LEN,
            )?;
            Ok(Outer::Sealed {
                key_phase: r.u8(),
                seal_number: r.u64(),
            })
        }
        t => Err(PacketError::UnknownType(t)),
    }
}

/// The address-validation token of an INIT (empty if it carries none), or `None` if the
/// datagram is not a well-formed INIT. For a server's driver, which decides before creating a
/// connection whether to answer with a RETRY ([`encode_retry`]).
pub fn handshake_token(datagram: &[u8]) -> Option<&[u8]> {
    match decode_outer(datagram) {
        Ok(Outer::Init { token, .. }) => Some(token),
        _ => None,
    }
}

/// Encode the RETRY answering `init` (an INIT datagram) with `token`. The RETRY echoes the
/// INIT's ephemeral key, which only those who saw the INIT know, so an off-path attacker cannot
/// forge one. Returns the length, or `None` if `init` is not an INIT, the token is longer than
/// [`MAX_TOKEN_LEN`] or `buf` is too small.
pub fn encode_retry(init: &[u8], token: &[u8], buf: &mut [u8]) -> Option<usize> {
    let Ok(Outer::Init { message, .. }) = decode_outer(init) else {
        return None;
    };
    let len = 2 + RETRY_ECHO_LEN + 1 + token.len();
    if token.len() > MAX_TOKEN_LEN || buf.len() < len {
        return None;
    }
    let mut w = Writer { buf, pos: 0 };
    w.u8(VERSION);
    w.u8(TYPE_RETRY);
    w.put(&message[..RETRY_ECHO_LEN]);
    w.u8(token.len() as u8);
    w.put(token);
    Some(w.pos)
}

/// Which handshake message a clear header introduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HandshakeMessage {
    Init,
    Response,
    Finish,
}

/// Write the clear header of a handshake message (with the token, for an INIT); returns where
/// the Noise message starts.
pub(crate) fn encode_handshake_header(
    which: HandshakeMessage,
    token: &[u8],
    buf: &mut [u8],
) -> Option<usize> {
    let extra = match which {
        HandshakeMessage::Init => 1 + token.len(),
        _ => 0,
    };
    if buf.len() < 2 + extra || token.len() > MAX_TOKEN_LEN {
        return None;
    }
    let mut w = Writer { buf, pos: 0 };
    w.u8(VERSION);
    w.u8(match which {
        HandshakeMessage::Init => TYPE_INIT,
        HandshakeMessage::Response => TYPE_RESPONSE,
        HandshakeMessage::Finish => TYPE_FINISH,
    });
    if which == HandshakeMessage::Init {
        w.u8(token.len() as u8);
        w.put(token);
    }
    Some(w.pos)
}

/// Write a sealed datagram's clear header into `buf[..SEAL_HEADER_LEN]`.
pub fn encode_sealed_header(key_phase: u8, seal_number: u64, buf: &mut [u8]) -> Option<usize> {
    if buf.len() < SEAL_HEADER_LEN {
        return None;
    }
    let mut w = Writer { buf, pos: 0 };
    w.u8(VERSION);
    w.u8(TYPE_SEALED);
    w.u8(key_phase);
    w.u64(seal_number);
    Some(w.pos)
}

/// A bounds-checked writer. Encoders return `None` when the buffer is too small.
struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl Writer<'_> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.buf[self.pos..self.pos + bytes.len()].copy_from_slice(bytes);
        self.pos += bytes.len();
    }
    #[inline]
    fn u8(&mut self, v: u8) {
        self.put(&[v]);
    }
    #[inline]
    fn u16(&mut self, v: u16) {
        self.put(&v.to_be_bytes());
    }
    #[inline]
    fn u64(&mut self, v: u64) {
        self.put(&v.to_be_bytes());
    }
}

/// Encode a handshake into `buf`; returns the length written.
pub fn encode_handshake(h: &Handshake, buf: &mut [u8]) -> Option<usize> {
    if buf.len() < HANDSHAKE_LEN {
        return None;
    }
    let mut w = Writer { buf, pos: 0 };
    w.u8(VERSION);
    w.u8(TYPE_HANDSHAKE);
    w.u8(if h.response { HS_RESPONSE } else { 0 } | if h.synthetic { HS_SYNTHETIC } else { 0 });
    w.u64(h.recv_window);
    w.u64(h.timestamp_us);
    w.u64(h.echo_us);
    Some(w.pos)
}

/// Write a data header into `buf`; the caller writes the payload (unless synthetic) after it.
/// Returns the header length.
pub fn encode_data_header(h: &DataHeader, buf: &mut [u8]) -> Option<usize> {
    let payload = if h.synthetic { 0 } else { h.len as usize };
    if buf.len() < DATA_HEADER_LEN + payload {
        return None;
    }
    let mut w = Writer { buf, pos: 0 };
    w.u8(VERSION);
    w.u8(TYPE_DATA);
    w.u8(if h.fin { DATA_FIN } else { 0 } | if h.synthetic { DATA_SYNTHETIC } else { 0 });
    w.u64(h.packet_number);
    w.u64(h.timestamp_us);
    w.u64(h.offset);
    w.u16(h.len);
    Some(w.pos)
}

/// Encode a path-MTU probe: a data packet with header `h` (no payload: `h.len` must be 0)
/// padded with zeros to `len` bytes. Returns `len`, or `None` if `buf` is smaller or `len`
/// has no room for the header.
pub fn encode_padded_probe(h: &DataHeader, len: usize, buf: &mut [u8]) -> Option<usize> {
    if h.len != 0 || len < DATA_HEADER_LEN || buf.len() < len {
        return None;
    }
    let n = encode_data_header(h, buf)?;
    buf[2] |= DATA_PADDED;
    buf[n..len].fill(0);
    Some(len)
}

/// The fields of an ACK other than its ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckFields {
    /// How long the receiver held the largest packet before acknowledging it, µs.
    pub ack_delay_us: u64,
    /// The timestamp of the largest acknowledged packet, echoed.
    pub echo_us: u64,
    /// Every stream byte below this offset has been received.
    pub cumulative: u64,
    /// The receiver accepts stream bytes below this offset (flow control).
    pub max_offset: u64,
    /// Total ECN-CE marked packets received so far.
    pub ce_count: u64,
}

/// Encode an ACK with `ranges` (newest first, at most [`MAX_ACK_RANGES`] are written).
/// Returns the length written, or `None` if there are no ranges or the buffer is too small.
pub fn encode_ack(
    f: &AckFields,
    ranges: impl Iterator<Item = AckRange>,
    buf: &mut [u8],
) -> Option<usize> {
    if buf.len() < ACK_HEADER_LEN + ACK_RANGE_LEN {
        return None;
    }
    let mut w = Writer { buf, pos: 0 };
    w.u8(VERSION);
    w.u8(TYPE_ACK);
    w.u8(0);
    w.u64(f.ack_delay_us);
    w.u64(f.echo_us);
    w.u64(f.cumulative);
    w.u64(f.max_offset);
    w.u64(f.ce_count);
    let count_at = w.pos;
    w.u8(0);
    let mut n = 0u8;
    for r in ranges.take(MAX_ACK_RANGES) {
        if w.buf.len() - w.pos < ACK_RANGE_LEN {
            break;
        }
        w.u64(r.high);
        w.u64(r.low);
        n += 1;
    }
    if n == 0 {
        return None;
    }
    w.buf[count_at] = n;
    Some(w.pos)
}

/// Encode a close packet.
pub fn encode_close(code: CloseCode, buf: &mut [u8]) -> Option<usize> {
    if buf.len() < CLOSE_LEN {
        return None;
    }
    buf[0] = VERSION;
    buf[1] = TYPE_CLOSE;
    buf[2] = code.to_u8();
    Some(CLOSE_LEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_round_trips_with_and_without_payload() {
        let h = DataHeader {
            packet_number: 7,
            timestamp_us: 123_456,
            offset: 1_000_000,
            len: 5,
            fin: true,
            synthetic: false,
        };
        let mut buf = [0u8; 64];
        let n = encode_data_header(&h, &mut buf).unwrap();
        assert_eq!(n, DATA_HEADER_LEN);
        buf[n..n + 5].copy_from_slice(b"hello");
        match decode(&buf[..n + 5]).unwrap() {
            Packet::Data { header, payload } => {
                assert_eq!(header, h);
                assert_eq!(payload, b"hello");
            }
            p => panic!("decoded {p:?}"),
        }
        let s = DataHeader {
            synthetic: true,
            len: 1448,
            ..h
        };
        let n = encode_data_header(&s, &mut buf).unwrap();
        assert_eq!(
            decode(&buf[..n]).unwrap(),
            Packet::Data {
                header: s,
                payload: &[]
            }
        );
        // A real-mode header whose payload is missing is rejected with the lengths.
        let n = encode_data_header(&h, &mut buf).unwrap();
        assert_eq!(
            decode(&buf[..n + 2]),
            Err(PacketError::PayloadLength {
                declared: 5,
                carried: 2
            })
        );
    }

    #[test]
    fn a_padded_probe_decodes_as_an_empty_data_packet_of_its_full_length() {
        let h = DataHeader {
            packet_number: 9,
            timestamp_us: 5,
            offset: 4096,
            len: 0,
            fin: false,
            synthetic: false,
        };
        let mut buf = [0xAAu8; 9000];
        assert_eq!(encode_padded_probe(&h, 8944, &mut buf), Some(8944));
        assert!(buf[DATA_HEADER_LEN..8944].iter().all(|&b| b == 0));
        let p = decode(&buf[..8944]).unwrap();
        assert_eq!(
            p,
            Packet::Data {
                header: h,
                payload: &[]
            }
        );
        // Only a padded packet may be longer than its payload; only an empty one is padded.
        let n = encode_data_header(&h, &mut buf).unwrap();
        assert_eq!(
            decode(&buf[..n + 1]),
            Err(PacketError::PayloadLength {
                declared: 0,
                carried: 1
            })
        );
        assert_eq!(
            encode_padded_probe(&DataHeader { len: 1, ..h }, 100, &mut buf),
            None
        );
        assert_eq!(encode_padded_probe(&h, 9001, &mut buf), None);
        assert_eq!(encode_padded_probe(&h, DATA_HEADER_LEN - 1, &mut buf), None);
    }

    #[test]
    fn ack_round_trips_and_validates_ranges() {
        let f = AckFields {
            ack_delay_us: 25_000,
            echo_us: 99,
            cumulative: 14_480,
            max_offset: 1 << 30,
            ce_count: 3,
        };
        let ranges = [
            AckRange { high: 100, low: 90 },
            AckRange { high: 88, low: 88 },
            AckRange { high: 10, low: 0 },
        ];
        let mut buf = [0u8; 256];
        let n = encode_ack(&f, ranges.iter().copied(), &mut buf).unwrap();
        assert_eq!(n, ACK_HEADER_LEN + 3 * ACK_RANGE_LEN);
        let Packet::Ack(a) = decode(&buf[..n]).unwrap() else {
            panic!("not an ack")
        };
        assert_eq!(a.largest(), 100);
        assert_eq!(a.ce_count, 3);
        assert_eq!(a.ranges().collect::<Vec<_>>(), ranges);

        // Touching ranges (89 would make 88 and 90..100 one range) are malformed.
        let touching = [
            AckRange { high: 100, low: 90 },
            AckRange { high: 89, low: 80 },
        ];
        let n = encode_ack(&f, touching.iter().copied(), &mut buf).unwrap();
        assert!(matches!(
            decode(&buf[..n]),
            Err(PacketError::BadAckRanges(_))
        ));
        let inverted = [AckRange { high: 5, low: 9 }];
        let n = encode_ack(&f, inverted.iter().copied(), &mut buf).unwrap();
        assert!(matches!(
            decode(&buf[..n]),
            Err(PacketError::BadAckRanges(_))
        ));
    }

    #[test]
    fn every_truncation_of_every_packet_is_rejected() {
        let mut bufs = Vec::new();
        let mut b = [0u8; 128];
        let n = encode_handshake(
            &Handshake {
                response: true,
                synthetic: true,
                recv_window: 5,
                timestamp_us: 6,
                echo_us: 7,
            },
            &mut b,
        )
        .unwrap();
        bufs.push(b[..n].to_vec());
        let n = encode_close(CloseCode::TimedOut, &mut b).unwrap();
        bufs.push(b[..n].to_vec());
        let n = encode_ack(
            &AckFields {
                ack_delay_us: 1,
                echo_us: 2,
                cumulative: 3,
                max_offset: 4,
                ce_count: 0,
            },
            [AckRange { high: 9, low: 1 }].into_iter(),
            &mut b,
        )
        .unwrap();
        bufs.push(b[..n].to_vec());
        for full in bufs {
            assert!(decode(&full).is_ok());
            for cut in 0..full.len() {
                assert!(decode(&full[..cut]).is_err(), "{cut} of {full:?}");
            }
            let mut long = full.clone();
            long.push(0);
            assert_eq!(decode(&long), Err(PacketError::TrailingBytes(1)));
        }
    }

    #[test]
    fn unknown_version_type_and_flags_are_named() {
        assert_eq!(decode(&[2, 1]), Err(PacketError::UnknownVersion(2)));
        assert_eq!(decode(&[1, 9]), Err(PacketError::UnknownType(9)));
        let mut b = [0u8; 64];
        encode_close(CloseCode::Other(77), &mut b).unwrap();
        assert_eq!(decode(&b[..3]), Ok(Packet::Close(CloseCode::Other(77))));
        let h = DataHeader {
            packet_number: 1,
            timestamp_us: 1,
            offset: 0,
            len: 0,
            fin: false,
            synthetic: true,
        };
        let n = encode_data_header(&h, &mut b).unwrap();
        b[2] |= 0x80;
        assert!(matches!(
            decode(&b[..n]),
            Err(PacketError::ReservedFlags { what: "data", .. })
        ));
    }
}
