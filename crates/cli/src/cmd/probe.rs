//! `longhaul probe HOST[:PORT]` and `longhaul probe --serve`: a path's RTT, capacity, available
//! bandwidth, effective queue and loss, measured with packet trains over an authenticated
//! connection (logic in `longhaul_probe`; keys and trust as `send`/`recv`, `longhaul_net::trust`).
//! Neither end holds anything to clean up, so Ctrl-C simply ends it.

use crate::units::{parse_duration, parse_size};
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use longhaul_cc::CcSpec;
use longhaul_net::admission::Limits;
use longhaul_net::keys::PublicKey;
use longhaul_net::{trust, DEFAULT_PORT};
use longhaul_probe::{probe, ProbeOptions, Server};
use longhaul_proto::secure::Security;
use longhaul_proto::Config;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

// The doc comments below are clap's `--help` text, printed as written: brackets in them are
// usage syntax, not rustdoc links.

/// Measure the path to a probe server (`longhaul probe --serve` on the far host).
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Args)]
pub struct ProbeArgs {
    /// The probe server, HOST, HOST:PORT or [IPv6]:PORT (port 5301 by default).
    #[arg(required_unless_present = "serve")]
    pub host: Option<String>,
    /// Serve probes on --port instead.
    #[arg(long)]
    pub serve: bool,
    /// --serve: the UDP port.
    #[arg(long, default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// --serve: the address to listen on.
    #[arg(long, default_value = "0.0.0.0")]
    pub bind: IpAddr,
    /// --serve: exit after this many probes.
    #[arg(long)]
    pub count: Option<usize>,
    /// The longest the measurement may take.
    #[arg(short = 't', long = "time", default_value = "30s", value_parser = parse_duration)]
    pub time: Duration,
    /// The most bytes of probe packets to send.
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    pub bytes: u64,
    /// Pings for the base RTT.
    #[arg(long, default_value_t = 20)]
    pub pings: usize,
    /// Path MTU: probe packets fill it.
    #[arg(long, default_value_t = 1500)]
    pub mtu: u32,
    /// The report as JSON on standard output.
    #[arg(short = 'J', long)]
    pub json: bool,
    /// Also write the measured path as a scenario file (`longhaul sim FILE`).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// The server's public key (default: its line in known_hosts, else trust on first use).
    #[arg(long, value_name = "KEY")]
    pub peer_key: Option<PublicKey>,
    /// The known_hosts file (default: ~/.longhaul/known_hosts).
    #[arg(long, value_name = "FILE")]
    pub known_hosts: Option<PathBuf>,
    /// --serve: probers' public keys allowed (default: ~/.longhaul/authorized_keys).
    #[arg(long, value_name = "FILE")]
    pub authorized_keys: Option<PathBuf>,
    /// --serve: a prober's public key to allow (repeatable).
    #[arg(long, value_name = "KEY")]
    pub authorize_key: Vec<PublicKey>,
    /// This end's key pair (default: ~/.longhaul/id_x25519, made by `longhaul keygen`).
    #[arg(long, value_name = "FILE")]
    pub identity: Option<PathBuf>,
    /// No authentication: anyone may probe, and anyone on the path may forge the results. Both
    /// ends must agree. For closed test networks only.
    #[arg(long)]
    pub insecure: bool,
}

fn config(a: &ProbeArgs, security: Security) -> Result<Config> {
    let cc: CcSpec = "fast".parse().map_err(|e| anyhow!("{e}"))?;
    longhaul_net::host_config(cc, security, a.mtu, 4 << 20, Duration::from_secs(30))
        .map_err(|e| anyhow!("--mtu {}: {e}", a.mtu))
}

pub fn run(a: ProbeArgs) -> Result<()> {
    if a.serve {
        return serve(&a);
    }
    let host = a
        .host
        .as_deref()
        .expect("clap requires HOST without --serve");
    let peer = longhaul_net::resolve(host).map_err(|e| anyhow!(e))?;
    let (security, hook) = if a.insecure {
        (Security::Off, None)
    } else {
        let pair = trust::own_key_pair(a.identity.as_deref(), "prober")?;
        trust::sender_security(&pair, a.peer_key, a.known_hosts.as_deref(), host, |c| {
            eprintln!("{c}")
        })?
    };
    let mut options = ProbeOptions::new(config(&a, security)?);
    options.on_peer_key = hook;
    options.time_limit = a.time;
    options.byte_limit = a.bytes;
    options.pings = a.pings;
    let ip_header = if peer.is_ipv6() { 48 } else { 28 };
    options.datagram = (a.mtu as usize)
        .checked_sub(ip_header)
        .filter(|d| *d >= longhaul_probe::wire::MIN_DATAGRAM)
        .ok_or_else(|| anyhow!("--mtu {} is too small for a probe packet", a.mtu))?;
    let report = probe(peer, options, &AtomicBool::new(false))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        report.lines().iter().for_each(|l| println!("{l}"));
    }
    if let Some(path) = &a.scenario {
        let name = path
            .file_stem()
            .map_or("probed-path".into(), |s| s.to_string_lossy().into_owned());
        let text = longhaul_probe::scenario::scenario_toml(&report, &name, 60.0)
            .with_context(|| format!("--scenario {}", path.display()))?;
        longhaul_output::write(path, text.as_bytes())?;
        eprintln!("the measured path is in {}", path.display());
    }
    Ok(())
}

fn serve(a: &ProbeArgs) -> Result<()> {
    if a.host.is_some() || a.scenario.is_some() {
        bail!("--serve takes no HOST and no --scenario (it listens on --bind and --port)");
    }
    let security = if a.insecure {
        Security::Off
    } else {
        let pair = trust::own_key_pair(a.identity.as_deref(), "probe server")?;
        let (s, allowed) =
            trust::receiver_security(&pair, &a.authorize_key, a.authorized_keys.as_deref())?;
        eprintln!(
            "probe server key {} ({}); {allowed} prober key(s) authorized",
            pair.public.fingerprint(),
            pair.public
        );
        s
    };
    let mut server = Server::bind(
        (a.bind, a.port).into(),
        config(a, security)?,
        Limits::default(),
    )?;
    eprintln!("serving probes on {}", server.local_addr());
    server.serve(&AtomicBool::new(false), a.count, |end| {
        let how = end.error.as_deref().unwrap_or("done");
        eprintln!("probe from {}: {} trains, {how}", end.peer, end.trains);
    })?;
    Ok(())
}
