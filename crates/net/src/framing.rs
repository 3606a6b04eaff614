//! The file-transfer protocol on a connection's two byte streams.
//!
//! One connection carries any number of files, directories and symbolic links, with one round
//! trip for the whole set rather than one per file:
//!
//! ```text
//! sender → receiver                         receiver → sender
//! "LHT4" HELLO ENTRY… MANIFEST_END    ──►
//!                                     ◄──   "LHT4" PLAN… PLAN_END        (one per entry)
//! FILE(id, from_chunk) bytes digest … ──►
//! END                                 ◄──   DONE(id)… BYE             (one per FILE; FATAL to stop)
//! ```
//!
//! The sender announces every entry (path, kind, size, mode, mtime) and waits for the plan:
//! per entry, send it from chunk `n` (`n` > 0 when the receiver holds a verified prefix of an
//! earlier, cut transfer, with the digest of that prefix's chunk digests, which the sender
//! checks against its own file), skip it (already there), or refuse it (with the reason). Then
//! each file to send follows as a `FILE` message, its bytes from the resume point, and the
//! file's digest (`hashlist`: BLAKE3 over its 1 MiB chunks' BLAKE3 digests); the receiver
//! answers each with `DONE` once the file is verified, on disk and under its name, or with why
//! not. `FATAL` (a full disk, say) ends the session; what was received is kept for a later
//! resume.
//!
//! Each stream starts with [`MAGIC`], whose last byte is the protocol's version: version 2
//! sent SHA-256 of the file's bytes, version 3 SHA-256 over the chunks' SHA-256 digests, and
//! version 4 the same list built with BLAKE3, so two versions would disagree on every file
//! (and on every resume point). A peer of another version is told so
//! ([`FramingError::Version`]) before any file byte moves, rather than meeting a digest
//! mismatch at the end.
//!
//! Every message is `tag:u8 len:u32 body[len]`, integers big-endian, `len` at most
//! [`MAX_MESSAGE`]; a `FILE` message's file bytes and digest follow its body unframed (the
//! receiver knows the size from the manifest). Parsing is incremental ([`MessageReader`]):
//! bytes arrive in whatever pieces the transport delivers. Decoding never panics and never
//! allocates more than one message's declared, bounded length.

use crate::path::{check_relative, PathError, Printable};
use thiserror::Error;

/// "LHT" and the protocol's version.
pub const MAGIC: &[u8; 4] = b"LHT4";
/// The magic without its version byte.
const MAGIC_NAME: &[u8; 3] = b"LHT";
/// Bytes of a digest (BLAKE3): a file's, a chunk's, or a resume prefix's.
pub const DIGEST_LEN: usize = 32;
/// The largest message body (an entry with a 4095-byte path and a 4095-byte link target fits).
pub const MAX_MESSAGE: usize = 16 * 1024;
/// Longest reason text carried in a message.
pub const MAX_REASON: usize = 1024;
/// Resume granularity: the receiver journals verified chunks of this size.
pub const CHUNK_SIZE: u64 = 1 << 20;
/// The most entries one session may announce (the receiver keeps the manifest in memory).
pub const MAX_ENTRIES: u64 = 1 << 24;

const HELLO: u8 = 0x01;
const ENTRY: u8 = 0x02;
const MANIFEST_END: u8 = 0x03;
const FILE: u8 = 0x04;
const END: u8 = 0x05;
const KEEPALIVE: u8 = 0x06;
const PLAN: u8 = 0x11;
const PLAN_END: u8 = 0x12;
const DONE: u8 = 0x13;
const FATAL: u8 = 0x14;
const BYE: u8 = 0x15;

