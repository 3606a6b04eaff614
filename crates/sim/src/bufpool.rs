//! Reusable byte buffers for transports whose packets are real bytes (proto's headers): a
//! packet holds a slot index, and slots return to a free list on delivery or drop, so after
//! warm-up no packet allocates.
//!
//! Most packets are small (a synthetic data packet is a 29-byte header; an ACK with a few
//! ranges under 100 bytes), so slots of `SLOT` bytes live in one flat array — one cache line
//! each, no pointer to chase — and only larger packets use a pool of growable buffers (their
//! index has the top bit set). With 10^4–10^5 packets in flight, each packet's bytes are written
//! once and read once an RTT later; a flat slot is one cache miss instead of two.

const SLOT: usize = 64;
const BIG: u32 = 1 << 31;

#[derive(Debug, Default)]
pub struct BufPool {
    small: Vec<[u8; SLOT]>,
    small_len: Vec<u8>,
    small_free: Vec<u32>,
    big: Vec<Vec<u8>>,
    big_free: Vec<u32>,
}

impl BufPool {
    /// Copy `bytes` into a free slot and return its index.
    pub fn put(&mut self, bytes: &[u8]) -> u32 {
        if bytes.len() <= SLOT {
            let i = match self.small_free.pop() {
                Some(i) => i,
                None => {
                    self.small.push([0; SLOT]);
                    self.small_len.push(0);
                    (self.small.len() - 1) as u32
                }
            };
            self.small[i as usize][..bytes.len()].copy_from_slice(bytes);
            self.small_len[i as usize] = bytes.len() as u8;
            i
        } else {
            let i = match self.big_free.pop() {
                Some(i) => {
                    let s = &mut self.big[i as usize];
                    s.clear();
                    s.extend_from_slice(bytes);
                    i
                }
                None => {
                    self.big.push(bytes.to_vec());
                    (self.big.len() - 1) as u32
                }
            };
            i | BIG
        }
    }

    /// Copy slot `i`'s bytes into a free slot (for a packet the link duplicated).
    pub fn copy(&mut self, i: u32) -> u32 {
        let bytes = self.get(i).to_vec();
        self.put(&bytes)
    }

    pub fn get(&self, i: u32) -> &[u8] {
        if i & BIG != 0 {
            &self.big[(i & !BIG) as usize]
        } else {
            &self.small[i as usize][..self.small_len[i as usize] as usize]
        }
    }

    pub fn release(&mut self, i: u32) {
        if i & BIG != 0 {
            self.big_free.push(i & !BIG);
        } else {
            self.small_free.push(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_big_slots_round_trip_and_are_reused() {
        let mut p = BufPool::default();
        let a = p.put(&[1, 2, 3]);
        let big: Vec<u8> = (0..200).map(|i| i as u8).collect();
        let b = p.put(&big);
        assert_eq!(p.get(a), &[1, 2, 3]);
        assert_eq!(p.get(b), big.as_slice());
        p.release(a);
        p.release(b);
        assert_eq!(p.put(&[9; 64]), a, "a freed small slot is reused");
        assert_eq!(p.put(&[7; 65]), b, "a freed big slot is reused");
        assert_eq!(p.get(a), &[9; 64]);
    }

    #[test]
    fn a_copy_has_the_same_bytes_in_a_slot_of_its_own() {
        let mut p = BufPool::default();
        let big: Vec<u8> = (0..200).map(|i| i as u8).collect();
        for bytes in [&[1u8, 2, 3][..], &big] {
            let a = p.put(bytes);
            let c = p.copy(a);
            assert_ne!(a, c);
            p.release(a);
            assert_eq!(p.get(c), bytes, "the copy outlives the original");
        }
    }
}
