//! What a sweep will cost before it runs: each run's simulated seconds and its CPU time,
//! estimated from the packets it will simulate and this machine's measured speed.
//!
//! A simulator's time goes into packets: each one a data packet crossing links and an ACK
//! coming back. A run's **packet-hops** are estimated from its scenario alone:
//!
//! * each flow sends, from its start to its stop, at its share of its path's narrowest link
//!   (flows crossing a link share it equally; a flow's access rate caps it too);
//! * a loss-based controller on a path with random loss `p` sends less: its response-function
//!   window per round trip (`longhaul_cc::response`: Reno's Mathis window, and Vegas's, whose
//!   loss response is Reno's; HighSpeed's; Scalable's; CUBIC's), after a transient: slow start
//!   fills the path and its queues (`W₀` packets), and each loss, one per `1/p` packets, takes
//!   the window down by the controller's decrease until it reaches the response window, `n`
//!   losses and `(n + 1)/p` packets. Delay-based and model-based controllers (FAST, BBR, Lion)
//!   have no response function and fill their share;
//! * cross traffic sends at its rate while it is on;
//! * every packet counts once per link of its path, and [`ACCESS_HOP`] more for the flow's
//!   access ports when it has them (an access rate, or a delay of its own).
//!
//! The machine's speed comes from a calibration: a short run of a fixed scenario (one Reno flow
//! over 1 Gb/s × 20 ms, [`CALIBRATION`]), timed by its thread's CPU clock, whose packet-hops are
//! estimated by the same rule — so the rule's constant errors (ACKs, headers, slow start) cancel
//! — and [`Speed::cpu_s`] divides. The CPU clock counts only the time the run's own thread
//! spends, so another process on the same core slows the calibration's wall time, not its
//! figure. Set-up (building the network, writing the result) is not counted; runs of a few
//! milliseconds cost more than their estimate.

use crate::error::{Result, SweepError};
use longhaul_cc::response;
use longhaul_sim::Checked;

/// What a flow's access port adds to a packet's cost, in links: measured at an eighth (+12 %
/// CPU for a 1 Gb/s port that never queues in front of a 100 Mb/s bottleneck) and up to a whole
/// link where the flow's queue builds in it (a host queue in front of a path of the card's
/// rate); counted as half.
pub const ACCESS_HOP: f64 = 0.5;

/// What one run is estimated to cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    /// Simulated seconds (the scenario's duration).
    pub sim_s: f64,
    /// Packets to simulate, each counted once per link it crosses.
    pub packet_hops: f64,
}

impl std::ops::Add for Cost {
    type Output = Cost;

    fn add(self, o: Cost) -> Cost {
        Cost {
            sim_s: self.sim_s + o.sim_s,
            packet_hops: self.packet_hops + o.packet_hops,
        }
    }
}

/// The response-function controller a controller's loss response is estimated by, and the
/// share of its window it keeps at a loss (HighSpeed's at windows of about 10,000 packets).
fn response_like(cc: &str) -> Option<(&str, f64)> {
    match cc {
        "reno" | "vegas" => Some(("reno", response::RENO_BETA)),
        "highspeed" => Some(("highspeed", 0.75)),
        "scalable" => Some(("scalable", 1.0 - response::SCALABLE_B)),
        "cubic" => Some(("cubic", response::CUBIC_BETA)),
        _ => None,
    }
}

