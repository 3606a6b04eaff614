//! `send_paths` to a `Receiver` over loopback UDP, directly or through a relay that drops or
//! damages datagrams: files and trees arrive byte for byte or not at all, a cut transfer
//! resumes where it stopped, and every refusal reaches the sender with its reason. No
//! privileges needed.

use longhaul_cc::CcSpec;
use longhaul_net::framing::CHUNK_SIZE;
use longhaul_net::path::STAGING_DIR;
use longhaul_net::recv::{Event, Received, Receiver, RecvOptions};
use longhaul_net::send::{send_paths, Outcome, SendOptions, SendReport};
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
        r.serve(&stop, Some(count), |e| {
            if let Event::Session(t) = e {
                got.push(t.clone())
            }
        })
        .unwrap();
        got
    });
    (addr, h)
}

fn options(cc: &str) -> SendOptions {
    SendOptions {
        config: config(cc),
        name: None,
        follow_links: false,
        resume: true,
        rate_limit: None,
        interval: Duration::from_millis(100),
        connect_timeout: Duration::from_secs(5),
        offload: true,
    }
}

fn send(path: &Path, to: SocketAddr, cc: &str) -> Result<SendReport, NetError> {
    send_paths(
        &[path.to_path_buf()],
        to,
        options(cc),
        &AtomicBool::new(false),
        |_| {},
    )
}

/// Entries in `dir` other than the ones named, and anything in the staging directory (part
/// files and journals).
fn others(dir: &Path, keep: &[&str]) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()) && n != STAGING_DIR)
        .collect();
    if let Ok(staged) = std::fs::read_dir(dir.join(STAGING_DIR)) {
        found.extend(
            staged.map(|e| format!("{STAGING_DIR}/{}", e.unwrap().file_name().to_string_lossy())),
        );
    }
    found
}

fn stored_hex(report: &SendReport, i: usize) -> String {
    match &report.files[i].outcome {
        Outcome::Stored(hex) => hex.clone(),
        o => panic!("{}: {o:?}", report.files[i].path),
    }
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
        assert_eq!(report.files.len(), 1);
        assert_eq!(report.files[0].size, data.len() as u64);
        assert_eq!(report.bytes_sent(), data.len() as u64);
        assert_eq!(stored_hex(&report, 0), sha256_hex(&data), "{cc}");
        // Every packet of the file was sent at least once.
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
        assert_eq!(got[0].files.len(), 1);
        assert_eq!(got[0].files[0].result.as_ref().unwrap(), &sha256_hex(&data));
        assert_eq!(got[0].files[0].bytes, data.len() as u64);
        assert!(got[0].error.is_none(), "{:?}", got[0]);
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
    let report = send_paths(&[path], addr, opts, &AtomicBool::new(false), |_| {}).unwrap();
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
    let report = send(&path, relay.addr, "reno").unwrap();
    match &report.files[0].outcome {
        Outcome::Failed(why) => assert!(why.contains("SHA-256 mismatch"), "{why}"),
        o => panic!("expected a failure, got {o:?}"),
    }
    assert_eq!(report.failed(), 1);
    let got = rx.join().unwrap();
    assert!(got[0].files[0].result.is_err());
    // No file, and no part file to resume from: the data was wrong.
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
    let report = send(&path, addr, "fast").unwrap();
    match &report.files[0].outcome {
        Outcome::Failed(why) => assert!(
            why.contains("results.h5\" exists") && why.contains("--overwrite"),
            "{why}"
        ),
        o => panic!("expected a refusal, got {o:?}"),
    }
    assert_eq!(report.bytes_sent(), 0, "a refused file costs no bytes");
    rx.join().unwrap();
    assert_eq!(
        std::fs::read(dst.path().join("results.h5")).unwrap(),
        b"precious"
    );
    assert_eq!(others(dst.path(), &["results.h5"]), Vec::<String>::new());

    let (addr, rx) = receiver(dst.path(), true, 1);
    let report = send(&path, addr, "fast").unwrap();
    assert_eq!(report.failed(), 0);
    rx.join().unwrap();
    assert_eq!(std::fs::read(dst.path().join("results.h5")).unwrap(), data);
}

/// A relay slow enough that a transfer is still running when the test cuts it.
fn slow_relay(addr: SocketAddr) -> Relay {
    Relay::start(addr, |up, _| {
        if up {
            std::thread::sleep(Duration::from_micros(200));
        }
        true
    })
}

