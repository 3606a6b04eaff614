//! Setting up, running and tearing down one emulated path.
//!
//! Two modes, as in the command line:
//!
//! - `Pair`: two hosts, namespaces `lh<pid>a` and `lh<pid>b`, each with a TUN device `emu0`
//!   (a = 100.64.0.1, b = 100.64.0.2, point-to-point, default route through it). Everything a
//!   sends leaves through its TUN, crosses the a→b path model, and is written into b's TUN; and
//!   back. Because each host has its own namespace, a second instance uses the same addresses
//!   without collision; only names carry the PID.
//! - `Shell`: one namespace `lh<pid>s` for a command (side a, the "inside"), joined to the initial
//!   namespace (side b, the "outside") by a TUN in each — mahimahi's design. The outer end gets a
//!   free 100.64.x.y/32 pair, so concurrent shells do not collide; the command reaches the host at
//!   `LONGHAUL_EMU_HOST`.
//!
//! Every name is recorded in a state file before it is created (`sys::state`); `stop` (or `Drop`,
//! on any error path) deletes the namespaces and the file. Starting an instance first removes what
//! dead instances left behind.

use crate::config::{ConfigError, LinkConfig};
use crate::forward::{Direction, DirectionReport, Observers};
use crate::model::path::PathModel;
use crate::observe::{EventLog, OutputReport, PcapWriter};
use crate::sys::pidns::PidNamespace;
use crate::sys::state::{self, InstanceState};
use crate::sys::tun::Tun;
use crate::sys::{clock, netns, require_root, SysError};
use serde::Serialize;
use std::net::Ipv4Addr;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// Instances started by this process so far (names must differ between them).
static NEXT_INSTANCE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Default `Options::coalesce_ns`: the release-lateness budget (20 µs), i.e. 16 wire
/// packets of 1500 B at 10 Gb/s, or a whole 64 KB super-packet above 26 Gb/s.
pub const DEFAULT_COALESCE_NS: u64 = 20_000;

/// Name of the TUN device inside each namespace.
pub const TUN_NAME: &str = "emu0";

/// How the two ends are set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Two hosts, each in a namespace of its own (`lh<pid>a`, `lh<pid>b`).
    Pair,
    /// One namespace for a command (side a, inside), joined to the initial namespace (side b,
    /// outside).
    Shell,
}

/// One end of the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Side a: namespace `…a` in pair mode, the command's namespace in shell mode.
    A,
    /// Side b: namespace `…b` in pair mode, the initial namespace in shell mode.
    B,
}

/// How to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// The path to emulate.
    pub link: LinkConfig,
    /// Per-packet event log file.
    pub event_log: Option<PathBuf>,
    /// Directory for `a.pcap` and `b.pcap`.
    pub pcap_dir: Option<PathBuf>,
    /// Spin this long before a release instead of sleeping (ns); None = measure the machine's
    /// timer wake-up latency and spin a little longer than that.
    pub spin_ns: Option<u64>,
    /// Memory cap of each direction's delay line.
    pub max_buffered_bytes: u64,
    /// TUN transmit queue length (packets the host may queue before we read them).
    pub txqueuelen: u32,
    /// SCHED_FIFO priority of the forwarding threads (0 = normal scheduling).
    pub realtime_priority: i32,
    /// Run the naive forwarder (no model) instead: the benchmark's baseline.
    pub naive: bool,
    /// Pin both forwarding threads to this CPU (None = let the kernel place them). A host
    /// process pinned to the same CPU is then woken without an inter-processor interrupt when
    /// its packets are released, and wakes the forwarder the same way (README "Timing").
    pub forwarder_cpu: Option<usize>,
    /// Let the hosts hand over TCP super-packets (TUN checksum and segmentation offload,
    /// `crate::gso`); the path model still decides per wire packet. Off: one read per wire
    /// packet, as mahimahi.
    pub offload: bool,
    /// With offload: wire segments of one super-packet that are delivered alike travel on as one
    /// packet as long as their release times lie within this span (ns); each is then released
    /// up to this much after its computed time. 0 = every wire packet at its own time.
    pub coalesce_ns: u64,
    /// One thread forwards both directions and polls instead of sleeping while packets are on
    /// the path (`crate::poll`): releases on time to within microseconds, at the price of a
    /// whole CPU (`forwarder_cpu`, else the last usable one) that the hosts' programs started
    /// through the emulator stay off.
    pub busy_poll: bool,
}

