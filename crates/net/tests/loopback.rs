//! `send_file` to a `Receiver` over loopback UDP, directly or through a relay that drops or
//! damages datagrams: the file arrives byte for byte or not at all, and every refusal reaches
//! the sender with its reason. No privileges needed.

use longhaul_cc::CcSpec;
use longhaul_net::recv::{Received, Receiver, RecvOptions};
use longhaul_net::send::{send_file, SendOptions, SendReport};
use longhaul_net::NetError;
use longhaul_proto::Config;
use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};
use sha2::{Digest, Sha256};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

fn config(cc: &str) -> Config {
    let mut c = Config::new(CcSpec::default_for(cc).unwrap());
    c.recv_window = 8 << 20;
    c.send_buffer = 8 << 20;
    // A lost sender is noticed within the test's patience.
    c.idle_timeout = Some(Duration::from_secs(5));
    c
}

fn random_file(dir: &Path, name: &str, len: usize, seed: u64) -> (PathBuf, Vec<u8>) {
    let mut data = vec![0u8; len];
    SmallRng::seed_from_u64(seed).fill_bytes(&mut data);
    let path = dir.join(name);
    std::fs::write(&path, &data).unwrap();
    (path, data)
}

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A receiver serving `count` transfers on a thread; its results come back on join.
fn receiver(dir: &Path, overwrite: bool, count: usize) -> (SocketAddr, JoinHandle<Vec<Received>>) {
    let opts = RecvOptions {
        config: config("reno"),
        dir: dir.to_path_buf(),
        overwrite,
        max_size: 1 << 40,
        max_sessions: 4,
        offload: true,
    };
    let mut r = Receiver::bind("127.0.0.1:0".parse().unwrap(), opts).unwrap();
    let addr = r.local_addr();
    let h = std::thread::spawn(move || {
        let mut got = Vec::new();
        let stop = AtomicBool::new(false);
        r.serve(&stop, Some(count), |t| got.push(t.clone()))
            .unwrap();
        got
    });
    (addr, h)
}

fn options(cc: &str) -> SendOptions {
    SendOptions {
        config: config(cc),
        name: None,
        interval: Duration::from_millis(100),
        connect_timeout: Duration::from_secs(5),
        offload: true,
    }
}

fn send(path: &Path, to: SocketAddr, cc: &str) -> Result<SendReport, NetError> {
    send_file(path, to, options(cc), &AtomicBool::new(false), |_| {})
}

