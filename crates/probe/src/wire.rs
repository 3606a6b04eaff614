//! What `longhaul probe` puts on the wire: probe datagrams beside the connection's, and the
//! messages on the connection's stream.
//!
//! The prober and the server first open a longhaul connection (the Noise XX handshake with the
//! same keys, trust and admission as a transfer). On its stream, which is sealed, the prober
//! sends a fresh random 32-byte key ([`Control::Hello`]); the server answers
//! [`Reply::Ready`]. Probe datagrams then travel outside the connection, to the same UDP port,
//! so that their timing is the prober's and not a congestion controller's:
//!
//! ```text
//! magic 0xB7 'P' | kind (1) | train (4) | seq (4) | padding … | tag (16)
//! ```
//!
//! The tag is HMAC-SHA-256 under that key of the header and the datagram's length, cut to 16
//! bytes: a datagram is counted only once it authenticates, so nobody without the key (which
//! only the two authenticated ends hold) can add arrivals to a measurement. A proto datagram
//! starts with its version, 1, never with the magic. The server stamps each train datagram's
//! arrival (the kernel's receive stamp) and echoes each ping at once as a pong; when the prober
//! asks for a train ([`Control::Report`], sent on the stream behind the train, so through the
//! same queue), the server returns the train's arrivals ([`Reply::Arrivals`]).

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The first two bytes of a probe datagram.
pub const MAGIC: [u8; 2] = [0xB7, b'P'];
/// Bytes before the padding: magic, kind, train, sequence number.
pub const HEADER: usize = 2 + 1 + 4 + 4;
/// Bytes of the authentication tag at the end.
pub const TAG: usize = 16;
/// The smallest probe datagram.
pub const MIN_DATAGRAM: usize = HEADER + TAG;
/// The most packets one train may have (what a server keeps per train).
pub const MAX_TRAIN: u32 = 20_000;

/// What a probe datagram is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A packet of a train, stamped on arrival.
    Train = 0,
    /// A ping, echoed at once.
    Ping = 1,
    /// The echo of a ping.
    Pong = 2,
}

/// A probe datagram's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// What it is.
    pub kind: Kind,
    /// Its train (pings: 0).
    pub train: u32,
    /// Its place in the train (pings: the ping's number).
    pub seq: u32,
}

/// Whether `d` is a probe datagram (and not a connection's).
pub fn is_probe(d: &[u8]) -> bool {
    d.len() >= 2 && d[..2] == MAGIC
}

fn tag(key: &[u8; 32], header: &[u8], len: usize) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("any key length");
    mac.update(header);
    mac.update(&(len as u32).to_be_bytes());
    mac
}

/// Writes the datagram of `h` into `buf`, `buf.len()` (at least [`MIN_DATAGRAM`]) bytes long.
pub fn encode(h: Header, key: &[u8; 32], buf: &mut [u8]) {
    let len = buf.len();
    assert!(
        len >= MIN_DATAGRAM,
        "a probe datagram has at least {MIN_DATAGRAM} bytes"
    );
    buf[..2].copy_from_slice(&MAGIC);
    buf[2] = h.kind as u8;
    buf[3..7].copy_from_slice(&h.train.to_be_bytes());
    buf[7..11].copy_from_slice(&h.seq.to_be_bytes());
    buf[HEADER..len - TAG].fill(0);
    let t = tag(key, &buf[..HEADER], len).finalize().into_bytes();
    buf[len - TAG..].copy_from_slice(&t[..TAG]);
}

/// The header of `d` if it is a probe datagram whose tag authenticates under `key`.
pub fn decode(d: &[u8], key: &[u8; 32]) -> Option<Header> {
    if d.len() < MIN_DATAGRAM || !is_probe(d) {
        return None;
    }
    tag(key, &d[..HEADER], d.len())
        .verify_truncated_left(&d[d.len() - TAG..])
        .ok()?;
    let kind = match d[2] {
        0 => Kind::Train,
        1 => Kind::Ping,
        2 => Kind::Pong,
        _ => return None,
    };
    let word = |i: usize| u32::from_be_bytes(d[i..i + 4].try_into().expect("4 bytes"));
    Some(Header {
        kind,
        train: word(3),
        seq: word(7),
    })
}

/// Appends what the connection's stream has for the application to `into`.
pub fn read_stream(conn: &mut longhaul_proto::Connection, into: &mut Vec<u8>) {
    let mut piece = [0u8; 4096];
    loop {
        let n = conn.read(&mut piece);
        if n == 0 {
            return;
        }
        into.extend_from_slice(&piece[..n]);
    }
}

/// A message from the prober on the connection's stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Control {
    /// The key of this measurement's datagrams.
    Hello {
        /// The HMAC key.
        key: [u8; 32],
    },
    /// Send the arrivals of this train (and forget them).
    Report {
        /// The train.
        train: u32,
    },
}

/// A message from the server on the connection's stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The key is in place: probe datagrams are counted from now on.
    Ready,
    /// The arrivals of a train: each packet's sequence number and the server's receive stamp,
    /// ns of its clock.
    Arrivals {
        /// The train.
        train: u32,
        /// `(seq, stamp)` in arrival order.
        arrivals: Vec<(u32, u64)>,
    },
}

/// A stream message that breaks the protocol.
#[derive(Debug, thiserror::Error)]
#[error("probe protocol: {0}")]
pub struct WireError(pub String);