/// Why a stream's bytes are not a valid message sequence.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FramingError {
    /// The stream does not start with `LHT`.
    #[error(
        "not a longhaul transfer (bad magic); is the peer `longhaul send`/`recv` of this version?"
    )]
    Magic,
    /// The peer's stream starts `LHT` with another version byte.
    #[error(
        "the peer speaks transfer protocol {} and this build {}, which verifies files \
         differently: run the same longhaul release at both ends",
        version_name(*.0),
        version_name(MAGIC[3])
    )]
    Version(u8),
    /// A message body ends before the field being read.
    #[error("message {tag:#04x} is truncated")]
    Truncated {
        /// The message's tag.
        tag: u8,
    },
    /// A message declares a body longer than [`MAX_MESSAGE`] bytes.
    #[error("message of {0} bytes; at most {MAX_MESSAGE}")]
    TooLong(usize),
    /// A message tag this version does not know.
    #[error("unknown message {0:#04x}")]
    UnknownTag(u8),
    /// Bytes left in a message body after its last field: (count, tag).
    #[error("{0} bytes left over in message {1:#04x}")]
    Trailing(usize, u8),
    /// A path, link target or reason is not UTF-8.
    #[error("text is not UTF-8")]
    Encoding,
    /// An entry kind or plan action this version does not know.
    #[error("unknown entry kind {0}")]
    Kind(u8),
    /// An entry's path is not one a receiver accepts.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A symbolic link entry without a target.
    #[error("symbolic link {0} has an empty target")]
    EmptyTarget(Printable),
    /// The peer's resume chunk size (as a power of two) differs from [`CHUNK_SIZE`].
    #[error("chunk size 2^{0} is not this build's 2^20")]
    ChunkSize(u8),
    /// A manifest announces more than [`MAX_ENTRIES`] entries.
    #[error("{0} entries announced; at most {MAX_ENTRIES}")]
    TooManyEntries(u64),
    /// Any other breach of the protocol, in words.
    #[error("{0}")]
    Protocol(String),
}

/// What an entry is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File {
        /// Its length in bytes.
        size: u64,
    },
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink {
        /// What the link points to, as stored in the link.
        target: String,
    },
}

/// One announced entry: a path relative to the receiving directory and its metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The path relative to the receiving directory, `/`-separated.
    pub path: String,
    /// File, directory or link.
    pub kind: Kind,
    /// Permission bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// Modification time, seconds and nanoseconds since the Unix epoch.
    pub mtime: (i64, u32),
}

impl Entry {
    /// The file's size in bytes; 0 for a directory or link.
    pub fn size(&self) -> u64 {
        match self.kind {
            Kind::File { size } => size,
            _ => 0,
        }
    }
}

/// What the receiver will do with an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send the file from chunk `from_chunk`; `prefix` is the digest of the receiver's
    /// verified chunks' digests (zero when `from_chunk` is 0).
    Send {
        /// The first chunk ([`CHUNK_SIZE`] bytes each) the receiver needs.
        from_chunk: u64,
        /// The digest of the digests of chunks `0..from_chunk` the receiver holds.
        prefix: [u8; DIGEST_LEN],
    },
    /// Already there (same size and mtime), or a directory or link now in place.
    Skip(String),
    /// Not accepted, with the reason (too large, a path it will not write, …).
    Refuse(String),
}

/// One message of either stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// Sender: the session's first message.
    Hello {
        /// The sender accepts resuming from what the receiver kept of a cut transfer.
        resume: bool,
        /// How many `Entry` messages follow.
        entries: u64,
    },
    /// Sender: one entry of the manifest; entries are numbered from 0 in order.
    Entry(Entry),
    /// Sender: the manifest is complete.
    ManifestEnd,
    /// Followed by the file's bytes from `from_chunk × CHUNK_SIZE` and its digest (`hashlist`).
    File {
        /// The entry's number in the manifest.
        id: u32,
        /// The chunk the bytes start at, as the plan asked.
        from_chunk: u64,
    },
    /// Sender: no more files follow.
    End,
    /// Nothing: keeps the connection busy while the sender hashes a long resume prefix, or while
    /// the receiver waits for a part file another session writes.
    Keepalive,
    /// Receiver: what it will do with one entry.
    Plan {
        /// The entry's number in the manifest.
        id: u32,
        /// Send, skip or refuse.
        action: Action,
    },
    /// Receiver: every entry has its plan.
    PlanEnd,
    /// Receiver: the verdict on one file.
    Done {
        /// The entry's number in the manifest.
        id: u32,
        /// The file's digest once it is verified and stored under its name, or why it is not.
        result: Result<[u8; DIGEST_LEN], String>,
    },
    /// Receiver: the session cannot go on (a full disk, a broken protocol), with the reason.
    Fatal(String),
    /// Receiver: every verdict is sent; the session is over.
    Bye,
}

