//! Running a plan's runs on this machine: all of them on every core (`longhaul sweep run`), or
//! one block of them for an array scheduler (`--index N --chunk K`, `slurm.rs`).
//!
//! Runs already finished (`runs/<key>.json` exists) are skipped, so a sweep that was killed,
//! or whose node died, is finished by running the same command again, and a sweep file that
//! grew runs only its new runs; a failed run records its error and is retried by that re-run. One run's failure, even a panic in the simulator, is
//! that run's result and never stops the others.
//!
//! Each run is single-threaded while there are more runs than cores; when there are fewer (the
//! tail of a sweep, or one `--index` on a node), a run takes two cores and the simulator splits
//! it (`longhaul_sim::run_on`; the result is the same bit for bit).

use crate::error::Result;
use crate::plan::{Plan, Run};
use crate::store::{RunFailure, RunInfo, RunRecord, SweepDir};
use longhaul_metrics::provenance::{Provenance, ScenarioFile};
use longhaul_metrics::summary::Summary;
use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// What runs a run: the simulator ([`Engine::SIM`]), or an engine another crate provides
/// (`longhaul_lab::sweep`'s, for `sweep run --engine lab`: real kernel stacks over the emulator).
#[derive(Clone, Copy, Debug)]
pub struct Engine {
    /// Its name, which the results directory records (`DIR/engine`): results of two engines
    /// never mix in one directory.
    pub name: &'static str,
    /// Runs one run from its scenario file's bytes (already checked against the plan's hash)
    /// on up to the given number of threads: its summary, or the error text.
    pub run: fn(&Run, &[u8], usize) -> std::result::Result<Summary, String>,
    /// Whether several runs may run at once (the lab's may not: its emulator and hosts take
    /// the machine).
    pub parallel: bool,
}

impl Engine {
    /// The simulator.
    pub const SIM: Engine = Engine {
        name: "sim",
        run: simulate,
        parallel: true,
    };
}

/// The simulator's run of `run` from its scenario's bytes.
fn simulate(run: &Run, bytes: &[u8], threads: usize) -> std::result::Result<Summary, String> {
    let checked = run.parse(bytes).map_err(|e| e.to_string())?;
    let o = longhaul_sim::run_on(&checked, threads, &mut |_| {}).map_err(|e| e.to_string())?;
    Ok(o.summary)
}

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// What runs the runs.
    pub engine: Engine,
    /// Runs at once (default: the machine's cores; 1 when the engine is not parallel).
    pub jobs: usize,
    /// Draw a progress bar with ETA on stderr (only where stderr is a terminal).
    pub progress: bool,
    /// Recorded in every result, with the run's scenario file and its hash added.
    pub provenance: Option<Provenance>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            engine: Engine::SIM,
            jobs: cores(),
            progress: false,
            provenance: None,
        }
    }
}

/// What a call did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunReport {
    /// Runs in the selection.
    pub selected: u64,
    /// Finished before this call: skipped.
    pub skipped: u64,
    /// Run now and finished.
    pub ran: u64,
    /// Run now and failed: index and error.
    pub failed: Vec<(u64, String)>,
}

impl std::fmt::Display for RunReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} run{}: {} finished before, {} ran now, {} failed",
            self.selected,
            if self.selected == 1 { "" } else { "s" },
            self.skipped,
            self.ran,
            self.failed.len()
        )
    }
}

/// The machine's cores.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Block `block` of size `chunk`: runs `block·chunk` up to `(block+1)·chunk − 1`, cut at the
/// plan's end. An array scheduler's task id is the block (`--index N --chunk K`).
pub fn block(plan: &Plan, block: u64, chunk: u64) -> Result<Range<u64>> {
    let chunk = chunk.max(1);
    let start = block.saturating_mul(chunk);
    // An out-of-range start is reported as that run's index.
    plan.run(start)?;
    Ok(start..start.saturating_add(chunk).min(plan.runs))
}