impl Options {
    /// Options for `link`; a rated direction without a queue limit gets the default one
    /// (`config::DEFAULT_QUEUE_PACKETS`).
    pub fn new(link: LinkConfig) -> Self {
        Self {
            link: link.with_default_queues(),
            event_log: None,
            pcap_dir: None,
            spin_ns: None,
            max_buffered_bytes: crate::config::MAX_BUFFERED_BYTES,
            txqueuelen: 10_000,
            naive: false,
            realtime_priority: 10,
            forwarder_cpu: None,
            offload: true,
            coalesce_ns: DEFAULT_COALESCE_NS,
            busy_poll: false,
        }
    }
}

/// What can stop an emulator from starting or stopping cleanly.
#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    /// The link settings cannot be emulated.
    #[error("invalid link settings: {0}")]
    Config(#[from] ConfigError),
    /// A system call, `ip` command or root check failed.
    #[error(transparent)]
    Sys(#[from] SysError),
    /// Other I/O: opening output files, the PID namespace, a probe.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// The JSON summary written on exit.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// How the instance ran.
    pub mode: Mode,
    /// The emulator's process ID (part of the namespace names).
    pub pid: u32,
    /// Wall time from start to stop, in seconds.
    pub duration_s: f64,
    /// The MTU of the TUN devices, in bytes.
    pub mtu: u32,
    /// The link as it was emulated (default queues filled in).
    pub link: LinkConfig,
    /// One report per direction.
    pub directions: Vec<DirectionReport>,
    /// Packets the hosts' TUN devices dropped before the emulator read them (kernel tx_dropped):
    /// side a, side b. Non-zero means the emulator fell behind; these are not path losses.
    pub tun_tx_dropped: [u64; 2],
    /// Packets the hosts' TUN devices dropped on the way in, after the emulator wrote them (kernel
    /// rx_dropped: the receiving host's stack refused them, e.g. a full backlog): side a, side b.
    /// The emulator counted these as delivered; they are lost in the host, not on the path.
    pub tun_rx_dropped: [u64; 2],
    /// Measured timerfd oversleep of this machine, in ns.
    pub timer_wakeup_latency_ns: u64,
    /// How long before each release the forwarder stops sleeping and spins, in ns.
    pub spin_ns: u64,
    /// One busy-polling thread forwarded both directions (`Options::busy_poll`), on
    /// `forwarder_cpu`; the hosts' programs were kept on `host_cpus`.
    pub busy_poll: bool,
    /// The CPU the forwarding threads were pinned to (given, or the one busy polling took), if any.
    pub forwarder_cpu: Option<usize>,
    /// With busy polling, the CPUs the hosts' programs were kept on (all but `forwarder_cpu`).
    pub host_cpus: Option<Vec<usize>>,
    /// Time the hypervisor kept each CPU from running during the run (`sys::steal`): a
    /// release can be no more punctual than its CPU is scheduled.
    pub cpu_steal: Vec<crate::sys::steal::CpuSteal>,
    /// What this start removed of dead instances (namespaces, state files), one line each.
    pub stale_removed: Vec<String>,
    /// The per-packet event log, if one was asked for: `complete = false` (with the first error)
    /// when a write failed, e.g. on a full disk — the emulator keeps forwarding regardless.
    pub event_log: Option<OutputReport>,
    /// The pcap files (a.pcap, b.pcap), same meaning.
    pub pcap: Vec<OutputReport>,
}

/// A running emulated path.
pub struct Emulator {
    mode: Mode,
    state: InstanceState,
    stop: Arc<AtomicBool>,
    /// The instant (monotonic ns) cross traffic and traces count from (`set_zero`).
    zero: Arc<AtomicU64>,
    /// Forwarding threads: one per direction, or one for both when busy polling.
    threads: Vec<JoinHandle<Vec<DirectionReport>>>,
    started: Instant,
    link: LinkConfig,
    stale_removed: Vec<String>,
    torn_down: bool,
    observers_to_flush: Vec<Arc<Mutex<PcapWriter>>>,
    log: Option<Arc<Mutex<EventLog>>>,
    outer_tun: Option<String>,
    wakeup_ns: u64,
    spin_ns: u64,
    forwarder_cpu: Option<usize>,
    /// CPUs the hosts' programs are confined to (None: no restriction).
    host_cpus: Option<Vec<usize>>,
    busy_poll: bool,
    steal_at_start: crate::sys::steal::StealSnapshot,
    /// The PID namespace the hosts' programs run in (`spawn`); dropping it ends them all.
    programs: Option<PidNamespace>,
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> EmulatorError {
    let what = what.into();
    move |source| EmulatorError::Io { what, source }
}

/// A free /30 in 100.64.0.0/10 for a shell's outer link, chosen from the PID and checked against
/// the addresses in use.
fn shell_addresses(pid: u32) -> (Ipv4Addr, Ipv4Addr) {
    let used = Command::new("ip")
        .args(["-o", "-4", "addr", "show"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let base = u32::from(Ipv4Addr::new(100, 64, 0, 0));
    for k in 0..(1u32 << 20) {
        let block = (pid.wrapping_add(k)) % (1 << 20);
        let host = Ipv4Addr::from(base + block * 4 + 1);
        let inner = Ipv4Addr::from(base + block * 4 + 2);
        if !used.contains(&format!("{host}/")) && !used.contains(&format!("{host} ")) {
            return (host, inner);
        }
    }
    (Ipv4Addr::new(100, 64, 0, 1), Ipv4Addr::new(100, 64, 0, 2))
}

fn configure(
    ns: Option<&str>,
    dev: &str,
    local: Ipv4Addr,
    peer: Ipv4Addr,
    mtu: u32,
    txqueuelen: u32,
    default_route: bool,
) -> Result<(), SysError> {
    let pre: Vec<&str> = match ns {
        Some(n) => vec!["-n", n],
        None => vec![],
    };
    let run = |rest: &[&str]| -> Result<(), SysError> {
        let mut v = pre.clone();
        v.extend_from_slice(rest);
        netns::ip(&v)
    };
    let (mtu_s, q_s) = (mtu.to_string(), txqueuelen.to_string());
    let (l, p) = (format!("{local}/32"), peer.to_string());
    // No IPv6 link-local address: otherwise router/multicast-listener solicitations would cross
    // the path as unexplained extra packets.
    run(&["link", "set", dev, "addrgenmode", "none"])?;
    run(&["link", "set", dev, "mtu", &mtu_s, "txqueuelen", &q_s])?;
    run(&["addr", "add", &l, "peer", &p, "dev", dev])?;
    run(&["link", "set", dev, "up"])?;
    if default_route {
        run(&["route", "add", "default", "dev", dev])?;
    }
    Ok(())
}

fn tun_in(ns: &str, offload: bool) -> Result<Tun, SysError> {
    netns::run_in(ns, move || Tun::create(TUN_NAME, offload))?
}

/// A device's kernel drop counters, `(tx_dropped, rx_dropped)` ((0, 0) if unknown).
fn dropped(ns: Option<&str>, dev: &str) -> (u64, u64) {
    let mut c = Command::new("ip");
    if let Some(n) = ns {
        c.args(["-n", n]);
    }
    let Ok(o) = c.args(["-s", "-j", "link", "show", "dev", dev]).output() else {
        return (0, 0);
    };
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    let count = |way: &str| v[0]["stats64"][way]["dropped"].as_u64().unwrap_or(0);
    (count("tx"), count("rx"))
}

/// A command that runs `argv` on `side` of the instance `st` describes (through `ip netns exec`
/// when that side is a namespace), with LONGHAUL_EMU_A/B/PEER in its environment: the base of
/// [`Emulator::command`], and what `longhaul emu exec` runs in an instance of another process.
pub fn host_command(st: &InstanceState, side: Side, argv: &[String]) -> Command {
    let ns = match side {
        Side::A => st.side_a.as_deref(),
        Side::B => st.side_b.as_deref(),
    };
    let mut c = match ns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns]).args(argv);
            c
        }
        None => {
            let mut c = Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        }
    };
    let (a, b) = (&st.addr_a, &st.addr_b);
    c.env("LONGHAUL_EMU_A", a)
        .env("LONGHAUL_EMU_B", b)
        .env("LONGHAUL_EMU_PEER", if side == Side::A { b } else { a });
    c
}

