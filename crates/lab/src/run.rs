//! One lab run: emulator up, congestion controls loaded, namespaces tuned, one perf server per
//! flow in namespace b, one perf client per flow in namespace a at its start time, responsive
//! cross traffic's transfers on the simulator's schedule (`crate::responsive`); then everything
//! down again, in every case.
//!
//! Cleanup is by ownership: the emulator (`longhaul_emu::Emulator`) removes its namespaces when
//! stopped or dropped, and `LoadedControls` unloads its congestion controls when dropped, so an
//! error at any step, or an interruption reported by the caller's `interrupted` callback (the
//! command line turns SIGINT/SIGTERM/SIGHUP into that), unwinds through both. Client threads that
//! are still sending when a run is interrupted lose their path with the namespaces and end with
//! the process; the responsive cross traffic's threads are ended and joined
//! (`ResponsiveTraffic` does so when dropped).
//!
//! Socket buffers: a window of BDP + queue must fit in both the sender's and the receiver's
//! buffers (seed 004: "the TCP window must be at least the BDP"). The autotuning maxima
//! `net.ipv4.tcp_rmem` / `tcp_wmem` are per network namespace, so they are raised inside the two
//! namespaces only (the host keeps its settings), to `longhaul tune`'s recommendation for
//! BDP(largest RTT) + queue.

use crate::congestion::LoadedControls;
use crate::error::LabError;
use crate::plan::LabPlan;
use crate::queue_log::{self, QueueLog};
use crate::responsive::{CrossRun, ResponsiveTraffic};
use longhaul_emu::emulator::Side;
use longhaul_emu::sys::netns;
use longhaul_emu::{Emulator, Mode, Options};
use longhaul_perf::perf::{run_client, ClientConfig, PerfRun, Quiet, Server, ServerConfig};
use longhaul_perf::tune::bdp::{bdp_bytes, buffer_for_bdp};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How far ahead of the clock the experiment's time 0 is set: far more than a forwarder takes
/// between reading a packet and deciding it, so it decides every packet of the experiment on
/// the experiment's zero point.
const ZERO_LEAD: Duration = Duration::from_millis(1);

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Keep the emulator's per-packet event log here; `None` = a temporary file, removed after
    /// it has been read.
    pub event_log: Option<PathBuf>,
    /// Print progress lines on stderr.
    pub verbose: bool,
    /// Forward with one busy-polling thread on a CPU of its own (`longhaul_emu::poll`); the
    /// perf servers and clients run on the other CPUs.
    pub busy_poll: bool,
    /// Turn the emulator's TUN offloads off: the hosts hand over one wire packet per read
    /// instead of TCP super-packets (`longhaul emu --no-offload`).
    pub no_offload: bool,
    /// The emulator's `--coalesce`: consecutive wire packets of one super-packet leaving the
    /// bottleneck within this many ns reach the receiving host together, as a receiving NIC's
    /// interrupt moderation and GRO hand them over. `None`: the emulator's default (20 µs).
    pub coalesce_ns: Option<u64>,
    /// Per-namespace sysctls set in both hosts' namespaces after the lab's own tuning
    /// (`net.ipv4.tcp_pacing_ca_ratio` = `150`), as `ip netns exec NS sysctl -w` would.
    pub sysctls: Vec<Sysctl>,
}

/// One `KEY=VALUE` sysctl for the hosts' namespaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sysctl {
    /// Dotted name, `net.ipv4.tcp_pacing_ca_ratio`.
    pub key: String,
    /// The value to write.
    pub value: String,
}

impl std::str::FromStr for Sysctl {
    type Err = String;

    /// `KEY=VALUE`, the key a dotted sysctl name under `net.` (the part of /proc/sys a network
    /// namespace owns).
    fn from_str(s: &str) -> Result<Sysctl, String> {
        let (key, value) = s.split_once('=').ok_or_else(|| {
            format!("`{s}`: expected KEY=VALUE, e.g. net.ipv4.tcp_pacing_ca_ratio=150")
        })?;
        let (key, value) = (key.trim(), value.trim());
        let well_formed = key.starts_with("net.")
            && key.split('.').all(|w| {
                !w.is_empty()
                    && w.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            });
        if !well_formed {
            return Err(format!(
                "`{key}`: not a network namespace's sysctl (a dotted name under net., e.g. net.ipv4.tcp_pacing_ca_ratio)"
            ));
        }
        if value.is_empty() || value.contains('\n') {
            return Err(format!("`{s}`: the value must be one non-empty line"));
        }
        Ok(Sysctl {
            key: key.to_string(),
            value: value.to_string(),
        })
    }
}

