//! Connection-level behaviour with hand-computed numbers: the handshake's RTT sample, the
//! retransmission timeout and its backoff, pacing release times, rejection of out-of-window
//! and impossible packets, and a 2-million-packet window processed with constant work per packet.

use longhaul_cc::{CcSpec, Setup};
use longhaul_proto::packet::{self, AckFields, AckRange, DataHeader};
use longhaul_proto::{Config, Connection, PacketError, PacketKind, SendState, Side, Time};
use std::time::Duration;

fn reno(initial_cwnd: f64, synthetic: bool) -> Config {
    Config {
        synthetic,
        setup: Setup {
            initial_cwnd,
            ..Setup::default()
        },
        ..Config::new(CcSpec::default_for("reno").unwrap())
    }
}

fn ms(v: u64) -> Time {
    Time::from_millis(v)
}

/// Client and server after a handshake with a 100 ms RTT (the answer arrives at `t = 100 ms`).
fn established(client: Config, server: Config) -> (Connection, Connection) {
    let mut c = Connection::new(client, Side::Client, ms(0)).unwrap();
    let mut s = Connection::new(server, Side::Server, ms(0)).unwrap();
    let mut buf = vec![0u8; 70_000];
    let t = c.poll_transmit(ms(0), &mut buf).unwrap();
    assert_eq!(t.kind, PacketKind::Handshake);
    assert!(c.poll_transmit(ms(0), &mut buf).is_none());
    s.handle_packet(ms(50), &buf[..t.len]).unwrap();
    assert!(s.is_established());
    let t = s.poll_transmit(ms(50), &mut buf).unwrap();
    assert_eq!(t.kind, PacketKind::Handshake);
    c.handle_packet(ms(100), &buf[..t.len]).unwrap();
    assert!(c.is_established());
    (c, s)
}

#[test]
fn handshake_gives_the_first_rtt_sample() {
    let (c, _) = established(reno(10.0, false), reno(10.0, false));
    let st = c.stats();
    assert_eq!(
        (st.srtt_us, st.rttvar_us, st.min_rtt_us),
        (100_000, 50_000, 100_000)
    );
}

#[test]
fn the_controller_gets_the_handshake_rtt() {
    // FAST: the handshake's 100 ms is its baseRTT. The first data ACK then reports at least
    // 135 ms, so it sees 35 ms of queueing: a γ-update (`fast_convergence`), not an MI step.
    // Without the handshake sample it would take that ACK's RTT as the propagation delay, see
    // no queue and stay in `slow_start`. (`mi_backlog=0`: with its default, MI would also go
    // on, since 35 ms under a one-packet window is a quarter packet of this flow's own.)
    let fast = || Config {
        synthetic: true,
        ..Config::new("fast:mi_backlog=0".parse().unwrap())
    };
    let (mut c, mut s) = established(fast(), fast());
    let mut buf = vec![0u8; 2000];
    let mut ack = vec![0u8; 2000];
    c.write_synthetic(1 << 20);
    let t = c.poll_transmit(ms(100), &mut buf).unwrap();
    assert_eq!(t.kind, PacketKind::Data);
    // One packet: the receiver acknowledges it when its 25 ms ACK delay runs out, at 190 ms.
    s.handle_packet(ms(165), &buf[..t.len]).unwrap();
    let t = s.poll_transmit(ms(190), &mut ack).unwrap();
    assert_eq!(t.kind, PacketKind::Ack);
    // 160 ms after sending (135 ms once the 25 ms ACK delay is taken off): q ≥ 35 ms.
    c.handle_packet(ms(260), &ack[..t.len]).unwrap();
    assert_eq!(c.cc().phase(), "fast_convergence");
}

/// A datagram handled later than it arrived (the driver was busy or preempted): the RTT
/// sample and the ACK delay count from its arrival, so the wait for the driver is not taken
/// for delay on the path. The same exchange handled at the arrival times gives the same RTT.
#[test]
fn rtt_and_ack_delay_count_from_the_arrival_not_the_handling() {
    let run = |late: Duration| {
        let (mut c, mut s) = established(reno(10.0, false), reno(10.0, false));
        let mut buf = vec![0u8; 2000];
        let mut ack = vec![0u8; 2000];
        assert_eq!(c.write(&[7u8; 1448]), 1448);
        let t = c.poll_transmit(ms(100), &mut buf).unwrap();
        assert_eq!(t.kind, PacketKind::Data);
        // Arrives at 150 ms; the receiver gets to it `late` after that and sends its ACK when
        // its 25 ms delay, counted from the arrival, runs out.
        s.handle_packet_at(ms(150) + late, ms(150), &buf[..t.len], false)
            .unwrap();
        assert_eq!(s.poll_timeout(), Some(ms(175)));
        let at = (ms(175)).max(ms(150) + late);
        s.handle_timeout(at);
        let t = s.poll_transmit(at, &mut ack).unwrap();
        assert_eq!(t.kind, PacketKind::Ack);
        // The ACK arrives 50 ms after it left and is handled `late` after that.
        c.handle_packet_at(
            at + Duration::from_millis(50) + late,
            at + Duration::from_millis(50),
            &ack[..t.len],
            false,
        )
        .unwrap();
        let st = c.stats();
        (st.latest_rtt_us, st.srtt_us)
    };
    // Sent at 100 ms, the ACK back at 225 ms: 125 ms, of which the receiver's 25 ms ACK delay
    // is taken off in the smoothed RTT (after the handshake's 100 ms: 7/8·100 + 1/8·100).
    assert_eq!(run(Duration::ZERO), (125_000, 100_000));
    // Handled 5 ms late at each end: the same. (Counted from the handling, the sample would
    // be 130 ms, and the ACK delay 20 ms: a smoothed 100.625 ms.)
    assert_eq!(run(Duration::from_millis(5)), (125_000, 100_000));
    // 40 ms late at the receiver: the ACK leaves at 190 ms, 40 ms after the arrival, and only
    // `max_ack_delay` (25 ms) of it is taken off, as the peer promised no more:
    // 7/8·100 + 1/8·(140 − 25) = 101.875 ms.
    assert_eq!(run(Duration::from_millis(40)), (140_000, 101_875));
}

