//! Errors of the metrics library.

use std::path::PathBuf;

/// What went wrong, with enough context to fix it.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// A [`LogHistogram`](crate::online::LogHistogram) was asked for a precision it
    /// does not support.
    #[error("histogram precision must be 1 to {max} bits, got {got}")]
    HistogramPrecision {
        /// The precision asked for, in bits of sub-bucket resolution.
        got: u32,
        /// The largest precision supported, in bits.
        max: u32,
    },
    /// Two histograms of different precision cannot be merged.
    #[error("cannot merge histograms of different precision ({a} and {b} bits)")]
    HistogramMismatch {
        /// The receiving histogram's precision, in bits.
        a: u32,
        /// The other histogram's precision, in bits.
        b: u32,
    },
    /// An interval width that is not a positive finite number of seconds, or interval series of
    /// different widths merged.
    #[error("interval width must be a positive number of seconds, got {0}")]
    IntervalWidth(f64),
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// An output file could not be written (`longhaul_output`).
    #[error("{0}")]
    Output(#[from] longhaul_output::Error),
    /// A file is not valid JSON or not a result summary.
    #[error("{path} is not a longhaul result summary: {message} at line {line}, column {column}")]
    Parse {
        /// The file (or `stdin`).
        path: PathBuf,
        /// What the JSON parser found wrong, without its position.
        message: String,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
    },
    /// A summary could not be serialised as JSON.
    #[error("cannot encode the result summary as JSON: {0}")]
    Encode(#[source] serde_json::Error),
    /// A summary that parses but whose contents are inconsistent.
    #[error("invalid result summary: {0}")]
    Invalid(String),
    /// A plot could not be drawn.
    #[error("cannot draw plot `{plot}`: {message}")]
    Plot {
        /// The plot's title.
        plot: String,
        /// What the drawing backend reported.
        message: String,
    },
}