impl Sysctl {
    /// `KEY=VALUE KEY=VALUE`, as the progress line and `meta.sysctl` show a list.
    pub fn join(all: &[Sysctl]) -> String {
        let each: Vec<String> = all.iter().map(|s| s.to_string()).collect();
        each.join(" ")
    }
}

impl std::fmt::Display for Sysctl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

/// One flow's measured run, with when it started relative to the experiment.
#[derive(Debug, Clone)]
pub struct FlowRun {
    /// The client's measurement (`longhaul perf`).
    pub run: PerfRun,
    /// Seconds from the experiment's start to the client's test start.
    pub started_s: f64,
    /// The name the socket selected (`lab<pid>_<k>` for eBPF ones).
    pub registered_cc: String,
}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub struct RawOutcome {
    /// Each flow's run, in plan order.
    pub flows: Vec<FlowRun>,
    /// What each responsive cross-traffic entry's transfers did, in plan order.
    pub responsive: Vec<CrossRun>,
    /// The emulator's counters at the end.
    pub emulator: longhaul_emu::Summary,
    /// The data direction's queue, binned (a>b).
    pub forward_log: QueueLog,
    /// The ACK direction's queue, binned (b>a).
    pub reverse_log: QueueLog,
    /// Seconds from the experiment's start to the last flow's end.
    pub span_s: f64,
    /// The experiment's start on the monotonic clock the emulator's event log is stamped with
    /// (ns): the log's time 0.
    pub epoch_ns: u64,
    /// The socket buffer limit set in both namespaces, bytes: the BDP plus the queue, at least 4 MiB.
    pub socket_buffer_max: u64,
    /// The sender namespace's TCP counters at the end (`stack_counters`); empty if unreadable.
    pub sender_counters: std::collections::BTreeMap<String, u64>,
    /// Silences in the traffic offered to the bottleneck, by host (`crate::silences`).
    pub silences: Option<crate::silences::Silences>,
    /// The `--sysctl`s set in both namespaces.
    pub sysctls: Vec<Sysctl>,
    /// The emulator's coalescing window in effect (ns).
    pub coalesce_ns: u64,
    /// What the run did beside the plan (modules loaded, stale controls removed).
    pub notes: Vec<String>,
}

/// Where a run lies on the clock of the emulator's event log: with the plan, the emulator's
/// reports of its two directions (`emulator.json`) and the event log itself
/// (`emulator-events.log`), what every link metric of the run is computed from
/// (`queue_log::read_run`, `summary::links`). `longhaul lab --report DIR` writes it as
/// `clock.json`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunClock {
    /// [`RawOutcome::epoch_ns`]: the experiment's start, ns on the log's monotonic clock.
    pub epoch_ns: u64,
    /// [`RawOutcome::span_s`]: seconds from the experiment's start to the last flow's end.
    pub span_s: f64,
}

impl RawOutcome {
    /// The run's place on the event log's clock.
    pub fn clock(&self) -> RunClock {
        RunClock {
            epoch_ns: self.epoch_ns,
            span_s: self.span_s,
        }
    }
}

/// Number of this process's runs (temporary file names).
static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Runs the plan. `interrupted(d)` waits up to `d` and returns a signal number if the run must
/// stop (then everything is cleaned up and `LabError::Interrupted` returned).
pub fn run(
    plan: &LabPlan,
    opts: &RunOptions,
    interrupted: &mut dyn FnMut(Duration) -> Option<i32>,
) -> Result<RawOutcome, LabError> {
    if !is_root() {
        return Err(LabError::NotRoot);
    }
    let say = |m: String| {
        if opts.verbose {
            eprintln!("longhaul lab: {m}");
        }
    };
    let (controls, registered) = LoadedControls::prepare(&plan.controls())?;
    for n in &controls.notes {
        say(n.clone());
    }
    let (log_path, temporary) = match &opts.event_log {
        Some(p) => (p.clone(), false),
        None => (
            std::env::temp_dir().join(format!(
                "longhaul-lab-{}-{}.events",
                std::process::id(),
                RUNS.fetch_add(1, Ordering::SeqCst)
            )),
            true,
        ),
    };
    let result = run_with_controls(plan, &registered, &log_path, opts, &say, interrupted);
    if temporary {
        let _ = std::fs::remove_file(&log_path);
    }
    let mut controls = controls;
    let unload_errors = controls.unload_all();
    let mut out = result?;
    out.notes.extend(controls.notes.clone());
    if !unload_errors.is_empty() {
        return Err(LabError::Setup {
            what: "unloading congestion controls".into(),
            message: unload_errors.join("; "),
        });
    }
    Ok(out)
}

