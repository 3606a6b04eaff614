//! `longhaul lab FILE|NAME`: run a scenario with real kernel TCP over the emulator.
//!
//! Same flags as `sim`; `--list` shows the built-in experiments (`scenarios/lab/`), and a
//! built-in name runs each of its variants and prints one table of them. Needs root.
//! SIGINT/SIGTERM/SIGHUP are blocked in every thread and collected here, so an interrupted run
//! still removes its namespaces and unloads its congestion controls.

use anyhow::Result;
use clap::Args;
use longhaul_emu::sys::signals::{block_termination_signals, wait_signal};
use longhaul_lab::builtin::{self, Target};
use longhaul_lab::{plan_from_text, RunOptions};
use longhaul_metrics::report::{summary_table, variants_table, write_report_dir};
use longhaul_metrics::summary::Summary;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct LabArgs {
    /// A scenario file (as for `longhaul sim`) or a built-in name (see `--list`).
    #[arg(required_unless_present = "list")]
    pub target: Option<String>,
    /// List the built-in lab experiments.
    #[arg(long)]
    pub list: bool,
    /// Run only this variant of a built-in (e.g. `cubic`, `mtu=9000`).
    #[arg(long, value_name = "LABEL")]
    pub variant: Option<String>,
    /// Override a scenario field by dotted path, e.g. `--set duration=30s --set flows.0.cc=reno`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Shorthand for `--set duration=D`.
    #[arg(long, value_name = "D")]
    pub duration: Option<String>,
    /// Write the result summary as JSON (`-` for stdout); a built-in with several variants
    /// writes a JSON array of summaries.
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Write summary.json (with the bottleneck's queue series), report.html (its figures also as
    /// figures/NAME.svg), drops.csv (the
    /// emulator's drop log), emulator.json (its counters and timing) and clock.json (the
    /// experiment's start on the event log's clock and its span) into this directory
    /// (one subdirectory per variant for a built-in).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// With --report: each figure also as figures/NAME.png (twice the SVG's size).
    #[arg(long, requires = "report")]
    pub png: bool,
    /// Also keep the emulator's per-packet event log (`emulator-events.log`, about 2 MB per
    /// second at 100 Mb/s) in the report directory: with emulator.json, clock.json and the
    /// scenario, everything the links' metrics are computed from.
    #[arg(long, requires = "report")]
    pub keep_event_log: bool,
    /// No progress lines and no table.
    #[arg(long, short)]
    pub quiet: bool,
    /// Forward with one busy-polling thread on a CPU of its own, the flows' endpoints on the
    /// others (`longhaul emu --busy-poll`): releases on time to microseconds, which FAST's
    /// delay measurement needs at 1 Gb/s on a small machine.
    #[arg(long)]
    pub busy_poll: bool,
    /// Turn the emulator's TUN offloads off: the hosts hand over one wire packet per read
    /// instead of TCP super-packets (`longhaul emu --no-offload`).
    #[arg(long)]
    pub no_offload: bool,
    /// The emulator's coalescing window (`longhaul emu --coalesce`, default 20us): consecutive
    /// wire packets of one super-packet that leave the bottleneck within it reach the receiving
    /// host together, as a receiving NIC's interrupt moderation and GRO would hand them over;
    /// none is more than this late. Recorded in the result's meta (`emu_coalesce_us`).
    #[arg(long, value_name = "DURATION", conflicts_with = "no_offload", value_parser = coalesce_ns)]
    pub coalesce: Option<u64>,
    /// Set a network-namespace sysctl in both hosts' namespaces after the lab's own tuning, e.g.
    /// `--sysctl net.ipv4.tcp_pacing_ca_ratio=150`; repeatable, recorded in the result's meta.
    #[arg(long, value_name = "KEY=VALUE")]
    pub sysctl: Vec<longhaul_lab::Sysctl>,
}

/// `--coalesce`: a duration (`100us`) in nanoseconds.
fn coalesce_ns(s: &str) -> Result<u64> {
    crate::units::parse_duration(s).map(crate::units::nanos)
}

pub fn run(args: LabArgs) -> Result<()> {
    if args.list {
        print!("{}", builtin::listing());
        return Ok(());
    }
    let target = args.target.clone().expect("clap requires it");
    let mut sets = args.set.clone();
    if let Some(d) = &args.duration {
        sets.push(format!("duration=\"{d}\""));
    }
    let Target {
        text,
        file,
        stem,
        variants,
    } = builtin::resolve(&target, args.variant.as_deref())?;
    // Check every variant before running any.
    let mut plans = Vec::new();
    for v in &variants {
        let mut all = v.sets.clone();
        all.extend(sets.iter().cloned());
        plans.push((v.label.clone(), plan_from_text(&text, &file, &stem, &all)?));
    }
    block_termination_signals();
    let json_to_stdout = args.json.as_deref().is_some_and(crate::outputs::is_stdout);
    let mut summaries = Vec::new();
    for (label, plan) in &plans {
        let keep_log = args
            .report
            .as_ref()
            .filter(|_| args.keep_event_log)
            .map(|d| {
                let dir = variant_dir(d, label, plans.len());
                let _ = std::fs::create_dir_all(&dir);
                dir.join("emulator-events.log")
            });
        let opts = RunOptions {
            event_log: keep_log,
            verbose: !args.quiet,
            busy_poll: args.busy_poll,
            no_offload: args.no_offload,
            coalesce_ns: args.coalesce,
            sysctls: args.sysctl.clone(),
        };
        if !args.quiet && !label.is_empty() {
            eprintln!("longhaul lab: --- {} [{label}] ---", plan.name);
        }
        let mut outcome = longhaul_lab::run(plan, &opts, &mut wait_signal)?;
        outcome.summary.provenance = Some(crate::provenance::with_text(&file, &text));
        if !args.quiet && !json_to_stdout {
            print!("{}", summary_table(&outcome.summary));
        }
        if let Some(dir) = &args.report {
            let dir = variant_dir(dir, label, plans.len());
            write_report_dir(&outcome.summary, &dir, &outcome.report_files()?)?;
            if args.png {
                crate::png::convert_dir(&dir.join("figures"))?;
            }
            if !args.quiet {
                eprintln!("report: {}", dir.join("report.html").display());
            }
        }
        summaries.push((label.clone(), outcome.summary));
    }
    if summaries.len() > 1 && !args.quiet && !json_to_stdout {
        print!("{}", variants_table(&summaries));
    }
    if let Some(path) = &args.json {
        let text = if summaries.len() == 1 {
            summaries[0].1.to_json()?
        } else {
            let v: Vec<&Summary> = summaries.iter().map(|(_, s)| s).collect();
            serde_json::to_string_pretty(&v)?
        };
        crate::outputs::write_text(path, &text)?;
    }
    Ok(())
}

fn variant_dir(dir: &Path, label: &str, n: usize) -> PathBuf {
    if n > 1 {
        dir.join(label.replace(['=', '/'], "-"))
    } else {
        dir.to_path_buf()
    }
}
