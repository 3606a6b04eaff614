//! `longhaul sweep plan|run|submit|collect|show`: a grid of simulator (or lab) runs, by index.
//!
//! The work is `longhaul-sweep`'s (crates/sweep); this module only maps arguments onto it and
//! prints. `docs/sweep.md` is the user's guide.

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use longhaul_sweep::collect::{collect, table, write_results};
use longhaul_sweep::cost::{describe, plan_table, Speed};
use longhaul_sweep::plan::Plan;
use longhaul_sweep::runner::{cores, run_indices, Engine, RunOptions};
use longhaul_sweep::slurm::{prepare, submit, Prepared, SlurmOptions};
use longhaul_sweep::store::SweepDir;
use longhaul_sweep::work::Work;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum SweepCommand {
    /// List the runs of a sweep file with their indices, simulated seconds and estimated CPU
    /// time, and the total (`--index N`: one run and the `longhaul sim` command that
    /// reproduces it).
    Plan(PlanArgs),
    /// Run a sweep's runs on this machine's cores, or one block of them (`--index N
    /// [--chunk K]`, for array schedulers); finished runs are skipped, failed ones retried, and
    /// a sweep file that grew runs only its new runs.
    Run(RunArgs),
    /// Submit a sweep as a Slurm array job (each task runs `sweep run --index`).
    Submit(SubmitArgs),
    /// Merge a results directory into results.csv, results.jsonl and report.html (and
    /// results-long.csv with --long).
    Collect(CollectArgs),
    /// Print a results directory's table, filtered (`--where cc=fast`) and cut to some columns
    /// (`--columns index,cc,throughput_bps`).
    Show(ShowArgs),
}

#[derive(Args)]
pub struct PlanArgs {
    /// The sweep file (TOML; see docs/sweep.md).
    pub file: PathBuf,
    /// Show one run and the `longhaul sim` command that reproduces it.
    #[arg(long, value_name = "N")]
    pub index: Option<u64>,
    /// Print only the number of runs (for scripts: `seq 0 $((N - 1)) | parallel …`).
    #[arg(long, conflicts_with_all = ["index", "check"])]
    pub count: bool,
    /// List the runs whose scenario does not load with their overrides (combinations that
    /// fail together) and fail if there are any; without it they are counted in a note.
    #[arg(long)]
    pub check: bool,
    /// Accept more than 1,000,000 runs.
    #[arg(long)]
    pub allow_large: bool,
}

#[derive(Args)]
pub struct RunArgs {
    /// The sweep file (TOML; see docs/sweep.md), or a tasks file of `sweep submit`
    /// (DIR/slurm/tasks-….json: the runs as submitted).
    pub file: PathBuf,
    /// The results directory (one file per run; shared by every process of the sweep).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Run only run N, or with --chunk K block N: runs N·K to N·K+K−1; with a tasks file,
    /// task N's runs.
    #[arg(long, value_name = "N")]
    pub index: Option<u64>,
    /// Runs per block for --index.
    #[arg(long, value_name = "K", requires = "index", value_parser = clap::value_parser!(u64).range(1..))]
    pub chunk: Option<u64>,
    /// Runs at once (default: the machine's cores).
    #[arg(long, short, value_name = "J", value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// Accept more than 1,000,000 runs.
    #[arg(long)]
    pub allow_large: bool,
    /// No progress bar and no summary line.
    #[arg(long, short)]
    pub quiet: bool,
    /// What runs the runs: the simulator, or real kernel stacks over the emulator (`longhaul
    /// lab`: root, one run at a time); a results directory holds one engine's results.
    #[arg(long, value_enum, default_value_t = EngineArg::Sim)]
    pub engine: EngineArg,
}

/// `sweep run --engine`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// The packet simulator (`longhaul sim`).
    Sim,
    /// Real kernel TCP in network namespaces over the emulator (`longhaul lab`).
    Lab,
}

