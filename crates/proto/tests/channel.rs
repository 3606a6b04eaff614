//! End-to-end transfers through the in-memory lossy channel, for every registered algorithm:
//! data must arrive exactly once, in order, byte for byte, under random loss up to 10 %,
//! reordering, duplication and queue overflow.

mod common;

use common::{random_bytes, run, LinkParams, Workload};
use longhaul_cc::{algorithms, CcSpec};
use longhaul_proto::{Config, Time};
use std::time::Duration;

fn config(algorithm: &str, synthetic: bool) -> Config {
    Config {
        synthetic,
        recv_window: 4 << 20,
        send_buffer: 4 << 20,
        ..Config::new(CcSpec::default_for(algorithm).unwrap())
    }
}

const MBIT: f64 = 1e6;

#[test]
fn clean_path_delivers_every_byte_for_every_algorithm() {
    let data = random_bytes(3 << 20, 1);
    for a in algorithms() {
        let link = LinkParams::clean(100.0 * MBIT, Duration::from_millis(20));
        let out = run(
            config(a.name, false),
            config(a.name, false),
            link,
            link,
            Workload::Bytes(&data),
            7,
            Time::from_millis(600_000),
        );
        assert!(out.at_server == data, "{}: data corrupted", a.name);
        assert!(out.rejected.is_empty(), "{}: {:?}", a.name, out.rejected);
        let s = out.client.stats();
        assert_eq!(s.bytes_acked, data.len() as u64, "{}", a.name);
        assert_eq!(out.server.stats().bytes_delivered, data.len() as u64);
        // 3 MiB over 100 Mb/s is 0.25 s of serialization; with slow start over a 40 ms RTT it
        // must be done in well under 5 s.
        assert!(
            out.finished_at < Time::from_millis(5_000),
            "{}: took {}",
            a.name,
            out.finished_at
        );
        assert!(s.min_rtt_us >= 40_000 && s.min_rtt_us < 45_000, "{s:?}");
    }
}

#[test]
fn lossy_reordering_duplicating_path_delivers_exactly_once_in_order() {
    let data = random_bytes(2 << 20, 2);
    for a in algorithms() {
        for (i, loss) in [0.01, 0.05, 0.10].into_iter().enumerate() {
            let link = LinkParams::hostile(50.0 * MBIT, Duration::from_millis(10), loss);
            let out = run(
                config(a.name, false),
                config(a.name, false),
                link,
                link,
                Workload::Bytes(&data),
                100 + i as u64,
                Time::from_millis(3_600_000),
            );
            assert_eq!(out.at_server.len(), data.len(), "{} loss {loss}", a.name);
            assert!(
                out.at_server == data,
                "{} loss {loss}: data corrupted",
                a.name
            );
            assert!(out.rejected.is_empty(), "{}: {:?}", a.name, out.rejected);
            let c = out.client.stats();
            let s = out.server.stats();
            assert!(
                c.packets_lost > 0,
                "{} loss {loss}: no loss detected",
                a.name
            );
            assert!(c.packets_retransmitted > 0);
            assert!(out.ab.duplicated > 0, "the channel duplicated nothing");
            assert!(s.duplicate_packets > 0, "duplicates were not recognised");
            assert_eq!(s.bytes_received, data.len() as u64, "{}", a.name);
        }
    }
}

#[test]
fn synthetic_mode_counts_bytes_without_payloads() {
    for a in algorithms() {
        let mut client = config(a.name, true);
        client.send_buffer = 1 << 30;
        let link = LinkParams::hostile(100.0 * MBIT, Duration::from_millis(25), 0.02);
        let n = 5_000_000u64;
        let out = run(
            client,
            config(a.name, true),
            link,
            link,
            Workload::Synthetic(n),
            11,
            Time::from_millis(3_600_000),
        );
        assert_eq!(out.synthetic_read, n, "{}", a.name);
        let c = out.client.stats();
        // Every datagram on the wire carries its payload in wire_len but not in the buffer.
        assert!(c.wire_bytes_sent >= n + c.packets_sent * 29);
        assert_eq!(out.server.stats().bytes_received, n);
    }
}

#[test]
fn both_directions_at_once() {
    let a = random_bytes(1 << 20, 3);
    let b = random_bytes(700_000, 4);
    let link = LinkParams::hostile(20.0 * MBIT, Duration::from_millis(30), 0.05);
    let out = run(
        config("reno", false),
        config("reno", false),
        link,
        link,
        Workload::Both(&a, &b),
        5,
        Time::from_millis(3_600_000),
    );
    assert!(out.at_server == a);
    assert!(out.at_client == b);
}

#[test]
fn mismatched_modes_are_refused_in_the_handshake() {
    use longhaul_proto::{Connection, PacketError, Side};
    let now = Time::ZERO;
    let mut c = Connection::new(config("reno", true), Side::Client, now).unwrap();
    let mut s = Connection::new(config("reno", false), Side::Server, now).unwrap();
    let mut buf = vec![0u8; 2048];
    let t = c.poll_transmit(now, &mut buf).unwrap();
    assert_eq!(
        s.handle_packet(now, &buf[..t.len]),
        Err(PacketError::ModeMismatch {
            local: "real",
            peer: "synthetic"
        })
    );
    // The server answers with a close and is closed.
    let t = s.poll_transmit(now, &mut buf).unwrap();
    assert_eq!(t.kind, longhaul_proto::PacketKind::Close);
    assert!(s.is_closed());
    c.handle_packet(now, &buf[..t.len]).unwrap();
    assert!(c.is_closed());
}
