//! `longhaul man [--dir DIR]`: man pages generated from the command-line definition
//! (clap_mangen). Without `--dir`, longhaul(1) on standard output; with it, longhaul.1 and one
//! page per subcommand (longhaul-sim.1, longhaul-emu-pair.1, ...) written into DIR.

use anyhow::{Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct ManArgs {
    /// Write every page into this directory (created if needed) instead of printing
    /// longhaul(1); view one with `man DIR/longhaul-sim.1`.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The top-level page, longhaul(1).
pub fn page(cli: clap::Command) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cli).render(&mut out)?;
    Ok(out)
}

/// Write longhaul.1 and a page per subcommand, nested ones included, into `dir`.
pub fn write_all(cli: clap::Command, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--dir {}: cannot create the directory", dir.display()))?;
    clap_mangen::generate_to(cli, dir)
        .with_context(|| format!("--dir {}: cannot write the pages", dir.display()))?;
    Ok(())
}

pub fn run(args: ManArgs, cli: clap::Command) -> Result<()> {
    use std::io::Write;
    match &args.dir {
        Some(dir) => write_all(cli, dir),
        None => Ok(std::io::stdout().write_all(&page(cli)?)?),
    }
}
