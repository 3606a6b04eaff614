//! Loopback transfer with and without UDP segmentation offload (GSO/GRO), interleaved, in the
//! same run: CPU seconds (sender and receiver threads together, from `getrusage`) and wall time
//! per GB, and their ratios. `cargo bench -p longhaul-net --bench loopback [-- MB [ROUNDS]]`
//! (default 400 MB, 3 rounds).
//!
//! Loopback has no propagation delay, so the controller's behaviour (FAST here) is not what is
//! measured: the cost per byte of the driver, the kernel's UDP path and the file's hashing is.

use longhaul_cc::CcSpec;
use longhaul_net::recv::{Event, Receiver, RecvOptions};
use longhaul_net::send::{send_paths, SendOptions};
use longhaul_proto::Config;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn config() -> Config {
    let mut c = Config::new(CcSpec::default_for("fast").unwrap());
    c.recv_window = 64 << 20;
    c.send_buffer = 64 << 20;
    c
}

/// One transfer of `path`; returns (CPU s, wall s, datagrams, send calls).
fn transfer(path: &std::path::Path, offload: bool) -> (f64, f64, u64, u64) {
    let dst = tempfile::tempdir().unwrap();
    let opts = RecvOptions {
        config: config(),
        dir: dst.path().to_path_buf(),
        overwrite: false,
        max_size: u64::MAX,
        max_sessions: 1,
        offload,
    };
    let mut r = Receiver::bind("127.0.0.1:0".parse().unwrap(), opts).unwrap();
    let addr = r.local_addr();
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    let rx = std::thread::spawn(move || {
        r.serve(&AtomicBool::new(false), Some(1), |e| {
            if let Event::File(_, f) = e {
                assert!(f.result.is_ok(), "{:?}", f.result)
            }
        })
        .unwrap()
    });
    let report = send_paths(
        &[path.to_path_buf()],
        addr,
        SendOptions {
            config: config(),
            name: None,
            follow_links: false,
            resume: true,
            rate_limit: None,
            interval: Duration::from_secs(3600),
            connect_timeout: Duration::from_secs(5),
            offload,
        },
        &AtomicBool::new(false),
        |_| {},
    )
    .unwrap();
    rx.join().unwrap();
    (
        cpu_seconds() - cpu0,
        t0.elapsed().as_secs_f64(),
        report.socket.datagrams_sent,
        report.socket.send_calls,
    )
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let mb: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(400);
    let rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let src = tempfile::tempdir().unwrap();
    let path = src.path().join("bench.bin");
    {
        let mut f = std::fs::File::create(&path).unwrap();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut block = vec![0u8; 1 << 20];
        for _ in 0..mb {
            for c in block.chunks_mut(8) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                c.copy_from_slice(&x.to_le_bytes());
            }
            f.write_all(&block).unwrap();
        }
    }
    let gb = mb as f64 * 1.048_576e-3;
    println!("loopback transfer of {mb} MiB, FAST, {rounds} interleaved rounds");
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for offload in [true, false] {
            let (cpu, wall, dgrams, calls) = transfer(&path, offload);
            println!(
                "round {round} offload {:<5}: {:.3} CPU s/GB, {:.3} wall s/GB ({:.2} Gb/s), \
                 {dgrams} datagrams in {calls} send calls",
                offload,
                cpu / gb,
                wall / gb,
                gb * 8.0 / wall
            );
            if offload { &mut on } else { &mut off }.push((cpu, wall));
        }
    }
    let best =
        |v: &[(f64, f64)], f: fn(&(f64, f64)) -> f64| v.iter().map(f).fold(f64::INFINITY, f64::min);
    println!(
        "offload vs one datagram per call (best of each): CPU {:.2}x less, wall {:.2}x less",
        best(&off, |p| p.0) / best(&on, |p| p.0),
        best(&off, |p| p.1) / best(&on, |p| p.1)
    );
}
