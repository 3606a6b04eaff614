//! A submission's runs, frozen: `DIR/slurm/tasks-<id>.json` holds the plan as it was submitted
//! (a [`Stamp`], from which every index's configuration follows), the runs to do (ranges of
//! indices: those without a result at submission) and how many runs each task takes.
//!
//! An array task runs `longhaul sweep run TASKS --out DIR --index T`: the runs of task T, as
//! they were when the array was submitted, whatever the sweep file says by the time the task
//! starts. Tasks are numbered from 0, each a block of `chunk` runs of the list (the last may be
//! shorter), so an array of `tasks()` tasks does exactly the missing runs and no task is
//! started for runs already finished.

use crate::error::{Result, SweepError};
use crate::plan::{Plan, Stamp};
use crate::store::SweepDir;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The runs handed to an array's tasks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tasks {
    /// The plan as submitted.
    pub plan: Stamp,
    /// Runs per task.
    pub chunk: u64,
    /// The runs to do, as `[start, end)` ranges of the plan's indices, in order.
    pub runs: Vec<[u64; 2]>,
}

/// The runs of `plan` without a result in `dir`, as ranges of indices.
pub fn missing(plan: &Plan, dir: &SweepDir) -> Result<Vec<Range<u64>>> {
    let done = dir.finished_keys()?;
    if done.is_empty() {
        let all = 0..plan.runs;
        return Ok(if all.is_empty() {
            Vec::new()
        } else {
            vec![all]
        });
    }
    let mut ranges: Vec<Range<u64>> = Vec::new();
    for i in 0..plan.runs {
        if done.contains(&plan.run(i)?.key()) {
            continue;
        }
        match ranges.last_mut() {
            Some(r) if r.end == i => r.end = i + 1,
            _ => ranges.push(i..i + 1),
        }
    }
    Ok(ranges)
}

impl Tasks {
    /// `runs` of `plan`, `chunk` per task.
    pub fn new(plan: &Plan, runs: &[Range<u64>], chunk: u64) -> Tasks {
        Tasks {
            plan: plan.stamp.clone(),
            chunk: chunk.max(1),
            runs: runs.iter().map(|r| [r.start, r.end]).collect(),
        }
    }

    /// How many runs the tasks do.
    pub fn len(&self) -> u64 {
        self.runs.iter().map(|[a, b]| b.saturating_sub(*a)).sum()
    }

    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many tasks there are.
    pub fn tasks(&self) -> u64 {
        self.len().div_ceil(self.chunk.max(1))
    }