/// Files in `dir` other than the ones named (part files included).
fn others(dir: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

/// Forwards datagrams between the first sender it hears and `upstream`; `mangle` sees each
/// datagram with its direction (true: towards `upstream`) and may change it or drop it
/// (returns false).
struct Relay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Relay {
    fn start(
        upstream: SocketAddr,
        mut mangle: impl FnMut(bool, &mut Vec<u8>) -> bool + Send + 'static,
    ) -> Relay {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let addr = sock.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut client = None;
            let mut buf = vec![0u8; 65_536];
            while !s.load(Ordering::Relaxed) {
                let Ok((n, from)) = sock.recv_from(&mut buf) else {
                    continue;
                };
                let up = from != upstream;
                if up {
                    client = Some(from);
                }
                let mut d = buf[..n].to_vec();
                if !mangle(up, &mut d) {
                    continue;
                }
                let to = if up { Some(upstream) } else { client };
                if let Some(to) = to {
                    let _ = sock.send_to(&d, to);
                }
            }
        });
        Relay {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn a_file_arrives_byte_for_byte_with_each_controller() {
    let names: Vec<&str> = longhaul_cc::algorithms().iter().map(|a| a.name).collect();
    assert!(names.len() >= 8, "{names:?}");
    for (i, cc) in names.into_iter().enumerate() {
        let src = tempfile::tempdir().unwrap();
        let dst = tempfile::tempdir().unwrap();
        let (path, data) = random_file(src.path(), "data.bin", 6_000_000 + i, i as u64);
        let (addr, rx) = receiver(dst.path(), false, 1);
        let report = send(&path, addr, cc).unwrap_or_else(|e| panic!("{cc}: {e}"));
        let got = rx.join().unwrap();
        assert_eq!(
            std::fs::read(dst.path().join("data.bin")).unwrap(),
            data,
            "{cc}"
        );
        assert_eq!(report.size, data.len() as u64);
        assert_eq!(report.sha256, sha256_hex(&data), "{cc}");
        // Every packet of the file (and the header and digest) was sent at least once.
        let mss = config(cc).mss as u64;
        assert!(
            report.stats.packets_sent >= data.len() as u64 / mss,
            "{cc}: {report:?}"
        );
        // Loopback segments in software: GSO is available, and bursts leave in fewer calls.
        assert!(report.offloads.0, "{cc}: no GSO on loopback");
        assert!(
            report.socket.send_calls < report.socket.datagrams_sent,
            "{cc}: {:?}",
            report.socket
        );
        assert_eq!(got.len(), 1);
        let (stored, hex) = got[0].result.clone().unwrap();
        assert_eq!(stored, dst.path().join("data.bin"));
        assert_eq!(hex, report.sha256);
        assert_eq!(got[0].bytes, data.len() as u64);
        assert!(others(dst.path(), &["data.bin"]).is_empty());
    }
}

#[test]
fn without_offload_every_datagram_is_its_own_call() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (path, data) = random_file(src.path(), "plain.bin", 2_000_000, 4);
    let (addr, rx) = receiver(dst.path(), false, 1);
    let opts = SendOptions {
        offload: false,
        ..options("fast")
    };
    let report = send_file(&path, addr, opts, &AtomicBool::new(false), |_| {}).unwrap();
    rx.join().unwrap();
    assert_eq!(std::fs::read(dst.path().join("plain.bin")).unwrap(), data);
    assert_eq!(report.offloads, (false, false));
    assert_eq!(report.socket.send_calls, report.socket.datagrams_sent);
    assert!(report.socket.datagrams_sent > data.len() as u64 / 1500);
}

#[test]
fn a_lossy_path_still_delivers_the_exact_file() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (path, data) = random_file(src.path(), "lossy.bin", 3_000_000, 7);
    let (addr, rx) = receiver(dst.path(), false, 1);
    let mut rng = SmallRng::seed_from_u64(11);
    // 3 % of datagrams lost each way, handshakes and ACKs included.
    let relay = Relay::start(addr, move |_, _| rng.gen::<f64>() >= 0.03);
    let report = send(&path, relay.addr, "fast").unwrap();
    rx.join().unwrap();
    assert_eq!(std::fs::read(dst.path().join("lossy.bin")).unwrap(), data);
    let s = report.stats;
    assert!(s.packets_lost > 0 && s.packets_retransmitted > 0, "{s:?}");
    // About 3 % of ~2,100 data packets: losses were detected, and not wildly over-counted.
    assert!(s.packets_lost < s.packets_sent / 5, "{s:?}");
}

#[test]
fn a_damaged_datagram_is_caught_by_the_digest_and_nothing_is_stored() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (path, _) = random_file(src.path(), "fragile.bin", 2_000_000, 3);
    let (addr, rx) = receiver(dst.path(), false, 1);
    let mut seen = 0;
    // Flip one payload byte of the 200th full-sized datagram towards the receiver: decoding
    // cannot notice (payload bytes carry no check of their own), the digest must.
    let relay = Relay::start(addr, move |up, d| {
        if up && d.len() > 1000 {
            seen += 1;
            if seen == 200 {
                d[500] ^= 0x40;
            }
        }
        true
    });
    let err = send(&path, relay.addr, "reno").unwrap_err();
    match &err {
        NetError::Refused(why) => assert!(why.contains("SHA-256 mismatch"), "{why}"),
        e => panic!("expected a refusal, got {e}"),
    }
    let got = rx.join().unwrap();
    assert!(got[0].result.is_err());
    assert!(
        others(dst.path(), &[]).is_empty(),
        "{:?}",
        others(dst.path(), &[])
    );
}

