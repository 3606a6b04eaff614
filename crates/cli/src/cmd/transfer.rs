//! `longhaul send PATH… HOST[:PORT]` and `longhaul recv`: file transfer over longhaul's own
//! transport on UDP (logic in `longhaul_net`), for hosts whose kernel TCP cannot be changed.
//! `longhaul send PATH… [user@]host:DIR` starts the receiver through ssh first
//! (`longhaul_net::ssh`).

use crate::cmd::remote::{LaunchedArgs, SshArgs};
use crate::units::{parse_duration, parse_rate_bps, parse_size};
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use longhaul_cc::CcSpec;
use longhaul_emu::sys::signals::stop_flag;
use longhaul_net::admission::Limits;
use longhaul_net::destination::Destination;
use longhaul_net::keys::PublicKey;
use longhaul_net::mtu::Mtu;
use longhaul_net::recv::{Event, Receiver, RecvOptions};
use longhaul_net::send::{send_paths, Progress, SendOptions, TrustHook};
use longhaul_net::ssh;
use longhaul_net::summary::{ReceivedSummary, SendSummary};
use longhaul_net::text::{
    buffers_line, clean_parts, event_lines, receiver_lines, send_summary, sending_line,
    stale_parts_note, ProgressLines,
};
use longhaul_net::trust;
use longhaul_net::{ranges, DEFAULT_PORT};
use longhaul_proto::secure::Security;
use longhaul_proto::Config;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Transport settings shared by both ends.
#[derive(Args, Clone)]
pub struct TransportArgs {
    /// Congestion control, as `NAME[:key=value,…]` (`longhaul cc list`), e.g. `fast:alpha=200`.
    /// Only the sender's matters.
    #[arg(short = 'C', long = "congestion", default_value = "fast")]
    pub cc: String,
    /// IP packet size that data packets fill (payload = MTU − 84 bytes of IPv4, UDP and
    /// longhaul headers and the seal; − 57 with --insecure): `auto` starts at 1500 and the
    /// sender searches, with probes, up to what the route carries; a number fixes it. Only
    /// the sender's matters.
    #[arg(long, default_value = "auto", value_parser = parse_mtu)]
    pub mtu: Mtu,
    /// Receive window and send buffer, at least the path's bandwidth-delay product
    /// (1 Gb/s × 180 ms = 22.5 MB); 64K to 4G.
    #[arg(short = 'w', long = "window", default_value = "64M", value_parser = parse_window)]
    pub window: u64,
    /// Close a connection that has heard nothing for this long (at least 1s).
    #[arg(long, default_value = "30s", value_parser = parse_idle_timeout)]
    pub idle_timeout: Duration,
    /// One datagram per system call: no UDP segmentation offload (GSO) or receive coalescing
    /// (GRO), which are used where the kernel has them.
    #[arg(long)]
    pub no_offload: bool,
    /// No authentication and no encryption: anyone who can reach the port may send files, and
    /// anyone on the path may read, alter or forge the transfer. Both ends must agree. For
    /// closed test networks only.
    #[arg(long)]
    pub insecure: bool,
    /// This end's key pair (default: ~/.longhaul/id_x25519, made by `longhaul keygen`).
    #[arg(long, value_name = "FILE")]
    pub identity: Option<PathBuf>,
}

/// A choice the program can make by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    Auto,
    On,
    Off,
}

impl OnOff {
    /// `None` for `auto`.
    pub fn choice(self) -> Option<bool> {
        match self {
            OnOff::Auto => None,
            OnOff::On => Some(true),
            OnOff::Off => Some(false),
        }
    }
}

impl TransportArgs {
    fn config(&self, security: Security) -> Result<Config> {
        let cc: CcSpec = self
            .cc
            .parse()
            .map_err(|e| anyhow!("--congestion {}: {e}", self.cc))?;
        let mtu = self.mtu.base();
        longhaul_net::host_config(cc, security, mtu, self.window, self.idle_timeout)
            .map_err(|e| anyhow!("--mtu {} / --window {}: {e}", self.mtu, self.window))
    }
}

/// A value of `s` through one of `longhaul_net::ranges`' checks, the error naming `s`.
fn in_range<T>(s: &str, v: T, check: fn(T) -> Result<T, String>) -> Result<T> {
    check(v).map_err(|e| anyhow!("{s}: {e}"))
}

