//! `longhaul emu`: the WAN emulator from the command line.
//!
//! ```text
//! longhaul emu pair  [LINK OPTIONS] [-- CMD…]      two hosts joined by the emulated path
//! longhaul emu exec  a|b [--id PID] -- CMD…        run a command on a host of a running pair
//! longhaul emu shell [LINK OPTIONS] -- CMD…        run one command behind the path (mm-link style)
//! longhaul emu list | cleanup                      running instances / remove stale state
//! longhaul emu bench                               forwarding benchmark against the naive forwarder
//! ```
//!
//! Every per-direction option takes `VALUE` (both directions) or `A2B/B2A` (asymmetric: a→b
//! first, which is the uplink in `shell`), and every rate and duration a unit. Settings can also
//! come from a scenario file (`--scenario FILE`), which flags override: a simulator scenario
//! (`[[links]]`, docs/scenario.md) supplies one link (`--link NAME`, default the bottleneck),
//! mapped by `longhaul_emu::scenario` exactly as `longhaul lab` maps it; the
//! emulator's own `[link]` shorthand is read by `longhaul_emu::settings`, which documents it.

use crate::signals::{block_termination_signals, wait_signal};
use crate::units::{nanos, parse_duration, parse_rate_bps};
use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use longhaul_emu::config::LinkConfig;
use longhaul_emu::emulator::Side;
use longhaul_emu::settings::{self, file::ScenarioKind, per_direction, Settings};
use longhaul_emu::sys::state;
use longhaul_emu::{Emulator, Mode, Options, Summary};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

// The doc comments below are clap's `--help` text, printed as written: brackets and angle
// brackets in them are usage syntax, not rustdoc links or HTML.
#[allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#[derive(Subcommand)]
pub enum EmuCommand {
    /// Two hosts (namespaces lh<pid>a, lh<pid>b) joined by the emulated path; runs until Ctrl-C,
    /// SIGTERM, --duration, or the end of CMD (run on host a).
    Pair(Box<PairArgs>),
    /// Run a command on host a or b of a running pair; it and what it starts end with the
    /// emulator (its PID namespace), even if the emulator is killed.
    Exec(ExecArgs),
    /// Run one command behind the emulated path (like mm-delay/mm-link); the host is reachable at
    /// $LONGHAUL_EMU_HOST.
    Shell(Box<ShellArgs>),
    /// List running emulator instances.
    List,
    /// Remove namespaces and state files left by emulators that were killed, and end any
    /// process still inside those namespaces.
    Cleanup,
    /// Forwarding throughput and timing benchmark against a naive TUN forwarder.
    Bench(BenchArgs),
}

/// Path settings shared by `pair` and `shell`.
// The doc comments below are clap's `--help` text, printed as written: brackets and angle
// brackets in them are usage syntax, not rustdoc links or HTML.
#[allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#[derive(Args, Clone, Default)]
pub struct LinkArgs {
    /// Scenario file whose link supplies defaults: a simulator scenario (`[[links]]`) or the
    /// emulator's `[link]` shorthand (docs/scenario.md).
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Which link of the scenario (`name` of a [[links]] entry); default: the dumbbell's
    /// bottleneck, or the only link.
    #[arg(long, value_name = "NAME")]
    link: Option<String>,
    /// Bottleneck rate, e.g. 1gbit or 100mbit/10mbit (a→b/b→a).
    #[arg(long)]
    rate: Option<String>,
    /// One-way propagation delay, e.g. 90ms or 90ms/10ms (a→b/b→a).
    #[arg(long)]
    delay: Option<String>,
    /// Droptail queue limit in packets (includes the packet being sent), e.g. 1000 or 1000/100
    /// (a→b/b→a). Default with a rate and no --queue-bytes: 1000 packets (Linux's txqueuelen,
    /// as tc's pfifo); with --red: 4 × RED's max threshold in bytes.
    #[arg(long, value_name = "N")]
    queue_packets: Option<String>,
    /// Droptail queue limit in bytes, e.g. 4M or 4M/64k (a→b/b→a).
    #[arg(long, value_name = "SIZE")]
    queue_bytes: Option<String>,
    /// RED: MIN,MAX[,MAX_P[,WEIGHT]] thresholds in bytes (default max_p 0.1, weight 0.002);
    /// SPEC/SPEC for a→b/b→a.
    #[arg(long, value_name = "MIN,MAX[,P[,W]]")]
    red: Option<String>,
    /// Bernoulli random loss, e.g. 1% or 0.01, or 1%/0 (a→b/b→a).
    #[arg(long)]
    loss: Option<String>,
    /// Gilbert–Elliott loss: P,R[,LOSS_BAD[,LOSS_GOOD]] (good→bad, bad→good; default 1, 0);
    /// SPEC/SPEC for a→b/b→a.
    #[arg(long, value_name = "P,R[,LB[,LG]]")]
    gilbert: Option<String>,
    /// Delay jitter (standard deviation; order-preserving), e.g. 2ms or 2ms/0 (a→b/b→a).
    #[arg(long)]
    jitter: Option<String>,
    /// Probability that a packet is reordered (released --reorder-by earlier), e.g. 0.1% or
    /// 0.1%/0 (a→b/b→a).
    #[arg(long)]
    reorder: Option<String>,
    /// How much earlier a reordered packet is released (default 1ms); or A/B (a→b/b→a).
    #[arg(long)]
    reorder_by: Option<String>,
    /// Probability that a packet is duplicated, e.g. 0.1% or 0.1%/0 (a→b/b→a).
    #[arg(long)]
    duplicate: Option<String>,
    /// mahimahi trace for a→b (replaces --rate for that direction).
    #[arg(long, value_name = "FILE")]
    uplink_trace: Option<PathBuf>,
    /// mahimahi trace for b→a.
    #[arg(long, value_name = "FILE")]
    downlink_trace: Option<PathBuf>,
    /// Cross traffic at the bottleneck: KIND,rate=R[,size=B][,on=D,off=D][,dir=ab|ba|both]
    /// with KIND cbr, poisson or onoff (default dir=ab); R is the average load for every kind
    /// (onoff sends at R·(on+off)/on while on). Repeatable.
    #[arg(long, value_name = "SPEC")]
    cross: Vec<String>,
    /// Per-packet framing overhead added for serialisation (e.g. 38 for Ethernet); or A/B
    /// (a→b/b→a).
    #[arg(long)]
    overhead: Option<String>,
    /// MTU of both hosts' interfaces (68..=65535).
    #[arg(long)]
    mtu: Option<u32>,
    /// Random seed (each direction derives its own streams).
    #[arg(long)]
    seed: Option<u64>,
}