#[test]
fn an_existing_file_is_refused_untouched_unless_overwrite() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (path, data) = random_file(src.path(), "results.h5", 500_000, 5);
    std::fs::write(dst.path().join("results.h5"), b"precious").unwrap();

    let (addr, rx) = receiver(dst.path(), false, 1);
    match send(&path, addr, "fast") {
        Err(NetError::Refused(why)) => {
            assert!(
                why.contains("results.h5 exists") && why.contains("--overwrite"),
                "{why}"
            )
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    rx.join().unwrap();
    assert_eq!(
        std::fs::read(dst.path().join("results.h5")).unwrap(),
        b"precious"
    );
    assert_eq!(others(dst.path(), &["results.h5"]), Vec::<String>::new());

    let (addr, rx) = receiver(dst.path(), true, 1);
    send(&path, addr, "fast").unwrap();
    rx.join().unwrap();
    assert_eq!(std::fs::read(dst.path().join("results.h5")).unwrap(), data);
}

#[test]
fn an_interrupted_sender_leaves_no_partial_file() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (path, _) = random_file(src.path(), "big.bin", 40_000_000, 9);
    let (addr, rx) = receiver(dst.path(), false, 1);
    // A slow path (every datagram towards the receiver delayed by the relay's pace) so the
    // transfer is still running when the sender is stopped.
    let relay = Relay::start(addr, |up, _| {
        if up {
            std::thread::sleep(Duration::from_micros(200));
        }
        true
    });
    let stop = AtomicBool::new(false);
    let mut reports = 0;
    let err = send_file(&path, relay.addr, options("fast"), &stop, |p| {
        reports += 1;
        assert!(p.bytes_acked < p.file_size);
        if reports == 3 {
            stop.store(true, Ordering::Relaxed);
        }
    })
    .unwrap_err();
    assert!(matches!(err, NetError::Interrupted), "{err}");
    let got = rx.join().unwrap();
    let why = got[0].result.clone().unwrap_err();
    // The close packet tells the receiver at once; when the relay's full queue drops it, the
    // idle timeout does, five seconds later.
    assert!(
        why.contains("closed") || why.contains("stopped answering"),
        "{why}"
    );
    assert!(got[0].bytes > 0, "{:?}", got[0]);
    assert!(
        others(dst.path(), &[]).is_empty(),
        "{:?}",
        others(dst.path(), &[])
    );
}

#[test]
fn a_closed_port_and_a_foreign_stream_get_clear_errors() {
    let src = tempfile::tempdir().unwrap();
    let (path, _) = random_file(src.path(), "x.bin", 10_000, 1);
    // Nothing listens: loopback answers with ICMP port unreachable.
    let free = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    match send(&path, free, "reno") {
        Err(NetError::PortClosed(a)) => assert_eq!(a, free),
        other => panic!("expected PortClosed, got {other:?}"),
    }
    // A directory is not a file; a name that is not one path component is refused locally.
    assert!(matches!(
        send(src.path(), free, "reno"),
        Err(NetError::NotAFile(_))
    ));
    let bad = send_file(
        &path,
        free,
        SendOptions {
            name: Some("../escape".into()),
            ..options("reno")
        },
        &AtomicBool::new(false),
        |_| {},
    );
    assert!(matches!(bad, Err(NetError::Framing(_))), "{bad:?}");
}

#[test]
fn stray_datagrams_open_no_session() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (path, data) = random_file(src.path(), "after.bin", 100_000, 2);
    let (addr, rx) = receiver(dst.path(), false, 1);
    let junk = UdpSocket::bind("127.0.0.1:0").unwrap();
    for len in [0usize, 1, 29, 1400] {
        junk.send_to(&vec![0xAB; len], addr).unwrap();
    }
    // The receiver counts only the real transfer (it serves exactly one, then returns).
    send(&path, addr, "reno").unwrap();
    let got = rx.join().unwrap();
    assert_eq!(got.len(), 1);
    assert!(got[0].result.is_ok(), "{:?}", got[0]);
    assert_eq!(std::fs::read(dst.path().join("after.bin")).unwrap(), data);
}
