//! `longhaul send`/`recv` as a user runs them, with the faults users meet: a process killed
//! mid-transfer (SIGKILL, no chance to clean up) and a receiver whose disk fills. The resumed
//! transfer moves only what was missing, asserted from the sender's byte counters, and ends
//! bit-exact.
//!
//! Loopback is faster than any real path, so the first sender runs under `--rate-limit` to be
//! still running when the test cuts it. The disk-full test mounts a small tmpfs and needs root
//! (it says it was skipped otherwise, and fails under `CI=true`).

mod bytes_common;

use bytes_common::incompressible;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const CHUNK: u64 = 1 << 20;
/// What a receiver may hold on disk but not yet in its journal (`CHECKPOINT_*` in
/// crates/net/src/part.rs): 16 chunks, or one second of data.
const UNJOURNALED: u64 = 16 * CHUNK;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_longhaul")
}

/// A child process killed when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Key homes for the two ends (`LONGHAUL_HOME`): each with a key pair from `longhaul keygen`,
/// the receiver's authorized_keys holding the sender's public key. The sender learns the
/// receiver's key on first contact (known_hosts).
struct Homes {
    _dir: tempfile::TempDir,
    rx: PathBuf,
    tx: PathBuf,
}

impl Homes {
    fn new() -> Homes {
        let dir = tempfile::tempdir().unwrap();
        let (rx, tx) = (dir.path().join("rx"), dir.path().join("tx"));
        for home in [&rx, &tx] {
            let ok = Command::new(bin())
                .arg("keygen")
                .env("LONGHAUL_HOME", home)
                .output()
                .unwrap();
            assert!(
                ok.status.success(),
                "{}",
                String::from_utf8_lossy(&ok.stderr)
            );
        }
        let public = std::fs::read_to_string(tx.join("id_x25519.pub")).unwrap();
        std::fs::write(rx.join("authorized_keys"), public).unwrap();
        Homes { _dir: dir, rx, tx }
    }
}

fn homes() -> &'static Homes {
    static H: std::sync::OnceLock<Homes> = std::sync::OnceLock::new();
    H.get_or_init(Homes::new)
}

