//! The forwarding benchmark: kernel TCP through the naive forwarder and through the emulator
//! (delay and queue enabled) in the same run, at 1500 and 9000 bytes MTU, each with TUN offloads
//! (TCP super-packets, the default) and without (one read per wire packet), plus release
//! lateness at a 1 Gb/s bottleneck both ways. Results are ratios against the baseline measured
//! moments before on the same machine with the same offload setting, never absolute pass/fail
//! thresholds. The load average at the start and end is part of the report: the machine is
//! shared, and the numbers mean little without it. Both hosts' TCP buffers are sized for the
//! path (`TCP_BUFFERS`), as for any WAN measurement.

use crate::config::{LinkConfig, RateConfig};
use crate::emulator::{Emulator, EmulatorError, Mode, Options, Side};
use crate::model::queue::QueueLimits;
use crate::observe::LatenessSummary;
use crate::probe::tcp_transfer;
use serde::Serialize;
use std::time::Duration;

/// One MTU's throughput comparison.
#[derive(Debug, Clone, Serialize)]
pub struct ThroughputRow {
    /// The link MTU in bytes (1500 or 9000).
    pub mtu: u32,
    /// TUN offloads (TCP super-packets) on, for the naive forwarder and the emulator alike.
    pub offload: bool,
    /// Naive forwarder at normal priority (the project's reference baseline).
    pub naive_bps: f64,
    /// Naive forwarder with the same real-time priority the emulator uses.
    pub naive_realtime_bps: f64,
    /// The emulator at normal priority.
    pub emulator_normal_bps: f64,
    /// The emulator as it runs by default (real-time priority).
    pub emulator_bps: f64,
    /// emulator (default) / naive (normal priority).
    pub ratio: f64,
    /// Like for like: emulator / naive, both at normal priority.
    pub ratio_normal: f64,
    /// Like for like: emulator / naive, both at real-time priority.
    pub ratio_realtime: f64,
}

/// The benchmark's results.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// How long each measured transfer or flood ran, in seconds.
    pub seconds_per_run: f64,
    /// One row per MTU and offload setting.
    pub throughput: Vec<ThroughputRow>,
    /// Lateness of a→b releases during a TCP transfer through 1 Gb/s, 5 ms, 1000-packet queue,
    /// with offloads (the default) and without, and busy polling with offloads.
    pub lateness_1g: Vec<LatenessRow>,
    /// 1-minute load average at the start and at the end of the run (/proc/loadavg).
    pub load_average: [f64; 2],
}

/// Release lateness at 1 Gb/s.
#[derive(Debug, Clone, Serialize)]
pub struct LatenessRow {
    /// "tcp" (one kernel TCP flow) or "udp" (a UDP flood at 1.1× the rate, the queue
    /// dropping the excess: the releases are the serialiser's, the hosts do little work).
    pub traffic: &'static str,
    /// TUN offloads (TCP super-packets) on.
    pub offload: bool,
    /// One busy-polling thread for both directions (`Options::busy_poll`).
    pub busy_poll: bool,
    /// Release lateness of the a→b direction.
    pub lateness: LatenessSummary,
    /// What the traffic achieved, in bits per second: TCP goodput at the receiver, or the UDP
    /// flood's delivered IP rate.
    pub throughput_bps: f64,
    /// Share of the run the hypervisor kept the a→b forwarder's CPU from running (the CPU it
    /// ran on most: the pinned one, else the larger of the CPUs' shares).
    pub forwarder_cpu_steal: f64,
}

/// The 1-minute load average (0 if unreadable).
pub fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

