//! What the transfer tests share: file contents that do not compress.

/// `len` incompressible bytes (xorshift64 from `seed`, which must not be 0), the same for the
/// same seed.
pub fn incompressible(len: usize, seed: u64) -> Vec<u8> {
    let mut data = vec![0u8; len];
    let mut x = seed;
    for chunk in data.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
    data
}
