//! `longhaul tune`: host tuning for one long fat path.
//!
//! The Land Speed Record FAQ (seed 004) lists what it took to move 923 Mb/s in a single stock-Linux
//! TCP stream from Sunnyvale to Amsterdam: windows as large as the bandwidth-delay product ("to
//! approach 1Gbits/s we require 40MByte windows"), a large `txqueuelen` on the sending host, and
//! jumbo frames, because Reno's recovery after a loss "goes as the MTU/RTT^2". ESnet's fasterdata
//! pages are the current form of the same advice: socket buffer maxima
//! sized from the BDP (`net.core.rmem_max/wmem_max`, `net.ipv4.tcp_rmem/wmem`), `txqueuelen 10000`
//! for 10G NICs, `fq` for pacing, `tcp_mtu_probing = 1`, and CUBIC or BBR rather than Reno.
//!
//! * [`bdp`]: the arithmetic (BDP, buffer sizes, Reno's ramp time) as pure functions;
//! * [`host`]: reading the running host's values from `/proc/sys` and `/sys/class/net` (roots are
//!   parameters, so tests read a fake tree);
//! * [`advice`]: the checks — current, recommended, status, and the exact command that fixes each;
//! * [`apply`]: writing the fixes (root), reporting each value before and after.

pub mod advice;
pub mod apply;
pub mod bdp;
pub mod host;

pub use advice::{check_host, Check, Status, Target, TuneReport};
pub use apply::{apply_fixes, Applied};
pub use bdp::PathSpec;
pub use host::HostRoots;

/// What can go wrong reading or writing the host's settings.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// A setting's file could not be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// The OS error.
        error: std::io::Error,
    },
    /// A setting's file could not be written.
    #[error("cannot write {path}: {error}{hint}")]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// The OS error.
        error: std::io::Error,
        /// What to do about it (run as root; the kernel lacks the setting), or empty.
        hint: &'static str,
    },
    /// A setting's file holds something other than the expected value.
    #[error("{path} holds `{text}`, which is not {expected}")]
    Parse {
        /// The file.
        path: std::path::PathBuf,
        /// What it holds.
        text: String,
        /// What was expected (`a non-negative integer`).
        expected: &'static str,
    },
    /// A sysctl or interface name that could leave `/proc/sys` or `/sys/class/net`, or an
    /// interface that does not exist.
    #[error("invalid path: {0}")]
    InvalidPath(String),
}
