//! The command-line side of the ssh launch (`longhaul_net::ssh`): `send`'s options for the
//! `[user@]host:DIR` form, and `recv`'s for being started by it — announcing its port and key
//! on standard output (`longhaul_net::announce`); `longhaul_net::ssh::stop_on_eof` stops it
//! when standard input closes.

use crate::cmd::transfer::TransportArgs;
use crate::units::parse_duration;
use anyhow::{Context, Result};
use clap::Args;
use longhaul_net::announce::Announce;
use longhaul_net::keys::PublicKey;
use longhaul_net::ssh::LaunchOptions;
use std::time::Duration;

/// `send`'s options for the `[user@]host:DIR` form.
#[derive(Args, Clone, Default)]
pub struct SshArgs {
    /// The ssh command for the `[user@]host:DIR` form, with its options, as rsync's `-e`: e.g.
    /// `--ssh 'ssh -p 2222 -i /keys/lab'`; split into words as a shell would, without
    /// expanding anything [default: ssh].
    #[arg(long, value_name = "COMMAND")]
    pub ssh: Option<String>,
    /// Where longhaul is on the far host, when not on the PATH of a non-interactive ssh session
    /// (which often lacks ~/.cargo/bin and /usr/local/bin) [default: longhaul].
    #[arg(long, value_name = "PATH")]
    pub remote_longhaul: Option<String>,
    /// UDP port for the remote receiver, when a firewall leaves only some open [default: 0,
    /// any free port].
    #[arg(long, value_name = "PORT")]
    pub remote_port: Option<u16>,
    /// Give up when the remote receiver has not announced its port this long after ssh starts
    /// (ssh's login, a password typed, the receiver's start) [default: 60s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub launch_timeout: Option<Duration>,
}

impl SshArgs {
    /// The launch's options, with the transport settings both ends must agree on.
    pub fn launch_options(&self, t: &TransportArgs) -> LaunchOptions {
        LaunchOptions {
            ssh: self.ssh.clone(),
            remote_longhaul: self.remote_longhaul.clone(),
            remote_port: self.remote_port,
            launch_timeout: self.launch_timeout,
            mtu: t.mtu,
            window: t.window,
            idle_timeout: t.idle_timeout,
        }
    }
}

/// `recv`'s options for being started by a program (the ssh launch) rather than a person.
#[derive(Args, Clone)]
pub struct LaunchedArgs {
    /// Serve one transfer, then exit: with status 0 only if it succeeded.
    #[arg(long, conflicts_with = "count")]
    pub once: bool,
    /// Print `longhaul-recv-ready port=N key=… [via=…]` on standard output once listening (for
    /// the program that started the receiver; `--port 0` lets the kernel choose the port).
    #[arg(long)]
    pub announce: bool,
    /// Stop when standard input closes: the ssh session that started the receiver ended.
    #[arg(long)]
    pub exit_on_eof: bool,
    /// Keep the part files of the sender given with --authorize-key under the user this
    /// receiver runs as (the ssh user that started it), not under that one-time key, so that
    /// the same transfer started again over ssh, with another one-time key, resumes.
    #[arg(long)]
    pub ssh_user_identity: bool,
}

/// Prints the announce line for the program that started the receiver.
pub fn announce(port: u16, key: Option<PublicKey>) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", Announce::new(port, key).line())
        .and_then(|_| out.flush())
        .context("writing the announce line to standard output")
}
