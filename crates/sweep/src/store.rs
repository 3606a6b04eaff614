//! The results directory: one file per run, so that any number of processes on any number of
//! machines sharing a filesystem can fill it without talking to each other.
//!
//! ```text
//! DIR/sweep.json            the directory's plan (plan::Stamp, with longhaul's version): the
//!                           last plan run or submitted from a sweep file; `collect` reports it
//! DIR/sweep.toml            that plan's sweep file, for the record
//! DIR/plans/<hash>.json     every plan run or submitted here
//! DIR/runs/<key>.json       a finished run (plan::Run::key): the `sim --json` summary plus a
//!                           `sweep` key
//! DIR/runs/<key>.error.json a failed run's error (removed when a retry succeeds)
//! DIR/slurm/                the sbatch script, its tasks file and the tasks' logs (`slurm.rs`)
//! DIR/results.csv, results.jsonl, report.html   written by `collect`
//! ```
//!
//! Runs are stored under their configuration's key, not their index, so a sweep file that
//! grows (more axis values, seeds or scenario files) finds its finished runs in the same
//! directory and runs only the new ones. What would mix results of different things is
//! refused: a directory made by another longhaul version, and a scenario file whose content
//! differs from the one a plan recorded here (every plan is kept in `plans/`).
//!
//! Every file is written to a temporary name and renamed into place, so a run killed at any
//! moment leaves either its whole result or none; a run counts as finished exactly when
//! `runs/<key>.json` exists.

use crate::error::{Result, ScenarioChange, SweepError};
use crate::plan::{Run, Stamp};
use crate::spec::display;
use longhaul_metrics::summary::Summary;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
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

/// Where a run sits in its sweep, and what it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The run's index in the plan (in a collected table: the collected plan's index).
    pub index: u64,
    /// The run's key: its result is `runs/<key>.json`.
    pub key: String,
    /// The scenario file as written in the sweep file.
    pub scenario: String,
    /// The SHA-256 of the scenario file's content.
    pub scenario_sha256: String,
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
            key: run.key(),
            scenario: run.scenario.clone(),
            scenario_sha256: run.scenario_sha256.clone(),
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
    /// The plan `DIR/sweep.json` recorded before `create` replaced it with another.
    pub replaced: Option<Stamp>,
}

impl SweepDir {
    /// Open `root` for `stamp`'s runs and make `stamp` its plan (`sweep.json`, and
    /// `sweep_text` as `sweep.toml`): create it the first time; refuse it if it was made by
    /// another longhaul version or holds runs of a scenario file that has changed since.
    /// Safe for many processes starting at once: files are linked or renamed into place whole.
    pub fn create(root: &Path, stamp: &Stamp, sweep_text: Option<&str>) -> Result<SweepDir> {
        let found = Self::admit(root, stamp)?;
        let path = root.join("sweep.json");
        let text = serde_json::to_string_pretty(stamp).expect("a stamp always encodes") + "\n";
        let made = match &found {
            // Another process may make it first: then theirs is compared below.
            None => {
                if !longhaul_output::create_new(&path, text.as_bytes())?
                    && read_stamp(root)? != *stamp
                {
                    write(&path, text.as_bytes())?;
                }
                true
            }
            Some(f) if f != stamp => {
                write(&path, text.as_bytes())?;
                true
            }
            Some(_) => false,
        };
        if let Some(t) = sweep_text.filter(|_| made) {
            write(&root.join("sweep.toml"), t.as_bytes())?;
        }
        Ok(SweepDir {
            root: root.to_path_buf(),
            stamp: stamp.clone(),
            replaced: found.filter(|f| f.hash != stamp.hash),
        })
    }

    /// Open `root` for the runs of `stamp`, a plan recorded earlier (an array task's), with the
    /// checks of `create`, leaving the directory's plan as it is.
    pub fn join(root: &Path, stamp: &Stamp) -> Result<SweepDir> {
        let found = Self::admit(root, stamp)?;
        Ok(SweepDir {
            root: root.to_path_buf(),
            stamp: found.unwrap_or_else(|| stamp.clone()),
            replaced: None,
        })
    }