/// The packet-hops and simulated seconds of a checked scenario (module comment).
pub fn estimate(checked: &Checked) -> Cost {
    let s = &checked.scenario;
    let bits = |l: &longhaul_sim::scenario::LinkSpec| 8.0 * f64::from(l.mtu.max(1));
    // Flows crossing each link.
    let mut sharing = vec![0u32; s.links.len()];
    for f in &checked.flows {
        for &l in &f.path {
            sharing[l] += 1;
        }
    }
    let mut packet_hops = 0.0;
    for f in &checked.flows {
        let spec = &s.flows[f.spec];
        let active_s = (f.stop.saturating_sub(f.start)) as f64 * 1e-9;
        // Packets per second: the flow's share of its narrowest link, and its access rate.
        let mut pps = f64::INFINITY;
        let mut rtt_s = spec.extra_rtt.secs() + 2.0 * spec.access.delay.map_or(0.0, |d| d.secs());
        let mut kept = 1.0;
        // The packets the path and its queues hold.
        let mut queued = spec.access.packets.unwrap_or(0) as f64;
        for &l in &f.path {
            let link = &s.links[l];
            pps = pps.min(link.rate.0 / bits(link) / f64::from(sharing[l].max(1)));
            rtt_s += 2.0 * link.delay.secs();
            kept *= 1.0 - link.loss.mean().clamp(0.0, 1.0);
            queued += link.queue.packets.unwrap_or(0) as f64
                + link
                    .queue
                    .bytes
                    .map_or(0.0, |b| b.0 as f64 * 8.0 / bits(link));
        }
        if let (Some(r), Some(&l)) = (spec.access.rate, f.path.first()) {
            pps = pps.min(r.0 / bits(&s.links[l]));
        }
        if !pps.is_finite() {
            continue;
        }
        let rtt_s = rtt_s.max(1e-6);
        let mut packets = pps * active_s;
        let p = 1.0 - kept;
        if let Some((like, keep)) = response_like(f.cc.algorithm) {
            if let Some(w) = response::window(like, p, rtt_s) {
                let filled = pps * rtt_s + queued;
                let losses = ((filled / w).ln() / (1.0 / keep).ln()).max(0.0);
                packets = packets.min((losses + 1.0) / p + w / rtt_s * active_s);
            }
        }
        // The simulator gives a flow access ports of its own when it has an access rate or a
        // delay of its own: half a hop (module comment).
        let own_delay = spec.extra_rtt.0 > 0 || spec.access.delay.is_some_and(|d| d.0 > 0);
        let access = if spec.access.rate.is_some() || own_delay {
            ACCESS_HOP
        } else {
            0.0
        };
        packet_hops += packets * (f.path.len() as f64 + access).max(1.0);
    }
    for (c, spec) in checked.cross.iter().zip(&s.cross_traffic) {
        let size = f64::from(c.packet_size.max(1)) * 8.0;
        packet_hops += spec.rate.0 / size * (c.stop.saturating_sub(c.start)) as f64 * 1e-9;
    }
    Cost {
        sim_s: s.duration.secs(),
        packet_hops,
    }
}

/// The scenario timed by [`Speed::calibrate`]: one Reno flow over 1 Gb/s × 20 ms with a
/// one-BDP buffer, no loss; its duration is set by the calibration.
pub const CALIBRATION: &str = r#"
name = "calibration"
duration = "1s"
[[links]]
name = "bottleneck"
rate = "1gbit"
delay = "10ms"
queue = { kind = "droptail", packets = 1667 }
[topology]
kind = "dumbbell"
bottleneck = "bottleneck"
[[flows]]
cc = "reno"
[output]
interval = "100ms"
"#;

/// This machine's simulation speed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Speed {
    /// Packet-hops simulated per CPU second.
    pub packet_hops_per_cpu_s: f64,
}

impl Speed {
    /// Time [`CALIBRATION`] runs of `sim_s` simulated seconds each, single-threaded on this
    /// thread, until at least `min_cpu_s` of CPU is spent (the first run warms caches and is
    /// not counted).
    pub fn calibrate(sim_s: f64, min_cpu_s: f64) -> Result<Speed> {
        let sets = [format!("duration=\"{sim_s}s\"")];
        let checked =
            longhaul_sim::Scenario::parse(CALIBRATION, "calibration", "calibration", &sets)?;
        let run = || {
            longhaul_sim::run_on(&checked, 1, &mut |_| {}).map_err(|e| SweepError::Query {
                message: format!("the calibration run failed: {e}"),
            })
        };
        run()?;
        let (mut cpu, mut runs) = (0.0, 0u32);
        while cpu < min_cpu_s || runs == 0 {
            let t0 = thread_cpu_s();
            run()?;
            cpu += thread_cpu_s() - t0;
            runs += 1;
        }
        Ok(Speed {
            packet_hops_per_cpu_s: estimate(&checked).packet_hops * f64::from(runs) / cpu.max(1e-9),
        })
    }

    /// The estimated CPU seconds of `cost`.
    pub fn cpu_s(&self, cost: &Cost) -> f64 {
        cost.packet_hops / self.packet_hops_per_cpu_s
    }
}

/// The line `sweep plan` ends with: the runs' simulated time, their estimated CPU time, the
/// wall time on `cores` cores, and the speed it is estimated from.
pub fn describe(total: &Cost, runs: u64, speed: &Speed, cores: usize) -> String {
    let cpu = speed.cpu_s(total);
    let seconds = if cpu >= 120.0 {
        format!(" ({} s)", thousands(cpu))
    } else {
        String::new()
    };
    format!(
        "cost: {runs} run{}, {} simulated s; estimated CPU time {}{seconds}, about {} on this \
         machine's {cores} core{} (at {:.2} M packet-hops per CPU second, measured now)",
        if runs == 1 { "" } else { "s" },
        thousands(total.sim_s),
        human_s(cpu),
        human_s(cpu / cores.max(1) as f64),
        if cores == 1 { "" } else { "s" },
        speed.packet_hops_per_cpu_s / 1e6,
    )
}

