//! Why the remote receiver could not be started over ssh, or did not end well: each error says
//! what to check.

use super::EXIT_GRACE;
use crate::announce::AnnounceError;
use crate::keys::KeyError;
use std::process::ExitStatus;
use std::time::Duration;
use thiserror::Error;

/// Why the remote receiver could not be started, or did not end well; each message says what
/// to check.
#[derive(Debug, Error)]
pub enum LaunchError {
    /// The ssh command does not split into words.
    #[error("--ssh {command:?}: not a command (unbalanced quotes?)")]
    SshCommand {
        /// The command as given.
        command: String,
    },
    /// No one-time key pair.
    #[error("making the session's one-time key pair")]
    KeyPair(#[source] KeyError),
    /// The ssh program is not there.
    #[error(
        "cannot run {program:?}: not found; install an OpenSSH client, or name the ssh \
         program with --ssh"
    )]
    SshNotFound {
        /// The ssh program.
        program: String,
    },
    /// The ssh program does not start.
    #[error("cannot run {program:?}: {error}")]
    SshSpawn {
        /// The ssh program.
        program: String,
        /// Why.
        error: std::io::Error,
    },
    /// Waiting for ssh failed.
    #[error("waiting for ssh")]
    Wait(#[source] std::io::Error),
    /// The announce line does not read.
    #[error(
        "{label}: {why}; is the remote longhaul ({longhaul}) the same version as this \
         one?{remote}"
    )]
    BadAnnounce {
        /// `longhaul recv on [user@]host`.
        label: String,
        /// What is wrong with the line.
        why: AnnounceError,
        /// Where longhaul is on the far host.
        longhaul: String,
        /// The remote side's last lines.
        remote: String,
    },
    /// The receiver announced itself, then ended before its session.
    #[error(
        "{label} announced port {port} and then ended ({status}) before its session began{remote}"
    )]
    EndedAfterAnnounce {
        /// `longhaul recv on [user@]host`.
        label: String,
        /// The announced port.
        port: u16,
        /// ssh's exit status.
        status: ExitStatus,
        /// The remote side's last lines.
        remote: String,
    },
    /// ssh could not log in.
    #[error(
        "ssh could not log in to {host} (authentication failed): check that \
         `{ssh} {host} true` works with the same options (--ssh){said}"
    )]
    AuthenticationFailed {
        /// `[user@]host`.
        host: String,
        /// The ssh program.
        ssh: String,
        /// The remote side's last lines.
        said: String,
    },
    /// ssh failed otherwise (status 255).
    #[error(
        "ssh to {host} failed (status 255: no connection, or it broke): check that \
         `{ssh} {host} true` works with the same options (--ssh){said}"
    )]
    SshFailed {
        /// `[user@]host`.
        host: String,
        /// The ssh program.
        ssh: String,
        /// The remote side's last lines.
        said: String,
    },
    /// longhaul is not on the far host's PATH (status 127).
    #[error(
        "{longhaul:?} was not found on {host}: install longhaul there, or name its path \
         with --remote-longhaul (a non-interactive ssh session's PATH often lacks \
         ~/.cargo/bin and /usr/local/bin){said}"
    )]
    RemoteNotFound {
        /// Where longhaul was looked for.
        longhaul: String,
        /// `[user@]host`.
        host: String,
        /// The remote side's last lines.
        said: String,
    },
    /// longhaul on the far host does not run (status 126).
    #[error(
        "{longhaul:?} on {host} cannot be run (not executable, or built for another \
         system){said}"
    )]
    RemoteCannotRun {
        /// Where longhaul is.
        longhaul: String,
        /// `[user@]host`.
        host: String,
        /// The remote side's last lines.
        said: String,
    },
    /// longhaul on the far host does not know the launch's options.
    #[error(
        "the longhaul on {host} ({longhaul}) does not know the options of the ssh \
         launch: it is older than this one; install the same version on both hosts{said}"
    )]
    RemoteTooOld {
        /// `[user@]host`.
        host: String,
        /// Where longhaul is.
        longhaul: String,
        /// The remote side's last lines.
        said: String,
    },
    /// The receiver ended before it listened, for another reason.
    #[error("the {label} ended ({status}) before it listened{said}")]
    EndedEarly {
        /// `longhaul recv on [user@]host`.
        label: String,
        /// ssh's exit status.
        status: ExitStatus,
        /// The remote side's last lines.
        said: String,
    },
    /// Stopped (Ctrl-C) during the launch.
    #[error("interrupted while starting the {label}")]
    Interrupted {
        /// `longhaul recv on [user@]host`.
        label: String,
    },
    /// No announce line in time.
    #[error(
        "{label} did not announce its port within {timeout:?} (ssh is still running; a \
         password prompt or a slow login needs a longer --launch-timeout){remote}"
    )]
    Timeout {
        /// `longhaul recv on [user@]host`.
        label: String,
        /// The launch timeout.
        timeout: Duration,
        /// The remote side's last lines.
        remote: String,
    },
    /// The host has no address here for the data.
    #[error(
        "cannot resolve {host} to an address for the data (ssh reached it, perhaps through a \
         proxy that is not used for UDP); {by_hand}"
    )]
    Unresolved {
        /// The host as given.
        host: String,
        /// What to do by hand instead.
        by_hand: &'static str,
    },
    /// After its session, the receiver ended with an error.
    #[error("the {label} ended with {status}; its messages are above (remote: …)")]
    Failed {
        /// `longhaul recv on [user@]host`.
        label: String,
        /// ssh's exit status.
        status: ExitStatus,
    },
    /// After its session, the receiver did not exit and was stopped.
    #[error(
        "the {label} did not exit within {:?} after its session; stopped it",
        EXIT_GRACE
    )]
    NoExit {
        /// `longhaul recv on [user@]host`.
        label: String,
    },
}
