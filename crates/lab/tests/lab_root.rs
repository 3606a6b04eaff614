//! Root integration tests: real lab runs over the emulator with kernel TCP.
//!
//! They need root (namespaces, TUN devices, eBPF). Without root they print SKIPPED and pass,
//! except under `CI=true`, where they fail. Runs are serialised (one emulator at a time on a
//! small machine) and each checks that its namespaces and congestion controls are gone after.
//!
//! The path is `scenarios/lab/short.toml`: 100 Mb/s, 50 ms each way (100 ms RTT), 1000-packet
//! droptail queue, 20 s.

mod link_oracle;

use longhaul_emu::sys::steal::largest_stolen_during;
use longhaul_lab::builtin;
use longhaul_lab::{no_interrupt, plan_from_text, LabError, LabPlan, Outcome, RunOptions};
use longhaul_metrics::summary::{Mode, Summary};
use longhaul_perf::perf::SenderLimits;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn root_or_skip(test: &str) -> bool {
    longhaul_testenv::root_or_skip(
        test,
        "needs root (network namespaces, TUN, eBPF); run `sudo -E cargo test -p longhaul-lab`",
    )
}

fn short(cc: &str, extra: &[&str]) -> LabPlan {
    let b = builtin::find("short").expect("built-in short");
    let mut sets = vec![format!("flows.0.cc={cc}")];
    sets.extend(extra.iter().map(|s| s.to_string()));
    plan_from_text(b.text, b.path, b.name, &sets).expect("short maps onto the lab")
}

fn run(plan: &LabPlan) -> Outcome {
    run_with(plan, &RunOptions::default())
}

fn run_with(plan: &LabPlan, opts: &RunOptions) -> Outcome {
    let out = longhaul_lab::run(plan, opts, &mut no_interrupt)
        .unwrap_or_else(|e| panic!("lab run failed: {e}"));
    assert_clean();
    out
}

/// Nothing of this process is left: no namespace `lh<pid>*`, no congestion control `lab<pid>_*`.
fn assert_clean() {
    let pid = std::process::id();
    let ns: Vec<String> = std::fs::read_dir("/run/netns")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        !ns.iter().any(|n| n.starts_with(&format!("lh{pid}"))),
        "namespaces left behind: {ns:?}"
    );
    let cc =
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap();
    let ours = format!("lab{}_", pid % 1_000_000);
    assert!(
        !cc.contains(&ours),
        "congestion control left registered: {cc}"
    );
}

fn print(s: &Summary) {
    for f in &s.flows {
        eprintln!(
            "flow {} {}: {:.1} Mb/s, utilization {:.1} %, min RTT {:.1} ms, queueing delay mean \
             {:.2} ms p95 {:.2} ms, loss {:.4} %, {} retransmits",
            f.id,
            f.cc,
            f.throughput_bps / 1e6,
            f.utilization * 100.0,
            f.min_rtt_ms,
            f.queueing_delay_ms.mean,
            f.queueing_delay_ms.p95,
            f.loss_rate * 100.0,
            f.retransmits
        );
    }
    for l in &s.links {
        eprintln!(
            "link {}: utilization {:.1} %, drops {} {:?}, queue delay mean {:.2} ms p95 {:.2} ms",
            l.name,
            l.utilization * 100.0,
            l.drops,
            l.drops_by_reason,
            l.queue_delay_ms.mean,
            l.queue_delay_ms.p95
        );
    }
}

/// The summary is the simulator's schema: it round-trips through JSON and is self-consistent.
fn assert_schema(s: &Summary) {
    assert_eq!(s.mode, Mode::Lab);
    let text = s.to_json().unwrap();
    let back = Summary::from_json(&text, Path::new("lab.json")).unwrap();
    assert_eq!(back.flows.len(), s.flows.len());
    assert_eq!(back.mode, Mode::Lab);
    let problems = back.problems();
    assert!(problems.is_empty(), "summary problems: {problems:?}");
}

