//! What an experiment is (its runs and its claims), how long it runs, and the runner.

use crate::claim::short;
use crate::scenarios::builtin;
use longhaul_metrics::summary::{Claim, Summary};
use longhaul_sim::{Outcome, Progress, ScenarioError, SimError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use thiserror::Error;

/// How long experiments run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// The papers' durations (`--full`); otherwise the short default durations.
    pub full: bool,
    /// Multiplies every default duration (1 for `longhaul reproduce`; tests use less). Ignored
    /// with `full`.
    pub time_scale: f64,
}

impl Plan {
    /// The newcomer's run: a few minutes for all experiments.
    pub const DEFAULT: Plan = Plan {
        full: false,
        time_scale: 1.0,
    };
    /// The papers' durations.
    pub const FULL: Plan = Plan {
        full: true,
        time_scale: 1.0,
    };

    /// A run's duration in seconds: `full` with `--full`, else `default` × `time_scale`.
    pub fn secs(&self, default: f64, full: f64) -> f64 {
        if self.full {
            full
        } else {
            default * self.time_scale
        }
    }
}

/// One simulation of an experiment: a built-in scenario with overrides.
#[derive(Clone, Debug)]
pub struct Run {
    /// Short name within the experiment ("fast-1flow").
    pub label: String,
    /// The built-in scenario (`scenarios/<name>.toml`).
    pub scenario: &'static str,
    /// `key=value` overrides, as `longhaul sim --set` takes them.
    pub overrides: Vec<String>,
}

impl Run {
    /// A run of built-in scenario `scenario`, named `label`, without overrides.
    pub fn new(label: impl Into<String>, scenario: &'static str) -> Run {
        Run {
            label: label.into(),
            scenario,
            overrides: Vec::new(),
        }
    }

    /// Add a `key=value` override.
    pub fn set(mut self, key: &str, value: impl std::fmt::Display) -> Run {
        self.overrides.push(format!("{key}={value}"));
        self
    }

    /// Set the duration in seconds.
    pub fn secs(self, secs: f64) -> Run {
        self.set(
            "duration",
            format!("\"{}ms\"", (secs * 1000.0).round() as u64),
        )
    }

    /// The command that repeats this run by hand.
    pub fn command(&self) -> String {
        let mut cmd = format!("longhaul sim scenarios/{}.toml", self.scenario);
        for o in &self.overrides {
            cmd.push_str(&format!(" --set '{o}'"));
        }
        cmd
    }
}

/// Prints what an experiment shows beside its claims (a table of every run, a sweep of an
/// assumption), from the plan and the runs' summaries.
pub type NotesFn = fn(&Plan, &[Summary]) -> String;

/// Draws an experiment's own HTML page from its results.
pub type PageFn = fn(&ExperimentResult) -> Result<String, longhaul_metrics::MetricsError>;

/// A seed experiment: the runs it needs and the claims it checks on their results.
pub struct Experiment {
    /// The name `longhaul reproduce NAME` takes.
    pub name: &'static str,
    /// One line for `--list`.
    pub title: &'static str,
    /// The seed file(s) and figure/table.
    pub source: &'static str,
    /// What the default (short) run changes from the paper's, one line for `--list`.
    pub shortened: &'static str,
    /// The runs, in order, for a plan.
    pub runs: fn(&Plan) -> Vec<Run>,
    /// The claims, given the runs' summaries in the order `runs` returned them.
    pub claims: fn(&Plan, &[Summary]) -> Vec<Claim>,
    /// Printed after the claims table, and kept in the first summary's `meta.notes`.
    pub notes: Option<NotesFn>,
    /// An HTML page of the whole experiment for `--report` (`<name>.html`), beside the runs'.
    pub page: Option<PageFn>,
}

/// An experiment's results.
#[derive(Clone, Debug)]
pub struct ExperimentResult {
    /// The experiment's name.
    pub name: &'static str,
    /// Its one-line title.
    pub title: &'static str,
    /// The seed file(s) and figure or table.
    pub source: &'static str,
    /// The runs, in the order they were planned.
    pub runs: Vec<Run>,
    /// One summary per run; the first also carries the experiment's claims.
    pub summaries: Vec<Summary>,
    /// The claim rows, evaluated on the runs' summaries.
    pub claims: Vec<Claim>,
    /// What [`Experiment::notes`] printed (empty without).
    pub notes: String,
    /// Seconds the experiment's simulations took, summed over its runs (which run in parallel:
    /// more than the wall-clock time on several cores).
    pub wall_s: f64,
    /// Wall-clock seconds from the experiment's start to its claims.
    pub elapsed_s: f64,
}

