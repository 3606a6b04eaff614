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
    /// The results directory belongs to another plan.
    #[error(
        "{dir} holds results of a different sweep (plan {found}, this sweep file gives {expected}{what}); \
         results of two plans must not mix: use another --out directory, or remove {dir} to start over"
    )]
    PlanChanged {
        /// The results directory.
        dir: PathBuf,
        /// The hash of the plan stamped in the directory.
        found: String,
        /// The hash of this sweep file's plan.
        expected: String,
        /// What differs between the two plans, for the message.
        what: String,
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
    /// Writing an output file failed.
    #[error("{0}")]
    Output(#[from] longhaul_output::Error),
    /// A submission to a batch system (Slurm) refused or failed.
    #[error("{0}")]
    Submit(String),
}

/// The sweep library's result.
pub type Result<T, E = SweepError> = std::result::Result<T, E>;
