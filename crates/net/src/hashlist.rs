//! A file's digest as both ends compute it: BLAKE3 over the BLAKE3 digests of its 1 MiB
//! chunks, in order (a hash list, as BitTorrent's per-piece hashes are).
//!
//! Why a list: the receiver needs each chunk's digest anyway, for its resume journal
//! (`journal`), and a digest of the whole file's bytes would be a second pass over every byte.
//! Built from the chunk digests, the file's digest costs one pass per end and 32 bytes per MiB
//! more. The journal's resume summary is the same construction over the chunks it holds
//! ([`list_digest`]), so the sender's check of a resume point and the final check share their
//! arithmetic.
//!
//! Why BLAKE3 (transfer protocol 4; protocol 3 used SHA-256 in the same construction): the one
//! pass per end is the largest cost of a fast transfer, and the `blake3` crate hashes 1 MiB
//! chunks several times faster than SHA-256 on one core, also where the CPU has SHA extensions,
//! which cuts the CPU a 10 Gb/s transfer spends per end on the digest (bench/README.md,
//! "BLAKE3 for the file's digest"). BLAKE3 is a cryptographic hash with a 256-bit output: as
//! good a check against corruption, and against a forged file, as SHA-256.
//!
//! It is as strong a check as a digest of the bytes: two files with the same list digest have
//! the same list of chunk digests (or BLAKE3 collides on the lists), hence the same chunks (or
//! BLAKE3 collides on a chunk); chunks start at fixed offsets and the size is announced in the
//! manifest, so the files are the same. A file of no bytes has no chunks, and its digest is
//! BLAKE3 of nothing, as `b3sum` prints for an empty file. With coreutils and `b3sum`:
//!
//! ```text
//! split -b 1M --filter='b3sum --raw' FILE | b3sum
//! ```

use crate::framing::{CHUNK_SIZE, DIGEST_LEN};
use blake3::Hasher;

/// BLAKE3 of one chunk's bytes.
pub fn chunk_digest(bytes: &[u8]) -> [u8; DIGEST_LEN] {
    blake3::hash(bytes).into()
}

/// The digest of a sequence of chunk digests: a whole file's, or a resume prefix's.
pub fn list_digest<'a>(digests: impl Iterator<Item = &'a [u8; DIGEST_LEN]>) -> [u8; DIGEST_LEN] {
    let mut h = FileHasher::new();
    for d in digests {
        h.push_chunk(d);
    }
    h.digest()
}

/// A file's digest, built as its bytes or its chunks' digests arrive, in order.
#[derive(Clone, Default)]
pub struct FileHasher {
    /// BLAKE3 over the digests of the whole chunks so far.
    list: Hasher,
    chunks: u64,
    /// The chunk in progress, and its bytes so far (less than [`CHUNK_SIZE`]).
    chunk: Hasher,
    filled: u64,
}

impl FileHasher {
    /// A hasher that has seen no byte.
    pub fn new() -> FileHasher {
        FileHasher::default()
    }

    /// Hash the next bytes of the file, in pieces of any size; `done` hears each chunk's digest
    /// as the chunk completes.
    pub fn update(&mut self, mut data: &[u8], mut done: impl FnMut([u8; DIGEST_LEN])) {
        while !data.is_empty() {
            let n = ((CHUNK_SIZE - self.filled) as usize).min(data.len());
            self.chunk.update(&data[..n]);
            self.filled += n as u64;
            data = &data[n..];
            if self.filled == CHUNK_SIZE {
                done(self.close_chunk());
            }
        }
    }

    /// The file ends here: the digest of its last, short chunk, if bytes of one arrived.
    pub fn end(&mut self) -> Option<[u8; DIGEST_LEN]> {
        (self.filled > 0).then(|| self.close_chunk())
    }

    /// A whole chunk hashed elsewhere (a resume prefix, read back chunk by chunk).
    pub fn push_chunk(&mut self, digest: &[u8; DIGEST_LEN]) {
        debug_assert_eq!(self.filled, 0, "a chunk is in progress");
        self.list.update(digest);
        self.chunks += 1;
    }

    /// Chunks hashed so far.
    pub fn chunks(&self) -> u64 {
        self.chunks
    }

    /// The digest of the chunks so far (after [`FileHasher::end`], the file's).
    pub fn digest(&self) -> [u8; DIGEST_LEN] {
        self.list.finalize().into()
    }