#[test]
fn an_interrupted_transfer_resumes_and_moves_only_what_was_missing() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (path, data) = random_file(src.path(), "big.bin", 40_000_000, 9);
    let (addr, rx) = receiver(dst.path(), false, 1);
    let relay = slow_relay(addr);
    let stop = AtomicBool::new(false);
    let mut reports = 0;
    let err = send_paths(&[path.clone()], relay.addr, options("fast"), &stop, |p| {
        reports += 1;
        assert!(p.done < p.total);
        if reports == 3 {
            stop.store(true, Ordering::Relaxed);
        }
    })
    .unwrap_err();
    assert!(matches!(err, NetError::Interrupted), "{err}");
    drop(relay);
    let got = rx.join().unwrap();
    let first = got[0].clone();
    assert!(first.error.is_some(), "{first:?}");
    // Nothing under the real name; the part file and journal wait in the staging area.
    let left = others(dst.path(), &[]);
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.iter().all(|n| n.starts_with(STAGING_DIR)), "{left:?}");

    // The receiver's event for the cut file is not reported as a file outcome; how much
    // reached its disk is what the part file holds.
    let part = left.iter().find(|n| n.ends_with(".part")).unwrap();
    let held = std::fs::metadata(dst.path().join(part)).unwrap().len();
    assert!(held > 0 && held < data.len() as u64, "{held}");

    let (addr, rx) = receiver(dst.path(), false, 1);
    let report = send(&path, addr, "fast").unwrap();
    rx.join().unwrap();
    assert_eq!(std::fs::read(dst.path().join("big.bin")).unwrap(), data);
    let f = &report.files[0];
    // Every whole chunk that reached the disk is resumed, and only the rest moves again.
    assert_eq!(f.resumed, held / CHUNK_SIZE * CHUNK_SIZE, "{f:?}");
    assert_eq!(f.sent + f.resumed, data.len() as u64, "{f:?}");
    assert!(others(dst.path(), &["big.bin"]).is_empty());
}

#[test]
fn no_resume_starts_over_and_a_changed_source_is_not_resumed() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (path, _) = random_file(src.path(), "v.bin", 30_000_000, 12);
    let cut = |path: &Path| {
        let (addr, rx) = receiver(dst.path(), false, 1);
        let relay = slow_relay(addr);
        let stop = AtomicBool::new(false);
        let mut n = 0;
        let _ = send_paths(
            &[path.to_path_buf()],
            relay.addr,
            options("fast"),
            &stop,
            |_| {
                n += 1;
                if n == 3 {
                    stop.store(true, Ordering::Relaxed);
                }
            },
        );
        drop(relay);
        rx.join().unwrap();
    };
    cut(&path);
    let (addr, rx) = receiver(dst.path(), false, 1);
    let opts = SendOptions {
        resume: false,
        ..options("fast")
    };
    let report = send_paths(&[path.clone()], addr, opts, &AtomicBool::new(false), |_| {}).unwrap();
    rx.join().unwrap();
    assert_eq!(report.files[0].resumed, 0);
    assert_eq!(report.files[0].sent, 30_000_000);

    // Cut again, then change the source's first bytes but keep its size and mtime: the
    // prefix digests disagree and the sender starts over; the stored file is the new one.
    std::fs::remove_file(dst.path().join("v.bin")).unwrap();
    cut(&path);
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let mut data = std::fs::read(&path).unwrap();
    data[10] ^= 1;
    std::fs::write(&path, &data).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let (addr, rx) = receiver(dst.path(), false, 1);
    let report = send(&path, addr, "fast").unwrap();
    rx.join().unwrap();
    assert_eq!(report.files[0].resumed, 0, "{:?}", report.files[0]);
    assert_eq!(std::fs::read(dst.path().join("v.bin")).unwrap(), data);
}