/// Spawns `argv` on `side` of the running instance `st` inside the instance's PID namespace
/// (`sys::pidns`), so that it and whatever it starts end with the emulator, even one killed
/// with SIGKILL: what `longhaul emu exec` runs. The error says what to do.
pub fn spawn_on(st: &InstanceState, side: Side, argv: &[String]) -> Result<Child, String> {
    let Some(init) = st.init_pid else {
        return Err(format!(
            "emulator {} was started by an older longhaul that does not keep its programs in a \
             PID namespace; restart it",
            st.pid
        ));
    };
    let name = argv.first().map_or("", String::as_str);
    crate::sys::pidns::spawn_in(init, &mut host_command(st, side, argv))
        .map_err(|e| format!("cannot run {name}: {e}"))
}

impl Emulator {
    /// Validates the settings, creates the namespaces and TUN devices, and starts forwarding.
    pub fn start(mode: Mode, opts: Options) -> Result<Emulator, EmulatorError> {
        opts.link.validate()?;
        require_root()?;
        let stale_removed = state::cleanup_stale();
        for s in &stale_removed {
            tracing::info!("removed stale state: {s}");
        }
        let pid = std::process::id();
        let instance = NEXT_INSTANCE.fetch_add(1, Ordering::SeqCst);
        let prefix = state::prefix(pid, instance);
        let (ns_a, ns_b) = match mode {
            Mode::Pair => (Some(format!("{prefix}a")), Some(format!("{prefix}b"))),
            Mode::Shell => (Some(format!("{prefix}s")), None),
        };
        let (addr_a, addr_b) = match mode {
            Mode::Pair => (Ipv4Addr::new(100, 64, 0, 1), Ipv4Addr::new(100, 64, 0, 2)),
            Mode::Shell => {
                let (host, inner) = shell_addresses(pid.wrapping_add(instance * 7919));
                (inner, host)
            }
        };
        // Before anything else: from here on every program started for the hosts ends with
        // this instance, even if it is killed with SIGKILL (`sys::pidns`).
        let programs = PidNamespace::create().map_err(io_err("creating the PID namespace"))?;
        let st = InstanceState {
            pid,
            instance,
            init_pid: Some(programs.init_pid()),
            start_time: state::proc_start_time(pid).unwrap_or(0),
            mode: format!("{mode:?}").to_lowercase(),
            namespaces: [ns_a.clone(), ns_b.clone()].into_iter().flatten().collect(),
            side_a: ns_a.clone(),
            side_b: ns_b.clone(),
            addr_a: addr_a.to_string(),
            addr_b: addr_b.to_string(),
        };
        st.write()?;
        // From here on, Drop tears down whatever was created.
        let mut emu = Emulator {
            mode,
            state: st,
            stop: Arc::new(AtomicBool::new(false)),
            zero: Arc::new(AtomicU64::new(0)),
            threads: Vec::new(),
            started: Instant::now(),
            link: opts.link.clone(),
            stale_removed,
            torn_down: false,
            observers_to_flush: Vec::new(),
            log: None,
            outer_tun: None,
            wakeup_ns: 0,
            spin_ns: 0,
            forwarder_cpu: opts.forwarder_cpu,
            host_cpus: None,
            busy_poll: opts.busy_poll && !opts.naive,
            steal_at_start: crate::sys::steal::StealSnapshot::now(),
            programs: Some(programs),
        };
        if opts.busy_poll && !opts.naive {
            // The poller owns a CPU: the given one, else the last this process may use; the
            // hosts get the others (all of them on a one-CPU machine, where nothing better exists).
            let allowed = clock::allowed_cpus();
            let cpu = opts
                .forwarder_cpu
                .or_else(|| allowed.last().copied())
                .unwrap_or(0);
            emu.forwarder_cpu = Some(cpu);
            let others: Vec<usize> = allowed.into_iter().filter(|&c| c != cpu).collect();
            if others.is_empty() {
                tracing::warn!(
                    "busy polling on a machine with one usable CPU: the hosts share it with the \
                     forwarder, and releases will be late whenever they run"
                );
            } else {
                emu.host_cpus = Some(others);
            }
        }
        // Measured at the forwarders' own priority: a real-time thread is woken promptly even
        // on a loaded machine, a normal one is not, and spinning an RT thread for long would run
        // into the kernel's RT throttling (sched_rt_runtime_us) and stall it for tens of ms.
        let prio = opts.realtime_priority;
        emu.wakeup_ns = std::thread::spawn(move || {
            if prio > 0 {
                clock::make_realtime(prio);
            }
            clock::calibrate_wakeup(9)
        })
        .join()
        .unwrap_or(0);
        emu.spin_ns = opts
            .spin_ns
            .unwrap_or((2 * emu.wakeup_ns + 10_000).clamp(20_000, 200_000));
        if emu.wakeup_ns > 100_000 {
            tracing::warn!(
                "timer wake-ups on this machine are {} us late; spinning {} us before each                  release (costs CPU)",
                emu.wakeup_ns / 1000,
                emu.spin_ns / 1000
            );
        }
        let mtu = opts.link.mtu;
        let q = opts.txqueuelen;
        let a_ns = ns_a.as_deref().expect("side a is always a namespace");
        netns::add(a_ns)?;
        let tun_a = tun_in(a_ns, opts.offload)?;
        configure(Some(a_ns), TUN_NAME, addr_a, addr_b, mtu, q, true)?;
        let tun_b = match &ns_b {
            Some(b_ns) => {
                netns::add(b_ns)?;
                let t = tun_in(b_ns, opts.offload)?;
                configure(Some(b_ns), TUN_NAME, addr_b, addr_a, mtu, q, true)?;
                t
            }
            None => {
                let name = format!("{prefix}o");
                let t = Tun::create(&name, opts.offload)?;
                emu.outer_tun = Some(name.clone());
                configure(None, &name, addr_b, addr_a, mtu, q, false)?;
                t
            }
        };
        if let Some(cpus) = emu.host_cpus.clone() {
            // A write into a TUN device runs the receiving host's stack (TCP input, ACKs) in the
            // writer's context, i.e. on the polling forwarder's CPU; steer it to the hosts'.
            let b_dev = emu
                .outer_tun
                .clone()
                .unwrap_or_else(|| TUN_NAME.to_string());
            for (ns, dev) in [(Some(a_ns), TUN_NAME), (ns_b.as_deref(), b_dev.as_str())] {
                if let Err(e) = netns::steer_receive(ns, dev, &cpus) {
                    tracing::warn!("busy poll: receive steering off, the hosts' stacks run on the forwarder's CPU: {e}");
                }
            }
        }

        // Observers.
        let log = match &opts.event_log {
            Some(p) => Some(Arc::new(Mutex::new(
                EventLog::create(p).map_err(io_err(format!("creating {}", p.display())))?,
            ))),
            None => None,
        };
        let (pcap_a, pcap_b) = match &opts.pcap_dir {
            Some(d) => {
                std::fs::create_dir_all(d).map_err(io_err(format!("creating {}", d.display())))?;
                let mk = |n: &str| -> Result<_, EmulatorError> {
                    let p = d.join(n);
                    Ok(Arc::new(Mutex::new(
                        PcapWriter::create(&p, 65_535)
                            .map_err(io_err(format!("creating {}", p.display())))?,
                    )))
                };
                (Some(mk("a.pcap")?), Some(mk("b.pcap")?))
            }
            None => (None, None),
        };
        emu.observers_to_flush = [pcap_a.clone(), pcap_b.clone()]
            .into_iter()
            .flatten()
            .collect();
        emu.log = log.clone();

        let fd_a: Arc<OwnedFd> = Arc::new(tun_a.fd);
        let fd_b: Arc<OwnedFd> = Arc::new(tun_b.fd);
        let epoch = clock::now_ns();
        emu.zero.store(epoch, Ordering::Release);
        let dirs = [
            (
                "a>b",
                &opts.link.a_to_b,
                fd_a.clone(),
                fd_b.clone(),
                pcap_a.clone(),
                pcap_b.clone(),
            ),
            ("b>a", &opts.link.b_to_a, fd_b, fd_a, pcap_b, pcap_a),
        ];
        let mut polled = Vec::with_capacity(2);
        for (name, cfg, input, output, pin, pout) in dirs {
            if opts.naive {
                let stop = emu.stop.clone();
                let name = name.to_string();
                let prio = opts.realtime_priority;
                let opts_offload = opts.offload;
                let h = std::thread::Builder::new()
                    .name(format!("naive {name}"))
                    .spawn(move || {
                        let buf = if opts_offload {
                            crate::sys::tun::MAX_OFFLOAD_FRAME
                        } else {
                            mtu as usize
                        };
                        vec![crate::naive::run_reported(
                            name, input, output, buf, stop, prio,
                        )]
                    })
                    .map_err(io_err("starting forwarding thread"))?;
                emu.threads.push(h);
                continue;
            }
            let d = Direction {
                name: name.to_string(),
                input,
                output,
                model: PathModel::new(cfg, mtu, epoch),
                capacity_bps: cfg.capacity_bps(),
                mtu,
                max_buffered_bytes: opts.max_buffered_bytes,
                spin_ns: emu.spin_ns,
                realtime_priority: opts.realtime_priority,
                cpu: emu.forwarder_cpu,
                observers: Observers {
                    log: log.clone(),
                    pcap_in: pin,
                    pcap_out: pout,
                },
                stop: emu.stop.clone(),
                zero: emu.zero.clone(),
                port_delays: cfg.port_delays.clone(),
                offload: opts.offload,
                coalesce_ns: opts.coalesce_ns,
            };
            if opts.busy_poll {
                polled.push(d);
                continue;
            }
            let h = std::thread::Builder::new()
                .name(format!("emu {name}"))
                .spawn(move || vec![d.run()])
                .map_err(io_err("starting forwarding thread"))?;
            emu.threads.push(h);
        }
        if let (Some(b), Some(a)) = (polled.pop(), polled.pop()) {
            let h = std::thread::Builder::new()
                .name("emu a<>b".into())
                .spawn(move || crate::poll::run_both(a, b).into())
                .map_err(io_err("starting forwarding thread"))?;
            emu.threads.push(h);
        }
        emu.started = Instant::now();
        emu.steal_at_start = crate::sys::steal::StealSnapshot::now();
        Ok(emu)
    }