    fn close_chunk(&mut self) -> [u8; DIGEST_LEN] {
        let d = self.chunk.finalize().into();
        self.chunk.reset();
        self.filled = 0;
        self.push_chunk(&d);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 13 + i / 1021) as u8).collect()
    }

    /// The definition, written out: BLAKE3 of the concatenated BLAKE3 of each 1 MiB piece.
    fn by_definition(data: &[u8]) -> [u8; 32] {
        let mut list = Vec::new();
        for c in data.chunks(CHUNK_SIZE as usize) {
            list.extend_from_slice(blake3::hash(c).as_bytes());
        }
        blake3::hash(&list).into()
    }

    fn hashed_in_pieces(data: &[u8], cut: usize) -> ([u8; 32], Vec<[u8; 32]>) {
        let mut h = FileHasher::new();
        let mut chunks = Vec::new();
        for piece in data.chunks(cut) {
            h.update(piece, |d| chunks.push(d));
        }
        chunks.extend(h.end());
        (h.digest(), chunks)
    }

    /// Any cut of the bytes gives the same chunks and the same digest, the definition's; a
    /// file of whole chunks has no short chunk at its end.
    #[test]
    fn pieces_of_any_size_give_the_definitions_digest() {
        let c = CHUNK_SIZE as usize;
        for len in [1, c - 1, c, c + 1, 3 * c, 3 * c + 12_345] {
            let data = bytes(len);
            let want = by_definition(&data);
            for cut in [7, 65_536, c, c + 3, len] {
                let (got, chunks) = hashed_in_pieces(&data, cut);
                assert_eq!(got, want, "len {len} cut {cut}");
                assert_eq!(chunks.len(), len.div_ceil(c), "len {len} cut {cut}");
                assert_eq!(chunks[0], chunk_digest(&data[..c.min(len)]));
            }
        }
    }

    /// Nothing hashed is BLAKE3 of nothing, which is what `b3sum` prints for an empty file
    /// (its published value, from the BLAKE3 specification's test vectors).
    #[test]
    fn an_empty_file_digests_as_blake3_of_nothing() {
        let mut h = FileHasher::new();
        assert_eq!(h.end(), None);
        assert_eq!(
            crate::framing::hex(&h.digest()),
            "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
        );
        assert_eq!(h.chunks(), 0);
    }

    /// Chunks pushed from elsewhere, then bytes, give the digest of hashing all the bytes; and
    /// the digest of a prefix is `list_digest` of its chunks.
    #[test]
    fn a_resumed_prefix_then_bytes_digest_as_the_whole() {
        let c = CHUNK_SIZE as usize;
        let data = bytes(4 * c + 99);
        let mut h = FileHasher::new();
        let prefix: Vec<[u8; 32]> = data[..2 * c].chunks(c).map(chunk_digest).collect();
        for d in &prefix {
            h.push_chunk(d);
        }
        assert_eq!(h.digest(), list_digest(prefix.iter()));
        h.update(&data[2 * c..], |_| {});
        h.end();
        assert_eq!(h.digest(), by_definition(&data));
    }

    /// The shell command in this module's documentation prints the same digest (where `split`
    /// and `b3sum` are installed: scripts/setup.sh installs both; under `CI=true` a missing one
    /// fails the test).
    #[test]
    fn the_documented_shell_command_agrees() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0, 3 * CHUNK_SIZE as usize + 5] {
            let data = bytes(len);
            let path = dir.path().join("f");
            std::fs::write(&path, &data).unwrap();
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(
                    "command -v split && command -v b3sum || exit 99
                     split -b 1M --filter='b3sum --raw' \"$0\" | b3sum >&2",
                )
                .arg(&path)
                .output();
            let Some(out) = out.ok().filter(|o| o.status.success()) else {
                assert!(
                    std::env::var("CI").as_deref() != Ok("true"),
                    "split or b3sum missing: run scripts/setup.sh"
                );
                eprintln!("skipped: split or b3sum missing (scripts/setup.sh installs them)");
                return;
            };
            let (got, _) = hashed_in_pieces(&data, CHUNK_SIZE as usize);
            let hex: String = got.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(String::from_utf8_lossy(&out.stderr[..64]), hex, "len {len}");
        }
    }

    /// One byte changed anywhere — first chunk, a middle chunk, the short last one — changes
    /// the digest, as do a byte more or less.
    #[test]
    fn any_changed_byte_or_length_changes_the_digest() {
        let c = CHUNK_SIZE as usize;
        let data = bytes(5 * c + 777);
        let (want, _) = hashed_in_pieces(&data, c);
        for at in [0, c - 1, c, 2 * c + 4242, 5 * c + 776] {
            let mut bad = data.clone();
            bad[at] ^= 0x01;
            assert_ne!(hashed_in_pieces(&bad, c).0, want, "byte {at}");
        }
        assert_ne!(hashed_in_pieces(&data[..data.len() - 1], c).0, want);
        let mut longer = data.clone();
        longer.push(0);
        assert_ne!(hashed_in_pieces(&longer, c).0, want);
    }
}
