//! `longhaul send FILE HOST[:PORT]` and `longhaul recv`: file transfer over longhaul's own
//! transport on UDP (logic in `longhaul_net`), for hosts whose kernel TCP cannot be changed.

use crate::signals::{block_termination_signals, wait_signal};
use crate::units::{parse_duration, parse_size};
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use longhaul_cc::CcSpec;
use longhaul_net::recv::{Receiver, RecvOptions};
use longhaul_net::send::{send_file, Progress, SendOptions, SendReport};
use longhaul_net::DEFAULT_PORT;
use longhaul_proto::Config;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Transport settings shared by both ends.
#[derive(Args, Clone)]
pub struct TransportArgs {
    /// Congestion control, as `NAME[:key=value,…]` (`longhaul cc list`), e.g. `fast:alpha=200`.
    /// Only the sender's matters.
    #[arg(short = 'C', long = "congestion", default_value = "fast")]
    pub cc: String,
    /// Path MTU: data packets fill it exactly (payload = MTU − 57 bytes of IPv4, UDP and
    /// longhaul headers).
    #[arg(long, default_value_t = 1500)]
    pub mtu: u32,
    /// Receive window and send buffer, at least the path's bandwidth-delay product
    /// (1 Gb/s × 180 ms = 22.5 MB).
    #[arg(short = 'w', long = "window", default_value = "64M", value_parser = parse_size)]
    pub window: u64,
    /// Close a connection that has heard nothing for this long.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub idle_timeout: Duration,
    /// One datagram per system call: no UDP segmentation offload (GSO) or receive coalescing
    /// (GRO), which are used where the kernel has them.
    #[arg(long)]
    pub no_offload: bool,
}

impl TransportArgs {
    fn config(&self) -> Result<Config> {
        let cc: CcSpec = self
            .cc
            .parse()
            .map_err(|e| anyhow!("--congestion {}: {e}", self.cc))?;
        let mss = Config::mss_for_mtu(self.mtu);
        let mut c = Config::new(cc);
        c.mss = mss;
        c.setup.mss = mss;
        c.recv_window = self.window;
        c.send_buffer = self.window;
        c.idle_timeout = Some(self.idle_timeout);
        c.validate()
            .map_err(|e| anyhow!("--mtu {} / --window {}: {e}", self.mtu, self.window))?;
        Ok(c)
    }
}

#[derive(Args)]
pub struct SendArgs {
    /// The file to send.
    pub file: PathBuf,
    /// Where `longhaul recv` runs: HOST, HOST:PORT, [IPv6]:PORT.
    pub to: String,
    /// Store the file under this name (default: its own name).
    #[arg(long)]
    pub name: Option<String>,
    /// Progress interval.
    #[arg(short = 'i', long, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    /// Give up when the receiver has not answered the handshake for this long.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub connect_timeout: Duration,
    /// Print the result as JSON on stdout instead of text.
    #[arg(short = 'J', long)]
    pub json: bool,
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
    /// Refuse files larger than this.
    #[arg(long, default_value = "16384G", value_parser = parse_size)]
    pub max_size: u64,
    /// Exit after this many transfers have ended (default: serve until interrupted).
    #[arg(short = 'n', long = "count")]
    pub count: Option<usize>,
    /// Senders served at once.
    #[arg(long, default_value_t = 64)]
    pub max_sessions: usize,
    #[command(flatten)]
    pub transport: TransportArgs,
}

/// A signal watcher that sets the returned flag on SIGINT/SIGTERM/SIGHUP.
fn stop_flag() -> Arc<AtomicBool> {
    block_termination_signals();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    std::thread::spawn(move || loop {
        if wait_signal(Duration::from_millis(500)).is_some() {
            s.store(true, Ordering::Relaxed);
        }
    });
    stop
}

fn resolve(to: &str) -> Result<SocketAddr> {
    if let Ok(mut a) = to.to_socket_addrs() {
        if let Some(a) = a.next() {
            return Ok(a);
        }
    }
    let host = to.trim_start_matches('[').trim_end_matches(']');
    (host, DEFAULT_PORT)
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {to:?} (HOST, HOST:PORT or [IPv6]:PORT)"))?
        .next()
        .ok_or_else(|| anyhow!("{to:?} resolves to no address"))
}

