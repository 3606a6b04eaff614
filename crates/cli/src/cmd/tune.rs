//! `longhaul tune --rate R --rtt T [--apply]`: host tuning for a long fat path (logic in
//! `longhaul_perf::tune`).

use crate::units::{parse_duration, parse_rate_bps};
use anyhow::{bail, Context, Result};
use clap::Args;
use longhaul_perf::tune::{self, HostRoots, PathSpec};

#[derive(Args)]
pub struct TuneArgs {
    /// Bottleneck rate of the path: 1gbit, 10gbit, 100gbit.
    #[arg(long, value_parser = parse_rate_bps)]
    pub rate: f64,
    /// Round-trip time of the path: 180ms, 0.085s.
    #[arg(long, value_parser = parse_duration)]
    pub rtt: std::time::Duration,
    /// Path MTU in bytes.
    #[arg(long, default_value_t = 1500)]
    pub mtu: u32,
    /// Check only this interface (default: every interface that is up, except loopback).
    #[arg(long)]
    pub dev: Option<String>,
    /// Write the settings that fall short (root), then report each value before and after.
    #[arg(long)]
    pub apply: bool,
}

pub fn run(a: TuneArgs) -> Result<()> {
    if !(576..=65535).contains(&a.mtu) {
        bail!("--mtu {} is outside 576..65535", a.mtu);
    }
    let path = PathSpec {
        rate_bps: a.rate,
        rtt: a.rtt,
        mtu: a.mtu,
    };
    let roots = HostRoots::default();
    let report =
        tune::check_host(&path, &roots, a.dev.as_deref()).context("reading the host's settings")?;
    print!("{report}");
    if !a.apply {
        return Ok(());
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        bail!("--apply changes kernel settings and needs root: rerun with sudo, or run the commands above yourself");
    }
    println!();
    let applied = tune::apply_fixes(&report, &roots);
    if applied.is_empty() {
        println!("--apply: nothing to change.");
        return Ok(());
    }
    println!("--apply:");
    for a in &applied {
        println!("{}", a.line());
    }
    let failed = applied.iter().filter(|a| a.after.is_err()).count();
    if failed > 0 {
        bail!(
            "{failed} of {} settings could not be changed (see above)",
            applied.len()
        );
    }
    println!("Not persistent: add the sysctl lines above to /etc/sysctl.d/90-longhaul.conf to keep them.");
    Ok(())
}
