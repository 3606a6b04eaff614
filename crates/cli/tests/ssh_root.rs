//! `longhaul send FILE root@host:DIR` as a user runs it: the built binary, a real OpenSSH server
//! on the far side of `longhaul emu pair`, and the ssh client on the near side (needs root).
//!
//! Side A of the pair runs `sshd` with a configuration, host key and authorized key of its own,
//! all in a scratch directory, so the machine's ssh setup is neither used nor changed. Side B
//! runs `longhaul send`, which logs in through that sshd, starts `longhaul recv --once` there,
//! and moves the data over UDP across the emulated 100 Mb/s, 50 ms path.
//!
//! Without root the tests print that they were skipped; with `CI=true` they fail instead. The
//! emulator and sshd are held by guards that stop them on failure too; a global lock keeps two
//! emulators from timing packets at once on a 2-core machine. Timeouts are generous: the tests
//! assert what happens, not how fast, and must pass with every core busy.

mod bytes_common;

use bytes_common::incompressible;
use longhaul_emu::sys::{netns, state};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// True when the test may run; prints a skip notice (or panics under CI) otherwise.
fn root_or_skip(name: &str) -> bool {
    longhaul_testenv::root_or_skip(name, "needs root (network namespaces, TUN devices, sshd)")
}

const SSHD: &str = "/usr/sbin/sshd";

/// A child process stopped (and reaped) when the guard goes, with a clean-up after it.
struct Guard {
    child: Child,
    after: fn(),
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        (self.after)();
    }
}