#[test]
fn lost_handshakes_are_resent_with_backoff() {
    let mut c = Connection::new(reno(10.0, false), Side::Client, ms(0)).unwrap();
    let mut buf = vec![0u8; 2000];
    c.poll_transmit(ms(0), &mut buf).unwrap();
    // No RTT sample yet: the initial RTO (1 s), then 2 s, then 4 s.
    let mut expected = vec![];
    let mut at = ms(0);
    for step in [1000, 2000, 4000] {
        at += Duration::from_millis(step);
        expected.push(at);
    }
    let mut seen = vec![];
    for _ in 0..3 {
        let t = c.poll_timeout().unwrap();
        seen.push(t);
        c.handle_timeout(t);
        let tx = c.poll_transmit(t, &mut buf).unwrap();
        assert_eq!(tx.kind, PacketKind::Handshake);
    }
    assert_eq!(seen, expected);
}

#[test]
fn rto_fires_at_srtt_plus_4_rttvar_plus_ack_delay_and_backs_off() {
    let (mut c, _) = established(reno(10.0, false), reno(10.0, false));
    let mut buf = vec![0u8; 2000];
    assert_eq!(c.write(&[7u8; 3 * 1448]), 3 * 1448);
    let mut sent = 0;
    while let Some(t) = c.poll_transmit(ms(100), &mut buf) {
        assert_eq!(t.kind, PacketKind::Data);
        sent += 1;
    }
    assert_eq!(sent, 3);
    // RTO = 100 + 4·50 + 25 (max_ack_delay) = 325 ms after the last send.
    assert_eq!(c.poll_timeout(), Some(ms(425)));
    c.handle_timeout(ms(425));
    let s = c.stats();
    assert_eq!((s.rto_count, s.packets_lost, s.bytes_in_flight), (1, 3, 0));
    // Reno: ssthresh = 10/2, cwnd = 1 packet.
    assert_eq!((c.cc().cwnd(), c.cc().ssthresh()), (1.0, 5.0));
    let t = c.poll_transmit(ms(425), &mut buf).unwrap();
    assert!(t.retransmission);
    assert!(
        c.poll_transmit(ms(425), &mut buf).is_none(),
        "cwnd is one packet"
    );
    // Backoff: 650 ms, then 1300 ms.
    assert_eq!(c.poll_timeout(), Some(ms(1075)));
    c.handle_timeout(ms(1075));
    c.poll_transmit(ms(1075), &mut buf).unwrap();
    assert_eq!(c.poll_timeout(), Some(ms(2375)));
}

#[test]
fn a_packet_is_sent_only_if_it_fits_in_the_window() {
    // A window of 6.5 packets holds 6 (RFC 9002 §7: bytes in flight may not exceed it; Linux's
    // whole-packet window would be 6). The pacer's first burst of 10 does not limit this.
    let (mut c, _) = established(reno(6.5, true), reno(6.5, true));
    c.write_synthetic(100 * 1448);
    let mut buf = vec![0u8; 2048];
    let sent = std::iter::from_fn(|| c.poll_transmit(ms(100), &mut buf))
        .filter(|t| t.kind == PacketKind::Data)
        .count();
    assert_eq!(sent, 6);
    assert_eq!(c.stats().bytes_in_flight, 6 * 1448);
}

#[test]
fn pacing_releases_bursts_then_one_packet_per_interval() {
    let (mut c, _) = established(reno(100.0, true), reno(100.0, true));
    let mut buf = vec![0u8; 2000];
    c.write_synthetic(40 * 1448);
    let mut burst = 0;
    while c.poll_transmit(ms(100), &mut buf).is_some() {
        burst += 1;
    }
    // Default burst: 10 packets.
    assert_eq!(burst, 10);
    // Slow start: 2 · 100 packets · 1477 bytes / 100 ms = 2 954 000 B/s → 1477 B every 500 µs.
    assert_eq!(c.stats().pacing_rate, 2_954_000);
    let next = c.poll_timeout().unwrap();
    assert_eq!(next, ms(100) + Duration::from_micros(500));
    assert!(c
        .poll_transmit(next - Duration::from_nanos(1), &mut buf)
        .is_none());
    assert!(c.poll_transmit(next, &mut buf).is_some());
    assert!(c.poll_transmit(next, &mut buf).is_none());
    assert_eq!(c.poll_timeout(), Some(next + Duration::from_micros(500)));
}