fn parse_mtu(s: &str) -> Result<Mtu> {
    s.parse().map_err(|e: String| anyhow!(e))
}

fn parse_window(s: &str) -> Result<u64> {
    in_range(s, parse_size(s)?, ranges::window)
}

fn parse_idle_timeout(s: &str) -> Result<Duration> {
    in_range(s, parse_duration(s)?, ranges::idle_timeout)
}

/// `send` and `perf client` take it.
pub(crate) fn parse_connect_timeout(s: &str) -> Result<Duration> {
    in_range(s, parse_duration(s)?, ranges::connect_timeout)
}

fn parse_interval(s: &str) -> Result<Duration> {
    in_range(s, parse_duration(s)?, ranges::progress_interval)
}

// The doc comments below are clap's `--help` text, printed as written: brackets and angle
// brackets in them are usage syntax, not rustdoc links or HTML.
#[allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#[derive(Args)]
pub struct SendArgs {
    /// Files and directories to send, then where `longhaul recv` runs: HOST, HOST:PORT or
    /// [IPv6]:PORT; or [user@]host:DIR to start it there through ssh first (a colon and a
    /// directory, as scp; all digits after the colon is a port). Directories are sent whole;
    /// each path arrives under its own name.
    #[arg(required = true, num_args = 2.., value_name = "PATH… HOST")]
    pub args: Vec<String>,
    /// Store a single path under this name (default: its own name).
    #[arg(long)]
    pub name: Option<String>,
    /// Follow symbolic links inside directories (default: send them as links; links that
    /// point outside the tree are refused by the receiver).
    #[arg(short = 'L', long)]
    pub follow_links: bool,
    /// Start every file over instead of resuming what the receiver kept of a cut transfer.
    #[arg(long)]
    pub no_resume: bool,
    /// The receiver's public key (`longhaul-x25519 BASE64`, or the bare base64): only a
    /// receiver holding it is sent anything. Default: its known_hosts line, or trust on first
    /// use.
    #[arg(long, value_name = "KEY")]
    pub peer_key: Option<PublicKey>,
    /// Where receivers' keys are remembered (default: ~/.longhaul/known_hosts).
    #[arg(long, value_name = "FILE")]
    pub known_hosts: Option<PathBuf>,
    /// Cap the rate of file data, e.g. `500mbit` (default: whatever the path and the
    /// congestion control allow).
    #[arg(long, value_parser = parse_rate_bps)]
    pub rate_limit: Option<f64>,
    /// Progress interval.
    #[arg(short = 'i', long, default_value = "1s", value_parser = parse_interval)]
    pub interval: Duration,
    /// Give up when the receiver has not answered the handshake for this long (at least 1s).
    #[arg(long, default_value = "10s", value_parser = parse_connect_timeout)]
    pub connect_timeout: Duration,
    /// Seal and send datagrams on a thread of their own, so that a sender with cores to spare
    /// moves more than one core's worth: `auto` does where the host has at least 4 cores.
    #[arg(long, value_enum, default_value_t = OnOff::Auto)]
    pub send_thread: OnOff,
    /// Print the result as JSON on stdout instead of text.
    #[arg(short = 'J', long)]
    pub json: bool,
    #[command(flatten)]
    pub ssh: SshArgs,
    #[command(flatten)]
    pub transport: TransportArgs,
}

