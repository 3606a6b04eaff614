//! The file-transfer framing on top of a connection's two byte streams.
//!
//! Sender → receiver, one stream:
//!
//! ```text
//! "LHFT"  version (1)  reserved (0)  name length (u16)  size (u64)  name (UTF-8)
//! the file's `size` bytes
//! SHA-256 of those bytes (32)
//! end of stream
//! ```
//!
//! (integers big-endian.) Receiver → sender, one line of UTF-8 and the end of the stream:
//! `OK <sha256 hex>` once the file is on disk under its name with the right digest, or
//! `ERR <reason>` when it was refused (the name is taken, the size exceeds a limit) or failed
//! (the digest differs, a disk error). The sender streams the file without waiting for a go-ahead
//! — on a 180 ms path a round trip of waiting costs more than a refused file's wasted bytes — and
//! stops as soon as an `ERR` line arrives.
//!
//! Parsing is incremental ([`HeaderParser`]): bytes arrive in whatever pieces the transport
//! delivers them.

use thiserror::Error;

pub const MAGIC: &[u8; 4] = b"LHFT";
pub const VERSION: u8 = 1;
/// Fixed part of the header: magic, version, reserved, name length, size.
pub const FIXED_LEN: usize = 4 + 1 + 1 + 2 + 8;
pub const DIGEST_LEN: usize = 32;
/// The longest name a header may carry (Linux `NAME_MAX`).
pub const MAX_NAME: usize = 255;
/// The longest status line the receiver sends.
pub const MAX_STATUS: usize = 1024;

/// What the sender announces before the file's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The file's name on the receiver: one path component.
    pub name: String,
    pub size: u64,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum FramingError {
    #[error("not a longhaul transfer (bad magic); is the peer `longhaul send`?")]
    Magic,
    #[error("transfer format version {0}; this build speaks version {VERSION}")]
    Version(u8),
    #[error("file name is not UTF-8")]
    NameEncoding,
    #[error("file name {0:?} is not a plain file name (empty, `.`/`..`, a `/` or a NUL byte)")]
    NameInvalid(String),
    #[error("file name of {0} bytes; at most {MAX_NAME}")]
    NameTooLong(usize),
    #[error("status line longer than {MAX_STATUS} bytes or not UTF-8")]
    Status,
}

/// A name the receiver may create in its directory: one component, nothing that walks out.
pub fn check_name(name: &str) -> Result<(), FramingError> {
    if name.len() > MAX_NAME {
        return Err(FramingError::NameTooLong(name.len()));
    }
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(FramingError::NameInvalid(name.to_string()));
    }
    Ok(())
}

impl Header {
    pub fn encode(&self) -> Result<Vec<u8>, FramingError> {
        check_name(&self.name)?;
        let mut out = Vec::with_capacity(FIXED_LEN + self.name.len());
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        out.push(0);
        out.extend_from_slice(&(self.name.len() as u16).to_be_bytes());
        out.extend_from_slice(&self.size.to_be_bytes());
        out.extend_from_slice(self.name.as_bytes());
        Ok(out)
    }
}

/// Collects a header from the stream's first bytes.
#[derive(Default)]
pub struct HeaderParser {
    buf: Vec<u8>,
}

impl HeaderParser {
    /// Feed bytes; returns the header and how many of `input`'s bytes it used, once complete.
    /// Fails as soon as the bytes cannot begin a valid header.
    pub fn feed(&mut self, input: &[u8]) -> Result<Option<(Header, usize)>, FramingError> {
        let before = self.buf.len();
        let want = |buf: &Vec<u8>| {
            if buf.len() < FIXED_LEN {
                FIXED_LEN
            } else {
                FIXED_LEN + u16::from_be_bytes([buf[6], buf[7]]) as usize
            }
        };
        let mut used = 0;
        while self.buf.len() < want(&self.buf) && used < input.len() {
            let take = (want(&self.buf) - self.buf.len()).min(input.len() - used);
            self.buf.extend_from_slice(&input[used..used + take]);
            used += take;
            self.check_prefix()?;
        }
        if self.buf.len() < want(&self.buf) {
            return Ok(None);
        }
        debug_assert!(self.buf.len() >= before);
        let size = u64::from_be_bytes(self.buf[8..16].try_into().expect("8 bytes"));
        let name = std::str::from_utf8(&self.buf[FIXED_LEN..])
            .map_err(|_| FramingError::NameEncoding)?
            .to_string();
        check_name(&name)?;
        Ok(Some((Header { name, size }, used)))
    }

    fn check_prefix(&self) -> Result<(), FramingError> {
        let n = self.buf.len().min(4);
        if self.buf[..n] != MAGIC[..n] {
            return Err(FramingError::Magic);
        }
        if self.buf.len() > 4 && self.buf[4] != VERSION {
            return Err(FramingError::Version(self.buf[4]));
        }
        if self.buf.len() >= FIXED_LEN {
            let len = u16::from_be_bytes([self.buf[6], self.buf[7]]) as usize;
            if len > MAX_NAME {
                return Err(FramingError::NameTooLong(len));
            }
        }
        Ok(())
    }
}