/// `burst_time`: a burst holds that much of the pacing rate when it exceeds the default 10
/// packets (a real host's 1 ms, Linux's TSO autosizing; here 10 ms to make it 20 packets).
#[test]
fn burst_time_sizes_the_burst_by_the_rate() {
    let timed = Config {
        burst_time: Duration::from_millis(10),
        ..reno(100.0, true)
    };
    let (mut c, _) = established(timed, reno(100.0, true));
    let mut buf = vec![0u8; 2000];
    c.write_synthetic(60 * 1448);
    let mut burst = 0;
    while c.poll_transmit(ms(100), &mut buf).is_some() {
        burst += 1;
    }
    // 2 954 000 B/s × 10 ms = 29 540 B = 20 packets of 1477 bytes on the wire.
    assert_eq!(c.stats().pacing_rate, 2_954_000);
    assert_eq!(burst, 20);
    // Then one packet per 500 µs, as without it.
    let next = c.poll_timeout().unwrap();
    assert_eq!(next, ms(100) + Duration::from_micros(500));
}

/// The sender's time by state (`Stats::send_times`, Linux's `tcp_chrono`): with the numbers of
/// the pacing test above (a 10-packet bucket, one packet per 500 µs after it).
#[test]
fn the_sender_s_time_is_charged_to_what_held_it_back() {
    let (mut c, _) = established(reno(100.0, true), reno(100.0, true));
    let mut buf = vec![0u8; 2000];
    // Nothing written yet: not counted.
    assert!(c.poll_transmit(ms(100), &mut buf).is_none());
    assert_eq!(c.stats().send_times.total_ns(), 0);
    c.write_synthetic(40 * 1448);
    while c.poll_transmit(ms(100), &mut buf).is_some() {}
    let release = c.poll_timeout().unwrap();
    assert_eq!(release, ms(100) + Duration::from_micros(500));
    // The driver comes back 1 ms after the release, well inside the bucket (10 packets,
    // 5 ms at this rate): all of that wait is pacing, and the packets owed leave at once.
    let back = release + Duration::from_millis(1);
    let owed = std::iter::from_fn(|| c.poll_transmit(back, &mut buf)).count();
    assert_eq!(owed, 3);
    let t = c.stats().send_times;
    assert_eq!(t.get(SendState::Pacing), 1_500_000);
    assert_eq!(t.get(SendState::Late), 0);
    // Now 20 ms late: the bucket (5 ms) overflowed after 5.5 ms; the rest is late.
    let release = c.poll_timeout().unwrap();
    assert_eq!(release, back + Duration::from_micros(500));
    let back2 = release + Duration::from_millis(20);
    assert!(c.poll_transmit(back2, &mut buf).is_some());
    let t = c.stats().send_times;
    assert_eq!(t.get(SendState::Pacing), 1_500_000 + 5_500_000);
    assert_eq!(t.get(SendState::Late), 15_000_000);
    // Everything written has left once the window closes: the 100-packet window is not full,
    // so the stream runs dry; with the fin not yet written that is a wait for data.
    let mut now = back2;
    while c.stats().packets_in_flight < 40 {
        now = now.max(c.poll_timeout().unwrap());
        while c.poll_transmit(now, &mut buf).is_some() {}
    }
    // The last packet left at `now`, and the stream was found empty at the same instant.
    assert_eq!(c.stats().send_times.get(SendState::NoData), 0);
    let later = now + Duration::from_millis(7);
    assert!(c.poll_transmit(later, &mut buf).is_none());
    c.write_synthetic(1448);
    assert_eq!(c.stats().send_times.get(SendState::NoData), 7_000_000);
    assert!(c
        .poll_transmit(later + Duration::from_millis(3), &mut buf)
        .is_some());
    let t = c.stats().send_times;
    assert_eq!(t.get(SendState::NoData), 10_000_000);
    assert_eq!(
        t.total_ns(),
        (later + Duration::from_millis(3)).as_nanos() - ms(100).as_nanos(),
        "the states' times add up to the span: {t:?}"
    );
}

/// A window that is full is the window's time; a receive window that is full is the
/// receiver's.
#[test]
fn a_full_window_and_a_full_receive_window_are_told_apart() {
    let (mut c, _) = established(reno(4.0, true), reno(4.0, true));
    let mut buf = vec![0u8; 2000];
    c.write_synthetic(100 * 1448);
    while c.poll_transmit(ms(100), &mut buf).is_some() {}
    assert_eq!(c.stats().packets_in_flight, 4);
    assert!(c.poll_transmit(ms(150), &mut buf).is_none());
    let t = c.stats().send_times;
    assert_eq!(t.get(SendState::Window), 50_000_000);

    let small = Config {
        recv_window: 3 * 1448,
        ..reno(10.0, true)
    };
    let (mut c, _) = established(reno(10.0, true), small);
    c.write_synthetic(100 * 1448);
    while c.poll_transmit(ms(100), &mut buf).is_some() {}
    assert_eq!(c.stats().packets_in_flight, 3);
    assert!(c.poll_transmit(ms(130), &mut buf).is_none());
    let t = c.stats().send_times;
    assert_eq!(
        (t.get(SendState::ReceiverWindow), t.get(SendState::Window)),
        (30_000_000, 0)
    );
}

