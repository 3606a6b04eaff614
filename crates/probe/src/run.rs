//! A probe as `longhaul probe` runs it, from the command line's values: the connection's
//! settings, the probe datagram that fills the path MTU, the measurement ([`run`]: [`probe`])
//! and the server's loop ([`serve`]: [`Server`]). The caller brings each end's security
//! (`longhaul_net::trust`, as `send` and `recv`) and prints what it is told.

use crate::client::{probe, ProbeError, ProbeOptions};
use crate::report::Report;
use crate::server::Server;
use longhaul_cc::CcSpec;
use longhaul_net::admission::Limits;
use longhaul_net::send::TrustHook;
use longhaul_proto::secure::Security;
use longhaul_proto::Config;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// What the command line sets of a measurement.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// The path MTU: probe packets fill it.
    pub mtu: u32,
    /// The longest the measurement may take.
    pub time_limit: Duration,
    /// The most bytes of probe packets to send.
    pub byte_limit: u64,
    /// Pings for the base RTT.
    pub pings: usize,
}

/// The connection's settings for a probe with `security` over a path of `mtu`: the FAST
/// control, a 4 MiB window and a 30 s idle timeout (the connection carries only control
/// messages).
pub fn config(security: Security, mtu: u32) -> Result<Config, ProbeError> {
    let cc: CcSpec = "fast"
        .parse()
        .map_err(|e| ProbeError::Usage(format!("{e}")))?;
    longhaul_net::host_config(cc, security, mtu, 4 << 20, Duration::from_secs(30))
        .map_err(|e| ProbeError::Usage(format!("--mtu {mtu}: {e}")))
}

/// The UDP payload of a probe datagram that fills `mtu` toward `peer` (less 28 bytes of IPv4
/// and UDP headers, 48 of IPv6).
pub fn datagram(mtu: u32, peer: SocketAddr) -> Result<usize, ProbeError> {
    let ip_header = if peer.is_ipv6() { 48 } else { 28 };
    (mtu as usize)
        .checked_sub(ip_header)
        .filter(|d| *d >= crate::wire::MIN_DATAGRAM)
        .ok_or_else(|| ProbeError::Usage(format!("--mtu {mtu} is too small for a probe packet")))
}

/// Measures the path to the probe server at `host` (`HOST`, `HOST:PORT` or `[IPv6]:PORT`) with
/// `security`; `on_peer_key` as [`ProbeOptions::on_peer_key`]; `stop` ends it.
pub fn run(
    host: &str,
    (security, on_peer_key): (Security, Option<TrustHook>),
    settings: &Settings,
    stop: &AtomicBool,
) -> Result<Report, ProbeError> {
    let peer = longhaul_net::resolve(host).map_err(ProbeError::Usage)?;
    let mut options = ProbeOptions::new(config(security, settings.mtu)?);
    options.on_peer_key = on_peer_key;
    options.time_limit = settings.time_limit;
    options.byte_limit = settings.byte_limit;
    options.pings = settings.pings;
    options.datagram = datagram(settings.mtu, peer)?;
    probe(peer, options, stop)
}

/// Serves probes on `addr` with `security` over a path of `mtu` until `count` have ended
/// (`None`: until `stop`); says where it listens, then one line for each probe that ends.
pub fn serve(
    addr: SocketAddr,
    security: Security,
    mtu: u32,
    count: Option<usize>,
    stop: &AtomicBool,
    say: &mut dyn FnMut(&str),
) -> Result<usize, ProbeError> {
    let mut server = Server::bind(addr, config(security, mtu)?, Limits::default())?;
    say(&format!("serving probes on {}", server.local_addr()));
    Ok(server.serve(stop, count, |end| {
        let how = end.error.as_deref().unwrap_or("done");
        say(&format!(
            "probe from {}: {} trains, {how}",
            end.peer, end.trains
        ));
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_datagram_fills_the_mtu_less_the_ip_and_udp_headers() {
        let v4: SocketAddr = "192.0.2.1:5301".parse().unwrap();
        let v6: SocketAddr = "[2001:db8::1]:5301".parse().unwrap();
        assert_eq!(datagram(1500, v4).unwrap(), 1472);
        assert_eq!(datagram(1500, v6).unwrap(), 1452);
        let e = datagram(40, v4).unwrap_err().to_string();
        assert_eq!(e, "--mtu 40 is too small for a probe packet");
        assert!(config(Security::Off, 1500).is_ok());
        assert!(config(Security::Off, 10)
            .unwrap_err()
            .to_string()
            .starts_with("--mtu 10: "));
    }
}
