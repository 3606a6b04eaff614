//! Slurm: an sbatch array script whose every task runs `longhaul sweep run FILE --index
//! $SLURM_ARRAY_TASK_ID`, and its submission with `sbatch`.
//!
//! longhaul schedules nothing itself (`docs/sweep.md`): the array job is Slurm's,
//! the results directory is on the cluster's shared filesystem, and a task that dies is redone
//! by submitting again (finished runs are skipped). A cluster caps an array's size
//! (MaxArraySize, 1001 by default), so a larger sweep is cut into equal blocks of runs, one per
//! task (`--chunk`).

use crate::error::{Result, SweepError};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What `longhaul sweep submit --slurm` was asked for.
#[derive(Clone, Debug)]
pub struct SlurmOptions {
    pub partition: Option<String>,
    /// Time limit per task, in Slurm's format (`30`, `1:00:00`, `2-00:00:00`).
    pub time: Option<String>,
    pub cpus_per_task: u32,
    /// At most this many array tasks; more runs are cut into blocks.
    pub array_limit: u64,
    /// Runs per task (default: as few as the array limit allows).
    pub chunk: Option<u64>,
    /// At most this many tasks running at once (sbatch's `%N`).
    pub max_running: Option<u64>,
    /// The `longhaul` binary the tasks run: on the shared filesystem.
    pub longhaul: PathBuf,
}

/// How a sweep maps onto an array: `tasks` tasks of `chunk` runs (the last may be shorter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayShape {
    pub tasks: u64,
    pub chunk: u64,
}

impl ArrayShape {
    pub fn new(runs: u64, array_limit: u64, chunk: Option<u64>) -> ArrayShape {
        let limit = array_limit.max(1);
        let chunk = chunk.unwrap_or_else(|| runs.div_ceil(limit)).max(1);
        ArrayShape {
            tasks: runs.div_ceil(chunk).max(1),
            chunk,
        }
    }
}

