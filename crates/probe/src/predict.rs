//! `longhaul probe --simulate`: every congestion controller on the measured path, in the
//! simulator, and which to use.
//!
//! The path is the scenario [`crate::scenario`] writes from the report (one link of the
//! measured capacity, half the base RTT each way, a drop-tail queue of the measured effective
//! size, the measured random loss) with one flow on longhaul's own transport (`proto`, the
//! scenario format's default). Each controller of the registry (`longhaul_cc::algorithms`, as
//! `longhaul cc list` shows them) runs it alone from a cold start, for [`Options::duration`] of
//! simulated time, seed 1; the runs share nothing, so they go in parallel, one thread each, on
//! [`Options::threads`] threads.
//!
//! Per controller the table gives the flow's payload throughput (b/s, and its share of the
//! measured capacity: proto's 57 bytes of headers per 1500-byte packet keep the share below
//! 0.962), the bottleneck queue's sojourn time (mean, median, 99th percentile) and the share of
//! the flow's packets lost (random loss and queue drops).
//!
//! ## The choice ([`Limits`], [`choose`])
//!
//! Among the controllers whose loss is at most the path's random loss plus
//! [`Limits::extra_loss`] (1 % of packets) and whose mean queueing delay is at most
//! [`Limits::queue_rtts`] (half) of the base RTT, or [`Limits::queue_floor_ms`] (5 ms) where
//! that is more, the one with the highest throughput; throughputs within [`Limits::tie`] (2 %)
//! of the highest count as equal and the lowest mean queue among them wins. Why: throughput is
//! what a bulk transfer is for, but not bought with the path's other users: the random loss is
//! the path's own and every sender sees it, while loss beyond it is the controller overflowing
//! the buffer (retransmissions that waste capacity and drops that other flows take); and a
//! standing queue longer than half a round trip adds that much delay to everyone sharing the
//! bottleneck. The limit is on the mean queue, not the p99: a run starts cold, and the one
//! slow-start overshoot that fills the buffer is more than 1 % of a short run's packets on a
//! path with a buffer of a BDP, so the p99 of nearly every controller is the full buffer there
//! (the table shows it). The floor keeps a few milliseconds of queue, which any sender that
//! fills the link builds, from ruling out every controller on a short path. When no controller
//! stays within both limits, the one with the least loss is named, and the table says so.

use crate::report::Report;
use longhaul_perf::tune::{self, HostRoots, PathSpec, TuneReport};
use longhaul_sim::{Checked, Outcome, Scenario, SimError};
use serde::Serialize;
use std::time::{Duration, Instant};

/// How long each controller runs (simulated time) at most.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(30);
/// The packets a run is given at most: 15 s of 1500-byte packets at 1 Gb/s (150 round trips
/// of a 100 ms path; the eight runs take about 4 s of CPU there). A faster path runs for a
/// shorter time, never less than [`MIN_ROUND_TRIPS`].
pub const PACKET_BUDGET: f64 = 1.25e6;
/// The fewest round trips a run lasts, whatever the budget.
pub const MIN_ROUND_TRIPS: f64 = 100.0;

/// What makes a controller acceptable, and when two throughputs count as equal.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Limits {
    /// Loss allowed beyond the path's random loss, a fraction of the flow's packets.
    pub extra_loss: f64,
    /// The longest mean queueing delay allowed, in base round trips.
    pub queue_rtts: f64,
    /// ... but never less than this, ms.
    pub queue_floor_ms: f64,
    /// Throughputs within this fraction of the highest count as equal.
    pub tie: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            extra_loss: 0.01,
            queue_rtts: 0.5,
            queue_floor_ms: 5.0,
            tie: 0.02,
        }
    }
}

/// How the prediction runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Simulated time per controller at most (less on a fast path: [`PACKET_BUDGET`]).
    pub duration: Duration,
    /// Threads the runs share.
    pub threads: usize,
    /// The choice's limits.
    pub limits: Limits,
    /// Where to read the host's settings for `longhaul tune`'s table (`None`: no table).
    pub host: Option<HostRoots>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            duration: DEFAULT_DURATION,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            limits: Limits::default(),
            host: Some(HostRoots::default()),
        }
    }
}

/// One controller on the simulated path.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The controller (`longhaul cc list`).
    pub cc: String,
    /// Payload throughput, b/s.
    pub throughput_bps: f64,
    /// Throughput ÷ the measured capacity.
    pub share: f64,
    /// The bottleneck queue's sojourn time: mean, ms.
    pub queue_mean_ms: f64,
    /// ... median, ms.
    pub queue_p50_ms: f64,
    /// ... 99th percentile, ms.
    pub queue_p99_ms: f64,
    /// The flow's packets lost ÷ sent.
    pub loss: f64,
    /// Whether it stays within the limits of the choice.
    pub acceptable: bool,
}

