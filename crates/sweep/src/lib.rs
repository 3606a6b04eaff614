//! # longhaul-sweep: studies by index
//!
//! A congestion-control study is a grid — controllers × rates × RTTs × buffers × loss rates ×
//! seeds — of simulator runs. This crate turns a sweep file into a deterministic list of runs,
//! each a scenario plus `--set` overrides with an integer index (`docs/sweep.md`) and a key
//! made of its configuration, and drives them through one entry point, `longhaul sweep run FILE
//! --index N`, that every engine can call: the local runner on all cores, a Slurm array, a
//! Kubernetes Indexed Job, GNU parallel. Results are one file per run, stored by key (a grown
//! sweep file runs only its new runs), merged by `collect`.
//!
//! The main types: a [`spec::SweepFile`] expands into a [`plan::Plan`] of indexed
//! [`plan::Run`]s, whose results a [`store::SweepDir`] holds; [`SweepError`] names what went
//! wrong.
//!
//! * [`spec`]: the sweep file (`docs/sweep.md`);
//! * [`plan`]: its expansion into indexed runs, value checks and the plan's hash;
//! * [`cost`]: a run's simulated seconds and estimated CPU time;
//! * [`store`]: the results directory (one atomic file per run, named by the run's
//!   configuration; the plans it has run);
//! * [`runner`]: running runs on this machine, skipping finished ones;
//! * [`tasks`]: a submission's missing runs, frozen with their plan, cut into array tasks;
//! * [`work`]: what `sweep run` and `sweep submit` start from: the plan, its results directory,
//!   the selected runs;
//! * [`slurm`]: the sbatch array script and its submission;
//! * [`collect`]: `results.csv`, its long form and `results.jsonl`; [`show`]: a query of them
//!   for the terminal; [`report`]: `report.html`.
//!
//! ```no_run
//! use longhaul_sweep::{plan::Plan, runner, store::SweepDir};
//! let plan = Plan::load("scenarios/sweeps/small-grid.toml".as_ref(), false)?;
//! let dir = SweepDir::create("out/grid".as_ref(), &plan.stamp, None)?;
//! let report = runner::run_indices(&plan, &dir, 0..plan.runs, &Default::default())?;
//! println!("{report}");
//! # Ok::<(), longhaul_sweep::SweepError>(())
//! ```

#![warn(missing_docs)]

pub mod collect;
pub mod cost;
pub mod error;
pub mod plan;
pub mod report;
pub mod runner;
pub mod show;
pub mod slurm;
pub mod spec;
pub mod store;
pub mod tasks;
#[cfg(test)]
mod testkit;
pub mod work;

pub use error::SweepError;
