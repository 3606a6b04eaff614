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
//! first, which is the uplink in `shell`), and every rate and duration a unit, checked here.
//! Settings can also come from a scenario file (`--scenario FILE`), which flags override: a
//! simulator scenario (`[[links]]`, docs/scenario.md) supplies one link (`--link NAME`, default
//! the bottleneck), mapped exactly as `longhaul lab` maps it, or the emulator's own `[link]`
//! shorthand; `longhaul_emu::settings` reads the file, lays the flags over it and documents
//! both.

use crate::units::{parse_duration, parse_rate_bps};
use anyhow::{anyhow, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use longhaul_emu::config::LinkConfig;
use longhaul_emu::emulator::Side;
use longhaul_emu::run::OutputSettings;
use longhaul_emu::settings::{self, Overrides, Quantity};
use longhaul_emu::sys::state;
use longhaul_emu::{Mode, Options, Summary};
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
    /// Droptail queue limit in packets waiting behind the one being sent, e.g. 1000 or
    /// 1000/100 (a→b/b→a). Default with a rate and no --queue-bytes: 1000 packets (Linux's
    /// txqueuelen, as tc's pfifo); with --red: 4 × RED's max threshold in bytes.
    #[arg(long, value_name = "N")]
    queue_packets: Option<String>,
    /// Droptail queue limit in bytes waiting behind the packet being sent, e.g. 4M or 4M/64k
    /// (a→b/b→a).
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
    /// Cross traffic at the bottleneck:
    /// KIND,rate=R[,size=B][,on=D,off=D][,mean=B,shape=A][,dir=ab|ba|both] with KIND cbr,
    /// poisson, onoff or web (default dir=ab); R is the average load for every kind (onoff
    /// sends at R·(on+off)/on while on; web sends Pareto-sized transfers of mean B back to back).
    /// Repeatable.
    #[arg(long, value_name = "SPEC")]
    cross: Vec<String>,
    /// Per-packet framing overhead, counted in serialisation and the queue's bytes (e.g. 38 for
    /// Ethernet); or A/B (a→b/b→a). Overrides a scenario link's `overhead`.
    #[arg(long)]
    overhead: Option<String>,
    /// A hop's MTU below the interfaces' (--mtu): IP packets larger than it are dropped, as by
    /// a router that sends no ICMP (a path MTU black hole); e.g. 1400 or 1400/1500 (a→b/b→a).
    #[arg(long, value_name = "BYTES")]
    path_mtu: Option<String>,
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
// Settings: flags → `longhaul_emu::settings`, which lays them over the scenario file's.

/// The flags as the emulator's settings take them, once their rates and durations (a
/// `--cross` spec's too) are checked for units (`crate::units`; a file's may be bare).
fn overrides(f: &LinkArgs) -> Result<Overrides> {
    let given = [
        ("rate", &f.rate),
        ("delay", &f.delay),
        ("queue_packets", &f.queue_packets),
        ("queue_bytes", &f.queue_bytes),
        ("red", &f.red),
        ("loss", &f.loss),
        ("gilbert", &f.gilbert),
        ("jitter", &f.jitter),
        ("reorder", &f.reorder),
        ("reorder_by", &f.reorder_by),
        ("duplicate", &f.duplicate),
        ("overhead", &f.overhead),
        ("path_mtu", &f.path_mtu),
    ];
    let o = Overrides {
        per_direction: given
            .into_iter()
            .filter_map(|(key, v)| Some((key, v.clone()?)))
            .collect(),
        uplink_trace: f.uplink_trace.as_ref().map(|t| t.display().to_string()),
        downlink_trace: f.downlink_trace.as_ref().map(|t| t.display().to_string()),
        cross: f.cross.clone(),
        mtu: f.mtu,
        seed: f.seed,
    };
    for (flag, quantity, v) in o.quantities() {
        match quantity {
            Quantity::Rate => parse_rate_bps(&v).map(drop),
            Quantity::Duration => parse_duration(&v).map(drop),
        }
        .with_context(|| format!("--{flag}"))?;
    }
    Ok(o)
}

/// The path to emulate, from the scenario file and the flags (`longhaul_emu::settings`).
fn link_config(f: &LinkArgs) -> Result<LinkConfig> {
    let o = overrides(f)?;
    Ok(settings::link_config(
        f.scenario.as_deref(),
        f.link.as_deref(),
        &o,
    )?)
}

/// The emulator's options for `link` with the output flags (`longhaul_emu::run`).
fn options(link: LinkConfig, out: &OutputArgs) -> Result<Options> {
    let duration = |s: &Option<String>, flag: &str| {
        s.as_deref()
            .map(parse_duration)
            .transpose()
            .with_context(|| flag.to_string())
    };
    let settings = OutputSettings {
        event_log: out.log.clone(),
        pcap_dir: out.pcap.clone(),
        spin: duration(&out.spin, "--spin")?,
        no_realtime: out.no_realtime,
        forwarder_cpu: out.forwarder_cpu,
        no_offload: out.no_offload,
        coalesce: duration(&out.coalesce, "--coalesce")?,
        busy_poll: out.busy_poll,
    };
    Ok(Options::new(link).with_output(&settings)?)
}

// ---------------------------------------------------------------------------------------------
// Modes.

/// Runs `mode` around `command` (`longhaul_emu::run`), prints the summary and writes its JSON;
/// returns the exit code to pass on.
fn run_until(
    mode: Mode,
    link: &LinkArgs,
    out: &OutputArgs,
    command: &[String],
    deadline: Option<Instant>,
) -> Result<i32> {
    let opts = options(link_config(link)?, out)?;
    let (summary, code) = longhaul_emu::run::run(mode, opts, command, deadline, &mut say)?;
    for w in summary.warnings() {
        eprintln!("warning: {w}");
    }
    eprint!("{}", summary.table());
    if let Some(j) = &out.json {
        let text = serde_json::to_string_pretty(&Stamped {
            summary: &summary,
            provenance: crate::provenance::capture(),
        })?;
        crate::outputs::write_text(Path::new(j), &text)?;
    }
    Ok(code)
}

fn say(line: &str) {
    eprintln!("{line}");
}

/// The emulator's summary with the run's provenance beside its own fields.
#[derive(serde::Serialize)]
struct Stamped<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    provenance: longhaul_metrics::provenance::Provenance,
}

