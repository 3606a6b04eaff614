//! `longhaul probe HOST[:PORT]`, `longhaul probe [user@]host:` and `longhaul probe --serve`: a
//! path's RTT, capacity, available bandwidth, effective queue and loss, measured with packet
//! trains over an authenticated connection (logic in `longhaul_probe::run`; keys and trust as
//! `send`/`recv`, `longhaul_net::trust`; the ssh form as `send`'s, `longhaul_net::ssh`).
//! Neither end holds anything to clean up, so Ctrl-C simply ends it: a prober's ssh session
//! ends with it, and the probe server it started sees its standard input close.

use crate::cmd::remote::{SshArgs, StartedArgs};
use crate::units::{parse_duration, parse_size};
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use longhaul_net::destination::Destination;
use longhaul_net::keys::PublicKey;
use longhaul_net::ssh::Remote;
use longhaul_net::{trust, DEFAULT_PORT};
use longhaul_probe::predict;
use longhaul_probe::run::{self, Settings};
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

// The doc comments below are clap's `--help` text, printed as written: brackets in them are
// usage syntax, not rustdoc links.
/// Measure the path to a probe server (`longhaul probe --serve` on the far host).
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Args)]
pub struct ProbeArgs {
    /// The probe server, HOST, HOST:PORT or [IPv6]:PORT (port 5301 by default); or
    /// [user@]host: to start one there through ssh first, as `send` starts its receiver.
    #[arg(required_unless_present = "serve")]
    pub host: Option<String>,
    /// Serve probes on --port instead.
    #[arg(long)]
    pub serve: bool,
    /// --serve: the UDP port.
    #[arg(long, default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// --serve: the address to listen on (default: all IPv6 and IPv4 addresses).
    #[arg(long)]
    pub bind: Option<IpAddr>,
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
    /// The largest IP packet to probe with (default: the MTU of the interface toward HOST); the
    /// path MTU is searched below it, and probe packets fill what is found.
    #[arg(long)]
    pub mtu: Option<u32>,
    /// The report as JSON on standard output.
    #[arg(short = 'J', long)]
    pub json: bool,
    /// Also write the measured path as a scenario file (`longhaul sim FILE`).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Also run every congestion controller on the measured path in the simulator, and name
    /// the one to use, with `longhaul tune`'s settings for the path.
    #[arg(long)]
    pub simulate: bool,
    /// --simulate: simulated time per controller, at most (less on a fast path).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub simulate_time: Duration,
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
    #[command(flatten)]
    pub started: StartedArgs,
    #[command(flatten)]
    pub ssh: SshArgs,
}

pub fn run(a: ProbeArgs) -> Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    if a.serve {
        if a.host.is_some() || a.scenario.is_some() || a.simulate || a.mtu.is_some() {
            bail!("--serve takes no HOST, --scenario, --simulate or --mtu (it listens on --bind and --port; the prober measures and simulates)");
        }
        let identity = a.started.identity(a.identity.as_deref());
        let roles = ("probe server", "prober");
        let keys = a.authorized_keys.as_deref();
        let (security, own_key) = trust::listening_end(
            a.insecure,
            identity,
            roles,
            &a.authorize_key,
            keys,
            &mut say,
        )?;
        let server = run::bind(a.bind, a.port, security)?;
        a.started.watch_input(&stop);
        a.started.announce(server.local_addr().port(), own_key)?;
        run::serve(server, a.count, &stop, &mut say)?;
        return Ok(());
    }
    let host = a
        .host
        .as_deref()
        .expect("clap requires HOST without --serve");
    let settings = Settings {
        mtu: a.mtu,
        time_limit: a.time,
        byte_limit: a.bytes,
        pings: a.pings,
    };
    let launch = a.ssh.launch_options(Remote::ProbeServer);
    let (mut report, remote_end) = match Destination::parse(host)? {
        Destination::Ssh(target) => {
            if a.insecure || a.peer_key.is_some() {
                bail!("--insecure and --peer-key do not apply to `host:`: the keys come over ssh");
            }
            let (report, end) = run::over_ssh(&target, &launch, &settings, &stop, a.json)?;
            (report, Some(end))
        }
        Destination::Udp => {
            launch
                .refuse_unless_launching(host)
                .map_err(|e| anyhow!(e))?;
            let (id, hosts) = (a.identity.as_deref(), a.known_hosts.as_deref());
            let first = |c: &trust::FirstContact| eprintln!("{c}");
            let trust =
                trust::connecting_end(a.insecure, id, "prober", a.peer_key, hosts, host, first)?;
            (run::run(host, trust, &settings, &stop)?, None)
        }
    };
    // A prediction that fails still leaves the measurement to print (then the error).
    let mut failed = None;
    if a.simulate {
        let opts = predict::Options {
            duration: a.simulate_time,
            ..predict::Options::default()
        };
        match predict::predict(&report, &opts) {
            Ok(p) => report.prediction = Some(p),
            Err(e) => failed = Some(e),
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        report.lines().iter().for_each(|l| println!("{l}"));
    }
    if let Some(path) = &a.scenario {
        let text = longhaul_probe::scenario::scenario_file(&report, path)
            .with_context(|| format!("--scenario {}", path.display()))?;
        longhaul_output::write(path, text.as_bytes())?;
        eprintln!("the measured path is in {}", path.display());
    }
    // The remote server's end after the report, as `send`'s receiver's after its summary.
    remote_end.transpose()?;
    if let Some(e) = failed {
        return Err(e).context("--simulate");
    }
    Ok(())
}

fn say(line: &str) {
    eprintln!("{line}");
}