impl BenchReport {
    /// A table for the terminal.
    pub fn table(&self) -> String {
        let mut s = String::from(
            "throughput of one kernel TCP flow, Gb/s (RT = SCHED_FIFO forwarders, the emulator's \
             default)\n",
        );
        s += &format!(
            "{:>6} {:>8} {:>8} {:>9} {:>8} {:>8} {:>10} {:>13} {:>9}\n",
            "MTU",
            "offload",
            "naive",
            "naive-RT",
            "emu",
            "emu-RT",
            "emu-RT/",
            "emu/naive",
            "emu-RT/"
        );
        s += &format!(
            "{:>6} {:>8} {:>8} {:>9} {:>8} {:>8} {:>10} {:>13} {:>9}\n",
            "", "", "", "", "", "", "naive", "(both normal)", "naive-RT"
        );
        for r in &self.throughput {
            s += &format!(
                "{:>6} {:>8} {:>8.3} {:>9.3} {:>8.3} {:>8.3} {:>10.2} {:>13.2} {:>9.2}\n",
                r.mtu,
                if r.offload { "on" } else { "off" },
                r.naive_bps / 1e9,
                r.naive_realtime_bps / 1e9,
                r.emulator_normal_bps / 1e9,
                r.emulator_bps / 1e9,
                r.ratio,
                r.ratio_normal,
                r.ratio_realtime
            );
        }
        for r in &self.lateness_1g {
            s += &format!(
                "lateness at 1 Gb/s, {}, offload {}{} ({:.1} Mb/s, {} releases): p50 {:.1} us, \
                 p99 {:.1} us, p99.9 {:.1} us, max {:.1} us; steal {:.2} % of its CPU\n",
                r.traffic,
                if r.offload { "on" } else { "off" },
                if r.busy_poll { ", busy poll" } else { "" },
                r.throughput_bps / 1e6,
                r.lateness.count,
                r.lateness.p50_ns as f64 / 1e3,
                r.lateness.p99_ns as f64 / 1e3,
                r.lateness.p999_ns as f64 / 1e3,
                r.lateness.max_ns as f64 / 1e3,
                r.forwarder_cpu_steal * 100.0
            );
        }
        s += &format!(
            "load average: {:.2} at the start, {:.2} at the end",
            self.load_average[0], self.load_average[1]
        );
        s
    }
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> EmulatorError + '_ {
    move |source| EmulatorError::Io {
        what: what.into(),
        source,
    }
}

/// TCP buffer limits set in both hosts' namespaces (min, default, max bytes): the flow's
/// window must not be what limits it. The namespace defaults (4 MB send, 6 MB receive buffer)
/// cap one flow over the emulator's 2 ms round trip at 9–10 Gb/s whatever the forwarder does;
/// with these the same emulator run measured 10.6–13.8 Gb/s.
const TCP_BUFFERS: [(&str, &str); 2] = [
    ("net.ipv4.tcp_rmem", "4096 131072 67108864"),
    ("net.ipv4.tcp_wmem", "4096 16384 67108864"),
];

fn size_tcp_buffers(emu: &Emulator) -> Result<(), EmulatorError> {
    for side in [Side::A, Side::B] {
        for (key, value) in TCP_BUFFERS {
            let argv = ["sysctl".to_string(), "-qw".into(), format!("{key}={value}")];
            let status = emu
                .command(side, &argv)
                .status()
                .map_err(io("running sysctl (procps) in the host namespace"))?;
            if !status.success() {
                return Err(EmulatorError::Io {
                    what: format!("setting {key} in the host namespace"),
                    source: std::io::Error::other(format!("sysctl exited with {status}")),
                });
            }
        }
    }
    Ok(())
}

fn tcp_through(opts: Options, secs: Duration) -> Result<(f64, LatenessSummary), EmulatorError> {
    tcp_through_steal(opts, secs).map(|(bps, late, _)| (bps, late))
}

/// As `tcp_through`, with the steal share of the forwarder's CPU (`LatenessRow`).
fn tcp_through_steal(
    opts: Options,
    secs: Duration,
) -> Result<(f64, LatenessSummary, f64), EmulatorError> {
    let emu = Emulator::start(Mode::Pair, opts)?;
    size_tcp_buffers(&emu)?;
    // Let the forwarding threads and the namespaces' routes settle.
    std::thread::sleep(Duration::from_millis(100));
    let r = tcp_transfer(&emu, secs, 0).map_err(io("TCP transfer"))?;
    let summary = emu.stop()?;
    let late = summary
        .directions
        .first()
        .map(|d| d.lateness)
        .unwrap_or_default();
    Ok((r.goodput_bps(), late, forwarder_steal(&summary)))
}

/// Which parts of the benchmark to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parts {
    /// The throughput rows (1500 and 9000 bytes MTU, offloads on and off) and the lateness rows.
    All,
    /// Only the 1 Gb/s lateness rows.
    Lateness,
}

/// A UDP flood at 1.1× the a→b rate: (delivered IP rate, a→b lateness, forwarder CPU steal).
fn udp_flood_through(
    opts: Options,
    secs: Duration,
) -> Result<(f64, LatenessSummary, f64), EmulatorError> {
    let emu = Emulator::start(Mode::Pair, opts)?;
    std::thread::sleep(Duration::from_millis(100));
    let rate = match emu_rate(&emu) {
        Some(r) => r,
        None => {
            return Err(EmulatorError::Io {
                what: "UDP lateness row".into(),
                source: std::io::Error::other("needs a constant a→b rate"),
            })
        }
    };
    let payload = 1472;
    let r = crate::probe::udp_flood(&emu, payload, rate * 1.1, secs, 0).map_err(io("UDP flood"))?;
    let summary = emu.stop()?;
    let late = summary
        .directions
        .first()
        .map(|d| d.lateness)
        .unwrap_or_default();
    Ok((
        r.steady_ip_rate_bps(payload),
        late,
        forwarder_steal(&summary),
    ))
}