/// Output options shared by `pair` and `shell`.
#[derive(Args, Clone, Default)]
pub struct OutputArgs {
    /// Write the JSON summary here on exit (`-` = stdout).
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// Per-packet event log (arrive/enqueue/drop/deliver with reasons and queue lengths).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Write a.pcap and b.pcap (each host's view) into this directory.
    #[arg(long, value_name = "DIR")]
    pcap: Option<PathBuf>,
    /// Spin for the last part of each wait instead of sleeping (default: measured timer
    /// wake-up latency × 2 + 10us, within 20us..200us).
    #[arg(long, value_name = "DURATION")]
    spin: Option<String>,
    /// Run the forwarding threads with normal instead of real-time (SCHED_FIFO) priority.
    #[arg(long)]
    no_realtime: bool,
    /// Pin both forwarding threads to this CPU; a host program pinned to the same CPU (e.g.
    /// `taskset -c N`) then exchanges packets with them without cross-CPU wake-ups.
    #[arg(long, value_name = "N")]
    forwarder_cpu: Option<usize>,
    /// Turn TUN offloads off: the hosts hand over one wire packet per read instead of TCP
    /// super-packets of up to 64 KB (slower; the path model is per wire packet either way).
    #[arg(long)]
    no_offload: bool,
    /// With offloads: wire packets of one super-packet that are delivered alike leave together
    /// when their release times lie within this span, each at most this late (default 20us;
    /// 0 = every wire packet at its own time).
    #[arg(long, value_name = "DURATION")]
    coalesce: Option<String>,
    /// One thread forwards both directions and polls instead of sleeping while packets are on
    /// the path: releases on time to within microseconds, at the cost of a whole CPU
    /// (--forwarder-cpu, else the last one) that programs run through the emulator stay off.
    #[arg(long)]
    busy_poll: bool,
}

#[derive(Args)]
pub struct PairArgs {
    #[command(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    out: OutputArgs,
    /// Stop after this long.
    #[arg(long)]
    duration: Option<String>,
    /// Optional command to run on host a; the pair stops when it exits.
    #[arg(last = true)]
    command: Vec<String>,
}

