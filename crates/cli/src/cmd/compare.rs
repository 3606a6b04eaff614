//! `longhaul compare A.json B.json`: two result summaries side by side (e.g. `sim` vs `lab`).
//!
//! Each file holds one summary or an array of them (`reproduce` writes one per experiment). Two
//! single summaries are compared directly; otherwise summaries are paired by scenario name.
//! `--report DIR` overlays every given run in one set of figures (report.html and
//! figures/NAME.svg), each run labelled by its file name; it takes two files or more.

use anyhow::{bail, Context, Result};
use clap::Args;
use longhaul_metrics::report::{by_scenario, compare};
use longhaul_metrics::summary::Summary;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct CompareArgs {
    /// The baseline result summary (JSON from sim, lab, reproduce or perf -J).
    pub a: PathBuf,
    /// The summary to compare against it; differences are B − A.
    pub b: PathBuf,
    /// More summaries to overlay in the `--report` figures (the table compares A and B).
    #[arg(requires = "report")]
    pub more: Vec<PathBuf>,
    /// Write report.html with every run overlaid in one set of figures, and each figure as
    /// figures/NAME.svg, into this directory.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// With --report: each figure also as figures/NAME.png (twice the SVG's size).
    #[arg(long, requires = "report")]
    pub png: bool,
}

fn load(path: &Path) -> Result<Vec<Summary>> {
    let all = Summary::read_all(path).map_err(|e| {
        anyhow::anyhow!(
            "{e}\n(expected the JSON written by `longhaul sim --json`, `lab --json`, \
             `reproduce --json` or `perf -J`)"
        )
    })?;
    if all.is_empty() {
        bail!("{} holds an empty list of summaries", path.display());
    }
    for s in &all {
        for p in s.problems() {
            eprintln!("warning: {} ({}): {p}", path.display(), s.scenario);
        }
    }
    Ok(all)
}

/// The overlay report of every run in `files` (each file's first summary).
fn overlay(files: &[&PathBuf], dir: &Path, png: bool) -> Result<()> {
    let mut runs = Vec::new();
    for f in files {
        let s = load(f)?.swap_remove(0);
        runs.push((f.display().to_string(), s));
    }
    let refs: Vec<(&str, &Summary)> = runs.iter().map(|(l, s)| (l.as_str(), s)).collect();
    longhaul_output::create_dir(dir).with_context(|| format!("--report {}", dir.display()))?;
    let html = longhaul_metrics::report::overlay_report(&refs)?;
    longhaul_output::write(&dir.join("report.html"), html.as_bytes())?;
    longhaul_metrics::report::write_figures(&refs, &dir.join("figures"))?;
    if png {
        crate::png::convert_dir(&dir.join("figures"))?;
    }
    eprintln!("report: {}", dir.join("report.html").display());
    Ok(())
}

pub fn run(args: CompareArgs) -> Result<()> {
    if let Some(dir) = &args.report {
        crate::outputs::check_dir(dir, "--report")?;
    }
    let a = load(&args.a)?;
    let b = load(&args.b)?;
    if let Some(dir) = &args.report {
        let files: Vec<&PathBuf> = [&args.a, &args.b].into_iter().chain(&args.more).collect();
        overlay(&files, dir, args.png)?;
    }
    let (la, lb) = (args.a.display().to_string(), args.b.display().to_string());
    if a.len() == 1 && b.len() == 1 {
        print!("{}", compare(&a[0], &la, &b[0], &lb).render());
        return Ok(());
    }
    let (pairs, notes) = by_scenario(&a, &la, &b, &lb);
    for (i, (sa, sb)) in pairs.iter().enumerate() {
        if i > 0 {
            println!();
        }
        println!("== {}", sa.scenario);
        print!("{}", compare(sa, &la, sb, &lb).render());
    }
    notes.iter().for_each(|n| eprintln!("{n}"));
    if pairs.is_empty() {
        bail!("{la} and {lb} have no scenario in common");
    }
    Ok(())
}
