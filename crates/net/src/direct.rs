//! Moving file bytes around the page cache: aligned storage, `O_DIRECT` switched on and off on
//! an open file, and asking the kernel which bytes of a file are cached.
//!
//! A bulk transfer touches each byte of a file once. Through the page cache that costs a page
//! allocation, its bookkeeping and a copy per 4 KiB, and it evicts what the host's other work
//! had cached: on the development VM, reading a 3 GiB file that was not cached took 4.2 s of
//! system time through the cache against 0.27 s with `O_DIRECT` (`dd`, bench/README.md), and
//! writing one 3.0–8.9 s against 0.4 s. So the receiver writes with `O_DIRECT` (`part`) and
//! the sender reads with it whatever is not cached already (`feed`); what is cached is read
//! from the cache, which is only a copy.
//!
//! Direct I/O needs the buffer, the file offset and the length aligned to the device's logical
//! block ([`ALIGN`]); a read may ask for more than is left (it stops at the end of the file).
//! File systems without it (tmpfs, some network file systems) refuse it, and the bytes go
//! through the cache as before.

use bytemuck::{Pod, Zeroable};
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use std::fs::File;
use std::os::fd::AsRawFd;

/// Alignment of direct I/O's buffers, offsets and lengths: the largest logical block size in
/// common use (512 and 4096 are).
pub const ALIGN: usize = 4096;

/// One aligned block.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(4096))]
struct Block([u8; ALIGN]);

/// Zeroed storage whose start is [`ALIGN`]-aligned, a whole number of blocks long.
pub struct AlignedBuf {
    blocks: Vec<Block>,
}

impl AlignedBuf {
    /// At least `len` bytes (rounded up to whole blocks).
    pub fn new(len: usize) -> AlignedBuf {
        AlignedBuf {
            blocks: vec![Block([0; ALIGN]); len.div_ceil(ALIGN)],
        }
    }

    /// The buffer's bytes.
    pub fn as_slice(&self) -> &[u8] {
        bytemuck::cast_slice(&self.blocks)
    }

    /// The buffer's bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(&mut self.blocks)
    }
}

/// Whether `x` (an offset, a length or an address) suits direct I/O.
pub fn aligned(x: u64) -> bool {
    x % ALIGN as u64 == 0
}

/// Set or clear `O_DIRECT` on `file`; false if the file system refused (or on any error).
pub fn set_direct(file: &File, on: bool) -> bool {
    let Ok(bits) = fcntl(file.as_raw_fd(), FcntlArg::F_GETFL) else {
        return false;
    };
    let mut flags = OFlag::from_bits_truncate(bits);
    flags.set(OFlag::O_DIRECT, on);
    fcntl(file.as_raw_fd(), FcntlArg::F_SETFL(flags)).is_ok()
}

/// Whether every page of `len` bytes of `file` at `offset` is in the page cache, by the
/// `cachestat` system call (Linux ≥ 6.5), which reads the cache's state without touching it;
/// `None` where the kernel cannot say.
pub fn all_cached(file: &File, offset: u64, len: u64) -> Option<bool> {
    /// `cachestat`'s number: new system calls share one number on every architecture.
    const SYS_CACHESTAT: libc::c_long = 451;
    /// include/uapi/linux/mman.h, `struct cachestat_range`.
    #[repr(C)]
    struct Range {
        off: u64,
        len: u64,
    }
    /// include/uapi/linux/mman.h, `struct cachestat`.
    #[repr(C)]
    #[derive(Default)]
    struct Stat {
        nr_cache: u64,
        nr_dirty: u64,
        nr_writeback: u64,
        nr_evicted: u64,
        nr_recently_evicted: u64,
    }
    if len == 0 {
        return Some(true);
    }
    let range = Range { off: offset, len };
    let mut stat = Stat::default();
    // SAFETY: both pointers are to live values of the layouts the kernel expects; the kernel
    // only writes `stat`.
    let rc = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const Range,
            &mut stat as *mut Stat,
            0u32,
        )
    };
    if rc != 0 {
        return None;
    }
    let page = page_size();
    let pages = (offset + len).div_ceil(page) - offset / page;
    Some(stat.nr_cache >= pages)
}

fn page_size() -> u64 {
    use nix::unistd::{sysconf, SysconfVar};
    match sysconf(SysconfVar::PAGE_SIZE) {
        Ok(Some(p)) if p > 0 => p as u64,
        _ => 4096,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn aligned_storage_starts_on_a_block_and_rounds_up() {
        let mut b = AlignedBuf::new(ALIGN + 1);
        assert_eq!(b.as_slice().len(), 2 * ALIGN);
        assert!(aligned(b.as_mut_slice().as_ptr() as u64));
        assert!(b.as_slice().iter().all(|&x| x == 0));
    }

    /// A file just written is cached; after it is flushed and dropped from the cache it is
    /// not (where the kernel has `cachestat`).
    #[test]
    fn the_cache_state_of_a_file_is_read_without_touching_it() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        let Some(cached) = all_cached(&f, 0, 1 << 20) else {
            eprintln!("NOT asserted: this kernel has no cachestat (Linux < 6.5)");
            return;
        };
        assert!(cached, "a file just written is in the cache");
        f.sync_all().unwrap();
        nix::fcntl::posix_fadvise(
            f.as_raw_fd(),
            0,
            0,
            nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
        )
        .unwrap();
        // tmpfs keeps its pages: they are the file.
        if set_direct(&f, true) {
            assert_eq!(all_cached(&f, 0, 1 << 20), Some(false));
            assert_eq!(all_cached(&f, 0, 0), Some(true), "nothing is all cached");
        }
    }
}
