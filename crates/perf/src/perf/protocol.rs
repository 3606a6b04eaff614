//! The control protocol between `longhaul perf client` and `server`.
//!
//! Like iperf3's, a test is one **control connection** plus one **data connection per stream**.
//! Every connection opens with a framed message, so the server knows at once what a peer is and
//! can reject anything else with a logged reason, closing that peer only:
//!
//! ```text
//! frame = magic "LHPF" (4 B) | version (1 B) | reserved 0 (1 B) | length (2 B, big-endian) | JSON
//! ```
//!
//! 1. control: client → `Test` (streams, duration, cc, window, write size); server → `Accept`
//!    with a cookie, or `Error`;
//! 2. each data connection: client → `Data { cookie, stream }`; nothing comes back on it;
//! 3. control: server → `Start` once every stream is attached; the client writes for the
//!    duration, then shuts its data connections down (EOF);
//! 4. control: server → `Result` (bytes received per stream, seconds from Start to the last EOF).
//!
//! JSON keeps the messages readable in a packet capture and extensible; the frame header is what
//! tells a longhaul peer from a port scanner or an HTTP request. Version mismatches are answered
//! with an `Error` in version-1 framing so an old client prints the server's reason.

use std::io::{self, Read, Write};

/// The four bytes every longhaul perf frame starts with.
pub const MAGIC: [u8; 4] = *b"LHPF";
/// The protocol version this build speaks.
pub const VERSION: u8 = 1;
/// Largest JSON payload accepted (a `Result` for the maximum number of streams fits easily).
pub const MAX_PAYLOAD: usize = 16 * 1024;
/// Most parallel streams one test may ask for.
pub const MAX_STREAMS: u32 = 128;
/// Longest test a server accepts.
pub const MAX_DURATION_S: u64 = 24 * 3600;

/// What the client asks for.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TestParams {
    /// Parallel data connections, 1 to [`MAX_STREAMS`].
    pub streams: u32,
    /// How long the client writes, ms (at most [`MAX_DURATION_S`] seconds).
    pub duration_ms: u64,
    /// Congestion control for the data connections (`None`: the host default).
    pub cc: Option<String>,
    /// Socket buffer to request on both ends (`-w`), bytes.
    pub window: Option<u64>,
    /// Bytes per write call (`-l`).
    pub write_len: u32,
}

impl TestParams {
    /// Why the server refuses these parameters, if it does.
    pub fn problem(&self) -> Option<String> {
        if self.streams == 0 || self.streams > MAX_STREAMS {
            return Some(format!(
                "{} streams requested (1..={MAX_STREAMS})",
                self.streams
            ));
        }
        if self.duration_ms == 0 || self.duration_ms > MAX_DURATION_S * 1000 {
            return Some(format!(
                "duration {} ms outside 1 ms..{MAX_DURATION_S} s",
                self.duration_ms
            ));
        }
        if self.window.is_some_and(|w| w > i32::MAX as u64) {
            return Some("window larger than 2 GiB".into());
        }
        if let Some(cc) = &self.cc {
            if cc.is_empty()
                || cc.len() > 15
                || !cc.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            {
                return Some(format!(
                    "congestion control name `{cc}` is not a kernel name"
                ));
            }
        }
        None
    }
}

/// Everything that travels in a frame.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// Client, on the control connection: the test it asks for.
    Test(TestParams),
    /// Server: the test is accepted.
    Accept {
        /// Names the test on its data connections (tells concurrent tests apart).
        cookie: u64,
    },
    /// Client, first on each data connection: which test and stream it belongs to.
    Data {
        /// The test's cookie, from `Accept`.
        cookie: u64,
        /// The stream's index, from 0.
        stream: u32,
    },
    /// Server: every stream is attached; the client writes from now on.
    Start,
    /// Server: every stream has reached EOF.
    Result {
        /// Bytes received on each stream, in stream order.
        bytes: Vec<u64>,
        /// Seconds from `Start` to the last EOF.
        elapsed_s: f64,
    },
    /// Server: the test is refused or failed, with the reason.
    Error {
        /// The reason, for the client to print.
        message: String,
    },
}

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The first bytes are not `LHPF` (shown in hex and as text).
    #[error("not a longhaul perf peer (first bytes {0})")]
    BadMagic(String),
    /// The frame's protocol version is not this build's.
    #[error("protocol version {0}, this build speaks {VERSION}")]
    Version(u8),
    /// The frame's declared length exceeds [`MAX_PAYLOAD`].
    #[error("frame of {0} bytes exceeds the {MAX_PAYLOAD}-byte limit")]
    TooLong(usize),
    /// The payload is not a valid message.
    #[error("malformed message: {0}")]
    Json(#[from] serde_json::Error),
    /// The peer closed the connection before a whole frame arrived.
    #[error("peer closed the connection")]
    Closed,
    /// No data from the peer within the idle timeout.
    #[error("no data from the peer within the idle timeout")]
    Idle,
    /// Any other socket error.
    #[error(transparent)]
    Io(io::Error),
}

