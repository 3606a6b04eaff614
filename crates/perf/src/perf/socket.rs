//! Socket options for perf's data connections: congestion control and buffer sizes.
//!
//! Linux doubles a requested `SO_SNDBUF`/`SO_RCVBUF` (the extra half is bookkeeping overhead,
//! socket(7)) and caps the request at `net.core.wmem_max`/`rmem_max`; iperf prints the granted size
//! next to the request ("TCP window size: 48.0 MByte (WARNING: requested 32.0 MByte)", seed 004),
//! and so do we. A buffer set by hand also switches off the kernel's autotuning for that socket.

use socket2::Socket;
use std::io;

/// Where the kernel lists the congestion controls it has.
pub const AVAILABLE_CC: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// Why a congestion control could not be set.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot use congestion control `{name}`: {reason}. This kernel has: {available} \
     ({AVAILABLE_CC}); `longhaul kernel load {name}` registers longhaul's eBPF ones{hint}"
)]
pub struct CongestionError {
    /// The congestion control asked for.
    pub name: String,
    /// The error `setsockopt(TCP_CONGESTION)` returned.
    pub error: io::Error,
    /// The error in words (ENOENT means the kernel has no algorithm of that name).
    pub reason: String,
    /// What the kernel offers ([`AVAILABLE_CC`]), space-separated.
    pub available: String,
    /// A hint for a permission error (non-root callers are limited to
    /// `tcp_allowed_congestion_control`); empty otherwise.
    pub hint: &'static str,
}

/// The kernel's available congestion controls, space-separated (or why they are unknown).
pub fn available_congestion_controls() -> String {
    std::fs::read_to_string(AVAILABLE_CC)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|e| format!("(cannot read: {e})"))
}

/// Set `TCP_CONGESTION`, with an error that lists the alternatives.
pub fn set_congestion(sock: &Socket, name: &str) -> Result<(), CongestionError> {
    sock.set_tcp_congestion(name.as_bytes()).map_err(|source| {
        let hint = if source.raw_os_error() == Some(libc::EPERM) {
            "; without root only net.ipv4.tcp_allowed_congestion_control may be used"
        } else {
            ""
        };
        let reason = match source.raw_os_error() {
            Some(libc::ENOENT) => "this kernel has no congestion control of that name".to_string(),
            _ => source.to_string(),
        };
        CongestionError {
            reason,
            name: name.to_string(),
            error: source,
            available: available_congestion_controls(),
            hint,
        }
    })
}

/// The congestion control a socket actually uses.
pub fn congestion(sock: &Socket) -> io::Result<String> {
    let raw = sock.tcp_congestion()?;
    Ok(String::from_utf8_lossy(&raw)
        .trim_end_matches('\0')
        .to_string())
}

/// A buffer request and what the kernel granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferSize {
    /// The size asked for, bytes (`None`: none requested).
    pub requested: Option<u64>,
    /// The size the kernel reports now, bytes (twice a request, capped by `wmem_max`/`rmem_max`).
    pub granted: u64,
}

/// Request a send buffer of `window` bytes (if given) and read back what was granted.
pub fn set_send_buffer(sock: &Socket, window: Option<u64>) -> io::Result<BufferSize> {
    if let Some(w) = window {
        sock.set_send_buffer_size(w as usize)?;
    }
    Ok(BufferSize {
        requested: window,
        granted: sock.send_buffer_size()? as u64,
    })
}

/// Request a receive buffer of `window` bytes (if given) and read back what was granted.
pub fn set_recv_buffer(sock: &Socket, window: Option<u64>) -> io::Result<BufferSize> {
    if let Some(w) = window {
        sock.set_recv_buffer_size(w as usize)?;
    }
    Ok(BufferSize {
        requested: window,
        granted: sock.recv_buffer_size()? as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use socket2::{Domain, Protocol, Type};

    #[test]
    fn linux_grants_twice_the_requested_buffer() {
        let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP)).unwrap();
        // 64 KiB is below every default wmem_max (212992), so the kernel doubles it exactly.
        let b = set_send_buffer(&s, Some(65536)).unwrap();
        assert_eq!(
            b,
            BufferSize {
                requested: Some(65536),
                granted: 131072
            }
        );
    }

    #[test]
    fn unknown_congestion_control_lists_the_alternatives() {
        let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP)).unwrap();
        let e = set_congestion(&s, "nosuchcc").unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("cannot use congestion control `nosuchcc`"),
            "{text}"
        );
        assert!(text.contains("reno"), "{text}"); // always built in
        assert!(text.contains("longhaul kernel load nosuchcc"), "{text}");
        set_congestion(&s, "reno").unwrap();
        assert_eq!(congestion(&s).unwrap(), "reno");
    }
}
