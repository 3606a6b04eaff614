//! Loopback transfer, interleaved in the same run, along two axes: with and without UDP
//! segmentation offload (GSO/GRO), and plain (`Security::Off`) or sealed (the Noise handshake,
//! then every datagram sealed with each `Cipher`). Prints CPU seconds (sender and receiver
//! threads together, from `getrusage`) and wall time per GB, and the ratios: offload vs one
//! datagram per call, and each cipher vs plain (the encryption's cost).
//! `cargo bench -p longhaul-net --bench loopback [-- MB [ROUNDS]]` (default 400 MiB, 3 rounds).
//!
//! Loopback has no propagation delay, so the controller's behaviour (FAST here) is not what is
//! measured: the cost per byte of the driver, the kernel's UDP path, sealing and opening, the
//! file's hashing (BLAKE3 on both ends) and the receiver's writes to disk is.

use longhaul_cc::CcSpec;
use longhaul_net::admission::Limits;
use longhaul_net::recv::{Event, Receiver, RecvOptions};
use longhaul_net::send::{send_paths, SendOptions};
use longhaul_proto::secure::{Cipher, Identity, PeerPolicy, Security};
use longhaul_proto::Config;
use std::collections::HashSet;
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

/// The security axis: plain, or sealed with one cipher (both ends prefer it, so it is the one
/// negotiated).
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Plain,
    Sealed(Cipher),
}

impl Mode {
    fn label(self) -> String {
        match self {
            Mode::Plain => "plain".into(),
            Mode::Sealed(c) => c.name().into(),
        }
    }
}

/// Per (mode, offload): the (CPU s, wall s) of each round.
type Runs = Vec<((Mode, bool), Vec<(f64, f64)>)>;

/// Two key pairs: the receiver's and the sender's.
struct Keys {
    rx: Identity,
    tx: Identity,
}

fn config(mode: Mode, local: &Identity, peer: PeerPolicy) -> Config {
    let mut c = Config::new(CcSpec::default_for("fast").unwrap());
    c.recv_window = 64 << 20;
    c.send_buffer = 64 << 20;
    if let Mode::Sealed(cipher) = mode {
        c.security = Security::Noise {
            local: local.clone(),
            peer,
            cipher,
            key_limits: None,
        };
        c.mss = c.mss_for(1500);
    }
    c
}

/// One transfer of `path`; returns (CPU s, wall s, datagrams, send calls, cipher in use).
fn transfer(
    path: &std::path::Path,
    offload: bool,
    mode: Mode,
    keys: &Keys,
) -> (f64, f64, u64, u64, Option<String>) {
    let dst = tempfile::tempdir().unwrap();
    let allowed: HashSet<_> = [keys.tx.public_key()].into_iter().collect();
    let opts = RecvOptions {
        config: config(mode, &keys.rx, PeerPolicy::AllowList(allowed.into())),
        dir: dst.path().to_path_buf(),
        overwrite: false,
        discard: false,
        max_size: u64::MAX,
        limits: Limits {
            max_sessions: 1,
            ..Limits::default()
        },
        offload,
        recv_thread: Some(false),
        sender_name: None,
        service: None,
        transfers: true,
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
            config: config(mode, &keys.tx, PeerPolicy::Exactly(keys.rx.public_key())),
            name: None,
            follow_links: false,
            resume: true,
            rate_limit: None,
            interval: Duration::from_secs(3600),
            connect_timeout: Duration::from_secs(5),
            offload,
            // One axis at a time: `longhaul send --send-thread` is measured by bench/udt/run.sh.
            send_thread: Some(false),
            on_peer_key: None,
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
        report.cipher,
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
    let keys = Keys {
        rx: Identity::generate().unwrap(),
        tx: Identity::generate().unwrap(),
    };
    let modes: Vec<Mode> = std::iter::once(Mode::Plain)
        .chain(Cipher::ALL.into_iter().map(Mode::Sealed))
        .collect();
    println!(
        "loopback transfer of {mb} MiB, FAST, {rounds} interleaved rounds; this machine prefers {}",
        Cipher::preferred().name()
    );
    let mut runs: Runs = Vec::new();
    for &mode in &modes {
        for offload in [true, false] {
            runs.push(((mode, offload), Vec::new()));
        }
    }
    for round in 0..rounds {
        for ((mode, offload), v) in runs.iter_mut() {
            let (cpu, wall, dgrams, calls, cipher) = transfer(&path, *offload, *mode, &keys);
            match mode {
                Mode::Plain => assert_eq!(cipher, None, "a plain transfer was sealed"),
                // The report names the suite by its Debug form.
                Mode::Sealed(c) => assert_eq!(
                    cipher,
                    Some(format!("{c:?}")),
                    "the transfer did not use the cipher asked for"
                ),
            }
            println!(
                "round {round} {:<17} offload {:<5}: {:.3} CPU s/GB, {:.3} wall s/GB ({:.2} Gb/s), \
                 {dgrams} datagrams in {calls} send calls",
                mode.label(),
                offload,
                cpu / gb,
                wall / gb,
                gb * 8.0 / wall
            );
            v.push((cpu, wall));
        }
    }
    let best =
        |v: &[(f64, f64)], f: fn(&(f64, f64)) -> f64| v.iter().map(f).fold(f64::INFINITY, f64::min);
    let of = |m: Mode, o: bool| &runs.iter().find(|r| r.0 == (m, o)).unwrap().1;
    println!("best of {rounds} rounds, per GB (1e9 bytes):");
    println!("| security | offload | CPU s/GB | wall s/GB | Gb/s | CPU vs plain | wall vs plain |");
    println!("|---|---|---|---|---|---|---|");
    for ((mode, offload), v) in &runs {
        let (cpu, wall) = (best(v, |p| p.0), best(v, |p| p.1));
        let plain = of(Mode::Plain, *offload);
        println!(
            "| {} | {} | {:.3} | {:.3} | {:.2} | {:+.0} % | {:+.0} % |",
            mode.label(),
            if *offload { "on" } else { "off" },
            cpu / gb,
            wall / gb,
            gb * 8.0 / wall,
            (cpu / best(plain, |p| p.0) - 1.0) * 100.0,
            (wall / best(plain, |p| p.1) - 1.0) * 100.0,
        );
    }
    for &mode in &modes {
        let (on, off) = (of(mode, true), of(mode, false));
        println!(
            "{}: offload vs one datagram per call (best of each): CPU {:.2}x less, wall {:.2}x less",
            mode.label(),
            best(off, |p| p.0) / best(on, |p| p.0),
            best(off, |p| p.1) / best(on, |p| p.1)
        );
    }
}