/// Bytes the receiving application holds (read, not yet finished with) count against its
/// receive window: the sender stops once they fill it, and letting them go announces the
/// larger window at once.
#[test]
fn bytes_the_receiver_holds_close_its_window_until_it_lets_them_go() {
    let window = 16 * 1448;
    let server = Config {
        recv_window: window,
        ..reno(100.0, true)
    };
    let (mut c, mut s) = established(reno(100.0, true), server);
    c.write_synthetic(100 * 1448);
    let mut buf = vec![0u8; 2000];
    // 300 ms of exchanges, 1 ms apart; the server reads all it can, holding it all or none.
    let mut exchange = |c: &mut Connection, s: &mut Connection, from: u64, hold: bool| {
        for t in (from..from + 300).map(ms) {
            while let Some(p) = c.poll_transmit(t, &mut buf) {
                s.handle_packet(t, &buf[..p.len]).unwrap();
            }
            s.read_synthetic();
            let read = s.stats().bytes_delivered;
            s.set_held(if hold { read } else { 0 });
            while let Some(p) = s.poll_transmit(t, &mut buf) {
                c.handle_packet(t, &buf[..p.len]).unwrap();
            }
        }
        s.stats().bytes_delivered
    };
    assert_eq!(exchange(&mut c, &mut s, 100, true), window);
    // Let go: the window update goes out at once, not with the next acknowledgment.
    s.set_held(0);
    let mut update = vec![0u8; 2000];
    let p = s.poll_transmit(ms(400), &mut update).unwrap();
    assert_eq!(p.kind, PacketKind::Ack);
    c.handle_packet(ms(400), &update[..p.len]).unwrap();
    assert_eq!(exchange(&mut c, &mut s, 401, false), 100 * 1448);
}

#[test]
fn data_beyond_the_receive_window_is_rejected_with_the_limit() {
    let server = Config {
        recv_window: 10_000,
        ..reno(10.0, false)
    };
    let (_, mut s) = established(reno(10.0, false), server);
    let mut buf = vec![0u8; 2000];
    let h = DataHeader {
        packet_number: 0,
        timestamp_us: 100_000,
        offset: 9_000,
        len: 1_448,
        fin: false,
        synthetic: false,
    };
    let n = packet::encode_data_header(&h, &mut buf).unwrap();
    assert_eq!(
        s.handle_packet(ms(150), &buf[..n + 1448]),
        Err(PacketError::OutOfWindow {
            offset: 9_000,
            end: 10_448,
            limit: 10_000
        })
    );
    assert_eq!(s.stats().packets_rejected, 1);
    assert_eq!(s.stats().bytes_received, 0);
    // The rejected packet is not acknowledged.
    assert!(s.poll_transmit(ms(150), &mut buf).is_none());
}

#[test]
fn acks_of_unsent_packets_and_future_echoes_are_rejected() {
    let (mut c, _) = established(reno(10.0, false), reno(10.0, false));
    let mut buf = vec![0u8; 2000];
    let f = AckFields {
        ack_delay_us: 0,
        echo_us: 100_000,
        cumulative: 0,
        max_offset: 1 << 20,
        ce_count: 0,
    };
    let n = packet::encode_ack(&f, [AckRange { high: 5, low: 0 }].into_iter(), &mut buf).unwrap();
    assert_eq!(
        c.handle_packet(ms(200), &buf[..n]),
        Err(PacketError::AckOfUnsentPacket { acked: 5, next: 0 })
    );
    c.write(&[1u8; 1448]);
    c.poll_transmit(ms(200), &mut buf).unwrap();
    let f = AckFields {
        echo_us: 900_000,
        ..f
    };
    let n = packet::encode_ack(&f, [AckRange { high: 0, low: 0 }].into_iter(), &mut buf).unwrap();
    assert!(matches!(
        c.handle_packet(ms(300), &buf[..n]),
        Err(PacketError::FutureTimestamp { .. })
    ));
    assert_eq!(c.stats().bytes_acked, 0);
}

