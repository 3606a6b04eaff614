//! What `longhaul sweep run` and `longhaul sweep submit` start from: a sweep file's plan with
//! its results directory, and for `run` the selection of runs (all of them, one block of an
//! array scheduler's, or a submitted tasks file's task), with what to tell the user about it.
//!
//! A sweep file becomes its [`Plan`] and opens (or creates) its [`SweepDir`], which records the
//! plan; a directory that recorded another version of the sweep keeps the runs it has, and only
//! the missing ones run ([`Work::note`] says so). A tasks file of `sweep submit`
//! (`DIR/slurm/tasks-….json`, [`Tasks::work`]) brings its own plan and runs.

use crate::error::Result;
use crate::plan::Plan;
use crate::runner::{block, RunReport};
use crate::store::SweepDir;
use crate::tasks::Tasks;
use std::path::Path;

/// Errors shown one per line when runs fail; the rest are in their files.
const FAILURES_SHOWN: usize = 5;

/// A sweep file's plan and its results directory `out`, opened for the plan (the sweep file's
/// text is kept there as `sweep.toml`).
pub fn open(file: &Path, out: &Path, allow_large: bool) -> Result<(Plan, SweepDir)> {
    let plan = Plan::load(file, allow_large)?;
    let text = std::fs::read_to_string(file).ok();
    let dir = SweepDir::create(out, &plan.stamp, text.as_deref())?;
    Ok((plan, dir))
}

/// The runs one `sweep run` runs.
pub struct Work {
    /// The plan.
    pub plan: Plan,
    /// Its results directory.
    pub dir: SweepDir,
    /// The selected runs' indices.
    pub indices: Vec<u64>,
    /// That the directory recorded another version of the sweep, and what differs.
    pub note: Option<String>,
}

impl Work {
    /// `sweep run FILE --out OUT [--index N [--chunk K]]`: with a sweep file, all its runs, or
    /// block `N` of `K` runs (one run without `K`); with a tasks file (its name ends in
    /// `.json`), task `N`'s runs, or all of them.
    pub fn select(
        file: &Path,
        out: &Path,
        index: Option<u64>,
        chunk: Option<u64>,
        allow_large: bool,
    ) -> Result<Work> {
        if file.extension().is_some_and(|e| e == "json") {
            let (plan, dir, indices) = Tasks::work(file, out, index, chunk, allow_large)?;
            return Ok(Work {
                plan,
                dir,
                indices,
                note: None,
            });
        }
        let (plan, dir) = open(file, out, allow_large)?;
        let note = dir.replaced.as_ref().map(|before| {
            format!(
                "{}: the sweep differs from the plan recorded there ({}); runs already there \
                 are kept, only the missing ones run",
                out.display(),
                plan.stamp.difference(before)
            )
        });
        let indices = match index {
            Some(n) => block(&plan, n, chunk.unwrap_or(1))?.collect(),
            None => (0..plan.runs).collect(),
        };
        Ok(Work {
            plan,
            dir,
            indices,
            note,
        })
    }

    /// When runs of `report` failed: the first errors, `run N: error` one per line, and the
    /// message that ends the command (how many failed, where their errors are, how to retry).
    pub fn failures(&self, report: &RunReport) -> Result<Option<(Vec<String>, String)>> {
        let Some((first, _)) = report.failed.first() else {
            return Ok(None);
        };
        let lines = report.failed.iter().take(FAILURES_SHOWN);
        let lines = lines.map(|(i, e)| format!("run {i}: {e}")).collect();
        let n = report.failed.len();
        let message = format!(
            "{n} run{} failed (each error is in {}); re-run the same command to retry them",
            if n == 1 { "" } else { "s" },
            self.dir
                .failure_path(&self.plan.run(*first)?.key())
                .display()
        );
        Ok(Some((lines, message)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::fixture;

    #[test]
    fn a_block_of_a_sweep_file_and_its_failures() {
        let f = fixture("work", "scenario = \"s.toml\"\n[axes]\nseed = \"1..5\"\n");
        let out = f.parent().unwrap().join("out");
        let w = Work::select(&f, &out, Some(1), Some(2), false).unwrap();
        assert_eq!(
            (w.indices.clone(), w.plan.runs, w.note.is_none()),
            (vec![2, 3], 5, true)
        );
        assert!(w.failures(&RunReport::default()).unwrap().is_none());
        let report = RunReport {
            failed: (0..7).map(|i| (i % 5, format!("e{i}"))).collect(),
            ..Default::default()
        };
        let (lines, message) = w.failures(&report).unwrap().unwrap();
        assert_eq!(
            lines,
            [
                "run 0: e0",
                "run 1: e1",
                "run 2: e2",
                "run 3: e3",
                "run 4: e4"
            ]
        );
        let first = w.dir.failure_path(&w.plan.run(0).unwrap().key());
        assert_eq!(
            message,
            format!(
                "7 runs failed (each error is in {}); re-run the same command to retry them",
                first.display()
            )
        );
        // The last block is cut at the plan's end; a block past it is refused.
        let w = Work::select(&f, &out, Some(2), Some(2), false).unwrap();
        assert_eq!(w.indices, [4]);
        assert!(Work::select(&f, &out, Some(3), Some(2), false).is_err());
    }
}