#[test]
fn a_tree_arrives_with_modes_mtimes_and_links_and_a_second_send_moves_nothing() {
    use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let root = src.path().join("run42");
    std::fs::create_dir_all(root.join("raw/day1")).unwrap();
    std::fs::create_dir_all(root.join("empty")).unwrap();
    let mut files = Vec::new();
    for (i, name) in [
        "raw/day1/a.dat",
        "raw/day1/b.dat",
        "raw/c.dat",
        "notes.txt",
        "zero",
    ]
    .iter()
    .enumerate()
    {
        let len = if *name == "zero" {
            0
        } else {
            100_000 * (i + 1) + 7
        };
        let (p, d) = random_file(&root, name, len, 40 + i as u64);
        files.push((name.to_string(), p, d));
    }
    std::fs::set_permissions(
        root.join("notes.txt"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    std::fs::set_permissions(
        root.join("raw/c.dat"),
        std::fs::Permissions::from_mode(0o4755),
    )
    .unwrap();
    symlink("raw/c.dat", root.join("latest")).unwrap();
    symlink("/etc/passwd", root.join("escape")).unwrap();

    let (addr, rx) = receiver(dst.path(), false, 1);
    let report = send(&root, addr, "cubic").unwrap();
    rx.join().unwrap();
    for (name, p, d) in &files {
        let got = dst.path().join("run42").join(name);
        assert_eq!(&std::fs::read(&got).unwrap(), d, "{name}");
        let (a, b) = (
            std::fs::metadata(p).unwrap(),
            std::fs::metadata(&got).unwrap(),
        );
        assert_eq!(
            (a.mtime(), a.mtime_nsec()),
            (b.mtime(), b.mtime_nsec()),
            "{name}"
        );
    }
    let mode = |p: &str| {
        std::fs::metadata(dst.path().join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!(mode("run42/notes.txt"), 0o640);
    // Permission bits travel; set-user-ID does not.
    assert_eq!(mode("run42/raw/c.dat"), 0o755);
    assert!(dst.path().join("run42/empty").is_dir());
    assert_eq!(
        std::fs::read_link(dst.path().join("run42/latest")).unwrap(),
        Path::new("raw/c.dat")
    );
    // A link pointing out of the tree is refused, and said so.
    assert!(std::fs::symlink_metadata(dst.path().join("run42/escape")).is_err());
    let escape = report
        .files
        .iter()
        .find(|f| f.path == "run42/escape")
        .unwrap();
    assert!(
        matches!(&escape.outcome, Outcome::Failed(w) if w.contains("outside")),
        "{escape:?}"
    );
    assert_eq!(report.failed(), 1);
    let total: u64 = files.iter().map(|f| f.2.len() as u64).sum();
    assert_eq!(report.bytes_sent(), total);

    // Everything is there: the second run skips every file and moves no file bytes.
    let (addr, rx) = receiver(dst.path(), false, 1);
    let again = send(&root, addr, "cubic").unwrap();
    rx.join().unwrap();
    assert_eq!(again.bytes_sent(), 0);
    assert!(again
        .files
        .iter()
        .filter(|f| f.size > 0)
        .all(|f| matches!(f.outcome, Outcome::Skipped(_))));
}

#[test]
fn a_rate_limit_holds_the_transfer_to_its_rate() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (path, data) = random_file(src.path(), "capped.bin", 4_000_000, 21);
    let (addr, rx) = receiver(dst.path(), false, 1);
    let opts = SendOptions {
        rate_limit: Some(20_000_000),
        ..options("bbr")
    };
    let report = send_paths(&[path], addr, opts, &AtomicBool::new(false), |_| {}).unwrap();
    rx.join().unwrap();
    assert_eq!(std::fs::read(dst.path().join("capped.bin")).unwrap(), data);
    // 32 Mb at 20 Mb/s: 1.6 s, less one read's burst allowance (0.42 s). Loopback alone
    // moves this in well under 0.1 s.
    let secs = report.duration.as_secs_f64();
    assert!(secs > 1.1, "{secs} s");
}

#[test]
fn a_closed_port_and_bad_names_get_clear_errors() {
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
    // A name that is not a relative path is refused before anything is sent.
    for name in ["../escape", "a\nb", &"x".repeat(256)] {
        let bad = send_paths(
            &[path.clone()],
            free,
            SendOptions {
                name: Some(name.to_string()),
                ..options("reno")
            },
            &AtomicBool::new(false),
            |_| {},
        );
        assert!(matches!(bad, Err(NetError::Usage(_))), "{name:?}: {bad:?}");
    }
}

#[test]
fn stray_datagrams_open_no_session_and_are_not_counted() {
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
    assert!(got.iter().filter(|s| s.genuine).count() == 1, "{got:?}");
    assert_eq!(std::fs::read(dst.path().join("after.bin")).unwrap(), data);
}