#[test]
fn a_two_million_packet_window_costs_constant_work_per_packet() {
    const N: u64 = 2_000_000;
    let big = |cfg: Config| Config {
        recv_window: 1 << 42,
        send_buffer: 1 << 42,
        ..cfg
    };
    let (mut c, mut s) = established(big(reno(2.2e6, true)), big(reno(10.0, true)));
    assert_eq!(c.write_synthetic(N * 1448), N * 1448);
    // Send the whole window (paced: 2·cwnd/srtt, so it leaves within half an RTT).
    let mut now = ms(100);
    let mut wire = Vec::with_capacity(N as usize * 29);
    let mut times = Vec::with_capacity(N as usize);
    let mut buf = vec![0u8; 2000];
    while (times.len() as u64) < N {
        match c.poll_transmit(now, &mut buf) {
            Some(t) => {
                assert_eq!(
                    (t.kind, t.len, t.wire_len),
                    (PacketKind::Data, 29, 29 + 1448)
                );
                wire.extend_from_slice(&buf[..t.len]);
                times.push(now);
            }
            None => now = c.poll_timeout().unwrap(),
        }
    }
    assert_eq!(c.stats().packets_in_flight, N);
    assert!(now < ms(150), "the window left in {now}");
    // Deliver all but every 100th packet 50 ms later; each ACK reaches the sender 50 ms after.
    let mut acks = 0u64;
    for (i, pkt) in wire.chunks_exact(29).enumerate() {
        if i % 100 == 50 {
            continue;
        }
        let at = times[i] + Duration::from_millis(50);
        s.handle_packet(at, pkt).unwrap();
        while let Some(t) = s.poll_transmit(at, &mut buf) {
            assert_eq!(t.kind, PacketKind::Ack);
            c.handle_packet(at + Duration::from_millis(50), &buf[..t.len])
                .unwrap();
            acks += 1;
        }
    }
    let st = c.stats();
    assert!(acks >= N / 2, "ACK every second packet: {acks}");
    // Every hole but possibly the last is declared lost by the packet threshold.
    assert!((19_999..=20_000).contains(&st.packets_lost), "{st:?}");
    assert_eq!(st.bytes_acked, (N - 20_000) * 1448);
    assert_eq!(s.stats().bytes_received, (N - 20_000) * 1448);
    assert_eq!(s.readable(), 50 * 1448, "in order up to the first hole");
    // Each packet is visited a small constant number of times (ACK ranges are walked only
    // above the loss cursor); a walk of every SACK range on every ACK would be ~100× this.
    let work = c.scoreboard_work();
    println!("scoreboard work {work} for {N} packets, {acks} ACKs");
    assert!(work < 2 * N, "work {work} for {N} packets");
}

#[test]
fn ecn_marks_reduce_the_window_once_per_round_trip() {
    let (mut c, mut s) = established(reno(20.0, false), reno(10.0, false));
    let mut buf = vec![0u8; 2000];
    let mut ack = vec![0u8; 2000];
    c.write(&[3u8; 20 * 1448]);
    let mut packets = Vec::new();
    let mut now = ms(100);
    while packets.len() < 20 {
        match c.poll_transmit(now, &mut buf) {
            Some(t) => packets.push(buf[..t.len].to_vec()),
            None => now = c.poll_timeout().unwrap(),
        }
    }
    // A burst of 10, then one per 1477 B / (2 · 20 · 1477 B / 100 ms) = 2.5 ms.
    assert_eq!(now, ms(125));
    // Two marked packets in the same window: one reduction (Reno: 20 → 10 packets), taken
    // before the ACK's own growth, as Linux enters CWR before cong_avoid.
    for (i, p) in packets.iter().enumerate() {
        s.handle_packet_ecn(ms(150), p, i == 0 || i == 9).unwrap();
        while let Some(t) = s.poll_transmit(ms(150), &mut ack) {
            c.handle_packet(ms(200), &ack[..t.len]).unwrap();
        }
    }
    assert_eq!(c.cc().ssthresh(), 10.0);
    assert_eq!(c.stats().congestion_events, 1);
    assert_eq!(c.stats().packets_lost, 0);
}

