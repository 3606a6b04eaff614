//! Summary entries from what a driver counted: one implementation of docs/measurements.md's
//! definitions for every driver (`sim`, `lab`, `perf`).
//!
//! Each driver gathers its own raw numbers (the simulator from its endpoints and ports, `perf`
//! from `TCP_INFO` and the server's byte count, `lab` from `perf` and the emulator) and hands them
//! to [`flow_summary`] and [`aggregate`], which derive throughput, utilization, b·m/s, loss rate,
//! queueing delay, CoV and Jain's index the same way for all of them.

mod aggregate;
mod flow;

pub use aggregate::{aggregate, AggregateCounts, Bottleneck, Distance};
pub use flow::{flow_summary, FlowCounts, LossBasis};
