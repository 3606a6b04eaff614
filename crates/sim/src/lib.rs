//! # longhaul-sim: a deterministic packet simulator for long fat networks
//!
//! A discrete-event simulator in integer nanoseconds that runs longhaul's own congestion
//! controllers (crate `longhaul-cc`) over modelled networks: links with a rate (constant or a
//! mahimahi trace), propagation delay (with optional jitter, reordering and duplication), MTU
//! and random loss (Bernoulli or Gilbert–Elliott); a queue (drop-tail in packets or bytes, or
//! RED with optional ECN marking) at every link output in both directions, so ACKs queue too
//! (these models are `longhaul-path`'s, shared with the emulator); per-flow access links
//! and extra delay so flows have different RTTs; dumbbell and parking-lot topologies; CBR,
//! Poisson, on/off and web-like cross traffic (`longhaul-path`'s generators, shared with the
//! emulator), unresponsive or carried by congestion-controlled
//! flows. It reports the summary of docs/measurements.md, per-flow and per-queue time series and a drop log
//! naming where and why each packet was lost.
//!
//! The main types: a [`Scenario`] is a parsed scenario file, [`Checked`] one that passed its
//! checks, [`run`] simulates it, and its [`Outcome`] carries the [`Summary`] (with its series), the
//! per-port counters and the drop log.
//!
//! Speed is a design goal (a 1 Gb/s × 180 ms flow for an hour is 300 million packets): links are
//! virtual FIFO queues plus delay lines, so each packet costs one event per hop and the
//! pending-event set holds O(links + flows) entries; packets are `Copy` structs passed by value;
//! nothing allocates per packet; and a run whose flows share one bottleneck is split across two
//! cores, senders on one and receivers on the other, with the same result bit for bit. See
//! `engine` (and its `split`), `port` and `events` for the details; `progress_bar` is the
//! progress line `longhaul sim` draws on a terminal.
//!
//! ```no_run
//! use longhaul_sim::{run, Scenario};
//! let checked = Scenario::load("scenarios/dumbbell-reno.toml".as_ref(), &[]).unwrap();
//! let outcome = run(&checked, &mut |_| {}).unwrap();
//! println!("{}", serde_json::to_string_pretty(&outcome.summary).unwrap());
//! ```

#![warn(missing_docs)]

pub mod budget;
mod bufpool;
pub mod engine;
pub mod events;
pub mod packet;
pub mod port;
pub mod progress_bar;
pub mod stall;
pub mod summary;
pub mod trace;
pub mod transport;

pub use engine::{Progress, SimError, SplitWhen};
pub use longhaul_metrics::summary::Summary;
/// The scenario file, its units, RED and the packet ring live below both engines, in
/// `longhaul-path`.
pub use longhaul_path::{cross, red, ring, scenario, units};
pub use scenario::{Checked, Scenario, ScenarioError};
pub use summary::Outcome;

/// Run a checked scenario to its end, on two threads if the machine has two CPUs and the
/// scenario can be split (`engine::split`; the result is the same either way). `progress` is
/// called every million events or so.
pub fn run(checked: &Checked, progress: &mut dyn FnMut(&Progress)) -> Result<Outcome, SimError> {
    run_on(checked, default_threads(), progress)
}

/// The threads `run` uses: two on a machine with two or more CPUs, else one.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(2))
}

/// `run` on at most `threads` threads (1 or 2): two when the network can be split and its
/// propagation delay is long enough for the split to pay (`SplitWhen::Worthwhile`).
pub fn run_on(
    checked: &Checked,
    threads: usize,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Outcome, SimError> {
    Ok(engine::Engine::new(checked)?.run_on(threads, SplitWhen::Worthwhile, progress))
}

/// `run` on one thread, keeping every packet's events ([`trace::Trace`], in
/// `Outcome::trace`): for checking the summary against a reference computation. Memory grows
/// with the packets.
pub fn run_traced(
    checked: &Checked,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Outcome, SimError> {
    let mut engine = engine::Engine::new(checked)?;
    engine.keep_trace();
    Ok(engine.run(progress))
}

/// Split the run across two threads whenever its network allows it, worthwhile or not: for
/// checking that a split run gives the single-threaded result on small networks.
pub fn run_split_whenever_possible(
    checked: &Checked,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Outcome, SimError> {
    Ok(engine::Engine::new(checked)?.run_on(2, SplitWhen::Possible, progress))
}
