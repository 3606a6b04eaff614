//! Would io_uring, `MSG_ZEROCOPY` or mmap make longhaul's I/O cheaper in CPU per byte on this
//! machine? This tool moves the same bytes each way and measures.
//!
//! Network cases ([`net`]): a sending and a receiving thread move N bytes over loopback UDP,
//! as 64 KiB GSO sends of 1,472-byte segments (`-gso`) or as 65,507-byte datagrams (`-64k`),
//! with `sendmsg`/`recvmsg` (what `crates/net/src/socket.rs` does), io_uring, `MSG_ZEROCOPY`,
//! or io_uring's zero-copy send. File cases ([`file`]): one thread reads an N-byte file the page
//! cache holds in 1 MiB chunks and hashes each with BLAKE3 (what `crates/net/src/feed.rs` does),
//! with `pread`, io_uring or mmap.
//!
//! Every case runs once per round, the rounds interleaved, so other load weighs on all alike.
//! For each it reports wall time as Gb/s, the process's CPU seconds per GB (10^9 bytes) and
//! its threads' (`getrusage`), the host's busy seconds per GB (`/proc/stat`, which includes
//! softirq work done by `ksoftirqd` and any other load), and the system calls made; median
//! and best of the rounds. Bench only: it is its own Cargo workspace, outside the repository's.
//! `bench/io/run.sh` builds and runs it.

mod file;
mod flow;
mod measure;
mod net;

use anyhow::{bail, ensure, Context, Result};
use file::ReadWay;
use measure::{max, median, min, Stopwatch};
use net::{Shape, Way};
use std::fmt::Write as _;
use std::path::PathBuf;

const USAGE: &str = "\
usage: longhaul-bench-io [--size-mb N] [--rounds R] [--only LIST] [--depth D] [--read-depth D]
                         [--window-mb W] [--file PATH] [--md FILE]

  --size-mb N     bytes each case moves, in MiB (default 2048)
  --rounds R      interleaved rounds of every case (default 3)
  --only LIST     comma-separated cases (default all): syscall-gso, uring-gso, zerocopy-gso,
                  uring-zc-gso, the same four with -64k, read, uring-read, mmap
  --depth D       io_uring requests in flight at each end of a network case (default 8)
  --read-depth D  io_uring reads in flight (default 4)
  --window-mb W   bytes of the file mapped at once by mmap, in MiB (default 64)
  --file PATH     the file to read (made if it is not N bytes; default: a temporary file)
  --md FILE       also write the summary and table as markdown";

/// One case of the measurement.
#[derive(Clone, Copy)]
enum Case {
    Net(Way, Shape),
    File(ReadWay),
}

/// Every case: its name, what it is, and the case whose CPU per byte it is compared with.
const CASES: &[(&str, Case, &str, &str)] = &[
    (
        "syscall-gso",
        Case::Net(Way::Syscall, Shape::Gso),
        "sendmsg + recvmsg",
        "syscall-gso",
    ),
    (
        "uring-gso",
        Case::Net(Way::Uring, Shape::Gso),
        "io_uring SendMsg + RecvMsg",
        "syscall-gso",
    ),
    (
        "zerocopy-gso",
        Case::Net(Way::ZeroCopy, Shape::Gso),
        "sendmsg MSG_ZEROCOPY + recvmsg",
        "syscall-gso",
    ),
    (
        "uring-zc-gso",
        Case::Net(Way::UringZc, Shape::Gso),
        "io_uring SendMsgZc + RecvMsg",
        "syscall-gso",
    ),
    (
        "syscall-64k",
        Case::Net(Way::Syscall, Shape::Big),
        "sendmsg + recvmsg",
        "syscall-64k",
    ),
    (
        "uring-64k",
        Case::Net(Way::Uring, Shape::Big),
        "io_uring SendMsg + RecvMsg",
        "syscall-64k",
    ),
    (
        "zerocopy-64k",
        Case::Net(Way::ZeroCopy, Shape::Big),
        "sendmsg MSG_ZEROCOPY + recvmsg",
        "syscall-64k",
    ),
    (
        "uring-zc-64k",
        Case::Net(Way::UringZc, Shape::Big),
        "io_uring SendMsgZc + RecvMsg",
        "syscall-64k",
    ),
    (
        "read",
        Case::File(ReadWay::Read),
        "pread 1 MiB + BLAKE3",
        "read",
    ),
    (
        "uring-read",
        Case::File(ReadWay::Uring),
        "io_uring Read + BLAKE3",
        "read",
    ),
    (
        "mmap",
        Case::File(ReadWay::Mmap),
        "mmap MAP_POPULATE + BLAKE3",
        "read",
    ),
];

