//! The command-line side of the ssh launch (`longhaul_net::ssh`): the options of `send`'s
//! `[user@]host:DIR` form and `probe`'s `[user@]host:`, and those of the receivers it starts
//! (`recv`, `probe --serve`) — announcing their port and key on standard output
//! (`longhaul_net::announce`), stopping when standard input closes
//! (`longhaul_net::ssh::stop_on_eof`), a one-time key pair.

use crate::units::parse_duration;
use anyhow::{Context, Result};
use clap::Args;
use longhaul_net::announce::Announce;
use longhaul_net::keys::PublicKey;
use longhaul_net::ssh::{self, LaunchOptions, Remote};
use longhaul_net::trust::Identity;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The options of the ssh form (`send … [user@]host:DIR`, `probe [user@]host:`).
#[derive(Args, Clone, Default)]
pub struct SshArgs {
    /// The ssh command for the `[user@]host:…` form, with its options, as rsync's `-e`: e.g.
    /// `--ssh 'ssh -p 2222 -i /keys/lab'`; split into words as a shell would, without
    /// expanding anything [default: ssh].
    #[arg(long, value_name = "COMMAND")]
    pub ssh: Option<String>,
    /// Where longhaul is on the far host, when not on the PATH of a non-interactive ssh session
    /// (which often lacks ~/.cargo/bin and /usr/local/bin) [default: longhaul].
    #[arg(long, value_name = "PATH")]
    pub remote_longhaul: Option<String>,
    /// UDP port for the remote receiver or probe server, when a firewall leaves only some open
    /// [default: 0, any free port].
    #[arg(long, value_name = "PORT")]
    pub remote_port: Option<u16>,
    /// Give up when the remote end has not announced its port this long after ssh starts
    /// (ssh's login, a password typed, its start) [default: 60s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub launch_timeout: Option<Duration>,
}

impl SshArgs {
    /// The launch's options, to start `remote`.
    pub fn launch_options(&self, remote: Remote) -> LaunchOptions {
        LaunchOptions {
            ssh: self.ssh.clone(),
            remote_longhaul: self.remote_longhaul.clone(),
            remote_port: self.remote_port,
            launch_timeout: self.launch_timeout,
            remote,
        }
    }
}

/// The options of an end that listens (`recv`, `probe --serve`) for being started by a program
/// (the ssh launch) rather than a person.
#[derive(Args, Clone)]
pub struct StartedArgs {
    /// Print `longhaul-recv-ready port=N key=… [via=…]` on standard output once listening (for
    /// the program that started it; `--port 0` lets the kernel choose the port).
    #[arg(long)]
    pub announce: bool,
    /// Stop when standard input closes: the ssh session that started it ended.
    #[arg(long)]
    pub exit_on_eof: bool,
    /// Use a one-time key pair made in memory instead of --identity (the other end must then
    /// learn it another way, e.g. over the ssh channel that started this one).
    #[arg(long)]
    pub identity_ephemeral: bool,
}

impl StartedArgs {
    /// Where the key pair comes from: `--identity-ephemeral`, else `file` (`--identity`).
    pub fn identity<'a>(&self, file: Option<&'a Path>) -> Identity<'a> {
        match self.identity_ephemeral {
            true => Identity::Ephemeral,
            false => Identity::File(file),
        }
    }

    /// `--exit-on-eof`: sets `stop` when standard input closes.
    pub fn watch_input(&self, stop: &Arc<AtomicBool>) {
        if self.exit_on_eof {
            ssh::stop_on_eof(stop.clone());
        }
    }

    /// `--announce`: prints the announce line for the program that started this end, once it
    /// listens on `port` with `key`.
    pub fn announce(&self, port: u16, key: Option<PublicKey>) -> Result<()> {
        use std::io::Write;
        if !self.announce {
            return Ok(());
        }
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", Announce::new(port, key).line())
            .and_then(|_| out.flush())
            .context("writing the announce line to standard output")
    }
}

/// `recv`'s options for being started by the ssh launch, beyond [`StartedArgs`].
#[derive(Args, Clone)]
pub struct LaunchedArgs {
    /// Serve one transfer, then exit: with status 0 only if it succeeded.
    #[arg(long, conflicts_with = "count")]
    pub once: bool,
    #[command(flatten)]
    pub started: StartedArgs,
    /// Keep the part files of the sender given with --authorize-key under the user this
    /// receiver runs as (the ssh user that started it), not under that one-time key, so that
    /// the same transfer started again over ssh, with another one-time key, resumes.
    #[arg(long)]
    pub ssh_user_identity: bool,
}
