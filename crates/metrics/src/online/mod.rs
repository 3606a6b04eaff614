//! Streaming accumulators for long runs.
//!
//! A simulated run can deliver hundreds of millions of packets; keeping every RTT sample would take
//! gigabytes. These accumulators use constant memory per flow (or memory proportional to the run's
//! length in intervals, for time series) and merge, so per-link or per-thread partial results add up.

mod binning;
mod delay;
mod histogram;
mod welford;

pub use binning::IntervalBinner;
pub use delay::DelayAccumulator;
pub use histogram::LogHistogram;
pub use welford::RunningStats;