/// Whether this process runs as root, as the lab needs.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn setup_err(what: &str) -> impl Fn(String) -> LabError + '_ {
    move |message| LabError::Setup {
        what: what.to_string(),
        message,
    }
}

fn run_with_controls(
    plan: &LabPlan,
    registered: &[String],
    log_path: &std::path::Path,
    opts: &RunOptions,
    say: &dyn Fn(String),
    interrupted: &mut dyn FnMut(Duration) -> Option<i32>,
) -> Result<RawOutcome, LabError> {
    let mut options = Options::new(plan.emulator.clone());
    options.event_log = Some(log_path.to_path_buf());
    options.busy_poll = opts.busy_poll;
    options.offload = !opts.no_offload;
    if let Some(ns) = opts.coalesce_ns {
        options.coalesce_ns = ns;
    }
    let coalesce_ns = options.coalesce_ns;
    let emu = Emulator::start(Mode::Pair, options)?;
    // With a polling forwarder the endpoints keep off its CPU.
    let host_cpus = emu.host_cpus().map(<[usize]>::to_vec);
    if let (Some(cpu), Some(h)) = (emu.forwarder_cpu(), &host_cpus) {
        say(format!(
            "busy polling on CPU {cpu}; perf servers and clients on CPUs {h:?}"
        ));
    }
    let confine = move || {
        if let Some(c) = &host_cpus {
            let _ = longhaul_emu::sys::clock::confine_to_cpus(c);
        }
    };
    let ns_a = emu.namespace(Side::A).expect("pair mode").to_string();
    let ns_b = emu.namespace(Side::B).expect("pair mode").to_string();
    let addr_b = emu.address(Side::B);
    say(format!(
        "emulated path up: {} ({ns_a}) -> {addr_b} ({ns_b}), {:.0} Mb/s, {} ms one way, {}",
        emu.address(Side::A),
        plan.capacity_bps / 1e6,
        plan.one_way_delay.as_millis(),
        plan.queue
    ));

    // Socket buffers in both namespaces.
    let bdp = bdp_bytes(plan.capacity_bps, plan.max_rtt());
    let buffer = buffer_for_bdp(bdp + plan.queue_bytes).max(4 << 20);
    for ns in [&ns_a, &ns_b] {
        tune_namespace(ns, buffer, plan.ecn, &opts.sysctls)?;
    }
    if plan.ecn {
        say("net.ipv4.tcp_ecn = 1 in both namespaces: the flows send ECN-capable packets".into());
    }
    if !opts.sysctls.is_empty() {
        say(format!(
            "sysctl in both namespaces: {}",
            Sysctl::join(&opts.sysctls)
        ));
    }
    say(format!(
        "tcp_rmem/tcp_wmem max = {buffer} B in both namespaces (BDP {bdp} B + queue {} B)",
        plan.queue_bytes
    ));

    // Servers.
    let stop_servers = Arc::new(AtomicBool::new(false));
    let mut server_threads = Vec::new();
    for f in &plan.flows {
        let addr = SocketAddr::new(addr_b.into(), f.port);
        let (tx, rx) = mpsc::channel();
        let stop = stop_servers.clone();
        let ns = ns_b.clone();
        let confine = confine.clone();
        server_threads.push(std::thread::spawn(move || {
            confine();
            if let Err(e) = netns::enter(&ns) {
                let _ = tx.send(Err(e.to_string()));
                return;
            }
            let log: Arc<dyn Fn(longhaul_perf::perf::ServerEvent) + Send + Sync> =
                Arc::new(|e| tracing::debug!("perf server: {e}"));
            match Server::bind(addr, ServerConfig::default(), log) {
                Ok(s) => {
                    let _ = tx.send(Ok(()));
                    let _ = s.serve(&stop);
                }
                Err(e) => {
                    let _ = tx.send(Err(format!("binding {addr}: {e}")));
                }
            }
        }));
        rx.recv()
            .map_err(|e| e.to_string())
            .and_then(|r| r)
            .map_err(setup_err("perf server"))?;
    }
    // Responsive cross traffic's receivers (dropped before the emulator on every exit: it
    // ends and joins the transfers).
    let (flow_cc, cross_cc) = registered.split_at(plan.flows.len());
    let mut cross =
        ResponsiveTraffic::listen(&plan.responsive, &ns_b, addr_b.into(), confine.clone())?;

    // The experiment's time 0, a little ahead of the clock: the emulator's cross traffic and
    // traces count from it (`Emulator::set_zero`; the lead lets both forwarders take it before
    // any packet of the experiment), and each client starts at its start time after it.
    let epoch = Instant::now() + ZERO_LEAD;
    let epoch_ns = longhaul_emu::sys::clock::now_ns() + ZERO_LEAD.as_nanos() as u64;
    emu.set_zero(epoch_ns);
    let (done_tx, done_rx) = mpsc::channel();
    for (k, f) in plan.flows.iter().enumerate() {
        let cfg = ClientConfig {
            host: addr_b.to_string(),
            port: f.port,
            streams: 1,
            duration: f.stop - f.start,
            interval: plan.interval,
            cc: Some(flow_cc[k].clone()),
            window: None,
            write_len: 128 * 1024,
            connect_timeout: Duration::from_secs(10),
        };
        let (tx, ns, start, id) = (done_tx.clone(), ns_a.clone(), f.start, f.id);
        let confine = confine.clone();
        std::thread::spawn(move || {
            confine();
            let result = netns::enter(&ns).map_err(|e| e.to_string()).and_then(|_| {
                let wait = (epoch + start).saturating_duration_since(Instant::now());
                std::thread::sleep(wait);
                let started = epoch.elapsed().as_secs_f64();
                run_client(&cfg, &mut Quiet)
                    .map(|r| (r, started))
                    .map_err(|e| e.to_string())
            });
            let _ = tx.send((k, id, result));
        });
    }
    drop(done_tx);
    cross.start(
        &ns_a,
        addr_b.into(),
        epoch,
        plan.duration,
        cross_cc,
        confine.clone(),
    );
    say(format!(
        "{} flow(s) and {} responsive cross-traffic entr{} scheduled over {:.1} s",
        plan.flows.len(),
        plan.responsive.len(),
        if plan.responsive.len() == 1 {
            "y"
        } else {
            "ies"
        },
        plan.duration.as_secs_f64()
    ));

    // Wait for every flow, and for the cross traffic's end (the run's duration); a flow may
    // run past its stop by its drain (about an RTT plus the queue), so the deadline allows a
    // generous margin before declaring it hung.
    let deadline = epoch + plan.duration + plan.max_rtt() * 20 + Duration::from_secs(30);
    let mut results: Vec<Option<(PerfRun, f64)>> = vec![None; plan.flows.len()];
    let mut remaining = plan.flows.len();
    let mut flows_end = (remaining == 0).then(|| epoch.elapsed());
    let mut last_tick = 0u64;
    while remaining > 0 || !cross.is_finished() {
        if let Some(sig) = interrupted(Duration::from_millis(100)) {
            stop_servers.store(true, Ordering::SeqCst);
            drop(cross);
            drop(emu);
            return Err(LabError::Interrupted(sig));
        }
        while let Ok((k, id, r)) = done_rx.try_recv() {
            remaining -= 1;
            match r {
                Ok(v) => results[k] = Some(v),
                Err(message) => {
                    stop_servers.store(true, Ordering::SeqCst);
                    return Err(LabError::Flow { flow: id, message });
                }
            }
            if remaining == 0 {
                flows_end = Some(epoch.elapsed());
            }
        }
        if Instant::now() > deadline {
            return Err(LabError::Setup {
                what: "waiting for the flows".into(),
                message: if remaining > 0 {
                    format!("{remaining} flow(s) did not finish by the deadline")
                } else {
                    "the responsive cross traffic did not end by the deadline".into()
                },
            });
        }
        let t = epoch.elapsed().as_secs();
        if t >= last_tick + 5 {
            last_tick = t;
            say(format!("t = {t} s of {:.0} s", plan.duration.as_secs_f64()));
        }
    }
    let span_s = flows_end.unwrap_or_else(|| epoch.elapsed()).as_secs_f64();
    let responsive = cross.finish()?;
    let sender_counters = crate::stack_counters::read(&ns_a).unwrap_or_else(|e| {
        tracing::warn!("the sender's TCP counters: {e}");
        Default::default()
    });

    // Wake each server so it reads `stop_servers`, from inside namespace b.
    stop_servers.store(true, Ordering::SeqCst);
    let ports: Vec<u16> = plan.flows.iter().map(|f| f.port).collect();
    let _ = netns::run_in(&ns_b, move || {
        for p in ports {
            let _ = TcpStream::connect_timeout(
                &SocketAddr::new(addr_b.into(), p),
                Duration::from_millis(200),
            );
        }
    });
    for t in server_threads {
        let _ = t.join();
    }
    let emulator = emu.stop()?;

    let read_log = |dir: &str| -> Result<QueueLog, LabError> {
        let f = std::fs::File::open(log_path)
            .map_err(|e| setup_err("reading the emulator's event log")(e.to_string()))?;
        queue_log::read_run(f, dir, plan, epoch_ns, span_s)
            .map_err(|e| setup_err("reading the emulator's event log")(e.to_string()))
    };
    let forward_log = read_log("a>b")?;
    let reverse_log = read_log("b>a")?;
    let silences = std::fs::File::open(log_path)
        .and_then(|f| crate::silences::read(f, epoch_ns, plan.duration.as_secs_f64().min(span_s)))
        .map_err(|e| tracing::warn!("silences in the offered load: {e}"))
        .ok();
    let flows = results
        .into_iter()
        .enumerate()
        .map(|(k, r)| {
            let (run, started_s) = r.expect("every flow reported");
            FlowRun {
                run,
                started_s,
                registered_cc: flow_cc[k].clone(),
            }
        })
        .collect();
    Ok(RawOutcome {
        flows,
        responsive,
        emulator,
        forward_log,
        reverse_log,
        span_s,
        epoch_ns,
        socket_buffer_max: buffer,
        sender_counters,
        silences,
        sysctls: opts.sysctls.clone(),
        coalesce_ns,
        notes: Vec::new(),
    })
}

