//! The lab as an engine of `longhaul sweep run --engine lab` (`longhaul_sweep::runner::Engine`):
//! each run of the sweep is `longhaul lab` on its scenario with its overrides, one at a time
//! (the emulator and the hosts take the machine).
//!
//! [`engine`] checks, before any run starts, that the process is root and that every selected
//! run maps onto the lab, as `longhaul lab` checks every variant of a built-in before running
//! any. From then on the termination signals are blocked and collected by the runs
//! (`longhaul_emu::sys::signals`): an interrupted run removes its namespaces and unloads its
//! congestion controls, the finished runs stay stored, and the process ends with the signal's
//! status (128 + its number); running the sweep again runs the rest.

use crate::{plan_from_text, LabError, RunOptions};
use longhaul_emu::sys::signals::{block_termination_signals, wait_signal};
use longhaul_metrics::summary::Summary;
use longhaul_sweep::plan::{Plan, Run};
use longhaul_sweep::runner::Engine;
use longhaul_sweep::SweepError;

/// Why the lab cannot run a sweep's runs.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The process is not root.
    #[error(
        "sweep run --engine lab needs root: each run creates network namespaces and TUN \
         devices (run it with sudo)"
    )]
    NotRoot,
    /// A run's scenario, with its overrides, does not map onto the lab.
    #[error("run {index} ({label}) cannot run in the lab: {source}")]
    Unsupported {
        /// The run's index.
        index: u64,
        /// The run's label (its axes' values).
        label: String,
        /// What the lab refuses.
        source: LabError,
    },
    /// A run's scenario cannot be read.
    #[error(transparent)]
    Sweep(#[from] SweepError),
    /// A run's scenario file is not UTF-8.
    #[error(transparent)]
    NotText(#[from] std::string::FromUtf8Error),
}

/// The lab engine for the runs `indices` of `plan`, once each of them maps onto the lab; the
/// termination signals are blocked from here on (see the module's header).
pub fn engine(plan: &Plan, indices: &[u64]) -> Result<Engine, EngineError> {
    if !crate::is_root() {
        return Err(EngineError::NotRoot);
    }
    for &index in indices {
        let run = plan.run(index)?;
        let text = String::from_utf8(run.read_scenario()?)?;
        let file = run.scenario_path.display().to_string();
        if let Err(source) = plan_from_text(&text, &file, &run.default_name(), &run.sets) {
            let label = run.label();
            return Err(EngineError::Unsupported {
                index,
                label,
                source,
            });
        }
    }
    block_termination_signals();
    Ok(Engine {
        name: "lab",
        run: lab_run,
        parallel: false,
    })
}

/// One run in the lab: its summary, or the error's text; a signal ends the process after the
/// run has cleaned up.
fn lab_run(run: &Run, bytes: &[u8], _threads: usize) -> Result<Summary, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
    let file = run.scenario_path.display().to_string();
    let plan =
        plan_from_text(text, &file, &run.default_name(), &run.sets).map_err(|e| e.to_string())?;
    match crate::run(&plan, &RunOptions::default(), &mut wait_signal) {
        Ok(o) => Ok(o.summary),
        Err(LabError::Interrupted(sig)) => {
            eprintln!(
                "longhaul sweep: interrupted by signal {sig} during run {}",
                run.index
            );
            std::process::exit(128 + sig)
        }
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine for every run of a sweep of the lab's short path over two controllers, one
    /// of which (a paced sender) the kernel does not have.
    fn engine_for_grid() -> Result<Engine, EngineError> {
        let dir = tempfile::tempdir().unwrap();
        let short = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/lab/short.toml"
        );
        let sweep = format!(
            "name = \"g\"\nscenario = \"{short}\"\n[axes]\n\"flows.0.cc\" = [\"cubic\", \
             \"paced:rate=50e6\"]\n"
        );
        let file = dir.path().join("grid.toml");
        std::fs::write(&file, sweep).unwrap();
        let plan = Plan::load(&file, false).unwrap();
        engine(&plan, &[0, 1])
    }

    /// A run the lab cannot map is refused before anything starts, naming the run and the
    /// field; without root nothing is checked but that.
    #[test]
    fn an_unmappable_run_is_refused_with_its_index_and_field() {
        let e = engine_for_grid().unwrap_err();
        if !crate::is_root() {
            assert!(matches!(e, EngineError::NotRoot), "{e}");
            return;
        }
        let e = e.to_string();
        assert!(e.starts_with("run 1 ("), "{e}");
        assert!(
            e.contains("cannot run in the lab: ") && e.contains("field `flows[0].cc`"),
            "{e}"
        );
    }
}