#[test]
fn losses_in_one_window_reduce_once_and_a_later_window_reduces_again() {
    let (mut c, mut s) = established(reno(20.0, true), reno(10.0, true));
    let mut buf = vec![0u8; 2000];
    let mut ack = vec![0u8; 2000];
    c.write_synthetic(1 << 30);
    // Send 20 packets (paced: done by t = 125 ms), drop packets 2 and 5, deliver the rest at
    // 150 ms and their ACKs at 200 ms.
    let mut now = ms(100);
    let mut window = Vec::new();
    while window.len() < 20 {
        match c.poll_transmit(now, &mut buf) {
            Some(t) => window.push(buf[..t.len].to_vec()),
            None => now = c.poll_timeout().unwrap(),
        }
    }
    for (i, p) in window.iter().enumerate() {
        if i == 2 || i == 5 {
            continue;
        }
        s.handle_packet(ms(150), p).unwrap();
        while let Some(t) = s.poll_transmit(ms(150), &mut ack) {
            c.handle_packet(ms(200), &ack[..t.len]).unwrap();
        }
    }
    let st = c.stats();
    assert_eq!((st.packets_lost, st.congestion_events), (2, 1));
    // Packets 0 and 1 were acked first (one ACK, slow start: 20 → 22), then packet 3 (an
    // immediate ACK after the hole: 22 → 23, since the window was used in this window of data,
    // Linux `tcp_is_cwnd_limited`), then the loss of 2 halved the window: ssthresh = 11.5; the
    // loss of 5 fell in the same recovery period.
    assert_eq!(c.cc().ssthresh(), 11.5);
    // The window is 11.5 packets, and packet 19 is still in flight (its ACK waits for the
    // delayed-ACK timer): 10 more fit whole (RFC 9002 §7), carrying both lost chunks and 8 new
    // ones. They leave from 201 ms, after the recovery period began (at 200 ms).
    let mut retransmissions = 0;
    let mut next = Vec::new();
    let mut now = ms(201);
    for _ in 0..100 {
        if next.len() == 10 {
            break;
        }
        match c.poll_transmit(now, &mut buf) {
            Some(t) => {
                retransmissions += t.retransmission as u32;
                next.push(buf[..t.len].to_vec());
            }
            None => now = c.poll_timeout().unwrap(),
        }
    }
    assert_eq!((next.len(), retransmissions), (10, 2));
    assert!(
        c.poll_transmit(now, &mut buf).is_none(),
        "the window is full"
    );
    // Drop packet 26 (the 7th of this window). ACKs of (19,20), (21,22), (23,24) and of (25,27)
    // — immediate, 27 is out of order — grow the window by Reno's acked/cwnd; the ACK of
    // (28,29) declares 26 lost: a new recovery period.
    for (i, p) in next.iter().enumerate() {
        if i == 6 {
            continue;
        }
        s.handle_packet(now + Duration::from_millis(50), p).unwrap();
        while let Some(t) = s.poll_transmit(now + Duration::from_millis(50), &mut ack) {
            c.handle_packet(now + Duration::from_millis(100), &ack[..t.len])
                .unwrap();
        }
    }
    let st = c.stats();
    assert_eq!((st.packets_lost, st.congestion_events), (3, 2));
    let mut w = 11.5f64;
    for acked in [2.0, 2.0, 2.0, 2.0] {
        w += acked / w;
    }
    assert!(
        (c.cc().ssthresh() - w / 2.0).abs() < 1e-9,
        "{} vs {}",
        c.cc().ssthresh(),
        w / 2.0
    );
}

#[test]
fn a_listening_server_never_times_out_but_an_idle_connection_does() {
    let cfg = Config {
        idle_timeout: Some(Duration::from_secs(120)),
        ..reno(10.0, false)
    };
    let s = Connection::new(cfg.clone(), Side::Server, ms(0)).unwrap();
    assert_eq!(
        s.poll_timeout(),
        None,
        "a server waits for its client as long as it takes"
    );
    let (mut c, mut s) = established(cfg.clone(), cfg);
    // Nothing is sent after the handshake: both ends close 120 s after they last heard.
    assert_eq!(c.poll_timeout(), Some(ms(100) + Duration::from_secs(120)));
    assert_eq!(s.poll_timeout(), Some(ms(50) + Duration::from_secs(120)));
    c.handle_timeout(ms(100) + Duration::from_secs(120));
    assert_eq!(
        c.close_reason().map(|r| r.code),
        Some(longhaul_proto::CloseCode::TimedOut)
    );
    let mut buf = vec![0u8; 64];
    assert_eq!(
        c.poll_transmit(ms(200_000), &mut buf).unwrap().kind,
        PacketKind::Close
    );
    assert!(c.is_closed());
    s.handle_packet(ms(200_050), &buf[..3]).unwrap();
    assert!(s.is_closed());
    assert_eq!(c.stats().rtt_samples, 1);
}

/// `poll_transmit_header`/`handle_data_header` (the simulator's path) behave exactly like
/// encoding and decoding every data packet: two synthetic connection pairs driven in lockstep,
/// one each way, send the same packets and end in the same state.
#[test]
fn carried_data_headers_match_encoded_packets() {
    let (mut c1, mut s1) = established(reno(10.0, true), reno(10.0, true));
    let (mut c2, mut s2) = established(reno(10.0, true), reno(10.0, true));
    for c in [&mut c1, &mut c2] {
        assert_eq!(c.write_synthetic(3_000_000), 3_000_000);
        c.finish();
    }
    let (mut b1, mut b2) = (vec![0u8; 2000], vec![0u8; 2000]);
    let mut carried = 0;
    let mut now = ms(100);
    for _ in 0..400 {
        // Client to server, 50 ms one way, then the server's ACKs back.
        let mut to_server = vec![];
        loop {
            let t1 = c1.poll_transmit(now, &mut b1);
            let t2 = c2.poll_transmit_header(now, &mut b2);
            match (t1, t2) {
                (None, None) => break,
                (Some(t1), Some((t2, h))) => {
                    assert_eq!((t1.kind, t1.wire_len), (t2.kind, t2.wire_len));
                    assert_eq!(t1.packet_number, t2.packet_number);
                    let h = h.expect("a synthetic data packet's header is carried");
                    assert_eq!(t2.len, 0);
                    match packet::decode(&b1[..t1.len]).unwrap() {
                        packet::Packet::Data { header, .. } => assert_eq!(header, h),
                        p => panic!("expected data, got {p:?}"),
                    }
                    to_server.push((b1[..t1.len].to_vec(), h));
                }
                (a, b) => panic!("paths diverged: {a:?} vs {b:?}"),
            }
        }
        let at = now + Duration::from_millis(50);
        for (bytes, h) in &to_server {
            s1.handle_packet(at, bytes).unwrap();
            s2.handle_data_header(at, h, false).unwrap();
            carried += 1;
        }
        s1.read_synthetic();
        s2.read_synthetic();
        let back = now + Duration::from_millis(100);
        let mut acks = vec![];
        while let Some(t) = s1.poll_transmit(at, &mut b1) {
            let (t2, h) = s2.poll_transmit_header(at, &mut b2).expect("same ACKs");
            assert_eq!((t.kind, h), (PacketKind::Ack, None));
            assert_eq!(&b1[..t.len], &b2[..t2.len]);
            acks.push(b1[..t.len].to_vec());
        }
        for a in &acks {
            c1.handle_packet(back, a).unwrap();
            c2.handle_packet(back, a).unwrap();
        }
        now = back.max(
            c1.poll_timeout()
                .unwrap_or(back)
                .min(back + Duration::from_millis(1)),
        );
        c1.handle_timeout(now);
        c2.handle_timeout(now);
        if c1.is_send_complete() {
            break;
        }
    }
    assert!(c1.is_send_complete() && c2.is_send_complete());
    assert_eq!(c1.stats(), c2.stats());
    assert_eq!(s1.stats(), s2.stats());
    assert_eq!(s2.stats().bytes_received, 3_000_000);
    assert!(carried > 2000, "{carried} data packets carried");
}

