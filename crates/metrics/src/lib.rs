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
//! Of the other longhaul crates it depends only on `longhaul-output`, which writes its files.
//!
//! # Building a summary from a run
//! A driver counts what it measured and [`assemble`] applies the definitions of
//! docs/measurements.md, the same for every driver:
//!
//! ```
//! use longhaul_metrics::assemble::{aggregate, flow_summary, AggregateCounts, Bottleneck};
//! use longhaul_metrics::assemble::{Distance, FlowCounts, LossBasis};
//! use longhaul_metrics::delay::queueing_delay_stats;
//! use longhaul_metrics::summary::{Mode, Summary};
//! use longhaul_metrics::throughput::Capacity;
//! use std::collections::BTreeMap;
//!
//! // Seed 000's first row: one FAST flow, 1 Gb/s host card, 10,037 km, 1500-byte MTU,
//! // 1,156,250,000 B in 10 s (925 Mb/s).
//! let card = Capacity { rate_bps: 1e9, mtu: 1500 };
//! let rtts: Vec<f64> = (0..10_000).map(|ms| 180.0 + f64::from(ms % 10) * 0.1).collect();
//! let flows = vec![flow_summary(FlowCounts {
//!     id: 1, cc: "fast".into(), params: None,
//!     bytes_delivered: 1_156_250_000, active_s: 10.0, start_s: Some(0.0), stop_s: Some(10.0),
//!     capacity: Some(card), distance_km: Some(10_037.0),
//!     min_rtt_ms: 180.0, queueing_delay_ms: queueing_delay_stats(&rtts),
//!     packets_sent: Some(800_000), packets_lost: Some(0), retransmits: 0,
//!     loss_basis: LossBasis::Drops, interval_bps: vec![925e6; 10],
//!     drops: vec![], series: None,
//! })];
//! let aggregate = aggregate(&flows, AggregateCounts {
//!     bytes_delivered: 1_156_250_000, span_s: 10.0, interval_bps: vec![925e6; 10],
//!     bottlenecks: vec![Bottleneck {
//!         name: Some("host card".into()), capacity_bps: 1e9, payload_bps: card.payload_bps(),
//!         bytes: 1_156_250_000,
//!     }],
//!     distance: Distance::Common(Some(10_037.0)), series: None,
//! });
//! assert!((flows[0].throughput_bps - 925e6).abs() < 1.0);
//! assert!((100.0 * aggregate.utilization - 95.03).abs() < 0.01);
//! assert!((aggregate.bmps / 1e15 - 9.28).abs() < 0.01);
//! let summary = Summary {
//!     scenario: "sc2002-1flow".into(), mode: Mode::Sim, duration_s: 10.0, seed: 1,
//!     links: vec![], flows, aggregate, responsive_cross: vec![], claims: vec![],
//!     meta: BTreeMap::new(),
//!     provenance: None,
//! };
//! print!("{}", longhaul_metrics::report::summary_table(&summary));
//! ```

#![warn(missing_docs)]

pub mod assemble;
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
pub mod report;
pub mod rule;
pub mod summary;
