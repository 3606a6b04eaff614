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
    /// The partition (`--partition`); Slurm's default when `None`.
    pub partition: Option<String>,
    /// Time limit per task, in Slurm's format (`30`, `1:00:00`, `2-00:00:00`).
    pub time: Option<String>,
    /// CPUs each task asks for (`--cpus-per-task`).
    pub cpus_per_task: u32,
    /// At most this many array tasks; more runs are cut into blocks.
    pub array_limit: u64,
    /// Runs per task (default: as few as the array limit allows).
    pub chunk: Option<u64>,
    /// At most this many tasks running at once (sbatch's `%N`).
    pub max_running: Option<u64>,
    /// The `longhaul` binary the tasks run: on the shared filesystem.
    pub longhaul: PathBuf,
    /// The plan was accepted with `--allow-large`: the tasks must accept it too.
    pub allow_large: bool,
}

/// How a sweep maps onto an array: `tasks` tasks of `chunk` runs (the last may be shorter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayShape {
    /// The number of array tasks.
    pub tasks: u64,
    /// Runs per task.
    pub chunk: u64,
}

impl ArrayShape {
    /// The shape for `runs` runs under `array_limit` tasks, with `chunk` runs per task if given.
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

/// A value written after an `#SBATCH` option: one line, no control characters, and for
/// options whose values Slurm takes as single words (partition, time), no spaces or quotes.
fn directive_word(option: &str, value: &str) -> Result<String> {
    if value.is_empty()
        || value
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || c == '"' || c == '\\' || c == '\'')
    {
        return Err(SweepError::Submit(format!(
            "{option} {value:?}: a Slurm {} is one word without spaces, quotes or control \
             characters",
            option.trim_start_matches('-')
        )));
    }
    Ok(value.to_string())
}

/// A path in an `#SBATCH` directive: double-quoted when it has spaces (sbatch reads directive
/// values as shell-like words); refused with control characters, double quotes or
/// backslashes, which no quoting carries through sbatch's directive parser.
fn directive_path(option: &str, path: &Path) -> Result<String> {
    let text = path.display().to_string();
    if text
        .chars()
        .any(|c| c.is_control() || c == '"' || c == '\\')
    {
        return Err(SweepError::Submit(format!(
            "{option} {text:?}: Slurm cannot take a path with control characters, double quotes \
             or backslashes in a directive; choose another --out"
        )));
    }
    Ok(if text.chars().any(char::is_whitespace) {
        format!("\"{text}\"")
    } else {
        text
    })
}

/// The job's name: the sweep's, with everything but letters, digits, `.`, `-` and `_` replaced
/// by `_` (a sweep's `name` is free text; a job name is one word on a directive line).
fn job_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("longhaul-{clean}")
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
    if opts.cpus_per_task == 0 {
        return Err(SweepError::Submit(
            "--cpus-per-task 0: a task needs at least one CPU".into(),
        ));
    }
    if opts.max_running == Some(0) {
        return Err(SweepError::Submit(
            "--max-running 0: at least one task must be allowed to run".into(),
        ));
    }
    let partition = opts
        .partition
        .as_deref()
        .map(|p| directive_word("--partition", p))
        .transpose()?;
    let time = opts
        .time
        .as_deref()
        .map(|t| directive_word("--time", t))
        .transpose()?;
    let logs = directive_path("--out", &out.join("slurm").join("%A_%a.out"))?;
    let job = job_name(name);
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
    s.push_str(&format!("#SBATCH --cpus-per-task={}\n", opts.cpus_per_task));
    if let Some(p) = &partition {
        s.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    if let Some(t) = &time {
        s.push_str(&format!("#SBATCH --time={t}\n"));
    }
    // %A: the array's job id, %a: the task id. sbatch does not expand variables here.
    s.push_str(&format!("#SBATCH --output={logs}\n"));
    s.push_str("set -euo pipefail\n");
    s.push_str(&format!(
        "exec {} sweep run {} --out {} --index \"$SLURM_ARRAY_TASK_ID\" --chunk {} \
         --jobs \"${{SLURM_CPUS_PER_TASK:-1}}\"{}\n",
        quote(&opts.longhaul.display().to_string()),
        quote(&sweep_file.display().to_string()),
        quote(&out.display().to_string()),
        shape.chunk,
        if opts.allow_large {
            " --allow-large"
        } else {
            ""
        }
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
            allow_large: false,
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

    #[test]
    fn values_that_would_break_or_extend_the_script_are_refused() {
        let f = Path::new("/s/sweep.toml");
        let out = Path::new("/r/out");
        let with = |change: &dyn Fn(&mut SlurmOptions)| {
            let mut o = opts();
            change(&mut o);
            script("grid", 4, f, out, &o)
        };
        let injected = with(&|o| o.partition = Some("a b\n#SBATCH --wrap=evil".into()));
        assert!(
            injected
                .as_ref()
                .is_err_and(|e| e.to_string().contains("--partition")),
            "{injected:?}"
        );
        assert!(with(&|o| o.time = Some("10:00\n".into())).is_err());
        assert!(with(&|o| o.time = Some("1 day".into())).is_err());
        let zero = with(&|o| o.cpus_per_task = 0).unwrap_err().to_string();
        assert!(zero.contains("--cpus-per-task 0"), "{zero}");
        let zero = with(&|o| o.max_running = Some(0)).unwrap_err().to_string();
        assert!(zero.contains("--max-running 0"), "{zero}");
        let quote = script("grid", 4, f, Path::new("/r/a\"b"), &opts()).unwrap_err();
        assert!(
            quote.to_string().contains("choose another --out"),
            "{quote}"
        );
        let newline = script("grid", 4, f, Path::new("/r/a\nb"), &opts());
        assert!(newline.is_err());
    }

    #[test]
    fn names_and_paths_with_spaces_stay_on_their_directive_lines() {
        let s = script(
            "my grid\n#SBATCH --wrap=evil",
            4,
            Path::new("/s/sweep.toml"),
            Path::new("/r/my results"),
            &opts(),
        )
        .unwrap();
        let directives: Vec<&str> = s.lines().filter(|l| l.starts_with("#SBATCH")).collect();
        assert!(
            directives.contains(&"#SBATCH --job-name=longhaul-my_grid__SBATCH_--wrap_evil"),
            "{s}"
        );
        assert!(
            directives.contains(&"#SBATCH --output=\"/r/my results/slurm/%A_%a.out\""),
            "{s}"
        );
        assert!(!s.contains("--wrap=evil\n"), "{s}");
        assert!(s.contains("--out '/r/my results'"), "{s}");
        assert!(!s.contains("--allow-large"));
        let mut o = opts();
        o.allow_large = true;
        let s = script(
            "grid",
            4,
            Path::new("/s/sweep.toml"),
            Path::new("/r/out"),
            &o,
        )
        .unwrap();
        assert!(s.lines().last().unwrap().ends_with(" --allow-large"), "{s}");
    }
}