#[test]
fn carried_data_headers_are_checked_like_decoded_ones() {
    let (_, mut s) = established(reno(10.0, true), reno(10.0, true));
    let good = DataHeader {
        packet_number: 0,
        timestamp_us: 1,
        offset: 0,
        len: 1443,
        fin: false,
        synthetic: true,
    };
    let too_large = DataHeader {
        packet_number: packet::MAX_VALUE + 1,
        ..good
    };
    assert_eq!(
        s.handle_data_header(ms(60), &too_large, false),
        Err(PacketError::PacketNumberTooLarge(packet::MAX_VALUE + 1))
    );
    let overflow = DataHeader {
        offset: packet::MAX_VALUE - 10,
        ..good
    };
    assert!(matches!(
        s.handle_data_header(ms(60), &overflow, false),
        Err(PacketError::OffsetOverflow { .. })
    ));
    // A real-mode header announces payload bytes that a struct cannot carry.
    let real = DataHeader {
        synthetic: false,
        ..good
    };
    assert_eq!(
        s.handle_data_header(ms(60), &real, false),
        Err(PacketError::PayloadLength {
            declared: 1443,
            carried: 0
        })
    );
    assert_eq!(s.stats().packets_rejected, 3);
    s.handle_data_header(ms(60), &good, false).unwrap();
    assert_eq!(s.read_synthetic(), 1443);
}

#[test]
fn a_local_drop_is_resent_and_reduces_once_per_recovery_period() {
    let (mut c, mut s) = established(reno(10.0, true), reno(10.0, true));
    let mut buf = vec![0u8; 2000];
    let mut ack = vec![0u8; 2000];
    c.write_synthetic(1 << 30);
    let mut window = Vec::new();
    while let Some(t) = c.poll_transmit(ms(100), &mut buf) {
        window.push((t.packet_number.unwrap(), buf[..t.len].to_vec()));
    }
    assert_eq!(window.len(), 10, "the initial window, in one burst");
    // The host's device queue drops packets 9 and then 8: one reduction (Reno 10 → 5).
    c.on_local_drop(ms(100), window[9].0);
    c.on_local_drop(ms(100), window[8].0);
    let st = c.stats();
    assert_eq!((st.congestion_events, st.packets_in_flight), (1, 8));
    assert_eq!(c.cc().cwnd(), 5.0);
    // Packets 0..=3 arrive; their ACKs (sent before the drop) leave 4 in flight: one packet
    // may go, and it carries the dropped data again.
    for (_, p) in &window[..4] {
        s.handle_packet(ms(150), p).unwrap();
        while let Some(t) = s.poll_transmit(ms(150), &mut ack) {
            c.handle_packet(ms(200), &ack[..t.len]).unwrap();
        }
    }
    assert_eq!(c.cc().cwnd(), 5.0, "no growth during the recovery period");
    let t = c.poll_transmit(ms(200), &mut buf).unwrap();
    assert!(t.retransmission, "the dropped data goes out first");
    // Its ACK (sent after the reduction) ends the period: the next drop reduces again.
    s.handle_packet(ms(250), &buf[..t.len]).unwrap();
    s.handle_timeout(ms(275));
    while let Some(a) = s.poll_transmit(ms(275), &mut ack) {
        c.handle_packet(ms(300), &ack[..a.len]).unwrap();
    }
    let t = c.poll_transmit(ms(300), &mut buf).unwrap();
    c.on_local_drop(ms(300), t.packet_number.unwrap());
    assert_eq!(c.stats().congestion_events, 2);
    assert!(c.cc().cwnd() < 3.0, "{}", c.cc().cwnd());
}