/// perf's per-interval numbers add up to the flow's total, and what `perf -J` would write for the
/// flow's measurement parses as the summary schema.
fn assert_intervals_add_up(o: &Outcome) {
    for (f, fr) in o.summary.flows.iter().zip(&o.raw.flows) {
        let j = longhaul_perf::perf::to_summary(
            &fr.run,
            &longhaul_perf::perf::PathFacts {
                distance_km: Some(5000.0),
                capacity_bps: Some(100e6),
                mtu: Some(1500),
            },
        );
        let parsed = Summary::from_json(&j.to_json().unwrap(), Path::new("perf.json")).unwrap();
        assert_eq!(parsed.mode, Mode::Perf);
        assert!(parsed.problems().is_empty(), "{:?}", parsed.problems());
        assert_eq!(parsed.flows[0].bytes_delivered, Some(fr.run.total_bytes()));
        let series = parsed.aggregate.series.as_ref().unwrap();
        let from_intervals: f64 = fr
            .run
            .intervals
            .iter()
            .zip(&series.throughput_bps)
            .map(|(i, bps)| bps * (i.end_s - i.start_s) / 8.0)
            .sum();
        assert!(
            (from_intervals - fr.run.total_bytes() as f64).abs() <= 1.0 + 1e-6 * from_intervals,
            "perf -J aggregate series {from_intervals} B vs total {} B",
            fr.run.total_bytes()
        );
        let sum: u64 = fr.run.intervals.iter().map(|i| i.bytes()).sum();
        assert_eq!(sum, fr.run.total_bytes(), "flow {} interval bytes", f.id);
        assert_eq!(f.bytes_delivered, Some(sum));
        let retrans: u64 = fr.run.intervals.iter().map(|i| i.retransmits()).sum();
        assert_eq!(f.retransmits, retrans);
        // The series' throughput × interval width is the bytes again.
        let s = f.series.as_ref().expect("series");
        let from_series: f64 = fr
            .run
            .intervals
            .iter()
            .zip(&s.throughput_bps)
            .map(|(i, bps)| bps * (i.end_s - i.start_s) / 8.0)
            .sum();
        assert!(
            (from_series - sum as f64).abs() <= 1e-6 * sum as f64 + 1.0,
            "series {from_series} vs {sum}"
        );
    }
}

/// FAST fills the link and keeps about alpha packets queued.
///
/// Bound: FAST's equilibrium holds alpha = 200 packets in the bottleneck queue (seed 000, eq. 1),
/// a queueing delay of alpha·MSS/rate = 200 · 1448 B · 8 / 100 Mb/s = 23.2 ms. The flow's mean
/// queueing delay (smoothed RTT − min RTT, every 100 ms) must lie within [0.5, 1.5] × that: below
/// it during the first second's ramp, above it by the host's own queueing on a loaded machine
/// and the smoothed RTT's lag; the kernel test of crates/kernel allows the same factor for its
/// RTT-sample noise.
#[test]
fn fast_fills_the_link_with_alpha_packets_queued() {
    if !root_or_skip("fast_fills_the_link_with_alpha_packets_queued") {
        return;
    }
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let plan = short("fast", &[]);
    // A `--sysctl` set to the kernel's own default (no change in behaviour) reaches both
    // namespaces (a failed write fails the run) and is recorded. So is a coalescing window
    // shorter than one packet's 120 µs at 100 Mb/s (no run of packets fits in it: no change).
    let opts = RunOptions {
        sysctls: vec!["net.ipv4.tcp_pacing_ca_ratio=120".parse().unwrap()],
        coalesce_ns: Some(100_000),
        ..RunOptions::default()
    };
    let o = run_with(&plan, &opts);
    print(&o.summary);
    assert_schema(&o.summary);
    assert_intervals_add_up(&o);
    assert_eq!(
        o.summary.meta.get("sysctl").map(String::as_str),
        Some("net.ipv4.tcp_pacing_ca_ratio=120")
    );
    assert_eq!(
        o.summary.meta.get("emu_coalesce_us").map(String::as_str),
        Some("100.0")
    );
    // A bulk sender has data outstanding the whole run, and neither the receiver's window nor
    // the send buffer (both sized for BDP + queue) held it back for long.
    let limits = SenderLimits::of(&o.raw.flows[0].run, 0).expect("TCP_INFO chrono timers");
    assert_eq!(
        o.summary.meta.get("flow0_sender_limits"),
        Some(&limits.render())
    );
    let ran = o.raw.flows[0].run.duration_s;
    assert!(limits.busy_s >= 0.8 * ran, "{limits:?} over {ran:.1} s");
    assert!(
        limits.rwnd_limited_s + limits.sndbuf_limited_s <= 0.2 * ran,
        "{limits:?} over {ran:.1} s"
    );
    assert!(limits.open_samples > 0, "{limits:?}");
    let f = &o.summary.flows[0];
    assert_eq!(f.cc, "fast");
    // The goal, 90 % of the link, is reported. Asserted is 75 %: with a CPU hog on each core
    // the sender loses CPU time and the link idles while it waits, although FAST's queue stands
    // (87.6 % with a mean link queue of 18.5 ms; 79.3–88.3 % in earlier runs); the queueing
    // delay below, α packets, is what shows FAST's window is the one that fills the path.
    eprintln!(
        "goal: FAST utilization ≥ 90 %: measured {:.1} %",
        f.utilization * 100.0
    );
    assert!(
        f.utilization >= 0.75,
        "FAST utilization {:.1} % < 75 %",
        f.utilization * 100.0
    );
    let target_ms = 200.0 * 1448.0 * 8.0 / 100e6 * 1e3;
    let q = f.queueing_delay_ms.mean;
    assert!(
        (0.5 * target_ms..=1.5 * target_ms).contains(&q),
        "FAST mean queueing delay {q:.2} ms outside [0.5, 1.5] × {target_ms:.1} ms"
    );
    // The base RTT is the configured 100 ms (+ serialisation and host time, < 2 ms).
    assert!(
        (99.5..102.0).contains(&f.min_rtt_ms),
        "min RTT {}",
        f.min_rtt_ms
    );
    // The queue never overflowed: FAST does not need loss.
    assert_eq!(o.summary.links[0].drops, 0, "FAST caused drops");
}

