//! longhaul-lab: `longhaul lab FILE` — a scenario file run with real kernel TCP over the WAN
//! emulator, reported in the simulator's result format.
//!
//! The simulator answers "what does the model predict"; the lab answers "what do the real
//! stacks do on the same path". It takes the same scenario file as `longhaul sim`, builds the
//! bottleneck in the user-space emulator (`longhaul-emu`: two namespaces joined by TUN devices
//! and an exact rate/queue/delay model), makes each flow's congestion control available in the
//! kernel (`longhaul-kernel`'s eBPF FAST, Scalable, HighSpeed and Vegas; the kernel's own Reno,
//! CUBIC and BBR), measures each flow with `longhaul perf` (a server per flow in namespace b, a
//! client in namespace a, TCP_INFO sampled every 100 ms), and writes the same `Summary` as the
//! simulator (mode `lab`), so `longhaul compare sim.json lab.json` lines them up.
//!
//! The main types: a [`LabPlan`] is a scenario mapped onto one emulated bottleneck;
//! [`run()`](fn@run) runs it and returns an [`Outcome`] (the summary and the [`RawOutcome`] it
//! is built from); [`LabError`] says what went wrong and what to do about it.
//!
//! * [`plan`]: scenario → one emulated bottleneck (and the fields it refuses);
//! * [`congestion`]: load/unload of the congestion controls;
//! * [`run`](mod@run): the run itself, with cleanup on every exit path;
//! * [`responsive`]: responsive cross traffic, kernel TCP transfers on the simulator's schedule;
//! * [`queue_log`]: the emulator's event log → queue series and drop log;
//! * [`silences`]: silences in the traffic offered to the bottleneck, and which host they came
//!   from (the ACK clock repeats a host's stall every round trip);
//! * [`stack_counters`]: the sender's TCP stack counters (how slow start ended, recoveries);
//! * [`summary`]: the result summary;
//! * [`builtin`]: the built-in experiments under `scenarios/lab/`;
//! * [`sweep`](mod@sweep): the lab as an engine of `longhaul sweep run --engine lab`.

#![warn(missing_docs)]

pub mod builtin;
pub mod congestion;
pub mod error;
pub mod plan;
pub mod queue_log;
pub mod responsive;
pub mod run;
pub mod silences;
pub mod stack_counters;
pub mod summary;
pub mod sweep;

pub use error::LabError;
pub use plan::{LabCross, LabFlow, LabPlan};
pub use run::{is_root, RawOutcome, RunClock, RunOptions, Sysctl};

use longhaul_metrics::summary::Summary;
use std::time::Duration;

/// A finished lab run: the summary and what it was built from.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The summary in the simulator's format (mode `lab`).
    pub summary: Summary,
    /// The measurements the summary was built from.
    pub raw: RawOutcome,
}

impl Outcome {
    /// The lab's own files in a run's report directory (beside the summary and page that
    /// `longhaul_metrics::report::write_report_dir` writes): `drops.csv`, the emulator's
    /// summary and the run's clock.
    pub fn report_files(&self) -> Result<[(&'static str, String); 3], serde_json::Error> {
        let emulator = serde_json::to_string_pretty(&self.raw.emulator)? + "\n";
        let clock = serde_json::to_string_pretty(&self.raw.clock())? + "\n";
        Ok([
            ("drops.csv", self.drops_csv()),
            ("emulator.json", emulator),
            ("clock.json", clock),
        ])
    }

    /// The report's `drops.csv`: every drop the emulator logged, both directions, with the
    /// bottleneck's name. The emulator does not parse flows out of dropped packets: the flow
    /// column is `-`.
    pub fn drops_csv(&self) -> String {
        let mut csv = String::from("time_s,link,direction,flow,reason,bytes,queue_packets\n");
        let link = self
            .summary
            .links
            .first()
            .map(|l| l.name.clone())
            .unwrap_or_default();
        for (direction, log) in [
            ("forward", &self.raw.forward_log),
            ("reverse", &self.raw.reverse_log),
        ] {
            for d in &log.drops {
                csv.push_str(&format!(
                    "{:.9},{link},{direction},-,{},{},{}\n",
                    d.time_s, d.reason, d.bytes, d.queue_packets
                ));
            }
        }
        csv
    }
}

/// Runs a plan and builds its summary.
pub fn run(
    plan: &LabPlan,
    opts: &RunOptions,
    interrupted: &mut dyn FnMut(Duration) -> Option<i32>,
) -> Result<Outcome, LabError> {
    let raw = run::run(plan, opts, interrupted)?;
    let summary = summary::build(plan, &raw);
    Ok(Outcome { summary, raw })
}

/// Parses scenario text and maps it onto the lab.
pub fn plan_from_text(
    text: &str,
    file: &str,
    default_name: &str,
    sets: &[String],
) -> Result<LabPlan, LabError> {
    let checked = longhaul_sim::Scenario::parse(text, file, default_name, sets)?;
    LabPlan::from_scenario(&checked, file)
}

/// Never interrupted, sleeping as asked (tests, library use without signal handling).
pub fn no_interrupt(d: Duration) -> Option<i32> {
    std::thread::sleep(d);
    None
}
