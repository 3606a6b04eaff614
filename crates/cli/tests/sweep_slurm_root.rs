//! `longhaul sweep submit --slurm` against a real Slurm: a one-node cluster started for the test
//! from Debian's `slurm-wlm` and `munge` (scripts/packages.txt; the test installs nothing).
//!
//! Everything lives in a temporary directory: the munge key, socket and log, slurm.conf (one
//! node, `proctrack/linuxproc`, no cgroups, free ports on 127.0.0.1) and the daemons' state.
//! `munged`, `slurmctld` and `slurmd` run in the foreground as this test's children, held by a
//! guard that cancels the jobs, stops the daemons and removes the directory when the test ends,
//! failed or not. The test needs root (Slurm's daemons run as SlurmUser=root here); without root
//! it says it was skipped, and with `CI=true` it fails instead.
//!
//! One cluster serves every check, in order:
//!
//! * values that would break or extend the sbatch script (a partition with a line break and an
//!   extra directive, a sweep name with a line break, an `--out` with one, `--max-running 0`,
//!   `--cpus-per-task 0`, a malformed `--time`) are refused before anything reaches Slurm;
//! * a sweep whose name and results directory have spaces, both quotes, `#` and `%` goes through
//!   an 8-task array (24 runs, 3 per task): sbatch accepts the script, the tasks' logs land in
//!   that directory under their own names, and every result equals the same sweep run locally,
//!   byte for byte (the simulator is deterministic; where a run ran must not show in it);
//! * the same sweep with a fourth seed, resubmitted, is an array of the 8 new runs only (the 24
//!   finished are left as they are); the sweep file edited while that job is held (a fifth
//!   seed, a controller in front, shifting every index) changes nothing for its tasks;
//! * a sweep of more than 1,000,000 runs, accepted with `--allow-large`, runs its first task:
//!   the flag reaches the tasks' command line.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// True when the test may run; prints a skip notice (or panics under CI) otherwise.
fn root_or_skip(name: &str) -> bool {
    let root = longhaul_testenv::is_root();
    let missing: Vec<&str> = [
        "munged",
        "slurmctld",
        "slurmd",
        "sbatch",
        "squeue",
        "sinfo",
        "scancel",
    ]
    .into_iter()
    .filter(|b| find(b).is_none())
    .collect();
    if root && missing.is_empty() {
        return true;
    }
    let why = if root {
        format!(
            "needs {} (Debian's slurm-wlm and munge: scripts/setup.sh installs them)",
            missing.join(", ")
        )
    } else {
        "needs root (Slurm's daemons run as root in the test cluster)".to_string()
    };
    longhaul_testenv::require(name, false, &why)
}

/// A program on PATH or in the sbin directories (root's PATH may lack them).
fn find(name: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin", "/usr/bin"])
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file());
    found
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The test cluster; dropping it stops everything and removes its directory.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    /// Daemons in start order: munged, slurmctld, slurmd.
    daemons: Vec<(&'static str, Child)>,
}