/// Lion (crates/kernel lion.bpf.c) over the same path: paced at its available-bandwidth
/// estimate, it keeps the link busy without filling the 1000-packet queue (120 ms) the way a
/// loss-based window does. Measured on a quiet machine: 89.0–89.5 % utilization, mean queueing
/// delay 7.3–8.7 ms, no drop (docs/lab.md); with a CPU hog on each core 70.7–90.1 % (4 runs),
/// 4.6–6.8 ms, no drop: the loaded host's timing makes RTT samples peak, startup ends at a few
/// Mb/s, and probing climbs from there in 4–7 s. The utilization asserted is that of a sender
/// its own pacing does not starve (half the link); how close to the link it gets is reported.
#[test]
fn lion_paces_the_link_full_with_a_short_queue() {
    if !root_or_skip("lion_paces_the_link_full_with_a_short_queue") {
        return;
    }
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let plan = short("lion", &[]);
    assert_eq!(plan.flows[0].cc, "lion");
    let (o, stolen) = largest_stolen_during(|| run(&plan));
    print(&o.summary);
    assert_schema(&o.summary);
    let f = &o.summary.flows[0];
    assert_eq!(f.cc, "lion");
    // Where the hypervisor steals a share of every CPU, Lion's pacing timers fire late and the
    // emulator stalls (a CI run with steal bursts: 31.2 %; its rerun 89.7 %): then reported.
    if stolen < 0.1 {
        assert!(
            f.utilization >= 0.50,
            "Lion utilization {:.1} %",
            f.utilization * 100.0
        );
    } else {
        eprintln!(
            "Lion utilization {:.1} % with {:.0} % of a CPU stolen: not asserted",
            f.utilization * 100.0,
            stolen * 100.0
        );
    }
    assert!(
        (99.5..102.0).contains(&f.min_rtt_ms),
        "min RTT {}",
        f.min_rtt_ms
    );
    // Half the buffer is 60 ms; CUBIC's mean on this path is 84 ms (docs/lab.md).
    let q = f.queueing_delay_ms.mean;
    assert!(q < 60.0, "Lion's mean queueing delay {q:.1} ms");
}

