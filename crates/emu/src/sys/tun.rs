//! TUN devices (Linux `Documentation/networking/tuntap.rst`).
//!
//! `IFF_TUN | IFF_NO_PI`: each read returns one bare IP packet, each write injects one. With
//! offloads (`IFF_VNET_HDR`, then `TUNSETVNETHDRSZ` 10 and `TUNSETOFFLOAD` with checksum, TCP
//! segmentation offload for IPv4 and IPv6, ECN included, and UDP segmentation offload where the
//! kernel has it, 6.2+) every packet is preceded by a `virtio_net_hdr` and may be a TCP or UDP
//! super-packet of up to 64 KB (`crate::gso`). The device is created in the network namespace
//! of the thread that opens `/dev/net/tun`, and is
//! not persistent: it disappears when its last fd closes, so a killed emulator leaves no TUN
//! behind (only the namespaces, which `state` cleans up).

use super::SysError;
use std::fs::OpenOptions;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const TUNSETVNETHDRSZ: libc::c_ulong = 0x4004_54d8;
const TUN_F_CSUM: libc::c_uint = 0x01;
const TUN_F_TSO4: libc::c_uint = 0x02;
const TUN_F_TSO6: libc::c_uint = 0x04;
const TUN_F_TSO_ECN: libc::c_uint = 0x08;
/// UDP segmentation offload (Linux 6.2+).
const TUN_F_USO4: libc::c_uint = 0x20;
const TUN_F_USO6: libc::c_uint = 0x40;

/// Largest frame a TUN with offloads hands over: a 64 KB IP packet behind its virtio header.
pub const MAX_OFFLOAD_FRAME: usize = crate::gso::VNET_HDR_LEN + 65_535;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// An open TUN device.
#[derive(Debug)]
pub struct Tun {
    /// The open `/dev/net/tun` descriptor bound to the device.
    pub fd: OwnedFd,
    /// The device's name.
    pub name: String,
    /// Reads and writes carry a `virtio_net_hdr`, and TCP may arrive as super-packets.
    pub offload: bool,
}

impl Tun {
    /// Creates TUN `name` in the calling thread's namespace, non-blocking; with `offload`, with
    /// a virtio header on every packet and checksum and TCP segmentation offload enabled.
    pub fn create(name: &str, offload: bool) -> Result<Tun, SysError> {
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
            flags: IFF_TUN | IFF_NO_PI | if offload { IFF_VNET_HDR } else { 0 },
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
        if offload {
            let fd = file.as_raw_fd();
            let size = crate::gso::VNET_HDR_LEN as libc::c_int;
            // SAFETY: TUNSETVNETHDRSZ reads an int through the pointer.
            let rc = unsafe { libc::ioctl(fd, TUNSETVNETHDRSZ, &size) };
            let tso = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
            // SAFETY: TUNSETOFFLOAD takes the flags as the argument value itself.
            let set = |flags: libc::c_uint| unsafe {
                libc::ioctl(fd, TUNSETOFFLOAD, flags as libc::c_ulong)
            };
            // UDP super-packets too where the kernel knows them (EINVAL before 6.2: TSO only).
            let rc = if rc == 0 {
                match set(tso | TUN_F_USO4 | TUN_F_USO6) {
                    0 => 0,
                    _ if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) => {
                        set(tso)
                    }
                    e => e,
                }
            } else {
                rc
            };
            if rc < 0 {
                return Err(SysError::io(
                    format!(
                        "enabling offloads on TUN device {name} (run with offloads off: \
                         --no-offload)"
                    ),
                    std::io::Error::last_os_error(),
                ));
            }
        }
        Ok(Tun {
            fd: file.into(),
            name: name.to_string(),
            offload,
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
