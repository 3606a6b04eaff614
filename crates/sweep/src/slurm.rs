//! Slurm: an sbatch array script whose every task runs `longhaul sweep run TASKS --index
//! $SLURM_ARRAY_TASK_ID`, and its submission with `sbatch`.
//!
//! longhaul schedules nothing itself (`docs/sweep.md`): the array job is Slurm's,
//! the results directory is on the cluster's shared filesystem, and a task that dies is redone
//! by submitting again. The tasks file (`tasks.rs`) holds the plan as submitted and the runs
//! without a result at submission, so the array has a task only for missing runs, and a sweep
//! file edited while it runs changes nothing for it. A cluster caps an array's size
//! (MaxArraySize, 1001 by default), so many runs are cut into equal blocks, one per task
//! (`--chunk`).

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

impl SlurmOptions {
    /// How `runs` runs map onto an array under these options.
    pub fn shape(&self, runs: u64) -> ArrayShape {
        ArrayShape::new(runs, self.array_limit, self.chunk)
    }
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

/// A value written after an `#SBATCH` option whose values Slurm takes as single words
/// (partition, time): no spaces, quotes, backslashes, `#` (which starts a comment on a
/// directive line) or control characters.
fn directive_word(option: &str, value: &str) -> Result<String> {
    if value.is_empty()
        || value
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | '#'))
    {
        return Err(SweepError::Submit(format!(
            "{option} {value:?}: a Slurm {} is one word without spaces, quotes, backslashes, `#` \
             or control characters (a line break would end the #SBATCH line and start another)",
            option.trim_start_matches('-')
        )));
    }
    Ok(value.to_string())
}

/// `--time`: one of the forms sbatch accepts (minutes, `MM:SS`, `HH:MM:SS`, `D-HH`,
/// `D-HH:MM`, `D-HH:MM:SS`, or `INFINITE`/`UNLIMITED`), so that a typo fails here rather than
/// in sbatch, or not at all with `--dry-run`.
fn time_limit(value: &str) -> Result<String> {
    let word = directive_word("--time", value)?;
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let clock = |s: &str, most: usize| {
        let parts: Vec<&str> = s.split(':').collect();
        parts.len() <= most && parts.iter().all(|p| digits(p))
    };
    let ok = matches!(word.to_ascii_uppercase().as_str(), "INFINITE" | "UNLIMITED")
        || match word.split_once('-') {
            Some((days, rest)) => digits(days) && clock(rest, 3),
            None => clock(&word, 3),
        };
    if !ok {
        return Err(SweepError::Submit(format!(
            "--time {value:?}: not a Slurm time limit; give minutes (`30`), `MM:SS`, \
             `HH:MM:SS`, `D-HH`, `D-HH:MM` or `D-HH:MM:SS`"
        )));
    }
    Ok(word)
}

/// Text that must stay on one line of the script (a name in a comment, a path in a
/// directive): a line break or other control character is refused with `what to do`.
fn one_line(what: &str, text: &str, what_to_do: &str) -> Result<()> {
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        let kind = if c == '\n' || c == '\r' {
            "a line break"
        } else {
            "a control character"
        };
        return Err(SweepError::Submit(format!(
            "{what} {text:?} has {kind}, which would end its line of the sbatch script; \
             {what_to_do}"
        )));
    }
    Ok(())
}

