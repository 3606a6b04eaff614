//! Errors of the sweep library: each names the file, axis, value, run or directory involved and
//! says what to do about it.

use std::path::PathBuf;

/// Why a sweep could not be planned, run, stored, collected or submitted.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The sweep file cannot be read.
    #[error("{file}: cannot read the sweep file: {source}")]
    Read {
        /// The sweep file.
        file: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The sweep file is not valid TOML or not a sweep file.
    #[error("{file}: {message}")]
    Syntax {
        /// The sweep file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// An axis that is malformed as a whole (no values, a bad range, a zip of unequal lengths).
    #[error("{file}: axis `{axis}`: {message}")]
    Axis {
        /// The sweep file.
        file: PathBuf,
        /// The axis's key.
        axis: String,
        /// What is wrong.
        message: String,
    },
    /// One value of an axis that the scenario refuses.
    #[error("{file}: axis `{axis}`, value {value}: {message}")]
    Value {
        /// The sweep file.
        file: PathBuf,
        /// The axis's key.
        axis: String,
        /// The value refused.
        value: String,
        /// Why it is refused.
        message: String,
    },
    /// More runs than the limit without `--allow-large`.
    #[error(
        "{file}: the sweep has {runs} runs ({shape}); more than {limit} is refused unless asked \
         for (--allow-large), since each run is a full simulation"
    )]
    TooLarge {
        /// The sweep file.
        file: PathBuf,
        /// How many runs the plan has.
        runs: String,
        /// The product of the axes' lengths that makes that number.
        shape: String,
        /// The most runs allowed without asking.
        limit: u64,
    },
    /// `--index` beyond the plan.
    #[error("run {index} is beyond the plan's {runs} runs (indices 0 to {last})")]
    IndexOutOfRange {
        /// The index asked for.
        index: u64,
        /// The plan's number of runs.
        runs: u64,
        /// The last valid index.
        last: u64,
    },
    /// A results directory or a recorded plan made by another longhaul version.
    #[error(
        "{what} was made by longhaul {found}, and this is longhaul {ours}: runs of two versions \
         must not mix, since the simulator's results may differ between them; use longhaul \
         {found} with it, or start again in another --out directory"
    )]
    VersionChanged {
        /// The directory or file.
        what: String,
        /// The version it records.
        found: String,
        /// This longhaul's version.
        ours: String,
    },
    /// A scenario file whose content differs from the one its runs were planned or made with.
    #[error("{0}")]
    ScenarioChanged(Box<ScenarioChange>),
    /// A results directory whose `sweep.json` has no longhaul version: an earlier layout.
    #[error(
        "{dir} holds runs stored by index by an earlier longhaul (its sweep.json records no \
         longhaul version); this longhaul stores runs by their configuration and does not add to \
         it: use another --out directory (nothing in {dir} is changed)"
    )]
    UnknownLayout {
        /// The results directory.
        dir: PathBuf,
    },
    /// A task beyond a tasks file's tasks.
    #[error(
        "task {task} is beyond the {tasks} tasks of {} (0 to {})",
        file.display(),
        tasks.saturating_sub(1)
    )]
    TaskOutOfRange {
        /// The tasks file.
        file: PathBuf,
        /// The task asked for.
        task: u64,
        /// How many tasks it has.
        tasks: u64,
    },
    /// A directory without a sweep's stamp.
    #[error(
        "{dir} is not a sweep directory ({why}); give the --out directory of `longhaul sweep run`"
    )]
    NotASweepDir {
        /// The directory given.
        dir: PathBuf,
        /// What is missing or wrong.
        why: String,
    },
    /// A file of the results directory cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// A run's result file, or a collected table, that cannot be read or written.
    #[error("{path}: {message}")]
    BadResult {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A result summary's error.
    #[error("{0}")]
    Metrics(#[from] longhaul_metrics::MetricsError),
    /// A run's scenario cannot be loaded with its overrides.
    #[error("{0}")]
    Scenario(#[from] longhaul_sim::ScenarioError),
    /// Writing an output file failed.
    #[error("{0}")]
    Output(#[from] longhaul_output::Error),
    /// A submission to a batch system (Slurm) refused or failed.
    #[error("{0}")]
    Submit(String),
    /// A results directory that holds another engine's results.
    #[error(
        "{dir} holds results of the `{recorded}` engine, and this sweep runs with `{wanted}`: \
         results of two engines must not mix; use another --out directory",
        dir = dir.display()
    )]
    Engine {
        /// The results directory.
        dir: PathBuf,
        /// The engine it records.
        recorded: String,
        /// The engine asked for.
        wanted: String,
    },
    /// A query of collected results (`sweep show`) that names no column or is malformed.
    #[error("{message}")]
    Query {
        /// What is wrong, and the names there are.
        message: String,
    },
}

/// A scenario file whose content is no longer the one recorded (`SweepError::ScenarioChanged`).
#[derive(Debug)]
pub struct ScenarioChange {
    /// The scenario file as written in the sweep file.
    pub file: String,
    /// The file, absolute.
    pub path: PathBuf,
    /// The SHA-256 recorded.
    pub then: String,
    /// The SHA-256 of its content now.
    pub now: String,
    /// Since when: "out/grid recorded a plan with it in plans/HASH.json".
    pub since: String,
    /// What to do.
    pub advice: String,
}

impl std::fmt::Display for ScenarioChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let short = |h: &str| h.chars().take(12).collect::<String>();
        write!(
            f,
            "scenario {} ({}) has changed since {} (SHA-256 {} then, {} now): results of two \
             versions of one scenario must not mix; {}",
            self.file,
            self.path.display(),
            self.since,
            short(&self.then),
            short(&self.now),
            self.advice
        )
    }
}

/// The sweep library's result.
pub type Result<T, E = SweepError> = std::result::Result<T, E>;