/// The prediction: the table, the choice and the host's settings for the path.
#[derive(Clone, Debug, Serialize)]
pub struct Prediction {
    /// The measured capacity, b/s.
    pub capacity_bps: f64,
    /// The base RTT, s.
    pub rtt_s: f64,
    /// The bottleneck's buffer, bytes.
    pub queue_bytes: f64,
    /// The random loss on the path, fraction.
    pub random_loss: f64,
    /// The transport the flows run (`proto`, longhaul's own).
    pub transport: &'static str,
    /// Simulated time per controller, s.
    pub simulated_s: f64,
    /// Wall-clock time all the runs took, s.
    pub wall_s: f64,
    /// The limits of the choice.
    pub limits: Limits,
    /// The largest acceptable mean queueing delay on this path, ms.
    pub queue_limit_ms: f64,
    /// The largest acceptable loss on this path, fraction.
    pub loss_limit: f64,
    /// One row per controller, in `longhaul cc list`'s order.
    pub rows: Vec<Row>,
    /// The controller to use.
    pub best: String,
    /// Whether `best` stays within the limits (else it is the one with the least loss).
    pub best_acceptable: bool,
    /// `longhaul tune`'s table for this path on this host (`None` when not asked for or
    /// unreadable; `tune_error` says why).
    pub tune: Option<TuneReport>,
    /// Why the host's settings could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tune_error: Option<String>,
}

/// Why there is no prediction.
#[derive(Debug, thiserror::Error)]
pub enum PredictError {
    /// The path could not be written as a scenario.
    #[error(transparent)]
    Scenario(#[from] crate::scenario::ScenarioError),
    /// The scenario with a controller set was refused.
    #[error("the scenario for {cc}: {source}")]
    Check {
        /// The controller.
        cc: String,
        /// Why.
        source: longhaul_sim::ScenarioError,
    },
    /// A simulation failed.
    #[error("simulating {cc}: {source}")]
    Run {
        /// The controller.
        cc: String,
        /// Why.
        source: SimError,
    },
}

/// Simulated seconds for a path of `rate_bps` and `rtt_s`: `max_s`, less where the path would
/// carry more than [`PACKET_BUDGET`] packets of `mtu` bytes in it, but at least
/// [`MIN_ROUND_TRIPS`] round trips.
pub fn simulated_s(rate_bps: f64, rtt_s: f64, mtu: u32, max_s: f64) -> f64 {
    let budget_s = PACKET_BUDGET * f64::from(mtu) * 8.0 / rate_bps;
    max_s.min(budget_s).max(MIN_ROUND_TRIPS * rtt_s)
}

/// Runs every controller on the path `report` measured and chooses one.
pub fn predict(report: &Report, opts: &Options) -> Result<Prediction, PredictError> {
    let name = "probed-path";
    let text = crate::scenario::scenario_toml(report, name, 1.0)?;
    let capacity = report.capacity.as_ref().map_or(0.0, |e| e.value);
    let rtt_s = report.rtt.as_ref().map_or(0.0, |e| e.value);
    let mtu = report.mtu();
    let secs = simulated_s(capacity, rtt_s, mtu, opts.duration.as_secs_f64());
    let names: Vec<&str> = longhaul_cc::algorithms().iter().map(|a| a.name).collect();
    let checked = names
        .iter()
        .map(|cc| {
            let sets = [format!("flows.0.cc={cc}"), format!("duration={secs}s")];
            Scenario::parse(&text, name, name, &sets).map_err(|source| PredictError::Check {
                cc: cc.to_string(),
                source,
            })
        })
        .collect::<Result<Vec<Checked>, _>>()?;
    let start = Instant::now();
    let outcomes = run_all(&checked, opts.threads);
    let wall_s = start.elapsed().as_secs_f64();
    let mut rows = Vec::with_capacity(names.len());
    for (cc, outcome) in names.iter().zip(outcomes) {
        let outcome = outcome.map_err(|source| PredictError::Run {
            cc: cc.to_string(),
            source,
        })?;
        rows.push(row(cc, &outcome, capacity));
    }
    let random_loss = report.loss.as_ref().map_or(0.0, |e| e.value);
    let limits = opts.limits;
    let queue_limit_ms = (limits.queue_rtts * rtt_s * 1e3).max(limits.queue_floor_ms);
    let loss_limit = random_loss + limits.extra_loss;
    for r in &mut rows {
        r.acceptable = r.loss <= loss_limit && r.queue_mean_ms <= queue_limit_ms;
    }
    let best = choose(&rows, limits.tie);
    let (tune, tune_error) = match &opts.host {
        None => (None, None),
        Some(roots) => {
            let path = PathSpec {
                rate_bps: capacity,
                rtt: Duration::from_secs_f64(rtt_s),
                mtu,
            };
            match tune::check_host(&path, roots, None) {
                Ok(t) => (Some(t), None),
                Err(e) => (None, Some(e.to_string())),
            }
        }
    };
    Ok(Prediction {
        capacity_bps: capacity,
        rtt_s,
        queue_bytes: report.queue.as_ref().map_or(0.0, |e| e.value),
        random_loss,
        transport: "proto",
        simulated_s: secs,
        wall_s,
        limits,
        queue_limit_ms,
        loss_limit,
        best: rows[best].cc.clone(),
        best_acceptable: rows[best].acceptable,
        rows,
        tune,
        tune_error,
    })
}

/// The index of the chosen row: among the acceptable rows, the highest throughput, where
/// throughputs within `tie` of it count as equal and the lowest mean queue among those wins;
/// with no acceptable row, the least loss. `rows` must not be empty.
pub fn choose(rows: &[Row], tie: f64) -> usize {
    let by = |a: f64, b: f64| a.total_cmp(&b);
    let ok: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].acceptable).collect();
    if ok.is_empty() {
        return (0..rows.len())
            .min_by(|&a, &b| by(rows[a].loss, rows[b].loss))
            .expect("a row per controller");
    }
    let top = ok
        .iter()
        .map(|&i| rows[i].throughput_bps)
        .fold(f64::MIN, f64::max);
    ok.into_iter()
        .filter(|&i| rows[i].throughput_bps >= top * (1.0 - tie))
        .min_by(|&a, &b| by(rows[a].queue_mean_ms, rows[b].queue_mean_ms))
        .expect("the highest is within its own tie")
}