    /// Record that `engine`'s results go here (`DIR/engine`, written by the first run), or
    /// refuse if the directory holds another engine's: results of the simulator and of the lab
    /// never mix. A directory with results but no such file holds the simulator's.
    pub fn claim_engine(&self, engine: &str) -> Result<()> {
        let path = self.root.join("engine");
        let read = || {
            std::fs::read_to_string(&path)
                .ok()
                .map(|t| t.trim().to_string())
        };
        let recorded = match read() {
            Some(r) => r,
            None if !self.finished_keys()?.is_empty() => "sim".to_string(),
            None => {
                // Another process may record it first: then theirs is compared.
                if longhaul_output::create_new(&path, format!("{engine}\n").as_bytes())? {
                    return Ok(());
                }
                read().unwrap_or_default()
            }
        };
        if recorded == engine {
            return Ok(());
        }
        Err(SweepError::Engine {
            dir: self.root.clone(),
            recorded,
            wanted: engine.to_string(),
        })
    }

    /// Open an existing results directory with the plan it records.
    pub fn open(root: &Path) -> Result<SweepDir> {
        Ok(SweepDir {
            root: root.to_path_buf(),
            stamp: read_stamp(root)?,
            replaced: None,
        })
    }

    /// The checks of `create` and `join`; records `stamp` in `plans/`; returns the directory's
    /// plan, if it has one.
    fn admit(root: &Path, stamp: &Stamp) -> Result<Option<Stamp>> {
        let plans = root.join("plans");
        for d in [root.join("runs"), plans.clone()] {
            std::fs::create_dir_all(&d).map_err(|source| SweepError::Write { path: d, source })?;
        }
        let found = if root.join("sweep.json").exists() {
            Some(read_stamp(root)?)
        } else {
            None
        };
        if let Some(f) = &found {
            if f.longhaul != stamp.longhaul {
                return Err(SweepError::VersionChanged {
                    what: root.display().to_string(),
                    found: f.longhaul.clone(),
                    ours: stamp.longhaul.clone(),
                });
            }
        }
        for earlier in found.iter().cloned().chain(recorded_plans(&plans)?) {
            for s in &stamp.scenarios {
                let same_file = earlier.scenarios.iter().find(|e| e.path == s.path);
                if let Some(e) = same_file.filter(|e| e.sha256 != s.sha256) {
                    return Err(SweepError::ScenarioChanged(Box::new(ScenarioChange {
                        file: s.file.clone(),
                        path: s.path.clone(),
                        then: e.sha256.clone(),
                        now: s.sha256.clone(),
                        since: format!(
                            "{} recorded a plan with it in plans/{}.json",
                            root.display(),
                            earlier.hash
                        ),
                        advice: "restore the file, or use another --out directory".into(),
                    })));
                }
            }
        }
        let text = serde_json::to_string_pretty(stamp).expect("a stamp always encodes") + "\n";
        longhaul_output::create_new(&plans.join(format!("{}.json", stamp.hash)), text.as_bytes())?;
        Ok(found)
    }

    /// Where the run with key `key` stores its result (`runs/KEY.json`).
    pub fn result_path(&self, key: &str) -> PathBuf {
        self.root.join("runs").join(format!("{key}.json"))
    }

    /// Where the run with key `key` stores its failure (`runs/KEY.error.json`).
    pub fn failure_path(&self, key: &str) -> PathBuf {
        self.root.join("runs").join(format!("{key}.error.json"))
    }

    /// Whether `run` has a stored result.
    pub fn is_done(&self, run: &Run) -> bool {
        self.result_path(&run.key()).exists()
    }

