//! A file's digest as both ends compute it: SHA-256 over the SHA-256 digests of its 1 MiB
//! chunks, in order (a hash list, as BitTorrent's per-piece hashes are).
//!
//! Why not SHA-256 of the bytes: the receiver needs each chunk's digest anyway, for its resume
//! journal (`journal`), and the SHA-256 of the whole file was a second pass over every byte —
//! with the sender's pass, a third of a loopback transfer's CPU went to hashing
//! (bench/README.md, "Where a loopback transfer's time goes"). Built from the chunk digests,
//! the file's digest costs one SHA-256 pass per end and 32 bytes per MiB more. The journal's
//! resume summary is the same construction over the chunks it holds ([`list_digest`]), so the
//! sender's check of a resume point and the final check share their arithmetic.
//!
//! It is as strong a check as SHA-256 of the bytes: two files with the same list digest have
//! the same list of chunk digests (or SHA-256 collides on the lists), hence the same chunks (or
//! SHA-256 collides on a chunk); chunks start at fixed offsets and the size is announced in the
//! manifest, so the files are the same. A file of no bytes has no chunks, and its digest is
//! SHA-256 of nothing, as `sha256sum` prints for an empty file. With coreutils:
//!
//! ```text
//! split -b 1M --filter='sha256sum | head -c 64 | xxd -r -p' FILE | sha256sum
//! ```

use crate::framing::{CHUNK_SIZE, DIGEST_LEN};
use sha2::{Digest, Sha256};

/// SHA-256 of one chunk's bytes.
pub fn chunk_digest(bytes: &[u8]) -> [u8; DIGEST_LEN] {
    Sha256::digest(bytes).into()
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
    /// SHA-256 over the digests of the whole chunks so far.
    list: Sha256,
    chunks: u64,
    /// The chunk in progress, and its bytes so far (less than [`CHUNK_SIZE`]).
    chunk: Sha256,
    filled: u64,
}

impl FileHasher {
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
        self.list.clone().finalize().into()
    }

    fn close_chunk(&mut self) -> [u8; DIGEST_LEN] {
        let d = std::mem::take(&mut self.chunk).finalize().into();
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

    /// The definition, written out: SHA-256 of the concatenated SHA-256 of each 1 MiB piece.
    fn by_definition(data: &[u8]) -> [u8; 32] {
        let mut list = Vec::new();
        for c in data.chunks(CHUNK_SIZE as usize) {
            list.extend_from_slice(&Sha256::digest(c));
        }
        Sha256::digest(&list).into()
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

    /// Nothing hashed is SHA-256 of nothing, which is what `sha256sum` prints for an empty file.
    #[test]
    fn an_empty_file_digests_as_sha256_of_nothing() {
        let mut h = FileHasher::new();
        assert_eq!(h.end(), None);
        assert_eq!(h.digest(), <[u8; 32]>::from(Sha256::digest(b"")));
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

    /// The coreutils command in this module's documentation prints the same digest (where
    /// `split`, `xxd` and `sha256sum` are installed).
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
                    "command -v split && command -v xxd && command -v sha256sum || exit 99
                     split -b 1M --filter='sha256sum | head -c 64 | xxd -r -p' \"$0\" \
                       | sha256sum >&2",
                )
                .arg(&path)
                .output();
            let Some(out) = out.ok().filter(|o| o.status.success()) else {
                eprintln!("skipped: split, xxd or sha256sum missing");
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
