//! `longhaul perf` end to end on loopback: a real server and client, garbage and silent peers.
//! Needs no root: 127.0.0.1 and a free port.

use longhaul_metrics::summary::{Mode, Summary};
use longhaul_perf::perf::protocol::{self, Message, TestParams};
use longhaul_perf::perf::{
    run_client, to_summary, ClientConfig, ClientError, PathFacts, Quiet, Server, ServerConfig,
    ServerEvent,
};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Events = Arc<Mutex<Vec<ServerEvent>>>;

/// Start a server on a free loopback port; it runs until the test process exits.
fn start_server(idle: Duration) -> (SocketAddr, Events) {
    let events: Events = Arc::default();
    let log = {
        let e = Arc::clone(&events);
        Arc::new(move |ev: ServerEvent| e.lock().unwrap().push(ev))
    };
    let config = ServerConfig {
        idle_timeout: idle,
        max_connections: 32,
    };
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), config, log).unwrap();
    let addr = server.local_addr().unwrap();
    std::thread::spawn(move || server.serve(&AtomicBool::new(false)));
    (addr, events)
}

fn client(addr: SocketAddr, streams: u32, duration_ms: u64) -> ClientConfig {
    ClientConfig {
        host: addr.ip().to_string(),
        port: addr.port(),
        streams,
        duration: Duration::from_millis(duration_ms),
        interval: Duration::from_millis(500),
        cc: Some("reno".into()),
        // 64 KiB is below every stock net.core.wmem_max (212992), so the grant is exactly doubled.
        window: Some(64 << 10),
        write_len: 64 << 10,
        connect_timeout: Duration::from_secs(2),
    }
}

