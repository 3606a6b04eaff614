//! Simulator against kernel on one path (needs root): `cargo bench -p longhaul-lab --bench
//! agreement`.
//!
//! The built-in `short` path (100 Mb/s, 100 ms RTT, 1000-packet drop-tail queue, 20 s) run in
//! the simulator once per controller (it is deterministic; on the model transport, which like
//! the lab's kernel without an fq qdisc does not pace window-based controllers) and in the lab `LONGHAUL_BENCH_RUNS`
//! times (default 3), FAST and CUBIC interleaved so that a change in the machine's load falls on
//! both. Each lab row is judged against the agreement goals:
//!
//! - FAST: utilization within 5 points of the simulator's, mean queueing delay within 20 %;
//! - CUBIC: bottleneck drops within 10 %.
//!
//! These are precision goals, so they live here and not in the test suite, which must pass with
//! a CPU hog on each core: the kernel's numbers depend on how much CPU its sender, receiver and
//! the emulator get. Every row therefore carries what the machine was doing: the load average
//! at its start, the share of CPU time stolen by the hypervisor during it, and the emulator's
//! p99 release lateness (its own health report, `meta.emu_*_lateness_us`), and how the kernel's
//! slow start ended (`ss exit`: HyStart's ACK-train or delay exit and its window, or `loss`).

use longhaul_lab::{builtin, no_interrupt, plan_from_text, RunOptions};
use longhaul_metrics::summary::Summary;

const SCENARIO: &str = "short";
const FAST_UTILIZATION_POINTS: f64 = 5.0;
const FAST_DELAY_RATIO: f64 = 0.20;
const CUBIC_DROPS_RATIO: f64 = 0.10;

/// What one run measured, with the machine's state beside it.
struct Row {
    label: String,
    cc: &'static str,
    utilization_pct: f64,
    delay_ms: f64,
    drops: u64,
    load: Option<f64>,
    steal_pct: Option<f64>,
    lateness_p99_us: Option<f64>,
    /// How the kernel's slow start ended (HyStart's counters), for CUBIC.
    slow_start_exit: Option<String>,
}

impl Row {
    fn from_summary(label: String, cc: &'static str, s: &Summary) -> Row {
        let f = &s.flows[0];
        Row {
            label,
            cc,
            utilization_pct: 100.0 * f.utilization,
            delay_ms: f.queueing_delay_ms.mean,
            drops: s.links.iter().map(|l| l.drops).sum(),
            load: None,
            steal_pct: None,
            lateness_p99_us: worst_lateness_p99(s),
            slow_start_exit: (cc == "cubic").then(|| slow_start_exit(s)).flatten(),
        }
    }

    /// Whether this lab row meets the goals against the simulator's row; the reasons if not.
    fn verdict(&self, sim: &Row) -> Result<(), String> {
        let mut misses = Vec::new();
        match self.cc {
            "fast" => {
                let d = (self.utilization_pct - sim.utilization_pct).abs();
                if d > FAST_UTILIZATION_POINTS {
                    misses.push(format!("utilization {d:.1} points off"));
                }
                let r = (self.delay_ms - sim.delay_ms).abs() / sim.delay_ms;
                if r > FAST_DELAY_RATIO {
                    misses.push(format!("delay {:.0} % off", 100.0 * r));
                }
            }
            _ => {
                let r = (self.drops as f64 - sim.drops as f64).abs() / (sim.drops as f64).max(1.0);
                if r > CUBIC_DROPS_RATIO {
                    misses.push(format!("drops {:.0} % off", 100.0 * r));
                }
            }
        }
        if misses.is_empty() {
            Ok(())
        } else {
            Err(misses.join(", "))
        }
    }
}

/// `train@W`, `delay@W` (HyStart left slow start at a window of W packets, by ACK train or by
/// delay increase) or `loss` (no HyStart exit: the first loss ended slow start), from the lab's
/// `meta.sender_tcp_counters`; `None` for the simulator.
fn slow_start_exit(s: &Summary) -> Option<String> {
    let line = s.meta.get("sender_tcp_counters")?;
    let get = |k: &str| -> u64 {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let exits: Vec<String> = [("train", "TCPHystartTrain"), ("delay", "TCPHystartDelay")]
        .iter()
        .filter(|(_, k)| get(&format!("{k}Detect")) > 0)
        .map(|(name, k)| {
            let n = get(&format!("{k}Detect"));
            format!("{name}@{}", get(&format!("{k}Cwnd")) / n)
        })
        .collect();
    Some(if exits.is_empty() {
        "loss".into()
    } else {
        exits.join("+")
    })
}

/// The largest p99 release lateness over the emulator's directions, in µs.
fn worst_lateness_p99(s: &Summary) -> Option<f64> {
    s.meta
        .iter()
        .filter(|(k, _)| k.starts_with("emu_") && k.ends_with("_lateness_us"))
        .filter_map(|(_, v)| {
            v.split_whitespace()
                .find_map(|kv| kv.strip_prefix("p99="))
                .and_then(|x| x.parse::<f64>().ok())
        })
        .reduce(f64::max)
}

/// The one-minute load average.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// (steal, total) jiffies of all CPUs so far (`/proc/stat`'s first line).
fn cpu_jiffies() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    Some((*fields.get(7)?, fields.iter().take(8).sum()))
}