struct Opts {
    size_mb: u64,
    rounds: usize,
    only: Vec<usize>,
    depth: usize,
    read_depth: usize,
    window_mb: usize,
    file: Option<PathBuf>,
    md: Option<PathBuf>,
}

fn parse() -> Result<Opts> {
    let mut o = Opts {
        size_mb: 2048,
        rounds: 3,
        only: (0..CASES.len()).collect(),
        depth: 8,
        read_depth: 4,
        window_mb: 64,
        file: None,
        md: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "-h" || a == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let v = args
            .next()
            .with_context(|| format!("{a} needs a value\n{USAGE}"))?;
        let num = |v: &str| -> Result<u64> {
            v.parse::<u64>()
                .ok()
                .filter(|&n| n > 0)
                .with_context(|| format!("{a}: {v:?} is not a positive whole number"))
        };
        match a.as_str() {
            "--size-mb" => o.size_mb = num(&v)?,
            "--rounds" => o.rounds = num(&v)? as usize,
            "--depth" => o.depth = num(&v)? as usize,
            "--read-depth" => o.read_depth = num(&v)? as usize,
            "--window-mb" => o.window_mb = num(&v)? as usize,
            "--file" => o.file = Some(v.into()),
            "--md" => o.md = Some(v.into()),
            "--only" => {
                o.only = Vec::new();
                for name in v.split(',').filter(|n| !n.is_empty()) {
                    let i = CASES.iter().position(|c| c.0 == name).with_context(|| {
                        let all: Vec<_> = CASES.iter().map(|c| c.0).collect();
                        format!("no case {name:?}; the cases: {}", all.join(", "))
                    })?;
                    o.only.push(i);
                }
                ensure!(!o.only.is_empty(), "--only names no case");
            }
            _ => bail!("unknown argument {a:?}\n{USAGE}"),
        }
    }
    ensure!(
        o.size_mb <= 1 << 20,
        "--size-mb {}: at most 1 TiB",
        o.size_mb
    );
    ensure!(o.depth <= 64, "--depth {}: at most 64", o.depth);
    ensure!(
        o.read_depth <= 64,
        "--read-depth {}: at most 64",
        o.read_depth
    );
    Ok(o)
}

/// One run of one case, in seconds (CPU figures per GB come later).
struct Run {
    wall: f64,
    process: f64,
    host: f64,
    /// The sending (or reading) thread's and the receiving thread's CPU.
    threads: [Option<f64>; 2],
    calls: [Option<u64>; 2],
    /// Zero-copy sends the kernel copied, of all.
    copied: Option<(u64, u64)>,
}

