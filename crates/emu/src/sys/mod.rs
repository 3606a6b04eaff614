//! Thin wrappers over the kernel interfaces the emulator uses: TUN devices, network namespaces
//! (through `ip(8)`), the monotonic clock with timerfd waits, the termination signals its
//! cleanup waits for, and the state files that let a later run find and remove what a killed
//! run left behind.

pub mod clock;
pub mod netns;
pub mod pidns;
pub mod signals;
pub mod state;
pub mod steal;
pub mod tun;

/// Errors from the system layer.
#[derive(Debug, thiserror::Error)]
pub enum SysError {
    /// The process is not root.
    #[error(
        "the emulator needs root (it creates network namespaces and TUN devices); \
         run it with sudo or as root"
    )]
    NotRoot,
    /// A system call or file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// An `ip` command exited with an error.
    #[error("`ip {args}` failed: {stderr}")]
    Ip {
        /// The arguments `ip` was run with.
        args: String,
        /// What it printed on standard error.
        stderr: String,
    },
    /// `ip` is not installed.
    #[error("`ip` (iproute2) was not found; install it (Debian: apt-get install iproute2)")]
    NoIp,
}

impl SysError {
    /// An [`SysError::Io`] for `what`.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        SysError::Io {
            what: what.into(),
            source,
        }
    }
}

/// Fails with a clear message unless the effective user is root.
pub fn require_root() -> Result<(), SysError> {
    if nix::unistd::geteuid().is_root() {
        Ok(())
    } else {
        Err(SysError::NotRoot)
    }
}