    /// The CPU the forwarding threads are pinned to, if any.
    pub fn forwarder_cpu(&self) -> Option<usize> {
        self.forwarder_cpu
    }

    /// How this instance runs.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The link being emulated (with the default queues filled in).
    pub fn link(&self) -> &LinkConfig {
        &self.link
    }

    /// What this instance created, as recorded in its state file.
    pub fn state(&self) -> &InstanceState {
        &self.state
    }

    /// Namespace of a side (None = the initial namespace).
    pub fn namespace(&self, side: Side) -> Option<&str> {
        match side {
            Side::A => self.state.side_a.as_deref(),
            Side::B => self.state.side_b.as_deref(),
        }
    }

    /// Address of a side.
    pub fn address(&self, side: Side) -> Ipv4Addr {
        let s = match side {
            Side::A => &self.state.addr_a,
            Side::B => &self.state.addr_b,
        };
        s.parse().expect("we wrote it")
    }

    /// Starts `cmd` (from `command`) in this instance's PID namespace: it and every process it
    /// starts end when the instance does (stop, drop, or the emulator process dying).
    pub fn spawn(&self, cmd: &mut Command) -> std::io::Result<std::process::Child> {
        match &self.programs {
            Some(p) => p.spawn(cmd),
            None => Err(std::io::Error::other("the emulator has stopped")),
        }
    }