/// A whole number with thousands separated by commas: `21,897`.
fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// CPU seconds this thread has used (its own clock: time other threads or processes take on
/// the same core does not count).
pub fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which `ts` is.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Seconds as a person reads a cost: `0.58 s`, `4.2 s`, `42 s`, `17 min`, `3.2 h`, `4.1 days`.
pub fn human_s(s: f64) -> String {
    if s < 1.0 {
        format!("{s:.2} s")
    } else if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 2.0 * 3600.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 2.0 * 86_400.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} days", s / 86_400.0)
    }
}

/// `longhaul sweep plan`'s table: a row per run with its axis values, simulated seconds and
/// estimated CPU seconds (`-` for a run that cannot run as planned).
pub struct PlanTable {
    /// The table, rendered.
    pub text: String,
    /// Why each run that cannot run as planned cannot: `run I (LABEL): ERROR`.
    pub bad: Vec<String>,
    /// The cost of the runs that can run.
    pub total: Cost,
}

impl PlanTable {
    /// Without `--check`: a note that the runs that cannot run as planned are not counted
    /// (`None` when every run can).
    pub fn note(&self) -> Option<String> {
        let n = self.bad.len();
        (n > 0).then(|| {
            format!(
                "note: {n} run{} cannot run as planned and {} not counted (`--check` lists them)",
                if n == 1 { "" } else { "s" },
                if n == 1 { "is" } else { "are" }
            )
        })
    }

    /// With `--check`: why the plan of `runs` runs is refused when some cannot run as planned.
    pub fn refusal(&self, runs: u64) -> String {
        format!(
            "{} of {runs} runs cannot run as planned (above); change the axes so that these \
             combinations are left out, e.g. by a [[zip]] group",
            self.bad.len()
        )
    }
}