fn free_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn recv(dir: &Path, port: u16, count: usize) -> Proc {
    Proc(
        Command::new(bin())
            .env("LONGHAUL_HOME", &homes().rx)
            .args(["recv", "-B", "127.0.0.1", "-p", &port.to_string()])
            .args(["-n", &count.to_string(), "--idle-timeout", "2s", "-d"])
            .arg(dir)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

fn send_cmd(file: &Path, port: u16, extra: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.env("LONGHAUL_HOME", &homes().tx)
        .args([
            "send",
            "-J",
            "--idle-timeout",
            "2s",
            "--connect-timeout",
            "10s",
        ])
        .args(extra)
        .arg(file)
        .arg(format!("127.0.0.1:{port}"));
    c
}

/// `send` with the key pair in `home` and the `extra` arguments, its summary as text (on
/// stderr).
fn send_text(home: &Path, path: &Path, port: u16, extra: &[&str]) -> Output {
    Command::new(bin())
        .env("LONGHAUL_HOME", home)
        .args(["send", "--idle-timeout", "2s"])
        .args(extra)
        .arg(path)
        .arg(format!("127.0.0.1:{port}"))
        .output()
        .unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "send failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn random_file(dir: &Path, len: usize, seed: u64) -> (PathBuf, Vec<u8>) {
    let data = incompressible(len, seed | 1);
    let p = dir.join("data.bin");
    std::fs::write(&p, &data).unwrap();
    (p, data)
}

/// The part file a receiver keeps in its staging directory, and its length.
fn part_len(dst: &Path) -> u64 {
    std::fs::read_dir(dst.join(".longhaul-partial"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
                .map(|e| e.metadata().map_or(0, |m| m.len()))
                .sum()
        })
        .unwrap_or(0)
}

/// Wait until the receiver's part file holds at least `bytes`; returns what it held.
fn wait_for_part(dst: &Path, bytes: u64) -> u64 {
    let t = Instant::now();
    loop {
        let n = part_len(dst);
        if n >= bytes {
            return n;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the part file reached only {n} bytes"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `send -J` reported the first file's digest as `data`'s; returns it in hex.
fn assert_reported_digest(v: &serde_json::Value, data: &[u8]) -> String {
    let mut h = longhaul_net::hashlist::FileHasher::new();
    h.update(data, |_| {});
    h.end();
    let want = longhaul_net::framing::hex(&h.digest());
    assert_eq!(
        v["files"][0]["blake3_list"].as_str(),
        Some(want.as_str()),
        "{v}"
    );
    // Bytes read around the page cache are some of those sent (none of a file just written).
    let direct = v["files"][0]["read_direct"].as_u64().expect("read_direct");
    assert!(direct <= v["files"][0]["sent"].as_u64().unwrap(), "{v}");
    want
}

/// Wait for a process started with its stderr piped; asserts it succeeded, returns stderr.
fn exit_and_stderr(p: &mut Proc) -> String {
    use std::io::Read;
    assert!(p.0.wait().unwrap().success());
    let mut err = String::new();
    p.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    err
}

fn sigkill(p: &Proc) {
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(p.0.id() as i32, libc::SIGKILL) };
}

/// Send again and check the resumed transfer: whole, bit-exact, and only the missing bytes
/// moved. `at_least` is how much the resumed prefix must hold.
fn resume_and_check(src: &Path, dst: &Path, data: &[u8], at_least: u64) {
    let port = free_port();
    let _rx = recv(dst, port, 1);
    std::thread::sleep(Duration::from_millis(300));
    let v = json(&send_cmd(src, port, &[]).output().unwrap());
    let (sent, resumed) = (
        v["bytes_sent"].as_u64().unwrap(),
        v["bytes_resumed"].as_u64().unwrap(),
    );
    eprintln!(
        "resumed {resumed} B, moved again {sent} B of {}",
        data.len()
    );
    assert_eq!(sent + resumed, data.len() as u64, "{v}");
    assert!(resumed >= at_least, "resumed {resumed} < {at_least}: {v}");
    assert_eq!(std::fs::read(dst.join("data.bin")).unwrap(), data);
    // The digest reported is the whole file's, resumed prefix included.
    assert_reported_digest(&v, data);
    assert_eq!(part_len(dst), 0, "the staging area is emptied");
}

/// A receiver and a rate-limited sender (48 MiB at 100 Mb/s: about 4 s, so a kill lands
/// mid-transfer), returned once the receiver's part file holds half the file, with what it
/// held then.
struct Midway {
    _src: tempfile::TempDir,
    dst: tempfile::TempDir,
    file: PathBuf,
    data: Vec<u8>,
    rx: Proc,
    tx: Proc,
    held: u64,
}

fn midway(seed: u64) -> Midway {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (file, data) = random_file(src.path(), 48 << 20, seed);
    let port = free_port();
    let rx = recv(dst.path(), port, 1);
    std::thread::sleep(Duration::from_millis(300));
    let tx = Proc(
        send_cmd(&file, port, &["--rate-limit", "100mbit"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let held = wait_for_part(dst.path(), data.len() as u64 / 2);
    Midway {
        _src: src,
        dst,
        file,
        data,
        rx,
        tx,
        held,
    }
}

/// Wait for a process to exit on its own.
fn wait_exit(p: &mut Proc) {
    let t = Instant::now();
    while p.0.try_wait().unwrap().is_none() {
        assert!(t.elapsed() < Duration::from_secs(30), "still running");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_receiver_killed_mid_transfer_resumes_from_its_journal() {
    let m = midway(7);
    sigkill(&m.rx);
    drop(m.rx);
    drop(m.tx);
    assert!(!m.dst.path().join("data.bin").exists());
    // Lost at most what the journal had not yet caught up with (16 chunks or one second at
    // 100 Mb/s = 12.5 MB; the larger bounds it), rounded down to whole chunks.
    let floor = (m.held.saturating_sub(UNJOURNALED.max(12_500_000))) / CHUNK * CHUNK;
    resume_and_check(&m.file, m.dst.path(), &m.data, floor);
}

#[test]
fn a_sender_killed_mid_transfer_resumes_and_moves_only_the_rest() {
    let mut m = midway(9);
    sigkill(&m.tx);
    // The receiver notices the silence after its idle timeout (2 s), journals every whole
    // chunk it holds, and ends that session (-n 1).
    wait_exit(&mut m.rx);
    resume_and_check(&m.file, m.dst.path(), &m.data, m.held / CHUNK * CHUNK);
}

/// True when the test may run as root; prints a skip notice (or panics under CI) otherwise.
fn root_or_skip(name: &str) -> bool {
    longhaul_testenv::root_or_skip(name, "needs root (mounts a small tmpfs to fill)")
}

/// A tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mount tmpfs at {}", at.display());
        Tmpfs(at.to_path_buf())
    }

    fn resize(&self, size: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .status()
            .unwrap()
            .success();
        assert!(ok, "remount {}", self.0.display());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_stops_both_ends_clearly_and_the_transfer_resumes_after_space_is_freed() {
    if !root_or_skip(
        "a_full_disk_stops_both_ends_clearly_and_the_transfer_resumes_after_space_is_freed",
    ) {
        return;
    }
    let src = tempfile::tempdir().unwrap();
    let top = tempfile::tempdir().unwrap();
    let disk = Tmpfs::mount(&top.path().join("disk"), "20m");
    let (file, data) = random_file(src.path(), 32 << 20, 11);
    let port = free_port();
    let rx = recv(&disk.0, port, 1);
    std::thread::sleep(Duration::from_millis(300));
    let out = send_cmd(&file, port, &[]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("disk is full") && err.contains("resume"),
        "{err}"
    );
    let rx_out = {
        let mut rx = rx;
        wait_exit(&mut rx);
        let mut s = String::new();
        use std::io::Read;
        rx.0.stderr.take().unwrap().read_to_string(&mut s).unwrap();
        s
    };
    assert!(rx_out.contains("disk is full"), "{rx_out}");
    // The part file and its journal stay, and nothing is under the real name.
    let held = part_len(&disk.0);
    assert!(held > 8 << 20, "part file holds {held} B");
    assert!(!disk.0.join("data.bin").exists());
    disk.resize("100m");
    resume_and_check(&file, &disk.0, &data, (8 << 20) / CHUNK * CHUNK);
}

#[test]
fn insecure_mode_is_explicit_and_warns_on_both_ends() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (file, data) = random_file(src.path(), 1 << 20, 5);
    let port = free_port();
    let mut rx = Proc(
        Command::new(bin())
            .args([
                "recv",
                "--insecure",
                "--once",
                "-B",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-d",
            ])
            .arg(dst.path())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_millis(300));
    let out = Command::new(bin())
        .args(["send", "--insecure"])
        .arg(&file)
        .arg(format!("127.0.0.1:{port}"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("WARNING: --insecure"), "{err}");
    // The text summary says what held the sender back: every state, shares of one whole.
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("sender's time: "))
        .unwrap_or_else(|| panic!("no sender's time in: {err}"));
    let shares: Vec<(&str, u32)> = line
        .split(", ")
        .map(|s| {
            let (name, pct) = s.rsplit_once(' ').unwrap();
            (name, pct.trim_end_matches('%').parse().unwrap())
        })
        .collect();
    let names: Vec<&str> = shares.iter().map(|s| s.0).collect();
    assert_eq!(
        names,
        [
            "sending",
            "window",
            "pacing",
            "late",
            "receiver_window",
            "no_data"
        ],
        "{line}"
    );
    let sum: u32 = shares.iter().map(|s| s.1).sum();
    assert!(
        (97..=103).contains(&sum),
        "shares add up to {sum} %: {line}"
    );
    let rx_err = exit_and_stderr(&mut rx);
    assert!(rx_err.contains("WARNING: --insecure"), "{rx_err}");
    assert_eq!(std::fs::read(dst.path().join("data.bin")).unwrap(), data);
}

#[test]
fn a_sender_without_a_key_is_told_how_to_make_one() {
    let home = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let (file, _) = random_file(src.path(), 10, 5);
    let out = Command::new(bin())
        .env("LONGHAUL_HOME", home.path())
        .args(["send"])
        .arg(&file)
        .arg("127.0.0.1:9")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("longhaul keygen") && err.contains("--insecure"),
        "{err}"
    );
}

#[test]
fn out_of_range_settings_are_refused_with_the_range() {
    for (flag, value, says) in [
        ("-w", "1e30", "between 64K and 4G"),
        ("-w", "1k", "between 64K and 4G"),
        ("--idle-timeout", "0s", "at least 1s"),
        ("-i", "0s", "at least 10ms"),
        ("--connect-timeout", "0s", "at least 1s"),
        ("--connect-timeout", "500ms", "at least 1s"),
    ] {
        let out = Command::new(bin())
            .args([
                "send",
                "--insecure",
                flag,
                value,
                "/etc/hostname",
                "127.0.0.1:9",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flag} {value}");
        assert!(err.contains(says), "{flag} {value}: {err}");
    }
    // `perf client` takes the same connect timeout, refused alike (before connecting anywhere).
    for value in ["0s", "500ms"] {
        let out = Command::new(bin())
            .args(["perf", "client", "--connect-timeout", value, "127.0.0.1"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "perf --connect-timeout {value}: {err}"
        );
        assert!(
            err.contains("at least 1s"),
            "perf --connect-timeout {value}: {err}"
        );
    }
}

/// `recv --discard` as a user runs it: the file crosses, is checked against the sender's
/// digest, and nothing is written (the receiver runs in an empty working directory, which
/// stays empty); `--discard` with a directory to store into is refused.
#[test]
fn recv_discard_verifies_and_writes_nothing() {
    let src = tempfile::tempdir().unwrap();
    let (file, data) = random_file(src.path(), 3 * CHUNK as usize + 5, 77);
    let cwd = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut rx = Proc(
        Command::new(bin())
            .env("LONGHAUL_HOME", &homes().rx)
            .current_dir(cwd.path())
            .args([
                "recv",
                "--discard",
                "-B",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .args(["-n", "1", "--idle-timeout", "2s"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_millis(300));
    let v = json(&send_cmd(&file, port, &[]).output().unwrap());
    let err = exit_and_stderr(&mut rx);
    let want = assert_reported_digest(&v, &data);
    assert!(err.contains("verified and discarded"), "{err}");
    assert!(err.contains(&want), "{err}");
    assert_eq!(std::fs::read_dir(cwd.path()).unwrap().count(), 0);

    let refused = Command::new(bin())
        .args(["recv", "--discard", "-d"])
        .arg(src.path())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(why.contains("cannot be used with"), "{why}");
}

/// A tree with an entry the sender cannot send (a name with a newline in it): the rest is
/// stored, the summary names the entry, escaped, with its reason, and `send` exits with
/// status 1 saying how many entries were not stored.
#[test]
fn a_tree_with_a_bad_name_stores_the_rest_and_exits_with_status_1() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let root = src.path().join("tree");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("good.txt"), b"kept").unwrap();
    std::fs::write(root.join("evil\nname"), b"x").unwrap();
    let port = free_port();
    let mut rx = recv(dst.path(), port, 1);
    std::thread::sleep(Duration::from_millis(300));
    let out = send_text(&homes().tx, &root, port, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("\"tree/evil\\nname\"  FAILED: ") && err.contains("control character"),
        "{err}"
    );
    assert!(
        err.contains("longhaul: 1 of 3 entries were not stored"),
        "{err}"
    );
    exit_and_stderr(&mut rx);
    assert_eq!(
        std::fs::read(dst.path().join("tree/good.txt")).unwrap(),
        b"kept"
    );
    assert!(!dst.path().join("tree/evil\nname").exists());
}

/// Forwards datagrams between a sender and the receiver at `upstream`, and after each sealed
/// datagram also delivers, the same way, a replay of it and a forgery (the same bytes under a
/// seal number never used, so that the window lets it through to the tag check): an attacker
/// on the path.
struct HostileRelay {
    addr: std::net::SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HostileRelay {
    fn start(upstream: std::net::SocketAddr) -> HostileRelay {
        use longhaul_proto::packet::{decode_outer, Outer, SEAL_HEADER_LEN};
        use std::sync::atomic::{AtomicBool, Ordering};
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let addr = sock.local_addr().unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            let (mut client, mut buf) = (None, vec![0u8; 65_536]);
            while !s.load(Ordering::Relaxed) {
                let Ok((n, from)) = sock.recv_from(&mut buf) else {
                    continue;
                };
                if from != upstream {
                    client = Some(from);
                }
                let Some(to) = (if from == upstream {
                    client
                } else {
                    Some(upstream)
                }) else {
                    continue;
                };
                let d = &mut buf[..n];
                let _ = sock.send_to(d, to);
                if let Ok(Outer::Sealed { seal_number, .. }) = decode_outer(d) {
                    let _ = sock.send_to(d, to);
                    let unused = seal_number + (1 << 40);
                    d[3..SEAL_HEADER_LEN].copy_from_slice(&unused.to_be_bytes());
                    let _ = sock.send_to(d, to);
                }
            }
        });
        HostileRelay {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for HostileRelay {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The counts in a `datagrams dropped: A forged or damaged, B replayed, C too old, D unsealed
/// (E rejected in all)` line of `text`, the first line starting with `prefix` (a receiver's
/// line goes on with `; F without a session`, left out here).
fn dropped_counts(text: &str, prefix: &str) -> [u64; 5] {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line {prefix:?} in: {text}"));
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .map(|w| w.parse().unwrap())
        .collect();
    let five = line.split(';').next().unwrap_or(line);
    assert!(numbers.len() >= 5, "{numbers:?} in {line:?}");
    let numbers: Vec<u64> = five
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .map(|w| w.parse().unwrap())
        .collect();
    numbers
        .try_into()
        .unwrap_or_else(|n| panic!("{n:?} in {line:?}"))
}

/// Through an attacker that replays and forges every sealed datagram both ways, two transfers
/// arrive exact, and each end's summary shows what it dropped: the sender's `-J` and text
/// summaries, and the receiver's line per session.
#[test]
fn replayed_and_forged_datagrams_are_shown_in_both_ends_summaries() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (file, data) = random_file(src.path(), 2 << 20, 31);
    let port = free_port();
    let mut rx = recv(dst.path(), port, 2);
    std::thread::sleep(Duration::from_millis(300));
    let relay = HostileRelay::start(format!("127.0.0.1:{port}").parse().unwrap());
    let relay_port = relay.addr.port();

    // 1500-byte packets (over loopback `--mtu auto` would send 64 KiB ones): many of them.
    let pinned = ["--mtu", "1500"];
    let v = json(&send_cmd(&file, relay_port, &pinned).output().unwrap());
    let d = &v["dropped_datagrams"];
    let count = |k: &str| d[k].as_u64().unwrap_or_else(|| panic!("no {k} in {v}"));
    // Towards the sender: a replay and a forgery of each ACK the receiver sealed.
    assert!(count("replays") > 0 && count("auth_failures") > 0, "{d}");
    assert_eq!(count("unsealed"), 0, "{d}");
    assert!(
        count("packets_rejected") >= count("replays") + count("auth_failures"),
        "{d}"
    );
    assert_eq!(std::fs::read(dst.path().join("data.bin")).unwrap(), data);
    std::fs::remove_file(dst.path().join("data.bin")).unwrap();

    let out = send_text(&homes().tx, &file, relay_port, &pinned);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let [forged, replayed, _, unsealed, rejected] = dropped_counts(&err, "datagrams dropped: ");
    assert!(forged > 0 && replayed > 0 && unsealed == 0, "{err}");
    assert!(rejected >= forged + replayed, "{err}");

    let rx_err = exit_and_stderr(&mut rx);
    drop(relay);
    assert_eq!(std::fs::read(dst.path().join("data.bin")).unwrap(), data);
    // Towards the receiver: a replay and a forgery of each data packet, about 1,500 of each
    // for 2 MiB.
    let [forged, replayed, _, unsealed, _] = dropped_counts(&rx_err, "  datagrams dropped: ");
    assert!(
        forged > 1000 && replayed > 1000 && unsealed == 0,
        "{rx_err}"
    );
}

/// A key home with a key pair that no receiver authorizes.
fn stranger_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let made = Command::new(bin())
        .arg("keygen")
        .env("LONGHAUL_HOME", home.path())
        .output()
        .unwrap();
    assert!(made.status.success());
    home
}

/// A sender whose key the receiver does not authorize is refused, and the receiver's log names
/// its address and its key's fingerprint.
#[test]
fn a_refused_sender_is_logged_with_its_address_and_fingerprint() {
    let stranger = stranger_home();
    let (key, _) =
        longhaul_net::keys::read_public_key(&stranger.path().join("id_x25519.pub")).unwrap();
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (file, _) = random_file(src.path(), 1000, 33);
    let port = free_port();
    let mut rx = recv(dst.path(), port, 1);
    std::thread::sleep(Duration::from_millis(300));
    let out = send_text(stranger.path(), &file, port, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("does not authorize"),
        "{err}"
    );
    // A real transfer ends the receiver (-n 1): the refused one does not count.
    json(&send_cmd(&file, port, &[]).output().unwrap());
    let rx_err = exit_and_stderr(&mut rx);
    let line = rx_err
        .lines()
        .find(|l| l.contains("not authorized"))
        .unwrap_or_else(|| panic!("no refusal in: {rx_err}"));
    assert!(line.starts_with("127.0.0.1:"), "{line}");
    assert!(line.contains(&key.fingerprint()), "{line}");
}

/// A part file and journal as a receiver leaves them, for `path`, last written `age` ago.
fn leave_part(dst: &Path, key: &str, path: &str, bytes: usize, age: Duration) {
    let staging = dst.join(".longhaul-partial");
    std::fs::create_dir_all(&staging).unwrap();
    // The journal's header (journal.rs): magic, size, mtime, chunk shift, the path.
    let mut j = b"LHJ2".to_vec();
    j.extend_from_slice(&(bytes as u64).to_be_bytes());
    j.extend_from_slice(&0i64.to_be_bytes());
    j.extend_from_slice(&0u32.to_be_bytes());
    j.push(20);
    j.extend_from_slice(&(path.len() as u16).to_be_bytes());
    j.extend_from_slice(path.as_bytes());
    let when = std::time::SystemTime::now() - age;
    for (name, data) in [
        (format!("{key}.part"), vec![7u8; bytes]),
        (format!("{key}.journal"), j),
    ] {
        let p = staging.join(name);
        std::fs::write(&p, data).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_times(std::fs::FileTimes::new().set_modified(when))
            .unwrap();
    }
}

/// `recv --clean-parts DAYS` removes the part files nothing wrote for DAYS days, naming each,
/// keeps the newer ones, and receives nothing.
#[test]
fn clean_parts_removes_part_files_unwritten_for_the_days_given() {
    let dst = tempfile::tempdir().unwrap();
    let day = Duration::from_secs(86_400);
    leave_part(dst.path(), &"a".repeat(32), "old/run.dat", 5000, 10 * day);
    leave_part(dst.path(), &"b".repeat(32), "new.dat", 300, day);
    let out = Command::new(bin())
        .args(["recv", "--clean-parts", "7", "-d"])
        .arg(dst.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("removed \"old/run.dat\""), "{err}");
    assert!(err.contains("1 part file(s)"), "{err}");
    assert!(!err.contains("new.dat"), "{err}");
    let mut left: Vec<String> = std::fs::read_dir(dst.path().join(".longhaul-partial"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "locks")
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            format!("{}.journal", "b".repeat(32)),
            format!("{}.part", "b".repeat(32))
        ],
        "{err}"
    );
}

/// `recv -J` writes one line of JSON per ended transfer on stdout: the file stored with the
/// digest the sender reported, and the receiver's dropped-datagram counters, among them the
/// datagrams that came from an address without a session (here 3 of junk sent before the
/// transfer), which the text log shows too.
#[test]
fn recv_json_reports_the_transfer_and_datagrams_without_a_session() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (file, data) = random_file(src.path(), 200_000, 91);
    let port = free_port();
    let mut rx = Command::new(bin())
        .env("LONGHAUL_HOME", &homes().rx)
        .args(["recv", "-J", "-B", "127.0.0.1", "-p", &port.to_string()])
        .args(["-n", "1", "--idle-timeout", "2s", "-d"])
        .arg(dst.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Junk only once the receiver says it is bound (else it would reach no socket).
    use std::io::BufRead;
    let mut err = std::io::BufReader::new(rx.stderr.take().unwrap());
    let mut log = String::new();
    while !log.contains("receiving into") {
        assert!(err.read_line(&mut log).unwrap() > 0, "{log}");
    }
    let rest = std::thread::spawn(move || {
        let mut more = String::new();
        std::io::Read::read_to_string(&mut err, &mut more).unwrap();
        more
    });
    let junk = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for len in [1usize, 29, 1400] {
        junk.send_to(&vec![0xAB; len], ("127.0.0.1", port)).unwrap();
    }
    let sent = json(&send_cmd(&file, port, &[]).output().unwrap());
    let want = assert_reported_digest(&sent, &data);
    let out = rx.wait_with_output().unwrap();
    log += &rest.join().unwrap();
    assert!(out.status.success(), "{log}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(v["files"][0]["path"], "data.bin", "{v}");
    assert_eq!(v["files"][0]["status"], "stored", "{v}");
    assert_eq!(v["files"][0]["bytes"], 200_000, "{v}");
    assert_eq!(
        v["files"][0]["blake3_list"].as_str(),
        Some(want.as_str()),
        "{v}"
    );
    assert_eq!(v["error"], serde_json::Value::Null, "{v}");
    assert_eq!(v["dropped_datagrams"]["without_session"], 3, "{v}");
    assert_eq!(v["dropped_datagrams"]["auth_failures"], 0, "{v}");
    assert!(
        v["sender_key"]
            .as_str()
            .unwrap()
            .starts_with("longhaul-x25519 "),
        "{v}"
    );
    assert!(log.contains("; 3 without a session"), "{log}");
    assert_eq!(std::fs::read(dst.path().join("data.bin")).unwrap(), data);
}

/// `longhaul probe` against a running `longhaul recv`: the receiver answers it with its own
/// keys and admission (a prober whose key it does not authorize gets nothing), and goes on
/// receiving transfers; the probe does not count as one of its `-n` transfers.
#[test]
fn a_receiver_answers_probes_and_goes_on_receiving() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut r = recv(dir.path(), port, 1);
    let probe = |home: &Path| {
        Command::new(bin())
            .env("LONGHAUL_HOME", home)
            .args(["probe", &format!("127.0.0.1:{port}"), "-J"])
            .args(["--time", "10s", "--pings", "10"])
            .output()
            .unwrap()
    };
    let out = probe(&homes().tx);
    let report = json(&out);
    let rtt = report["rtt"]["value"].as_f64().expect("an RTT");
    assert!(rtt > 0.0 && rtt < 0.05, "{report}");
    assert_eq!(report["rtt"]["samples"], 10, "{report}");
    // Loopback's MTU (65536) is above an IP packet's largest: the largest UDP datagram's
    // packet, 65535 bytes, arrives.
    assert_eq!(report["path_mtu"]["value"], 65535.0, "{report}");
    // A prober the receiver does not authorize is refused before anything is measured.
    let stranger = stranger_home();
    let refused = probe(stranger.path());
    assert!(!refused.status.success(), "a stranger's probe was answered");
    // The receiver is still there for a transfer, which ends it (-n 1).
    let source = tempfile::tempdir().unwrap();
    let file = source.path().join("after-probe.bin");
    std::fs::write(&file, vec![7u8; 300_000]).unwrap();
    let sent = json(&send_cmd(&file, port, &[]).output().unwrap());
    assert_eq!(sent["files"][0]["status"], "stored", "{sent}");
    let status = r.0.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(r.0.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
    assert!(
        err.contains("a probe of "),
        "the receiver reports the probe: {err}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("after-probe.bin"))
            .unwrap()
            .len(),
        300_000
    );
}
