//! `longhaul`: move bulk data fast over long fat networks, and prove it with measurements.
//!
//! One binary; each subcommand lives in its own module under `cmd/`.

mod cmd;
mod outputs;
mod provenance;
mod signals;
mod units;

use clap::{Parser, Subcommand};
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
    /// Run a scenario file with real kernel TCP over the emulator (needs root); `--list` shows
    /// the built-in lab experiments.
    Lab(cmd::lab::LabArgs),
    /// Simulate a scenario file in the packet simulator (deterministic, virtual time).
    Sim(cmd::sim::SimArgs),
    /// A grid of simulator runs by index: plan it, run it on all cores or as a Slurm array,
    /// collect it into CSV, JSONL and an HTML report.
    #[command(subcommand)]
    Sweep(cmd::sweep::SweepCommand),
    /// Linux eBPF congestion controls (FAST, Scalable, HighSpeed, Vegas): load, list, unload.
    #[command(subcommand)]
    Kernel(cmd::kernel::KernelCommand),
    /// WAN emulator: hosts in namespaces joined by an emulated long fat path.
    #[command(subcommand)]
    Emu(cmd::emu::EmuCommand),
    /// iperf-like memory-to-memory TCP measurement: `perf server`, `perf client HOST`; -J for JSON.
    #[command(subcommand)]
    Perf(cmd::perf::PerfCommand),
    /// Host tuning for a long fat path: BDP, socket buffers, txqueuelen, MTU, congestion control.
    Tune(cmd::tune::TuneArgs),
    /// Send a file to a `longhaul recv` over longhaul's own transport on UDP (any controller,
    /// no kernel change); verified end to end by SHA-256.
    Send(cmd::transfer::SendArgs),
    /// Receive files from `longhaul send` into a directory.
    Recv(cmd::transfer::RecvArgs),
    /// Make this host's key pair for `send`/`recv` (~/.longhaul/id_x25519 and .pub), or show
    /// its public key line (`--show`).
    Keygen(cmd::keygen::KeygenArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    signals::stop_on_sigint();
    let result = match cli.command {
        Command::Cc(c) => cmd::cc::run(c),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Reproduce(a) => cmd::reproduce::run(a),
        Command::Lab(a) => cmd::lab::run(a),
        Command::Sim(a) => cmd::sim::run(a),
        Command::Sweep(c) => cmd::sweep::run(c),
        Command::Kernel(c) => cmd::kernel::run(c),
        Command::Emu(c) => cmd::emu::run(c),
        Command::Perf(c) => cmd::perf::run(c),
        Command::Tune(a) => cmd::tune::run(a),
        Command::Send(a) => cmd::transfer::send(a),
        Command::Recv(a) => cmd::transfer::recv(a),
        Command::Keygen(a) => cmd::keygen::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("longhaul: {e:#}");
            ExitCode::FAILURE
        }
    }
}