pub fn send(a: SendArgs) -> Result<()> {
    let config = a.transport.config()?;
    let peer = resolve(&a.to)?;
    let stop = stop_flag();
    if !a.json {
        eprintln!(
            "sending {} to {peer} with {} (MTU {}, window {} B)",
            a.file.display(),
            a.transport.cc,
            a.transport.mtu,
            a.transport.window
        );
        eprintln!(
            "{:>8}  {:>22}  {:>11}  {:>9}  {:>9}  {:>7}  {:>7}",
            "time", "acknowledged", "rate", "cwnd", "srtt", "retr", "lost"
        );
    }
    let mut last = (Duration::ZERO, 0u64);
    let json = a.json;
    let report = send_file(
        &a.file,
        peer,
        SendOptions {
            config,
            name: a.name.clone(),
            interval: a.interval,
            connect_timeout: a.connect_timeout,
            offload: !a.transport.no_offload,
        },
        &stop,
        |p: &Progress| {
            if json {
                return;
            }
            let dt = (p.elapsed - last.0).as_secs_f64().max(1e-9);
            let rate = (p.bytes_acked - last.1) as f64 * 8.0 / dt;
            last = (p.elapsed, p.bytes_acked);
            let pct = 100.0 * p.bytes_acked as f64 / p.file_size.max(1) as f64;
            eprintln!(
                "{:>6.2} s  {:>14} ({:>5.1}%)  {:>11}  {:>9}  {:>6.1} ms  {:>7}  {:>7}",
                p.elapsed.as_secs_f64(),
                bytes(p.bytes_acked),
                pct,
                bits_per_s(rate),
                bytes(p.stats.cwnd_bytes),
                p.stats.srtt_us as f64 / 1000.0,
                p.stats.packets_retransmitted,
                p.stats.packets_lost,
            );
        },
    )
    .with_context(|| format!("sending {} to {peer}", a.file.display()))?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report_json(&report, &a.transport.cc))?
        );
    } else {
        let s = &report.stats;
        eprintln!(
            "sent {} ({}) in {:.2} s: {} goodput; {} packets, {} retransmitted, {} lost, \
             {} socket drops; RTT min {:.1} ms, smoothed {:.1} ms",
            report.name,
            bytes(report.size),
            report.duration.as_secs_f64(),
            bits_per_s(report.goodput_bps()),
            s.packets_sent,
            s.packets_retransmitted,
            s.packets_lost,
            report.socket.local_drops,
            s.min_rtt_us as f64 / 1000.0,
            s.srtt_us as f64 / 1000.0,
        );
        eprintln!(
            "{} datagrams in {} send calls (GSO {}); stored by the receiver, SHA-256 {}",
            report.socket.datagrams_sent,
            report.socket.send_calls,
            if report.offloads.0 { "on" } else { "off" },
            report.sha256
        );
    }
    Ok(())
}

fn report_json(r: &SendReport, cc: &str) -> serde_json::Value {
    let s = &r.stats;
    serde_json::json!({
        "name": r.name,
        "peer": r.peer.to_string(),
        "cc": cc,
        "bytes": r.size,
        "seconds": r.duration.as_secs_f64(),
        "goodput_bps": r.goodput_bps(),
        "sha256": r.sha256,
        "packets_sent": s.packets_sent,
        "packets_retransmitted": s.packets_retransmitted,
        "packets_lost": s.packets_lost,
        "congestion_events": s.congestion_events,
        "rto_count": s.rto_count,
        "socket_drops": r.socket.local_drops,
        "gso": r.offloads.0,
        "datagrams_sent": r.socket.datagrams_sent,
        "send_calls": r.socket.send_calls,
        "min_rtt_ms": s.min_rtt_us as f64 / 1000.0,
        "srtt_ms": s.srtt_us as f64 / 1000.0,
    })
}

pub fn recv(a: RecvArgs) -> Result<()> {
    let config = a.transport.config()?;
    if a.max_sessions == 0 {
        bail!("--max-sessions must be at least 1");
    }
    let options = RecvOptions {
        config,
        dir: a.dir.clone(),
        overwrite: a.overwrite,
        max_size: a.max_size,
        max_sessions: a.max_sessions,
        offload: !a.transport.no_offload,
    };
    let any6 = SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, a.port));
    let any4 = SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, a.port));
    let mut r = match a.bind {
        Some(ip) => Receiver::bind(SocketAddr::new(ip, a.port), options)?,
        // A host without IPv6 listens on IPv4 alone.
        None => Receiver::bind(any6, options.clone()).or_else(|_| Receiver::bind(any4, options))?,
    };
    let stop = stop_flag();
    let (gso, gro) = r.offloads();
    let on = |b: bool| if b { "on" } else { "off" };
    eprintln!(
        "receiving into {} on UDP {} (GSO {}, GRO {})",
        r.dir().display(),
        r.local_addr(),
        on(gso),
        on(gro)
    );
    // Linux doubles the request for bookkeeping and caps it at net.core.rmem_max.
    if r.recv_buffer() < longhaul_net::socket::SOCKET_BUFFER {
        eprintln!(
            "note: the socket receive buffer is {} (net.core.rmem_max caps it); a receiver busy \
             writing to disk drops what does not fit, which the sender takes as loss. Raise it: \
             sysctl -w net.core.rmem_max={} (`longhaul tune` prints the host's settings)",
            bytes(r.recv_buffer() as u64),
            2 * longhaul_net::socket::SOCKET_BUFFER
        );
    }
    let mut failures = 0;
    r.serve(&stop, a.count, |t| match &t.result {
        Ok((path, sha)) => eprintln!(
            "{}: stored {} ({}) in {:.2} s, {}; SHA-256 {sha}",
            t.peer,
            path.display(),
            bytes(t.bytes),
            t.duration.as_secs_f64(),
            bits_per_s(t.bytes as f64 * 8.0 / t.duration.as_secs_f64().max(1e-9)),
        ),
        Err(why) => {
            failures += 1;
            eprintln!(
                "{}: {} not stored: {why}",
                t.peer,
                t.name.as_deref().unwrap_or("(no file named yet)")
            );
        }
    })?;
    if failures > 0 && a.count.is_some() {
        bail!("{failures} transfer(s) failed");
    }
    Ok(())
}

fn bytes(n: u64) -> String {
    let n = n as f64;
    match n {
        n if n >= 1e12 => format!("{:.2} TB", n / 1e12),
        n if n >= 1e9 => format!("{:.2} GB", n / 1e9),
        n if n >= 1e6 => format!("{:.1} MB", n / 1e6),
        n if n >= 1e3 => format!("{:.1} kB", n / 1e3),
        n => format!("{n} B"),
    }
}

fn bits_per_s(b: f64) -> String {
    match b {
        b if b >= 1e9 => format!("{:.2} Gb/s", b / 1e9),
        b if b >= 1e6 => format!("{:.1} Mb/s", b / 1e6),
        b if b >= 1e3 => format!("{:.1} kb/s", b / 1e3),
        b => format!("{b:.0} b/s"),
    }
}
