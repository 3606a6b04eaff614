//! The size of a sender's datagrams: `--mtu N` fixes the IP packet size at N bytes; `--mtu auto`
//! (the default) starts at [`BASE`] (1500) and lets the connection's path MTU discovery
//! (`longhaul_proto::pmtu`: padded probes, a binary search, black-hole fall back) raise it up to
//! what the route carries.
//!
//! The search's bound is the path MTU the kernel holds for the sender's connected socket
//! (`IP_MTU`: the interface's, or less where an ICMP message lowered it), at most [`AUTO_CAP`].
//! While searching, the socket sends every datagram with don't-fragment set and regardless of
//! the kernel's own path MTU estimate (`IP_PMTUDISC_PROBE`), so a probe too big for some hop is
//! lost rather than fragmented (a fragmented probe would pass and raise the size wrongly), and
//! no datagram is refused for a size the search has confirmed. A route whose MTU is below the
//! base (a tunnel) makes its MTU the size, without a search. Sizes count an IPv4 header (as
//! `--mtu` does): over IPv6 the route's MTU counts 20 bytes less. The receiver needs nothing: it
//! reads every datagram into a 64 KiB buffer.
//!
//! Why the cap is [`AUTO_CAP`]: bench/README.md, "Datagrams as large as the path carries".

use crate::socket::{kernel_path_mtu, set_probe_path_mtu};
use longhaul_proto::pmtu::MAX_MTU;
use longhaul_proto::{Config, PmtuPhase, Stats};
use serde::Serialize;
use std::fmt;
use std::net::UdpSocket;
use std::str::FromStr;

/// The IP packet size a transfer starts from, and `--mtu auto`'s base: Ethernet's.
pub const BASE: u32 = 1500;
/// The largest size `--mtu auto` searches up to, whatever the route allows: the largest IP
/// packet. Only loopback and a few interconnects (IP over InfiniBand) carry more than 9000;
/// over loopback 64 KiB datagrams cost the least CPU per byte, and lose no more bytes than
/// smaller ones (bench/README.md, "Datagrams as large as the path carries").
pub const AUTO_CAP: u32 = MAX_MTU;
/// The smallest `--mtu` (IPv4's minimum reassembly size, RFC 791).
pub const MIN_MTU: u32 = 576;
/// Bytes an IPv6 header has beyond IPv4's.
const IPV6_EXTRA: u32 = 20;

/// `--mtu`: a fixed IP packet size, or a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mtu {
    /// Start at [`BASE`] and search up to the route's MTU, at most [`AUTO_CAP`].
    Auto,
    /// Fill IP packets of this size; no search.
    Fixed(u32),
}

impl FromStr for Mtu {
    type Err = String;
    fn from_str(s: &str) -> Result<Mtu, String> {
        if s == "auto" {
            return Ok(Mtu::Auto);
        }
        let why = || format!("--mtu takes `auto` or a size from {MIN_MTU} to {MAX_MTU} bytes");
        let n: u32 = s.parse().map_err(|_| why())?;
        if !(MIN_MTU..=MAX_MTU).contains(&n) {
            return Err(why());
        }
        Ok(Mtu::Fixed(n))
    }
}

impl fmt::Display for Mtu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mtu::Auto => f.write_str("auto"),
            Mtu::Fixed(n) => write!(f, "{n}"),
        }
    }
}

impl Mtu {
    /// The size the connection starts with (its `mss` fills it).
    pub fn base(self) -> u32 {
        match self {
            Mtu::Auto => BASE,
            Mtu::Fixed(n) => n,
        }
    }

    /// The search's bound before the route is known (`Config::pmtu_max`; `None`: no search).
    pub fn bound(self) -> Option<u32> {
        match self {
            Mtu::Auto => Some(AUTO_CAP),
            Mtu::Fixed(_) => None,
        }
    }
}

/// What the route said, for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Route {
    /// The bound asked for (`None`: a fixed size).
    pub cap: Option<u32>,
    /// The path MTU the kernel held for the connected socket, where it said.
    pub kernel: Option<u32>,
}