fn lab_row(label: String, cc: &'static str) -> Result<Row, String> {
    let b = builtin::find(SCENARIO).ok_or("the built-in `short` scenario is missing")?;
    let plan = plan_from_text(b.text, b.path, b.name, &[format!("flows.0.cc=\"{cc}\"")])
        .map_err(|e| e.to_string())?;
    let load = load_average();
    let before = cpu_jiffies();
    let out = longhaul_lab::run(&plan, &RunOptions::default(), &mut no_interrupt)
        .map_err(|e| format!("lab run failed: {e}"))?;
    let mut row = Row::from_summary(label, cc, &out.summary);
    row.load = load;
    row.steal_pct = before.zip(cpu_jiffies()).and_then(|((s0, t0), (s1, t1))| {
        (t1 > t0).then(|| 100.0 * (s1 - s0) as f64 / (t1 - t0) as f64)
    });
    Ok(row)
}

fn sim_row(cc: &'static str) -> Result<Row, String> {
    let b = builtin::find(SCENARIO).ok_or("the built-in `short` scenario is missing")?;
    // The model transport sends as Linux does without fq: unpaced, window-clocked (proto
    // paces every controller, which changes CUBIC's slow start: docs/lab.md).
    let sets = [
        format!("flows.0.cc=\"{cc}\""),
        "transport=\"model\"".to_string(),
    ];
    let checked =
        longhaul_sim::Scenario::parse(b.text, b.path, b.name, &sets).map_err(|e| e.to_string())?;
    let out = longhaul_sim::run(&checked, &mut |_| {}).map_err(|e| e.to_string())?;
    Ok(Row::from_summary("sim".into(), cc, &out.summary))
}

fn opt(x: Option<f64>, decimals: usize) -> String {
    x.map_or("—".into(), |v| format!("{v:.decimals$}"))
}

fn print_row(r: &Row, sim: &Row) {
    let verdict = if r.label == "sim" {
        "reference".to_string()
    } else {
        match r.verdict(sim) {
            Ok(()) => "within the goals".into(),
            Err(why) => format!("outside: {why}"),
        }
    };
    println!(
        "{:<6} {:<6} {:>7.2} {:>10.2} {:>6} {:>6} {:>8} {:>12} {:>11}  {verdict}",
        r.label,
        r.cc,
        r.utilization_pct,
        r.delay_ms,
        r.drops,
        opt(r.load, 1),
        opt(r.steal_pct, 1),
        opt(r.lateness_p99_us, 0),
        r.slow_start_exit.as_deref().unwrap_or("—"),
    );
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn main() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("agreement benchmark skipped: needs root (network namespaces, TUN, eBPF)");
        return;
    }
    let runs: usize = std::env::var("LONGHAUL_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(3);
    let ccs: [&'static str; 2] = ["fast", "cubic"];
    let sims: Vec<Row> = match ccs.iter().map(|&cc| sim_row(cc)).collect() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            std::process::exit(1);
        }
    };
    let mut labs: Vec<Row> = Vec::new();
    for run in 1..=runs {
        for &cc in &ccs {
            match lab_row(run.to_string(), cc) {
                Ok(r) => labs.push(r),
                Err(e) => {
                    eprintln!("benchmark failed: {e}");
                    std::process::exit(1);
                }
            }
        }
    }
    println!(
        "simulator vs kernel on `{SCENARIO}` (100 Mb/s × 100 ms, 1000-packet queue, 20 s), \
         {runs} lab run(s) per controller, interleaved"
    );
    println!(
        "goals: FAST utilization within {FAST_UTILIZATION_POINTS} points and mean queueing delay \
         within {:.0} %; CUBIC drops within {:.0} %",
        100.0 * FAST_DELAY_RATIO,
        100.0 * CUBIC_DROPS_RATIO
    );
    println!(
        "{:<6} {:<6} {:>7} {:>10} {:>6} {:>6} {:>8} {:>12} {:>11}",
        "run", "cc", "util %", "qdelay ms", "drops", "load", "steal %", "late p99 µs", "ss exit"
    );
    for (cc, sim) in ccs.iter().zip(&sims) {
        print_row(sim, sim);
        let mine: Vec<&Row> = labs.iter().filter(|r| r.cc == *cc).collect();
        for r in &mine {
            print_row(r, sim);
        }
        let med = Row {
            label: "median".into(),
            cc,
            utilization_pct: median(mine.iter().map(|r| r.utilization_pct).collect()),
            delay_ms: median(mine.iter().map(|r| r.delay_ms).collect()),
            drops: median(mine.iter().map(|r| r.drops as f64).collect()).round() as u64,
            load: None,
            steal_pct: None,
            lateness_p99_us: None,
            slow_start_exit: None,
        };
        print_row(&med, sim);
        let within = mine.iter().filter(|r| r.verdict(sim).is_ok()).count();
        println!("{cc}: {within} of {} lab runs within the goals", mine.len());
    }
}