/// The receiver's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Stored, with this SHA-256 (hex).
    Ok(String),
    Err(String),
}

impl Status {
    pub fn encode(&self) -> Vec<u8> {
        let line = match self {
            Status::Ok(hex) => format!("OK {hex}\n"),
            // One line: a reason never spans two.
            Status::Err(why) => format!("ERR {}\n", why.replace('\n', " ")),
        };
        let mut bytes = line.into_bytes();
        bytes.truncate(MAX_STATUS);
        if bytes.last() != Some(&b'\n') {
            *bytes.last_mut().expect("non-empty") = b'\n';
        }
        bytes
    }

    /// Parse a complete line (with or without its newline).
    pub fn parse(line: &[u8]) -> Result<Status, FramingError> {
        if line.len() > MAX_STATUS {
            return Err(FramingError::Status);
        }
        let text = std::str::from_utf8(line).map_err(|_| FramingError::Status)?;
        let text = text.trim_end_matches('\n');
        if let Some(hex) = text.strip_prefix("OK ") {
            Ok(Status::Ok(hex.to_string()))
        } else if let Some(why) = text.strip_prefix("ERR ") {
            Ok(Status::Err(why.to_string()))
        } else {
            Err(FramingError::Status)
        }
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_fed_a_byte_at_a_time() {
        let h = Header {
            name: "run-42.h5".into(),
            size: 5_000_000_000_123,
        };
        let mut bytes = h.encode().unwrap();
        assert_eq!(bytes.len(), FIXED_LEN + 9);
        bytes.extend_from_slice(b"file bytes");
        let mut p = HeaderParser::default();
        for i in 0..FIXED_LEN + 8 {
            assert_eq!(p.feed(&bytes[i..i + 1]).unwrap(), None, "byte {i}");
        }
        // The last name byte completes it; the file's bytes after it are not consumed.
        let (got, used) = p.feed(&bytes[FIXED_LEN + 8..]).unwrap().unwrap();
        assert_eq!(got, h);
        assert_eq!(used, 1);
    }

    #[test]
    fn header_in_one_piece_reports_exactly_its_length() {
        let h = Header {
            name: "a".into(),
            size: 0,
        };
        let mut bytes = h.encode().unwrap();
        bytes.extend_from_slice(&[7; 100]);
        let (got, used) = HeaderParser::default().feed(&bytes).unwrap().unwrap();
        assert_eq!(got, h);
        assert_eq!(used, FIXED_LEN + 1);
    }

    #[test]
    fn a_foreign_stream_fails_on_its_first_wrong_byte() {
        assert_eq!(
            HeaderParser::default().feed(b"GET / HTTP/1.1"),
            Err(FramingError::Magic)
        );
        assert_eq!(
            HeaderParser::default().feed(b"LHFT\x02"),
            Err(FramingError::Version(2))
        );
        let mut long = b"LHFT\x01\x00\x01\x00".to_vec();
        long.extend_from_slice(&[0; 8]);
        assert_eq!(
            HeaderParser::default().feed(&long),
            Err(FramingError::NameTooLong(256))
        );
    }

    #[test]
    fn names_that_leave_the_directory_are_refused_on_both_ends() {
        for bad in ["", ".", "..", "../etc/passwd", "a/b", "nul\0"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
            let h = Header {
                name: bad.into(),
                size: 1,
            };
            assert!(h.encode().is_err(), "{bad:?}");
            // A hostile sender skips `encode`: the parser refuses the same names.
            let mut raw = b"LHFT\x01\x00".to_vec();
            raw.extend_from_slice(&(bad.len() as u16).to_be_bytes());
            raw.extend_from_slice(&1u64.to_be_bytes());
            raw.extend_from_slice(bad.as_bytes());
            assert!(HeaderParser::default().feed(&raw).is_err(), "{bad:?}");
        }
        assert!(check_name("..hidden").is_ok());
        assert!(check_name(&"x".repeat(255)).is_ok());
        assert_eq!(
            check_name(&"x".repeat(256)),
            Err(FramingError::NameTooLong(256))
        );
    }

    #[test]
    fn status_lines_round_trip_and_stay_one_line() {
        let ok = Status::Ok("ab".repeat(32));
        assert_eq!(Status::parse(&ok.encode()).unwrap(), ok);
        let err = Status::Err("a.dat exists\n(use --overwrite)".into());
        let line = err.encode();
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(
            Status::parse(&line).unwrap(),
            Status::Err("a.dat exists (use --overwrite)".into())
        );
        let huge = Status::Err("x".repeat(5000)).encode();
        assert_eq!(huge.len(), MAX_STATUS);
        assert!(Status::parse(&huge).is_ok());
        assert_eq!(Status::parse(b"MAYBE\n"), Err(FramingError::Status));
    }

    #[test]
    fn hex_is_lowercase_two_digits_per_byte() {
        assert_eq!(hex(&[0, 15, 255]), "000fff");
    }
}