fn emu_rate(emu: &Emulator) -> Option<f64> {
    match emu.link().a_to_b.rate {
        RateConfig::Constant { bps } => Some(bps as f64),
        _ => None,
    }
}

/// The steal share of the forwarder's CPU: the pinned one, else the larger of the CPUs'.
fn forwarder_steal(summary: &crate::emulator::Summary) -> f64 {
    summary
        .cpu_steal
        .iter()
        .filter(|s| summary.forwarder_cpu.is_none_or(|c| c == s.cpu))
        .map(|s| s.share)
        .fold(0.0, f64::max)
}

/// Runs the whole benchmark (needs root).
pub fn run(secs: Duration) -> Result<BenchReport, EmulatorError> {
    run_parts(secs, Parts::All)
}

/// Runs `parts` of the benchmark (needs root).
pub fn run_parts(secs: Duration, parts: Parts) -> Result<BenchReport, EmulatorError> {
    let load_start = load_average();
    let mut rows = Vec::new();
    if parts == Parts::All {
        for mtu in [1500u32, 9000] {
            for offload in [true, false] {
                rows.push(throughput_row(mtu, offload, secs)?);
            }
        }
    }
    let mut link = LinkConfig::default();
    for d in [&mut link.a_to_b, &mut link.b_to_a] {
        d.rate = RateConfig::Constant { bps: 1_000_000_000 };
        d.queue = QueueLimits {
            packets: Some(1000),
            bytes: None,
        };
        d.delay.delay_ns = 5_000_000;
    }
    let mut lateness_1g = Vec::new();
    for (offload, busy_poll) in [(true, false), (false, false), (true, true)] {
        let mut o = Options::new(link.clone());
        o.offload = offload;
        o.busy_poll = busy_poll;
        let (bps, late, steal) = tcp_through_steal(o, secs)?;
        lateness_1g.push(LatenessRow {
            traffic: "tcp",
            offload,
            busy_poll,
            lateness: late,
            throughput_bps: bps,
            forwarder_cpu_steal: steal,
        });
    }
    for busy_poll in [false, true] {
        let mut o = Options::new(link.clone());
        o.busy_poll = busy_poll;
        let (bps, late, steal) = udp_flood_through(o, secs)?;
        lateness_1g.push(LatenessRow {
            traffic: "udp",
            offload: true,
            busy_poll,
            lateness: late,
            throughput_bps: bps,
            forwarder_cpu_steal: steal,
        });
    }
    Ok(BenchReport {
        seconds_per_run: secs.as_secs_f64(),
        throughput: rows,
        lateness_1g,
        load_average: [load_start, load_average()],
    })
}

fn throughput_row(mtu: u32, offload: bool, secs: Duration) -> Result<ThroughputRow, EmulatorError> {
    let link = LinkConfig {
        mtu,
        ..Default::default()
    };
    let mut naive = Options::new(link.clone());
    naive.naive = true;
    naive.offload = offload;
    naive.realtime_priority = 0;
    let (naive_bps, _) = tcp_through(naive, secs)?;
    let mut naive_rt = Options::new(link);
    naive_rt.naive = true;
    naive_rt.offload = offload;
    let (naive_rt_bps, _) = tcp_through(naive_rt, secs)?;

    // The emulator with real work per packet: a bottleneck well above what the host can
    // carry (so the serialiser and queue run on every wire packet), a large byte queue and 1 ms
    // of delay each way.
    let mut link = LinkConfig {
        mtu,
        ..Default::default()
    };
    for d in [&mut link.a_to_b, &mut link.b_to_a] {
        d.rate = RateConfig::Constant {
            bps: 100_000_000_000,
        };
        d.queue = QueueLimits {
            packets: None,
            bytes: Some(64 << 20),
        };
        d.delay.delay_ns = 1_000_000;
    }
    let mut normal = Options::new(link.clone());
    normal.realtime_priority = 0;
    normal.offload = offload;
    let (emu_normal_bps, _) = tcp_through(normal, secs)?;
    let mut rt = Options::new(link);
    rt.offload = offload;
    let (emu_bps, _) = tcp_through(rt, secs)?;
    Ok(ThroughputRow {
        mtu,
        offload,
        naive_bps,
        naive_realtime_bps: naive_rt_bps,
        emulator_normal_bps: emu_normal_bps,
        emulator_bps: emu_bps,
        ratio: emu_bps / naive_bps,
        ratio_normal: emu_normal_bps / naive_bps,
        ratio_realtime: emu_bps / naive_rt_bps,
    })
}