    /// The keys of every stored result, of this plan's runs or others'.
    pub fn finished_keys(&self) -> Result<HashSet<String>> {
        let dir = self.root.join("runs");
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
            Err(e) => {
                return Err(SweepError::BadResult {
                    path: dir,
                    message: e.to_string(),
                })
            }
        };
        let mut keys = HashSet::new();
        for e in entries {
            let e = e.map_err(|e| SweepError::BadResult {
                path: dir.clone(),
                message: e.to_string(),
            })?;
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(key) = name.strip_suffix(".json") {
                if !key.ends_with(".error") {
                    keys.insert(key.to_string());
                }
            }
        }
        Ok(keys)
    }

    /// Store a finished run and drop the error of an earlier failed try.
    pub fn write_result(&self, record: &RunRecord) -> Result<()> {
        let path = self.result_path(&record.sweep.key);
        let mut text = serde_json::to_string_pretty(record).map_err(|e| SweepError::BadResult {
            path: path.clone(),
            message: format!("cannot encode the result: {e}"),
        })?;
        text.push('\n');
        write(&path, text.as_bytes())?;
        let _ = std::fs::remove_file(self.failure_path(&record.sweep.key));
        Ok(())
    }

    /// Store a failed run's error, kept until a retry succeeds.
    pub fn write_failure(&self, failure: &RunFailure) -> Result<()> {
        let path = self.failure_path(&failure.sweep.key);
        let text = serde_json::to_string_pretty(failure).expect("a failure always encodes") + "\n";
        write(&path, text.as_bytes())
    }

    /// `run`'s record, labelled with `run`'s place in its plan (a run made for a smaller plan
    /// had another index), or `None` if it has not finished.
    pub fn read_result(&self, run: &Run) -> Result<Option<RunRecord>> {
        let path = self.result_path(&run.key());
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
        let mut record: RunRecord =
            serde_json::from_str(&text).map_err(|e| SweepError::BadResult {
                path: path.clone(),
                message: format!(
                    "not a sweep run result ({e}); remove it and re-run `longhaul sweep run` to \
                     redo this run"
                ),
            })?;
        let info = RunInfo::of(run);
        if record.sweep.key != info.key || record.sweep.scenario_sha256 != info.scenario_sha256 {
            return Err(SweepError::BadResult {
                path,
                message: format!(
                    "holds another configuration than run {} ({}); remove it and re-run \
                     `longhaul sweep run` to redo this run",
                    run.index,
                    run.label()
                ),
            });
        }
        record.sweep = info;
        Ok(Some(record))
    }

    /// `run`'s error, if its last try failed.
    pub fn read_failure(&self, run: &Run) -> Option<RunFailure> {
        let text = std::fs::read_to_string(self.failure_path(&run.key())).ok()?;
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

/// `DIR/sweep.json`; a file of the layout that stored runs by index is named as such.
fn read_stamp(root: &Path) -> Result<Stamp> {
    let path = root.join("sweep.json");
    let text = std::fs::read_to_string(&path).map_err(|e| SweepError::NotASweepDir {
        dir: root.to_path_buf(),
        why: format!("cannot read sweep.json: {e}"),
    })?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| SweepError::NotASweepDir {
            dir: root.to_path_buf(),
            why: format!("sweep.json is not JSON: {e}"),
        })?;
    if value.get("hash").is_some() && value.get("longhaul").is_none() {
        return Err(SweepError::UnknownLayout {
            dir: root.to_path_buf(),
        });
    }
    serde_json::from_value(value).map_err(|e| SweepError::NotASweepDir {
        dir: root.to_path_buf(),
        why: format!("sweep.json is not a sweep plan: {e}"),
    })
}