/// The tasks' log path in the `#SBATCH --output` directive: `DIR/slurm/%A_%a.out` (%A the
/// array's job id, %a the task's), written so that sbatch and Slurm read `DIR` back as it is:
/// in double quotes (sbatch's directive parser ends a word at an unquoted space, even one after
/// a backslash, and a comment at an unquoted `#`), a double quote escaped with a backslash, `%`
/// doubled (Slurm's file name pattern). A backslash is refused: in an output path it tells
/// Slurm to substitute nothing, so the logs would not get the task's name.
fn log_pattern(out: &Path) -> Result<String> {
    let text = out.join("slurm").display().to_string();
    let fix = "choose an --out directory without one";
    one_line("--out path", &text, fix)?;
    if text.contains('\\') {
        return Err(SweepError::Submit(format!(
            "--out path {text:?} has a backslash, which Slurm reads in an output path as \
             'substitute nothing', so the tasks' logs would not get their names; {fix}"
        )));
    }
    let mut pattern = String::with_capacity(text.len() + 14);
    pattern.push('"');
    for c in text.chars() {
        match c {
            '"' => pattern.push_str("\\\""),
            '%' => pattern.push_str("%%"),
            c => pattern.push(c),
        }
    }
    pattern.push_str("/%A_%a.out\"");
    Ok(pattern)
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

/// The sbatch script for `runs` runs (of the plan's `planned`) listed in `tasks_file`, cut into
/// tasks as [`SlurmOptions::shape`] says. `tasks_file` and `out` should be absolute (tasks
/// start elsewhere).
pub fn script(
    name: &str,
    runs: u64,
    planned: u64,
    tasks_file: &Path,
    out: &Path,
    opts: &SlurmOptions,
) -> Result<String> {
    let shape = opts.shape(runs);
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
    let time = opts.time.as_deref().map(time_limit).transpose()?;
    one_line(
        "the sweep's name",
        name,
        "write the `name` of the sweep file on one line",
    )?;
    let logs = log_pattern(out)?;
    let job = job_name(name);
    let mut s = String::from("#!/bin/bash\n");
    let of = if runs == planned {
        String::new()
    } else {
        format!(" of {planned}")
    };
    s.push_str(&format!(
        "# {runs}{of} runs of sweep `{name}` as {} array task{} of {} run{} each (the last may \
         be shorter).\n# Written by `longhaul sweep submit`. Each task runs its runs as listed in \
         the tasks file,\n# whatever later edits of the sweep file say.\n",
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
        "exec {} sweep run {} --out {} --index \"$SLURM_ARRAY_TASK_ID\" \
         --jobs \"${{SLURM_CPUS_PER_TASK:-1}}\"{}\n",
        quote(&opts.longhaul.display().to_string()),
        quote(&tasks_file.display().to_string()),
        quote(&out.display().to_string()),
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

/// A Slurm array job written and ready to submit.
pub struct Prepared {
    /// The batch script (`DIR/slurm/sweep.sbatch`).
    pub script: PathBuf,
    /// The tasks file listing each task's runs.
    pub tasks_file: PathBuf,
    /// What it runs, for people: `N runs (F finished) as T tasks of C runs`.
    pub what: String,
}

/// Writes the batch script and tasks file that run the runs of `plan` missing from `dir`,
/// whose absolute path is `out`; `None` when every run is finished. The script comes first,
/// so a value it refuses leaves no tasks file behind.
pub fn prepare(
    plan: &crate::plan::Plan,
    dir: &crate::store::SweepDir,
    out: &Path,
    opts: &SlurmOptions,
) -> Result<Option<Prepared>> {
    let todo = crate::tasks::missing(plan, dir)?;
    let count: u64 = todo.iter().map(|r| r.end - r.start).sum();
    let finished = plan.runs - count;
    if count == 0 {
        return Ok(None);
    }
    let shape = opts.shape(count);
    let tasks = crate::tasks::Tasks::new(plan, &todo, shape.chunk);
    let tasks_file = out.join("slurm").join(tasks.file_name());
    let text = script(plan.name(), count, plan.runs, &tasks_file, out, opts)?;
    tasks.write(dir)?;
    let path = dir.write_file("slurm/sweep.sbatch", text.as_bytes())?;
    let what = format!(
        "{} runs ({finished} finished) as {} task{} of {} run{}",
        plan.runs,
        shape.tasks,
        if shape.tasks == 1 { "" } else { "s" },
        shape.chunk,
        if shape.chunk == 1 { "" } else { "s" }
    );
    Ok(Some(Prepared {
        script: path,
        tasks_file,
        what,
    }))
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
            40,
            Path::new("/shared/it's/slurm/tasks-1.json"),
            Path::new("/shared/out"),
            &o,
        )
        .unwrap();
        assert!(
            s.starts_with(
                "#!/bin/bash\n# 25 of 40 runs of sweep `loss grid` as 7 array tasks of 4 runs"
            ),
            "{s}"
        );
        for line in [
            "#SBATCH --job-name=longhaul-loss_grid",
            "#SBATCH --array=0-6%4",
            "#SBATCH --cpus-per-task=1",
            "#SBATCH --partition=short",
            "#SBATCH --time=10:00",
            "#SBATCH --output=\"/shared/out/slurm/%A_%a.out\"",
            "exec '/opt/longhaul/bin/longhaul' sweep run '/shared/it'\\''s/slurm/tasks-1.json' \
             --out '/shared/out' --index \"$SLURM_ARRAY_TASK_ID\" \
             --jobs \"${SLURM_CPUS_PER_TASK:-1}\"",
        ] {
            assert!(s.lines().any(|l| l == line), "missing {line:?} in\n{s}");
        }
        o.chunk = Some(1);
        let e = script("g", 25, 25, Path::new("/g"), Path::new("/o"), &o).unwrap_err();
        assert!(e.to_string().contains("raise --chunk to at least 4"), "{e}");
    }

    #[test]
    fn values_that_would_break_or_extend_the_script_are_refused() {
        let f = Path::new("/s/sweep.toml");
        let out = Path::new("/r/out");
        let with = |change: &dyn Fn(&mut SlurmOptions)| {
            let mut o = opts();
            change(&mut o);
            script("grid", 4, 4, f, out, &o).map_err(|e| e.to_string())
        };
        let refused = |r: Result<String, String>, says: &str| {
            let e = r.expect_err("refused");
            assert!(e.contains(says), "{e:?} does not say {says:?}");
        };
        refused(
            with(&|o| o.partition = Some("a b\n#SBATCH --wrap=evil".into())),
            "--partition \"a b\\n#SBATCH --wrap=evil\": a Slurm partition is one word",
        );
        refused(with(&|o| o.partition = Some("a#b".into())), "--partition");
        refused(with(&|o| o.partition = Some(String::new())), "--partition");
        refused(with(&|o| o.time = Some("10:00\n".into())), "--time");
        refused(with(&|o| o.time = Some("1 day".into())), "--time");
        for bad in ["1h", "1:2:3:4", "-5", "1-", ":30", "1-2:3:4:5"] {
            refused(
                with(&|o| o.time = Some(bad.into())),
                "not a Slurm time limit; give minutes",
            );
        }
        refused(
            with(&|o| o.cpus_per_task = 0),
            "--cpus-per-task 0: a task needs at least one CPU",
        );
        refused(
            with(&|o| o.max_running = Some(0)),
            "--max-running 0: at least one task",
        );
        let name = script("grid\n#SBATCH --wrap=evil", 4, 4, f, out, &opts());
        refused(
            name.map_err(|e| e.to_string()),
            "the sweep's name \"grid\\n#SBATCH --wrap=evil\" has a line break, which would end \
             its line of the sbatch script; write the `name` of the sweep file on one line",
        );
        let newline = script("grid", 4, 4, f, Path::new("/r/a\nb"), &opts());
        refused(
            newline.map_err(|e| e.to_string()),
            "--out path \"/r/a\\nb/slurm\" has a line break, which would end its \
             line of the sbatch script; choose an --out directory without one",
        );
        let backslash = script("grid", 4, 4, f, Path::new("/r/a\\b"), &opts());
        refused(
            backslash.map_err(|e| e.to_string()),
            "has a backslash, which Slurm reads in an output path as 'substitute nothing'",
        );
    }

    #[test]
    fn time_limits_in_every_form_sbatch_takes() {
        for good in [
            "30",
            "10:00",
            "1:00:00",
            "2-00",
            "2-00:00",
            "2-00:00:00",
            "UNLIMITED",
            "infinite",
        ] {
            let mut o = opts();
            o.time = Some(good.into());
            let s = script("grid", 4, 4, Path::new("/s"), Path::new("/r"), &o).unwrap();
            assert!(s.contains(&format!("\n#SBATCH --time={good}\n")), "{s}");
        }
    }

    /// A directive's value as sbatch's directive parser reads it (`_get_argument` in
    /// src/sbatch/opt.c): an unquoted space ends the word (before a backslash is looked at),
    /// a backslash takes the next character as it is, single or double quotes group, an
    /// unquoted `#` starts a comment.
    fn sbatch_reads(value: &str) -> String {
        let (mut out, mut quote, mut escaped) = (String::new(), None, false);
        for c in value.chars() {
            if quote.is_none() && c.is_whitespace() {
                break;
            }
            match quote {
                _ if escaped => {
                    escaped = false;
                    out.push(c);
                }
                _ if c == '\\' => escaped = true,
                Some(q) if c == q => quote = None,
                Some(_) => out.push(c),
                None if c == '"' || c == '\'' => quote = Some(c),
                None if c == '#' => break,
                None => out.push(c),
            }
        }
        out
    }

    #[test]
    fn names_and_paths_with_spaces_quotes_and_percent_stay_on_their_lines() {
        let name = "loss grid 'v2' \"#1\"";
        let out = "/r/my results/it's \"x\" #1 50%";
        let s = script(name, 4, 4, Path::new("/s/t.json"), Path::new(out), &opts()).unwrap();
        let directives: Vec<&str> = s.lines().filter(|l| l.starts_with("#SBATCH")).collect();
        assert_eq!(directives.len(), 6, "{s}");
        assert!(
            directives.contains(&"#SBATCH --job-name=longhaul-loss_grid__v2____1_"),
            "{s}"
        );
        // The name stays in its comment line; the header is three comment lines.
        assert!(s.lines().nth(1).unwrap().contains(name), "{s}");
        assert!(s.lines().nth(4).unwrap().starts_with("#SBATCH "), "{s}");
        let output = directives
            .iter()
            .find_map(|l| l.strip_prefix("#SBATCH --output="))
            .unwrap();
        assert_eq!(
            output,
            r#""/r/my results/it's \"x\" #1 50%%/slurm/%A_%a.out""#
        );
        // sbatch reads back the path with Slurm's `%%` for the one `%`.
        assert_eq!(
            sbatch_reads(output),
            "/r/my results/it's \"x\" #1 50%%/slurm/%A_%a.out"
        );
        assert!(
            s.contains(r#"--out '/r/my results/it'\''s "x" #1 50%'"#),
            "{s}"
        );
        assert!(!s.contains("--allow-large"));
        let mut o = opts();
        o.allow_large = true;
        let s = script(
            "grid",
            4,
            4,
            Path::new("/s/t.json"),
            Path::new("/r/out"),
            &o,
        )
        .unwrap();
        assert!(s.lines().last().unwrap().ends_with(" --allow-large"), "{s}");
    }
}
