//! A probe as `longhaul probe` runs it, from the command line's values: the connection's
//! settings, the largest probe datagram (the interface's MTU, or `--mtu`; the measurement
//! searches the path MTU below it), the measurement ([`run`]: [`probe`]), the measurement of a
//! probe server started over ssh for it ([`over_ssh`]: `longhaul probe [user@]host:`) and the
//! server's loop ([`bind`], [`serve`]: [`Server`]). The caller brings each end's security
//! (`longhaul_net::trust`, as `send` and `recv`) and prints what it is told.

use crate::client::{probe, ProbeError, ProbeOptions};
use crate::report::Report;
use crate::server::Server;
use longhaul_cc::CcSpec;
use longhaul_net::admission::Limits;
use longhaul_net::destination::SshTarget;
use longhaul_net::send::TrustHook;
use longhaul_net::ssh::{self, LaunchError, LaunchOptions};
use longhaul_proto::secure::Security;
use longhaul_proto::Config;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// What the command line sets of a measurement.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// The largest IP packet to probe with (`None`: the MTU of the interface toward the
    /// server); the path MTU is searched below it and probe packets fill it.
    pub mtu: Option<u32>,
    /// The longest the measurement may take.
    pub time_limit: Duration,
    /// The most bytes of probe packets to send.
    pub byte_limit: u64,
    /// Pings for the base RTT.
    pub pings: usize,
}

/// The IP packet of the probe's connection, bytes: RFC 8899's base size
/// ([`crate::mtu::BASE`]), which every path is expected to carry, so that the connection
/// works before the path MTU is known and on a path that drops larger packets unannounced.
pub const CONTROL_MTU: u32 = crate::mtu::BASE;

/// The connection's settings for a probe with `security`, both ends': the FAST control, a
/// 4 MiB window, a 30 s idle timeout and packets of [`CONTROL_MTU`] (the connection carries
/// only control messages).
pub fn config(security: Security) -> Config {
    let cc: CcSpec = "fast".parse().expect("a known controller");
    longhaul_net::host_config(cc, security, CONTROL_MTU, 4 << 20, Duration::from_secs(30))
        .expect("valid settings")
}

/// The MTU of the interface the route to `peer` leaves by (the kernel's path MTU for it).
pub fn interface_mtu(peer: SocketAddr) -> Result<u32, ProbeError> {
    let local: SocketAddr = if peer.is_ipv6() {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    };
    let s = std::net::UdpSocket::bind(local)
        .and_then(|s| s.connect(peer).map(|()| s))
        .map_err(|e| ProbeError::Net(longhaul_net::NetError::Socket(e)))?;
    longhaul_net::socket::kernel_path_mtu(&s)
        .map_err(|e| ProbeError::Net(longhaul_net::NetError::Socket(e)))
}

/// The UDP payload of a probe datagram that fills `mtu` toward `peer` (less 28 bytes of IPv4
/// and UDP headers, 48 of IPv6).
pub fn datagram(mtu: u32, peer: SocketAddr) -> Result<usize, ProbeError> {
    let ip_header = crate::client::ip_overhead(peer);
    (mtu as usize)
        .checked_sub(ip_header)
        .filter(|d| *d >= crate::wire::MIN_DATAGRAM)
        .ok_or_else(|| ProbeError::Usage(format!("--mtu {mtu} is too small for a probe packet")))
}

/// Measures the path to the probe server at `host` (`HOST`, `HOST:PORT` or `[IPv6]:PORT`) with
/// `security`; `on_peer_key` as [`ProbeOptions::on_peer_key`]; `stop` ends it.
pub fn run(
    host: &str,
    trust: (Security, Option<TrustHook>),
    settings: &Settings,
    stop: &AtomicBool,
) -> Result<Report, ProbeError> {
    let peer = longhaul_net::resolve(host).map_err(ProbeError::Usage)?;
    measure(peer, trust, settings, stop)
}

fn measure(
    peer: SocketAddr,
    (security, on_peer_key): (Security, Option<TrustHook>),
    settings: &Settings,
    stop: &AtomicBool,
) -> Result<Report, ProbeError> {
    let mtu = match settings.mtu {
        Some(m) => m,
        // An IP packet has at most 65,535 bytes, whatever the interface allows.
        None => interface_mtu(peer)?.min(65_535),
    };
    let mut options = ProbeOptions::new(config(security));
    options.on_peer_key = on_peer_key;
    options.time_limit = settings.time_limit;
    options.byte_limit = settings.byte_limit;
    options.pings = settings.pings;
    options.datagram = datagram(mtu, peer)?;
    probe(peer, options, stop)
}

/// `longhaul probe [user@]host:`: starts `longhaul probe --serve` for one probe on `target`
/// through ssh as `send` starts its receiver ([`longhaul_net::ssh`], with `launch.remote`
/// [`ssh::Remote::ProbeServer`]), and measures the path to the port it announces, the two ends
/// holding the one-time keys that crossed the ssh channel. Returns the report and how the
/// remote server ended (it exits after the probe; a measurement that fails stops it). Says
/// what it starts on standard error unless `quiet`.
pub fn over_ssh(
    target: &SshTarget,
    launch: &LaunchOptions,
    settings: &Settings,
    stop: &AtomicBool,
    quiet: bool,
) -> Result<(Report, Result<(), LaunchError>), ProbeError> {
    if target.dir != "." {
        return Err(ProbeError::Usage(format!(
            "{}:{}: a probe server keeps no files; write {}: (nothing after the colon) to \
             start one over ssh",
            target.login(),
            target.dir,
            target.login()
        )));
    }
    let launched = ssh::launch(target, launch, stop, quiet).map_err(Box::new)?;
    let security = launched.security().map_err(ProbeError::Usage)?;
    let report = measure(launched.addr, (security, None), settings, stop).map_err(|e| match e {
        ProbeError::Net(error) => match launched.explain(&error) {
            Some(why) => ProbeError::Unreachable {
                why,
                error: Box::new(error),
            },
            None => ProbeError::Net(error),
        },
        e => e,
    })?;
    Ok((report, launched.finish(stop)))
}

/// A probe server bound to `port` on `ip` (`None`: every IPv6 and IPv4 address, or IPv4's
/// alone where the host has no IPv6) with `security`.
pub fn bind(ip: Option<IpAddr>, port: u16, security: Security) -> Result<Server, ProbeError> {
    Ok(Server::bind_port(
        ip,
        port,
        config(security),
        Limits::default(),
    )?)
}

/// Serves probes on `server` until `count` have ended (`None`: until `stop`); says where it
/// listens, then one line for each probe that ends.
pub fn serve(
    mut server: Server,
    count: Option<usize>,
    stop: &AtomicBool,
    say: &mut dyn FnMut(&str),
) -> Result<usize, ProbeError> {
    say(&format!("serving probes on {}", server.local_addr()));
    Ok(server.serve(stop, count, |end| {
        let how = end.error.as_deref().unwrap_or("done");
        let served = end.served.as_deref().unwrap_or("not a probe");
        say(&format!("{}: {served}, {how}", end.peer));
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
        assert_eq!(config(Security::Off).max_datagram_size(), 1200 - 28);
    }
}
