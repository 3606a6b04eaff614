//! `longhaul`: move bulk data fast over long fat networks, and prove it with measurements.
//!
//! One binary; each subcommand lives in its own module under `cmd/`.

mod cmd;
mod outputs;
mod png;
mod provenance;
mod units;

use clap::{CommandFactory, Parser, Subcommand};
use longhaul_emu::sys::signals;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "longhaul", version = provenance::VERSION, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Congestion-control algorithms: list them, trace one, write the shared test vectors.
    #[command(subcommand)]
    Cc(cmd::cc::CcCommand),
    /// Compare two result summaries side by side (e.g. sim vs lab); differences are B − A.
    Compare(cmd::compare::CompareArgs),
    /// The seed papers' experiments in the simulator: each claim, the paper's figure, the
    /// measured one and whether it holds.
    Reproduce(cmd::reproduce::ReproduceArgs),
    #[cfg(feature = "kernel")]
    /// Run a scenario file with real kernel TCP over the emulator (needs root); `--list` shows
    /// the built-in lab experiments.
    Lab(cmd::lab::LabArgs),
    /// Simulate a scenario file in the packet simulator (deterministic, virtual time).
    Sim(cmd::sim::SimArgs),
    /// A grid of simulator runs by index: plan it, run it on all cores or as a Slurm array,
    /// collect it into CSV, JSONL and an HTML report.
    #[command(subcommand)]
    Sweep(cmd::sweep::SweepCommand),
    #[cfg(feature = "kernel")]
    /// Linux eBPF congestion controls (FAST, Scalable, HighSpeed, Vegas): load, list, unload.
    #[command(subcommand)]
    Kernel(cmd::kernel::KernelCommand),
    /// WAN emulator: hosts in namespaces joined by an emulated long fat path.
    #[command(subcommand)]
    Emu(cmd::emu::EmuCommand),
    /// iperf-like memory-to-memory TCP measurement: `perf server`, `perf client HOST`; -J for JSON.
    #[command(subcommand)]
    Perf(cmd::perf::PerfCommand),
    /// Measure a path: base RTT, capacity, available bandwidth, queue (maximum burst size) and
    /// loss, with packet trains to a `longhaul probe --serve`; -J for JSON.
    Probe(cmd::probe::ProbeArgs),
    /// Host tuning for a long fat path: BDP, socket buffers, txqueuelen, MTU, congestion control.
    Tune(cmd::tune::TuneArgs),
    /// Send a file to a `longhaul recv` over longhaul's own transport on UDP (any controller,
    /// no kernel change); verified end to end by BLAKE3 (over the file's 1 MiB chunks).
    Send(cmd::transfer::SendArgs),
    /// Receive files from `longhaul send` into a directory.
    Recv(cmd::transfer::RecvArgs),
    /// Make this host's key pair for `send`/`recv` (~/.longhaul/id_x25519 and .pub), or show
    /// its public key line (`--show`).
    Keygen(cmd::keygen::KeygenArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::CompletionsArgs),
    /// Print the man page longhaul(1), or write it and one page per subcommand into a directory.
    Man(cmd::man::ManArgs),
}