/// Raises the TCP autotuning maxima inside a namespace (per-namespace sysctls), turns ECN on
/// when the flows ask for it (`ecn`: `net.ipv4.tcp_ecn = 1`, request it on outgoing
/// connections and accept it on incoming ones), then sets the user's `extra` ones, which may
/// override them. A key the namespace does not have is an error that names it (some net.core
/// keys exist only in the host's namespace).
fn tune_namespace(ns: &str, buffer: u64, ecn: bool, extra: &[Sysctl]) -> Result<(), LabError> {
    let sysctl = |key: &str, value: String| Sysctl {
        key: key.to_string(),
        value,
    };
    let mut values = vec![
        sysctl("net.ipv4.tcp_rmem", format!("4096 131072 {buffer}")),
        sysctl("net.ipv4.tcp_wmem", format!("4096 16384 {buffer}")),
        // A fresh namespace has no cached metrics, but say it: no ssthresh carried over.
        sysctl("net.ipv4.tcp_no_metrics_save", "1".to_string()),
    ];
    if ecn {
        values.push(sysctl("net.ipv4.tcp_ecn", "1".to_string()));
    }
    values.extend_from_slice(extra);
    let ns_name = ns.to_string();
    netns::run_in(ns, move || -> Result<(), String> {
        for s in &values {
            let path = format!("/proc/sys/{}", s.key.replace('.', "/"));
            if !std::path::Path::new(&path).exists() {
                return Err(format!(
                    "sysctl {} does not exist in network namespace {ns_name} (a host-wide key, or \
                     not in this kernel): set it on the host instead",
                    s.key
                ));
            }
            std::fs::write(&path, &s.value)
                .map_err(|e| format!("writing {} to {path}: {e}", s.value))?;
        }
        Ok(())
    })
    .map_err(|e| e.to_string())
    .and_then(|r| r)
    .map_err(setup_err("setting sysctls in the namespaces"))
}