impl Cluster {
    fn start() -> Cluster {
        let dir = std::env::temp_dir().join(format!("longhaul-slurm-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in ["munge", "state", "spool", "log"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        let mut cluster = Cluster {
            conf: dir.join("slurm.conf"),
            dir: dir.clone(),
            daemons: Vec::new(),
        };
        use std::os::unix::fs::PermissionsExt;
        let munge = dir.join("munge");
        std::fs::set_permissions(&munge, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut key = vec![0u8; 1024];
        std::fs::File::open("/dev/urandom")
            .unwrap()
            .read_exact(&mut key)
            .unwrap();
        let key_file = munge.join("munge.key");
        std::fs::write(&key_file, &key).unwrap();
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o400)).unwrap();
        let socket = munge.join("munge.socket");
        let munged = Command::new(find("munged").unwrap())
            .arg("--foreground")
            .arg("--force")
            .arg(format!("--key-file={}", key_file.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--pid-file={}", munge.join("munged.pid").display()))
            .arg(format!("--log-file={}", munge.join("munged.log").display()))
            .arg(format!(
                "--seed-file={}",
                munge.join("munged.seed").display()
            ))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("log/munged.out")).unwrap())
            .spawn()
            .expect("munged starts");
        cluster.daemons.push(("munged", munged));
        wait_for(Duration::from_secs(30), "munged's socket", || {
            socket.exists()
        });

        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        let host = host.trim().split('.').next().unwrap().to_string();
        let d = dir.display();
        let conf = format!(
            "ClusterName=longhaultest\n\
             SlurmctldHost={host}(127.0.0.1)\n\
             SlurmctldPort={ctld}\nSlurmdPort={slurmd}\n\
             SlurmUser=root\nSlurmdUser=root\n\
             AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={socket}\n\
             StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/log/slurmctld.log\nSlurmdLogFile={d}/log/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n\
             SchedulerType=sched/builtin\n\
             JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n\
             JobCompType=jobcomp/none\nMpiDefault=none\nReturnToService=2\n\
             SlurmdParameters=config_overrides\nSlurmdTimeout=600\nSlurmctldTimeout=600\n\
             NodeName=longhaul-node NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN\n\
             PartitionName=sweep Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
            ctld = free_port(),
            slurmd = free_port(),
            socket = socket.display(),
        );
        std::fs::write(&cluster.conf, conf).unwrap();
        for (name, args) in [
            ("slurmctld", vec!["-D"]),
            ("slurmd", vec!["-D", "-N", "longhaul-node"]),
        ] {
            let child = Command::new(find(name).unwrap())
                .args(args)
                .env("SLURM_CONF", &cluster.conf)
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(dir.join(format!("log/{name}.out"))).unwrap())
                .spawn()
                .unwrap_or_else(|e| panic!("{name} starts: {e}"));
            cluster.daemons.push((name, child));
        }
        let started = Instant::now();
        loop {
            let out = cluster.cmd("sinfo", &["-h", "-o", "%t"]);
            let state = text(&out.stdout).trim().to_string();
            if state == "idle" {
                break;
            }
            let exited = cluster
                .daemons
                .iter_mut()
                .find_map(|(name, child)| child.try_wait().unwrap().map(|s| (*name, s)));
            if let Some((name, s)) = exited {
                panic!("{name} exited ({s}) while starting:\n{}", cluster.logs());
            }
            assert!(
                started.elapsed() < Duration::from_secs(180),
                "the node is `{state}`, not idle, after 180 s:\n{}",
                cluster.logs()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
        cluster
    }

    /// A Slurm client command against this cluster.
    fn cmd(&self, name: &str, args: &[&str]) -> Output {
        Command::new(find(name).unwrap())
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .output()
            .unwrap()
    }

    /// The daemons' logs, for failure messages.
    fn logs(&self) -> String {
        let mut s = String::new();
        for f in [
            "munged.out",
            "slurmctld.out",
            "slurmd.out",
            "slurmctld.log",
            "slurmd.log",
        ] {
            let t = std::fs::read_to_string(self.dir.join("log").join(f)).unwrap_or_default();
            let tail: Vec<&str> = t.lines().rev().take(15).collect();
            s.push_str(&format!("--- {f}\n"));
            for l in tail.into_iter().rev() {
                s.push_str(l);
                s.push('\n');
            }
        }
        s
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Cancel what is left, so no job step outlives its slurmd, then stop the daemons in
        // reverse order: SIGTERM, and SIGKILL for any that has not exited within 10 s.
        if self.daemons.len() == 3 {
            let _ = self.cmd("scancel", &["--user", "root"]);
            let until = Instant::now() + Duration::from_secs(20);
            while Instant::now() < until {
                let q = self.cmd("squeue", &["-h"]);
                if !q.status.success() || text(&q.stdout).trim().is_empty() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        }
        for (_, child) in self.daemons.iter_mut().rev() {
            // SAFETY: kill on our own child's pid.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            let until = Instant::now() + Duration::from_secs(10);
            while child.try_wait().ok().flatten().is_none() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not there after {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn result_files(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(out.join("runs"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.retain(|p| {
        let n = p.file_name().unwrap().to_string_lossy();
        n.ends_with(".json") && !n.ends_with(".error.json")
    });
    v.sort();
    v
}

/// `longhaul ARGS` against the test cluster.
fn longhaul(cluster: &Cluster, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args(args)
        .env("SLURM_CONF", &cluster.conf)
        .output()
        .unwrap()
}

/// `longhaul sweep submit GRID --slurm --out OUT EXTRA…` against the test cluster, to run.
fn submit_command(cluster: &Cluster, grid: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_longhaul"));
    c.args(["sweep", "submit"])
        .arg(grid)
        .args(["--slurm", "--out"])
        .arg(out)
        .args(extra)
        .env("SLURM_CONF", &cluster.conf);
    c
}

/// `longhaul sweep submit GRID --slurm --out OUT EXTRA…` against the test cluster.
fn submit(cluster: &Cluster, grid: &Path, out: &Path, extra: &[&str]) -> Output {
    submit_command(cluster, grid, out, extra).output().unwrap()
}

/// The job id in `submitted Slurm job ID: …`.
fn job_id(said: &str) -> String {
    let job = said
        .split_whitespace()
        .nth(3)
        .unwrap_or_default()
        .trim_end_matches(':')
        .to_string();
    assert!(job.parse::<u64>().is_ok(), "no job id in {said:?}");
    job
}

/// Wait until job `job` has left the queue.
fn wait_gone(cluster: &Cluster, job: &str, limit: Duration) {
    let started = Instant::now();
    loop {
        let q = cluster.cmd("squeue", &["-h", "-j", job]);
        if text(&q.stdout).trim().is_empty() {
            return;
        }
        assert!(
            started.elapsed() < limit,
            "job {job} still queued after {limit:?}: {}\n{}",
            text(&q.stdout),
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A sweep directory `work/NAME` with the Reno dumbbell as `path.toml` and `sweep` as
/// `grid.toml`; returns the sweep file.
fn sweep_dir(work: &Path, name: &str, sweep: &str) -> PathBuf {
    let dir = work.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let reno = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/dumbbell-reno.toml");
    std::fs::copy(reno, dir.join("path.toml")).unwrap();
    let grid = dir.join("grid.toml");
    std::fs::write(&grid, sweep).unwrap();
    grid
}

#[test]
fn sweeps_on_a_one_node_slurm() {
    if !root_or_skip("sweeps_on_a_one_node_slurm") {
        return;
    }
    let cluster = Cluster::start();
    let work = cluster.dir.join("work");
    refused_before_slurm(&cluster, &work);
    let (grid, out) = an_array_gives_the_local_results_bit_for_bit(&cluster, &work);
    a_grown_sweep_submits_only_its_new_runs(&cluster, &grid, &out);
    allow_large_reaches_the_tasks(&cluster, &work);
    drop(cluster);
}

/// Values that would break the script or add to it are refused, and sbatch never sees a job.
fn refused_before_slurm(cluster: &Cluster, work: &Path) {
    let grid = sweep_dir(
        work,
        "refused",
        "scenario = \"path.toml\"\n[set]\nduration = \"1s\"\n[axes]\nseed = \"1..4\"\n",
    );
    let out = work.join("refused/out");
    let newline_out = out.join("a\nb");
    let cases: [(&[&str], &Path, &str); 6] = [
        (
            &["--partition", "a b\n#SBATCH --wrap=evil"],
            &out,
            "--partition \"a b\\n#SBATCH --wrap=evil\": a Slurm partition is one word",
        ),
        (
            &["--max-running", "0"],
            &out,
            "invalid value '0' for '--max-running <N>'",
        ),
        (
            &["--cpus-per-task", "0"],
            &out,
            "invalid value '0' for '--cpus-per-task <C>'",
        ),
        (&["--time", "1 day"], &out, "--time \"1 day\""),
        (&["--time", "1h"], &out, "not a Slurm time limit"),
        (&[], &newline_out, "has a line break"),
    ];
    for (extra, out, says) in cases {
        let r = submit(cluster, &grid, out, extra);
        assert!(!r.status.success(), "{extra:?} was accepted");
        let err = text(&r.stderr);
        assert!(err.contains(says), "{extra:?}: {err}");
    }
    std::fs::write(
        &grid,
        "name = \"grid\\n#SBATCH --wrap=evil\"\nscenario = \"path.toml\"\n[axes]\n\
         seed = \"1..4\"\n",
    )
    .unwrap();
    let r = submit(cluster, &grid, &out, &[]);
    assert!(!r.status.success());
    assert!(
        text(&r.stderr).contains("has a line break; a sweep's name is one line of text"),
        "{}",
        text(&r.stderr)
    );
    let jobs = cluster.cmd("scontrol", &["show", "jobs"]);
    assert!(
        text(&jobs.stdout).contains("No jobs in the system"),
        "a refused submission reached Slurm: {}",
        text(&jobs.stdout)
    );
}

/// 24 runs as an 8-task array, into a directory whose name has spaces, both quotes, `#` and
/// `%`, named with the same: every result equals the local run's. Returns the sweep file and
/// the results directory.
fn an_array_gives_the_local_results_bit_for_bit(
    cluster: &Cluster,
    work: &Path,
) -> (PathBuf, PathBuf) {
    let grid = sweep_dir(
        work,
        "grid",
        "name = \"loss grid 'v1' \\\"#2\\\" 50%\"\nscenario = \"path.toml\"\n[set]\n\
         duration = \"5s\"\n[axes]\n\"flows.0.cc\" = [\"reno\", \"cubic\", \"fast\", \"bbr\"]\n\
         \"links.0.loss\" = [0, 1e-4]\nseed = \"1..3\"\n",
    );
    // sbatch reads the directive's spaces, quotes and `#`, Slurm the `%` of the log path.
    let slurm_out = work.join("grid/slurm out 'q' \"d\" #1 50%x");
    let local_out = work.join("grid/local-out");

    let started = Instant::now();
    let args = ["--partition", "sweep", "--time", "30", "--array-limit", "8"];
    let submitted = submit(cluster, &grid, &slurm_out, &args);
    let said = text(&submitted.stdout);
    assert!(
        submitted.status.success(),
        "{}\n{}",
        text(&submitted.stderr),
        cluster.logs()
    );
    assert!(
        said.contains("24 runs (0 finished) as 8 tasks of 3 runs"),
        "{said}"
    );
    let job = job_id(&said);
    // The job carries the sweep's name, reduced to one word.
    let show = cluster.cmd("scontrol", &["show", "job", &job]);
    assert!(
        text(&show.stdout).contains("JobName=longhaul-loss_grid__v1____2__50_"),
        "{}",
        text(&show.stdout)
    );
    wait_gone(cluster, &job, Duration::from_secs(900));
    let slurm_wall = started.elapsed();
    let logs: Vec<String> = (0..8)
        .map(|t| {
            std::fs::read_to_string(slurm_out.join(format!("slurm/{job}_{t}.out")))
                .unwrap_or_else(|e| panic!("task {t}'s log: {e}\n{}", cluster.logs()))
        })
        .collect();
    for (t, log) in logs.iter().enumerate() {
        assert!(
            log.contains("3 runs: 0 finished before, 3 ran now, 0 failed"),
            "task {t}: {log}"
        );
    }
    assert_eq!(result_files(&slurm_out).len(), 24, "{:?}", logs);

    let started = Instant::now();
    let local = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args(["sweep", "run", grid.to_str().unwrap(), "--out"])
        .arg(&local_out)
        .output()
        .unwrap();
    assert!(local.status.success(), "{}", text(&local.stderr));
    let local_wall = started.elapsed();
    eprintln!(
        "24 runs: Slurm array {:.1} s (submit to last task done), local {:.1} s",
        slurm_wall.as_secs_f64(),
        local_wall.as_secs_f64()
    );

    let (a, b) = (result_files(&slurm_out), result_files(&local_out));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.file_name(), y.file_name());
        // The provenance differs (the command: a task's `--index`, the whole sweep's run).
        let strip = |p: &Path| {
            let mut v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
            let prov = v.as_object_mut().unwrap().remove("provenance");
            assert!(prov.is_some(), "{} has no provenance", p.display());
            v
        };
        assert!(
            strip(x) == strip(y),
            "{} differs between Slurm and the local run",
            x.display()
        );
    }
    for out in [&slurm_out, &local_out] {
        let c = longhaul(cluster, &["sweep", "collect", out.to_str().unwrap()]);
        assert!(c.status.success(), "{}", text(&c.stderr));
        assert!(text(&c.stdout).contains("collected 24 of 24 runs"));
    }
    let (x, y) = (
        std::fs::read(slurm_out.join("results.csv")).unwrap(),
        std::fs::read(local_out.join("results.csv")).unwrap(),
    );
    assert!(
        x == y,
        "results.csv differs between Slurm and the local run"
    );
    assert!(x.len() > 1000, "results.csv is nearly empty");
    // One record per line, each with its run's provenance, which differs as above.
    let lines = |out: &Path| -> Vec<serde_json::Value> {
        std::fs::read_to_string(out.join("results.jsonl"))
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v.as_object_mut().unwrap().remove("provenance");
                v
            })
            .collect()
    };
    let (x, y) = (lines(&slurm_out), lines(&local_out));
    assert_eq!(x.len(), 24);
    assert!(
        x == y,
        "results.jsonl differs between Slurm and the local run"
    );
    (grid, slurm_out)
}

/// Each result file's modification time and bytes, by name.
fn snapshot(out: &Path) -> Vec<(PathBuf, std::time::SystemTime, Vec<u8>)> {
    result_files(out)
        .into_iter()
        .map(|p| {
            let t = std::fs::metadata(&p).unwrap().modified().unwrap();
            let bytes = std::fs::read(&p).unwrap();
            (p, t, bytes)
        })
        .collect()
}

/// The sweep with a fourth seed: a resubmission is an array of the 8 new runs only, and the
/// sweep file edited while the job waits (another seed, a controller in front, which shifts
/// every index) changes nothing for its tasks.
fn a_grown_sweep_submits_only_its_new_runs(cluster: &Cluster, grid: &Path, out: &Path) {
    let again = submit(cluster, grid, out, &[]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(
        text(&again.stdout).trim(),
        "all 24 runs are finished: nothing to submit"
    );
    let before = snapshot(out);
    let sweep = std::fs::read_to_string(grid).unwrap();
    std::fs::write(grid, sweep.replace("seed = \"1..3\"", "seed = \"1..4\"")).unwrap();
    // Held, so that the sweep file changes before any task starts.
    let submitted = submit_command(cluster, grid, out, &["--array-limit", "8"])
        .env("SBATCH_HOLD", "1")
        .output()
        .unwrap();
    let said = text(&submitted.stdout);
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    assert!(
        said.contains("32 runs (24 finished) as 8 tasks of 1 run"),
        "{said}"
    );
    let job = job_id(&said);
    let script = std::fs::read_to_string(out.join("slurm/sweep.sbatch")).unwrap();
    assert!(script.contains("\n#SBATCH --array=0-7\n"), "{script}");
    std::fs::write(
        grid,
        sweep
            .replace("seed = \"1..3\"", "seed = \"1..5\"")
            .replace("[\"reno\", ", "[\"lion\", \"reno\", "),
    )
    .unwrap();
    let release = cluster.cmd("scontrol", &["release", &job]);
    assert!(release.status.success(), "{}", text(&release.stderr));
    wait_gone(cluster, &job, Duration::from_secs(900));
    for t in 0..8 {
        let log = std::fs::read_to_string(out.join(format!("slurm/{job}_{t}.out")))
            .unwrap_or_else(|e| panic!("task {t}'s log: {e}\n{}", cluster.logs()));
        assert!(
            log.contains("1 run: 0 finished before, 1 ran now, 0 failed"),
            "task {t}: {log}"
        );
    }
    let after = snapshot(out);
    assert_eq!(after.len(), 32);
    for old in &before {
        assert!(after.contains(old), "{} was rewritten", old.0.display());
    }
    for (path, _, bytes) in after.iter().filter(|f| !before.contains(f)) {
        let v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        let axes = &v["sweep"]["axes"];
        assert!(
            axes["seed"] == 4 && axes["flows.0.cc"] != "lion",
            "{} is not one of the submitted runs: {axes}",
            path.display()
        );
    }
    let c = longhaul(cluster, &["sweep", "collect", out.to_str().unwrap(), "-q"]);
    assert!(
        text(&c.stdout).contains("collected 32 of 32 runs"),
        "{}",
        text(&c.stdout)
    );
}

/// A plan of 1,000,001 runs needs `--allow-large`, in the tasks as at submission: the first
/// task of 1,001 short runs finishes (without the flag it would stop at the plan's limit).
fn allow_large_reaches_the_tasks(cluster: &Cluster, work: &Path) {
    let grid = sweep_dir(
        work,
        "large",
        "scenario = \"path.toml\"\n[set]\nduration = \"10ms\"\n[axes]\nseed = \"1..1000001\"\n",
    );
    let out = work.join("large/out");
    let args = ["--chunk", "1001", "--max-running", "1"];
    let refused = submit(cluster, &grid, &out, &args);
    assert!(!refused.status.success());
    assert!(text(&refused.stderr).contains("--allow-large"));
    let submitted = submit(
        cluster,
        &grid,
        &out,
        &[&args[..], &["--allow-large"]].concat(),
    );
    let said = text(&submitted.stdout);
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    assert!(
        said.contains("1000001 runs (0 finished) as 1000 tasks of 1001 runs"),
        "{said}"
    );
    let job = job_id(&said);
    let log = out.join(format!("slurm/{job}_0.out"));
    let started = Instant::now();
    loop {
        let t = std::fs::read_to_string(&log).unwrap_or_default();
        if t.contains("1001 runs: 0 finished before, 1001 ran now, 0 failed") {
            break;
        }
        assert!(
            !t.contains("error") && started.elapsed() < Duration::from_secs(300),
            "task 0: {t:?}\n{}",
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let cancel = cluster.cmd("scancel", &[&job]);
    assert!(cancel.status.success(), "{}", text(&cancel.stderr));
    wait_gone(cluster, &job, Duration::from_secs(60));
}