#[derive(Args)]
pub struct SubmitArgs {
    /// The sweep file (TOML; see docs/sweep.md).
    pub file: PathBuf,
    /// Submit to Slurm (`sbatch`); the only engine longhaul submits to itself (docs/sweep.md
    /// shows Kubernetes and GNU parallel).
    #[arg(long)]
    pub slurm: bool,
    /// The results directory, on a filesystem every node shares.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The Slurm partition (one word; Slurm's default partition when not given).
    #[arg(long, value_name = "P")]
    pub partition: Option<String>,
    /// Time limit per task, in Slurm's format (`30`, `1:00:00`, `2-00:00:00`).
    #[arg(long, value_name = "T")]
    pub time: Option<String>,
    /// CPUs per task: a task runs that many runs at once.
    #[arg(long, value_name = "C", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub cpus_per_task: u32,
    /// At most this many array tasks (the cluster's MaxArraySize − 1); more runs are cut into
    /// blocks.
    #[arg(long, value_name = "M", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub array_limit: u64,
    /// Runs per task (default: as few as --array-limit allows).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub chunk: Option<u64>,
    /// At most this many tasks at once (sbatch's `--array=…%N`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_running: Option<u64>,
    /// The longhaul binary the tasks run (default: this one); it must be visible on the nodes.
    #[arg(long, value_name = "PATH")]
    pub longhaul: Option<PathBuf>,
    /// Write DIR/slurm/sweep.sbatch and its tasks file, and stop.
    #[arg(long)]
    pub dry_run: bool,
    /// Accept more than 1,000,000 runs.
    #[arg(long)]
    pub allow_large: bool,
}

#[derive(Args)]
pub struct CollectArgs {
    /// The results directory of `sweep run` or `sweep submit`.
    pub dir: PathBuf,
    /// No table on the terminal.
    #[arg(long, short)]
    pub quiet: bool,
    /// Also write results-long.csv: one row per run × flow × metric (index, axes, flow,
    /// metric, value), the form plotting libraries take.
    #[arg(long)]
    pub long: bool,
}

#[derive(Args)]
pub struct ShowArgs {
    /// The results directory of `sweep run` or `sweep submit`.
    pub dir: PathBuf,
    /// Keep the rows whose column NAME holds VALUE (numbers compare as numbers); repeatable,
    /// all must hold.
    #[arg(long = "where", value_name = "NAME=VALUE")]
    pub conditions: Vec<longhaul_sweep::show::Condition>,
    /// The columns to print, comma-separated (default: index, the axes, flow, cc and the
    /// headline metrics); the names are those of results.csv.
    #[arg(long, value_name = "A,B,…", value_delimiter = ',')]
    pub columns: Vec<String>,
}

pub fn run(cmd: SweepCommand) -> Result<()> {
    match cmd {
        SweepCommand::Plan(a) => plan(a),
        SweepCommand::Run(a) => run_sweep(a),
        SweepCommand::Submit(a) => submit_sweep(a),
        SweepCommand::Collect(a) => collect_dir(a),
        SweepCommand::Show(a) => show(a),
    }
}

fn show(a: ShowArgs) -> Result<()> {
    let dir = SweepDir::open(&a.dir)?;
    let c = collect(&dir)?;
    let t = longhaul_sweep::show::select(&table(&c), &a.conditions, &a.columns)?;
    print!("{}", longhaul_sweep::show::render(&t));
    println!("{} rows; {}", t.rows.len(), c.describe());
    Ok(())
}

fn plan(a: PlanArgs) -> Result<()> {
    let plan = Plan::load(&a.file, a.allow_large)?;
    if a.count {
        println!("{}", plan.runs);
        return Ok(());
    }
    if let Some(i) = a.index {
        let run = plan.run(i)?;
        println!("run {i}: {}", run.label());
        println!("{}", run.sim_command());
        println!("result: DIR/runs/{}.json", run.key());
        return Ok(());
    }
    println!("{}: {}", plan.name(), plan.describe());
    let speed = Speed::calibrate(1.0, 0.3)?;
    let table = plan_table(&plan, &speed)?;
    print!("{}", table.text);
    let loaded = plan.runs - table.bad.len() as u64;
    println!("{}", describe(&table.total, loaded, &speed, cores()));
    if !a.check {
        if let Some(note) = table.note() {
            eprintln!("{note}");
        }
    } else if !table.bad.is_empty() {
        for b in &table.bad {
            eprintln!("{b}");
        }
        bail!(table.refusal(plan.runs));
    }
    Ok(())
}

