//! Reusable byte buffers for transports whose packets are real bytes: a packet holds a slot
//! index, and slots return to a free list on delivery or drop, so after warm-up no packet
//! allocates.

#[derive(Debug, Default)]
pub struct BufPool {
    slots: Vec<Vec<u8>>,
    free: Vec<u32>,
}

impl BufPool {
    /// Copy `bytes` into a free slot and return its index.
    pub fn put(&mut self, bytes: &[u8]) -> u32 {
        match self.free.pop() {
            Some(i) => {
                let s = &mut self.slots[i as usize];
                s.clear();
                s.extend_from_slice(bytes);
                i
            }
            None => {
                self.slots.push(bytes.to_vec());
                (self.slots.len() - 1) as u32
            }
        }
    }

    pub fn get(&self, i: u32) -> &[u8] {
        &self.slots[i as usize]
    }

    pub fn release(&mut self, i: u32) {
        self.free.push(i);
    }
}