/// Wait (up to 5 s) for a logged event matching `pred`.
fn wait_for(events: &Events, pred: impl Fn(&ServerEvent) -> bool) -> ServerEvent {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(e) = events.lock().unwrap().iter().find(|e| pred(e)) {
            return e.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no such event; got {:?}",
            events.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn two_streams_for_two_seconds_give_a_consistent_summary() {
    let (addr, events) = start_server(Duration::from_secs(5));
    let run = run_client(&client(addr, 2, 2000), &mut Quiet).unwrap();

    // Intervals at 0.5, 1.0, 1.5 s and a last one to the server's confirmation: 4 intervals.
    assert_eq!(run.intervals.len(), 4);
    for (i, w) in run.intervals.windows(2).enumerate() {
        assert_eq!(
            w[0].end_s, w[1].start_s,
            "interval {i} and the next must abut"
        );
    }
    assert_eq!(run.intervals[0].start_s, 0.0);
    assert!(
        (run.intervals[0].end_s - 0.5).abs() < 0.1,
        "{}",
        run.intervals[0].end_s
    );
    assert!(
        run.duration_s >= 2.0 && run.duration_s < 4.0,
        "{}",
        run.duration_s
    );
    // The intervals add up to the total exactly, per stream and overall.
    for s in 0..2 {
        let sum: u64 = run.intervals.iter().map(|i| i.streams[s].bytes).sum();
        assert_eq!(sum, run.bytes[s], "stream {s}");
        assert!(run.bytes[s] > 0);
    }
    // RTT sampled every 100 ms for 2 s: at most 20 samples per stream (fewer if the reporter
    // wakes late on a loaded machine).
    for samples in &run.rtt_samples_ms {
        assert!((5..=20).contains(&samples.len()), "{}", samples.len());
        assert!(samples.iter().all(|&r| r > 0.0 && r < 50.0));
    }
    let total: u64 = run.intervals.iter().map(|i| i.bytes()).sum();
    assert_eq!(total, run.total_bytes());
    for st in &run.streams {
        assert_eq!(st.cc, "reno");
        assert_eq!(st.send_buffer.requested, Some(64 << 10));
        assert_eq!(st.send_buffer.granted, 128 << 10); // Linux doubles the request
    }

    let summary = to_summary(
        &run,
        &PathFacts {
            distance_km: Some(10_037.0),
            capacity_bps: None,
            mtu: None,
        },
    );
    let json = summary.to_json().unwrap();
    let back = Summary::from_json(&json, std::path::Path::new("perf.json")).unwrap();
    assert_eq!(back.mode, Mode::Perf);
    assert!(back.problems().is_empty(), "{:?}", back.problems());
    assert_eq!(back.flows.len(), 2);
    assert_eq!(back.aggregate.bytes_delivered, Some(run.total_bytes()));
    let text: serde_json::Value = serde_json::from_str(&json).unwrap();
    for (i, f) in back.flows.iter().enumerate() {
        assert_eq!(f.id, i as u32 + 1);
        assert_eq!(f.cc, "reno");
        assert!(f.throughput_bps > 0.0);
        assert!(
            f.min_rtt_ms > 0.0 && f.min_rtt_ms < 50.0,
            "{}",
            f.min_rtt_ms
        );
        assert!(f.queueing_delay_ms.mean >= 0.0);
        // Retransmits are reported (a number, zero on a clean loopback).
        assert!(text["flows"][i]["retransmits"].is_u64());
        assert!(f.loss_rate >= 0.0 && f.loss_rate <= 1.0);
        // b·m/s = throughput × 10,037 km.
        assert!((f.bmps - f.throughput_bps * 10_037e3).abs() <= 1e-6 * f.bmps);
        // The series rebuild the bytes: Σ rate × interval length / 8.
        let s = f.series.as_ref().unwrap();
        assert_eq!(s.t.len(), 4);
        assert_eq!(s.cwnd_pkts.len(), 4);
        assert!(s.cwnd_pkts.iter().all(|&c| c >= 1.0));
        let mut ends: Vec<f64> = s.t[1..].to_vec();
        ends.push(back.duration_s);
        let rebuilt: f64 = s
            .throughput_bps
            .iter()
            .zip(s.t.iter().zip(&ends))
            .map(|(r, (a, b))| r * (b - a) / 8.0)
            .sum();
        let bytes = f.bytes_delivered.unwrap() as f64;
        assert!(
            (rebuilt - bytes).abs() <= 1e-6 * bytes,
            "{rebuilt} vs {bytes}"
        );
    }
    let sum_flows: f64 = back.flows.iter().map(|f| f.throughput_bps).sum();
    assert!((back.aggregate.throughput_bps - sum_flows).abs() <= 1e-9 * sum_flows);
    assert!(back.aggregate.jain > 0.5 && back.aggregate.jain <= 1.0);
    assert!(back.aggregate.utilization.is_nan()); // no --capacity given

    // The server saw the same bytes.
    match wait_for(&events, |e| matches!(e, ServerEvent::TestDone { .. })) {
        ServerEvent::TestDone { bytes, .. } => assert_eq!(bytes, run.total_bytes()),
        _ => unreachable!(),
    }
}

#[test]
fn garbage_is_rejected_with_a_reason_and_the_server_keeps_serving() {
    let (addr, events) = start_server(Duration::from_secs(5));
    // Random bytes (fixed seed) whose first four are certainly not the magic.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut junk: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    junk[0] = b'X';
    let mut g = TcpStream::connect(addr).unwrap();
    g.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = g.write_all(&junk);
    let mut buf = [0u8; 64];
    // The server closes the connection without answering.
    assert!(matches!(g.read(&mut buf), Ok(0) | Err(_)));
    let ev = wait_for(&events, |e| matches!(e, ServerEvent::Rejected { .. }));
    let ServerEvent::Rejected { reason, .. } = ev else {
        unreachable!()
    };
    assert!(
        reason.starts_with("not a longhaul perf peer (first bytes 58 "),
        "{reason}"
    );

    // A frame of a future version gets an answer naming both versions.
    let mut v = TcpStream::connect(addr).unwrap();
    v.write_all(b"LHPF\x02\x00\x00\x02{}").unwrap();
    match protocol::read_message(&mut v).unwrap() {
        Message::Error { message } => {
            assert_eq!(message, "server speaks protocol version 1, client 2")
        }
        m => panic!("{m:?}"),
    }

    // Parameters outside the limits are refused with the reason.
    let mut p = TcpStream::connect(addr).unwrap();
    let bad = TestParams {
        streams: 1000,
        duration_ms: 1000,
        cc: None,
        window: None,
        write_len: 1024,
    };
    protocol::write_message(&mut p, &Message::Test(bad)).unwrap();
    match protocol::read_message(&mut p).unwrap() {
        Message::Error { message } => assert!(message.contains("1000 streams"), "{message}"),
        m => panic!("{m:?}"),
    }

    // A client that disappears mid-test costs its test only.
    let mut c = TcpStream::connect(addr).unwrap();
    let ok = TestParams {
        streams: 1,
        duration_ms: 1000,
        cc: None,
        window: None,
        write_len: 1024,
    };
    protocol::write_message(&mut c, &Message::Test(ok)).unwrap();
    let Message::Accept { cookie } = protocol::read_message(&mut c).unwrap() else {
        panic!()
    };
    let mut d = TcpStream::connect(addr).unwrap();
    protocol::write_message(&mut d, &Message::Data { cookie, stream: 0 }).unwrap();
    assert_eq!(protocol::read_message(&mut c).unwrap(), Message::Start);
    d.write_all(&[7u8; 10_000]).unwrap();
    drop(c);
    drop(d);

    // And the next real client is served.
    let run = run_client(&client(addr, 1, 600), &mut Quiet).unwrap();
    assert!(run.total_bytes() > 0);
}

#[test]
fn a_silent_peer_is_closed_after_the_idle_timeout() {
    let (addr, events) = start_server(Duration::from_millis(300));
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let t0 = Instant::now();
    let mut buf = [0u8; 8];
    assert!(matches!(s.read(&mut buf), Ok(0) | Err(_)));
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(4),
        "{waited:?}"
    );
    let ev = wait_for(&events, |e| matches!(e, ServerEvent::Rejected { .. }));
    let ServerEvent::Rejected { reason, .. } = ev else {
        unreachable!()
    };
    assert_eq!(reason, "idle for 0.3 s before saying anything");
}

#[test]
fn client_errors_say_what_to_do() {
    // A port nobody listens on: bind one, note it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let e = run_client(&client(addr, 1, 500), &mut Quiet).unwrap_err();
    assert!(matches!(e, ClientError::Refused { .. }));
    assert_eq!(
        e.to_string(),
        format!("connection refused by 127.0.0.1:{port}: is `longhaul perf server` running on 127.0.0.1:{port}?")
    );

    let (addr, _) = start_server(Duration::from_secs(5));
    let mut cfg = client(addr, 1, 500);
    cfg.cc = Some("nosuchcc".into());
    let e = run_client(&cfg, &mut Quiet).unwrap_err().to_string();
    assert!(
        e.contains("cannot use congestion control `nosuchcc`"),
        "{e}"
    );
    assert!(e.contains("longhaul kernel load nosuchcc"), "{e}");
}

#[test]
fn a_stream_that_goes_silent_mid_test_fails_its_test_only() {
    let (addr, events) = start_server(Duration::from_millis(300));
    let mut c = TcpStream::connect(addr).unwrap();
    let params = TestParams {
        streams: 1,
        duration_ms: 5000,
        cc: None,
        window: None,
        write_len: 1024,
    };
    protocol::write_message(&mut c, &Message::Test(params)).unwrap();
    let Message::Accept { cookie } = protocol::read_message(&mut c).unwrap() else {
        panic!()
    };
    let mut d = TcpStream::connect(addr).unwrap();
    protocol::write_message(&mut d, &Message::Data { cookie, stream: 0 }).unwrap();
    assert_eq!(protocol::read_message(&mut c).unwrap(), Message::Start);
    d.write_all(&[7u8; 10_000]).unwrap();
    // Both connections stay open, but nothing more arrives: the server gives up on the stream
    // and tells the client why.
    match protocol::read_message(&mut c).unwrap() {
        Message::Error { message } => {
            assert_eq!(message, "stream 0: idle timeout after 10000 bytes")
        }
        m => panic!("{m:?}"),
    }
    let ev = wait_for(&events, |e| matches!(e, ServerEvent::TestFailed { .. }));
    let ServerEvent::TestFailed { reason, .. } = ev else {
        unreachable!()
    };
    assert_eq!(reason, "stream 0: idle timeout after 10000 bytes");
    let run = run_client(&client(addr, 1, 400), &mut Quiet).unwrap();
    assert!(run.total_bytes() > 0);
    drop((c, d));
}

/// A free loopback port (bound and released; the race with other tests is harmless here).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Against a real `iperf3 -s` the client says what the peer is within its connect timeout,
/// rather than waiting for the test's read timeout (63 s) and reporting a framing error.
#[test]
fn an_iperf3_server_is_named_within_the_connect_timeout() {
    let port = free_port();
    let mut iperf = std::process::Command::new("iperf3")
        .args(["-s", "-B", "127.0.0.1", "-p", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("iperf3 is needed for this test (scripts/packages.txt)");
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    // An empty probe connection is logged by iperf3, which keeps serving.
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "iperf3 -s did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let e = run_client(&client(addr, 1, 3000), &mut Quiet).unwrap_err();
    let took = started.elapsed();
    let _ = iperf.kill();
    let _ = iperf.wait();
    let text = e.to_string();
    assert!(matches!(e, ClientError::ForeignPeer(_)), "{e:?}");
    assert!(text.contains("is an iperf3 server"), "{text}");
    // The connect timeout is 2 s.
    assert!(took < Duration::from_secs(5), "took {took:?}: {text}");
}

/// A peer that accepts and never answers is reported after the connect timeout, not the test's
/// read timeout (duration + 60 s).
#[test]
fn a_silent_server_is_reported_after_the_connect_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let hold = std::thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        std::thread::sleep(Duration::from_secs(4));
        drop(s);
    });
    let started = Instant::now();
    let e = run_client(&client(addr, 1, 3000), &mut Quiet).unwrap_err();
    let took = started.elapsed();
    assert!(e.to_string().contains("did not answer within"), "{e}");
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(4),
        "{took:?}"
    );
    hold.join().unwrap();
}