fn run_sweep(a: RunArgs) -> Result<()> {
    let work = Work::select(&a.file, &a.out, a.index, a.chunk, a.allow_large)?;
    let Work { plan, dir, .. } = &work;
    if let (Some(note), false) = (&work.note, a.quiet) {
        eprintln!("{note}");
    }
    let engine = match a.engine {
        EngineArg::Sim => Engine::SIM,
        EngineArg::Lab => lab_engine(plan, &work.indices)?,
    };
    let opts = RunOptions {
        engine,
        jobs: a.jobs.map_or_else(cores, |j| j as usize),
        progress: !a.quiet && std::io::stderr().is_terminal(),
        provenance: Some(crate::provenance::capture()),
    };
    if !a.quiet {
        eprintln!("{}: {}", plan.name(), plan.describe());
    }
    let report = run_indices(plan, dir, work.indices.iter().copied(), &opts)?;
    if !a.quiet {
        println!("{report}");
    }
    if let Some((lines, message)) = work.failures(&report)? {
        lines.iter().for_each(|l| eprintln!("{l}"));
        bail!(message);
    }
    Ok(())
}

fn submit_sweep(a: SubmitArgs) -> Result<()> {
    if !a.slurm {
        bail!(
            "choose an engine: --slurm (docs/sweep.md shows Kubernetes Indexed Jobs and GNU \
             parallel, which run `longhaul sweep run --index` themselves)"
        );
    }
    let (plan, dir) = longhaul_sweep::work::open(&a.file, &a.out, a.allow_large)?;
    // The tasks start in another directory, on another machine: absolute paths only.
    let out = absolute(&a.out)?;
    let longhaul = match a.longhaul {
        Some(p) => absolute(&p)?,
        None => std::env::current_exe().context("finding this longhaul binary for the tasks")?,
    };
    let opts = SlurmOptions {
        partition: a.partition,
        time: a.time,
        cpus_per_task: a.cpus_per_task,
        array_limit: a.array_limit,
        chunk: a.chunk,
        max_running: a.max_running,
        longhaul,
        allow_large: a.allow_large,
    };
    let Some(Prepared {
        script: path,
        tasks_file,
        what,
    }) = prepare(&plan, &dir, &out, &opts)?
    else {
        println!("all {} runs are finished: nothing to submit", plan.runs);
        return Ok(());
    };
    if a.dry_run {
        println!(
            "wrote {} ({what}, listed in {}); submit it with: sbatch {}",
            path.display(),
            tasks_file.display(),
            path.display()
        );
        return Ok(());
    }
    let id = submit(&path)?;
    longhaul_output::write(&out.join("slurm/job-id"), format!("{id}\n").as_bytes()).ok();
    println!(
        "submitted Slurm job {id}: {what}; follow it with `squeue -j {id}`, then \
         `longhaul sweep collect {}`",
        out.display()
    );
    Ok(())
}

fn collect_dir(a: CollectArgs) -> Result<()> {
    let dir = SweepDir::open(&a.dir)?;
    let c = collect(&dir)?;
    let written = write_results(&dir, &c, a.long)?;
    if !a.quiet {
        print!("{}", longhaul_sweep::report::controller_table(&c));
    }
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    println!("collected {}: {}", c.describe(), names.join(", "));
    for note in c.notes(&a.dir) {
        eprintln!("{note}");
    }
    Ok(())
}

fn absolute(p: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(p).with_context(|| format!("resolving {}", p.display()))
}

/// `sweep run --engine lab`: each run is `longhaul lab` on its scenario and overrides.
#[cfg(feature = "kernel")]
fn lab_engine(plan: &Plan, indices: &[u64]) -> Result<Engine> {
    Ok(longhaul_lab::sweep::engine(plan, indices)?)
}

/// Without the `kernel` feature there is no lab.
#[cfg(not(feature = "kernel"))]
fn lab_engine(_: &Plan, _: &[u64]) -> Result<Engine> {
    bail!("this longhaul was built without the `kernel` feature, which `--engine lab` needs")
}