/// For a sender's connected socket, before its connection is created: lowers the search's
/// bound (`config.pmtu_max`, the cap) to the route's MTU, or drops the search where the route
/// carries no more than the base (and starts below it where the route does); switches the
/// socket to don't-fragment probing when a search remains. A socket that cannot say its path
/// MTU, or refuses probing, is not searched on.
pub fn fit_to_route(sock: &UdpSocket, config: &mut Config) -> Route {
    let Some(cap) = config.pmtu_max else {
        return Route::default();
    };
    config.pmtu_max = None;
    let kernel = kernel_path_mtu(sock).ok();
    let route = Route {
        cap: Some(cap),
        kernel,
    };
    let Some(kernel) = kernel else {
        return route;
    };
    // Sizes count an IPv4 header, as `--mtu` does; IPv6's is 20 bytes longer.
    let v6 = sock.local_addr().is_ok_and(|a| a.is_ipv6());
    let usable = kernel.saturating_sub(if v6 { IPV6_EXTRA } else { 0 });
    if usable < config.base_mtu() && usable >= MIN_MTU {
        config.mss = config.mss_for(usable);
    }
    let bound = cap.min(usable).min(MAX_MTU);
    if bound > config.base_mtu() && set_probe_path_mtu(sock).is_ok() {
        config.pmtu_max = Some(bound);
    }
    route
}

/// How the size of a transfer's datagrams was settled (`send -J`'s `path_mtu`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathMtu {
    /// Black holes met: losses of raised-size packets that brought the size back to the base.
    pub black_holes: u64,
    /// The largest size the search could try: the route's MTU, at most the cap (`None`: no
    /// search).
    pub bound: Option<u32>,
    /// `fixed` (`--mtu N`), `route` (the route carries no more than the base, or says nothing),
    /// `searched`, `searching` (the transfer ended before the search did) or `black hole`.
    pub how: &'static str,
    /// The path MTU the kernel held for the route (`IP_MTU`), where it was asked.
    pub kernel: Option<u32>,
    /// The IP packet size full data packets filled at the end, bytes.
    pub mtu: u32,
    /// Probe packets lost (each a size the path did not carry, or a random loss).
    pub probes_lost: u64,
    /// Probe packets sent.
    pub probes_sent: u64,
}

impl PathMtu {
    /// The report of a connection whose data packets filled `base` bytes at the start, with
    /// `stats` at the end, on `route`.
    pub fn new(stats: &Stats, base: u32, route: Route) -> PathMtu {
        let p = stats.pmtu;
        let how = match (p, route.cap) {
            (_, None) => "fixed",
            (None, Some(_)) => "route",
            (Some(p), _) => match p.phase {
                PmtuPhase::Searching => "searching",
                PmtuPhase::Complete => "searched",
                PmtuPhase::BlackHole => "black hole",
            },
        };
        PathMtu {
            black_holes: p.map_or(0, |p| p.black_holes),
            bound: p.map(|p| p.bound),
            how,
            kernel: route.kernel,
            mtu: p.map_or(base, |p| p.mtu),
            probes_lost: p.map_or(0, |p| p.probes_lost),
            probes_sent: p.map_or(0, |p| p.probes_sent),
        }
    }