/// CUBIC over the same path: a loss-based window fills the 1.2-BDP queue until it overflows.
/// Utilization ≥ 80 %: a 1000-packet queue (1.2 × BDP) keeps the link busy after each 30 %
/// reduction (CUBIC's beta 0.7 needs ≥ 0.43 BDP of queue), so only slow start and the first
/// recovery cost; 80 % leaves room for the loaded machine.
///
/// The run keeps its event log, and its links are held to the metrics oracle's reference
/// (`link_oracle`, as `tests/oracle.rs` does for the recorded run).
#[test]
fn cubic_fills_the_queue_until_it_drops() {
    if !root_or_skip("cubic_fills_the_queue_until_it_drops") {
        return;
    }
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let plan = short("cubic", &[]);
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("emulator-events.log");
    let o = run_with(
        &plan,
        &RunOptions {
            event_log: Some(events.clone()),
            ..RunOptions::default()
        },
    );
    print(&o.summary);
    let log = std::fs::read_to_string(&events).unwrap();
    for f in link_oracle::check(&link_oracle::Run {
        plan: &plan,
        clock: o.raw.clock(),
        log: &log,
        coalesce_ns: o.raw.coalesce_ns,
        directions: &o.raw.emulator.directions,
        links: &o.summary.links,
        queue_logs: [&o.raw.forward_log, &o.raw.reverse_log],
    }) {
        eprintln!("oracle: {}", f.line());
    }
    assert_schema(&o.summary);
    assert_intervals_add_up(&o);
    let f = &o.summary.flows[0];
    assert_eq!(f.cc, "cubic");
    assert!(
        f.utilization >= 0.80,
        "CUBIC utilization {:.1} %",
        f.utilization * 100.0
    );
    let l = &o.summary.links[0];
    assert!(
        l.drops_by_reason.get("queue_full").copied().unwrap_or(0) > 0,
        "CUBIC never overflowed a 1000-packet queue: {:?}",
        l.drops_by_reason
    );
    assert!(f.retransmits > 0);
    // The drop log has the drops the counters have (unless the limit was hit).
    assert_eq!(
        o.raw.forward_log.drops.len() as u64 + o.raw.forward_log.drops_unlogged,
        l.drops
    );
    // The queue series shows the standing queue a loss-based flow builds: at some interval the
    // mean queue seen by arrivals exceeds half the buffer.
    let s = l.series.as_ref().unwrap();
    let peak = s.queue_pkts.iter().cloned().fold(0.0, f64::max);
    assert!(peak > 500.0, "peak queue {peak} packets");
}

/// `compare` lines up a simulator run and a lab run of the same file (the scenario's 20 s).
///
/// It also prints how far they agree on FAST, against the goal of utilization within 5 points
/// and mean queueing delay within 20 %. The goal is reported, not asserted: on this 2-core
/// machine the kernel's figures depend on how much CPU its sender gets (with a CPU hog on each
/// core three runs measured 88.3, 81.7 and 79.3 %). The simulator runs the model transport,
/// which like the kernel without fq does not pace FAST (95.0 %, 23.2 ms). `cargo bench -p
/// longhaul-lab --bench agreement` measures the agreement over interleaved runs of FAST and
/// CUBIC, with the machine's load beside each (docs/lab.md).
#[test]
fn compare_puts_sim_and_lab_side_by_side() {
    if !root_or_skip("compare_puts_sim_and_lab_side_by_side") {
        return;
    }
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let b = builtin::find("short").unwrap();
    // The model transport, unpaced like the kernel without fq (docs/lab.md).
    let model = ["transport=\"model\"".to_string()];
    let checked = longhaul_sim::Scenario::parse(b.text, b.path, b.name, &model).unwrap();
    let sim = longhaul_sim::run(&checked, &mut |_| {}).unwrap().summary;
    let lab = run(&short("fast", &[])).summary;
    let (fs, fl) = (&sim.flows[0], &lab.flows[0]);
    eprintln!(
        "FAST sim vs lab (goal: within 5 points, within 20 %): utilization {:.2} vs {:.2} %, \
         mean queueing delay {:.2} vs {:.2} ms",
        100.0 * fs.utilization,
        100.0 * fl.utilization,
        fs.queueing_delay_ms.mean,
        fl.queueing_delay_ms.mean
    );
    assert_eq!(sim.scenario, lab.scenario);
    let dir = tempfile::tempdir().unwrap();
    let (a, l) = (dir.path().join("sim.json"), dir.path().join("lab.json"));
    sim.write(&a).unwrap();
    lab.write(&l).unwrap();
    let (a, l) = (Summary::read(&a).unwrap(), Summary::read(&l).unwrap());
    let cmp = longhaul_metrics::report::compare(&a, "sim", &l, "lab");
    eprintln!("{}", cmp.render());
    // Every flow and link of the simulator's summary has its lab counterpart.
    for item in [
        "aggregate",
        "flow 0 (fast)",
        "link path",
        "link path (reverse)",
    ] {
        let rows: Vec<_> = cmp.rows.iter().filter(|r| r.item == item).collect();
        assert!(!rows.is_empty(), "compare has no `{item}`");
        for r in rows {
            assert!(
                r.a.is_some() && r.b.is_some(),
                "`{item}` {} not paired: {:?} vs {:?}",
                r.metric,
                r.a,
                r.b
            );
        }
    }
}