/// The plans recorded in `DIR/plans/`.
fn recorded_plans(plans: &Path) -> Result<Vec<Stamp>> {
    let bad = |path: PathBuf, message: String| SweepError::BadResult { path, message };
    let mut out = Vec::new();
    let entries = std::fs::read_dir(plans).map_err(|e| bad(plans.to_path_buf(), e.to_string()))?;
    for e in entries {
        let path = e
            .map_err(|e| bad(plans.to_path_buf(), e.to_string()))?
            .path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| bad(path.clone(), e.to_string()))?;
        out.push(serde_json::from_str(&text).map_err(|e| {
            bad(
                path.clone(),
                format!("not a recorded sweep plan ({e}); restore it or remove it"),
            )
        })?);
    }
    Ok(out)
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
        assert!(!dir.is_done(&run));
        dir.write_failure(&RunFailure {
            sweep: RunInfo::of(&run),
            error: "boom".into(),
        })
        .unwrap();
        assert_eq!(dir.read_failure(&run).unwrap().error, "boom");
        dir.write_result(&record).unwrap();
        assert!(dir.is_done(&run) && dir.read_failure(&run).is_none());
        let back = dir.read_result(&run).unwrap().unwrap();
        assert_eq!(
            serde_json::to_string_pretty(&back).unwrap(),
            serde_json::to_string_pretty(&record).unwrap()
        );
        assert_eq!(dir.read_result(&plan.run(2).unwrap()).unwrap(), None);
        // The file is a summary with one more key: the metrics crate reads it as one.
        let path = dir.result_path(&run.key());
        let s = Summary::read(&path).unwrap();
        assert_eq!(s.to_json().unwrap(), example_summary().to_json().unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("\"seed\": 2") && text.contains("\"links.0.loss\": 1e-6"),
            "{text}"
        );
        // No temporary files are left behind.
        let names: Vec<String> = std::fs::read_dir(out.join("runs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [format!("{}.json", run.key())]);
        assert_eq!(dir.finished_keys().unwrap(), HashSet::from([run.key()]));
        // A record of another configuration under this run's name is refused, not relabelled.
        let other = RunRecord {
            sweep: RunInfo::of(&plan.run(0).unwrap()),
            summary: example_summary(),
        };
        std::fs::write(&path, serde_json::to_string(&other).unwrap()).unwrap();
        let e = dir.read_result(&run).unwrap_err().to_string();
        assert!(e.contains("holds another configuration than run 3"), "{e}");
    }

    #[test]
    fn a_grown_plan_finds_its_finished_runs_under_new_indices() {
        let f = fixture("grown", "scenario = \"s.toml\"\n[axes]\nseed = [1, 2]\n");
        let out = f.parent().unwrap().join("out");
        let a = Plan::load(&f, false).unwrap();
        let dir = SweepDir::create(&out, &a.stamp, Some("a")).unwrap();
        assert!(dir.replaced.is_none());
        let seed2 = a.run(1).unwrap();
        dir.write_result(&RunRecord {
            sweep: RunInfo::of(&seed2),
            summary: example_summary(),
        })
        .unwrap();
        // The same plan opens again, unchanged.
        assert!(SweepDir::create(&out, &a.stamp, None)
            .unwrap()
            .replaced
            .is_none());
        std::fs::write(&f, "scenario = \"s.toml\"\n[axes]\nseed = [0, 1, 2]\n").unwrap();
        let b = Plan::load(&f, false).unwrap();
        let dir = SweepDir::create(&out, &b.stamp, Some("b")).unwrap();
        let replaced = dir.replaced.as_ref().unwrap();
        assert_eq!(
            b.stamp.difference(replaced),
            "seed: 3 values against 2; 3 runs against 2"
        );
        // Seed 2 is run 2 now: the same key, relabelled with its new index.
        let run = b.run(2).unwrap();
        assert_eq!(run.key(), seed2.key());
        assert!(dir.is_done(&run) && !dir.is_done(&b.run(0).unwrap()));
        assert_eq!(dir.read_result(&run).unwrap().unwrap().sweep.index, 2);
        // The directory records the newest plan, and every plan it has run.
        assert_eq!(SweepDir::open(&out).unwrap().stamp, b.stamp);
        assert_eq!(
            std::fs::read_to_string(out.join("sweep.toml")).unwrap(),
            "b"
        );
        let mut plans: Vec<String> = std::fs::read_dir(out.join("plans"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        plans.sort();
        let mut expected = [&a.stamp.hash, &b.stamp.hash].map(|h| format!("{h}.json"));
        expected.sort();
        assert_eq!(plans, expected);
        // An array task of the earlier plan joins without changing the directory's plan.
        SweepDir::join(&out, &a.stamp).unwrap();
        assert_eq!(SweepDir::open(&out).unwrap().stamp, b.stamp);
    }

    #[test]
    fn what_would_mix_results_is_refused_and_changes_nothing() {
        let f = fixture("mix", "scenario = \"s.toml\"\n[axes]\nseed = [1, 2]\n");
        let out = f.parent().unwrap().join("out");
        let a = Plan::load(&f, false).unwrap();
        SweepDir::create(&out, &a.stamp, None).unwrap();
        let stamp_file = out.join("sweep.json");
        let recorded = std::fs::read(&stamp_file).unwrap();

        // The scenario changed since a plan with it was recorded here.
        let s = f.parent().unwrap().join("s.toml");
        let text = std::fs::read_to_string(&s).unwrap();
        std::fs::write(&s, text.replace("60s", "30s")).unwrap();
        let b = Plan::load(&f, false).unwrap();
        let e = SweepDir::create(&out, &b.stamp, None)
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("scenario s.toml ("), "{e}");
        assert!(
            e.contains(&format!(
                ") has changed since {} recorded a plan with it in plans/{}.json (SHA-256 {} \
                 then, {} now): results of two versions of one scenario must not mix; restore \
                 the file, or use another --out directory",
                out.display(),
                a.stamp.hash,
                &a.stamp.scenarios[0].sha256[..12],
                &b.stamp.scenarios[0].sha256[..12]
            )),
            "{e}"
        );
        // Also when the current plan no longer has the file: every plan run here counts.
        std::fs::write(f.parent().unwrap().join("u.toml"), &text).unwrap();
        std::fs::write(&f, "scenario = \"u.toml\"\n[axes]\nseed = [1, 2]\n").unwrap();
        let c = Plan::load(&f, false).unwrap();
        SweepDir::create(&out, &c.stamp, None).unwrap();
        assert!(SweepDir::create(&out, &b.stamp, None).is_err());
        std::fs::write(&s, &text).unwrap();
        SweepDir::create(&out, &a.stamp, None).unwrap();
        assert_eq!(std::fs::read(&stamp_file).unwrap(), recorded);

        // Another longhaul version.
        let other = String::from_utf8(recorded.clone()).unwrap().replace(
            &format!("\"longhaul\": \"{}\"", crate::plan::VERSION),
            "\"longhaul\": \"0.0.9\"",
        );
        std::fs::write(&stamp_file, &other).unwrap();
        let e = SweepDir::create(&out, &a.stamp, None)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            e,
            format!(
                "{} was made by longhaul 0.0.9, and this is longhaul {}: runs of two versions must \
                 not mix, since the simulator's results may differ between them; use longhaul \
                 0.0.9 with it, or start again in another --out directory",
                out.display(),
                crate::plan::VERSION
            )
        );
        assert!(SweepDir::join(&out, &a.stamp).is_err());
        assert_eq!(std::fs::read_to_string(&stamp_file).unwrap(), other);

        // The layout that stored runs by index.
        let mut old: serde_json::Value = serde_json::from_slice(&recorded).unwrap();
        old.as_object_mut().unwrap().remove("longhaul");
        std::fs::write(&stamp_file, old.to_string()).unwrap();
        let e = SweepDir::create(&out, &a.stamp, None)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("holds runs stored by index by an earlier longhaul"),
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