/// Runs each of `checked` on one thread, `threads` at a time; the outcomes in order.
fn run_all(checked: &[Checked], threads: usize) -> Vec<Result<Outcome, SimError>> {
    let workers = threads.clamp(1, checked.len().max(1));
    let mut out: Vec<(usize, Result<Outcome, SimError>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                s.spawn(move || {
                    (w..checked.len())
                        .step_by(workers)
                        .map(|i| (i, longhaul_sim::run_on(&checked[i], 1, &mut |_| {})))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a simulation thread panicked"))
            .collect()
    });
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, o)| o).collect()
}

/// The row of controller `cc` from its run's outcome.
fn row(cc: &str, outcome: &Outcome, capacity: f64) -> Row {
    let flow = &outcome.summary.flows[0];
    let q = &outcome.summary.links[0].queue_delay_ms;
    Row {
        cc: cc.to_string(),
        throughput_bps: flow.throughput_bps,
        share: flow.throughput_bps / capacity,
        queue_mean_ms: q.mean,
        queue_p50_ms: q.p50.unwrap_or(f64::NAN),
        queue_p99_ms: q.p99,
        loss: flow.loss_rate,
        acceptable: false,
    }
}

impl Prediction {
    /// The table for people, the rule and the choice; `longhaul tune`'s table follows (its
    /// `Display`) when there is one.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![
            format!(
                "simulated: each controller alone on {:.2} Mb/s × {:.1} ms, {} buffer, {:.3} % \
                 random loss; {:.1} s of simulated time each (longhaul's transport, seed 1), \
                 {:.1} s of wall time in all",
                self.capacity_bps / 1e6,
                self.rtt_s * 1e3,
                crate::report::bytes(self.queue_bytes),
                self.random_loss * 100.0,
                self.simulated_s,
                self.wall_s
            ),
            format!(
                "  {:<10} {:>12} {:>7} {:>10} {:>10} {:>10} {:>8}",
                "cc", "Mb/s", "share", "mean ms", "p50 ms", "p99 ms", "loss %"
            ),
        ];
        for r in &self.rows {
            out.push(format!(
                "  {:<10} {:>12.2} {:>6.1}% {:>10.2} {:>10.2} {:>10.2} {:>8.3}{}",
                r.cc,
                r.throughput_bps / 1e6,
                r.share * 100.0,
                r.queue_mean_ms,
                r.queue_p50_ms,
                r.queue_p99_ms,
                r.loss * 100.0,
                if r.acceptable { "" } else { "  over a limit" }
            ));
        }
        out.push(format!(
            "rule: the highest throughput among those losing at most {:.3} % of packets (random \
             loss + {:.1} %) with a mean queue of at most {:.1} ms ({:.0} % of the RTT, {:.0} ms \
             at least); within {:.0} % of it, the lowest mean queue",
            self.loss_limit * 100.0,
            self.limits.extra_loss * 100.0,
            self.queue_limit_ms,
            self.limits.queue_rtts * 100.0,
            self.limits.queue_floor_ms,
            self.limits.tie * 100.0
        ));
        out.push(if self.best_acceptable {
            format!("best: {}", self.best)
        } else {
            format!(
                "best: {} (none stays within the limits: the least loss)",
                self.best
            )
        });
        if let Some(e) = &self.tune_error {
            out.push(format!("host settings: not read ({e})"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::given as e;

    /// A report of a path of `rate` b/s, `rtt` s, a buffer of `bdps` bandwidth-delay
    /// products and random loss `loss`.
    fn report(rate: f64, rtt: f64, bdps: f64, loss: f64) -> Report {
        let mut r = Report::new("192.0.2.1:5301".parse().unwrap(), 1472);
        r.rtt = e(rtt, "s");
        r.capacity = e(rate, "bit/s");
        r.queue = e(bdps * rate * rtt / 8.0, "bytes");
        r.loss = e(loss, "1");
        r
    }

    /// Options without the host's settings, `secs` of simulated time at most.
    fn options(secs: u64) -> Options {
        Options {
            duration: Duration::from_secs(secs),
            host: None,
            ..Options::default()
        }
    }

    /// Every controller has its row, in the registry's order, and every number is one a
    /// single flow on the path can have.
    fn check_physics(p: &Prediction) {
        let names: Vec<&str> = longhaul_cc::algorithms().iter().map(|a| a.name).collect();
        let rows: Vec<&str> = p.rows.iter().map(|r| r.cc.as_str()).collect();
        assert_eq!(rows, names);
        for r in &p.rows {
            assert!(r.throughput_bps > 0.0, "{r:?}");
            assert!(r.throughput_bps <= p.capacity_bps, "{r:?}");
            assert!(r.share > 0.0 && r.share <= 1.0, "{r:?}");
            assert!(r.queue_mean_ms >= 0.0, "{r:?}");
            assert!(r.queue_p50_ms <= r.queue_p99_ms, "{r:?}");
            // A queue of `queue_bytes` drains in this long at the capacity (and one packet
            // more is being sent).
            let full_ms = (p.queue_bytes + 1500.0) * 8.0 / p.capacity_bps * 1e3;
            assert!(r.queue_p99_ms <= full_ms * 1.01, "{r:?} {full_ms}");
            assert!((0.0..=1.0).contains(&r.loss), "{r:?}");
        }
    }

    /// A row as the rule reads it.
    fn row(cc: &str, mbps: f64, queue_ms: f64, acceptable: bool) -> Row {
        Row {
            cc: cc.into(),
            throughput_bps: mbps * 1e6,
            share: mbps / 100.0,
            queue_mean_ms: queue_ms,
            queue_p50_ms: queue_ms,
            queue_p99_ms: queue_ms,
            loss: if acceptable { 0.0 } else { 0.05 },
            acceptable,
        }
    }

    #[test]
    fn the_rule_takes_the_fastest_acceptable_and_the_lower_queue_in_a_tie() {
        let rows = [
            row("a", 95.0, 40.0, false),
            row("b", 80.0, 1.0, true),
            row("c", 90.0, 9.0, true),
            row("d", 89.0, 3.0, true),
        ];
        // `a` is faster but over a limit; `c` and `d` tie within 2 %, `d` queues less.
        assert_eq!(rows[choose(&rows, 0.02)].cc, "d");
        // With no tie, the fastest acceptable one.
        assert_eq!(rows[choose(&rows, 0.0)].cc, "c");
        // None acceptable: the least loss.
        let mut none = rows.clone();
        for (r, loss) in none.iter_mut().zip([0.02, 0.01, 0.03, 0.04]) {
            (r.acceptable, r.loss) = (false, loss);
        }
        assert_eq!(none[choose(&none, 0.02)].cc, "b");
    }

    #[test]
    fn on_a_lossy_long_path_a_loss_based_controller_is_not_chosen() {
        // 50 Mb/s × 80 ms (333 packets in flight), one BDP of buffer, 0.2 % random loss:
        // Reno's window averages 1.22/√p ≈ 27 packets here (Mathis et al.), a tenth of the
        // path, and CUBIC, HighSpeed and Scalable, which also cut at every loss, fare little
        // better; the delay- and rate-based controllers do not cut on random loss.
        let r = report(50e6, 0.08, 1.0, 0.002);
        let p = predict(&r, &options(20)).unwrap();
        p.lines().iter().for_each(|l| println!("{l}"));
        check_physics(&p);
        assert_eq!(p.simulated_s, 20.0);
        let best = p.rows.iter().find(|r| r.cc == p.best).unwrap();
        assert!(p.best_acceptable && best.acceptable, "{:#?}", p.rows);
        assert!(
            !["reno", "cubic", "highspeed", "scalable"].contains(&p.best.as_str()),
            "{:#?}",
            p.rows
        );
        let reno = p.rows.iter().find(|r| r.cc == "reno").unwrap();
        assert!(
            best.throughput_bps > 2.0 * reno.throughput_bps,
            "{:#?}",
            p.rows
        );
        // What the rule says: no acceptable controller is faster beyond the tie, and none in
        // the tie queues less.
        for r in p.rows.iter().filter(|r| r.acceptable) {
            assert!(
                r.throughput_bps <= best.throughput_bps / (1.0 - p.limits.tie),
                "{r:?} beats {best:?}"
            );
            if r.throughput_bps >= best.throughput_bps * (1.0 - p.limits.tie) {
                assert!(r.queue_mean_ms >= best.queue_mean_ms, "{r:?} vs {best:?}");
            }
        }
        // Acceptable means within the limits stated.
        for r in &p.rows {
            let within = r.loss <= 0.002 + 0.01 && r.queue_mean_ms <= 40.0;
            assert_eq!(r.acceptable, within, "{r:?}");
        }
        assert!(p.lines().iter().any(|l| l == &format!("best: {}", p.best)));
    }

    #[test]
    fn the_prediction_and_the_host_settings_go_into_the_json_report() {
        // A short clean path; the host's settings read from an empty tree.
        let mut r = report(20e6, 0.02, 0.5, 0.0);
        let dir = std::env::temp_dir().join(format!("longhaul-predict-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let opts = Options {
            host: Some(HostRoots {
                proc_sys: dir.join("absent"),
                sys_class_net: dir.clone(),
            }),
            ..options(5)
        };
        let p = predict(&r, &opts).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        check_physics(&p);
        // The budget allows 75 s at 20 Mb/s and 100 round trips are 2 s: the 5 s asked for.
        assert_eq!(p.simulated_s, 5.0);
        let tune = p.tune.as_ref().expect("the host's settings");
        assert_eq!(tune.path.rate_bps, 20e6);
        assert_eq!(tune.path.mtu, 1500);
        r.prediction = Some(p);
        let json = serde_json::to_value(&r).unwrap();
        let pred = &json["prediction"];
        assert_eq!(pred["rows"].as_array().unwrap().len(), 8);
        assert!(pred["best"].is_string());
        assert_eq!(pred["tune"]["path"]["rtt_s"], 0.02);
        assert_eq!(pred["tune"]["path"]["rate_bps"], 20e6);
        // 2 × BDP (50 kB) rounded up to a power of two, as `longhaul tune` recommends.
        let rmem = &pred["tune"]["checks"][0];
        assert_eq!(rmem["name"], "net.core.rmem_max");
        assert_eq!(rmem["recommended"], "131072");
        assert_eq!(rmem["status"], "missing");
    }

    #[test]
    fn a_fast_path_runs_for_its_packet_budget_and_at_least_its_round_trips() {
        // 1 Gb/s: 30 s at most, 15 s of budget.
        assert_eq!(simulated_s(1e9, 0.1, 1500, 30.0), 15.0);
        // 10 Gb/s × 100 ms: the budget is 1.5 s, but 100 round trips are 10 s.
        assert!((simulated_s(10e9, 0.1, 1500, 30.0) - 10.0).abs() < 1e-9);
        // A slow path: the duration asked for.
        assert_eq!(simulated_s(10e6, 0.05, 1500, 30.0), 30.0);
    }

    #[test]
    #[ignore = "a measurement: cargo test --profile ci -p longhaul-probe --lib -- --ignored --nocapture"]
    fn cost_at_1_gbit_100_ms() {
        let r = report(1e9, 0.1, 1.0, 0.0);
        let t = Instant::now();
        let p = predict(&r, &options(30)).unwrap();
        p.lines().iter().for_each(|l| println!("{l}"));
        println!("{:.2} s wall", t.elapsed().as_secs_f64());
    }
}