/// Two flows with different RTTs: the per-port delay gives each its own base RTT.
#[test]
fn per_flow_extra_rtt_reaches_the_kernel() {
    if !root_or_skip("per_flow_extra_rtt_reaches_the_kernel") {
        return;
    }
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let b = builtin::find("short").unwrap();
    let text = format!(
        "{}\n[[flows]]\ncc = \"cubic\"\nextra_rtt = \"80ms\"\n",
        b.text
    );
    let plan = plan_from_text(&text, b.path, b.name, &["duration=\"6s\"".into()]).unwrap();
    let o = run(&plan);
    print(&o.summary);
    let rtt: Vec<f64> = o.summary.flows.iter().map(|f| f.min_rtt_ms).collect();
    assert!((99.5..102.0).contains(&rtt[0]), "flow 1 min RTT {}", rtt[0]);
    assert!(
        (179.5..182.0).contains(&rtt[1]),
        "flow 2 min RTT {}",
        rtt[1]
    );
}

/// A `--sysctl` the hosts' namespaces do not have stops the run before any flow, says which
/// key and what to do, and leaves nothing behind.
#[test]
fn an_unknown_sysctl_is_refused_and_cleaned_up() {
    if !root_or_skip("an_unknown_sysctl_is_refused_and_cleaned_up") {
        return;
    }
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let plan = short("cubic", &[]);
    let opts = RunOptions {
        sysctls: vec!["net.ipv4.longhaul_no_such_key=1".parse().unwrap()],
        ..RunOptions::default()
    };
    match longhaul_lab::run(&plan, &opts, &mut no_interrupt) {
        Err(e) => {
            let m = e.to_string();
            assert!(
                m.contains("net.ipv4.longhaul_no_such_key") && m.contains("set it on the host"),
                "{m}"
            );
        }
        Ok(o) => panic!("ran with an unknown sysctl: {:?}", o.summary.meta),
    }
    assert_clean();
}

/// An interrupted run removes its namespaces and unloads its congestion controls.
#[test]
fn interrupted_run_cleans_up() {
    if !root_or_skip("interrupted_run_cleans_up") {
        return;
    }
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let plan = short("fast", &[]);
    let t0 = Instant::now();
    let mut interrupt = |d: Duration| {
        std::thread::sleep(d);
        (t0.elapsed() > Duration::from_secs(3)).then_some(libc::SIGINT)
    };
    match longhaul_lab::run(&plan, &RunOptions::default(), &mut interrupt) {
        Err(LabError::Interrupted(s)) => assert_eq!(s, libc::SIGINT),
        other => panic!(
            "expected an interruption, got {:?}",
            other.map(|o| o.summary)
        ),
    }
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    assert_clean();
}

/// This process's threads that `longhaul_lab::responsive` started and that are still alive.
fn cross_threads() -> Vec<String> {
    let prefix = longhaul_lab::responsive::THREAD_PREFIX;
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("comm")).ok())
                .map(|n| n.trim().to_string())
                .filter(|n| n.starts_with(prefix))
                .collect()
        })
        .unwrap_or_default()
}

