//! Simulator speed, measured against baselines in the same run (never as a timed test).
//!
//! 1. **Dumbbell vs ns-3.** One Reno flow over 100 Mb/s × 100 ms with a BDP of drop-tail
//!    buffer, 30 s simulated, in longhaul-sim (proto transport and model transport) and — if
//!    `bench/ns3/run.sh` has built the ns-3 program (`bench/ns3/dumbbell.cc`) — in ns-3 on the
//!    same scenario.
//!    Reports CPU seconds, data packets per CPU second and the ratio ns-3 CPU ÷ ours.
//! 2. **Seed 000's one-hour run.** One FAST flow, 1 Gb/s × 180 ms, 1500-byte packets
//!    (`scenarios/seed000-fast-1flow.toml`): runs 20 s and 60 s on one thread and split across
//!    two (`engine::split`), prints the wall-time ratio and projects the hour from the marginal
//!    cost per simulated second (`--full` runs the whole hour instead, on `--threads N`
//!    threads, default 2). Arguments of the form `key=value` override the scenario as
//!    `longhaul sim --set` does (for example `transport=model`).
//!
//! CPU time: for a one-thread run, this thread's run time (/proc/thread-self/schedstat, ns);
//! for a split run, the process's user + system time (/proc/self/stat, clock ticks), which
//! includes the second thread's once it has ended. The machine may be shared; wall time is
//! shown too. Run: `cargo bench -p longhaul-sim --bench dumbbell`.

use longhaul_sim::{run_on, Outcome, Scenario};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// This thread's CPU time, ns resolution (for one-thread runs).
fn thread_cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map(|ns| ns as f64 / 1e9)
        .unwrap_or(f64::NAN)
}

/// The process's CPU time, user + system, every thread that has run (clock-tick resolution).
fn process_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime and stime are the 12th
    // and 13th of them.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok());
    match (field(11), field(12)) {
        (Some(u), Some(s)) => (u + s) as f64 / 100.0,
        _ => f64::NAN,
    }
}

struct Measured {
    cpu: f64,
    wall: f64,
    outcome: Outcome,
}

fn measure(toml: &str, name: &str, sets: &[String], threads: usize) -> Measured {
    let checked = Scenario::parse(toml, name, name, sets).unwrap_or_else(|e| panic!("{e}"));
    let cpu = if threads == 1 {
        thread_cpu_seconds
    } else {
        process_cpu_seconds
    };
    let (c0, w0) = (cpu(), Instant::now());
    let outcome = run_on(&checked, threads, &mut |_| {}).expect("scenario runs");
    Measured {
        cpu: cpu() - c0,
        wall: w0.elapsed().as_secs_f64(),
        outcome,
    }
}

/// A fingerprint of a run's result summary and event counts: equal digests across builds
/// show that a speed change left the simulation's results bit for bit unchanged.
fn digest(o: &Outcome) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(&o.summary)
        .expect("summary serializes")
        .hash(&mut h);
    (o.events, o.packet_hops).hash(&mut h);
    format!("{:016x}", h.finish())
}

fn data_packets(o: &Outcome) -> f64 {
    o.summary
        .flows
        .iter()
        .filter_map(|f| f.packets_sent)
        .sum::<u64>() as f64
}