impl Command {
    /// Commands whose work is computing and printing: no sockets, children or partial files
    /// that a write to a closed pipe must not abandon (see
    /// [`signals::end_quietly_on_closed_pipe`]).
    fn only_prints(&self) -> bool {
        match self {
            Command::Cc(_)
            | Command::Compare(_)
            | Command::Reproduce(_)
            | Command::Sim(_)
            | Command::Sweep(_)
            | Command::Completions(_)
            | Command::Man(_) => true,
            #[cfg(feature = "kernel")]
            Command::Lab(a) => a.list,
            #[cfg(feature = "kernel")]
            Command::Kernel(k) => matches!(
                k,
                cmd::kernel::KernelCommand::Algorithms | cmd::kernel::KernelCommand::List { .. }
            ),
            _ => false,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    signals::stop_on_sigint();
    if cli.command.only_prints() {
        signals::end_quietly_on_closed_pipe();
    }
    let result = match cli.command {
        Command::Cc(c) => cmd::cc::run(c),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Reproduce(a) => cmd::reproduce::run(a),
        #[cfg(feature = "kernel")]
        Command::Lab(a) => cmd::lab::run(a),
        Command::Sim(a) => cmd::sim::run(a),
        Command::Sweep(c) => cmd::sweep::run(c),
        #[cfg(feature = "kernel")]
        Command::Kernel(c) => cmd::kernel::run(c),
        Command::Emu(c) => cmd::emu::run(c),
        Command::Perf(c) => cmd::perf::run(c),
        Command::Probe(a) => cmd::probe::run(a),
        Command::Tune(a) => cmd::tune::run(a),
        Command::Send(a) => cmd::transfer::send(a),
        Command::Recv(a) => cmd::transfer::recv(a),
        Command::Keygen(a) => cmd::keygen::run(a),
        Command::Completions(a) => cmd::completions::run(a, Cli::command()),
        Command::Man(a) => cmd::man::run(a, Cli::command()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("longhaul: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap_complete::Shell;

    /// Every subcommand path, nested ones included: ["sim"], ["emu", "pair"], ...
    fn paths(cmd: &clap::Command, above: &[String], out: &mut Vec<Vec<String>>) {
        for sub in cmd.get_subcommands() {
            let mut p = above.to_vec();
            p.push(sub.get_name().to_string());
            out.push(p.clone());
            paths(sub, &p, out);
        }
    }

    fn all_paths() -> Vec<Vec<String>> {
        let mut out = Vec::new();
        paths(&Cli::command(), &[], &mut out);
        out
    }

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn completions_cover_every_subcommand_in_every_shell() {
        let all = all_paths();
        // Sanity: the walk found nested commands, not just the top level.
        assert!(all.iter().any(|p| p == &["emu", "pair"]), "{all:?}");
        assert!(all.iter().any(|p| p == &["completions"]) && all.iter().any(|p| p == &["man"]));
        for shell in [
            Shell::Bash,
            Shell::Zsh,
            Shell::Fish,
            Shell::Elvish,
            Shell::PowerShell,
        ] {
            let text =
                String::from_utf8(cmd::completions::script(&mut Cli::command(), shell)).unwrap();
            for p in &all {
                let name = p.last().unwrap();
                assert!(
                    text.contains(name.as_str()),
                    "{shell}: no `{}`",
                    p.join(" ")
                );
            }
        }
        // bash completes each nested command in its own case: `longhaul__subcmd__emu__subcmd__pair`.
        let bash =
            String::from_utf8(cmd::completions::script(&mut Cli::command(), Shell::Bash)).unwrap();
        for p in &all {
            let case = format!("longhaul__subcmd__{}", p.join("__subcmd__")).replace('-', "__");
            assert!(bash.contains(&case), "bash lacks `{case}`");
        }
    }

    #[test]
    fn man_pages_cover_every_subcommand() {
        let top = String::from_utf8(cmd::man::page(Cli::command()).unwrap()).unwrap();
        assert!(
            top.starts_with(".ie") || top.contains(".TH longhaul 1"),
            "{}",
            &top[..200]
        );
        for sub in Cli::command().get_subcommands() {
            assert!(
                top.contains(sub.get_name()),
                "longhaul(1) lacks `{}`",
                sub.get_name()
            );
        }
        let dir = std::env::temp_dir().join(format!("longhaul-man-{}", std::process::id()));
        cmd::man::write_all(Cli::command(), &dir).unwrap();
        for p in all_paths() {
            let file = dir.join(format!("longhaul-{}.1", p.join("-")));
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            // The page is the subcommand's (roff escapes hyphens), with its own summary line.
            let title = format!(".TH longhaul-{} 1", p.join("-"));
            assert!(text.contains(&title), "{}: lacks `{title}`", file.display());
            let mut cmd = Cli::command();
            for name in &p {
                cmd = cmd.find_subcommand(name).unwrap().clone();
            }
            let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
            let first = about
                .lines()
                .next()
                .unwrap_or("")
                .replace('-', "\\-")
                .replace('\'', "\\*(Aq");
            assert!(text.contains(&first), "{}: lacks `{first}`", file.display());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
