//! `longhaul cc`: the congestion-control library from the command line.

use anyhow::Result;
use clap::Subcommand;
use longhaul_cc::{algorithms, ParamKind};

#[derive(Subcommand)]
pub enum CcCommand {
    /// List the algorithms with their parameters, defaults and presets.
    List,
}

pub fn run(cmd: CcCommand) -> Result<()> {
    match cmd {
        CcCommand::List => list(),
    }
}

fn list() -> Result<()> {
    for a in algorithms() {
        println!("{:<10} {}", a.name, a.summary);
        println!("{:<10} source: {}", "", a.source);
        for p in a.params {
            let unit = if p.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", p.unit)
            };
            let range = match p.kind {
                ParamKind::Float { .. } | ParamKind::Int { .. } | ParamKind::Choice(_) => {
                    format!(" ({})", p.allowed())
                }
                ParamKind::Bool => String::new(),
            };
            println!(
                "{:<12}{}={}{}{}  {}",
                "", p.name, p.default, unit, range, p.help
            );
        }
        for pr in a.presets {
            let vals: Vec<String> = pr.values.iter().map(|(k, v)| format!("{k}={v}")).collect();
            println!(
                "{:<12}preset={} [{}]  {}",
                "",
                pr.name,
                vals.join(","),
                pr.help
            );
        }
        println!();
    }
    Ok(())
}
