//! `longhaul perf` and `longhaul tune` as a user runs them: the binary, on loopback.

use longhaul_metrics::summary::{Mode, Summary};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A `longhaul perf server` child on a free loopback port, killed (by its id) when dropped.
struct ServerChild(Child);

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server() -> (ServerChild, u16) {
    // Ask the kernel for a free port, release it, and hand it to the server. The server logs
    // "Server listening on ..." once bound; wait for that line rather than sleeping.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args([
            "perf",
            "server",
            "-B",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "--idle-timeout",
            "2s",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("Server listening on 127.0.0.1:"), "{first}");
    // Keep draining the log so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (ServerChild(child), port)
}

#[test]
fn perf_json_parses_into_the_summary_schema() {
    let (_server, port) = start_server();
    let out = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args([
            "perf",
            "client",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-t",
            "1.5s",
            "-i",
            "0.5s",
            "-P",
            "2",
        ])
        .args([
            "-C",
            "cubic",
            "--distance-km",
            "1000",
            "--capacity",
            "100gbit",
            "-J",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let s = Summary::from_json(&text, std::path::Path::new("stdout")).unwrap();
    assert_eq!(s.mode, Mode::Perf);
    assert!(s.problems().is_empty(), "{:?}", s.problems());
    assert_eq!(s.flows.len(), 2);
    assert!(s
        .flows
        .iter()
        .all(|f| f.cc == "cubic" && f.throughput_bps > 0.0));
    assert!(s.aggregate.utilization > 0.0);
    assert!((s.aggregate.bmps - s.aggregate.throughput_bps * 1e6).abs() <= 1e-6 * s.aggregate.bmps);
    // 0.5, 1.0 s ticks and the last interval: three entries in every series.
    assert_eq!(
        s.aggregate.series.as_ref().unwrap().t,
        [
            0.0,
            s.flows[0].series.as_ref().unwrap().t[1],
            s.flows[0].series.as_ref().unwrap().t[2]
        ]
    );
    let sum: u64 = s.flows.iter().map(|f| f.bytes_delivered.unwrap()).sum();
    assert_eq!(s.aggregate.bytes_delivered, Some(sum));
    assert_eq!(s.meta.get("server_bytes"), Some(&sum.to_string()));
}

#[test]
fn perf_text_output_has_iperf_lines() {
    let (_server, port) = start_server();
    let out = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args([
            "perf",
            "client",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-t",
            "1s",
            "-w",
            "64K",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!("connected to 127.0.0.1 port {port}")),
        "{text}"
    );
    assert!(
        text.contains("TCP window size: 128 KBytes (WARNING: requested 64.0 KBytes"),
        "{text}"
    );
    assert!(
        text.contains("[ ID] Interval           Transfer     Bitrate"),
        "{text}"
    );
    assert!(
        // The one interval ends after the drain: 1.00 s and a little, more on a loaded machine.
        text.lines().any(|l| l.starts_with("[  1]   0.00-1.")
            && l.contains(" sec ")
            && l.contains("bits/sec")),
        "{text}"
    );
    assert!(text.contains("delivered"), "{text}");
}

#[test]
fn perf_client_without_server_says_what_to_do() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args([
            "perf",
            "client",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-t",
            "1s",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is `longhaul perf server` running on 127.0.0.1:"),
        "{err}"
    );
}

#[test]
fn tune_prints_the_bdp_and_the_reno_recovery() {
    let out = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args(["tune", "--rate", "1gbit", "--rtt", "180ms"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("bandwidth-delay product  22,500,000 bytes = 22.5 MB (21.5 MiB) = 15,000 packets of 1500 B"), "{text}");
    assert!(
        text.contains("socket buffer per stream 67,108,864 bytes"),
        "{text}"
    );
    assert!(
        text.contains("2700 s (45.0 min) to regain full rate at 1500 B, 450 s (7.5 min) at 9000 B"),
        "{text}"
    );
    assert!(text.contains("net.core.rmem_max"), "{text}");
}

/// A script's `longhaul perf server &` starts with SIGINT ignored (a shell without job control
/// does that to background commands); `kill -INT` must still stop it.
#[test]
fn perf_server_started_in_the_background_stops_on_sigint() {
    use std::os::unix::process::CommandExt;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_longhaul"));
    cmd.args([
        "perf",
        "server",
        "-B",
        "127.0.0.1",
        "--port",
        &port.to_string(),
    ])
    .stderr(Stdio::piped());
    // SAFETY: signal(2) between fork and exec, as `sh -c 'cmd &'` does.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut server = ServerChild(cmd.spawn().unwrap());
    let stderr = server.0.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("Server listening on"), "{first}");
    std::thread::spawn(move || for _ in lines {});
    // SAFETY: kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(server.0.id() as i32, libc::SIGINT) }, 0);
    let t = std::time::Instant::now();
    while t.elapsed() < std::time::Duration::from_secs(10) {
        if let Some(status) = server.0.try_wait().unwrap() {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.signal(), Some(libc::SIGINT), "{status}");
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("perf server ignored SIGINT for 10 s");
}
