//! longhaul-reproduce: the seed papers' experiments in longhaul's simulator, each claim with the
//! paper's figure, the measured one and whether it holds.
//!
//! An [`Experiment`] names built-in scenario files ([`scenarios`], the same TOML files
//! `longhaul sim` runs), the overrides each of its runs applies to them (flow count, congestion
//! control, rate, duration), and a function from the runs' result summaries to claim rows
//! (`{claim, paper, measured, holds}`, [`longhaul_metrics::summary::Claim`]). Every claim's
//! tolerance is a [`claim::Rule`] stated in the code and printed with the claim and the source of
//! error it stands for; rows no seed claims are [`claim::ClaimKind::Check`]s, counted apart; `holds` is
//! computed from the measurement, never set by hand, and a measurement that disagrees with a
//! paper stays in the table as a disagreement (docs/reproduce.md explains each one).
//!
//! Durations: the default [`Plan`] runs every experiment in a few minutes in all, with shortened
//! runs (each experiment says how, in `--list` and in its module's header); [`Plan::FULL`] runs
//! the papers' durations. Tests shrink the default further with [`Plan::time_scale`].
//!
//! The experiments (module headers give the seed's words, the model and the cross traffic):
//! * `table1` — seed 000 Table 1: FAST TCP, 1–10 flows, 85–180 ms, every other controller
//!   beside it, and seed 001's contrast with Reno under seed 004's random loss, the other
//!   controllers shown there as data ([`experiments::table1`]);
//! * `slide4` — seed 001 slide 4: Linux 2.4 TCP on the 180 ms runs, txqueuelen 100 and 10,000
//!   ([`experiments::slide4`]);
//! * `fast-equilibrium` — α packets queued per flow, equal rates at different RTTs
//!   ([`experiments::equilibrium`]);
//! * `reno-climb` — seed 004: Reno's 200→1000 Mb/s climb, 1500 vs 9000-byte MTU
//!   ([`experiments::reno_climb`]);
//! * `scalable-recovery` — seed 003: Scalable's rate-independent recovery
//!   ([`experiments::scalable`]);
//! * `lion-contest` — seed 002 Fig. 5: Lion against stock TCP for 5 s ([`experiments::lion`]);
//! * `lion-mbs` — seed 002 Figs. 2–4: loss against burst size at a fixed rate, and a window
//!   ([`experiments::lion_mbs`]);
//! * `lion-matched` — Lion against Reno and CUBIC at their rate, five seeds, line-rate bursts
//!   ([`experiments::lion_matched`]);
//! * `lion-buffers` — Lion against Reno, CUBIC and BBR over buffers of 2–200 % of the BDP, as a
//!   sweep read from `scenarios/sweeps/lion-buffers.toml` ([`experiments::lion_buffers`]);
//! * `response` — seeds 000–001's contrast as a sweep: 8 controllers against random loss beside
//!   their response functions ([`theory`]), runs read from `scenarios/sweeps/response.toml`
//!   ([`experiments::response`]).

#![warn(missing_docs)]

pub mod claim;
pub mod experiment;
pub mod experiments;
pub mod measure;
pub mod output;
pub mod scenarios;
pub mod seeds;
/// Response functions, from `longhaul_cc::response` (the sweep's cost estimate uses them too).
pub use longhaul_cc::response as theory;

pub use experiment::{run_experiment, Event, Experiment, ExperimentResult, Plan, Run, RunError};

/// Every experiment, in the order `longhaul reproduce` runs them.
pub const EXPERIMENTS: &[&Experiment] = &[
    &experiments::table1::EXPERIMENT,
    &experiments::slide4::EXPERIMENT,
    &experiments::equilibrium::EXPERIMENT,
    &experiments::reno_climb::EXPERIMENT,
    &experiments::scalable::EXPERIMENT,
    &experiments::lion_mbs::EXPERIMENT,
    &experiments::lion_matched::EXPERIMENT,
    &experiments::lion_buffers::EXPERIMENT,
    &experiments::lion::CONTEST,
    &experiments::response::EXPERIMENT,
];

/// The experiment called `name`.
pub fn experiment(name: &str) -> Option<&'static Experiment> {
    EXPERIMENTS.iter().copied().find(|e| e.name == name)
}

/// The experiments called `names`, in that order (all of them when there are none); the
/// error names the first unknown one and lists the experiments.
pub fn pick(names: &[String]) -> Result<Vec<&'static Experiment>, String> {
    if names.is_empty() {
        return Ok(EXPERIMENTS.to_vec());
    }
    names
        .iter()
        .map(|name| {
            experiment(name).ok_or_else(|| {
                let known: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name).collect();
                format!(
                    "no experiment named `{name}`; experiments are: {} (see `longhaul reproduce --list`)",
                    known.join(", ")
                )
            })
        })
        .collect()
}
