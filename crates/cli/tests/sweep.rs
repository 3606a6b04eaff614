//! `longhaul sweep` as a user runs it: the built binary on small sweeps of short simulations.
//!
//! A sweep killed midway (SIGKILL, as a node failure or an out-of-time job would) and run again
//! finishes only the missing runs, leaving the finished ones untouched, and ends with the same
//! files, byte for byte, as a sweep that was never interrupted. A sweep file that grows (a
//! seed, an axis value, a scenario file) runs only its new runs in the same directory; a changed
//! scenario file or another longhaul version is refused; the tasks of a submission run the runs
//! they were given, whatever the sweep file says by then.

mod sweep_common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};
use sweep_common::{longhaul, text};

/// `path.toml` (the repository's Reno dumbbell: one flow over 100 Mb/s × 40 ms; sweeps set
/// its duration) and `grid.toml` in a fresh directory.
fn fixture(name: &str, sweep: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("longhaul-sweep-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let reno = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/dumbbell-reno.toml");
    std::fs::copy(reno, dir.join("path.toml")).unwrap();
    std::fs::write(dir.join("grid.toml"), sweep).unwrap();
    dir
}

/// A result file's content without its `provenance` (the command that made it and the host's
/// kernel and CPU, which differ between a whole sweep, one index, `sim` and a cluster node),
/// after checking that it has one.
fn results_only(bytes: &[u8]) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(bytes).expect("a JSON result");
    let p = v
        .as_object_mut()
        .and_then(|o| o.remove("provenance"))
        .expect("a result records its provenance");
    assert!(
        p["command"].as_array().is_some_and(|c| !c.is_empty()),
        "{p}"
    );
    v
}

/// The finished runs of a results directory: key → (modification time, bytes).
fn finished(out: &Path) -> BTreeMap<String, (SystemTime, Vec<u8>)> {
    let mut m = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(out.join("runs")) else {
        return m;
    };
    for e in entries {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        // `KEY.json` only: not `KEY.error.json`, not a temporary `.KEY.json.XXXX.tmp`.
        let Some(key) = name.strip_suffix(".json") else {
            continue;
        };
        if key.ends_with(".error") || key.starts_with('.') {
            continue;
        }
        // A file being renamed into place is whole or absent.
        if let (Ok(meta), Ok(bytes)) = (e.metadata(), std::fs::read(e.path())) {
            m.insert(key.to_string(), (meta.modified().unwrap(), bytes));
        }
    }
    m
}

/// A record's `sweep` block.
fn sweep_of(bytes: &[u8]) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_slice(bytes).expect("a JSON record");
    v["sweep"].clone()
}

/// The plan indices the finished runs were made as, sorted.
fn indices(runs: &BTreeMap<String, (SystemTime, Vec<u8>)>) -> Vec<u64> {
    let mut v: Vec<u64> = runs
        .values()
        .map(|(_, b)| sweep_of(b)["index"].as_u64().unwrap())
        .collect();
    v.sort();
    v
}

/// The result files of `runs/` (`errors`: the error files) by their records' indices.
fn records(out: &Path, errors: bool) -> BTreeMap<u64, PathBuf> {
    std::fs::read_dir(out.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".error.json") == errors)
        .map(|p| {
            (
                sweep_of(&std::fs::read(&p).unwrap())["index"]
                    .as_u64()
                    .unwrap(),
                p,
            )
        })
        .collect()
}