#[derive(Args)]
pub struct RecvArgs {
    /// Directory to store received files in.
    #[arg(short = 'd', long = "dir", default_value = ".")]
    pub dir: PathBuf,
    /// UDP port to listen on.
    #[arg(short, long, default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// Address to bind (default: all IPv6 and IPv4 addresses).
    #[arg(short = 'B', long)]
    pub bind: Option<IpAddr>,
    /// Replace existing files (default: refuse them; the sender is told why).
    #[arg(long)]
    pub overwrite: bool,
    /// Keep nothing: receive each file, check it against the sender's digest, and drop it
    /// (as bbcp to /dev/null, or an iperf3 server): measures the path and the transport
    /// without the receiver's disk. Directories and links are not created.
    #[arg(long, conflicts_with_all = ["dir", "overwrite"])]
    pub discard: bool,
    /// Refuse files larger than this.
    #[arg(long, default_value = "16384G", value_parser = parse_size)]
    pub max_size: u64,
    /// Read the socket and open sealed datagrams on a thread of their own, so that a receiver
    /// with cores to spare moves more than one core's worth: `auto` does where the host has
    /// at least 4 cores.
    #[arg(long, value_enum, default_value_t = OnOff::Auto)]
    pub recv_thread: OnOff,
    /// Exit after this many transfers have ended (default: serve until interrupted). Only
    /// senders that spoke the transfer protocol count; stray datagrams do not.
    #[arg(short = 'n', long = "count")]
    pub count: Option<usize>,
    /// Sessions at once (established or in their handshake).
    #[arg(long, default_value_t = 64)]
    pub max_sessions: usize,
    /// Sessions from one IP address at once.
    #[arg(long, default_value_t = 8)]
    pub max_per_source: usize,
    /// Senders' public keys allowed to send (default: ~/.longhaul/authorized_keys).
    #[arg(long, value_name = "FILE")]
    pub authorized_keys: Option<PathBuf>,
    /// Allow this sender's public key (repeatable). Without --authorized-keys, only these
    /// keys are allowed.
    #[arg(long, value_name = "KEY")]
    pub authorize_key: Vec<PublicKey>,
    /// Remove the part files (and their journals) in DIR/.longhaul-partial that nothing wrote
    /// for DAYS days or more, listing each, then exit without receiving. Part files a running
    /// receiver writes are kept.
    #[arg(long, value_name = "DAYS", conflicts_with = "discard")]
    pub clean_parts: Option<u64>,
    /// Also write each ended transfer's summary as one line of JSON on stdout (its files,
    /// refusals, error and dropped datagrams); the log stays on stderr.
    #[arg(short = 'J', long)]
    pub json: bool,
    #[command(flatten)]
    pub launched: LaunchedArgs,
    #[command(flatten)]
    pub transport: TransportArgs,
}

pub fn send(a: SendArgs) -> Result<()> {
    let (to, paths) = a.args.split_last().expect("clap requires two");
    let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    let stop = stop_flag();
    // `[user@]host:DIR`: start the receiver there through ssh; it announces port and key.
    let t = &a.transport;
    let options = a.ssh.launch_options(ssh::Remote::Receiver {
        mtu: t.mtu.base(),
        window: t.window,
        idle_timeout: t.idle_timeout,
    });
    let launched = match Destination::parse(to)? {
        Destination::Ssh(t) => Some(ssh::launch(&t, &options, &stop, a.json)?),
        Destination::Udp => {
            options
                .refuse_unless_launching(to)
                .map_err(|e| anyhow!(e))?;
            None
        }
    };
    let (security, on_peer_key) = sender_trust(&a, to, launched.as_ref())?;
    let mut config = a.transport.config(security)?;
    // Only the sender searches: its socket is connected, so the kernel can say the route's MTU.
    config.pmtu_max = a.transport.mtu.bound();
    let peer = match &launched {
        Some(l) => l.addr,
        None => longhaul_net::resolve(to).map_err(|e| anyhow!(e))?,
    };
    if !a.json {
        let (t, rate) = (&a.transport, a.rate_limit);
        let line = sending_line(paths.len(), peer, &t.cc, t.mtu, t.window, rate);
        eprintln!("{line}");
    }
    let mut lines = ProgressLines::default();
    let json = a.json;
    let report = send_paths(
        &paths,
        peer,
        SendOptions {
            config,
            name: a.name.clone(),
            follow_links: a.follow_links,
            resume: !a.no_resume,
            rate_limit: a.rate_limit.map(|r| r as u64),
            interval: a.interval,
            connect_timeout: a.connect_timeout,
            offload: !a.transport.no_offload,
            send_thread: a.send_thread.choice(),
            on_peer_key,
        },
        &stop,
        |p: &Progress| {
            if !json {
                eprintln!("{}", lines.line(p));
            }
        },
    )
    .map_err(|e| match launched.as_ref().and_then(|l| l.explain(&e)) {
        Some(why) => anyhow!(e).context(why),
        None => anyhow!(e),
    })
    .with_context(|| format!("sending to {peer}"))?;
    // The remote receiver's last words come before the summary.
    let remote_end = launched.map(|l| l.finish(&stop).map_err(Box::new));
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&SendSummary::new(&report, &a.transport.cc))?
        );
    } else {
        send_summary(&report).iter().for_each(|l| eprintln!("{l}"));
    }
    if report.failed() > 0 {
        bail!(
            "{} of {} entries were not stored",
            report.failed(),
            report.files.len()
        );
    }
    remote_end.transpose()?;
    Ok(())
}

