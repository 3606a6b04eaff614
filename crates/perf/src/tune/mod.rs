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
    #[error("cannot read {path}: {error}")]
    Read {
        path: std::path::PathBuf,
        error: std::io::Error,
    },
    #[error("cannot write {path}: {error}{hint}")]
    Write {
        path: std::path::PathBuf,
        error: std::io::Error,
        hint: &'static str,
    },
    #[error("{path} holds `{text}`, which is not {expected}")]
    Parse {
        path: std::path::PathBuf,
        text: String,
        expected: &'static str,
    },
    #[error("invalid path: {0}")]
    InvalidPath(String),
}