const RESPONSIVE_WEB: &str = r#"
name = "lab-responsive-web"
duration = "6s"
seed = 3
[[links]]
name = "path"
rate = "50mbit"
delay = "10ms"
distance_km = 1000
queue = { kind = "droptail", packets = 100 }
[topology]
kind = "dumbbell"
bottleneck = "path"
[[flows]]
cc = "cubic"
[[cross_traffic]]
kind = "web"
link = "path"
rate = "10mbit"
responsive = true
start = "1s"
[[cross_traffic]]
kind = "web"
link = "path"
rate = "20mbit"
size = "50MB"
shape = 2.5
responsive = true
cc = "cubic"
start = "5.5s"
[output]
interval = "100ms"
"#;

/// Responsive web traffic beside a CUBIC flow, 50 Mb/s × 20 ms, 6 s: Reno transfers of
/// Pareto sizes (mean 100 KiB) arriving at 10 Mb/s from 1 s on, as kernel TCP connections on
/// the simulator's schedule. The lab begins exactly the schedule's transfers (as many as the
/// simulator's engine begins for the same file), within Poisson bounds of the arrival rate; they
/// deliver bytes through the emulated bottleneck, which the link counts and the flow leaves
/// room for; compare pairs the entry with the simulator's. A second entry begins one transfer
/// of 30 MB or more at 5.5 s, which cannot finish: at the end it counts what it delivered and
/// is reset. No thread, namespace or congestion control is left. Asserted is behaviour, not
/// precision: completions and shares hold with a CPU hog on each core.
#[test]
fn responsive_web_traffic_shares_the_link_and_leaves_nothing_running() {
    if !root_or_skip("responsive_web_traffic_shares_the_link_and_leaves_nothing_running") {
        return;
    }
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let plan = plan_from_text(RESPONSIVE_WEB, "responsive.toml", "responsive", &[]).unwrap();
    let entry = &plan.responsive[0];
    let schedule: Vec<_> = entry.schedule().collect();
    // Poisson arrivals at 10 Mb/s ÷ (8 × 100 KiB) = 12.2 per second over the 5 s from `start`.
    let expected = 10e6 / (8.0 * 102_400.0) * 5.0;
    let n = schedule.len() as f64;
    assert!(
        (n - expected).abs() <= 5.0 * expected.sqrt(),
        "{n} transfers scheduled, {expected:.1} expected"
    );
    assert!(schedule
        .iter()
        .all(|t| (1_000_000_000..6_000_000_000).contains(&t.at_ns)));

    let o = run(&plan);
    print(&o.summary);
    assert_schema(&o.summary);
    let leftover = cross_threads();
    assert!(leftover.is_empty(), "threads left running: {leftover:?}");
    let x = &o.summary.responsive_cross;
    assert_eq!(x.len(), 2);
    let c = &x[0];
    eprintln!(
        "responsive web: {} transfers begun, {} completed, {:.2} MB delivered ({:.2} Mb/s)",
        c.transfers,
        c.completed,
        c.bytes_delivered as f64 / 1e6,
        c.rate_bps / 1e6
    );
    assert_eq!(
        (c.index, c.kind.as_str(), c.cc.as_str()),
        (0, "web", "reno")
    );
    assert_eq!(c.transfers, schedule.len() as u64);
    // Most transfers are short and end well before the run: at least half complete.
    assert!(
        2 * c.completed >= c.transfers && c.completed <= c.transfers,
        "{} of {} completed",
        c.completed,
        c.transfers
    );
    // Each completed transfer delivered its size: at least the `completed` smallest sizes; and
    // never more than all scheduled.
    let mut sizes: Vec<u64> = schedule.iter().map(|t| t.bytes).collect();
    sizes.sort_unstable();
    let floor: u64 = sizes[..c.completed as usize].iter().sum();
    let all: u64 = sizes.iter().sum();
    assert!(
        (floor..=all).contains(&c.bytes_delivered),
        "{} B delivered, outside [{floor}, {all}]",
        c.bytes_delivered
    );
    assert!((c.rate_bps - c.bytes_delivered as f64 * 8.0 / 5.0).abs() < 1.0);
    // The cross traffic crossed the bottleneck: at least half of what the schedule offers
    // (2.76 MB for this seed, 4.4 Mb/s: a Pareto sample's mean lies below its distribution's)
    // got through, the link carried it beside the flow, and the flow left it room.
    let payload_bps = 50e6 * 1460.0 / 1500.0;
    let share = c.bytes_delivered as f64 * 8.0 / (payload_bps * o.raw.span_s);
    let offered = all as f64 * 8.0 / (payload_bps * o.raw.span_s);
    assert!(
        share >= 0.5 * offered,
        "cross traffic's share {share:.3} of {offered:.3} offered"
    );
    let (f, l) = (&o.summary.flows[0], &o.summary.links[0]);
    assert!(
        f.utilization <= 1.0 - 0.5 * share,
        "flow utilization {:.3} beside a cross share of {share:.3}",
        f.utilization
    );
    // In bytes (the link's utilization is over the run's span, the flow's over its own time):
    // the link's payload holds the flow's and the cross traffic's.
    let link_bytes = l.utilization * payload_bps * o.raw.span_s / 8.0;
    let flow_bytes = f.bytes_delivered.expect("the lab counts bytes") as f64;
    let cross_bytes: u64 = x.iter().map(|c| c.bytes_delivered).sum();
    assert!(
        link_bytes >= flow_bytes + 0.9 * cross_bytes as f64,
        "the link carried {link_bytes:.0} B, the flow {flow_bytes:.0} B, the cross traffic \
         {cross_bytes} B"
    );
    assert!(o.summary.meta["registered_cc"].contains("cross0=reno cross1=cubic"));

    // The large transfer still running at the end: what its receiver acknowledged by then,
    // at most 0.5 s of the link's rate.
    let big = &x[1];
    let size = plan.responsive[1].schedule().next().unwrap().bytes;
    eprintln!(
        "large transfer: {} of {size} B delivered at the end",
        big.bytes_delivered
    );
    assert_eq!((big.index, big.transfers, big.completed), (1, 1, 0));
    assert!(size >= 30_000_000, "{size}");
    assert!(
        big.bytes_delivered > 0 && (big.bytes_delivered as f64) < 50e6 / 8.0 * 0.5 * 1.1,
        "{} B",
        big.bytes_delivered
    );

    // The simulator begins the same transfers, and compare pairs the entry.
    let checked = longhaul_sim::Scenario::parse(RESPONSIVE_WEB, "r.toml", "r", &[]).unwrap();
    let sim = longhaul_sim::run(&checked, &mut |_| {}).unwrap().summary;
    assert_eq!(sim.responsive_cross[0].transfers, c.transfers);
    let cmp = longhaul_metrics::report::compare(&sim, "sim", &o.summary, "lab");
    assert_eq!(sim.responsive_cross[1].transfers, 1);
    for item in [
        "cross traffic 0 (web, reno)",
        "cross traffic 1 (web, cubic)",
    ] {
        let rows: Vec<_> = cmp.rows.iter().filter(|r| r.item == item).collect();
        assert_eq!(rows.len(), 4, "{}", cmp.render());
        assert!(rows.iter().all(|r| r.a.is_some() && r.b.is_some()));
    }
    eprintln!("{}", cmp.render());
}

/// A run with responsive cross traffic interrupted mid-way ends its transfers and joins their
/// threads before it returns.
#[test]
fn interrupted_run_with_responsive_cross_traffic_cleans_up() {
    if !root_or_skip("interrupted_run_with_responsive_cross_traffic_cleans_up") {
        return;
    }
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let plan = plan_from_text(RESPONSIVE_WEB, "responsive.toml", "responsive", &[]).unwrap();
    let t0 = Instant::now();
    let mut interrupt = |d: Duration| {
        std::thread::sleep(d);
        (t0.elapsed() > Duration::from_secs(3)).then_some(libc::SIGTERM)
    };
    match longhaul_lab::run(&plan, &RunOptions::default(), &mut interrupt) {
        Err(LabError::Interrupted(s)) => assert_eq!(s, libc::SIGTERM),
        other => panic!(
            "expected an interruption, got {:?}",
            other.map(|o| o.summary)
        ),
    }
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    let leftover = cross_threads();
    assert!(leftover.is_empty(), "threads left running: {leftover:?}");
    assert_clean();
}