fn run_case(
    case: Case,
    o: &Opts,
    path: &std::path::Path,
    digest: &mut Option<[u8; 32]>,
) -> Result<Run> {
    let total = o.size_mb << 20;
    let clock = Stopwatch::default();
    match case {
        Case::Net(way, shape) => {
            let r = net::run(way, shape, total, o.depth, &clock)?;
            let s = clock.stop()?;
            Ok(Run {
                wall: s.wall,
                process: s.process,
                host: s.host,
                threads: [
                    Some(r.sender.cpu.as_secs_f64()),
                    Some(r.receiver.cpu.as_secs_f64()),
                ],
                calls: [Some(r.sender.calls), Some(r.receiver.calls)],
                copied: r.copied,
            })
        }
        Case::File(way) => {
            let r = file::run(way, path, total, o.read_depth, o.window_mb << 20, &clock)?;
            let s = clock.stop()?;
            match digest {
                Some(d) => ensure!(
                    *d == r.digest,
                    "{way:?} read other bytes than the other ways"
                ),
                None => *digest = Some(r.digest),
            }
            Ok(Run {
                wall: s.wall,
                process: s.process,
                host: s.host,
                threads: [Some(r.cpu.as_secs_f64()), None],
                calls: [Some(r.calls), None],
                copied: None,
            })
        }
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("bench/io: {e:#}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<()> {
    let o = parse()?;
    let total = o.size_mb << 20;
    let gb = total as f64 / 1e9;
    let needs_file = o.only.iter().any(|&i| matches!(CASES[i].1, Case::File(_)));
    let (path, temporary) = match &o.file {
        Some(p) => (p.clone(), false),
        None => (
            std::env::temp_dir().join(format!("longhaul-bench-io-{}.bin", std::process::id())),
            true,
        ),
    };
    if needs_file {
        eprintln!(
            "bench/io: preparing {} ({} MiB) in the page cache",
            path.display(),
            o.size_mb
        );
        file::prepare(&path, total)?;
    }
    let result = measure_all(&o, &path, gb);
    if needs_file && temporary {
        let _ = std::fs::remove_file(&path);
    }
    result
}

fn measure_all(o: &Opts, path: &std::path::Path, gb: f64) -> Result<()> {
    let mut runs: Vec<Vec<Run>> = CASES.iter().map(|_| Vec::new()).collect();
    let mut digest = None;
    let load0 = loadavg();
    for round in 1..=o.rounds {
        for &i in &o.only {
            let (name, case, ..) = CASES[i];
            let r = run_case(case, o, path, &mut digest)
                .with_context(|| format!("{name}, round {round}"))?;
            let per = |s: Option<f64>| s.map_or("-".into(), |s| format!("{:.3}", s / gb));
            eprintln!(
                "bench/io: round {round} {name:<13} {:6.3} s {:6.2} Gb/s  CPU s/GB: process {:.3} \
                 (threads {} / {})  host {:.3}",
                r.wall,
                gb * 8.0 / r.wall,
                r.process / gb,
                per(r.threads[0]),
                per(r.threads[1]),
                r.host / gb
            );
            runs[i].push(r);
        }
    }
    let load1 = loadavg();

    let cpu_of = |i: usize| median(&runs[i].iter().map(|r| r.process / gb).collect::<Vec<_>>());
    let mut table = String::from(
        "| case | how | Gb/s median (best) | CPU s/GB median (best) | CPU/GB vs base (medians) \
         | sender or reader s/GB | receiver s/GB | other threads s/GB | host busy s/GB \
         | system calls per GB, sender / receiver | kernel copied (zero-copy sends) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for &i in &o.only {
        let (name, _, how, base) = CASES[i];
        let rs = &runs[i];
        let col = |f: &dyn Fn(&Run) -> f64| rs.iter().map(f).collect::<Vec<_>>();
        let rate = col(&|r| gb * 8.0 / r.wall);
        let cpu = col(&|r| r.process / gb);
        let thread = |k: usize| -> String {
            match rs[0].threads[k] {
                None => "—".into(),
                Some(_) => format!("{:.3}", median(&col(&|r| r.threads[k].unwrap_or(0.0) / gb))),
            }
        };
        let other = median(&col(&|r| {
            (r.process - r.threads.iter().flatten().sum::<f64>()) / gb
        }));
        let calls = |k: usize| -> String {
            match rs[0].calls[k] {
                None => "—".into(),
                Some(_) => format!(
                    "{:.0}",
                    median(&col(&|r| r.calls[k].unwrap_or(0) as f64 / gb))
                ),
            }
        };
        let base_i = CASES
            .iter()
            .position(|c| c.0 == base)
            .expect("a named case");
        let vs = match o.only.contains(&base_i) {
            true if base_i == i => "1.00×".to_string(),
            true => format!("{:.2}×", cpu_of(i) / cpu_of(base_i)),
            false => "—".into(),
        };
        let copied = match rs.last().and_then(|r| r.copied) {
            Some((c, n)) => format!("{c} of {n}"),
            None => "—".into(),
        };
        writeln!(
            table,
            "| {name} | {how} | {:.2} ({:.2}) | {:.3} ({:.3}) | {vs} | {} | {} | {:.3} | {:.3} | {} / {} | {copied} |",
            median(&rate),
            max(&rate),
            median(&cpu),
            min(&cpu),
            thread(0),
            thread(1),
            other,
            median(&col(&|r| r.host / gb)),
            calls(0),
            calls(1),
        )?;
    }
    let summary = format!(
        "{} MiB per case, {} interleaved rounds (median and best); Linux {}, {} CPUs; \
         io_uring depth {} per network end, {} reads; mmap window {} MiB; load average {load0} → {load1}",
        o.size_mb,
        o.rounds,
        kernel(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        o.depth,
        o.read_depth,
        o.window_mb
    );
    println!("{summary}\n\n{table}");
    if let Some(md) = &o.md {
        std::fs::write(md, format!("{summary}\n\n{table}"))
            .with_context(|| format!("writing {}", md.display()))?;
    }
    Ok(())
}