fn pair(a: PairArgs) -> Result<i32> {
    let duration = a.duration.as_deref().map(parse_duration).transpose()?;
    let deadline = duration.map(|d| Instant::now() + d);
    run_until(Mode::Pair, &a.link, &a.out, &a.command, deadline)
}

fn shell(a: ShellArgs) -> Result<i32> {
    let command = if a.command.is_empty() {
        vec![std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into())]
    } else {
        a.command.clone()
    };
    run_until(Mode::Shell, &a.link, &a.out, &command, None)
}

/// Runs the command on a host of a running pair (`longhaul_emu::run::exec`).
fn exec(a: ExecArgs) -> Result<i32> {
    let side = match a.side {
        SideArg::A => Side::A,
        SideArg::B => Side::B,
    };
    longhaul_emu::run::exec(a.id, side, &a.command, &mut say).map_err(|e| anyhow!(e))
}

fn list() -> Result<()> {
    let all = state::instances();
    if all.is_empty() {
        println!("no emulator instances");
    }
    for s in all {
        println!("{}", s.line());
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
    use longhaul_emu::model::loss::LossConfig;

    fn args() -> LinkArgs {
        LinkArgs::default()
    }

    fn out() -> OutputArgs {
        OutputArgs::default()
    }

    #[test]
    fn output_flags_reach_the_options() {
        let mut f = out();
        f.spin = Some("30us".into());
        f.coalesce = Some("5us".into());
        let o = options(LinkConfig::default(), &f).unwrap();
        assert_eq!((o.spin_ns, o.coalesce_ns), (Some(30_000), 5_000));
        f.spin = Some("30".into());
        let e = format!("{:#}", options(LinkConfig::default(), &f).unwrap_err());
        assert!(e.contains("--spin") && e.contains("needs a unit"), "{e}");
        f.spin = None;
        f.no_offload = true;
        assert!(options(LinkConfig::default(), &f).is_err());
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

    #[test]
    fn every_per_direction_flag_reaches_the_settings() {
        let v = || Some("1".to_string());
        let f = LinkArgs {
            queue_packets: v(),
            queue_bytes: v(),
            red: v(),
            loss: v(),
            gilbert: v(),
            reorder: v(),
            duplicate: v(),
            overhead: v(),
            path_mtu: v(),
            rate: Some("1gbit".into()),
            delay: Some("1ms".into()),
            jitter: Some("1ms".into()),
            reorder_by: Some("1ms".into()),
            ..Default::default()
        };
        let keys: Vec<&str> = overrides(&f)
            .unwrap()
            .per_direction
            .iter()
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(keys, longhaul_emu::settings::PER_DIRECTION);
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
        // The flags the emulator's settings split at `/`.
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
