//! `probe` against a probe server on loopback: the handshake, the probe datagrams, the reports
//! and the refusals, without a bottleneck (loopback spreads no train, so the capacity is left
//! out with a note).

use longhaul_net::admission::Limits;
use longhaul_probe::{probe, ProbeError, ProbeOptions, Server};
use longhaul_proto::secure::{Identity, PeerPolicy, Security};
use longhaul_proto::Config;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

fn config(security: Security) -> Config {
    longhaul_probe::run::config(security)
}

fn keys() -> (Identity, Identity) {
    (
        Identity::from_private([1; 32]),
        Identity::from_private([2; 32]),
    )
}

/// A server on loopback, serving one session on a thread; its address.
fn server(security: Security) -> (SocketAddr, std::thread::JoinHandle<usize>) {
    let mut s = Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        config(security),
        Limits::default(),
    )
    .unwrap();
    let addr = s.local_addr();
    let h = std::thread::spawn(move || {
        static STOP: AtomicBool = AtomicBool::new(false);
        s.serve(&STOP, Some(1), |_| {}).unwrap()
    });
    (addr, h)
}

fn options(security: Security) -> ProbeOptions {
    let mut o = ProbeOptions::new(config(security));
    o.time_limit = Duration::from_secs(10);
    o.pings = 10;
    o.trains = 4;
    o
}

#[test]
fn an_authenticated_probe_measures_loopback() {
    let (prober, server_key) = keys();
    let allowed: HashSet<[u8; 32]> = [prober.public_key()].into();
    let (addr, h) = server(Security::noise(
        server_key.clone(),
        PeerPolicy::AllowList(Arc::new(allowed)),
    ));
    let stop = AtomicBool::new(false);
    let o = options(Security::noise(
        prober,
        PeerPolicy::Exactly(server_key.public_key()),
    ));
    let r = probe(addr, o, &stop).unwrap();
    // The prober's close ends the server's session at once, not its 10-s idle timer.
    let done = std::time::Instant::now();
    assert_eq!(h.join().unwrap(), 1);
    assert!(
        done.elapsed() < Duration::from_secs(3),
        "the session outlived its prober by {:?}",
        done.elapsed()
    );
    // Loopback carries any size: the search ends in its first round at the largest packet.
    let m = r.path_mtu.as_ref().expect("path MTU");
    assert_eq!((m.value, m.low, m.high), (1500.0, 1500.0, 1500.0), "{m:?}");
    assert_eq!(r.datagram, 1472);
    let rtt = r.rtt.as_ref().expect("pings answered");
    assert_eq!(rtt.samples, 10);
    assert!(rtt.value > 0.0 && rtt.value < 0.01, "{rtt:?}");
    assert!(r.jitter.is_some());
    // Loopback delivers the trains as fast as they are sent: nothing to disperse them, and
    // the report says so rather than giving the sender's rate as a capacity.
    if r.capacity.is_none() {
        assert!(
            r.notes.iter().any(|n| n.contains("no train was spread")),
            "{r:?}"
        );
    }
    assert_eq!(r.packets_received, r.packets_sent, "{r:?}");
    assert!(r.packets_sent >= 4 * 48, "{r:?}");
    let loss = r.loss.as_ref().expect("the pings' loss");
    assert_eq!((loss.value, loss.samples), (0.0, 10), "{loss:?}");
    let text = r.lines().join("\n");
    assert!(text.contains("base RTT"), "{text}");
    let json = serde_json::to_value(&r).unwrap();
    assert!(json["rtt"]["value"].as_f64().unwrap() > 0.0, "{json}");
}

#[test]
fn a_server_with_another_key_is_refused_before_any_measurement() {
    let (prober, server_key) = keys();
    let (addr, _h) = server(Security::noise(server_key, PeerPolicy::Any));
    let impostor = Identity::from_private([3; 32]).public_key();
    let stop = AtomicBool::new(false);
    let mut o = options(Security::noise(prober, PeerPolicy::Exactly(impostor)));
    o.connect_timeout = Duration::from_secs(2);
    let e = probe(addr, o, &stop).unwrap_err();
    assert!(matches!(e, ProbeError::Net(_)), "the handshake fails: {e}");
}

#[test]
fn a_prober_whose_key_is_not_authorized_gets_no_measurement() {
    let (prober, server_key) = keys();
    let stranger = Identity::from_private([4; 32]);
    let allowed: HashSet<[u8; 32]> = [prober.public_key()].into();
    let (addr, _h) = server(Security::noise(
        server_key.clone(),
        PeerPolicy::AllowList(Arc::new(allowed)),
    ));
    let stop = AtomicBool::new(false);
    let mut o = options(Security::noise(
        stranger,
        PeerPolicy::Exactly(server_key.public_key()),
    ));
    o.connect_timeout = Duration::from_secs(2);
    assert!(probe(addr, o, &stop).is_err());
}

#[test]
fn nothing_listening_is_a_clear_error() {
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = sock.local_addr().unwrap();
    drop(sock);
    let stop = AtomicBool::new(false);
    let e = probe(addr, options(Security::Off), &stop).unwrap_err();
    assert!(e.to_string().contains("nothing listens"), "{e}");
}