impl Message {
    /// Append the message's encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; 5]);
        let tag = match self {
            Message::Hello { resume, entries } => {
                out.push(*resume as u8);
                out.push(CHUNK_SIZE.trailing_zeros() as u8);
                out.extend_from_slice(&entries.to_be_bytes());
                HELLO
            }
            Message::Entry(e) => {
                let (kind, target) = match &e.kind {
                    Kind::File { .. } => (0u8, ""),
                    Kind::Dir => (1, ""),
                    Kind::Symlink { target } => (2, target.as_str()),
                };
                out.push(kind);
                out.extend_from_slice(&e.mode.to_be_bytes());
                out.extend_from_slice(&e.mtime.0.to_be_bytes());
                out.extend_from_slice(&e.mtime.1.to_be_bytes());
                out.extend_from_slice(&e.size().to_be_bytes());
                put_text(out, &e.path);
                put_text(out, target);
                ENTRY
            }
            Message::ManifestEnd => MANIFEST_END,
            Message::File { id, from_chunk } => {
                out.extend_from_slice(&id.to_be_bytes());
                out.extend_from_slice(&from_chunk.to_be_bytes());
                FILE
            }
            Message::End => END,
            Message::Keepalive => KEEPALIVE,
            Message::Plan { id, action } => {
                out.extend_from_slice(&id.to_be_bytes());
                match action {
                    Action::Send { from_chunk, prefix } => {
                        out.push(0);
                        out.extend_from_slice(&from_chunk.to_be_bytes());
                        out.extend_from_slice(prefix);
                    }
                    Action::Skip(why) => {
                        out.push(1);
                        put_text(out, clip(why));
                    }
                    Action::Refuse(why) => {
                        out.push(2);
                        put_text(out, clip(why));
                    }
                }
                PLAN
            }
            Message::PlanEnd => PLAN_END,
            Message::Done { id, result } => {
                out.extend_from_slice(&id.to_be_bytes());
                match result {
                    Ok(d) => {
                        out.push(1);
                        out.extend_from_slice(d);
                    }
                    Err(why) => {
                        out.push(0);
                        put_text(out, clip(why));
                    }
                }
                DONE
            }
            Message::Fatal(why) => {
                put_text(out, clip(why));
                FATAL
            }
            Message::Bye => BYE,
        };
        let len = (out.len() - start - 5) as u32;
        out[start] = tag;
        out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
    }

    /// Decode one message body.
    pub fn decode(tag: u8, body: &[u8]) -> Result<Message, FramingError> {
        let mut r = Reader { buf: body, tag };
        let m = match tag {
            HELLO => {
                let resume = r.u8()? != 0;
                let log2 = r.u8()?;
                if log2 as u32 != CHUNK_SIZE.trailing_zeros() {
                    return Err(FramingError::ChunkSize(log2));
                }
                let entries = r.u64()?;
                if entries > MAX_ENTRIES {
                    return Err(FramingError::TooManyEntries(entries));
                }
                Message::Hello { resume, entries }
            }
            ENTRY => {
                let kind = r.u8()?;
                let mode = r.u32()? & 0o7777;
                let mtime = (r.u64()? as i64, r.u32()?.min(999_999_999));
                let size = r.u64()?;
                let path = r.text()?;
                check_relative(&path)?;
                let target = r.text()?;
                let kind = match kind {
                    0 => Kind::File { size },
                    1 => Kind::Dir,
                    2 if target.is_empty() => {
                        return Err(FramingError::EmptyTarget(Printable::from(path.as_str())))
                    }
                    2 => Kind::Symlink { target },
                    k => return Err(FramingError::Kind(k)),
                };
                Message::Entry(Entry {
                    path,
                    kind,
                    mode,
                    mtime,
                })
            }
            MANIFEST_END => Message::ManifestEnd,
            FILE => Message::File {
                id: r.u32()?,
                from_chunk: r.u64()?,
            },
            END => Message::End,
            KEEPALIVE => Message::Keepalive,
            PLAN => {
                let id = r.u32()?;
                let action = match r.u8()? {
                    0 => Action::Send {
                        from_chunk: r.u64()?,
                        prefix: r.digest()?,
                    },
                    1 => Action::Skip(r.text()?),
                    2 => Action::Refuse(r.text()?),
                    k => return Err(FramingError::Kind(k)),
                };
                Message::Plan { id, action }
            }
            PLAN_END => Message::PlanEnd,
            DONE => {
                let id = r.u32()?;
                let result = match r.u8()? {
                    1 => Ok(r.digest()?),
                    _ => Err(r.text()?),
                };
                Message::Done { id, result }
            }
            FATAL => Message::Fatal(r.text()?),
            BYE => Message::Bye,
            t => return Err(FramingError::UnknownTag(t)),
        };
        if !r.buf.is_empty() {
            return Err(FramingError::Trailing(r.buf.len(), tag));
        }
        Ok(m)
    }
}