#[test]
fn a_killed_sweep_reruns_only_its_missing_runs() {
    let dir = fixture(
        "kill",
        "scenario = \"path.toml\"\n[set]\nduration = \"40s\"\n[axes]\n\
         \"flows.0.cc\" = [\"reno\", \"cubic\", \"fast\"]\nseed = \"1..4\"\n",
    );
    let grid = dir.join("grid.toml");
    let out = dir.join("out");
    let (grid_s, out_s) = (grid.to_str().unwrap(), out.to_str().unwrap());

    // One run at a time, killed once two have finished.
    let mut child = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args([
            "sweep", "run", grid_s, "--out", out_s, "--jobs", "1", "--quiet",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    while finished(&out).len() < 2 {
        assert!(Instant::now() < deadline, "no two runs finished in 300 s");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep ended before it was killed"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(!status.success(), "the sweep was not killed: {status}");
    let before = finished(&out);
    let n = before.len() as u64;
    assert!((2..12).contains(&n), "{n} runs finished before the kill");

    let again = longhaul(&["sweep", "run", grid_s, "--out", out_s]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(
        text(&again.stdout).trim(),
        format!("12 runs: {n} finished before, {} ran now, 0 failed", 12 - n)
    );
    let after = finished(&out);
    assert_eq!(indices(&after), (0..12).collect::<Vec<_>>());
    // The runs finished before the kill were not run again: same bytes, same time stamp.
    for (i, old) in &before {
        assert_eq!(&after[i], old, "run {i} was rewritten");
    }
    // A third run has nothing left to do.
    let third = longhaul(&["sweep", "run", grid_s, "--out", out_s, "--quiet"]);
    assert!(third.status.success());
    assert_eq!(finished(&out), after);

    // The interrupted sweep's results equal an uninterrupted one's, byte for byte (runs split
    // across two threads or not, one at a time or two).
    let clean = dir.join("clean");
    let whole = longhaul(&[
        "sweep",
        "run",
        grid_s,
        "--out",
        clean.to_str().unwrap(),
        "-j",
        "2",
    ]);
    assert!(whole.status.success(), "{}", text(&whole.stderr));
    let clean_runs = finished(&clean);
    for (i, (_, bytes)) in &after {
        assert!(
            results_only(&clean_runs[i].1) == results_only(bytes),
            "run {i} differs from the uninterrupted sweep"
        );
    }

    std::fs::remove_dir_all(&dir).unwrap();
}

/// `DIR/sweeps/small-grid.toml` (the repository's, which names `../dumbbell-reno.toml`) and
/// `DIR/dumbbell-reno.toml`: the layout of `scenarios/`, in a fresh directory.
fn small_grid(name: &str) -> (PathBuf, String) {
    let dir =
        std::env::temp_dir().join(format!("longhaul-sweep-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sweeps")).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    std::fs::copy(
        repo.join("dumbbell-reno.toml"),
        dir.join("dumbbell-reno.toml"),
    )
    .unwrap();
    let grid = std::fs::read_to_string(repo.join("sweeps/small-grid.toml")).unwrap();
    std::fs::write(dir.join("sweeps/small-grid.toml"), &grid).unwrap();
    (dir, grid)
}

#[test]
fn a_grown_sweep_runs_only_its_new_runs() {
    let (dir, grid) = small_grid("grow");
    let file = dir.join("sweeps/small-grid.toml");
    let out = dir.join("out");
    let (file_s, out_s) = (file.to_str().unwrap(), out.to_str().unwrap());
    let run = || {
        let r = longhaul(&["sweep", "run", file_s, "--out", out_s]);
        assert!(r.status.success(), "{}", text(&r.stderr));
        (text(&r.stdout).trim().to_string(), text(&r.stderr))
    };
    let (said, _) = run();
    assert_eq!(said, "36 runs: 0 finished before, 36 ran now, 0 failed");
    let first = finished(&out);
    assert_eq!(first.len(), 36);

    // A fourth seed: 12 new runs, the 36 finished ones kept as they are.
    assert!(grid.contains("seed = \"1..3\""));
    std::fs::write(&file, grid.replace("seed = \"1..3\"", "seed = \"1..4\"")).unwrap();
    let (said, note) = run();
    assert_eq!(said, "48 runs: 36 finished before, 12 ran now, 0 failed");
    assert!(
        note.contains(
            "the sweep differs from the plan recorded there (seed: 4 values against 3; 48 runs \
             against 36); runs already there are kept, only the missing ones run"
        ),
        "{note}"
    );
    let second = finished(&out);
    assert_eq!(second.len(), 48);
    for (key, old) in &first {
        assert_eq!(&second[key], old, "run {key} was rewritten");
    }
    let new: Vec<serde_json::Value> = second
        .iter()
        .filter(|(k, _)| !first.contains_key(*k))
        .map(|(_, (_, b))| sweep_of(b))
        .collect();
    assert_eq!(new.len(), 12);
    assert!(new.iter().all(|s| s["axes"]["seed"] == 4), "{new:?}");
    // The plan's indices moved (seed varies fastest): collect labels every run with its index
    // in the grown plan.
    let c = longhaul(&["sweep", "collect", out_s, "--quiet"]);
    assert!(c.status.success(), "{}", text(&c.stderr));
    assert!(text(&c.stdout).starts_with("collected 48 of 48 runs"));
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 48);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[0], i.to_string());
        assert_eq!(row[3], ((i % 4) + 1).to_string(), "row {i}: {row:?}");
    }
    let show = longhaul(&["sweep", "plan", file_s, "--index", "7"]);
    let key = text(&show.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("result: DIR/runs/"))
        .map(|k| k.trim_end_matches(".json").to_string())
        .unwrap();
    assert_eq!(sweep_of(&second[&key].1)["axes"]["seed"], 4);

    // A fourth loss rate: 16 new runs.
    let grid = grid.replace("seed = \"1..3\"", "seed = \"1..4\"").replace(
        "\"links.0.loss\" = [0, 1e-5, 1e-4]",
        "\"links.0.loss\" = [0, 1e-5, 1e-4, 1e-3]",
    );
    std::fs::write(&file, &grid).unwrap();
    let (said, _) = run();
    assert_eq!(said, "64 runs: 48 finished before, 16 ran now, 0 failed");
    // A second scenario file: its 64 runs are new, the first file's 64 are kept.
    let reno = std::fs::read_to_string(dir.join("dumbbell-reno.toml")).unwrap();
    std::fs::write(dir.join("other.toml"), reno.replace("\"20ms\"", "\"30ms\"")).unwrap();
    let grid = grid.replace(
        "scenario = \"../dumbbell-reno.toml\"",
        "scenarios = [\"../dumbbell-reno.toml\", \"../other.toml\"]",
    );
    std::fs::write(&file, &grid).unwrap();
    let (said, _) = run();
    assert_eq!(said, "128 runs: 64 finished before, 64 ran now, 0 failed");
    let third = finished(&out);
    assert_eq!(third.len(), 128);
    for (key, old) in &second {
        assert_eq!(&third[key], old, "run {key} was rewritten");
    }

    // A changed scenario file is refused, naming it, and nothing runs.
    std::fs::write(
        dir.join("dumbbell-reno.toml"),
        reno.replace("\"20ms\"", "\"25ms\""),
    )
    .unwrap();
    let changed = longhaul(&["sweep", "run", file_s, "--out", out_s]);
    assert!(!changed.status.success());
    let err = text(&changed.stderr);
    assert!(
        err.contains("scenario ../dumbbell-reno.toml (")
            && err.contains("has changed since")
            && err.contains(
                "results of two versions of one scenario must not mix; restore the file, or use \
                 another --out directory"
            ),
        "{err}"
    );
    assert_eq!(finished(&out), third);
    std::fs::write(dir.join("dumbbell-reno.toml"), &reno).unwrap();
    let (said, _) = run();
    assert_eq!(said, "128 runs: 128 finished before, 0 ran now, 0 failed");

    // Dropping values keeps their results; collect counts them as outside the plan.
    std::fs::write(&file, grid.replace("seed = \"1..4\"", "seed = \"1..3\"")).unwrap();
    let (said, _) = run();
    assert_eq!(said, "96 runs: 96 finished before, 0 ran now, 0 failed");
    let c = longhaul(&["sweep", "collect", out_s, "--quiet"]);
    assert!(text(&c.stdout).starts_with("collected 96 of 96 runs"));
    assert!(
        text(&c.stderr).contains("also holds 32 results of runs outside this plan, kept"),
        "{}",
        text(&c.stderr)
    );
    assert_eq!(finished(&out), third);

    // Another longhaul version made the directory: refused, and nothing runs.
    let stamp = out.join("sweep.json");
    let recorded = std::fs::read_to_string(&stamp).unwrap();
    let version = format!("\"longhaul\": \"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(recorded.contains(&version), "{recorded}");
    std::fs::write(
        &stamp,
        recorded.replace(&version, "\"longhaul\": \"0.0.9\""),
    )
    .unwrap();
    let other = longhaul(&["sweep", "run", file_s, "--out", out_s]);
    assert!(!other.status.success());
    assert!(
        text(&other.stderr).contains(&format!(
            "was made by longhaul 0.0.9, and this is longhaul {}: runs of two versions must not \
             mix",
            env!("CARGO_PKG_VERSION")
        )),
        "{}",
        text(&other.stderr)
    );
    assert_eq!(finished(&out), third);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_submissions_tasks_run_what_was_submitted() {
    let dir = fixture(
        "tasks",
        "scenario = \"path.toml\"\n[set]\nduration = \"1s\"\n[axes]\nseed = [1, 2, 3, 4]\n",
    );
    let grid = dir.join("grid.toml");
    let out = dir.join("out");
    let (grid_s, out_s) = (grid.to_str().unwrap(), out.to_str().unwrap());
    let one = longhaul(&["sweep", "run", grid_s, "--out", out_s, "--index", "1"]);
    assert!(one.status.success(), "{}", text(&one.stderr));

    // Three runs are missing (seeds 1, 3, 4): two tasks, not the whole plan's.
    let s = longhaul(&[
        "sweep",
        "submit",
        grid_s,
        "--slurm",
        "--out",
        out_s,
        "--array-limit",
        "2",
        "--dry-run",
    ]);
    assert!(s.status.success(), "{}", text(&s.stderr));
    assert!(
        text(&s.stdout).contains("4 runs (1 finished) as 2 tasks of 2 runs"),
        "{}",
        text(&s.stdout)
    );
    let script = std::fs::read_to_string(out.join("slurm/sweep.sbatch")).unwrap();
    assert!(script.contains("\n#SBATCH --array=0-1\n"), "{script}");
    assert!(script.contains("# 3 of 4 runs of sweep `grid`"), "{script}");
    let tasks = text(&s.stdout)
        .split("listed in ")
        .nth(1)
        .and_then(|t| t.split(")").next())
        .unwrap()
        .to_string();
    assert!(
        script.contains(&format!("sweep run '{tasks}' --out ")),
        "{script}"
    );

    // The sweep file changes before the tasks start: a new first seed shifts every index.
    std::fs::write(
        &grid,
        "scenario = \"path.toml\"\n[set]\nduration = \"1s\"\n[axes]\nseed = [9, 1, 2, 3, 4]\n",
    )
    .unwrap();
    let task = |t: &str| longhaul(&["sweep", "run", &tasks, "--out", out_s, "--index", t]);
    let t1 = task("1");
    assert!(t1.status.success(), "{}", text(&t1.stderr));
    assert_eq!(
        text(&t1.stdout).trim(),
        "1 run: 0 finished before, 1 ran now, 0 failed"
    );
    let t0 = task("0");
    assert_eq!(
        text(&t0.stdout).trim(),
        "2 runs: 0 finished before, 2 ran now, 0 failed"
    );
    let mut seeds: Vec<i64> = finished(&out)
        .values()
        .map(|(_, b)| sweep_of(b)["axes"]["seed"].as_i64().unwrap())
        .collect();
    seeds.sort();
    assert_eq!(seeds, [1, 2, 3, 4]);
    let past = task("2");
    assert!(!past.status.success());
    assert!(
        text(&past.stderr).contains("task 2 is beyond the 2 tasks of"),
        "{}",
        text(&past.stderr)
    );
    let chunk = longhaul(&[
        "sweep", "run", &tasks, "--out", out_s, "--index", "0", "--chunk", "2",
    ]);
    assert!(text(&chunk.stderr).contains("a tasks file fixes each task's runs; drop --chunk"));
    // The tasks left the directory's plan to the sweep file's runs.
    let sweep_json = std::fs::read_to_string(out.join("sweep.json")).unwrap();
    assert!(sweep_json.contains("\"runs\": 4"), "{sweep_json}");

    // A scenario edited after submission: the tasks refuse to run.
    let path = dir.join("path.toml");
    let reno = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, reno.replace("\"20ms\"", "\"25ms\"")).unwrap();
    let edited = task("0");
    assert!(!edited.status.success());
    assert!(
        text(&edited.stderr).contains("has changed since this plan was made"),
        "{}",
        text(&edited.stderr)
    );
    std::fs::write(&path, &reno).unwrap();

    // Another longhaul version made the directory: its tasks are refused too.
    let stamp = out.join("sweep.json");
    let recorded = std::fs::read_to_string(&stamp).unwrap();
    let version = format!("\"longhaul\": \"{}\"", env!("CARGO_PKG_VERSION"));
    std::fs::write(
        &stamp,
        recorded.replace(&version, "\"longhaul\": \"0.0.9\""),
    )
    .unwrap();
    let other = task("0");
    assert!(!other.status.success());
    assert!(
        text(&other.stderr).contains("was made by longhaul 0.0.9"),
        "{}",
        text(&other.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn blocks_by_index_failures_and_collect() {
    // A flow starting at 1.5 s in a 1 s run fails; each value alone is valid.
    let dir = fixture(
        "index",
        "scenario = \"path.toml\"\n[set]\nduration = \"2s\"\n[axes]\n\
         \"flows.0.start\" = [\"0s\", \"1.5s\"]\nduration = [\"2s\", \"1s\"]\nseed = [1, 2]\n",
    );
    // `duration` is in [set] and [axes]: refused, naming the axis.
    let grid = dir.join("grid.toml");
    let (grid_s, out) = (grid.to_str().unwrap(), dir.join("out"));
    let out_s = out.to_str().unwrap();
    let dup = longhaul(&["sweep", "plan", grid_s]);
    assert!(!dup.status.success());
    assert!(text(&dup.stderr).contains("axis `duration`: is given more than once"));
    std::fs::write(
        &grid,
        "scenario = \"path.toml\"\n[axes]\n\
         \"flows.0.start\" = [\"0s\", \"1.5s\"]\nduration = [\"2s\", \"1s\"]\nseed = [1, 2]\n",
    )
    .unwrap();

    let count = longhaul(&["sweep", "plan", grid_s, "--count"]);
    assert_eq!(text(&count.stdout), "8\n");

    // Block 1 of 3 runs: runs 3, 4, 5 and nothing else.
    let b = longhaul(&[
        "sweep", "run", grid_s, "--out", out_s, "--index", "1", "--chunk", "3",
    ]);
    assert!(b.status.success(), "{}", text(&b.stderr));
    assert_eq!(
        text(&b.stdout).trim(),
        "3 runs: 0 finished before, 3 ran now, 0 failed"
    );
    assert_eq!(indices(&finished(&out)), [3, 4, 5]);
    let past = longhaul(&["sweep", "run", grid_s, "--out", out_s, "--index", "8"]);
    assert!(text(&past.stderr).contains("run 8 is beyond the plan's 8 runs (indices 0 to 7)"));

    // Every run: 6 and 7 fail, the rest finish, the exit status says so.
    let all = longhaul(&["sweep", "run", grid_s, "--out", out_s]);
    assert!(!all.status.success());
    assert_eq!(
        text(&all.stdout).trim(),
        "8 runs: 3 finished before, 3 ran now, 2 failed"
    );
    let err = text(&all.stderr);
    assert!(
        err.contains("starts at 1.5 s, not before its stop at 1 s"),
        "{err}"
    );
    assert!(
        err.contains("re-run the same command to retry them"),
        "{err}"
    );
    let errors = records(&out, true);
    assert_eq!(errors.keys().copied().collect::<Vec<_>>(), [6, 7]);
    assert!(
        err.contains(&errors[&6].display().to_string()),
        "the message names run 6's error file: {err}"
    );

    // `plan --check` finds the same two without running anything.
    let check = longhaul(&["sweep", "plan", grid_s, "--check"]);
    assert!(!check.status.success());
    assert!(text(&check.stderr).contains("2 of 8 runs cannot run as planned"));

    // Collect merges what there is and says what is missing.
    let c = longhaul(&["sweep", "collect", out_s]);
    assert!(c.status.success(), "{}", text(&c.stderr));
    assert!(
        text(&c.stdout).contains("collected 6 of 8 runs (failed 2: 6, 7)"),
        "{}",
        text(&c.stdout)
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 6);
    assert!(csv.starts_with("index,flows_0_start,duration,seed,"));
    assert!(
        csv.lines().nth(5).unwrap().starts_with("4,1.5s,2s,1,"),
        "{csv}"
    );
    // `show`: the same rows, filtered, cut to the columns asked for.
    let s = longhaul(&[
        "sweep",
        "show",
        out_s,
        "--where",
        "duration=2s",
        "--where",
        "seed=2",
        "--columns",
        "index,flows_0_start,cc",
    ]);
    assert!(s.status.success(), "{}", text(&s.stderr));
    assert_eq!(
        text(&s.stdout),
        "index  flows_0_start  cc\n--------------------------\n    1             0s  reno\n    \
         5           1.5s  reno\n2 rows; 6 of 8 runs (failed 2: 6, 7)\n"
    );
    let bad = longhaul(&["sweep", "show", out_s, "--columns", "index,speed"]);
    assert!(!bad.status.success());
    assert!(
        text(&bad.stderr).contains("no column `speed`; the columns are: index, flows_0_start,"),
        "{}",
        text(&bad.stderr)
    );
    let bad = longhaul(&["sweep", "show", out_s, "--where", "seed"]);
    assert!(text(&bad.stderr).contains("expected COLUMN=VALUE"));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Failed runs") && html.contains("<svg"));

    // A run's record is `longhaul sim --json` with its overrides, plus the `sweep` key.
    let rec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&records(&out, false)[&4]).unwrap()).unwrap();
    let mut args = vec![
        "sim".to_string(),
        dir.join("path.toml").display().to_string(),
    ];
    for s in rec["sweep"]["sets"].as_array().unwrap() {
        args.push("--set".into());
        args.push(s.as_str().unwrap().into());
    }
    let sim_json = dir.join("sim.json");
    args.extend(["--json".into(), sim_json.display().to_string(), "-q".into()]);
    let sim = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args(&args)
        .output()
        .unwrap();
    assert!(sim.status.success(), "{}", text(&sim.stderr));
    let mut rec = results_only(rec.to_string().as_bytes());
    rec.as_object_mut().unwrap().remove("sweep");
    let sim = results_only(&std::fs::read(&sim_json).unwrap());
    assert_eq!(rec, sim);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn submit_dry_run_writes_the_array_script() {
    let dir = fixture(
        "submit",
        "scenario = \"path.toml\"\n[axes]\nseed = \"1..25\"\n",
    );
    let out = dir.join("out");
    let s = longhaul(&[
        "sweep",
        "submit",
        dir.join("grid.toml").to_str().unwrap(),
        "--slurm",
        "--out",
        out.to_str().unwrap(),
        "--array-limit",
        "10",
        "--partition",
        "short",
        "--dry-run",
    ]);
    assert!(s.status.success(), "{}", text(&s.stderr));
    assert!(
        text(&s.stdout).contains("25 runs (0 finished) as 9 tasks of 3 runs"),
        "{}",
        text(&s.stdout)
    );
    let script = std::fs::read_to_string(out.join("slurm/sweep.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-8\n"), "{script}");
    assert!(script.contains(&format!(
        "--out '{}'",
        out.canonicalize().unwrap().display()
    )));
    let no_engine = longhaul(&[
        "sweep",
        "submit",
        dir.join("grid.toml").to_str().unwrap(),
        "--out",
        "x",
    ]);
    assert!(text(&no_engine.stderr).contains("choose an engine: --slurm"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_plan_read_by_head_ends_quietly() {
    // A 4,096-run grid's table is longer than a pipe's buffer, so the reader closing its end
    // after one line leaves the writer with most of the table unwritten.
    let dir = fixture(
        "head",
        "scenario = \"path.toml\"\n[axes]\nseed = \"1..4096\"\n",
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args(["sweep", "plan"])
        .arg(dir.join("grid.toml"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("longhaul runs");
    let mut first = [0u8; 64];
    let n = std::io::Read::read(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    assert!(n > 0, "no output");
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert!(!err.contains("panicked"), "stderr: {err}");
    assert!(!err.contains("Broken pipe"), "stderr: {err}");
    let _ = std::fs::remove_dir_all(&dir);
}
