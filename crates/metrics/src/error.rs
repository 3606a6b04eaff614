//! Errors of the metrics library.

use std::path::PathBuf;

/// What went wrong, with enough context to fix it.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("histogram precision must be 1 to {max} bits, got {got}")]
    HistogramPrecision { got: u32, max: u32 },
    #[error("cannot merge histograms of different precision ({a} and {b} bits)")]
    HistogramMismatch { a: u32, b: u32 },
    #[error("interval width must be a positive number of seconds, got {0}")]
    IntervalWidth(f64),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Output(#[from] longhaul_output::Error),
    #[error("{path} is not a longhaul result summary: {message} at line {line}, column {column}")]
    Parse {
        path: PathBuf,
        message: String,
        line: usize,
        column: usize,
    },
    #[error("cannot encode the result summary as JSON: {0}")]
    Encode(#[source] serde_json::Error),
    #[error("invalid result summary: {0}")]
    Invalid(String),
    #[error("cannot draw plot `{plot}`: {message}")]
    Plot { plot: String, message: String },
}
