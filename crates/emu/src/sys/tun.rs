//! TUN devices (Linux `Documentation/networking/tuntap.rst`).
//!
//! `IFF_TUN | IFF_NO_PI`: each read returns one bare IP packet, each write injects one. The
//! device is created in the network namespace of the thread that opens `/dev/net/tun`, and is
//! not persistent: it disappears when its last fd closes, so a killed emulator leaves no TUN
//! behind (only the namespaces, which `state` cleans up).

use super::SysError;
use std::fs::OpenOptions;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// An open TUN device.
#[derive(Debug)]
pub struct Tun {
    pub fd: OwnedFd,
    pub name: String,
}

impl Tun {
    /// Creates TUN `name` in the calling thread's namespace, non-blocking.
    pub fn create(name: &str) -> Result<Tun, SysError> {
        if name.len() >= libc::IFNAMSIZ {
            return Err(SysError::io(
                format!("device name {name}"),
                std::io::Error::other("longer than 15 bytes"),
            ));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/net/tun")
            .map_err(|e| {
                SysError::io(
                    "opening /dev/net/tun (is the tun module loaded? try `modprobe tun`)",
                    e,
                )
            })?;
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: IFF_TUN | IFF_NO_PI,
            _pad: [0; 22],
        };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads and writes a struct ifreq, which IfReq mirrors (40 bytes).
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF, &mut req) };
        if rc < 0 {
            return Err(SysError::io(
                format!("creating TUN device {name}"),
                std::io::Error::last_os_error(),
            ));
        }
        Ok(Tun {
            fd: file.into(),
            name: name.to_string(),
        })
    }
}

/// Reads one packet; `Ok(None)` when none is waiting.
#[inline]
pub fn read_packet(fd: i32, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
    // SAFETY: buf is valid for buf.len() bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n >= 0 {
        return Ok(Some(n as usize));
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(None),
        _ => Err(e),
    }
}

/// Writes one packet.
#[inline]
pub fn write_packet(fd: i32, pkt: &[u8]) -> std::io::Result<()> {
    // SAFETY: pkt is valid for pkt.len() bytes.
    let n = unsafe { libc::write(fd, pkt.as_ptr().cast(), pkt.len()) };
    if n >= 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