/// Run one run with `engine` and return its record, with `provenance` and the scenario file it
/// read (the bytes it ran, refused if they are not those the plan recorded); errors and panics
/// become the run's error text.
pub fn execute(
    run: &Run,
    engine: &Engine,
    threads: usize,
    provenance: Option<&Provenance>,
) -> std::result::Result<RunRecord, String> {
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let bytes = run.read_scenario().map_err(|e| e.to_string())?;
        let summary = (engine.run)(run, &bytes, threads)?;
        Ok::<_, String>((summary, bytes))
    }));
    match outcome {
        Ok(Ok((summary, bytes))) => {
            let mut summary = summary;
            if let Some(p) = provenance {
                let file =
                    ScenarioFile::of_content(&run.scenario_path.display().to_string(), &bytes);
                summary.provenance = Some(p.clone().with_scenario(file));
            }
            Ok(RunRecord {
                sweep: RunInfo::of(run),
                summary,
            })
        }
        Ok(Err(e)) => Err(e),
        Err(panic) => Err(format!(
            "the {} engine panicked: {}",
            engine.name,
            panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)")
        )),
    }
}

/// Run `run` and record a failure; the record of a success is the caller's to write.
fn run_one(
    run: &Run,
    dir: &SweepDir,
    threads: usize,
    opts: &RunOptions,
) -> std::result::Result<RunRecord, String> {
    execute(run, &opts.engine, threads, opts.provenance.as_ref()).map_err(|error| {
        let failure = RunFailure {
            sweep: RunInfo::of(run),
            error,
        };
        match dir.write_failure(&failure) {
            Ok(()) => failure.error,
            Err(w) => format!(
                "{} (and the error could not be recorded: {w})",
                failure.error
            ),
        }
    })
}

