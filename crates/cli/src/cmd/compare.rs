//! `longhaul compare A.json B.json`: two result summaries side by side (e.g. `sim` vs `lab`).
//!
//! Each file holds one summary or an array of them (`reproduce` writes one per experiment). Two
//! single summaries are compared directly; otherwise summaries are paired by scenario name.

use anyhow::{bail, Result};
use clap::Args;
use longhaul_metrics::report::compare;
use longhaul_metrics::summary::Summary;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct CompareArgs {
    /// The baseline result summary (JSON from sim, lab, reproduce or perf -J).
    pub a: PathBuf,
    /// The summary to compare against it; differences are B − A.
    pub b: PathBuf,
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

pub fn run(args: CompareArgs) -> Result<()> {
    let a = load(&args.a)?;
    let b = load(&args.b)?;
    let (la, lb) = (args.a.display().to_string(), args.b.display().to_string());
    if a.len() == 1 && b.len() == 1 {
        print!("{}", compare(&a[0], &la, &b[0], &lb).render());
        return Ok(());
    }
    let mut compared = 0;
    for sa in &a {
        match b.iter().find(|sb| sb.scenario == sa.scenario) {
            Some(sb) => {
                if compared > 0 {
                    println!();
                }
                println!("== {}", sa.scenario);
                print!("{}", compare(sa, &la, sb, &lb).render());
                compared += 1;
            }
            None => eprintln!("note: scenario `{}` is only in {la}", sa.scenario),
        }
    }
    for sb in b
        .iter()
        .filter(|sb| !a.iter().any(|sa| sa.scenario == sb.scenario))
    {
        eprintln!("note: scenario `{}` is only in {lb}", sb.scenario);
    }
    if compared == 0 {
        bail!("{la} and {lb} have no scenario in common");
    }
    Ok(())
}