#[cfg(test)]
mod tests {
    use super::Sysctl;

    #[test]
    fn a_sysctl_is_a_dotted_net_key_and_one_value() {
        let s: Sysctl = " net.ipv4.tcp_pacing_ca_ratio = 150 ".parse().unwrap();
        assert_eq!(s.key, "net.ipv4.tcp_pacing_ca_ratio");
        assert_eq!(s.value, "150");
        assert_eq!(s.to_string(), "net.ipv4.tcp_pacing_ca_ratio=150");
        let wmem: Sysctl = "net.ipv4.tcp_wmem=4096 16384 67108864".parse().unwrap();
        assert_eq!(wmem.value, "4096 16384 67108864");
    }

    #[test]
    fn anything_outside_a_network_namespace_is_refused() {
        for bad in [
            "net.ipv4.tcp_pacing_ca_ratio",  // no value
            "kernel.sched_rt_runtime_us=-1", // not under net.
            "net.ipv4/../../kernel/x=1",     // a path, not a name
            "net..ipv4=1",                   // empty component
            "net.ipv4.tcp_ecn=",             // empty value
            "net.ipv4.tcp_ecn=1\n2",         // two lines
        ] {
            let e = bad.parse::<Sysctl>().unwrap_err();
            assert!(e.contains('`'), "{bad}: {e}");
        }
    }
}