#[derive(Args)]
pub struct ShellArgs {
    #[command(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    out: OutputArgs,
    /// The command to run behind the path (default: $SHELL).
    #[arg(last = true)]
    command: Vec<String>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum SideArg {
    A,
    B,
}

#[derive(Args)]
pub struct ExecArgs {
    /// Which host.
    side: SideArg,
    /// PID of the emulator (needed when several are running).
    #[arg(long)]
    id: Option<u32>,
    /// The command.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

#[derive(Args)]
pub struct BenchArgs {
    /// Seconds per measurement.
    #[arg(long, default_value = "3")]
    seconds: f64,
    /// Write the results as JSON here (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Runs a subcommand. When the command run behind the path fails, its exit status becomes ours
/// (after everything is cleaned up).
pub fn run(cmd: EmuCommand) -> Result<()> {
    let code = match cmd {
        EmuCommand::Pair(a) => pair(*a)?,
        EmuCommand::Shell(a) => shell(*a)?,
        EmuCommand::Exec(a) => exec(a)?,
        EmuCommand::List => list().map(|_| 0)?,
        EmuCommand::Cleanup => cleanup().map(|_| 0)?,
        EmuCommand::Bench(a) => bench(a).map(|_| 0)?,
    };
    if code != 0 {
        std::process::exit(code);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Settings: scenario file + flags → LinkConfig (`longhaul_emu::settings`).

/// Reads the link of a scenario file: the `[link]` shorthand through `longhaul_emu::settings`;
/// a file with `[[links]]` is a simulator scenario, parsed and checked by the simulator's own
/// parser, and the chosen link is mapped onto the emulator exactly as `longhaul lab` maps it
/// (`longhaul_emu::scenario`): rate and `reverse_rate`, delay, mtu,
/// `queue`/`reverse_queue` (droptail or RED), `loss`/`reverse_loss` and the `[[cross_traffic]]`
/// on that link; what the emulator cannot do is refused naming the field.
fn from_scenario(path: &Path, name: Option<&str>) -> Result<Settings> {
    match settings::file::read(path, name)? {
        ScenarioKind::Link(s) => Ok(*s),
        ScenarioKind::Simulator => from_simulator_scenario(path, name),
    }
}

/// A simulator scenario's link (`--link NAME`, default the dumbbell's bottleneck) as emulator
/// settings, mapped by `longhaul_emu::scenario`. Flows are not run by `emu pair|shell` (bring
/// your own traffic).
fn from_simulator_scenario(path: &Path, name: Option<&str>) -> Result<Settings> {
    let checked = longhaul_path::Scenario::load(path, &[])?;
    let file = path.display().to_string();
    let li = longhaul_emu::scenario::link_index(&checked, name, &file)?;
    let mapped = longhaul_emu::scenario::emulated_link(&checked, li, &file)
        .map_err(|e| anyhow!("{e} (the emulator cannot run this link as written)"))?;
    Ok(Settings {
        mtu: Some(mapped.config.mtu),
        base: Some(mapped.config),
        ..Default::default()
    })
}

/// A flag's rate or duration must carry a unit (`crate::units`); a file's may be bare.
fn check_rate(flag: &str, v: &str) -> Result<()> {
    parse_rate_bps(v).with_context(|| format!("--{flag}"))?;
    Ok(())
}

fn check_duration(flag: &str, v: &str) -> Result<()> {
    parse_duration(v).with_context(|| format!("--{flag}"))?;
    Ok(())
}

/// A `--cross` spec's rate and on/off durations need units too.
fn check_cross(spec: &str) -> Result<()> {
    for kv in spec.split(',').skip(1) {
        match kv.trim().split_once('=') {
            Some(("rate", v)) => check_rate("cross rate", v)?,
            Some(("on" | "off", v)) => check_duration("cross on/off", v)?,
            _ => {}
        }
    }
    Ok(())
}

/// Flags onto file values (flags win); rates and durations are checked for units here.
fn apply_flags(s: &mut Settings, f: &LinkArgs) -> Result<()> {
    let (ab, ba) = (&mut s.ab, &mut s.ba);
    macro_rules! both {
        ($field:ident $(, $check:ident)?) => {
            if let Some(v) = &f.$field {
                let (x, y) = per_direction(v);
                $(
                    let flag = stringify!($field).replace('_', "-");
                    $check(&flag, &x)?;
                    $check(&flag, &y)?;
                )?
                ab.$field = Some(x);
                ba.$field = Some(y);
            }
        };
    }
    both!(rate, check_rate);
    both!(delay, check_duration);
    both!(queue_packets);
    both!(queue_bytes);
    both!(red);
    both!(loss);
    both!(gilbert);
    both!(jitter, check_duration);
    both!(reorder);
    both!(reorder_by, check_duration);
    both!(duplicate);
    both!(overhead);
    if let Some(t) = &f.uplink_trace {
        ab.trace = Some(t.display().to_string());
    }
    if let Some(t) = &f.downlink_trace {
        ba.trace = Some(t.display().to_string());
    }
    if f.rate.is_some() {
        // An explicit --rate replaces a trace from the file, unless a trace flag is given.
        if f.uplink_trace.is_none() {
            ab.trace = None;
        }
        if f.downlink_trace.is_none() {
            ba.trace = None;
        }
    }
    for spec in &f.cross {
        check_cross(spec)?;
        let dir = spec
            .split(',')
            .find_map(|kv| kv.trim().strip_prefix("dir="))
            .unwrap_or("ab");
        if dir == "ab" || dir == "both" {
            ab.cross.push(spec.clone());
        }
        if dir == "ba" || dir == "both" {
            ba.cross.push(spec.clone());
        }
    }
    s.mtu = f.mtu.or(s.mtu);
    s.seed = f.seed.or(s.seed);
    Ok(())
}

/// The full configuration from scenario file and flags.
fn link_config(f: &LinkArgs) -> Result<LinkConfig> {
    let mut s = match &f.scenario {
        Some(p) => from_scenario(p, f.link.as_deref())?,
        None => {
            if f.link.is_some() {
                bail!("--link chooses a link of --scenario FILE; give the scenario too");
            }
            Settings::default()
        }
    };
    apply_flags(&mut s, f)?;
    Ok(s.link_config()?)
}

fn options(link: LinkConfig, out: &OutputArgs) -> Result<Options> {
    let mut o = Options::new(link);
    o.event_log = out.log.clone();
    o.pcap_dir = out.pcap.clone();
    if out.no_realtime {
        o.realtime_priority = 0;
    }
    if let Some(s) = &out.spin {
        o.spin_ns = Some(nanos(parse_duration(s).context("--spin")?));
    }
    if let Some(cpu) = out.forwarder_cpu {
        let online = longhaul_emu::sys::clock::allowed_cpus();
        if !online.contains(&cpu) {
            bail!(
                "--forwarder-cpu {cpu}: this process may run on CPUs {online:?} only (see \
                 `nproc`, `taskset -p $$`)"
            );
        }
        o.forwarder_cpu = Some(cpu);
    }
    o.offload = !out.no_offload;
    if let Some(s) = &out.coalesce {
        if out.no_offload {
            bail!("--coalesce applies to offloaded super-packets; drop it or --no-offload");
        }
        o.coalesce_ns = nanos(parse_duration(s).context("--coalesce")?);
    }
    o.busy_poll = out.busy_poll;
    Ok(o)
}

// ---------------------------------------------------------------------------------------------
// Modes.

fn describe(emu: &Emulator) {
    let st = emu.state();
    eprintln!(
        "longhaul emu {}: pid {}, host a {} (netns {}), host b {} ({})",
        st.mode,
        st.pid,
        st.addr_a,
        st.side_a.as_deref().unwrap_or("-"),
        st.addr_b,
        st.side_b
            .as_deref()
            .map(|n| format!("netns {n}"))
            .unwrap_or_else(|| "this host".into()),
    );
    if let (Some(cpu), Some(hosts)) = (emu.forwarder_cpu(), emu.host_cpus()) {
        eprintln!(
            "longhaul emu: busy polling on CPU {cpu}; programs run through the emulator use CPUs \
             {hosts:?}"
        );
    }
}

/// Runs `child` (if any) until it exits, a signal arrives, or `deadline` passes.
fn supervise(
    mut child: Option<std::process::Child>,
    deadline: Option<Instant>,
) -> Result<Option<i32>> {
    loop {
        if let Some(sig) = wait_signal(Duration::from_millis(100)) {
            eprintln!("longhaul emu: signal {sig}, stopping");
            if let Some(c) = child.as_mut() {
                // SAFETY: plain kill(2) on our own child.
                unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
                let t = Instant::now();
                while t.elapsed() < Duration::from_secs(2) {
                    if c.try_wait()?.is_some() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                let _ = c.kill();
                let _ = c.wait();
            }
            return Ok(Some(128 + sig));
        }
        if let Some(c) = child.as_mut() {
            if let Some(status) = c.try_wait()? {
                return Ok(Some(status.code().unwrap_or(1)));
            }
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(None);
        }
    }
}

fn finish(emu: Emulator, out: &OutputArgs) -> Result<()> {
    let summary = emu.stop()?;
    print_summary(&summary);
    if let Some(j) = &out.json {
        let text = serde_json::to_string_pretty(&Stamped {
            summary: &summary,
            provenance: crate::provenance::capture(),
        })?;
        crate::outputs::write_text(Path::new(j), &text)?;
    }
    Ok(())
}

/// The emulator's summary with the run's provenance beside its own fields.
#[derive(serde::Serialize)]
struct Stamped<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    provenance: longhaul_metrics::provenance::Provenance,
}

fn print_summary(s: &Summary) {
    for o in s.event_log.iter().chain(&s.pcap) {
        if !o.complete {
            eprintln!(
                "warning: {} is incomplete: {} of {} records were not written ({})",
                o.path,
                o.records_lost,
                o.records,
                o.error.as_deref().unwrap_or("write error")
            );
        }
    }
    eprintln!(
        "{:<4} {:>10} {:>10} {:>12} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9}",
        "dir",
        "arrived",
        "delivered",
        "Mb/s",
        "loss",
        "queue",
        "red",
        "mem",
        "late p50",
        "late p99",
        "late max"
    );
    for d in &s.directions {
        let c = &d.counters;
        eprintln!(
            "{:<4} {:>10} {:>10} {:>12.3} {:>8} {:>8} {:>8} {:>8} {:>7.1}us {:>7.1}us {:>7.1}us",
            d.direction,
            c.arrived_packets,
            c.delivered_packets,
            d.throughput_bps / 1e6,
            c.dropped_random_loss,
            c.dropped_queue_full,
            c.dropped_red_early + c.dropped_red_forced,
            d.io.dropped_memory,
            d.lateness.p50_ns as f64 / 1e3,
            d.lateness.p99_ns as f64 / 1e3,
            d.lateness.max_ns as f64 / 1e3
        );
    }
    if s.tun_tx_dropped.iter().any(|&x| x > 0) {
        eprintln!(
            "warning: the hosts' TUN queues dropped {} (a) and {} (b) packets before the emulator \
             read them (emulator overloaded; these are not path losses)",
            s.tun_tx_dropped[0], s.tun_tx_dropped[1]
        );
    }
    if s.tun_rx_dropped.iter().any(|&x| x > 0) {
        eprintln!(
            "warning: the hosts' stacks refused {} (a) and {} (b) packets the emulator delivered \
             (TUN rx_dropped: a host fell behind; these are not path losses)",
            s.tun_rx_dropped[0], s.tun_rx_dropped[1]
        );
    }
}

/// One direction of the path as it was built, so that a unit read otherwise than meant
/// (`--rate 1gbps` is 8 Gb/s, as tc reads it) shows before anything runs.
fn direction_line(d: &longhaul_emu::config::DirectionConfig) -> String {
    use longhaul_emu::config::RateConfig;
    let rate = match &d.rate {
        RateConfig::Unlimited => "no rate limit".to_string(),
        RateConfig::Constant { bps } => longhaul_metrics::units::format_rate(*bps as f64),
        RateConfig::Trace { path, .. } => format!("trace {path}"),
    };
    let mut line = format!("{rate}, delay {} ms", d.delay.delay_ns as f64 / 1e6);
    if d.delay.jitter_ns > 0 {
        line += &format!(" ± {} ms", d.delay.jitter_ns as f64 / 1e6);
    }
    match (d.queue.packets, d.queue.bytes) {
        (Some(p), _) => line += &format!(", queue {p} packets"),
        (None, Some(b)) => line += &format!(", queue {b} bytes"),
        (None, None) => line += ", queue unlimited",
    }
    if d.red.is_some() {
        line += ", RED";
    }
    if !matches!(d.loss, longhaul_emu::model::loss::LossConfig::None) {
        line += &format!(", loss {:?}", d.loss);
    }
    if !d.cross.is_empty() {
        line += &format!(", {} cross-traffic source(s)", d.cross.len());
    }
    line
}

/// Print the path the emulator is about to build, both directions.
fn print_path(cfg: &LinkConfig) {
    eprintln!("longhaul emu: path a→b: {}", direction_line(&cfg.a_to_b));
    eprintln!("longhaul emu: path b→a: {}", direction_line(&cfg.b_to_a));
}

fn pair(a: PairArgs) -> Result<i32> {
    let cfg = link_config(&a.link)?;
    print_path(&cfg);
    let opts = options(cfg, &a.out)?;
    block_termination_signals();
    let emu = Emulator::start(Mode::Pair, opts)?;
    describe(&emu);
    let st = emu.state();
    eprintln!(
        "run commands with: longhaul emu exec a -- CMD   (or: ip netns exec {} CMD)",
        st.side_a.as_deref().unwrap_or_default()
    );
    let deadline = a
        .duration
        .as_deref()
        .map(parse_duration)
        .transpose()?
        .map(|d| Instant::now() + d);
    let child = if a.command.is_empty() {
        if deadline.is_none() {
            eprintln!("press Ctrl-C to stop");
        }
        None
    } else {
        Some(
            emu.spawn(&mut emu.command(Side::A, &a.command))
                .with_context(|| format!("starting {}", a.command[0]))?,
        )
    };
    let code = supervise(child, deadline)?;
    finish(emu, &a.out)?;
    Ok(exit_code(code))
}

fn exit_code(code: Option<i32>) -> i32 {
    code.unwrap_or(0).clamp(0, 255)
}

fn shell(a: ShellArgs) -> Result<i32> {
    let cfg = link_config(&a.link)?;
    print_path(&cfg);
    let opts = options(cfg, &a.out)?;
    let command = if a.command.is_empty() {
        vec![std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into())]
    } else {
        a.command.clone()
    };
    block_termination_signals();
    let emu = Emulator::start(Mode::Shell, opts)?;
    describe(&emu);
    let child = emu
        .spawn(&mut emu.command(Side::A, &command))
        .with_context(|| format!("starting {}", command[0]))?;
    let code = supervise(Some(child), None)?;
    finish(emu, &a.out)?;
    Ok(exit_code(code))
}

/// Runs the command in the instance's PID namespace, so that it and whatever it starts end
/// with the emulator (`longhaul_emu::sys::pidns`); waits for it and returns its exit code.
fn exec(a: ExecArgs) -> Result<i32> {
    let live: Vec<_> = state::instances()
        .into_iter()
        .filter(|s| s.alive())
        .filter(|s| a.id.is_none_or(|id| id == s.pid))
        .collect();
    let inst = match live.as_slice() {
        [] => bail!(match a.id {
            Some(id) => format!("no running emulator with pid {id} (see `longhaul emu list`)"),
            None => "no emulator is running; start one with `longhaul emu pair`".into(),
        }),
        [one] => one.clone(),
        many => bail!(
            "{} emulators are running (pids {}); choose one with --id PID",
            many.len(),
            many.iter()
                .map(|s| s.pid.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let (ns, peer) = match a.side {
        SideArg::A => (inst.side_a.clone(), inst.addr_b.clone()),
        SideArg::B => (inst.side_b.clone(), inst.addr_a.clone()),
    };
    let mut c = match &ns {
        Some(n) => {
            let mut c = std::process::Command::new("ip");
            c.args(["netns", "exec", n]).args(&a.command);
            c
        }
        None => {
            let mut c = std::process::Command::new(&a.command[0]);
            c.args(&a.command[1..]);
            c
        }
    };
    c.env("LONGHAUL_EMU_A", &inst.addr_a)
        .env("LONGHAUL_EMU_B", &inst.addr_b)
        .env("LONGHAUL_EMU_PEER", peer);
    let Some(init) = inst.init_pid else {
        bail!(
            "emulator {} was started by an older longhaul that does not keep its programs in a \
             PID namespace; restart it",
            inst.pid
        );
    };
    block_termination_signals();
    let child = longhaul_emu::sys::pidns::spawn_in(init, &mut c)
        .map_err(|e| anyhow!("cannot run {}: {e}", a.command[0]))?;
    Ok(exit_code(supervise(Some(child), None)?))
}

fn list() -> Result<()> {
    let all = state::instances();
    if all.is_empty() {
        println!("no emulator instances");
    }
    for s in all {
        println!(
            "{:>8}  {:<5}  {:<7}  a={} ({})  b={} ({})",
            s.pid,
            s.mode,
            if s.alive() { "running" } else { "stale" },
            s.addr_a,
            s.side_a.as_deref().unwrap_or("host"),
            s.addr_b,
            s.side_b.as_deref().unwrap_or("host")
        );
    }
    Ok(())
}

fn cleanup() -> Result<()> {
    longhaul_emu::sys::require_root()?;
    let removed = state::cleanup_stale();
    if removed.is_empty() {
        println!("nothing stale to remove");
    }
    for r in removed {
        println!("removed {r}");
    }
    Ok(())
}

fn bench(a: BenchArgs) -> Result<()> {
    let report = longhaul_emu::bench::run(Duration::from_secs_f64(a.seconds))?;
    // With `--json -` standard output carries the JSON alone; the table goes to stderr.
    if a.json.as_deref().is_some_and(crate::outputs::is_stdout) {
        eprintln!("{}", report.table());
    } else {
        println!("{}", report.table());
    }
    if let Some(p) = &a.json {
        crate::outputs::write_text(p, &serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use longhaul_emu::config::RateConfig;
    use longhaul_emu::model::cross::CrossKind;
    use longhaul_emu::model::loss::LossConfig;

    fn args() -> LinkArgs {
        LinkArgs::default()
    }

    fn out() -> OutputArgs {
        OutputArgs::default()
    }

    #[test]
    fn offload_forwarder_cpu_and_coalesce_flags() {
        let link = LinkConfig::default();
        let o = options(link.clone(), &out()).unwrap();
        assert!(o.offload);
        assert_eq!(o.coalesce_ns, longhaul_emu::emulator::DEFAULT_COALESCE_NS);
        assert_eq!(o.forwarder_cpu, None);
        let mut f = out();
        f.no_offload = true;
        f.forwarder_cpu = Some(longhaul_emu::sys::clock::allowed_cpus()[0]);
        let o = options(link.clone(), &f).unwrap();
        assert!(!o.offload);
        assert_eq!(o.forwarder_cpu, f.forwarder_cpu);
        f.forwarder_cpu = Some(100_000);
        let e = options(link.clone(), &f).unwrap_err().to_string();
        assert!(e.contains("--forwarder-cpu 100000"), "{e}");
        f.forwarder_cpu = None;
        f.coalesce = Some("5us".into());
        assert!(
            options(link.clone(), &f).is_err(),
            "--coalesce needs offloads"
        );
        f.no_offload = false;
        assert_eq!(options(link.clone(), &f).unwrap().coalesce_ns, 5_000);
        assert!(!options(link.clone(), &f).unwrap().busy_poll);
        f.busy_poll = true;
        assert!(options(link, &f).unwrap().busy_poll);
    }

    #[test]
    fn asymmetric_flags_split_per_direction() {
        let mut f = args();
        f.rate = Some("100mbit/10mbit".into());
        f.delay = Some("90ms".into());
        f.loss = Some("1%".into());
        f.queue_packets = Some("1000".into());
        let c = link_config(&f).unwrap();
        assert_eq!(c.a_to_b.rate, RateConfig::Constant { bps: 100_000_000 });
        assert_eq!(c.b_to_a.rate, RateConfig::Constant { bps: 10_000_000 });
        assert_eq!(c.a_to_b.delay.delay_ns, 90_000_000);
        assert_eq!(c.b_to_a.delay.delay_ns, 90_000_000);
        assert_eq!(c.a_to_b.loss, LossConfig::Bernoulli { p: 0.01 });
        assert_eq!(c.b_to_a.queue.packets, Some(1000));
    }

    /// Flags win over a `[link]` file's values, per direction (the file itself is read by
    /// `longhaul_emu::settings`, tested there).
    #[test]
    fn flags_override_a_link_file() {
        let text = "[link]\nrate = \"1gbit\"\ndelay = \"90ms\"\nmtu = 9000\n[link.down]\nrate = \"100mbit\"\n";
        let dir = std::env::temp_dir().join(format!("lh-emu-cli-flags-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("s.toml");
        std::fs::write(&p, text).unwrap();
        let mut f = with_scenario(p);
        f.delay = Some("50ms/60ms".into());
        f.mtu = Some(1500);
        let c = link_config(&f).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(c.mtu, 1500);
        assert_eq!(c.a_to_b.rate, RateConfig::Constant { bps: 1_000_000_000 });
        assert_eq!(c.b_to_a.rate, RateConfig::Constant { bps: 100_000_000 });
        assert_eq!(c.a_to_b.delay.delay_ns, 50_000_000);
        assert_eq!(c.b_to_a.delay.delay_ns, 60_000_000);
    }

    fn repo_scenario(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios")
            .join(name)
    }

    fn with_scenario(path: PathBuf) -> LinkArgs {
        LinkArgs {
            scenario: Some(path),
            ..Default::default()
        }
    }

    /// Writes `text` to a fresh file and returns the error (or config) for it.
    fn scenario_text(tag: &str, text: &str) -> (PathBuf, Result<LinkConfig>) {
        let dir = std::env::temp_dir().join(format!("lh-emu-cli-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("s.toml");
        std::fs::write(&p, text).unwrap();
        let r = link_config(&with_scenario(p.clone()));
        std::fs::remove_dir_all(&dir).unwrap();
        (p, r)
    }

    const SIM_HEAD: &str = r#"
duration = "30s"
seed = 5
[topology]
kind = "dumbbell"
bottleneck = "core"
[[flows]]
cc = "cubic"
"#;

    #[test]
    fn repo_scenario_maps_the_simulators_link_format() {
        // scenarios/dumbbell-fast.toml: 1 Gb/s, 40 ms, droptail 10000 packets, seed 1.
        let c = link_config(&with_scenario(repo_scenario("dumbbell-fast.toml"))).unwrap();
        assert_eq!(c.mtu, 1500);
        for d in [&c.a_to_b, &c.b_to_a] {
            assert_eq!(d.rate, RateConfig::Constant { bps: 1_000_000_000 });
            assert_eq!(d.delay.delay_ns, 40_000_000);
            assert_eq!(d.queue.packets, Some(10_000));
            assert_eq!(d.queue.bytes, None);
            assert!(d.red.is_none());
            assert!(d.cross.is_empty());
        }
        // The simulator's streams (seed, seed + 1), as `longhaul lab` uses them.
        assert_eq!((c.a_to_b.seed, c.b_to_a.seed), (1, 2));
        // Flags still override a scenario's link.
        let mut f = with_scenario(repo_scenario("dumbbell-fast.toml"));
        f.rate = Some("100mbit".into());
        f.queue_packets = Some("500/50".into());
        f.seed = Some(3);
        let c = link_config(&f).unwrap();
        assert_eq!(c.a_to_b.rate, RateConfig::Constant { bps: 100_000_000 });
        assert_eq!(c.a_to_b.delay.delay_ns, 40_000_000);
        assert_eq!(
            (c.a_to_b.queue.packets, c.b_to_a.queue.packets),
            (Some(500), Some(50))
        );
        assert_eq!((c.a_to_b.seed, c.b_to_a.seed), (6, 7));
    }

    #[test]
    fn repo_red_ecn_scenario_is_refused_naming_the_field() {
        // RED that marks ECN cannot be emulated (the emulator's RED drops); it must not run as
        // plain droptail.
        let e = format!(
            "{:#}",
            link_config(&with_scenario(repo_scenario("red-ecn-cross.toml"))).unwrap_err()
        );
        assert!(e.contains("links[0].queue.ecn"), "{e}");
        assert!(e.contains("ECN"), "{e}");
    }

    #[test]
    fn simulator_red_reverse_settings_and_cross_traffic_are_emulated() {
        let text = format!(
            r#"{SIM_HEAD}
[[links]]
name = "core"
rate = "200mbit"
reverse_rate = "20mbit"
delay = "30ms"
mtu = 9000
loss = 0.01
reverse_loss = 0.002
queue = {{ kind = "red", packets = 400, min_th = 40, max_th = 120, max_p = 0.05, weight = 0.004, gentle = false }}
reverse_queue = {{ kind = "droptail", bytes = "2M" }}
[[cross_traffic]]
kind = "poisson"
link = "core"
rate = "50mbit"
packet_size = 1000
[[cross_traffic]]
kind = "cbr"
link = "core"
rate = "1mbit"
reverse = true
"#
        );
        let (_, r) = scenario_text("red", &text);
        let c = r.unwrap();
        assert_eq!(c.mtu, 9000);
        assert_eq!(c.a_to_b.rate, RateConfig::Constant { bps: 200_000_000 });
        assert_eq!(c.b_to_a.rate, RateConfig::Constant { bps: 20_000_000 });
        assert_eq!(c.a_to_b.loss, LossConfig::Bernoulli { p: 0.01 });
        assert_eq!(c.b_to_a.loss, LossConfig::Bernoulli { p: 0.002 });
        assert_eq!(c.a_to_b.queue.packets, Some(400));
        // Thresholds in packets become MTU-sized bytes: 40 × 9000, 120 × 9000.
        let red = c.a_to_b.red.unwrap();
        assert_eq!((red.min_bytes, red.max_bytes), (360_000, 1_080_000));
        assert_eq!((red.max_p, red.weight), (0.05, 0.004));
        assert!(c.b_to_a.red.is_none());
        assert_eq!(c.b_to_a.queue.bytes, Some(2 << 20)); // "2M" is 2 MiB, as in the simulator
        assert_eq!(c.a_to_b.cross.len(), 1);
        assert_eq!(c.a_to_b.cross[0].kind, CrossKind::Poisson);
        assert_eq!(c.a_to_b.cross[0].rate_bps, 50e6);
        assert_eq!(c.a_to_b.cross[0].packet_bytes, 1000);
        // The reverse source defaults to the link's MTU.
        assert_eq!(c.b_to_a.cross.len(), 1);
        assert_eq!(c.b_to_a.cross[0].packet_bytes, 9000);
    }

    #[test]
    fn malformed_or_unemulable_simulator_links_are_refused() {
        let link = |extra: &str| {
            format!("{SIM_HEAD}\n[[links]]\nname = \"core\"\nrate = \"1gbit\"\ndelay = \"10ms\"\n{extra}\n")
        };
        let cases = [
            ("queue = \"nonsense\"", "links[0].queue"),
            (
                "queue = { kind = \"sfq\", packets = 10 }",
                "links[0].queue.kind",
            ),
            (
                "queue = { kind = \"red\", packets = 100, ecn = true }",
                "links[0].queue.ecn",
            ),
            ("jitter = \"1ms\"", "jitter"),
            (
                "[[cross_traffic]]\nkind = \"web\"\nlink = \"core\"\nrate = \"1mbit\"",
                "cross_traffic[0].kind",
            ),
        ];
        for (extra, field) in cases {
            let (_, r) = scenario_text("bad", &link(extra));
            let e = format!("{:#}", r.unwrap_err());
            assert!(e.contains(field), "`{extra}`: `{e}` lacks `{field}`");
        }
    }

    #[test]
    fn refuses_bad_values_with_a_message() {
        let mut f = args();
        f.loss = Some("150%".into());
        assert!(format!("{:#}", link_config(&f).unwrap_err()).contains("within 0..1"));
        let mut f = args();
        f.queue_packets = Some("10".into());
        assert!(format!("{:#}", link_config(&f).unwrap_err()).contains("needs a rate"));
        let mut f = args();
        f.rate = Some("1gbit".into());
        f.cross = vec!["bursty,rate=1mbit".into()];
        assert!(format!("{:#}", link_config(&f).unwrap_err()).contains("unknown kind"));
    }

    #[test]
    fn every_per_direction_flag_documents_the_asymmetric_form() {
        use clap::Args as _;
        // The flags `apply_flags` splits at `/`.
        use longhaul_emu::settings::PER_DIRECTION;
        let cmd = LinkArgs::augment_args(clap::Command::new("t"));
        for id in PER_DIRECTION {
            let arg = cmd
                .get_arguments()
                .find(|a| a.get_id() == id)
                .unwrap_or_else(|| panic!("no flag {id}"));
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            assert!(help.contains("a→b/b→a"), "--{id}: `{help}`");
        }
    }

    /// Every rate and duration flag needs a unit (`--rate 1000` was 1000 bit/s, `--delay 90`
    /// 90 s); the message lists the accepted forms. A file's bare numbers keep their base units.
    #[test]
    fn bare_numbers_in_rate_and_duration_flags_are_refused() {
        type Set = fn(&mut LinkArgs);
        let cases: [(&str, Set); 6] = [
            ("--rate", |f| f.rate = Some("1000".into())),
            ("--rate", |f| f.rate = Some("100mbit/1000".into())),
            ("--delay", |f| f.delay = Some("90".into())),
            ("--jitter", |f| f.jitter = Some("2".into())),
            ("--reorder-by", |f| f.reorder_by = Some("1".into())),
            ("--cross rate", |f| {
                f.cross = vec!["poisson,rate=200".into()]
            }),
        ];
        for (flag, set) in cases {
            let mut f = args();
            f.rate = Some("1gbit".into());
            set(&mut f);
            let e = format!("{:#}", link_config(&f).unwrap_err());
            assert!(
                e.contains(flag) && e.contains("needs a unit"),
                "{flag}: {e}"
            );
        }
        let mut f = args();
        f.rate = Some("1000".into());
        let e = format!("{:#}", link_config(&f).unwrap_err());
        for form in ["gbit", "mbit", "Mb/s", "bps (tc", "MB/s"] {
            assert!(e.contains(form), "`{form}` not listed: {e}");
        }
        f.rate = Some("1000kbit".into());
        let c = link_config(&f).unwrap();
        assert_eq!(c.a_to_b.rate, RateConfig::Constant { bps: 1_000_000 });
        // A file's bare rate is bit/s, its bare delay seconds.
        let (_, r) = scenario_text("bare", "[link]\nrate = 1000000\ndelay = 0.09\n");
        let c = r.unwrap();
        assert_eq!(c.a_to_b.rate, RateConfig::Constant { bps: 1_000_000 });
        assert_eq!(c.a_to_b.delay.delay_ns, 90_000_000);
    }
}