/// Quote for the shell: `'…'`, with embedded quotes closed and reopened.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The sbatch script. `sweep_file` and `out` should be absolute (tasks start elsewhere).
pub fn script(
    name: &str,
    runs: u64,
    sweep_file: &Path,
    out: &Path,
    opts: &SlurmOptions,
) -> Result<String> {
    let shape = ArrayShape::new(runs, opts.array_limit, opts.chunk);
    if shape.tasks > opts.array_limit {
        return Err(SweepError::Submit(format!(
            "{runs} runs in blocks of {} make {} array tasks, more than --array-limit {}; raise \
             --chunk to at least {}",
            shape.chunk,
            shape.tasks,
            opts.array_limit,
            runs.div_ceil(opts.array_limit.max(1))
        )));
    }
    let job = format!(
        "longhaul-{}",
        name.replace(|c: char| c.is_whitespace(), "_")
    );
    let mut s = String::from("#!/bin/bash\n");
    s.push_str(&format!(
        "# {runs} runs of sweep `{name}` as {} array task{} of {} run{} each (the last may be \
         shorter).\n# Written by `longhaul sweep submit`; re-submitting skips finished runs.\n",
        shape.tasks,
        if shape.tasks == 1 { "" } else { "s" },
        shape.chunk,
        if shape.chunk == 1 { "" } else { "s" },
    ));
    s.push_str(&format!("#SBATCH --job-name={job}\n"));
    let throttle = opts
        .max_running
        .map(|m| format!("%{m}"))
        .unwrap_or_default();
    s.push_str(&format!(
        "#SBATCH --array=0-{}{throttle}\n",
        shape.tasks - 1
    ));
    s.push_str(&format!(
        "#SBATCH --cpus-per-task={}\n",
        opts.cpus_per_task.max(1)
    ));
    if let Some(p) = &opts.partition {
        s.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    if let Some(t) = &opts.time {
        s.push_str(&format!("#SBATCH --time={t}\n"));
    }
    // %A: the array's job id, %a: the task id. sbatch does not expand variables here.
    let logs = out.join("slurm");
    s.push_str(&format!(
        "#SBATCH --output={}\n",
        logs.join("%A_%a.out").display()
    ));
    s.push_str("set -euo pipefail\n");
    s.push_str(&format!(
        "exec {} sweep run {} --out {} --index \"$SLURM_ARRAY_TASK_ID\" --chunk {} \
         --jobs \"${{SLURM_CPUS_PER_TASK:-1}}\"\n",
        quote(&opts.longhaul.display().to_string()),
        quote(&sweep_file.display().to_string()),
        quote(&out.display().to_string()),
        shape.chunk
    ));
    Ok(s)
}

/// Submit `script` with `sbatch --parsable`; returns the job id.
pub fn submit(script: &Path) -> Result<String> {
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(script)
        .output()
        .map_err(|e| {
            SweepError::Submit(format!(
                "cannot run sbatch ({e}): submit from a machine with Slurm's client commands, or \
                 use --dry-run to write {} only",
                script.display()
            ))
        })?;
    if !out.status.success() {
        return Err(SweepError::Submit(format!(
            "sbatch refused {}: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    // `--parsable` prints "jobid" or "jobid;cluster".
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() {
        return Err(SweepError::Submit(format!(
            "sbatch accepted {} but printed no job id",
            script.display()
        )));
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> SlurmOptions {
        SlurmOptions {
            partition: Some("short".into()),
            time: Some("10:00".into()),
            cpus_per_task: 1,
            array_limit: 1000,
            chunk: None,
            max_running: None,
            longhaul: "/opt/longhaul/bin/longhaul".into(),
        }
    }

    #[test]
    fn arrays_are_cut_into_blocks_past_the_limit() {
        assert_eq!(
            ArrayShape::new(24, 1000, None),
            ArrayShape {
                tasks: 24,
                chunk: 1
            }
        );
        assert_eq!(
            ArrayShape::new(24, 8, None),
            ArrayShape { tasks: 8, chunk: 3 }
        );
        assert_eq!(
            ArrayShape::new(25, 8, None),
            ArrayShape { tasks: 7, chunk: 4 }
        );
        assert_eq!(
            ArrayShape::new(2500, 1000, None),
            ArrayShape {
                tasks: 834,
                chunk: 3
            }
        );
        assert_eq!(
            ArrayShape::new(24, 1000, Some(5)),
            ArrayShape { tasks: 5, chunk: 5 }
        );
    }

    #[test]
    fn script_runs_each_block_by_task_id() {
        let mut o = opts();
        o.array_limit = 8;
        o.max_running = Some(4);
        let s = script(
            "loss grid",
            25,
            Path::new("/shared/it's/grid.toml"),
            Path::new("/shared/out"),
            &o,
        )
        .unwrap();
        assert!(
            s.starts_with("#!/bin/bash\n# 25 runs of sweep `loss grid` as 7 array tasks of 4 runs")
        );
        for line in [
            "#SBATCH --job-name=longhaul-loss_grid",
            "#SBATCH --array=0-6%4",
            "#SBATCH --cpus-per-task=1",
            "#SBATCH --partition=short",
            "#SBATCH --time=10:00",
            "#SBATCH --output=/shared/out/slurm/%A_%a.out",
            "exec '/opt/longhaul/bin/longhaul' sweep run '/shared/it'\\''s/grid.toml' --out \
             '/shared/out' --index \"$SLURM_ARRAY_TASK_ID\" --chunk 4 --jobs \"${SLURM_CPUS_PER_TASK:-1}\"",
        ] {
            assert!(s.lines().any(|l| l == line), "missing {line:?} in\n{s}");
        }
        o.chunk = Some(1);
        let e = script("g", 25, Path::new("/g"), Path::new("/o"), &o).unwrap_err();
        assert!(e.to_string().contains("raise --chunk to at least 4"), "{e}");
    }
}
