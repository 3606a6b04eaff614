//! The results directory: one file per run, so that any number of processes on any number of
//! machines sharing a filesystem can fill it without talking to each other.
//!
//! ```text
//! DIR/sweep.json            the plan's stamp (plan::Stamp): refuses runs of a changed sweep
//! DIR/sweep.toml            a copy of the sweep file, for the record
//! DIR/runs/<index>.json     a finished run: the `sim --json` summary plus a `sweep` key
//! DIR/runs/<index>.error.json  a failed run's error (removed when a retry succeeds)
//! DIR/slurm/                the sbatch script and the tasks' logs (`slurm.rs`)
//! DIR/results.csv, results.jsonl, report.html   written by `collect`
//! ```
//!
//! Every file is written to a temporary name and renamed into place, so a run killed at any
//! moment leaves either its whole result or none; a run counts as finished exactly when
//! `runs/<index>.json` exists.

use crate::error::{Result, SweepError};
use crate::plan::{Run, Stamp};
use crate::spec::display;
use longhaul_metrics::summary::Summary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A finished run: the simulator's summary (the JSON `longhaul sim --json` writes, so
/// `longhaul compare` reads these files as they are) with the run's place in the sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Where the run sits in the sweep.
    pub sweep: RunInfo,
    #[serde(flatten)]
    /// The simulator's summary, its fields at the top level of the file.
    pub summary: Summary,
}

/// Where a run sits in its sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The run's index in the plan.
    pub index: u64,
    /// The scenario file as written in the sweep file.
    pub scenario: String,
    /// Axis values by axis name (`plan::Stamp::axes` gives the column order).
    pub axes: BTreeMap<String, serde_json::Value>,
    /// `longhaul sim SCENARIO --set …` with these reproduces the run.
    pub sets: Vec<String>,
}

/// A failed run, kept until a retry succeeds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFailure {
    /// Where the run sits in the sweep.
    pub sweep: RunInfo,
    /// The error the run stopped with.
    pub error: String,
}

impl RunInfo {
    /// The record of `run`.
    pub fn of(run: &Run) -> RunInfo {
        RunInfo {
            index: run.index,
            scenario: run.scenario.clone(),
            axes: run
                .axes
                .iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
            sets: run.sets.clone(),
        }
    }
}

/// Axis values keep their type in JSON (numbers stay numbers); a TOML value always has a JSON
/// form (dates become strings).
fn toml_to_json(v: &toml::Value) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or_else(|_| serde_json::Value::String(display(v)))
}

/// A results directory, checked against a plan or opened as it is.
pub struct SweepDir {
    /// The directory.
    pub root: PathBuf,
    /// The plan it records (`DIR/sweep.json`).
    pub stamp: Stamp,
}

impl SweepDir {
    /// Open `root` for `stamp`'s runs: create it, record the stamp the first time, and refuse
    /// it if it holds another plan's results. Safe for many processes starting at once: the
    /// stamp is linked into place, so exactly one of them creates it and the rest compare.
    pub fn create(root: &Path, stamp: &Stamp, sweep_text: Option<&str>) -> Result<SweepDir> {
        let runs = root.join("runs");
        std::fs::create_dir_all(&runs).map_err(|source| SweepError::Write {
            path: runs.clone(),
            source,
        })?;
        let path = root.join("sweep.json");
        if !path.exists() {
            let text = serde_json::to_string_pretty(stamp).expect("a stamp always encodes") + "\n";
            // Another process may make it first: then compare with theirs below.
            if longhaul_output::create_new(&path, text.as_bytes())? {
                if let Some(text) = sweep_text {
                    write(&root.join("sweep.toml"), text.as_bytes())?;
                }
            }
        }
        let found = read_stamp(root)?;
        if found.hash != stamp.hash {
            return Err(SweepError::PlanChanged {
                dir: root.to_path_buf(),
                found: found.hash.clone(),
                expected: stamp.hash.clone(),
                what: found.difference(stamp),
            });
        }
        Ok(SweepDir {
            root: root.to_path_buf(),
            stamp: found,
        })
    }

    /// Open an existing results directory with the plan it records.
    pub fn open(root: &Path) -> Result<SweepDir> {
        Ok(SweepDir {
            root: root.to_path_buf(),
            stamp: read_stamp(root)?,
        })
    }

    /// Where run `index`'s result is stored (`runs/INDEX.json`).
    pub fn result_path(&self, index: u64) -> PathBuf {
        self.root.join("runs").join(format!("{index}.json"))
    }

    /// Where run `index`'s failure is stored (`runs/INDEX.error.json`).
    pub fn failure_path(&self, index: u64) -> PathBuf {
        self.root.join("runs").join(format!("{index}.error.json"))
    }

    /// Whether run `index` has a stored result.
    pub fn is_done(&self, index: u64) -> bool {
        self.result_path(index).exists()
    }

    /// Store a finished run and drop the error of an earlier failed try.
    pub fn write_result(&self, record: &RunRecord) -> Result<()> {
        let path = self.result_path(record.sweep.index);
        let mut text = serde_json::to_string_pretty(record).map_err(|e| SweepError::BadResult {
            path: path.clone(),
            message: format!("cannot encode the result: {e}"),
        })?;
        text.push('\n');
        write(&path, text.as_bytes())?;
        let _ = std::fs::remove_file(self.failure_path(record.sweep.index));
        Ok(())
    }