/// The sender's identity and whom it trusts (`longhaul_net::trust`): over ssh, only the key the
/// remote receiver announced; else `--peer-key`, the receiver's known_hosts line, or trust on
/// first use.
fn sender_trust(
    a: &SendArgs,
    to: &str,
    launched: Option<&ssh::Launched>,
) -> Result<(Security, Option<TrustHook>)> {
    let t = &a.transport;
    if let Some(l) = launched {
        if t.insecure || a.peer_key.is_some() {
            bail!("--insecure and --peer-key do not apply to `host:DIR`: the keys come over ssh");
        }
        return Ok((l.security().map_err(|e| anyhow!(e))?, None));
    }
    warn_if_insecure(t.insecure);
    let (id, hosts) = (t.identity.as_deref(), a.known_hosts.as_deref());
    let first = |c: &trust::FirstContact| eprintln!("{c}");
    Ok(trust::connecting_end(
        t.insecure, id, "sender", a.peer_key, hosts, to, first,
    )?)
}

fn warn_if_insecure(insecure: bool) {
    if insecure {
        eprintln!("{}", trust::INSECURE_WARNING);
    }
}

pub fn recv(a: RecvArgs) -> Result<()> {
    if a.max_sessions == 0 || a.max_per_source == 0 {
        bail!("--max-sessions and --max-per-source must be at least 1");
    }
    if let Some(days) = a.clean_parts {
        return Ok(clean_parts(&a.dir, days, &mut |l| eprintln!("{l}"))?);
    }
    warn_if_insecure(a.transport.insecure);
    let started = &a.launched.started;
    let identity = started.identity(a.transport.identity.as_deref());
    let (security, own_key) = trust::listening_end(
        a.transport.insecure,
        identity,
        ("receiver", "sender"),
        &a.authorize_key,
        a.authorized_keys.as_deref(),
        &mut |l| eprintln!("{l}"),
    )?;
    let config = a.transport.config(security)?;
    let count = if a.launched.once { Some(1) } else { a.count };
    let options = RecvOptions {
        config,
        dir: a.dir.clone(),
        overwrite: a.overwrite,
        discard: a.discard,
        max_size: a.max_size,
        limits: Limits {
            max_sessions: a.max_sessions,
            per_source: a.max_per_source,
            ..Limits::default()
        },
        offload: !a.transport.no_offload,
        recv_thread: a.recv_thread.choice(),
        sender_name: a
            .launched
            .ssh_user_identity
            .then(|| trust::ssh_user_name(&a.authorize_key, a.authorized_keys.as_deref()))
            .transpose()
            .map_err(|e| anyhow!(e))?,
        // `longhaul probe` against this receiver: the same keys and admission.
        service: Some(longhaul_probe::server::service()),
        transfers: true,
    };
    eprintln!(
        "{}",
        buffers_line(a.max_sessions, a.max_per_source, a.transport.window)
    );
    let mut r = Receiver::bind_port(a.bind, a.port, options)?;
    let stop = stop_flag();
    started.watch_input(&stop);
    receiver_lines(&r, a.discard)
        .iter()
        .for_each(|l| eprintln!("{l}"));
    if !a.discard {
        if let Some(note) = stale_parts_note(&a.dir) {
            eprintln!("{note}");
        }
    }
    // Bound, so a sender may come now.
    started.announce(r.local_addr().port(), own_key)?;
    let mut failures = 0;
    let ended = r.serve(&stop, count, |e| {
        let (lines, failed) = event_lines(&e, a.discard);
        lines.iter().for_each(|l| eprintln!("{l}"));
        failures += usize::from(failed);
        if let Event::Session(s) = e {
            if a.json && s.genuine {
                let line = serde_json::to_string(&ReceivedSummary::new(s));
                println!("{}", line.expect("a summary has string keys only"));
            }
        }
    })?;
    if failures > 0 && count.is_some() {
        bail!("{failures} transfer(s) or file(s) failed");
    }
    if a.launched.once && ended == 0 {
        bail!("stopped before a transfer ended");
    }
    Ok(())
}