/// Every run of `plan` with its estimated cost on a machine of `speed`.
pub fn plan_table(plan: &crate::plan::Plan, speed: &Speed) -> Result<PlanTable> {
    use longhaul_metrics::report::{Align, Table};
    let mut t = Table::new(&[Align::Right]);
    let mut head = vec!["index".to_string()];
    head.extend(plan.axis_names().iter().cloned());
    head.extend(["sim_s".to_string(), "est_cpu_s".to_string()]);
    t.header(&head);
    let mut bad = Vec::new();
    let mut total = Cost::default();
    for i in 0..plan.runs {
        let run = plan.run(i)?;
        let mut row = vec![i.to_string()];
        row.extend(run.axes.iter().map(|(_, v)| crate::spec::display(v)));
        match run.load() {
            Ok(checked) => {
                let c = estimate(&checked);
                total = total + c;
                // Durations are whole nanoseconds: three decimals show every one that is written
                // in milliseconds, without float noise.
                row.push(format!("{}", (c.sim_s * 1e3).round() / 1e3));
                row.push(format!("{:.2}", speed.cpu_s(&c)));
            }
            Err(e) => {
                bad.push(format!("run {i} ({}): {e}", run.label()));
                row.extend(["-".to_string(), "-".to_string()]);
            }
        }
        t.row(row);
    }
    Ok(PlanTable {
        text: t.render(),
        bad,
        total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;
    use crate::runner::{execute, Engine};

    fn sweep(name: &str) -> Plan {
        let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/sweeps")
            .join(name);
        Plan::load(&f, false).unwrap()
    }

    /// Estimated and measured CPU seconds of `indices` of `plan`, run on two threads, each
    /// run timed by its thread's CPU clock.
    fn measure(plan: &Plan, speed: &Speed, indices: &[u64]) -> (f64, f64) {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let totals = std::sync::Mutex::new((0.0, 0.0));
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&i) = indices.get(k) else { break };
                    let run = plan.run(i).unwrap();
                    let est = speed.cpu_s(&estimate(&run.load().unwrap()));
                    let t0 = thread_cpu_s();
                    execute(&run, &Engine::SIM, 1, None).unwrap();
                    let cpu = thread_cpu_s() - t0;
                    let mut t = totals.lock().unwrap();
                    t.0 += est;
                    t.1 += cpu;
                });
            }
        });
        totals.into_inner().unwrap()
    }

    #[test]
    fn estimates_are_within_twice_the_measured_cpu_time() {
        // Both sides are CPU time measured in this test, so a loaded machine slows it without
        // moving the ratio.
        let speed = Speed::calibrate(1.0, 0.5).unwrap();
        assert!(
            speed.packet_hops_per_cpu_s > 1e5 && speed.packet_hops_per_cpu_s < 1e8,
            "{speed:?}"
        );
        let grid = sweep("small-grid.toml");
        let all: Vec<u64> = (0..grid.runs).collect();
        let (est, cpu) = measure(&grid, &speed, &all);
        let ratio = est / cpu;
        eprintln!("small-grid: estimated {est:.2} CPU s, measured {cpu:.2}: ratio {ratio:.2}");
        assert!((0.5..=2.0).contains(&ratio), "small-grid: {ratio}");

        // The response sweep's seed-1 runs at p = 1e-4 (every controller, 20 to 588 s) and
        // at p = 0 for four of them (20 s each): ~15 CPU s of its ~260.
        let response = sweep("response.toml");
        let picked: Vec<u64> = (0..response.runs)
            .filter(|&i| {
                let run = response.run(i).unwrap();
                let axis = |name: &str| {
                    run.axes
                        .iter()
                        .find(|(a, _)| a == name)
                        .map(|(_, v)| v.clone())
                        .unwrap()
                };
                let cc = axis("flows.0.cc");
                let loss = axis("links.0.loss").as_float().unwrap();
                axis("seed").as_integer() == Some(1)
                    && (loss == 1e-4
                        || (loss == 0.0
                            && ["reno", "cubic", "bbr", "lion"].contains(&cc.as_str().unwrap())))
            })
            .collect();
        assert_eq!(picked.len(), 12);
        let (est, cpu) = measure(&response, &speed, &picked);
        let ratio = est / cpu;
        eprintln!("response subset: estimated {est:.2} CPU s, measured {cpu:.2}: ratio {ratio:.2}");
        assert!((0.5..=2.0).contains(&ratio), "response: {ratio}");
    }

    #[test]
    fn loss_based_controllers_send_their_response_window_after_a_transient() {
        let load = |cc: &str, loss: f64| {
            let plan = sweep("response.toml");
            let i = (0..plan.runs)
                .find(|&i| {
                    let r = plan.run(i).unwrap();
                    r.sets.contains(&format!("flows.0.cc=\"{cc}\""))
                        && r.axes
                            .iter()
                            .any(|(a, v)| a == "links.0.loss" && v.as_float() == Some(loss))
                })
                .unwrap();
            estimate(&plan.run(i).unwrap().load().unwrap())
        };
        // 1 Gb/s of 1500-byte packets for 20 s: 83,333 × 20, over the path and the host's
        // access port (its 1 Gb/s card): one and a half hops.
        let full = load("bbr", 1e-4);
        assert_eq!(full.sim_s, 20.0);
        assert!(
            (full.packet_hops / (1.5 * 1e9 / 12_000.0 * 20.0) - 1.0).abs() < 0.01,
            "{full:?}"
        );
        // Reno at 1e-4 over 180 ms for 588 s: Mathis's 122.5 packets per RTT (680 per second,
        // 400,000 in all) after a transient of a few losses' 10,000 packets each.
        let reno = load("reno", 1e-4);
        assert_eq!(reno.sim_s, 588.0);
        let steady = 1.2247 / 1e-4f64.sqrt() / 0.18 * 588.0;
        assert!(
            reno.packet_hops / 1.5 > steady + 1e4 && reno.packet_hops / 1.5 < steady + 1.2e5,
            "{reno:?} against {steady}"
        );
        assert_eq!(human_s(42.4), "42 s");
        assert_eq!(human_s(4.24), "4.2 s");
        assert_eq!(human_s(600.0), "10 min");
        assert_eq!(human_s(27.0 * 3600.0), "27.0 h");
        assert_eq!(human_s(3.0 * 86_400.0), "3.0 days");
        let total = Cost {
            sim_s: 21_897.0,
            packet_hops: 3.9e8,
        };
        let speed = Speed {
            packet_hops_per_cpu_s: 1.5e6,
        };
        assert_eq!(
            describe(&total, 144, &speed, 2),
            "cost: 144 runs, 21,897 simulated s; estimated CPU time 4 min (260 s), about 2 min \
             on this machine's 2 cores (at 1.50 M packet-hops per CPU second, measured now)"
        );
    }
}