fn clip(s: &str) -> &str {
    let mut end = s.len().min(MAX_REASON);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn put_text(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

struct Reader<'a> {
    buf: &'a [u8],
    tag: u8,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], FramingError> {
        if self.buf.len() < n {
            return Err(FramingError::Truncated { tag: self.tag });
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, FramingError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, FramingError> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn u64(&mut self) -> Result<u64, FramingError> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().expect("8")))
    }
    fn digest(&mut self) -> Result<[u8; DIGEST_LEN], FramingError> {
        Ok(self.take(DIGEST_LEN)?.try_into().expect("32"))
    }
    fn text(&mut self) -> Result<String, FramingError> {
        let n = u16::from_be_bytes(self.take(2)?.try_into().expect("2")) as usize;
        std::str::from_utf8(self.take(n)?)
            .map(str::to_string)
            .map_err(|_| FramingError::Encoding)
    }
}

/// Splits a stream into messages, and hands out raw bytes when the caller expects them (a
/// file's body after its `FILE` message).
#[derive(Default)]
pub struct MessageReader {
    buf: Vec<u8>,
    magic_seen: bool,
}

impl MessageReader {
    /// Take bytes from the stream.
    pub fn push(&mut self, input: &[u8]) {
        self.buf.extend_from_slice(input);
    }

    /// The next whole message, if one has arrived.
    pub fn next_message(&mut self) -> Result<Option<Message>, FramingError> {
        if !self.magic_seen {
            let n = self.buf.len().min(MAGIC.len());
            if self.buf[..n] != MAGIC[..n] {
                let named = n.min(MAGIC_NAME.len());
                return Err(if n == MAGIC.len() && self.buf[..named] == MAGIC_NAME[..] {
                    FramingError::Version(self.buf[named])
                } else {
                    FramingError::Magic
                });
            }
            if n < MAGIC.len() {
                return Ok(None);
            }
            self.buf.drain(..MAGIC.len());
            self.magic_seen = true;
        }
        if self.buf.len() < 5 {
            return Ok(None);
        }
        let len = u32::from_be_bytes(self.buf[1..5].try_into().expect("4")) as usize;
        if len > MAX_MESSAGE {
            return Err(FramingError::TooLong(len));
        }
        if self.buf.len() < 5 + len {
            return Ok(None);
        }
        let m = Message::decode(self.buf[0], &self.buf[5..5 + len]);
        self.buf.drain(..5 + len);
        m.map(Some)
    }

