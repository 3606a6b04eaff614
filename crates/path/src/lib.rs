//! The network path as longhaul's engines share it.
//!
//! The simulator (`longhaul-sim`, virtual time) and the emulator (`longhaul-emu`, real time)
//! describe the same things: links with a rate, a delay and a queue, flows, cross traffic. This
//! crate holds that description once, below both engines:
//!
//! - [`scenario`]: the scenario file (TOML), its defaults, its checks and `--set` overrides;
//! - [`units`]: the units a scenario is written in (rates, sizes, durations) and their parsing;
//! - [`red`]: Random Early Detection, a clock-free queue discipline either engine drives;
//! - [`loss`]: random loss, Bernoulli and Gilbert–Elliott, as state machines over the caller's
//!   random stream;
//! - [`delay`]: the propagation delay line with jitter, reordering and duplication;
//! - [`queue`]: the bottleneck — a FIFO with drop-tail limits and RED — and [`serializer`], the
//!   transmitter that serves it at a constant rate or by a [`trace`] (mahimahi link traces);
//! - [`cross`]: unresponsive cross traffic (cbr, poisson, onoff, web) as packet generators the
//!   simulator fires from its event queue and the emulator reads against its clock.
//!
//! Nothing here keeps time or moves packets: each engine owns its clock and calls these with
//! the time it has.

#![warn(missing_docs)]

pub mod cross;
pub mod delay;
pub mod loss;
pub mod queue;
pub mod red;
pub mod ring;
pub mod scenario;
pub mod serializer;
pub mod trace;
pub mod units;

pub use scenario::{Checked, Scenario, ScenarioError};
