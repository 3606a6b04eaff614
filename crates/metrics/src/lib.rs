//! longhaul-metrics: the measurements longhaul reports, and the reports themselves.
//!
//! Definitions (DESIGN.md, from seeds 000 and 004):
//! * [`throughput`]: throughput (payload bits ÷ duration), utilization net of 40-byte TCP/IP headers,
//!   and the distance-rate product in b·m/s, with the capacity that seed 000's Table 1 implies;
//! * [`delay`]: minimum RTT and queueing delay (RTT − min RTT) statistics, using the nearest-rank
//!   [`percentile`];
//! * [`loss`]: loss rate and a ledger of where and why packets were dropped;
//! * [`fairness`]: Jain's index; [`stability`]: CoV of 1-s throughput;
//! * [`convergence`]: convergence and recovery times;
//! * [`online`]: constant-memory accumulators for long runs (Welford, log histogram, binning).
//!
//! The result summary that `sim`, `lab`, `reproduce` and `perf -J` write is [`summary::Summary`];
//! [`report`] renders it as a terminal table, JSON, or a self-contained HTML page with SVG plots,
//! and compares two summaries side by side.
//!
//! This crate depends on no other longhaul crate.

pub mod convergence;
pub mod delay;
pub mod error;
pub mod fairness;
pub mod loss;
pub mod online;
pub mod percentile;
pub mod stability;
pub mod throughput;
pub mod units;

pub use error::MetricsError;
pub mod example;
pub mod recorder;
pub mod report;
pub mod summary;
