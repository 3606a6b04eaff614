//! `longhaul perf server|client`: iperf-like measurement (logic in `longhaul_perf::perf`).

use crate::units::{parse_duration, parse_rate_bps, parse_size};
use anyhow::Result;
use clap::{Args, Subcommand};
use longhaul_perf::perf::{self, report, ClientConfig, PathFacts, Server, ServerConfig};
use std::net::IpAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

#[derive(Subcommand)]
pub enum PerfCommand {
    /// Serve tests until interrupted; a failing or garbage client never stops the server.
    Server(ServerArgs),
    /// Send to a `longhaul perf server` and report transfer, bitrate, retransmits, cwnd and RTT.
    Client(ClientArgs),
}

#[derive(Args)]
pub struct ServerArgs {
    /// Port to listen on.
    #[arg(short, long, default_value_t = perf::DEFAULT_PORT)]
    pub port: u16,
    /// Address to bind (default: all IPv6 and IPv4 addresses, or all IPv4 ones without IPv6).
    #[arg(short = 'B', long)]
    pub bind: Option<IpAddr>,
    /// Close a peer that sends nothing for this long.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub idle_timeout: Duration,
    /// Most connections open at once.
    #[arg(long, default_value_t = 256)]
    pub max_connections: usize,
}

#[derive(Args)]
pub struct ClientArgs {
    /// Host running `longhaul perf server`.
    pub host: String,
    #[arg(short, long, default_value_t = perf::DEFAULT_PORT)]
    pub port: u16,
    /// Congestion control for the data connections (reno, cubic, bbr, or a loaded longhaul one).
    #[arg(short = 'C', long = "congestion")]
    pub cc: Option<String>,
    /// Parallel streams.
    #[arg(short = 'P', long, default_value_t = 1)]
    pub parallel: u32,
    /// How long to send: 10s, 5m.
    #[arg(short = 't', long = "time", default_value = "10s", value_parser = parse_duration)]
    pub duration: Duration,
    /// Report interval.
    #[arg(short = 'i', long, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    /// Socket buffer to request on both ends (e.g. 32M); Linux grants twice this.
    #[arg(short = 'w', long = "window", value_parser = parse_size)]
    pub window: Option<u64>,
    /// Bytes per write (e.g. 128K, 8M).
    #[arg(short = 'l', long = "len", default_value = "128K", value_parser = parse_size)]
    pub write_len: u64,
    /// Path distance for the distance-rate product (b·m/s), kilometres.
    #[arg(long)]
    pub distance_km: Option<f64>,
    /// Bottleneck capacity, for utilization (e.g. 1gbit).
    #[arg(long, value_parser = parse_rate_bps)]
    pub capacity: Option<f64>,
    /// MTU for utilization net of 40-byte headers.
    #[arg(long, default_value_t = 1500)]
    pub mtu: u32,
    /// Give up connecting after this long (at least 1s).
    #[arg(long, default_value = "5s", value_parser = super::transfer::parse_connect_timeout)]
    pub connect_timeout: Duration,
    /// Print the result summary JSON (docs/measurements.md) with the per-interval series instead of text.
    #[arg(short = 'J', long)]
    pub json: bool,
}

pub fn run(c: PerfCommand) -> Result<()> {
    match c {
        PerfCommand::Server(a) => server(a),
        PerfCommand::Client(a) => client(a),
    }
}

fn server(a: ServerArgs) -> Result<()> {
    let log = Arc::new(|e: perf::ServerEvent| eprintln!("{}", e.log_line(SystemTime::now())));
    let config = ServerConfig {
        idle_timeout: a.idle_timeout,
        max_connections: a.max_connections,
    };
    let s = Server::bind_port(a.bind, a.port, config, log)?;
    s.serve(&AtomicBool::new(false))?;
    Ok(())
}

fn client(a: ClientArgs) -> Result<()> {
    if let Some(km) = a.distance_km {
        anyhow::ensure!(km.is_finite() && km > 0.0, "--distance-km must be positive");
    }
    let cfg = ClientConfig {
        host: a.host,
        port: a.port,
        streams: a.parallel,
        duration: a.duration,
        interval: a.interval,
        cc: a.cc,
        window: a.window,
        write_len: u32::try_from(a.write_len).unwrap_or(u32::MAX),
        connect_timeout: a.connect_timeout,
    };
    let facts = PathFacts {
        distance_km: a.distance_km,
        capacity_bps: a.capacity,
        mtu: Some(a.mtu),
    };
    let run = if a.json {
        perf::run_client(&cfg, &mut perf::Quiet)?
    } else {
        perf::run_client(&cfg, &mut report::TextProgress)?
    };
    let mut summary = perf::to_summary(&run, &facts);
    summary.provenance = Some(crate::provenance::capture());
    if a.json {
        print!("{}", summary.to_json()?);
    } else {
        print!("{}", report::footer(&run, &summary));
    }
    Ok(())
}