impl From<io::Error> for FrameError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::UnexpectedEof => FrameError::Closed,
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => FrameError::Idle,
            _ => FrameError::Io(e),
        }
    }
}

/// Write one message as a frame.
pub fn write_message(w: &mut impl Write, m: &Message) -> io::Result<()> {
    let json = serde_json::to_vec(m).map_err(io::Error::other)?;
    if json.len() > MAX_PAYLOAD {
        return Err(io::Error::other(format!(
            "message of {} bytes is too long",
            json.len()
        )));
    }
    let mut frame = Vec::with_capacity(8 + json.len());
    frame.extend_from_slice(&MAGIC);
    frame.push(VERSION);
    frame.push(0);
    frame.extend_from_slice(&(json.len() as u16).to_be_bytes());
    frame.extend_from_slice(&json);
    w.write_all(&frame)?;
    w.flush()
}

/// Read one frame. Checks the magic before anything else, so garbage is rejected after 4 bytes.
pub fn read_message(r: &mut impl Read) -> Result<Message, FrameError> {
    let mut head = [0u8; 8];
    r.read_exact(&mut head[..4])?;
    if head[..4] != MAGIC {
        let shown: Vec<String> = head[..4].iter().map(|b| format!("{b:02x}")).collect();
        let text: String = head[..4]
            .iter()
            .map(|&b| {
                if b.is_ascii_graphic() || b == b' ' {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        return Err(FrameError::BadMagic(format!(
            "{} \"{text}\"",
            shown.join(" ")
        )));
    }
    r.read_exact(&mut head[4..])?;
    if head[4] != VERSION {
        return Err(FrameError::Version(head[4]));
    }
    let len = u16::from_be_bytes([head[6], head[7]]) as usize;
    if len > MAX_PAYLOAD {
        return Err(FrameError::TooLong(len));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    Ok(serde_json::from_slice(&body)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_through_frames() {
        let m = Message::Test(TestParams {
            streams: 4,
            duration_ms: 10_000,
            cc: Some("cubic".into()),
            window: Some(32 << 20),
            write_len: 131072,
        });
        let mut buf = Vec::new();
        write_message(&mut buf, &m).unwrap();
        assert_eq!(&buf[..6], b"LHPF\x01\x00");
        assert_eq!(u16::from_be_bytes([buf[6], buf[7]]) as usize, buf.len() - 8);
        assert_eq!(read_message(&mut buf.as_slice()).unwrap(), m);
    }

    #[test]
    fn garbage_and_other_versions_are_named() {
        let e = read_message(&mut &b"GET / HTTP/1.1\r\n"[..]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not a longhaul perf peer (first bytes 47 45 54 20 \"GET \")"
        );
        let e = read_message(&mut &b"LHPF\x02\x00\x00\x02{}"[..]).unwrap_err();
        assert!(matches!(e, FrameError::Version(2)));
        let e = read_message(&mut &b"LHPF\x01\x00\xff\xff"[..]).unwrap_err();
        assert!(matches!(e, FrameError::TooLong(65535)));
        let e = read_message(&mut &b"LHPF\x01\x00\x00\x03{x}"[..]).unwrap_err();
        assert!(matches!(e, FrameError::Json(_)));
        let e = read_message(&mut &b"LHP"[..]).unwrap_err();
        assert!(matches!(e, FrameError::Closed));
    }

    #[test]
    fn parameters_outside_limits_are_refused() {
        let ok = TestParams {
            streams: 1,
            duration_ms: 1000,
            cc: None,
            window: None,
            write_len: 1,
        };
        assert_eq!(ok.problem(), None);
        assert!(TestParams {
            streams: 0,
            ..ok.clone()
        }
        .problem()
        .is_some());
        assert!(TestParams {
            streams: 129,
            ..ok.clone()
        }
        .problem()
        .is_some());
        assert!(TestParams {
            cc: Some("../x".into()),
            ..ok.clone()
        }
        .problem()
        .is_some());
        assert!(TestParams {
            duration_ms: 0,
            ..ok
        }
        .problem()
        .is_some());
    }
}