/// The scratch directory, removed when the test passes (kept for a look when it fails).
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("lh-ssh-root-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// `longhaul emu pair` across a 100 Mb/s, 25 ms each way path; returns the guard and the state.
fn start_pair() -> (Guard, state::InstanceState) {
    let child = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args(["emu", "pair", "--rate", "100mbit", "--delay", "25ms"])
        .args(["--queue-packets", "800", "--duration", "600s"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("longhaul emu starts");
    let mut emu = Guard {
        child,
        after: || {
            state::cleanup_stale();
        },
    };
    let pid = emu.child.id();
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(30) {
        if let Some(s) = state::instances().into_iter().find(|s| s.pid == pid) {
            if s.side_a.as_deref().is_some_and(netns::exists) {
                // The state file is written before the devices; give setup a moment.
                std::thread::sleep(Duration::from_millis(500));
                return (emu, s);
            }
        }
        if let Some(st) = emu.child.try_wait().unwrap() {
            let mut err = String::new();
            let _ = emu.child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("emulator exited early ({st}): {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("emulator not ready after 30 s");
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// An ed25519 key pair made by ssh-keygen, without a passphrase.
fn keygen(path: &Path) {
    run(Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "longhaul-test", "-f"])
        .arg(path));
}

/// sshd in namespace `ns`, everything it reads in `dir`: its host key, the one client key it
/// accepts (`dir/client`, for root), its pid file and its log (`dir/sshd.log`).
fn start_sshd(ns: &str, dir: &Path) -> Guard {
    keygen(&dir.join("host"));
    keygen(&dir.join("client"));
    std::fs::copy(dir.join("client.pub"), dir.join("authorized_keys")).unwrap();
    // The privilege separation directory, which sshd refuses to start without.
    std::fs::create_dir_all("/run/sshd").unwrap();
    let config = dir.join("sshd_config");
    let d = dir.display();
    std::fs::write(
        &config,
        format!(
            "Port 22\n\
             HostKey {d}/host\n\
             PidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\n\
             PermitRootLogin prohibit-password\n\
             PubkeyAuthentication yes\n\
             PasswordAuthentication no\n\
             KbdInteractiveAuthentication no\n\
             UsePAM no\n\
             StrictModes no\n\
             PrintMotd no\n"
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join("sshd.log")).unwrap();
    let child = Command::new("ip")
        .args(["netns", "exec", ns, SSHD, "-D", "-e", "-f"])
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("sshd starts");
    let mut sshd = Guard {
        child,
        after: || {},
    };
    // sshd writes its pid file once it listens.
    let t = Instant::now();
    while !dir.join("sshd.pid").exists() {
        if let Some(st) = sshd.child.try_wait().unwrap() {
            panic!("sshd exited ({st}): {}", sshd_log(dir));
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "sshd not listening after 30 s: {}",
            sshd_log(dir)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    sshd
}

fn sshd_log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default()
}

/// The `--ssh` command: the client key `dir/key`, no configuration or known hosts of the
/// machine.
fn ssh_command(dir: &Path, key: &str) -> String {
    format!(
        "ssh -F /dev/null -i {}/{key} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no \
         -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o ConnectTimeout=30",
        dir.display()
    )
}

/// Processes whose command line holds `needle` (this machine's, every namespace's).
fn processes_with(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if !e
            .file_name()
            .to_string_lossy()
            .bytes()
            .all(|b| b.is_ascii_digit())
        {
            continue;
        }
        if let Ok(c) = std::fs::read(e.path().join("cmdline")) {
            let c = String::from_utf8_lossy(&c).replace('\0', " ");
            if c.contains(needle) {
                out.push(format!("{}: {c}", e.file_name().to_string_lossy()));
            }
        }
    }
    out
}

/// Waits until no process's command line holds `needle`; panics with them otherwise.
fn gone(needle: &str, limit: Duration) {
    let t = Instant::now();
    loop {
        let left = processes_with(needle);
        if left.is_empty() {
            return;
        }
        assert!(
            t.elapsed() < limit,
            "still running after {limit:?}: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Incompressible bytes.
fn data(n: usize) -> Vec<u8> {
    incompressible(n, 0x2545_F491_4F6C_DD1D)
}

/// What each launch test starts from: side a's namespace runs sshd, side b sends `src/run.dat`
/// (8 MB of incompressible bytes: a few seconds of slow start and transfer across 50 ms of
/// round trip) to `dest`, `root@a:dst`. Dropped in field order: sshd, the emulated pair, then
/// the scratch directory.
struct Launch {
    _sshd: Guard,
    _emu: Guard,
    scratch: Scratch,
    src: PathBuf,
    dst: PathBuf,
    bytes: Vec<u8>,
    nb: String,
    addr_a: String,
    dest: String,
}

impl Launch {
    fn start(tag: &str) -> Launch {
        let scratch = Scratch::new(tag);
        let dir = &scratch.0;
        let (src, dst) = (dir.join("src"), dir.join("dst"));
        std::fs::create_dir_all(&src).unwrap();
        std::fs::create_dir_all(&dst).unwrap();
        let bytes = data(8_000_000);
        std::fs::write(src.join("run.dat"), &bytes).unwrap();
        let (emu, st) = start_pair();
        let (na, nb) = (st.side_a.clone().unwrap(), st.side_b.clone().unwrap());
        let sshd = start_sshd(&na, dir);
        let dest = format!("root@{}:{}", st.addr_a, dst.display());
        Launch {
            _sshd: sshd,
            _emu: emu,
            scratch,
            src,
            dst,
            bytes,
            nb,
            addr_a: st.addr_a,
            dest,
        }
    }
}

/// The JSON on the standard output of a run that must have succeeded, and its standard error
/// (shown under `what`); a failure shows sshd's log too (`dir/sshd.log`).
fn json_of(out: &Output, what: &str, dir: &Path) -> (serde_json::Value, String) {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("{what}:\n{err}");
    assert!(
        out.status.success(),
        "{what}: failed ({}):\n{err}\nsshd:\n{}",
        out.status,
        sshd_log(dir)
    );
    (serde_json::from_slice(&out.stdout).unwrap(), err)
}

/// `longhaul COMMAND` in namespace `ns` logging in with the key `dir/key` (a command to
/// complete).
fn longhaul_in(command: &str, ns: &str, dir: &Path, key: &str) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_longhaul"), command])
        .args(["--ssh", &ssh_command(dir, key)])
        .stdin(Stdio::null());
    c
}

/// `longhaul send` in namespace `ns` logging in with the key `dir/key` (a command to complete).
fn send_in(ns: &str, dir: &Path, key: &str) -> Command {
    longhaul_in("send", ns, dir, key)
}

/// The whole launch: a file arrives byte for byte through sshd's login and longhaul's UDP, both
/// ends exit 0, nothing stays behind; a wrong remote path and a refused login are named in
/// clear errors; a sender stopped mid-transfer leaves no ssh and no receiver running.
#[test]
fn send_starts_the_receiver_over_ssh_and_moves_a_file() {
    if !root_or_skip("send_starts_the_receiver_over_ssh_and_moves_a_file") {
        return;
    }
    let _g = lock();
    let l = Launch::start("launch");
    let (dir, src, dst, bytes, nb) = (&l.scratch.0, &l.src, &l.dst, &l.bytes, &l.nb);
    let bin = env!("CARGO_BIN_EXE_longhaul");
    let dest = &l.dest;

    // 1. The file arrives whole; both ends succeed.
    let out = send_in(nb, dir, "client")
        .args(["--remote-longhaul", bin, "--launch-timeout", "120s", "-J"])
        .arg(src.join("run.dat"))
        .arg(dest)
        .output()
        .unwrap();
    let (v, err) = json_of(&out, "send", dir);
    assert_eq!(std::fs::read(dst.join("run.dat")).unwrap(), *bytes);
    assert_eq!(v["files"][0]["status"], "stored", "{v}");
    assert_eq!(v["bytes_sent"].as_u64(), Some(8_000_000), "{v}");
    // Authenticated and sealed with the one-time keys that crossed the ssh channel.
    assert!(v["cipher"].is_string(), "{v}");
    assert!(
        v["peer_key"]
            .as_str()
            .unwrap()
            .starts_with("longhaul-x25519 "),
        "{v}"
    );
    // The data went over UDP to side A's address, at the port the receiver announced.
    let peer = v["peer"].as_str().unwrap();
    assert!(peer.starts_with(&format!("{}:", l.addr_a)), "{peer}");
    assert!(
        !peer.ends_with(":5301"),
        "a kernel-chosen port, not the default: {peer}"
    );
    // The remote receiver's own lines came through ssh.
    assert!(err.contains("remote: receiving into"), "{err}");
    assert!(err.contains("session ended"), "{err}");
    // `recv --once` exited by itself (ssh returned 0 only after it did).
    gone(&dst.display().to_string(), Duration::from_secs(10));

    // 2. A wrong remote path: a clear error that names it, and nothing left running.
    let missing = "/nonexistent/bin/longhaul";
    let out = send_in(nb, dir, "client")
        .args(["--remote-longhaul", missing, "--launch-timeout", "120s"])
        .arg(src.join("run.dat"))
        .arg(format!("root@{}:{}", l.addr_a, dir.join("other").display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("send with a wrong --remote-longhaul:\n{err}");
    assert!(!out.status.success());
    assert!(err.contains(missing), "{err}");
    assert!(err.contains("was not found on root@"), "{err}");
    assert!(err.contains("--remote-longhaul"), "{err}");

    // 3. A key sshd does not accept: the login is named as what failed.
    keygen(&dir.join("stranger"));
    let out = send_in(nb, dir, "stranger")
        .args(["--remote-longhaul", bin])
        .arg(src.join("run.dat"))
        .arg(format!("root@{}:{}", l.addr_a, dir.join("other").display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("send with a key sshd does not accept:\n{err}");
    assert!(!out.status.success());
    assert!(err.contains("ssh could not log in to root@"), "{err}");
    assert!(err.contains("authentication failed"), "{err}");
    assert!(err.contains("Permission denied"), "{err}");

    // 4. The sender stopped mid-transfer (SIGTERM, as `kill` or a closing terminal would; the
    // terminal's Ctrl-C also reaches ssh itself): ssh and the receiver go too, the part file
    // stays for a resume.
    let slow = dir.join("slow");
    std::fs::create_dir_all(&slow).unwrap();
    let mut sender = send_in(nb, dir, "client")
        .args(["--remote-longhaul", bin, "--launch-timeout", "120s"])
        .args(["--rate-limit", "4mbit"])
        .arg(src.join("run.dat"))
        .arg(format!("root@{}:{}", l.addr_a, slow.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = sender.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    // Wait for data to flow: the receiver's part file grows (16 s at 4 Mb/s in all).
    let partial = slow.join(".longhaul-partial");
    let t = Instant::now();
    let started = loop {
        let held: u64 = walk_sizes(&partial);
        if held > 200_000 {
            break true;
        }
        if t.elapsed() > Duration::from_secs(120) || sender.try_wait().unwrap().is_some() {
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // SAFETY: kill(2) on our own child (`ip netns exec` execs longhaul in its place).
    unsafe { libc::kill(sender.id() as i32, libc::SIGTERM) };
    let t = Instant::now();
    let status = loop {
        if let Some(s) = sender.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > Duration::from_secs(60) {
            let _ = sender.kill();
            panic!("the sender did not stop within 60 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let err = reader.join().unwrap();
    eprintln!("send stopped mid-transfer ({status}):\n{err}");
    assert!(started, "no data arrived before the stop:\n{err}");
    assert!(!status.success());
    assert!(err.contains("interrupted"), "{err}");
    // No ssh client of this test, and no receiver, outlives the sender.
    gone(
        &format!("{}/client", dir.display()),
        Duration::from_secs(15),
    );
    gone(&slow.display().to_string(), Duration::from_secs(15));
    assert!(walk_sizes(&partial) > 0, "the part file was not kept");
}

/// Bytes in the files under `dir` (0 when it does not exist).
fn walk_sizes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => walk_sizes(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}

/// Part files and journals in the staging directory under `dir` (its lock file holds none).
fn part_files(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir.join(".longhaul-partial")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".part") || n.ends_with(".journal"))
        .collect()
}

/// A send over ssh killed mid-file (SIGKILL: no clean-up of any kind) and run again at once
/// resumes what the first one left, although each launch has a one-time key of its own: the
/// part file belongs to the ssh user. The file arrives exact and no part file stays behind.
#[test]
fn a_send_over_ssh_killed_and_run_again_resumes() {
    if !root_or_skip("a_send_over_ssh_killed_and_run_again_resumes") {
        return;
    }
    let _g = lock();
    let l = Launch::start("resume");
    let (dir, src, dst, bytes, nb) = (&l.scratch.0, &l.src, &l.dst, &l.bytes, &l.nb);
    let bin = env!("CARGO_BIN_EXE_longhaul");
    let dest = &l.dest;

    // 1. A slow send (16 s at 4 Mb/s), killed once 3 MB are on the receiver's disk.
    let mut sender = send_in(nb, dir, "client")
        .args(["--remote-longhaul", bin, "--launch-timeout", "120s"])
        .args(["--rate-limit", "4mbit"])
        .arg(src.join("run.dat"))
        .arg(dest)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let partial = dst.join(".longhaul-partial");
    let t = Instant::now();
    let started = loop {
        if walk_sizes(&partial) > 3_000_000 {
            break true;
        }
        if t.elapsed() > Duration::from_secs(120) || sender.try_wait().unwrap().is_some() {
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // SAFETY: kill(2) on our own child (`ip netns exec` execs longhaul in its place).
    unsafe { libc::kill(sender.id() as i32, libc::SIGKILL) };
    let _ = sender.wait();
    assert!(started, "no data arrived before the kill");

    // 2. Run again at once: it resumes, and the file arrives exact.
    let out = send_in(nb, dir, "client")
        .args(["--remote-longhaul", bin, "--launch-timeout", "120s", "-J"])
        .arg(src.join("run.dat"))
        .arg(dest)
        .output()
        .unwrap();
    let (v, _) = json_of(&out, "send run again", dir);
    assert_eq!(v["files"][0]["status"], "stored", "{v}");
    let resumed = v["bytes_resumed"].as_u64().unwrap();
    assert!(resumed >= 1 << 20, "nothing resumed: {v}");
    assert_eq!(std::fs::read(dst.join("run.dat")).unwrap(), *bytes);
    gone(&dst.display().to_string(), Duration::from_secs(15));
    assert_eq!(part_files(dst), Vec::<String>::new(), "orphaned part files");
}

/// A network namespace of this test's own, with only its loopback up; deleted, with whatever
/// still runs in it, when dropped.
struct Namespace(String);

impl Namespace {
    fn new(tag: &str) -> Namespace {
        let name = format!("lh-ssh-{tag}-{}", std::process::id());
        netns::kill_all_in(&name);
        let _ = netns::delete(&name);
        netns::add(&name).expect("ip netns add");
        Namespace(name)
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        netns::kill_all_in(&self.0);
        let _ = netns::delete(&self.0);
    }
}

/// The probe servers (`probe --serve`) running in namespace `ns`.
fn probe_servers(ns: &str) -> Vec<String> {
    netns::pids_in(ns)
        .into_iter()
        .filter_map(|pid| {
            let c = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let c = String::from_utf8_lossy(&c).replace('\0', " ");
            c.contains("--serve").then(|| format!("{pid}: {c}"))
        })
        .collect()
}

/// Waits until no probe server runs in `ns`; panics with them otherwise.
fn no_probe_server(ns: &str, limit: Duration) {
    let t = Instant::now();
    while !probe_servers(ns).is_empty() {
        assert!(
            t.elapsed() < limit,
            "a probe server still runs after {limit:?}: {:?}",
            probe_servers(ns)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `longhaul probe … root@127.0.0.1:` in namespace `ns`, logging in with the key `dir/client`
/// to sshd on the namespace's loopback (a command to complete).
fn probe_in(ns: &str, dir: &Path, longhaul: &str) -> Command {
    let mut c = longhaul_in("probe", ns, dir, "client");
    c.args(["--remote-longhaul", longhaul, "--launch-timeout", "120s"])
        .args(["--mtu", "1500"]);
    c
}

/// `longhaul probe root@127.0.0.1:` as a user runs it: sshd (in a namespace of the test's own,
/// on its loopback) starts `longhaul probe --serve` for one probe with one-time keys, the
/// prober measures the path to the port it announced, text and `-J` as a direct probe, and the
/// probe server is gone when the prober returns. A missing remote longhaul and a broken
/// announce line get clear errors; a prober killed mid-probe takes the probe server with it.
#[test]
fn probe_starts_the_probe_server_over_ssh_and_measures() {
    if !root_or_skip("probe_starts_the_probe_server_over_ssh_and_measures") {
        return;
    }
    let _g = lock();
    let scratch = Scratch::new("probe");
    let dir = &scratch.0;
    let ns = Namespace::new("probe");
    let _sshd = start_sshd(&ns.0, dir);
    let bin = env!("CARGO_BIN_EXE_longhaul");
    let target = "root@127.0.0.1:";

    // 1. -J: the report, measured over the one-time keys that crossed ssh.
    let out = probe_in(&ns.0, dir, bin)
        .args(["-J", "-t", "10s", "--pings", "10", target])
        .output()
        .unwrap();
    let (v, err) = json_of(&out, "probe -J", dir);
    let rtt = v["rtt"]["value"].as_f64().expect("an RTT");
    assert!(rtt > 0.0 && rtt < 0.05, "loopback's RTT: {v}");
    assert_eq!(v["rtt"]["samples"], 10, "{v}");
    assert_eq!(v["path_mtu"]["value"], 1500.0, "{v}");
    let peer = v["peer"].as_str().unwrap();
    assert!(peer.starts_with("127.0.0.1:"), "{peer}");
    assert!(!peer.ends_with(":5301"), "a kernel-chosen port: {peer}");
    // The probe server's own lines came through ssh; it served the one probe.
    assert!(err.contains("remote: serving probes on"), "{err}");
    assert!(err.contains("a probe of "), "{err}");
    // It exited by itself after the probe (ssh returned 0 only after it did).
    no_probe_server(&ns.0, Duration::from_secs(5));

    // 2. Text, as a direct probe prints it.
    let out = probe_in(&ns.0, dir, bin)
        .args(["-t", "5s", target])
        .output()
        .unwrap();
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    eprintln!("probe:\n{err}{text}");
    assert!(out.status.success(), "{err}");
    assert!(text.starts_with("probe of 127.0.0.1:"), "{text}");
    assert!(text.contains("base RTT"), "{text}");
    assert!(
        err.contains("starting longhaul probe --serve on root@127.0.0.1"),
        "{err}"
    );
    no_probe_server(&ns.0, Duration::from_secs(5));

    // 3. No longhaul where --remote-longhaul says: named, with what to do.
    let missing = "/nonexistent/bin/longhaul";
    let out = probe_in(&ns.0, dir, missing).arg(target).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("probe with a wrong --remote-longhaul:\n{err}");
    assert!(!out.status.success());
    assert!(
        err.contains(&format!("{missing:?} was not found on root@127.0.0.1")),
        "{err}"
    );
    assert!(err.contains("--remote-longhaul"), "{err}");

    // 4. A remote end whose announce line does not read: said so, and it is stopped.
    let fake = dir.join("fake-longhaul");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho longhaul-recv-ready port=x\nexec cat >/dev/null\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = probe_in(&ns.0, dir, &fake.display().to_string())
        .arg(target)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("probe with a broken announce line:\n{err}");
    assert!(!out.status.success());
    assert!(err.contains("\"port=x\" in the announce line"), "{err}");
    assert!(err.contains("the same version as this one"), "{err}");
    gone(&fake.display().to_string(), Duration::from_secs(15));

    // 5. The prober killed mid-probe (SIGKILL: no clean-up of its own): the ssh session ends
    // with it, and the probe server stops on its closed standard input. A million pings keep
    // the probe going for a while on loopback.
    let mut prober = probe_in(&ns.0, dir, bin)
        .args(["-t", "60s", "--pings", "1000000", target])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while probe_servers(&ns.0).is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(120) && prober.try_wait().unwrap().is_none(),
            "no probe server started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(1));
    assert!(prober.try_wait().unwrap().is_none(), "the probe ended");
    prober.kill().unwrap();
    let _ = prober.wait();
    no_probe_server(&ns.0, Duration::from_secs(15));
    gone(
        &format!("{}/client", dir.display()),
        Duration::from_secs(15),
    );
}