    /// For people: `path MTU 9000 (searched from 1500 up to 9000, the route's 65535 capped;
    /// probes: 1 sent, 0 lost)`.
    pub fn line(&self) -> String {
        let route = match self.kernel {
            Some(k) => format!("the route's {k}"),
            None => "the route's unknown".to_string(),
        };
        let searched = |what: &str| {
            let bound = self.bound.unwrap_or(self.mtu);
            let capped = if self.kernel.is_some_and(|k| k > bound) {
                " capped"
            } else {
                ""
            };
            format!(
                "{what} from {BASE} up to {bound}, {route}{capped}; probes: {} sent, {} lost",
                self.probes_sent, self.probes_lost
            )
        };
        let how = match self.how {
            "fixed" => "fixed by --mtu".to_string(),
            "route" => format!("{route}: nothing to search"),
            "black hole" => format!(
                "{}; larger packets then vanished: back at {BASE}, a black hole",
                searched("searched")
            ),
            what => searched(what),
        };
        format!("path MTU {} ({how})", self.mtu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use longhaul_proto::pmtu::PmtuSearch;

    #[test]
    fn mtu_takes_auto_or_a_size_in_range_with_a_clear_error() {
        assert_eq!("auto".parse(), Ok(Mtu::Auto));
        assert_eq!("9000".parse(), Ok(Mtu::Fixed(9000)));
        for bad in ["575", "65536", "big", "", "-1"] {
            let e = bad.parse::<Mtu>().unwrap_err();
            assert!(e.contains("`auto` or a size from 576 to 65535"), "{e}");
        }
        assert_eq!(
            (Mtu::Auto.base(), Mtu::Auto.bound()),
            (1500, Some(AUTO_CAP))
        );
        assert_eq!(
            (Mtu::Fixed(9000).base(), Mtu::Fixed(9000).bound()),
            (9000, None)
        );
        assert_eq!(Mtu::Auto.to_string(), "auto");
    }

    /// Over loopback (an interface of 65536 bytes; the kernel says 65535, the largest IP
    /// packet) the bound is the cap; a fixed size asks nothing of the route.
    #[test]
    fn the_route_bounds_the_search() {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect(sock.local_addr().unwrap()).unwrap();
        let mut c = Config {
            mss: Config::mss_for_mtu(1500),
            pmtu_max: Some(9000),
            ..Config::default()
        };
        let route = fit_to_route(&sock, &mut c);
        assert_eq!(route.kernel, Some(65535));
        assert_eq!(c.pmtu_max, Some(9000));
        // Over IPv6 the route's MTU counts 20 bytes less (sizes count an IPv4 header).
        if let Ok(six) = UdpSocket::bind("[::1]:0") {
            six.connect(six.local_addr().unwrap()).unwrap();
            c.pmtu_max = Some(AUTO_CAP);
            let route = fit_to_route(&six, &mut c);
            let kernel = route.kernel.expect("IPV6_MTU");
            assert_eq!(c.pmtu_max, Some(kernel - 20), "{route:?}");
        }
        c.pmtu_max = Some(200_000);
        fit_to_route(&sock, &mut c);
        assert_eq!(c.pmtu_max, Some(MAX_MTU));
        c.pmtu_max = Some(1500);
        fit_to_route(&sock, &mut c);
        assert_eq!(c.pmtu_max, None, "nothing above the base to search");
        c.pmtu_max = None;
        assert_eq!(fit_to_route(&sock, &mut c), Route::default());
    }

    #[test]
    fn the_report_says_how_the_size_was_settled() {
        let route = Route {
            cap: Some(9000),
            kernel: Some(65535),
        };
        let mut stats = Stats::default();
        let mut search = PmtuSearch::new(1500, 9000);
        search.on_probe_sent(0);
        search.on_probe_acked(0);
        stats.pmtu = Some(search.stats());
        let p = PathMtu::new(&stats, 1500, route);
        assert_eq!((p.mtu, p.how, p.probes_sent), (9000, "searched", 1));
        assert_eq!(
            p.line(),
            "path MTU 9000 (searched from 1500 up to 9000, the route's 65535 capped; \
             probes: 1 sent, 0 lost)"
        );
        let fixed = PathMtu::new(&Stats::default(), 9000, Route::default());
        assert_eq!((fixed.mtu, fixed.how), (9000, "fixed"));
        assert_eq!(fixed.line(), "path MTU 9000 (fixed by --mtu)");
        let narrow = Route {
            cap: Some(9000),
            kernel: Some(1400),
        };
        let r = PathMtu::new(&Stats::default(), 1400, narrow);
        assert_eq!(
            r.line(),
            "path MTU 1400 (the route's 1400: nothing to search)"
        );
    }
}
