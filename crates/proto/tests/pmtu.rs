//! Path MTU discovery between two connections over the in-memory network: data crosses every
//! change of packet size intact, lost probes are neither congestion nor data loss, the window
//! in bytes does not jump when the size does, and a black hole after a raise falls back to the
//! base and the transfer still completes.

mod common;

use common::{next_event, random_bytes, read_all, run, run_observed, Link, LinkParams, Workload};
use longhaul_cc::CcSpec;
use longhaul_proto::pmtu::{MAX_PROBES, STEP};
use longhaul_proto::{
    Cipher, Config, Connection, Identity, PeerPolicy, PmtuPhase, PmtuStats, Security, Side, Time,
    IP_UDP_OVERHEAD,
};
use std::time::Duration;

/// Reno, packets that fill 1500-byte IP packets, and a search up to `bound` (none: `None`).
fn config(bound: Option<u32>) -> Config {
    let mut c = Config::new(CcSpec::default_for("reno").unwrap());
    c.mss = Config::mss_for_mtu(1500);
    c.recv_window = 64 << 20;
    c.send_buffer = 64 << 20;
    c.pmtu_max = bound;
    c
}

/// A link of `mbit` Mb/s and 10 ms whose hop carries IP packets up to `path_mtu` bytes, with
/// a queue that never overflows in these transfers.
fn link(mbit: f64, path_mtu: usize) -> LinkParams {
    LinkParams {
        queue_packets: 1_000_000,
        max_datagram: path_mtu - IP_UDP_OVERHEAD,
        ..LinkParams::clean(mbit * 1e6, Duration::from_millis(10))
    }
}

fn pmtu(stats: PmtuStats) -> (u32, PmtuPhase, u64, u64, u64) {
    (
        stats.mtu,
        stats.phase,
        stats.raises,
        stats.probes_lost,
        stats.black_holes,
    )
}

/// A hop of 4000 bytes behind interfaces of 9000: the search ends at 3996 (the largest
/// candidate, 1500 + k·16, that fits) after four raises (3372, 3836, 3948, 3996) and six sizes
/// found too big (9000, 5244, 4300, 4060, 4028, 4012), each after MAX_PROBES lost probes. No
/// data packet is lost or counted lost, no congestion event happens, and the controller's
/// window in bytes is the same just before and just after each switch (but for what the ACK
/// that confirmed the probe itself acknowledged).
#[test]
fn data_crosses_every_size_switch_intact_and_lost_probes_cost_nothing() {
    let data = random_bytes(20_000_000, 11);
    let base_mss = Config::mss_for_mtu(1500) as u64;
    let mut before = (0u32, 0u64, 0u64);
    let mut switches = Vec::new();
    let mut client = config(Some(9000));
    // The receive window holds the queue (and the RTT) down: the search takes about 25
    // round trips.
    client.recv_window = 512 << 10;
    let out = run_observed(
        client.clone(),
        client,
        link(100.0, 4000),
        link(100.0, 4000),
        Workload::Bytes(&data),
        3,
        Time::from_millis(30_000),
        |c, after| {
            let s = c.stats();
            let now = (c.path_mtu(), s.cwnd_bytes, s.bytes_acked);
            if !after {
                before = now;
            } else if now.0 != before.0 {
                switches.push((before, now));
            }
        },
    );
    assert_eq!(out.at_server, data, "every byte intact");
    let s = out.client.stats();
    let p = s.pmtu.expect("discovery on");
    assert_eq!(
        pmtu(p),
        (3996, PmtuPhase::Complete, 4, 6 * MAX_PROBES as u64, 0),
        "{p:?}"
    );
    assert_eq!((p.probes_acked, p.probes_sent), (4, 4 + 18));
    assert_eq!(out.ab.dropped_too_big, 18, "only probes met the narrow hop");
    assert_eq!(out.ab.largest_delivered, 3996 - IP_UDP_OVERHEAD);
    assert_eq!(
        (s.packets_lost, s.congestion_events, s.rto_count),
        (0, 0, 0),
        "{s:?}"
    );
    // Data packets fill the size found; the bytes sent during the search (a quarter
    // second) went in smaller ones.
    assert_eq!(out.client.data_datagram_size(), 3996 - IP_UDP_OVERHEAD);
    assert!(
        s.packets_sent < data.len() as u64 / base_mss * 6 / 10,
        "{} data packets for {} bytes",
        s.packets_sent,
        data.len()
    );
    let sizes: Vec<(u32, u32)> = switches.iter().map(|(b, a)| (b.0, a.0)).collect();
    assert_eq!(
        sizes,
        [(1500, 3372), (3372, 3836), (3836, 3948), (3948, 3996)]
    );
    for ((_, cwnd0, acked0), (_, cwnd1, acked1)) in &switches {
        // Reno in slow start grows by what the ACK acknowledged, no more.
        let grew = cwnd1 - cwnd0;
        assert!(
            grew <= (acked1 - acked0) + base_mss,
            "window {cwnd0} → {cwnd1} B with {} B acknowledged",
            acked1 - acked0
        );
    }
}