/// Why an experiment could not run.
#[derive(Debug, Error)]
pub enum RunError {
    /// A run names a scenario that is not built in.
    #[error("experiment `{experiment}`: run `{run}` names no built-in scenario `{scenario}`")]
    NoScenario {
        /// The experiment's name.
        experiment: &'static str,
        /// The run's label.
        run: String,
        /// The scenario it names.
        scenario: &'static str,
    },
    /// A run's scenario (with its overrides) does not load.
    #[error("experiment `{experiment}`, run `{run}`: {source}")]
    Scenario {
        /// The experiment's name.
        experiment: &'static str,
        /// The run's label.
        run: String,
        /// Why it does not load.
        source: ScenarioError,
    },
    /// A run's simulation failed.
    #[error("experiment `{experiment}`, run `{run}`: {source}")]
    Sim {
        /// The experiment's name.
        experiment: &'static str,
        /// The run's label.
        run: String,
        /// What failed.
        source: SimError,
    },
}

/// What the runner tells its caller while it works.
pub enum Event<'a> {
    /// A run started.
    Started {
        /// The experiment's name.
        experiment: &'a str,
        /// The run.
        run: &'a Run,
    },
    /// A run made progress (called every million events or so).
    Progress {
        /// The experiment's name.
        experiment: &'a str,
        /// The run.
        run: &'a Run,
        /// How far it has come.
        progress: &'a Progress,
    },
    /// A run finished after `wall_s` seconds.
    Finished {
        /// The experiment's name.
        experiment: &'a str,
        /// The run.
        run: &'a Run,
        /// Wall-clock seconds the run took.
        wall_s: f64,
    },
}

/// Run every run of `experiment` under `plan`, `threads` at a time, then evaluate its claims.
pub fn run_experiment(
    experiment: &Experiment,
    plan: &Plan,
    threads: usize,
    report: &(dyn Fn(Event<'_>) + Sync),
) -> Result<ExperimentResult, RunError> {
    let began = Instant::now();
    let runs = (experiment.runs)(plan);
    // Check every scenario before simulating anything, so a bad override fails at once.
    let mut checked = Vec::with_capacity(runs.len());
    for run in &runs {
        let file = builtin(run.scenario).ok_or_else(|| RunError::NoScenario {
            experiment: experiment.name,
            run: run.label.clone(),
            scenario: run.scenario,
        })?;
        let c = file
            .load(&run.overrides)
            .map_err(|source| RunError::Scenario {
                experiment: experiment.name,
                run: run.label.clone(),
                source,
            })?;
        checked.push(c);
    }

    type Slot = Mutex<Option<Result<(Outcome, f64), SimError>>>;
    let results: Vec<Slot> = runs.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = threads.clamp(1, runs.len().max(1));
    // Threads left for each run (a run splits across two when its network allows it).
    let per_run = (threads / workers).clamp(1, 2);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= runs.len() {
                    break;
                }
                let run = &runs[i];
                report(Event::Started {
                    experiment: experiment.name,
                    run,
                });
                let start = Instant::now();
                let outcome = longhaul_sim::run_on(&checked[i], per_run, &mut |p| {
                    report(Event::Progress {
                        experiment: experiment.name,
                        run,
                        progress: p,
                    })
                });
                let wall_s = start.elapsed().as_secs_f64();
                report(Event::Finished {
                    experiment: experiment.name,
                    run,
                    wall_s,
                });
                *results[i].lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(outcome.map(|o| (o, wall_s)));
            });
        }
    });

    let mut summaries = Vec::with_capacity(runs.len());
    let mut wall_s = 0.0;
    for (run, slot) in runs.iter().zip(results) {
        let result = slot
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .expect("every run index is taken by exactly one worker");
        let (outcome, wall) = result.map_err(|source| RunError::Sim {
            experiment: experiment.name,
            run: run.label.clone(),
            source,
        })?;
        wall_s += wall;
        let mut summary = outcome.summary;
        summary.scenario = format!("{}/{}", experiment.name, run.label);
        summary
            .meta
            .insert("experiment".into(), experiment.name.into());
        summary.meta.insert("run".into(), run.label.clone());
        summary.meta.insert("command".into(), run.command());
        summary
            .meta
            .insert("plan".into(), plan_name(plan).to_string());
        summaries.push(summary);
    }
    let claims = (experiment.claims)(plan, &summaries);
    let notes = experiment
        .notes
        .map_or_else(String::new, |f| f(plan, &summaries));
    if let Some(first) = summaries.first_mut() {
        first.claims = claims.clone();
        if !notes.is_empty() {
            first.meta.insert("notes".into(), notes.clone());
        }
    }
    Ok(ExperimentResult {
        name: experiment.name,
        title: experiment.title,
        source: experiment.source,
        runs,
        summaries,
        claims,
        notes,
        wall_s,
        elapsed_s: began.elapsed().as_secs_f64(),
    })
}

/// "default", "full" or "scaled ×k" (tests).
pub fn plan_name(plan: &Plan) -> String {
    if plan.full {
        "full".into()
    } else if plan.time_scale == 1.0 {
        "default".into()
    } else {
        format!("default ×{}", short(plan.time_scale))
    }
}
