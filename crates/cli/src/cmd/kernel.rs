//! `longhaul kernel`: FAST, Scalable, HighSpeed and Vegas as Linux congestion controls (eBPF
//! struct_ops), usable by any TCP program through `sysctl net.ipv4.tcp_congestion_control` or
//! `setsockopt(TCP_CONGESTION)`.

use anyhow::Result;
use clap::Subcommand;
use longhaul_kernel::{catalog::Algorithm, loader, sockets, LoadOptions, ParamValues};

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

/// `NAME[:key=value,…]` and the `--param` settings: the algorithm's name and every setting.
fn split_spec(spec: &str, params: &[String]) -> (String, Vec<String>) {
    let (name, inline) = spec.split_once(':').unwrap_or((spec, ""));
    let mut settings: Vec<String> = inline
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    settings.extend(params.iter().cloned());
    (name.trim().to_string(), settings)
}

fn load(spec: &str, params: &[String], name: Option<String>) -> Result<()> {
    let (algorithm, settings) = split_spec(spec, params);
    let algorithm = Algorithm::parse(&algorithm)?;
    let params = ParamValues::from_settings(algorithm, &settings)?;
    let loaded = loader::load(&LoadOptions { params, name })?;
    let params = loaded
        .params
        .map(|p| p.to_string())
        .unwrap_or_else(|| "?".into());
    println!(
        "loaded {} as `{}` ({}), pinned at {}",
        loaded.algorithm,
        loaded.name,
        if params.is_empty() {
            "no parameters".to_string()
        } else {
            params
        },
        loaded.pin_dir.display()
    );
    println!(
        "use it with: sysctl net.ipv4.tcp_congestion_control={0}  or  setsockopt(TCP_CONGESTION, \"{0}\")",
        loaded.name
    );
    Ok(())
}

fn list(json: bool) -> Result<()> {
    let loaded = loader::list()?;
    let sockets = sockets::tcp_sockets().unwrap_or_default();
    let default = loader::default_congestion_control().unwrap_or_default();
    if json {
        let entries: Vec<serde_json::Value> = loaded
            .iter()
            .map(|l| {
                let params: serde_json::Map<String, serde_json::Value> = l
                    .params
                    .iter()
                    .flat_map(|p| p.values.iter())
                    .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
                    .collect();
                let users: Vec<serde_json::Value> = sockets
                    .iter()
                    .filter(|s| s.congestion_control == l.name)
                    .map(|s| {
                        serde_json::json!({
                            "local": s.local.to_string(),
                            "remote": s.remote.to_string(),
                            "state": s.state,
                            "netns": s.netns,
                        })
                    })
                    .collect();
                serde_json::json!({
                    "name": l.name,
                    "algorithm": l.algorithm.name(),
                    "registered": l.registered,
                    "default": l.name == default,
                    "params": params,
                    "repairs": l.repairs,
                    "pin_dir": l.pin_dir,
                    "sockets": users,
                })
            })
            .collect();
        let out = serde_json::json!({
            "loaded": entries,
            "available": loader::available().unwrap_or_default(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    if loaded.is_empty() {
        println!("no congestion control loaded by longhaul");
    } else {
        println!(
            "{:<16} {:<10} {:<11} {:>7} {:>7}  PARAMETERS",
            "NAME", "ALGORITHM", "STATE", "SOCKETS", "REPAIRS"
        );
    }
    for l in &loaded {
        let users: Vec<_> = sockets
            .iter()
            .filter(|s| s.congestion_control == l.name)
            .collect();
        let state = if !l.registered {
            "stale-pins"
        } else if l.name == default {
            "default"
        } else {
            "registered"
        };
        let params = match &l.params {
            Some(p) if p.values.is_empty() => "-".to_string(),
            Some(p) => p.to_string(),
            None => "(unreadable)".to_string(),
        };
        let note = if l.name != l.algorithm.name() {
            format!(" (name prefixed: {} is {})", l.name, l.algorithm)
        } else {
            String::new()
        };
        let repairs = l.repairs.map_or("-".to_string(), |n| n.to_string());
        println!(
            "{:<16} {:<10} {:<11} {:>7} {:>7}  {}{}",
            l.name,
            l.algorithm.name(),
            state,
            users.len(),
            repairs,
            params,
            note
        );
        for s in users {
            println!("{:<16}   {} -> {}", "", s.local, s.remote);
        }
    }
    if let Ok(all) = loader::available() {
        println!("kernel congestion controls: {}", all.join(" "));
    }
    Ok(())
}

fn algorithms() {
    for a in Algorithm::ALL {
        println!("{:<10} {}", a.name(), a.summary());
        for p in a.params() {
            let unit = if p.unit.is_empty() || p.unit == "bool" {
                String::new()
            } else {
                format!(" {}", p.unit)
            };
            println!(
                "{:<12}{}={}{} [{}..{}]  {}",
                "", p.name, p.default, unit, p.min, p.max, p.help
            );
        }
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

    /// `kernel load` takes algorithms as every other command does, `NAME[:key=value,…]`, and
    /// the settings reach the same validation as `--param`.
    #[test]
    fn load_takes_name_colon_parameters() {
        let (name, settings) = split_spec("fast:alpha=20,beta=20", &["gamma=0.25".into()]);
        assert_eq!(name, "fast");
        assert_eq!(settings, ["alpha=20", "beta=20", "gamma=0.25"]);
        let algorithm = Algorithm::parse(&name).unwrap();
        let v = ParamValues::from_settings(algorithm, &settings).unwrap();
        assert!(
            v.to_string().starts_with("alpha=20,beta=20,gamma=0.25"),
            "{v}"
        );
        assert_eq!(split_spec("vegas", &[]), ("vegas".to_string(), vec![]));
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