    /// Store a failed run's error, kept until a retry succeeds.
    pub fn write_failure(&self, failure: &RunFailure) -> Result<()> {
        let path = self.failure_path(failure.sweep.index);
        let text = serde_json::to_string_pretty(failure).expect("a failure always encodes") + "\n";
        write(&path, text.as_bytes())
    }

    /// A finished run's record, or `None` if it has not finished.
    pub fn read_result(&self, index: u64) -> Result<Option<RunRecord>> {
        let path = self.result_path(index);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(SweepError::BadResult {
                    path,
                    message: e.to_string(),
                })
            }
        };
        let record: RunRecord = serde_json::from_str(&text).map_err(|e| SweepError::BadResult {
            path: path.clone(),
            message: format!(
                "not a sweep run result ({e}); remove it and re-run `longhaul sweep run` to redo \
                 this run"
            ),
        })?;
        if record.sweep.index != index {
            return Err(SweepError::BadResult {
                path,
                message: format!("holds run {}, not run {index}", record.sweep.index),
            });
        }
        Ok(Some(record))
    }

    /// A failed run's error, if its last try failed.
    pub fn read_failure(&self, index: u64) -> Option<RunFailure> {
        let text = std::fs::read_to_string(self.failure_path(index)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Write a file of the directory (atomically).
    pub fn write_file(&self, name: &str, bytes: &[u8]) -> Result<PathBuf> {
        let path = self.root.join(name);
        write(&path, bytes)?;
        Ok(path)
    }
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(longhaul_output::write(path, bytes)?)
}

fn read_stamp(root: &Path) -> Result<Stamp> {
    let path = root.join("sweep.json");
    let text = std::fs::read_to_string(&path).map_err(|e| SweepError::NotASweepDir {
        dir: root.to_path_buf(),
        why: format!("cannot read sweep.json: {e}"),
    })?;
    serde_json::from_str(&text).map_err(|e| SweepError::NotASweepDir {
        dir: root.to_path_buf(),
        why: format!("sweep.json is not a sweep plan: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;
    use crate::testkit::fixture;
    use longhaul_metrics::example::example_summary;

    #[test]
    fn records_round_trip_and_read_as_plain_summaries() {
        let f = fixture(
            "store",
            "scenario = \"s.toml\"\n[axes]\nseed = [1, 2]\n\"links.0.loss\" = [0, 1e-6]\n",
        );
        let plan = Plan::load(&f, false).unwrap();
        let out = f.parent().unwrap().join("out");
        let dir = SweepDir::create(&out, &plan.stamp, Some("x")).unwrap();
        let run = plan.run(3).unwrap();
        let record = RunRecord {
            sweep: RunInfo::of(&run),
            summary: example_summary(),
        };
        assert!(!dir.is_done(3));
        dir.write_failure(&RunFailure {
            sweep: RunInfo::of(&run),
            error: "boom".into(),
        })
        .unwrap();
        assert_eq!(dir.read_failure(3).unwrap().error, "boom");
        dir.write_result(&record).unwrap();
        assert!(dir.is_done(3) && dir.read_failure(3).is_none());
        let back = dir.read_result(3).unwrap().unwrap();
        assert_eq!(
            serde_json::to_string_pretty(&back).unwrap(),
            serde_json::to_string_pretty(&record).unwrap()
        );
        assert_eq!(dir.read_result(2).unwrap(), None);
        // The file is a summary with one more key: the metrics crate reads it as one.
        let s = Summary::read(&dir.result_path(3)).unwrap();
        assert_eq!(s.to_json().unwrap(), example_summary().to_json().unwrap());
        let text = std::fs::read_to_string(dir.result_path(3)).unwrap();
        assert!(
            text.contains("\"seed\": 2") && text.contains("\"links.0.loss\": 1e-6"),
            "{text}"
        );
        // No temporary files are left behind.
        let names: Vec<String> = std::fs::read_dir(out.join("runs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["3.json"]);
    }

    #[test]
    fn a_changed_plan_is_refused_with_what_changed() {
        let f = fixture("stamp", "scenario = \"s.toml\"\n[axes]\nseed = [1, 2]\n");
        let out = f.parent().unwrap().join("out");
        let a = Plan::load(&f, false).unwrap();
        SweepDir::create(&out, &a.stamp, None).unwrap();
        // The same plan opens again.
        SweepDir::create(&out, &a.stamp, None).unwrap();
        std::fs::write(&f, "scenario = \"s.toml\"\n[axes]\nseed = [1, 2, 3]\n").unwrap();
        let b = Plan::load(&f, false).unwrap();
        let e = SweepDir::create(&out, &b.stamp, None)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("holds results of a different sweep"), "{e}");
        assert!(
            e.contains("the axes or their values differ, 3 runs against 2"),
            "{e}"
        );
        assert!(e.contains("use another --out directory"), "{e}");
        let e = SweepDir::open(f.parent().unwrap())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("is not a sweep directory"), "{e}");
    }
}