    /// A command that runs `argv` on `side` (through `ip netns exec` when it is a namespace),
    /// with LONGHAUL_EMU_A/B/HOST/PEER in its environment; start it with `spawn`.
    pub fn command(&self, side: Side, argv: &[String]) -> Command {
        let mut c = host_command(&self.state, side, argv);
        if self.mode == Mode::Shell {
            c.env("LONGHAUL_EMU_HOST", self.address(Side::B).to_string());
        }
        if let Some(cpus) = self.host_cpus.clone() {
            // SAFETY: runs in the child between fork and exec; sched_setaffinity is a plain
            // system call (async-signal-safe) and the closure allocates nothing new.
            unsafe {
                c.pre_exec(move || {
                    clock::confine_to_cpus(&cpus).map_err(std::io::Error::from)?;
                    Ok(())
                });
            }
        }
        c
    }

    /// Makes `at_ns` (the monotonic clock, `sys::clock::now_ns`) the instant the path's
    /// cross traffic and rate traces count from, instead of the emulator's start: every cross
    /// source starts afresh, its `start` and `stop` after `at_ns`, and a trace's opportunities
    /// are those of the trace started then. A driver whose experiment begins after the path is
    /// up (`longhaul lab` sets up hosts and servers first) gives its own start, a little ahead
    /// of the clock (each forwarder applies it before its next packet, so no packet arriving
    /// after `at_ns` is decided on the old one).
    pub fn set_zero(&self, at_ns: u64) {
        self.zero.store(at_ns, Ordering::Release);
    }