const DUMBBELL: &str = r#"
duration = "30s"
[[links]]
name = "bottleneck"
rate = "100mbit"
delay = "50ms"
queue = { kind = "droptail", packets = 833 }
[topology]
kind = "dumbbell"
bottleneck = "bottleneck"
[[flows]]
cc = "reno"
"#;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let full = args.iter().any(|a| a == "--full");
    let full_threads = args
        .iter()
        .position(|a| a == "--threads")
        .and_then(|i| args.get(i + 1)?.parse::<usize>().ok())
        .unwrap_or(2);
    let skip_ns3 = args.iter().any(|a| a == "--no-ns3");
    let sets: Vec<String> = args[1..]
        .iter()
        .filter(|a| !a.starts_with('-') && a.contains('='))
        .cloned()
        .collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");

    println!("== dumbbell: 1 Reno flow, 100 Mb/s x 100 ms, BDP drop-tail, 30 s simulated");
    let mut ours = Vec::new();
    for transport in ["proto", "model"] {
        let m = measure(DUMBBELL, "dumbbell", &[format!("transport={transport}")], 1);
        let pkts = data_packets(&m.outcome);
        let tput = m.outcome.summary.aggregate.throughput_bps;
        println!(
            "longhaul-sim ({transport:5}): cpu {:7.3} s  wall {:7.3} s  {:6.2} M data pkts/cpu-s  {:6.2} M events/cpu-s  goodput {:.1} Mb/s  digest {}",
            m.cpu,
            m.wall,
            pkts / m.cpu / 1e6,
            m.outcome.events as f64 / m.cpu / 1e6,
            tput / 1e6,
            digest(&m.outcome)
        );
        ours.push((transport, m.cpu, pkts));
    }
    let ns3 = root.join("bench/ns3/dumbbell");
    if skip_ns3 {
        println!("ns-3: skipped (--no-ns3)");
    } else if ns3.exists() {
        match run_ns3(&ns3) {
            Some((cpu, pkts, line)) => {
                println!("ns-3: {line}");
                println!(
                    "ns-3:               cpu {cpu:7.3} s  {:6.3} M data pkts/cpu-s",
                    pkts / cpu / 1e6
                );
                for (t, c, p) in &ours {
                    println!(
                        "speed-up vs ns-3 ({t}): {:.0}x in CPU time for the same scenario, {:.0}x in packets per CPU second",
                        cpu / c,
                        (p / c) / (pkts / cpu)
                    );
                }
            }
            None => println!("ns-3: {} did not produce a result line", ns3.display()),
        }
    } else {
        println!(
            "ns-3: {} not built; run bench/ns3/run.sh (--install to get libns3-dev)",
            ns3.display()
        );
    }

    println!();
    println!("== seed 000, one FAST flow, 1 Gb/s x 180 ms, 1500 B, projected to one hour {sets:?}");
    let with = |extra: &str| -> Vec<String> {
        let mut v = sets.clone();
        v.extend((!extra.is_empty()).then(|| extra.to_string()));
        v
    };
    let path: PathBuf = root.join("scenarios/seed000-fast-1flow.toml");
    let text = std::fs::read_to_string(&path).expect("scenarios/seed000-fast-1flow.toml");
    let name = path.display().to_string();
    if full {
        let m = measure(&text, &name, &with(""), full_threads);
        report_hour(&m, 3600.0);
        println!(
            "full hour on {} thread(s): cpu {:.1} s, wall {:.1} s",
            m.outcome.threads, m.cpu, m.wall
        );
    } else {
        let mut walls = Vec::new();
        for threads in [1, 2] {
            let short = measure(&text, &name, &with("duration=20s"), threads);
            report_hour(&short, 20.0);
            let long = measure(&text, &name, &with("duration=60s"), threads);
            report_hour(&long, 60.0);
            let marginal = (long.cpu - short.cpu) / 40.0;
            let marginal_wall = (long.wall - short.wall) / 40.0;
            let hour_wall = short.wall + marginal_wall * 3580.0;
            println!(
                "{} thread(s): marginal cost {:.4} cpu-s per simulated second; projected hour: {:.1} s cpu, {:.1} s wall at this load",
                long.outcome.threads,
                marginal,
                short.cpu + marginal * 3580.0,
                hour_wall
            );
            walls.push(long.wall);
        }
        println!(
            "split across two threads: 60 s simulated in {:.2} s wall vs {:.2} s on one ({:.2}x)",
            walls[1],
            walls[0],
            walls[0] / walls[1]
        );
    }
}

fn report_hour(m: &Measured, secs: f64) {
    let pkts = data_packets(&m.outcome);
    let f = &m.outcome.summary.flows[0];
    println!(
        "{secs:.0} s simulated, {} thread(s): cpu {:.2} s, wall {:.2} s, {:.2} M data pkts/cpu-s, {:.1} M events, throughput {:.1} Mb/s, utilization {:.1} %, digest {}",
        m.outcome.threads,
        m.cpu,
        m.wall,
        pkts / m.cpu / 1e6,
        m.outcome.events as f64 / 1e6,
        f.throughput_bps / 1e6,
        f.utilization * 100.0,
        digest(&m.outcome)
    );
}

/// Run the ns-3 program on the dumbbell scenario: (CPU s, data packets, its output line).
fn run_ns3(bin: &Path) -> Option<(f64, f64, String)> {
    let out = Command::new(bin)
        .args(["--rateMbps=100", "--rttMs=100", "--duration=30"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("ns3 "))?.to_string();
    let field = |k: &str| -> Option<f64> {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{k}=")))?
            .parse()
            .ok()
    };
    Some((field("cpu_s")?, field("packets")?, line.clone()))
}
