//! `longhaul reproduce [NAME…] [--list] [--full] [--json OUT] [--report DIR]`: the seeds'
//! experiments in the simulator, the paper's figure next to the measured one.
//!
//! The experiments and their claims live in `longhaul-reproduce`; this module picks them, shows
//! progress on stderr, prints each experiment's claims table on stdout, and writes the JSON (one
//! result summary per run, claims on each experiment's first) and HTML reports.

use anyhow::{anyhow, Result};
use clap::Args;
use longhaul_reproduce::experiment::plan_name;
use longhaul_reproduce::output::{all_summaries, claims_table, list, totals, write_reports};
use longhaul_reproduce::{run_experiment, Event, Plan};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

#[derive(Args)]
pub struct ReproduceArgs {
    /// Experiments to run (default: all; see --list).
    pub names: Vec<String>,
    /// List the experiments and what the default run shortens, then exit.
    #[arg(long)]
    pub list: bool,
    /// Run the papers' durations and rates (hours of simulated time) instead of the short default.
    #[arg(long)]
    pub full: bool,
    /// Write the result summaries (one per run, with the claims) as a JSON array to OUT (`-`:
    /// standard output, with the claim tables on stderr).
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Write one HTML report per run into DIR (created if needed).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Simulations to run at once (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

pub fn run(args: ReproduceArgs) -> Result<()> {
    let picked = longhaul_reproduce::pick(&args.names).map_err(|e| anyhow!(e))?;
    if args.list {
        print!("{}", list(&picked));
        return Ok(());
    }
    if let Some(path) = &args.json {
        crate::outputs::check_file(path, "--json")?;
    }
    if let Some(dir) = &args.report {
        crate::outputs::check_dir(dir, "--report")?;
    }
    let plan = if args.full { Plan::FULL } else { Plan::DEFAULT };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let terminal = std::io::stderr().is_terminal();
    let last_line = Mutex::new(Instant::now());
    let report = |event: Event<'_>| match event {
        Event::Started { experiment, run } => {
            eprintln!("[{experiment}] {}: {}", run.label, run.command());
        }
        Event::Progress {
            experiment,
            run,
            progress,
        } => {
            let mut last = last_line.lock().unwrap_or_else(|e| e.into_inner());
            if terminal && last.elapsed().as_millis() >= 500 {
                *last = Instant::now();
                eprint!(
                    "\r[{experiment}] {}: {:.0} %  \r",
                    run.label,
                    100.0 * progress.sim_ns as f64 / progress.duration_ns.max(1) as f64
                );
                let _ = std::io::stderr().flush();
            }
        }
        Event::Finished {
            experiment,
            run,
            wall_s,
        } => eprintln!("[{experiment}] {}: done in {wall_s:.1} s", run.label),
    };

    eprintln!(
        "longhaul reproduce: {} experiment{} ({} durations), {threads} at a time",
        picked.len(),
        if picked.len() == 1 { "" } else { "s" },
        plan_name(&plan)
    );
    let start = Instant::now();
    // With `--json -` standard output carries the JSON alone; the tables go to stderr.
    let json_to_stdout = args.json.as_deref().is_some_and(crate::outputs::is_stdout);
    let say = |text: &str| {
        if json_to_stdout {
            eprint!("{text}");
        } else {
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
    };
    let mut results = Vec::new();
    for (i, e) in picked.iter().enumerate() {
        let mut result = run_experiment(e, &plan, threads, &report)?;
        for (run, summary) in result.runs.iter().zip(&mut result.summaries) {
            let text = longhaul_reproduce::scenarios::builtin(run.scenario).map_or("", |b| b.text);
            let path = format!("scenarios/{}.toml", run.scenario);
            summary.provenance = Some(crate::provenance::with_text(&path, text));
        }
        if i > 0 {
            say("\n");
        }
        say(&claims_table(&result));
        results.push(result);
    }
    say(&format!("\n{}\n", totals(&results)));
    eprintln!("wall time {:.1} s", start.elapsed().as_secs_f64());

    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&all_summaries(&results))?;
        crate::outputs::write_text(path, &text)?;
        if !crate::outputs::is_stdout(path) {
            eprintln!("wrote {}", path.display());
        }
    }
    if let Some(dir) = &args.report {
        let paths = write_reports(&results, dir)?;
        eprintln!("wrote {} reports into {}", paths.len(), dir.display());
    }
    Ok(())
}
