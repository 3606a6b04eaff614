//! Errors of the sweep library: each names the file, axis, value, run or directory involved and
//! says what to do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("{file}: cannot read the sweep file: {source}")]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Syntax { file: PathBuf, message: String },
    #[error("{file}: axis `{axis}`: {message}")]
    Axis {
        file: PathBuf,
        axis: String,
        message: String,
    },
    #[error("{file}: axis `{axis}`, value {value}: {message}")]
    Value {
        file: PathBuf,
        axis: String,
        value: String,
        message: String,
    },
    #[error(
        "{file}: the sweep has {runs} runs ({shape}); more than {limit} is refused unless asked \
         for (--allow-large), since each run is a full simulation"
    )]
    TooLarge {
        file: PathBuf,
        runs: String,
        shape: String,
        limit: u64,
    },
    #[error("run {index} is beyond the plan's {runs} runs (indices 0 to {last})")]
    IndexOutOfRange { index: u64, runs: u64, last: u64 },
    #[error(
        "{dir} holds results of a different sweep (plan {found}, this sweep file gives {expected}{what}); \
         results of two plans must not mix: use another --out directory, or remove {dir} to start over"
    )]
    PlanChanged {
        dir: PathBuf,
        found: String,
        expected: String,
        what: String,
    },
    #[error(
        "{dir} is not a sweep directory ({why}); give the --out directory of `longhaul sweep run`"
    )]
    NotASweepDir { dir: PathBuf, why: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    BadResult { path: PathBuf, message: String },
    #[error("{0}")]
    Metrics(#[from] longhaul_metrics::MetricsError),
    #[error("{0}")]
    Output(#[from] longhaul_output::Error),
    #[error("{0}")]
    Submit(String),
}

pub type Result<T, E = SweepError> = std::result::Result<T, E>;
