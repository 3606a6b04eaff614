//! `longhaul kernel`: FAST, Scalable, HighSpeed and Vegas as Linux congestion controls (eBPF
//! struct_ops), usable by any TCP program through `sysctl net.ipv4.tcp_congestion_control` or
//! `setsockopt(TCP_CONGESTION)`.

use anyhow::Result;
use clap::Subcommand;
use longhaul_kernel::catalog::{split_spec, Algorithm};
use longhaul_kernel::status::Status;
use longhaul_kernel::{loader, LoadOptions, ParamValues};

#[derive(Subcommand)]
pub enum KernelCommand {
    /// Load and register a congestion control; it stays registered after this command exits.
    Load {
        /// Algorithm as everywhere in longhaul, NAME[:key=value,…]: fast, scalable, highspeed or
        /// vegas, e.g. `fast:alpha=20,beta=20`.
        algorithm: String,
        /// Parameter as key=value (repeatable), added to those after NAME:; see `longhaul
        /// kernel algorithms`.
        #[arg(long = "param", value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// `-p` is the port in `perf` and `recv`; kept only to say so.
        #[arg(short = 'p', hide = true, value_name = "KEY=VALUE")]
        old_p: Vec<String>,
        /// Register under this name instead of the algorithm's (at most 15 bytes), e.g. when
        /// the kernel already has a congestion control by that name.
        #[arg(long)]
        name: Option<String>,
    },
    /// Show the congestion controls longhaul has loaded, their parameters and their sockets.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Unregister a congestion control loaded by longhaul (sockets using it keep working).
    Unload {
        /// The registered name, as `longhaul kernel list` shows it.
        name: String,
    },
    /// Describe the algorithms and their load-time parameters.
    Algorithms,
}

pub fn run(cmd: KernelCommand) -> Result<()> {
    match cmd {
        KernelCommand::Load {
            algorithm,
            params,
            old_p,
            name,
        } => {
            if let Some(p) = old_p.first() {
                anyhow::bail!(
                    "`-p` means a port in longhaul (perf, recv); give parameters as \
                     `longhaul kernel load {algorithm}:{p}` or `--param {p}`"
                );
            }
            load(&algorithm, &params, name)
        }
        KernelCommand::List { json } => list(json),
        KernelCommand::Unload { name } => {
            loader::unload(&name)?;
            println!("unloaded {name}");
            Ok(())
        }
        KernelCommand::Algorithms => {
            algorithms();
            Ok(())
        }
    }
}

fn load(spec: &str, params: &[String], name: Option<String>) -> Result<()> {
    let (algorithm, settings) = split_spec(spec, params);
    let algorithm = Algorithm::parse(&algorithm)?;
    let params = ParamValues::from_settings(algorithm, &settings)?;
    let loaded = loader::load(&LoadOptions { params, name })?;
    println!("{}", loaded.describe());
    Ok(())
}

fn list(json: bool) -> Result<()> {
    let status = Status::read()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&status.json())?);
    } else {
        print!("{}", status.text());
    }
    Ok(())
}

fn algorithms() {
    for a in Algorithm::ALL {
        print!("{}", a.describe());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        cmd: KernelCommand,
    }

    /// The old `-p KEY=VALUE` parses but is refused with the two forms that work.
    #[test]
    fn the_old_p_form_says_what_to_write() {
        let cli = Cli::try_parse_from(["kernel", "load", "fast", "-p", "alpha=20"]).unwrap();
        let e = run(cli.cmd).unwrap_err().to_string();
        assert!(
            e.contains("fast:alpha=20") && e.contains("--param alpha=20"),
            "{e}"
        );
    }
}
