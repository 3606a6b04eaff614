//! longhaul-metrics: the measurements longhaul reports, and the reports themselves.
//!
//! Definitions (docs/measurements.md, from seeds 000 and 004):
//! * [`throughput`]: throughput (payload bits ÷ duration) and utilization net of 40-byte TCP/IP
//!   headers, with the capacity that seed 000's Table 1 implies; [`bmps`]: the distance-rate
//!   product in b·m/s;
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
//!
//! # Building a summary from a run
//! A driver records events with explicit times (seconds from the start of the experiment) and
//! finishes with the numbers docs/measurements.md asks for:
//!
//! ```
//! use longhaul_metrics::recorder::{aggregate, FlowRecorder, PathContext};
//! use longhaul_metrics::summary::{Mode, Summary};
//! use std::collections::BTreeMap;
//!
//! // Seed 000's first row: one FAST flow, 1 Gb/s host card, 10,037 km, 1500-byte MTU.
//! let path = PathContext { capacity_bps: 1e9, mtu: 1500, distance_km: 10_037.0 };
//! let mut flow = FlowRecorder::new(1, "fast", 0.1)?;
//! for ms in 0..10_000u32 {
//!     let t = f64::from(ms) / 1000.0;
//!     flow.on_sent(t, 80);
//!     flow.on_delivered(t, 115_625); // 115,625 B per ms = 925 Mb/s
//!     flow.on_rtt(t, 0.180 + f64::from(ms % 10) * 1e-4);
//! }
//! let flows = vec![flow.finish(10.0, 10.0, &path)];
//! let aggregate = aggregate(&[flow], &flows, 10.0, &path);
//! assert!((flows[0].throughput_bps - 925e6).abs() < 1.0);
//! assert!((100.0 * aggregate.utilization - 95.03).abs() < 0.01);
//! assert!((aggregate.bmps / 1e15 - 9.28).abs() < 0.01);
//! let summary = Summary {
//!     scenario: "sc2002-1flow".into(), mode: Mode::Sim, duration_s: 10.0, seed: 1,
//!     links: vec![], flows, aggregate, claims: vec![], meta: BTreeMap::new(),
//!     provenance: None,
//! };
//! print!("{}", longhaul_metrics::report::summary_table(&summary));
//! # Ok::<(), longhaul_metrics::MetricsError>(())
//! ```

pub mod bmps;
pub mod convergence;
pub mod delay;
pub mod error;
pub mod fairness;
pub mod loss;
pub mod online;
pub mod percentile;
pub mod provenance;
pub mod stability;
pub mod throughput;
pub mod units;

pub use error::MetricsError;
pub mod example;
pub mod recorder;
pub mod report;
pub mod rule;
pub mod summary;