/// Slow start grows the window by the bytes acknowledged whatever the size of their packets:
/// while data waits to be sent, the window in bytes is the initial window plus every byte
/// acknowledged, with 1500-byte packets throughout and after a switch to 9000-byte ones alike
/// (counted in packets, a 9000-byte packet's ACK would grow it by a sixth as much).
#[test]
fn slow_start_counts_bytes_not_packets_after_a_raise() {
    let data = random_bytes(4_000_000, 12);
    let base_mss = Config::mss_for_mtu(1500) as u64;
    for bound in [None, Some(9000)] {
        let (mut worst, mut checked, mut large) = (0i64, 0, 0);
        let out = run_observed(
            config(bound),
            config(None),
            link(1000.0, 9000),
            link(1000.0, 9000),
            Workload::Bytes(&data),
            3,
            Time::from_millis(30_000),
            |c, after| {
                let s = c.stats();
                // Until the last byte is sent the sender is limited by its window alone.
                if after && s.bytes_sent < data.len() as u64 {
                    let gap = (10 * base_mss + s.bytes_acked) as i64 - s.cwnd_bytes as i64;
                    worst = worst.max(gap.abs());
                    checked += 1;
                    large += usize::from(c.path_mtu() == 9000);
                }
            },
        );
        assert_eq!(out.at_server, data);
        let s = out.client.stats();
        eprintln!("bound {bound:?}: {checked} ACKs ({large} at 9000), gap at most {worst} B");
        assert_eq!(s.pmtu.map(|p| p.mtu), bound);
        assert_eq!((s.packets_lost, s.congestion_events), (0, 0));
        assert!(checked > 50 && (bound.is_none() || large + 2 >= checked));
        // The carry of a part packet, and the initial window's rounding.
        assert!(worst < base_mss as i64, "{worst} B");
    }
}

/// With the hop as wide as the bound, one probe settles it and data packets fill 9000 bytes.
/// Sealed: the probes and the data packets count the seal.
#[test]
fn a_clear_path_is_found_with_one_probe_sealed() {
    let data = random_bytes(3_000_000, 5);
    let secure = |seed: u8| {
        let mut c = config(Some(9000));
        c.security = Security::Noise {
            local: Identity::from_private([seed; 32]),
            peer: PeerPolicy::Any,
            cipher: Cipher::preferred(),
            key_limits: None,
        };
        c.mss = c.mss_for(1500);
        c
    };
    let out = run(
        secure(1),
        secure(2),
        link(1000.0, 9000),
        link(1000.0, 9000),
        Workload::Bytes(&data),
        4,
        Time::from_millis(30_000),
    );
    assert_eq!(out.at_server, data);
    let s = out.client.stats();
    assert_eq!(pmtu(s.pmtu.unwrap()), (9000, PmtuPhase::Complete, 1, 0, 0));
    assert_eq!(out.ab.largest_delivered, 9000 - IP_UDP_OVERHEAD);
    assert_eq!(out.client.data_datagram_size(), 9000 - IP_UDP_OVERHEAD);
    assert_eq!((s.packets_lost, s.congestion_events), (0, 0));
}

/// The hop narrows to 1500 bytes after the search raised the size to 9000, and says nothing:
/// every large packet vanishes. The connection falls back to the base, cuts what was not
/// acknowledged again in packets that fit, stops searching, and the transfer completes intact.
#[test]
fn a_black_hole_after_a_raise_falls_back_to_the_base_and_the_transfer_completes() {
    let data = random_bytes(8_000_000, 21);
    let mut narrowed = link(100.0, 9000);
    narrowed.narrows = Some((Time::from_millis(300), 1500 - IP_UDP_OVERHEAD));
    let out = run(
        config(Some(9000)),
        config(None),
        narrowed,
        link(100.0, 9000),
        Workload::Bytes(&data),
        7,
        Time::from_millis(60_000),
    );
    assert_eq!(out.at_server, data, "every byte intact");
    let s = out.client.stats();
    let p = s.pmtu.unwrap();
    assert_eq!(pmtu(p), (1500, PmtuPhase::BlackHole, 1, 0, 1), "{p:?}");
    assert_eq!(out.client.data_datagram_size(), 1500 - IP_UDP_OVERHEAD);
    assert!(out.ab.dropped_too_big > 0);
    // 8 MB at 100 Mb/s is 0.64 s; the fall back costs a few retransmission timeouts.
    eprintln!(
        "done at {:?}, {} RTOs, {} packets lost, {} dropped at the hop",
        out.finished_at, s.rto_count, s.packets_lost, out.ab.dropped_too_big
    );
    assert!(s.rto_count <= 4, "{s:?}");
    assert!(
        out.finished_at < Time::from_millis(5_000),
        "{:?}",
        out.finished_at
    );
}