    /// The CPUs the hosts' programs are confined to: all but the busy-polling forwarder's
    /// (None: no restriction). `command` and the probes apply it.
    pub fn host_cpus(&self) -> Option<&[usize]> {
        self.host_cpus.as_deref()
    }

    /// Stops forwarding, removes everything created, and returns the summary.
    pub fn stop(mut self) -> Result<Summary, EmulatorError> {
        self.stop.store(true, Ordering::SeqCst);
        let directions: Vec<DirectionReport> = self
            .threads
            .drain(..)
            .filter_map(|h| h.join().ok())
            .flatten()
            .collect();
        let tun = [
            dropped(self.state.side_a.as_deref(), TUN_NAME),
            match (&self.state.side_b, &self.outer_tun) {
                (Some(ns), _) => dropped(Some(ns), TUN_NAME),
                (None, Some(dev)) => dropped(None, dev),
                _ => (0, 0),
            },
        ];
        let tun_tx_dropped = tun.map(|(tx, _)| tx);
        let tun_rx_dropped = tun.map(|(_, rx)| rx);
        self.flush_observers();
        let event_log = self
            .log
            .as_ref()
            .and_then(|l| l.lock().ok().map(|w| w.report()));
        let pcap = self
            .observers_to_flush
            .iter()
            .filter_map(|p| p.lock().ok().map(|w| w.report()))
            .collect();
        let summary = Summary {
            mode: self.mode,
            pid: self.state.pid,
            duration_s: self.started.elapsed().as_secs_f64(),
            mtu: self.link.mtu,
            link: self.link.clone(),
            directions,
            tun_tx_dropped,
            tun_rx_dropped,
            timer_wakeup_latency_ns: self.wakeup_ns,
            spin_ns: self.spin_ns,
            busy_poll: self.busy_poll,
            forwarder_cpu: self.forwarder_cpu,
            host_cpus: self.host_cpus.clone(),
            cpu_steal: crate::sys::steal::StealSnapshot::now()
                .since(&self.steal_at_start, self.started.elapsed().as_secs_f64()),
            stale_removed: std::mem::take(&mut self.stale_removed),
            event_log,
            pcap,
        };
        self.torn_down = true;
        self.programs = None;
        self.state.teardown()?;
        Ok(summary)
    }

    fn flush_observers(&mut self) {
        for p in &self.observers_to_flush {
            let _ = p.lock().map(|mut w| w.flush());
        }
        if let Some(l) = &self.log {
            let _ = l.lock().map(|mut w| w.flush());
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if self.torn_down {
            return;
        }
        self.stop.store(true, Ordering::SeqCst);
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
        self.flush_observers();
        self.programs = None;
        if let Err(e) = self.state.teardown() {
            tracing::warn!("cleanup: {e}");
        }
    }
}