impl Control {
    /// The first byte of [`Control::Hello`], which opens a prober's stream (a sender's opens
    /// with the transfer protocol's magic, `LHT…`).
    pub const HELLO: u8 = 1;

    /// Appends the message to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Control::Hello { key } => {
                out.push(Control::HELLO);
                out.extend_from_slice(key);
            }
            Control::Report { train } => {
                out.push(2);
                out.extend_from_slice(&train.to_be_bytes());
            }
        }
    }

    /// Takes one message from the front of `buf`; `Ok(None)` if it is not all there yet.
    pub fn decode(buf: &mut Vec<u8>) -> Result<Option<Control>, WireError> {
        let Some(&op) = buf.first() else {
            return Ok(None);
        };
        let (m, n) = match op {
            1 if buf.len() >= 33 => (
                Control::Hello {
                    key: buf[1..33].try_into().expect("32 bytes"),
                },
                33,
            ),
            2 if buf.len() >= 5 => (
                Control::Report {
                    train: u32::from_be_bytes(buf[1..5].try_into().expect("4 bytes")),
                },
                5,
            ),
            1 | 2 => return Ok(None),
            _ => return Err(WireError(format!("unknown message {op} from the prober"))),
        };
        buf.drain(..n);
        Ok(Some(m))
    }
}

impl Reply {
    /// Appends the message to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Reply::Ready => out.push(1),
            Reply::Arrivals { train, arrivals } => {
                out.push(2);
                out.extend_from_slice(&train.to_be_bytes());
                out.extend_from_slice(&(arrivals.len() as u32).to_be_bytes());
                for (seq, at) in arrivals {
                    out.extend_from_slice(&seq.to_be_bytes());
                    out.extend_from_slice(&at.to_be_bytes());
                }
            }
        }
    }

    /// Takes one message from the front of `buf`; `Ok(None)` if it is not all there yet.
    pub fn decode(buf: &mut Vec<u8>) -> Result<Option<Reply>, WireError> {
        let Some(&op) = buf.first() else {
            return Ok(None);
        };
        let word = |b: &[u8], i: usize| u32::from_be_bytes(b[i..i + 4].try_into().expect("4"));
        let (m, n) = match op {
            1 => (Reply::Ready, 1),
            2 if buf.len() >= 9 => {
                let count = word(buf, 5);
                if count > MAX_TRAIN {
                    return Err(WireError(format!("{count} arrivals in one train")));
                }
                let n = 9 + 12 * count as usize;
                if buf.len() < n {
                    return Ok(None);
                }
                let arrivals = (0..count as usize)
                    .map(|i| {
                        let at = 9 + 12 * i;
                        let stamp = u64::from_be_bytes(buf[at + 4..at + 12].try_into().expect("8"));
                        (word(buf, at), stamp)
                    })
                    .collect();
                let train = word(buf, 1);
                (Reply::Arrivals { train, arrivals }, n)
            }
            2 => return Ok(None),
            _ => return Err(WireError(format!("unknown message {op} from the server"))),
        };
        buf.drain(..n);
        Ok(Some(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_authenticate_and_forgeries_do_not() {
        let key = [7u8; 32];
        let h = Header {
            kind: Kind::Train,
            train: 3,
            seq: 41,
        };
        let mut d = vec![0u8; 1200];
        encode(h, &key, &mut d);
        assert!(is_probe(&d));
        assert_eq!(decode(&d, &key), Some(h));
        assert_eq!(decode(&d, &[8u8; 32]), None, "another key");
        let mut forged = d.clone();
        forged[8] ^= 1;
        assert_eq!(decode(&forged, &key), None, "another sequence number");
        assert_eq!(decode(&d[..1100], &key), None, "cut short");
        assert_eq!(decode(&d[..5], &key), None, "too short to hold a tag");
        assert!(!is_probe(&[1, 2, 0, 0]), "a proto datagram");
    }

    #[test]
    fn stream_messages_round_trip_and_wait_for_their_bytes() {
        let mut out = Vec::new();
        Control::Hello { key: [9; 32] }.encode(&mut out);
        Control::Report { train: 5 }.encode(&mut out);
        let mut part = out[..20].to_vec();
        assert_eq!(Control::decode(&mut part).unwrap(), None);
        assert_eq!(
            Control::decode(&mut out).unwrap(),
            Some(Control::Hello { key: [9; 32] })
        );
        assert_eq!(
            Control::decode(&mut out).unwrap(),
            Some(Control::Report { train: 5 })
        );
        assert!(out.is_empty());
        let r = Reply::Arrivals {
            train: 2,
            arrivals: vec![(0, 10), (2, 30), (1, 31)],
        };
        let mut out = Vec::new();
        Reply::Ready.encode(&mut out);
        r.encode(&mut out);
        assert_eq!(Reply::decode(&mut out).unwrap(), Some(Reply::Ready));
        let mut part = out[..out.len() - 1].to_vec();
        assert_eq!(Reply::decode(&mut part).unwrap(), None);
        assert_eq!(Reply::decode(&mut out).unwrap(), Some(r));
        assert!(Control::decode(&mut vec![9]).is_err());
        let mut huge = vec![2, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff];
        assert!(Reply::decode(&mut huge).is_err());
    }
}