    /// Up to `max` raw bytes already buffered (file data that arrived with messages).
    pub fn take_raw(&mut self, max: usize) -> Vec<u8> {
        let n = max.min(self.buf.len());
        self.buf.drain(..n).collect()
    }

    /// Bytes buffered and not yet consumed.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

/// A magic's version byte as the user knows it: "2" for `LHT2`, else its value.
fn version_name(v: u8) -> String {
    if v.is_ascii_digit() {
        (v as char).to_string()
    } else {
        format!("{v:#04x}")
    }
}

/// Lowercase hex, as `b3sum` and `sha256sum` print.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn all_messages() -> Vec<Message> {
        vec![
            Message::Hello {
                resume: true,
                entries: 3,
            },
            Message::Entry(Entry {
                path: "dir/a.h5".into(),
                kind: Kind::File { size: 1 << 40 },
                mode: 0o640,
                mtime: (1_700_000_000, 123),
            }),
            Message::Entry(Entry {
                path: "dir".into(),
                kind: Kind::Dir,
                mode: 0o755,
                mtime: (-5, 0),
            }),
            Message::Entry(Entry {
                path: "dir/l".into(),
                kind: Kind::Symlink {
                    target: "a.h5".into(),
                },
                mode: 0o777,
                mtime: (0, 0),
            }),
            Message::ManifestEnd,
            Message::File {
                id: 7,
                from_chunk: 9,
            },
            Message::End,
            Message::Keepalive,
            Message::Plan {
                id: 1,
                action: Action::Send {
                    from_chunk: 3,
                    prefix: [5; 32],
                },
            },
            Message::Plan {
                id: 2,
                action: Action::Skip("already there".into()),
            },
            Message::Plan {
                id: 3,
                action: Action::Refuse("exists".into()),
            },
            Message::PlanEnd,
            Message::Done {
                id: 1,
                result: Ok([9; 32]),
            },
            Message::Done {
                id: 2,
                result: Err("disk".into()),
            },
            Message::Fatal("full".into()),
            Message::Bye,
        ]
    }

    #[test]
    fn every_message_round_trips_through_a_stream_fed_one_byte_at_a_time() {
        let mut stream = MAGIC.to_vec();
        for m in all_messages() {
            m.encode(&mut stream);
        }
        let mut r = MessageReader::default();
        let mut got = Vec::new();
        for b in stream {
            r.push(&[b]);
            while let Some(m) = r.next_message().unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got, all_messages());
    }

    #[test]
    fn hostile_bytes_are_errors_not_panics() {
        let mut r = MessageReader::default();
        r.push(b"GET / HTTP/1.1");
        assert_eq!(r.next_message(), Err(FramingError::Magic));

        let mut r = MessageReader::default();
        r.push(MAGIC);
        r.push(&[ENTRY, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(
            r.next_message(),
            Err(FramingError::TooLong(u32::MAX as usize))
        );

        let mut bad = Vec::new();
        Message::Entry(Entry {
            path: "../../etc/passwd".into(),
            kind: Kind::File { size: 1 },
            mode: 0,
            mtime: (0, 0),
        })
        .encode(&mut bad);
        assert!(matches!(
            Message::decode(bad[0], &bad[5..]),
            Err(FramingError::Path(_))
        ));
        // Every truncation of every message fails cleanly.
        for m in all_messages() {
            let mut e = Vec::new();
            m.encode(&mut e);
            for cut in 5..e.len() {
                assert!(
                    Message::decode(e[0], &e[5..cut]).is_err(),
                    "{m:?} cut {cut}"
                );
            }
        }
    }

    /// A peer of an older protocol (3: SHA-256 over the chunk list; 2: SHA-256 of the bytes)
    /// is told the versions differ, in whatever pieces its magic arrives; other bytes are not
    /// a longhaul transfer at all.
    #[test]
    fn a_peer_of_another_version_gets_a_clear_error_not_a_digest_mismatch() {
        for (magic, cut) in [b"LHT2", b"LHT3"]
            .into_iter()
            .flat_map(|m| (1..=4).map(move |c| (m, c)))
        {
            let mut old = magic.to_vec();
            Message::Hello {
                resume: true,
                entries: 1,
            }
            .encode(&mut old);
            let mut r = MessageReader::default();
            let mut got = Ok(None);
            for piece in old.chunks(cut) {
                r.push(piece);
                got = r.next_message();
                if got.is_err() {
                    break;
                }
            }
            assert_eq!(got, Err(FramingError::Version(magic[3])), "cut {cut}");
        }
        let msg = FramingError::Version(b'3').to_string();
        assert!(
            msg.contains("protocol 3 and this build 4") && msg.contains("same longhaul release"),
            "{msg}"
        );
        assert!(FramingError::Version(0xff).to_string().contains("0xff"));
        for other in [&b"LHX4"[..], b"XHT4", b"lht4"] {
            let mut r = MessageReader::default();
            r.push(other);
            assert_eq!(r.next_message(), Err(FramingError::Magic), "{other:?}");
        }
    }

    #[test]
    fn reasons_are_clipped_at_a_character_boundary() {
        let mut e = Vec::new();
        Message::Fatal("é".repeat(MAX_REASON)).encode(&mut e);
        match Message::decode(e[0], &e[5..]).unwrap() {
            Message::Fatal(s) => assert!(s.len() <= MAX_REASON && s.chars().all(|c| c == 'é')),
            m => panic!("{m:?}"),
        }
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

        /// A peer's arbitrary bytes, after a valid magic, in arbitrary pieces: errors or
        /// messages, never a panic, and never more buffered than what was fed.
        #[test]
        fn arbitrary_streams_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096),
                                         cut in 1usize..512) {
            let mut r = MessageReader::default();
            r.push(MAGIC);
            for piece in bytes.chunks(cut) {
                r.push(piece);
                while let Ok(Some(_)) = r.next_message() {}
                prop_assert!(r.buffered() <= bytes.len());
            }
        }

        /// Arbitrary first bytes (a magic of any version, or none) in arbitrary pieces: an
        /// error or a wait for more, never a panic.
        #[test]
        fn arbitrary_magics_never_panic(head in proptest::collection::vec(any::<u8>(), 0..12),
                                        keep in 0usize..4, cut in 1usize..6) {
            let mut bytes = MAGIC[..keep].to_vec();
            bytes.extend_from_slice(&head);
            let mut r = MessageReader::default();
            for piece in bytes.chunks(cut) {
                r.push(piece);
                if r.next_message().is_err() {
                    break;
                }
            }
        }

        /// Every body decodes to a message or an error, for every tag.
        #[test]
        fn arbitrary_bodies_never_panic(tag in any::<u8>(),
                                        body in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = Message::decode(tag, &body);
        }

        /// Valid messages with one byte changed still decode without a panic.
        #[test]
        fn mutated_messages_never_panic(which in 0usize..16, at in any::<usize>(), bit in 0u8..8) {
            let all = tests_support::all();
            let m = &all[which % all.len()];
            let mut e = Vec::new();
            m.encode(&mut e);
            let i = at % e.len();
            e[i] ^= 1 << bit;
            let len = u32::from_be_bytes(e[1..5].try_into().unwrap()) as usize;
            if len <= MAX_MESSAGE && 5 + len <= e.len() {
                let _ = Message::decode(e[0], &e[5..5 + len]);
            }
        }
    }

    mod tests_support {
        pub fn all() -> Vec<super::Message> {
            super::super::tests::all_messages()
        }
    }
}
