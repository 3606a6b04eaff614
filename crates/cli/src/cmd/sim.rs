//! `longhaul sim FILE`: run a scenario in the packet simulator.
//!
//! Prints the result table; `--json` writes the result summary (docs/measurements.md), `--report` writes
//! a directory with the summary, an HTML page with plots (each also as `figures/<name>.svg`), the drop log and per-queue details.
//! Long runs show a progress bar on stderr (simulated time, events/s, ETA) when it is a terminal.

use crate::units::parse_duration;
use anyhow::{Context, Result};
use clap::Args;
use longhaul_metrics::report::{summary_table, write_report_dir};
use longhaul_sim::progress_bar::ProgressBar;
use longhaul_sim::{run_on, Scenario};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub struct SimArgs {
    /// The scenario file (TOML; see docs/scenario.md).
    pub file: PathBuf,
    /// Override a scenario field by dotted path, e.g. `--set duration=30s --set flows.0.cc=reno`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Shorthand for `--set duration=D` (e.g. 30s, 1h).
    #[arg(long, value_name = "D")]
    pub duration: Option<String>,
    /// Shorthand for `--set seed=N`.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Time-series interval, shorthand for `--set output.interval=D` (default: the scenario's,
    /// else the first of 100 ms, 200 ms, 250 ms, 500 ms, 1 s … at least the longest RTT).
    #[arg(long, value_name = "D")]
    pub interval: Option<String>,
    /// Write the result summary as JSON to this file (`-` for stdout).
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Write summary.json, report.html (its figures also as figures/NAME.svg), drops.csv and
    /// details.json into this directory.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// With --report: each figure also as figures/NAME.png (twice the SVG's size).
    #[arg(long, requires = "report")]
    pub png: bool,
    /// No progress bar and no table.
    #[arg(long, short)]
    pub quiet: bool,
    /// Threads to run on: 1, or 2 to split a run whose network allows it across two cores
    /// (the result is the same bit for bit). Default: 2 when the machine has two CPUs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=2))]
    pub threads: Option<u8>,
}

pub fn run(args: SimArgs) -> Result<()> {
    let mut sets = args.set.clone();
    if let Some(d) = &args.duration {
        parse_duration(d).context("--duration")?;
        sets.push(format!("duration=\"{d}\""));
    }
    if let Some(s) = args.seed {
        sets.push(format!("seed={s}"));
    }
    if let Some(d) = &args.interval {
        parse_duration(d).context("--interval")?;
        sets.push(format!("output.interval=\"{d}\""));
    }
    // The provenance hashes the text that was parsed, read once before the run.
    let (checked, text) = Scenario::load_source(&args.file, &sets)?;
    let provenance = crate::provenance::with_text(&args.file.display().to_string(), &text);
    if let Some(path) = &args.json {
        crate::outputs::check_file(path, "--json")?;
    }
    if let Some(dir) = &args.report {
        crate::outputs::check_dir(dir, "--report")?;
    }
    let show_bar = !args.quiet && std::io::stderr().is_terminal();
    let mut bar = ProgressBar::new(show_bar);
    let started = Instant::now();
    let threads = match args.threads {
        Some(n) => n as usize,
        None => longhaul_sim::default_threads(),
    };
    let mut outcome = run_on(&checked, threads, &mut |p| bar.update(p))?;
    outcome.summary.provenance = Some(provenance);
    bar.finish(&outcome, started.elapsed().as_secs_f64());

    let json_to_stdout = args.json.as_deref().is_some_and(crate::outputs::is_stdout);
    if !args.quiet && !json_to_stdout {
        print!("{}", summary_table(&outcome.summary));
        outcome.notes().iter().for_each(|n| println!("{n}"));
    }
    if let Some(path) = &args.json {
        crate::outputs::write_text(path, &outcome.summary.to_json()?)?;
    }
    if let Some(dir) = &args.report {
        write_report_dir(&outcome.summary, dir, &outcome.report_files()?)?;
        if args.png {
            crate::png::convert_dir(&dir.join("figures"))?;
        }
        if !args.quiet {
            eprintln!("report: {}", dir.join("report.html").display());
        }
    }
    Ok(())
}