    /// Every run of every task, in order.
    pub fn all(&self) -> impl Iterator<Item = u64> + '_ {
        self.runs.iter().flat_map(|&[a, b]| a..b)
    }

    /// The indices task `task` runs; `file` names the tasks file in the error for a task
    /// beyond the last.
    pub fn task(&self, task: u64, file: &Path) -> Result<Vec<u64>> {
        if task >= self.tasks() {
            return Err(SweepError::TaskOutOfRange {
                file: file.to_path_buf(),
                task,
                tasks: self.tasks(),
            });
        }
        let chunk = self.chunk.max(1);
        let mut skip = task * chunk;
        let mut out = Vec::new();
        for &[a, b] in &self.runs {
            let n = b.saturating_sub(a);
            if skip >= n {
                skip -= n;
                continue;
            }
            let take = (n - skip).min(chunk - out.len() as u64);
            out.extend(a + skip..a + skip + take);
            skip = 0;
            if out.len() as u64 == chunk {
                break;
            }
        }
        Ok(out)
    }

    /// The file's content.
    fn text(&self) -> String {
        serde_json::to_string(self).expect("tasks always encode") + "\n"
    }

    /// The file's name in `DIR/slurm/`: `tasks-<hash of the content>.json` (the same tasks,
    /// the same file: a running array's file is never replaced by other tasks).
    pub fn file_name(&self) -> String {
        let id: String = Sha256::digest(self.text().as_bytes())
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("tasks-{id}.json")
    }

    /// Write the tasks into `dir`'s `slurm/` under [`Tasks::file_name`].
    pub fn write(&self, dir: &SweepDir) -> Result<PathBuf> {
        let folder = dir.root.join("slurm");
        std::fs::create_dir_all(&folder).map_err(|source| SweepError::Write {
            path: folder.clone(),
            source,
        })?;
        let path = folder.join(self.file_name());
        longhaul_output::create_new(&path, self.text().as_bytes())?;
        Ok(path)
    }

    /// `longhaul sweep run TASKS.json [--index T]`: the plan the tasks file records (its
    /// scenarios checked), the sweep directory `out` that holds its results, and the runs of
    /// task `task` (all of them without one). A tasks file fixes each task's runs: `chunk`
    /// is refused.
    pub fn work(
        file: &Path,
        out: &Path,
        task: Option<u64>,
        chunk: Option<u64>,
        allow_large: bool,
    ) -> Result<(Plan, SweepDir, Vec<u64>)> {
        if chunk.is_some() {
            return Err(SweepError::Syntax {
                file: file.to_path_buf(),
                message: "a tasks file fixes each task's runs; drop --chunk".into(),
            });
        }
        let tasks = Tasks::load(file)?;
        let plan = Plan::from_stamp(tasks.plan.clone(), file, allow_large)?;
        plan.check_scenarios()?;
        let dir = SweepDir::join(out, &plan.stamp)?;
        let indices = match task {
            Some(t) => tasks.task(t, file)?,
            None => tasks.all().collect(),
        };
        Ok((plan, dir, indices))
    }

    /// Read a tasks file.
    pub fn load(path: &Path) -> Result<Tasks> {
        let text = std::fs::read_to_string(path).map_err(|source| SweepError::Read {
            file: path.to_path_buf(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|e| SweepError::Syntax {
            file: path.to_path_buf(),
            message: format!(
                "not a tasks file of `longhaul sweep submit` ({e}); give a sweep file (TOML) or \
                 DIR/slurm/tasks-….json"
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::fixture;

    #[test]
    fn tasks_are_blocks_of_the_missing_runs() {
        let f = fixture("tasks", "scenario = \"s.toml\"\n[axes]\nseed = \"1..10\"\n");
        let plan = Plan::load(&f, false).unwrap();
        let t = Tasks::new(&plan, &[1..2, 4..8, 9..10], 2);
        assert_eq!((t.len(), t.tasks()), (6, 3));
        let file = Path::new("tasks.json");
        let tasks: Vec<Vec<u64>> = (0..3).map(|i| t.task(i, file).unwrap()).collect();
        assert_eq!(tasks, [vec![1, 4], vec![5, 6], vec![7, 9]]);
        assert_eq!(t.all().collect::<Vec<_>>(), [1, 4, 5, 6, 7, 9]);
        let e = t.task(3, file).unwrap_err().to_string();
        assert_eq!(e, "task 3 is beyond the 3 tasks of tasks.json (0 to 2)");
        let t = Tasks::new(&plan, &[Range { start: 0, end: 10 }], 4);
        assert_eq!(t.task(2, file).unwrap(), [8, 9]);
        assert!(Tasks::new(&plan, &[], 4).is_empty());
    }

    #[test]
    fn missing_runs_are_those_without_a_result() {
        let f = fixture(
            "missing",
            "scenario = \"s.toml\"\n[axes]\nseed = \"1..6\"\n",
        );
        let plan = Plan::load(&f, false).unwrap();
        let out = f.parent().unwrap().join("out");
        let dir = SweepDir::create(&out, &plan.stamp, None).unwrap();
        assert_eq!(missing(&plan, &dir).unwrap(), [Range { start: 0, end: 6 }]);
        for i in [0, 2, 3] {
            let key = plan.run(i).unwrap().key();
            std::fs::write(dir.result_path(&key), "{}").unwrap();
        }
        assert_eq!(missing(&plan, &dir).unwrap(), [1..2, 4..6]);
        // Written once, read back the same, under a name of its content.
        let t = Tasks::new(&plan, &missing(&plan, &dir).unwrap(), 2);
        let path = t.write(&dir).unwrap();
        assert_eq!(t.write(&dir).unwrap(), path);
        assert_eq!(path, out.join("slurm").join(t.file_name()));
        assert_eq!(Tasks::load(&path).unwrap(), t);
        let e = Tasks::load(&f).unwrap_err().to_string();
        assert!(e.contains("not a tasks file"), "{e}");
    }
}
