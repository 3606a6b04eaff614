//! `longhaul emu` as a user runs it: the built binary, with real namespaces (needs root).
//!
//! Without root these tests print that they were skipped; with `CI=true` they fail instead. Each
//! spawned emulator is held by a guard that kills it and removes its state on failure too. The
//! tests take a global lock: two emulators timing packets on a 2-core machine disturb each other.

mod bytes_common;

use bytes_common::incompressible;
use longhaul_emu::sys::{netns, state};
use std::io::Read;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// True when the test may run; prints a skip notice (or panics under CI) otherwise.
fn root_or_skip(name: &str) -> bool {
    longhaul_testenv::root_or_skip(name, "needs root (network namespaces and TUN devices)")
}

/// A running `longhaul emu …`; killed, and its leftovers removed, if the test fails.
struct Running {
    child: Option<Child>,
    exited: bool,
}

impl Running {
    fn spawn(args: &[&str]) -> Running {
        let child = Command::new(env!("CARGO_BIN_EXE_longhaul"))
            .arg("emu")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("longhaul starts");
        Running {
            child: Some(child),
            exited: false,
        }
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// Waits until the instance's state file names its namespaces.
    fn wait_ready(&mut self) -> state::InstanceState {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(15) {
            if let Some(s) = state::instances().into_iter().find(|s| s.pid == self.pid()) {
                if s.side_a.as_deref().is_some_and(netns::exists) {
                    // The state file is written before the devices; give setup a moment.
                    std::thread::sleep(Duration::from_millis(300));
                    return s;
                }
            }
            if let Some(st) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("emulator exited early ({st}): {}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("emulator not ready after 15 s");
    }

    /// Waits for the exit; returns the status and stderr (stdout stays readable).
    fn wait(&mut self, limit: Duration) -> (ExitStatus, String) {
        let t = Instant::now();
        loop {
            if let Some(st) = self.child.as_mut().unwrap().try_wait().unwrap() {
                let err = self.stderr();
                self.exited = true;
                return (st, err);
            }
            if t.elapsed() > limit {
                panic!("emulator still running after {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stdout(&mut self) -> String {
        let mut s = String::new();
        if let Some(o) = self.child.as_mut().and_then(|c| c.stdout.as_mut()) {
            let _ = o.read_to_string(&mut s);
        }
        s
    }

    fn stderr(&mut self) -> String {
        let mut s = String::new();
        if let Some(e) = self.child.as_mut().and_then(|c| c.stderr.as_mut()) {
            let _ = e.read_to_string(&mut s);
        }
        s
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take().filter(|_| !self.exited) {
            let _ = c.kill();
            let _ = c.wait();
            state::cleanup_stale();
        }
    }
}

fn signal_stops_and_cleans_up(sig: i32, name: &str) {
    let mut emu = Running::spawn(&["pair", "--delay", "1ms", "--no-realtime"]);
    let st = emu.wait_ready();
    let (na, nb) = (st.side_a.clone().unwrap(), st.side_b.clone().unwrap());
    assert!(netns::exists(&na) && netns::exists(&nb));
    // SAFETY: kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(emu.pid() as i32, sig) }, 0);
    let (status, err) = emu.wait(Duration::from_secs(15));
    eprintln!("{name}: exit {status}; stderr:\n{err}");
    // Signals end the pair with 128 + the signal number, after cleanup.
    assert_eq!(status.code(), Some(128 + sig), "{err}");
    assert!(err.contains(&format!("signal {sig}, stopping")), "{err}");
    assert!(!netns::exists(&na), "{na} left behind after {name}");
    assert!(!netns::exists(&nb), "{nb} left behind after {name}");
    assert!(
        !state::instances().iter().any(|s| s.pid == st.pid),
        "state file left behind after {name}"
    );
}

#[test]
fn pair_cleans_up_on_sigterm() {
    if !root_or_skip("pair_cleans_up_on_sigterm") {
        return;
    }
    let _g = lock();
    signal_stops_and_cleans_up(libc::SIGTERM, "SIGTERM");
}

#[test]
fn pair_cleans_up_on_sigint() {
    if !root_or_skip("pair_cleans_up_on_sigint") {
        return;
    }
    let _g = lock();
    signal_stops_and_cleans_up(libc::SIGINT, "SIGINT");
}

/// The terminal closing (an ssh session dropping) sends SIGHUP.
#[test]
fn pair_cleans_up_on_sighup() {
    if !root_or_skip("pair_cleans_up_on_sighup") {
        return;
    }
    let _g = lock();
    signal_stops_and_cleans_up(libc::SIGHUP, "SIGHUP");
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lh-emu-root-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Start the receiver, give it 300 ms to bind, run the sender to its end, then wait for the
/// receiver: the sender's output, the receiver's exit status and what it wrote on stderr.
fn transfer(
    mut recv: Command,
    mut send: Command,
) -> (std::process::Output, std::process::ExitStatus, String) {
    let mut recv = recv.stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let send = send.output().unwrap();
    let status = recv.wait().unwrap();
    let mut err = String::new();
    recv.stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (send, status, err)
}

/// Records of a pcap file (nanosecond magic, LINKTYPE_RAW): each record's IPv4 payload.
fn pcap_records(path: &Path) -> Vec<Vec<u8>> {
    let b = std::fs::read(path).unwrap();
    assert!(b.len() >= 24, "{}: no global header", path.display());
    let u32le = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    assert_eq!(u32le(0), 0xa1b2_3c4d, "nanosecond pcap magic");
    assert_eq!(&b[4..8], &[2, 0, 4, 0], "version 2.4");
    assert_eq!(u32le(20), 101, "LINKTYPE_RAW");
    let mut out = Vec::new();
    let mut i = 24;
    while i + 16 <= b.len() {
        let incl = u32le(i + 8) as usize;
        let orig = u32le(i + 12) as usize;
        assert!(
            incl <= orig && i + 16 + incl <= b.len(),
            "truncated record at {i}"
        );
        out.push(b[i + 16..i + 16 + incl].to_vec());
        i += 16 + incl;
    }
    assert_eq!(i, b.len(), "trailing bytes in {}", path.display());
    out
}

/// IPv4 UDP datagrams to `port` carrying `payload`.
fn udp_to(records: &[Vec<u8>], port: u16, payload: &[u8]) -> usize {
    records
        .iter()
        .filter(|p| {
            p.len() >= 28 && p[0] >> 4 == 4 && p[9] == 17 && {
                let ihl = (p[0] & 0xf) as usize * 4;
                p.len() >= ihl + 8
                    && u16::from_be_bytes([p[ihl + 2], p[ihl + 3]]) == port
                    && p[ihl + 8..].starts_with(payload)
            }
        })
        .count()
}

#[test]
fn pair_writes_an_event_log_and_pcaps_that_parse() {
    if !root_or_skip("pair_writes_an_event_log_and_pcaps_that_parse") {
        return;
    }
    let _g = lock();
    let dir = scratch("obs");
    let (log, pcap, json) = (dir.join("events.log"), dir.join("pcap"), dir.join("s.json"));
    // Host a sends 25 UDP datagrams to b's port 9. Nothing listens, so b answers with ICMP port
    // unreachable, which makes the next send on a connected socket fail: each probe therefore
    // gets its own socket (bash opens one per redirection).
    let script = "for i in $(seq 25); do printf lhprobe$i >/dev/udp/$LONGHAUL_EMU_B/9; \
                  sleep 0.01; done";
    let mut emu = Running::spawn(&[
        "pair",
        "--delay",
        "2ms",
        "--rate",
        "100mbit",
        "--queue-packets",
        "100",
        "--no-realtime",
        "--log",
        log.to_str().unwrap(),
        "--pcap",
        pcap.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--",
        "bash",
        "-c",
        script,
    ]);
    let (status, err) = emu.wait(Duration::from_secs(30));
    assert!(status.success(), "{err}");

    let a = pcap_records(&pcap.join("a.pcap"));
    let b = pcap_records(&pcap.join("b.pcap"));
    let (sent_a, seen_b) = (udp_to(&a, 9, b"lhprobe"), udp_to(&b, 9, b"lhprobe"));
    eprintln!(
        "a.pcap {} records ({sent_a} probes), b.pcap {} records ({seen_b} probes)",
        a.len(),
        b.len()
    );
    // Every probe is read from a and, with no loss and room in the queue, delivered to b.
    assert_eq!(sent_a, 25);
    assert_eq!(seen_b, 25);

    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("# t_ns dir event"), "header");
    let count = |dir: &str, ev: &str| {
        text.lines()
            .filter(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() >= 4 && f[1] == dir && f[2] == ev && f[0].parse::<u64>().is_ok()
            })
            .count()
    };
    // Probes are 7..9 bytes of payload + 28 of headers; every a>b packet here is a probe.
    let (arrive, deliver) = (count("a>b", "arrive"), count("a>b", "deliver"));
    eprintln!(
        "event log: {} lines, a>b arrive {arrive}, deliver {deliver}",
        text.lines().count()
    );
    assert!(arrive >= 25 && deliver >= 25, "{arrive} {deliver}");

    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(summary["event_log"]["complete"], true, "{summary}");
    assert_eq!(summary["event_log"]["records_lost"], 0);
    assert!(summary["event_log"]["records"].as_u64().unwrap() >= 50);
    assert_eq!(summary["pcap"].as_array().unwrap().len(), 2);
    // The run's provenance sits beside the emulator's counters.
    let p = &summary["provenance"];
    assert_eq!(p["command"][1], "emu", "{p}");
    assert!(p["commit"].is_string() && p["cpu"].is_string() && p["kernel"].is_string());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn shell_runs_a_command_behind_the_path() {
    if !root_or_skip("shell_runs_a_command_behind_the_path") {
        return;
    }
    let _g = lock();
    // A UDP echo server on this host, which `shell` puts on the far side ($LONGHAUL_EMU_HOST).
    let echo = UdpSocket::bind("0.0.0.0:0").unwrap();
    let port = echo.local_addr().unwrap().port();
    echo.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let server = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            if let Ok((n, from)) = echo.recv_from(&mut buf) {
                let _ = echo.send_to(&buf[..n], from);
            }
        }
    });
    // 20 pings timed with bash's $EPOCHREALTIME (no process per sample); one RTT in µs a line.
    // bash reads a socket a byte at a time, and reading one byte consumes the whole datagram.
    let script = format!(
        "exec 3<>/dev/udp/$LONGHAUL_EMU_HOST/{port}; \
         for i in $(seq 20); do t0=${{EPOCHREALTIME/./}}; printf ping$i >&3; \
         read -r -t 2 -N 1 -u 3 x; t1=${{EPOCHREALTIME/./}}; \
         echo rtt_us=$((t1 - t0)); sleep 0.02; done"
    );
    let mut emu = Running::spawn(&[
        "shell",
        "--delay",
        "20ms",
        "--no-realtime",
        "--",
        "bash",
        "-c",
        &script,
    ]);
    let (status, err) = emu.wait(Duration::from_secs(30));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    server.join().unwrap();
    assert!(status.success(), "{err}");
    let out = emu.stdout();
    let mut rtts: Vec<u64> = out
        .lines()
        .filter_map(|l| l.strip_prefix("rtt_us="))
        .map(|v| v.trim().parse().unwrap())
        .collect();
    eprintln!("RTTs (µs) through 20 ms each way: {rtts:?}");
    assert!(
        rtts.len() >= 18,
        "only {} replies: {out}\n{err}",
        rtts.len()
    );
    rtts.sort_unstable();
    let median = rtts[rtts.len() / 2];
    // 2 × 20 ms of emulated delay, never less (no packet leaves before its release time); the
    // upper margin of 8 ms covers bash's own work and a loaded 2-core machine, and is still far
    // below another delay step (60 ms if the delay were doubled).
    assert!(rtts[0] >= 40_000, "a reply came early: {rtts:?}");
    assert!(median <= 48_000, "median {median} µs: {rtts:?}");
}

#[test]
fn pair_takes_the_forwarder_flags() {
    if !root_or_skip("pair_takes_the_forwarder_flags") {
        return;
    }
    let _g = lock();
    let dir = scratch("flags");
    let json = dir.join("s.json");
    let cpu = longhaul_emu::sys::clock::allowed_cpus()[0].to_string();
    // A TCP connection to a port nobody listens on: a SYN out, a RST back.
    let mut emu = Running::spawn(&[
        "pair",
        "--delay",
        "1ms",
        "--no-realtime",
        "--no-offload",
        "--forwarder-cpu",
        &cpu,
        "--json",
        json.to_str().unwrap(),
        "--",
        "bash",
        "-c",
        "exec 3<>/dev/tcp/$LONGHAUL_EMU_B/9 || true",
    ]);
    let (status, err) = emu.wait(Duration::from_secs(30));
    assert!(status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let dirs = v["directions"].as_array().unwrap();
    assert_eq!(dirs.len(), 2);
    for d in dirs {
        assert_eq!(d["io"]["super_packets"], 0, "--no-offload: {d}");
        assert!(
            d["counters"]["delivered_packets"].as_u64().unwrap() >= 1,
            "{d}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);

    // Impossible combinations are refused before anything is set up.
    for (args, says) in [
        (vec!["--no-offload", "--coalesce", "5us"], "--coalesce"),
        (vec!["--forwarder-cpu", "100000"], "--forwarder-cpu 100000"),
    ] {
        let mut a = vec!["pair", "--delay", "1ms"];
        a.extend(args);
        a.extend(["--", "true"]);
        let mut emu = Running::spawn(&a);
        let (status, err) = emu.wait(Duration::from_secs(30));
        assert!(!status.success(), "{a:?} accepted");
        assert!(err.contains(says), "{a:?}: {err}");
    }
}

#[test]
fn pair_busy_polls_with_one_thread_and_keeps_commands_off_its_cpu() {
    if !root_or_skip("pair_busy_polls_with_one_thread_and_keeps_commands_off_its_cpu") {
        return;
    }
    let _g = lock();
    let dir = scratch("busy");
    let json = dir.join("s.json");
    let cpus = longhaul_emu::sys::clock::allowed_cpus();
    let cpu = cpus[0].to_string();
    // The command prints its own CPU list, then opens a TCP connection to a closed port (a SYN
    // out, a RST back) so both directions carry a packet.
    let mut emu = Running::spawn(&[
        "pair",
        "--delay",
        "1ms",
        "--busy-poll",
        "--forwarder-cpu",
        &cpu,
        "--json",
        json.to_str().unwrap(),
        "--",
        "bash",
        "-c",
        "grep Cpus_allowed_list /proc/self/status >&2; \
         echo rps $(cat /sys/class/net/emu0/queues/rx-0/rps_cpus) >&2; \
         exec 3<>/dev/tcp/$LONGHAUL_EMU_B/9 || true",
    ]);
    let (status, err) = emu.wait(Duration::from_secs(30));
    assert!(status.success(), "{err}");
    assert!(
        err.contains(&format!("busy polling on CPU {cpu}")) || cpus.len() == 1,
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["busy_poll"], true, "{v}");
    assert_eq!(v["forwarder_cpu"], cpus[0], "{v}");
    assert!(v["cpu_steal"].is_array(), "{v}");
    let dirs = v["directions"].as_array().unwrap();
    assert_eq!(dirs.len(), 2);
    for d in dirs {
        assert!(
            d["counters"]["delivered_packets"].as_u64().unwrap() >= 1,
            "{d}"
        );
    }
    if cpus.len() > 1 {
        let line = err
            .lines()
            .find(|l| l.starts_with("Cpus_allowed_list"))
            .unwrap_or_else(|| panic!("no CPU list: {err}"));
        let expect = cpus[1..].iter().map(|c| c.to_string()).collect::<Vec<_>>();
        // The kernel prints ranges ("1-3"); with two CPUs it is the other one alone.
        if cpus.len() == 2 {
            assert_eq!(
                line.split_whitespace().last(),
                Some(expect[0].as_str()),
                "{line}"
            );
            // The host's receive processing is steered there too (RPS mask of that CPU).
            let rps = err
                .lines()
                .find_map(|l| l.strip_prefix("rps "))
                .unwrap_or_else(|| panic!("no rps_cpus: {err}"));
            let mask = u64::from_str_radix(&rps.replace(',', ""), 16).unwrap();
            assert_eq!(mask, 1 << cpus[1], "rps_cpus {rps}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `longhaul recv` on host a and `longhaul send` on host b, 100 Mb/s and 50 ms of round trip
/// between them: the file arrives whole, FAST fills most of the path, and its RTT samples never
/// fall below the path's propagation delay (the driver stamps each datagram as it reads it; a
/// read loop stamped once undercut the delay by up to 6 ms under load, and FAST, which reads
/// queueing from the gap to the minimum, then left a third of the path idle).
#[test]
fn send_and_recv_move_a_file_over_an_emulated_long_path() {
    if !root_or_skip("send_and_recv_move_a_file_over_an_emulated_long_path") {
        return;
    }
    let _g = lock();
    let dir = scratch("transfer");
    let (src, dst) = (dir.join("src"), dir.join("dst"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&dst).unwrap();
    // 40 MB of incompressible bytes: 3.2 s at the full rate.
    let data = incompressible(40_000_000, 0x9E37_79B9_7F4A_7C15);
    std::fs::write(src.join("run.dat"), &data).unwrap();

    let mut emu = Running::spawn(&[
        "pair",
        "--rate",
        "100mbit",
        "--delay",
        "25ms",
        "--queue-packets",
        "800",
        "--duration",
        "90s",
    ]);
    let st = emu.wait_ready();
    let (na, nb) = (st.side_a.clone().unwrap(), st.side_b.clone().unwrap());
    let bin = env!("CARGO_BIN_EXE_longhaul");
    // Keys as a user sets them up: a pair for each end, the sender's public key authorized on
    // the receiver; the sender learns the receiver's key on first contact.
    let (rx_home, tx_home) = (dir.join("rx-home"), dir.join("tx-home"));
    for home in [&rx_home, &tx_home] {
        let out = Command::new(bin)
            .arg("keygen")
            .env("LONGHAUL_HOME", home)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::copy(
        tx_home.join("id_x25519.pub"),
        rx_home.join("authorized_keys"),
    )
    .unwrap();
    let mut recv = Command::new("ip");
    recv.env("LONGHAUL_HOME", &rx_home)
        .args(["netns", "exec", &na, bin, "recv", "-n", "1", "-d"])
        .arg(&dst);
    let mut send = Command::new("ip");
    send.env("LONGHAUL_HOME", &tx_home)
        .args([
            "netns",
            "exec",
            &nb,
            bin,
            "send",
            "-C",
            "fast",
            "-J",
            "--connect-timeout",
            "5s",
        ])
        .arg(src.join("run.dat"))
        .arg(&st.addr_a);
    let (send, recv_status, recv_err) = transfer(recv, send);
    let send_err = String::from_utf8_lossy(&send.stderr);
    eprintln!("recv: {recv_err}\nsend: {send_err}");
    assert!(send.status.success(), "{send_err}");
    assert!(recv_status.success(), "{recv_err}");
    assert_eq!(std::fs::read(dst.join("run.dat")).unwrap(), data);
    let v: serde_json::Value = serde_json::from_slice(&send.stdout).unwrap();
    eprintln!("{v}");
    let goodput = v["goodput_bps"].as_f64().unwrap();
    let min_rtt = v["min_rtt_ms"].as_f64().unwrap();
    // The emulated round trip is 50 ms plus two serialisations. With GRO the kernel stamps a
    // coalesced batch of ACK datagrams once, at its first segment's arrival (socket.rs stamps
    // with SO_TIMESTAMPNS), so a later segment's sample can be short by the batch's span, a
    // fraction of a millisecond (measured 49.73 and 49.98 ms); far below 50 ms is a fault. (It
    // was: a sender preempted between its two clock readings converted stamps early, 48.9 ms
    // once beside the busy-polling tests; `Clock::read_both` in socket.rs pairs them now.)
    assert!((49.5..55.0).contains(&min_rtt), "min RTT {min_rtt} ms: {v}");
    // Handshake, slow start and the last round trip included, the goal is well over half the
    // path (reported). With a CPU hog on each core the user-space forwarder, sender and
    // receiver share the CPUs and a run measured 59.5 Mb/s; a broken window or an RTO-bound
    // transfer is an order of magnitude below (10 packets per 50 ms is 2.2 Mb/s), so the
    // assertion is a third of the path.
    eprintln!(
        "goodput {:.1} Mb/s: goal (> 60 Mb/s) {}",
        goodput / 1e6,
        if goodput > 60e6 { "met" } else { "NOT met" }
    );
    assert!(goodput > 33e6, "goodput {goodput}: {v}");
    assert_eq!(v["files"][0]["blake3_list"].as_str().unwrap().len(), 64);
    assert_eq!(v["bytes_sent"].as_u64(), Some(40_000_000));
    // The sender's time by state covers the transfer from the handshake to the last byte
    // sent: all but a few round trips of it (the handshake, the receiver's verdict).
    let seconds = v["seconds"].as_f64().unwrap();
    let times = v["send_time_s"].as_object().unwrap();
    let states: Vec<&str> = times.keys().map(String::as_str).collect();
    for state in [
        "sending",
        "window",
        "pacing",
        "late",
        "receiver_window",
        "no_data",
    ] {
        assert!(states.contains(&state), "{state} missing: {v}");
    }
    let counted: f64 = times.values().map(|t| t.as_f64().unwrap()).sum();
    assert!(
        (0.5 * seconds..=seconds).contains(&counted),
        "{counted} s counted in a {seconds} s transfer: {v}"
    );
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(emu.pid() as i32, libc::SIGTERM) };
    let (status, err) = emu.wait(Duration::from_secs(15));
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Is `pid` a running process (not gone, not a zombie)?
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s[s.rfind(')').unwrap_or(0)..].starts_with(") Z"))
}

/// Waits until `ns` holds at least `n` processes; returns their PIDs.
fn processes_in(ns: &str, n: usize) -> Vec<u32> {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(15) {
        let pids = netns::pids_in(ns);
        if pids.len() >= n {
            return pids;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "{ns}: fewer than {n} processes after 15 s: {:?}",
        netns::pids_in(ns)
    );
}

fn all_end_within(pids: &[u32], limit: Duration) -> Vec<u32> {
    let t = Instant::now();
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|&p| running(p)).collect();
        if left.is_empty() || t.elapsed() > limit {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A pair's command and a command run with `emu exec`, each a shell with a background child
/// of its own, end with the emulator on `sig` — the children too, which SIGTERM to the shell
/// never reached. Under SIGKILL the emulator runs no code: the kernel ends them (the PID
/// namespace's init loses its pipe). A process put in the namespace by hand (`ip netns exec`)
/// is outside longhaul's PID namespace; `emu cleanup` ends it with the namespace.
fn programs_end_with_the_emulator(sig: i32, name: &str) {
    let script = "sleep 600 & sleep 600";
    let mut emu = Running::spawn(&[
        "pair",
        "--delay",
        "1ms",
        "--no-realtime",
        "--",
        "sh",
        "-c",
        script,
    ]);
    let st = emu.wait_ready();
    let id = st.pid.to_string();
    let _exec = Running::spawn(&["exec", "b", "--id", &id, "--", "sh", "-c", script]);
    let (na, nb) = (st.side_a.clone().unwrap(), st.side_b.clone().unwrap());
    let by_hand = Command::new("ip")
        .args(["netns", "exec", &na, "sleep", "600"])
        .spawn()
        .expect("ip netns exec");
    let in_a = processes_in(&na, 4);
    let in_b = processes_in(&nb, 3);
    let mut ours: Vec<u32> = in_a
        .iter()
        .copied()
        .filter(|&p| p != by_hand.id())
        .collect();
    ours.extend(&in_b);
    assert!(ours.len() >= 6, "a: {in_a:?} b: {in_b:?}");
    // SAFETY: kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(emu.pid() as i32, sig) }, 0);
    let (status, err) = emu.wait(Duration::from_secs(15));
    eprintln!("{name}: exit {status}; stderr:\n{err}");
    let left = all_end_within(&ours, Duration::from_secs(5));
    assert!(
        left.is_empty(),
        "{name}: {left:?} of {ours:?} outlived the emulator"
    );
    let mut by_hand = by_hand;
    if sig == libc::SIGKILL {
        assert!(netns::exists(&na), "nothing ran to delete {na}");
        let out = Command::new(env!("CARGO_BIN_EXE_longhaul"))
            .args(["emu", "cleanup"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains(&na), "{text}");
    }
    let left = all_end_within(&[by_hand.id()], Duration::from_secs(5));
    let _ = by_hand.wait();
    assert!(
        left.is_empty(),
        "{name}: a process in {na} outlived its deletion"
    );
    assert!(!netns::exists(&na) && !netns::exists(&nb));
}

#[test]
fn programs_end_with_the_emulator_on_sigint() {
    if !root_or_skip("programs_end_with_the_emulator_on_sigint") {
        return;
    }
    let _g = lock();
    programs_end_with_the_emulator(libc::SIGINT, "SIGINT");
}

#[test]
fn programs_end_with_the_emulator_on_sigterm() {
    if !root_or_skip("programs_end_with_the_emulator_on_sigterm") {
        return;
    }
    let _g = lock();
    programs_end_with_the_emulator(libc::SIGTERM, "SIGTERM");
}

#[test]
fn programs_end_with_the_emulator_on_sigkill_and_cleanup() {
    if !root_or_skip("programs_end_with_the_emulator_on_sigkill_and_cleanup") {
        return;
    }
    let _g = lock();
    programs_end_with_the_emulator(libc::SIGKILL, "SIGKILL");
}

/// `emu shell`'s command, a shell with a child of its own, ends with the emulator.
#[test]
fn shell_command_and_its_children_end_on_sigterm() {
    if !root_or_skip("shell_command_and_its_children_end_on_sigterm") {
        return;
    }
    let _g = lock();
    let mut emu = Running::spawn(&[
        "shell",
        "--delay",
        "1ms",
        "--no-realtime",
        "--",
        "sh",
        "-c",
        "sleep 600 & sleep 600",
    ]);
    let t = Instant::now();
    let st = loop {
        if let Some(s) = state::instances().into_iter().find(|s| s.pid == emu.pid()) {
            if s.side_a.as_deref().is_some_and(netns::exists) {
                break s;
            }
        }
        assert!(t.elapsed() < Duration::from_secs(15), "shell not ready");
        std::thread::sleep(Duration::from_millis(20));
    };
    let ns = st.side_a.clone().unwrap();
    let pids = processes_in(&ns, 3);
    // SAFETY: kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(emu.pid() as i32, libc::SIGTERM) }, 0);
    let (status, err) = emu.wait(Duration::from_secs(15));
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{err}");
    let left = all_end_within(&pids, Duration::from_secs(5));
    assert!(left.is_empty(), "{left:?} of {pids:?} outlived `emu shell`");
}

#[test]
fn shell_prints_the_path_it_built_in_tcs_units() {
    if !root_or_skip("shell_prints_the_path_it_built_in_tcs_units") {
        return;
    }
    let _g = lock();
    // `1Gbps` is tc's gigaBYTE per second: the printed path says 8 Gb/s before anything runs.
    let out = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args([
            "emu", "shell", "--rate", "1Gbps", "--delay", "5ms", "--", "true",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("path a→b: 8.00 Gb/s, delay 5 ms") && err.contains("path b→a: 8.00 Gb/s"),
        "{err}"
    );
}

/// `longhaul send` with `--mtu auto` (the default) through a pair whose interfaces carry 9000
/// bytes: behind a hop that drops packets above 4000 without a word (a path MTU black hole)
/// the search settles at 3996 (the largest of its candidates, 1500 + k·16, that fits), the file
/// arrives whole, and the hop drops nothing but probes; without the hop it settles at 9000.
#[test]
fn send_finds_the_path_mtu_behind_a_black_hole_hop() {
    if !root_or_skip("send_finds_the_path_mtu_behind_a_black_hole_hop") {
        return;
    }
    let _g = lock();
    let dir = scratch("pmtu");
    let file = dir.join("run.dat");
    let data = incompressible(30_000_000, 0x2545_F491_4F6C_DD1D);
    std::fs::write(&file, &data).unwrap();
    for (hop, want) in [(Some("4000"), 3996), (None, 9000)] {
        let summary = dir.join("emu.json");
        let mut args = vec![
            "pair",
            "--mtu",
            "9000",
            "--rate",
            "200mbit",
            "--delay",
            "5ms",
            "--queue-packets",
            "1000",
            "--duration",
            "90s",
            "--json",
            summary.to_str().unwrap(),
        ];
        if let Some(h) = hop {
            args.extend(["--path-mtu", h]);
        }
        let mut emu = Running::spawn(&args);
        let st = emu.wait_ready();
        let (na, nb) = (st.side_a.clone().unwrap(), st.side_b.clone().unwrap());
        let bin = env!("CARGO_BIN_EXE_longhaul");
        let dst = dir.join(format!("dst-{want}"));
        std::fs::create_dir_all(&dst).unwrap();
        let mut recv = Command::new("ip");
        recv.args([
            "netns",
            "exec",
            &na,
            bin,
            "recv",
            "--insecure",
            "-n",
            "1",
            "-d",
        ])
        .arg(&dst);
        let mut send = Command::new("ip");
        send.args(["netns", "exec", &nb, bin, "send", "--insecure", "-J"])
            .args(["--connect-timeout", "5s"])
            .arg(&file)
            .arg(&st.addr_a);
        let (send, recv_status, recv_err) = transfer(recv, send);
        let send_err = String::from_utf8_lossy(&send.stderr);
        assert!(send.status.success(), "{send_err}");
        assert!(recv_status.success(), "{recv_err}");
        assert!(
            std::fs::read(dst.join("run.dat")).unwrap() == data,
            "the file differs"
        );
        let v: serde_json::Value = serde_json::from_slice(&send.stdout).unwrap();
        let p = &v["path_mtu"];
        eprintln!("hop {hop:?}: {p}");
        assert_eq!(p["mtu"], want, "{p}");
        assert_eq!(p["how"], "searched", "{p}");
        assert_eq!(
            (p["kernel"].as_u64(), p["bound"].as_u64()),
            (Some(9000), Some(9000))
        );
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(emu.pid() as i32, libc::SIGTERM) };
        let (status, err) = emu.wait(Duration::from_secs(15));
        assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{err}");
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
        let b_to_a = s["directions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["direction"] == "b>a")
            .expect("the sender's direction");
        let too_big = b_to_a["counters"]["dropped_too_big"].as_u64().unwrap();
        let lost = p["probes_lost"].as_u64().unwrap();
        eprintln!("the hop dropped {too_big} packets as too big; {lost} probes were lost");
        if hop.is_some() {
            // Six sizes too big (9000, 5244, 4300, 4060, 4028, 4012), three probes each; a
            // probe still in flight at the end may not yet be counted lost.
            assert!(
                too_big >= 18 && too_big <= lost + 1,
                "{too_big} dropped, {lost} lost"
            );
        } else {
            assert_eq!((too_big, lost), (0, 0));
        }
        std::fs::remove_dir_all(&dst).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