/// Run every unfinished run of `indices`, `opts.jobs` at a time (one at a time for an engine
/// that is not parallel), writing each result (or error) into `dir` as it finishes. A
/// directory holding another engine's results is refused before anything runs.
pub fn run_indices(
    plan: &Plan,
    dir: &SweepDir,
    indices: impl IntoIterator<Item = u64>,
    opts: &RunOptions,
) -> Result<RunReport> {
    dir.claim_engine(opts.engine.name)?;
    let mut report = RunReport::default();
    // Indices, not runs: a run's labels and overrides are made again when it starts.
    let mut todo: Vec<u64> = Vec::new();
    for i in indices {
        report.selected += 1;
        if !dir.is_done(&plan.run(i)?) {
            todo.push(i);
        }
    }
    report.skipped = report.selected - todo.len() as u64;
    if todo.is_empty() {
        return Ok(report);
    }
    let jobs = if opts.engine.parallel { opts.jobs } else { 1 };
    let jobs = jobs.max(1).min(todo.len());
    let bar = if opts.progress {
        indicatif::ProgressBar::new(todo.len() as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} runs  {msg}  ETA {eta}",
        )
        .expect("a valid template")
        .progress_chars("#>-"),
    );
    if report.skipped > 0 {
        bar.println(format!("{} runs finished before: skipped", report.skipped));
    }

    let next = AtomicUsize::new(0);
    let ran = AtomicUsize::new(0);
    let failed = Mutex::new(Vec::new());
    let fatal = Mutex::new(None);
    let total_jobs = if opts.engine.parallel {
        opts.jobs.max(1)
    } else {
        1
    };
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&index) = todo.get(k) else { break };
                // Two cores for a run when fewer runs remain than cores.
                let remaining = todo.len() - k;
                let threads = if total_jobs >= 2 * remaining.min(jobs) {
                    2
                } else {
                    1
                };
                let outcome = plan
                    .run(index)
                    .map_err(|e| e.to_string())
                    .and_then(|run| run_one(&run, dir, threads, opts));
                match outcome {
                    Ok(record) => match dir.write_result(&record) {
                        Ok(()) => {
                            ran.fetch_add(1, Ordering::Relaxed);
                        }
                        // The disk refuses results: stop taking new runs.
                        Err(e) => {
                            *fatal.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                            next.store(todo.len(), Ordering::Relaxed);
                        }
                    },
                    Err(e) => {
                        bar.println(format!("run {index} failed: {e}"));
                        let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
                        f.push((index, e));
                        bar.set_message(format!("{} failed", f.len()));
                    }
                }
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    if let Some(e) = fatal.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    report.ran = ran.into_inner() as u64;
    report.failed = failed.into_inner().unwrap_or_else(|p| p.into_inner());
    report.failed.sort();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::fixture;

    #[test]
    fn runs_skip_finished_and_record_failures_without_stopping() {
        // A flow must start before the run ends: a start of 1.5 s with a duration of 1 s fails,
        // but each value alone is valid, so the plan accepts it and only those runs fail.
        let f = fixture(
            "runner",
            r#"
            scenario = "s.toml"
            [axes]
            "flows.0.start" = ["0s", "1.5s"]
            duration = ["2s", "1s"]
            seed = [1, 2]
            "#,
        );
        let plan = Plan::load(&f, false).unwrap();
        assert_eq!(plan.runs, 8);
        let out = f.parent().unwrap().join("out");
        let dir = SweepDir::create(&out, &plan.stamp, None).unwrap();
        let build = longhaul_metrics::provenance::Build {
            version: "0.0.1",
            commit: "feedface",
        };
        let opts = RunOptions {
            jobs: 2,
            provenance: Some(Provenance::capture(build)),
            ..Default::default()
        };
        // Block 1 of 3: runs 3, 4, 5.
        let r = run_indices(&plan, &dir, block(&plan, 1, 3).unwrap(), &opts).unwrap();
        // Each result records the build and the scenario file it ran, hashed.
        let run = plan.run(3).unwrap();
        let text = std::fs::read_to_string(dir.result_path(&run.key())).unwrap();
        let record: serde_json::Value = serde_json::from_str(&text).unwrap();
        let p = &record["provenance"];
        assert_eq!(p["commit"], "feedface");
        assert_eq!(
            p["scenario"]["sha256"],
            ScenarioFile::read(&run.scenario_path).unwrap().sha256
        );
        // Index = start·4 + duration·2 + seed: runs 3-5 are valid combinations.
        assert_eq!((r.selected, r.skipped, r.ran, r.failed.len()), (3, 0, 3, 0));
        let r = run_indices(&plan, &dir, 0..plan.runs, &opts).unwrap();
        assert_eq!((r.selected, r.skipped), (8, 3));
        let failed: Vec<u64> = r.failed.iter().map(|f| f.0).collect();
        assert_eq!(failed, [6, 7]);
        assert_eq!(r.ran, 3);
        assert!(
            r.failed[0]
                .1
                .contains("field `flows[0].start`: starts at 1.5 s, not before its stop at 1 s"),
            "{}",
            r.failed[0].1
        );
        let rec = dir.read_failure(&plan.run(6).unwrap()).unwrap();
        assert_eq!(rec.sweep.sets.last().unwrap(), "seed=1");
        for i in 0..6 {
            let rec = dir.read_result(&plan.run(i).unwrap()).unwrap().unwrap();
            assert_eq!(rec.sweep.index, i);
            assert!(rec.summary.flows[0].throughput_bps > 1e6);
        }
        // A re-run skips the finished and retries only the failed.
        let r = run_indices(&plan, &dir, 0..plan.runs, &opts).unwrap();
        assert_eq!((r.skipped, r.ran, r.failed.len()), (6, 0, 2));
        assert_eq!(
            r.to_string(),
            "8 runs: 6 finished before, 0 ran now, 2 failed"
        );
        let e = block(&plan, 3, 3).unwrap_err().to_string();
        assert_eq!(e, "run 9 is beyond the plan's 8 runs (indices 0 to 7)");
        assert_eq!(block(&plan, 2, 3).unwrap(), 6..8);
    }

    #[test]
    fn another_engine_runs_one_at_a_time_in_a_directory_of_its_own() {
        use std::sync::atomic::AtomicUsize;
        static RUNNING: AtomicUsize = AtomicUsize::new(0);
        static MOST: AtomicUsize = AtomicUsize::new(0);
        // The simulator's summary, relabelled as the lab's, with a count of runs at once.
        fn serial(run: &Run, bytes: &[u8], threads: usize) -> std::result::Result<Summary, String> {
            let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
            MOST.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(20));
            let mut s = simulate(run, bytes, threads)?;
            s.mode = longhaul_metrics::summary::Mode::Lab;
            RUNNING.fetch_sub(1, Ordering::SeqCst);
            Ok(s)
        }
        let engine = Engine {
            name: "serial",
            run: serial,
            parallel: false,
        };
        let f = fixture(
            "engine",
            "scenario = \"s.toml\"\n[set]\nduration = \"1s\"\n[axes]\nseed = \"1..4\"\n",
        );
        let plan = Plan::load(&f, false).unwrap();
        let out = f.parent().unwrap().join("out");
        let dir = SweepDir::create(&out, &plan.stamp, None).unwrap();
        let opts = RunOptions {
            engine,
            jobs: 4,
            ..Default::default()
        };
        let r = run_indices(&plan, &dir, 0..4, &opts).unwrap();
        assert_eq!((r.ran, r.failed.len()), (4, 0));
        assert_eq!(MOST.load(Ordering::SeqCst), 1);
        let rec = dir.read_result(&plan.run(3).unwrap()).unwrap().unwrap();
        assert_eq!(rec.summary.mode, longhaul_metrics::summary::Mode::Lab);
        assert_eq!(rec.summary.seed, 4);
        assert_eq!(
            std::fs::read_to_string(out.join("engine")).unwrap(),
            "serial\n"
        );
        // The simulator may not add its results to this directory, nor the reverse.
        let e = run_indices(&plan, &dir, 0..4, &RunOptions::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!(
                "{} holds results of the `serial` engine, and this sweep runs with `sim`: \
                 results of two engines must not mix; use another --out directory",
                out.display()
            )
        );
        std::fs::remove_file(out.join("engine")).unwrap();
        // Results without a record of their engine are the simulator's.
        let e = run_indices(&plan, &dir, 0..4, &opts)
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds results of the `sim` engine"), "{e}");
    }

    #[test]
    fn a_scenario_edited_after_planning_fails_its_runs_and_stores_nothing() {
        let f = fixture(
            "edited",
            "scenario = \"s.toml\"\n[set]\nduration = \"1s\"\n[axes]\nseed = [1, 2]\n",
        );
        let plan = Plan::load(&f, false).unwrap();
        let out = f.parent().unwrap().join("out");
        let dir = SweepDir::create(&out, &plan.stamp, None).unwrap();
        let s = f.parent().unwrap().join("s.toml");
        let text = std::fs::read_to_string(&s).unwrap();
        std::fs::write(&s, text.replace("60s", "30s")).unwrap();
        let opts = RunOptions {
            jobs: 1,
            ..Default::default()
        };
        let r = run_indices(&plan, &dir, 0..2, &opts).unwrap();
        assert_eq!((r.ran, r.failed.len()), (0, 2));
        assert!(
            r.failed[0].1.contains("scenario s.toml (")
                && r.failed[0]
                    .1
                    .contains(") has changed since the sweep was planned (SHA-256 "),
            "{}",
            r.failed[0].1
        );
        assert!(dir.finished_keys().unwrap().is_empty());
    }

    #[test]
    fn results_are_the_simulators_summary_whatever_the_thread_count() {
        let f = fixture(
            "execute",
            "scenario = \"s.toml\"\n[set]\nduration = \"5s\"\n[axes]\nseed = [7]\n",
        );
        let plan = Plan::load(&f, false).unwrap();
        let run = plan.run(0).unwrap();
        let one = execute(&run, &Engine::SIM, 1, None).unwrap();
        let two = execute(&run, &Engine::SIM, 2, None).unwrap();
        assert_eq!(one, two);
        let direct = longhaul_sim::run(&run.load().unwrap(), &mut |_| {}).unwrap();
        assert_eq!(one.summary, direct.summary);
        assert_eq!(one.summary.seed, 7);
    }
}