/// `poll_transmit_vectored` (security off): a data packet whose payload lies in one buffer
/// given to `write_owned` has only its header in the caller's buffer and its payload lent (a
/// range of that very buffer); header and payload together are the bytes `poll_transmit`
/// writes for the same packet of a twin connection, and everything else (copied bytes, a
/// payload across two buffers, ACKs) is written whole. A buffer comes back through
/// `take_spent` only once acknowledged and no lent payload of it is held.
#[test]
fn vectored_datagrams_are_the_copied_ones_with_owned_payloads_lent() {
    use longhaul_proto::packet::DATA_HEADER_LEN;
    let config = reno(100.0, false);
    let mss = config.mss as u64;
    let (mut copied, mut s) = established(config.clone(), config.clone());
    let (mut lent, _) = established(config.clone(), config);
    let first: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
    let second: Vec<u8> = (0..50_000u32).map(|i| (i * 13 + 5) as u8).collect();
    // The stream: 12 copied bytes, `first` (owned), 100 copied bytes, `second` (owned).
    let write = |c: &mut Connection| -> Vec<std::ops::Range<usize>> {
        let (first, second) = (first.clone(), second.clone());
        let at = |v: &Vec<u8>| v.as_ptr() as usize..v.as_ptr() as usize + v.len();
        let given = vec![at(&first), at(&second)];
        assert_eq!(c.write(b"copied first"), 12);
        assert_eq!(c.write_owned(first), Ok(3000));
        assert_eq!(c.write(&[1u8; 100]), 100);
        assert_eq!(c.write_owned(second), Ok(50_000));
        c.finish();
        given
    };
    write(&mut copied);
    let given = write(&mut lent);
    let stream = [&b"copied first"[..], &first, &[1u8; 100], &second].concat();
    // A chunk of `mss` bytes from `i * mss` is lent if it lies inside stream offsets 12..3012
    // (`first`) or 3112..53112 (`second`).
    let total = stream.len() as u64;
    let chunks = total.div_ceil(mss);
    let inside = |a: u64, b: u64| {
        (0..chunks)
            .filter(|i| i * mss >= a && ((i + 1) * mss).min(total) <= b)
            .count()
    };
    let want_lent = inside(12, 3012) + inside(3112, 53_112);
    assert!(
        want_lent >= 30 && (want_lent as u64) < chunks,
        "{want_lent} of {chunks}"
    );

    let (mut buf, mut vbuf, mut ack) = (vec![0u8; 70_000], vec![0u8; 70_000], vec![0u8; 70_000]);
    let (mut n_lent, mut n_data) = (0, 0);
    // The first payload lent (of `first`) and the last (of `second`), held as a send queued
    // on another thread holds them.
    let (mut held_first, mut held_last) = (None, None);
    let mut now = ms(100);
    while !copied.is_send_complete() && now < ms(10_000) {
        while let Some(t) = copied.poll_transmit(now, &mut buf) {
            let (v, seal, payload) = lent
                .poll_transmit_vectored(now, &mut vbuf)
                .expect("the twin sends the same packet");
            assert!(seal.is_none());
            let mut datagram = vbuf[..v.len].to_vec();
            if let Some(p) = &payload {
                assert_eq!(v.len, DATA_HEADER_LEN, "the header alone");
                let ptr = p.as_slice().as_ptr() as usize;
                assert!(given.iter().any(|g| g.contains(&ptr)), "not a copy");
                datagram.extend_from_slice(p.as_slice());
                n_lent += 1;
            }
            assert_eq!(datagram, &buf[..t.len], "{t:?} {v:?}");
            assert_eq!(
                (v.wire_len, v.kind, v.packet_number),
                (t.wire_len, t.kind, t.packet_number)
            );
            n_data += (t.kind == PacketKind::Data) as usize;
            s.handle_packet(now, &datagram).unwrap();
            if held_first.is_none() {
                held_first = payload.clone();
            }
            held_last = payload.or(held_last);
        }
        assert!(lent.poll_transmit_vectored(now, &mut vbuf).is_none());
        now += Duration::from_millis(1);
        while let Some(t) = s.poll_transmit(now, &mut ack) {
            copied.handle_packet(now, &ack[..t.len]).unwrap();
            lent.handle_packet(now, &ack[..t.len]).unwrap();
        }
        for c in [&mut copied, &mut lent] {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
        }
    }
    assert!(copied.is_send_complete() && lent.is_send_complete());
    assert_eq!((n_lent, n_data), (want_lent, chunks as usize));
    let mut got = vec![0u8; stream.len() + 1];
    assert_eq!(s.read(&mut got), stream.len());
    assert_eq!(&got[..stream.len()], &stream[..]);
    // Everything is acknowledged: the copying twin's buffers are back, the lending twin's
    // each only once the payload held of it is dropped.
    assert_eq!(std::iter::from_fn(|| copied.take_spent()).count(), 2);
    assert!(
        lent.take_spent().is_none(),
        "payloads of both buffers are held"
    );
    drop(held_first);
    let back = lent.take_spent().expect("no payload of `first` is held");
    assert_eq!(
        back.as_ptr() as usize..back.as_ptr() as usize + back.len(),
        given[0]
    );
    assert!(lent.take_spent().is_none(), "a payload of `second` is held");
    drop(held_last);
    let back = lent.take_spent().expect("no payload of `second` is held");
    assert_eq!(back.as_ptr() as usize, given[1].start);
}
