//! `longhaul cc`: the congestion-control library from the command line.

use crate::units::{parse_duration, parse_rate_bps};
use anyhow::{anyhow, Context, Result};
use clap::{Args, Subcommand};
use longhaul_cc::bottleneck::{self, TraceRun};
use longhaul_cc::{algorithms, vectors, CcSpec};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum CcCommand {
    /// List the algorithms with their parameters, defaults and presets.
    List,
    /// Trace one algorithm's window over time against an idealised single bottleneck.
    Trace(TraceArgs),
    /// Write (or check) the shared test vectors in testdata/cc-vectors/.
    Vectors(VectorArgs),
}

#[derive(Args)]
pub struct TraceArgs {
    /// Algorithm with optional parameters, e.g. `fast` or `fast:alpha=200,gamma=0.5`.
    pub algorithm: String,
    /// Round-trip propagation delay (e.g. 180ms).
    #[arg(long, default_value = "180ms")]
    pub rtt: String,
    /// Bottleneck rate (e.g. 1gbit, 100mbit).
    #[arg(long, default_value = "1gbit")]
    pub rate: String,
    /// Bottleneck buffer in packets (default: one bandwidth-delay product).
    #[arg(long)]
    pub buffer: Option<u32>,
    /// Bottleneck buffer as a multiple of the bandwidth-delay product.
    #[arg(long, conflicts_with = "buffer")]
    pub buffer_bdp: Option<f64>,
    /// Packet size on the wire in bytes; payload is MTU − 40.
    #[arg(long, default_value_t = 1500)]
    pub mtu: u32,
    /// Random loss probability on the link (e.g. 0.0001).
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// The receiver acknowledges every N packets.
    #[arg(long, default_value_t = 1)]
    pub ack_every: u32,
    /// Simulated time.
    #[arg(long, default_value = "60s")]
    pub duration: String,
    /// Sampling interval.
    #[arg(long, default_value = "1s")]
    pub every: String,
    /// Seed for random loss.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print CSV instead of a table.
    #[arg(long)]
    pub csv: bool,
}

#[derive(Args)]
pub struct VectorArgs {
    /// Directory of the vector files.
    #[arg(long, default_value = "testdata/cc-vectors")]
    pub dir: PathBuf,
    /// Do not write; fail if any file differs from what the code produces now.
    #[arg(long)]
    pub check: bool,
}

pub fn run(cmd: CcCommand) -> Result<()> {
    match cmd {
        CcCommand::List => list(),
        CcCommand::Trace(a) => trace(a),
        CcCommand::Vectors(a) => write_vectors(a),
    }
}

fn list() -> Result<()> {
    for a in algorithms() {
        print!("{}", a.describe());
    }
    Ok(())
}

fn trace(a: TraceArgs) -> Result<()> {
    let spec: CcSpec = a.algorithm.parse()?;
    let run = TraceRun {
        rate_bps: parse_rate_bps(&a.rate).context("--rate")?,
        rtt: parse_duration(&a.rtt).context("--rtt")?,
        mtu: a.mtu,
        buffer: a.buffer,
        buffer_bdp: a.buffer_bdp,
        loss: a.loss,
        ack_every: a.ack_every,
        seed: a.seed,
        duration: parse_duration(&a.duration).context("--duration")?,
        every: parse_duration(&a.every).context("--every")?,
    };
    if let Some(w) = run.rtt_warning() {
        eprintln!("{w}");
    }
    let (setup, path) = run.check().map_err(|e| anyhow!(e))?;
    let mut cc = spec.build(&setup)?;
    let (samples, totals) = bottleneck::run(
        &path,
        &setup,
        cc.as_mut(),
        run.duration,
        run.every,
        &mut |_, _| {},
    );
    if a.csv {
        print!("{}", bottleneck::trace_csv(&samples, setup.mss));
        return Ok(());
    }
    println!("{}", run.header(&spec, &path, setup.mss));
    print!("{}", bottleneck::trace_table(&samples, setup.mss));
    println!("{}", totals.line());
    Ok(())
}

fn write_vectors(a: VectorArgs) -> Result<()> {
    if !a.check {
        std::fs::create_dir_all(&a.dir)
            .with_context(|| format!("cannot create {}", a.dir.display()))?;
    }
    let files = vectors::render_all()?;
    if a.check {
        return vectors::check(&a.dir, &files).map_err(|e| anyhow!(e));
    }
    for f in &files {
        let path = a.dir.join(&f.file_name);
        longhaul_output::write(&path, f.text.as_bytes())?;
        println!("{:<40} {:>6} steps  {}", path.display(), f.steps, f.spec);
    }
    Ok(())
}