/// Off (the default), nothing changes: no probe, no padding, packets of `mss`.
#[test]
fn off_by_default() {
    assert_eq!(Config::default().pmtu_max, None);
    let data = random_bytes(500_000, 1);
    let out = run(
        config(None),
        config(None),
        link(100.0, 9000),
        link(100.0, 9000),
        Workload::Bytes(&data),
        1,
        Time::from_millis(30_000),
    );
    assert_eq!(out.at_server, data);
    assert_eq!(out.client.stats().pmtu, None);
    assert_eq!(out.ab.largest_delivered, 1500 - IP_UDP_OVERHEAD);
    // A bound at the base searches nothing either.
    let c = Connection::new(config(Some(1500)), Side::Client, Time::ZERO).unwrap();
    assert_eq!(c.stats().pmtu, None);
    assert_eq!(STEP, 16);
}

/// The local interface's MTU goes down to 1500 bytes after the search raised the size to 9000:
/// every larger datagram fails to send (`EMSGSIZE`), the driver hands it back with
/// `on_too_big`, and the connection goes back to the base at once (no timeout) and delivers
/// every byte.
#[test]
fn an_interface_that_refuses_the_raised_size_brings_it_back_to_the_base() {
    let data = random_bytes(4_000_000, 8);
    let mut c = Connection::new(config(Some(9000)), Side::Client, Time::ZERO).unwrap();
    let mut s = Connection::new(config(None), Side::Server, Time::ZERO).unwrap();
    let (mut ab, mut ba) = (
        Link::new(link(100.0, 9000), 1),
        Link::new(link(100.0, 9000), 2),
    );
    let shrinks_at = Time::from_millis(200);
    let (mut now, mut written, mut got, mut refused) = (Time::ZERO, 0, Vec::new(), 0);
    let mut buf = vec![0u8; 65_536];
    let mut raised = false;
    while !(c.is_send_complete() && s.is_recv_finished()) {
        if written < data.len() {
            written += c.write(&data[written..]);
            if written == data.len() {
                c.finish();
            }
        }
        read_all(&mut s, &mut got);
        raised |= c.path_mtu() == 9000;
        while let Some(t) = c.poll_transmit(now, &mut buf) {
            if now >= shrinks_at && t.wire_len > 1500 - IP_UDP_OVERHEAD {
                refused += 1;
                assert!(c.on_too_big(t.packet_number.expect("a data packet")));
                continue;
            }
            ab.send(now, &buf[..t.len], t.wire_len);
        }
        while let Some(t) = s.poll_transmit(now, &mut buf) {
            ba.send(now, &buf[..t.len], t.wire_len);
        }
        let next = next_event(&ab, &ba, &c, &s).expect("something scheduled");
        now = now.max(next);
        assert!(now < Time::from_millis(20_000), "stuck: {:?}", c.stats());
        while let Some(p) = ab.pop_due(now) {
            let _ = s.handle_packet(now, &p);
        }
        while let Some(p) = ba.pop_due(now) {
            let _ = c.handle_packet(now, &p);
        }
        for e in [&mut c, &mut s] {
            if e.poll_timeout().is_some_and(|t| t <= now) {
                e.handle_timeout(now);
            }
        }
    }
    assert!(got == data, "every byte intact");
    let st = c.stats();
    let p = st.pmtu.unwrap();
    assert!(raised);
    assert_eq!(pmtu(p), (1500, PmtuPhase::BlackHole, 1, 0, 1), "{p:?}");
    assert!(refused >= 1);
    assert_eq!(st.rto_count, 0, "{st:?}");
}

/// Once the search has raised the size to 9000 bytes, a datagram carries six base-size
/// packets' payload and the initial window (ten) holds one of them. The receiver acknowledges
/// it at once, as six packets' worth of data (it acknowledges every two base-size packets):
/// counted as one packet it waited the delayed-ACK timer (25 ms) for a second datagram the
/// window did not let go, and slow start crept a round per timer. Over a 0.2 ms round trip
/// every RTT sample of the transfer stays near the path's (the stream's last datagram aside,
/// which is alone whatever its size); a wait would add the timer to it.
#[test]
fn a_window_of_one_large_datagram_is_acknowledged_at_once() {
    const LOOPBACK: usize = 65535;
    let data = random_bytes(4_000_000, 31);
    let fast_link = || LinkParams {
        queue_packets: 1_000_000,
        max_datagram: LOOPBACK - IP_UDP_OVERHEAD,
        ..LinkParams::clean(10e9, Duration::from_micros(100))
    };
    let (mut worst_rtt_us, mut samples) = (0, 0);
    let before_last = (data.len() - LOOPBACK) as u64;
    let out = run_observed(
        config(Some(LOOPBACK as u32)),
        config(None),
        fast_link(),
        fast_link(),
        Workload::Bytes(&data),
        5,
        Time::from_millis(30_000),
        |c, after| {
            let s = c.stats();
            if after && c.path_mtu() == LOOPBACK as u32 && s.bytes_acked < before_last {
                worst_rtt_us = worst_rtt_us.max(s.latest_rtt_us);
                samples += 1;
            }
        },
    );
    assert_eq!(out.at_server, data);
    let delay = config(None).max_ack_delay.as_micros() as u64;
    eprintln!("{samples} ACKs at {LOOPBACK} bytes, worst RTT {worst_rtt_us} µs");
    assert!(samples > 40, "{samples}");
    assert!(worst_rtt_us < delay / 5, "{worst_rtt_us} µs");
}
