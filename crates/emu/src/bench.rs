//! The forwarding benchmark: kernel TCP through the naive forwarder and through the emulator
//! (delay and queue enabled) in the same run, at 1500 and 9000 bytes MTU, plus release lateness at
//! a 1 Gb/s bottleneck. Results are ratios against the baseline measured moments before on the
//! same machine, never absolute pass/fail thresholds.

use crate::config::{LinkConfig, RateConfig};
use crate::emulator::{Emulator, EmulatorError, Mode, Options};
use crate::model::queue::QueueLimits;
use crate::observe::LatenessSummary;
use crate::probe::tcp_transfer;
use serde::Serialize;
use std::time::Duration;

/// One MTU's throughput comparison.
#[derive(Debug, Clone, Serialize)]
pub struct ThroughputRow {
    pub mtu: u32,
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
    pub seconds_per_run: f64,
    pub throughput: Vec<ThroughputRow>,
    /// Lateness of a→b releases during a TCP transfer through 1 Gb/s, 5 ms, 1000-packet queue.
    pub lateness_1g: LatenessSummary,
    pub throughput_1g_bps: f64,
}

impl BenchReport {
    /// A table for the terminal.
    pub fn table(&self) -> String {
        let mut s = String::from(
            "throughput of one kernel TCP flow, Gb/s (RT = SCHED_FIFO forwarders, the emulator's \
             default)\n",
        );
        s += &format!(
            "{:>6} {:>8} {:>9} {:>8} {:>8} {:>10} {:>13} {:>9}\n",
            "MTU", "naive", "naive-RT", "emu", "emu-RT", "emu-RT/", "emu/naive", "emu-RT/"
        );
        s += &format!(
            "{:>6} {:>8} {:>9} {:>8} {:>8} {:>10} {:>13} {:>9}\n",
            "", "", "", "", "", "naive", "(both normal)", "naive-RT"
        );
        for r in &self.throughput {
            s += &format!(
                "{:>6} {:>8.3} {:>9.3} {:>8.3} {:>8.3} {:>10.2} {:>13.2} {:>9.2}\n",
                r.mtu,
                r.naive_bps / 1e9,
                r.naive_realtime_bps / 1e9,
                r.emulator_normal_bps / 1e9,
                r.emulator_bps / 1e9,
                r.ratio,
                r.ratio_normal,
                r.ratio_realtime
            );
        }
        s += &format!(
            "lateness at 1 Gb/s (TCP {:.1} Mb/s, {} packets): p50 {:.1} us, p99 {:.1} us, \
             p99.9 {:.1} us, max {:.1} us",
            self.throughput_1g_bps / 1e6,
            self.lateness_1g.count,
            self.lateness_1g.p50_ns as f64 / 1e3,
            self.lateness_1g.p99_ns as f64 / 1e3,
            self.lateness_1g.p999_ns as f64 / 1e3,
            self.lateness_1g.max_ns as f64 / 1e3
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

fn tcp_through(opts: Options, secs: Duration) -> Result<(f64, LatenessSummary), EmulatorError> {
    let emu = Emulator::start(Mode::Pair, opts)?;
    // Let the forwarding threads and the namespaces' routes settle.
    std::thread::sleep(Duration::from_millis(100));
    let r = tcp_transfer(&emu, secs, 0).map_err(io("TCP transfer"))?;
    let summary = emu.stop()?;
    let late = summary
        .directions
        .first()
        .map(|d| d.lateness)
        .unwrap_or_default();
    Ok((r.goodput_bps(), late))
}

/// Runs the whole benchmark (needs root).
pub fn run(secs: Duration) -> Result<BenchReport, EmulatorError> {
    let mut rows = Vec::new();
    for mtu in [1500u32, 9000] {
        let link = LinkConfig {
            mtu,
            ..Default::default()
        };
        let mut naive = Options::new(link.clone());
        naive.naive = true;
        naive.realtime_priority = 0;
        let (naive_bps, _) = tcp_through(naive, secs)?;
        let mut naive_rt = Options::new(link);
        naive_rt.naive = true;
        let (naive_rt_bps, _) = tcp_through(naive_rt, secs)?;

        // The emulator with real work per packet: a bottleneck well above what the host can
        // carry (so the serialiser and queue run on every packet), a large byte queue and 1 ms
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
        let (emu_normal_bps, _) = tcp_through(normal, secs)?;
        let (emu_bps, _) = tcp_through(Options::new(link), secs)?;
        rows.push(ThroughputRow {
            mtu,
            naive_bps,
            naive_realtime_bps: naive_rt_bps,
            emulator_normal_bps: emu_normal_bps,
            emulator_bps: emu_bps,
            ratio: emu_bps / naive_bps,
            ratio_normal: emu_normal_bps / naive_bps,
            ratio_realtime: emu_bps / naive_rt_bps,
        });
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
    let (bps, late) = tcp_through(Options::new(link), secs)?;
    Ok(BenchReport {
        seconds_per_run: secs.as_secs_f64(),
        throughput: rows,
        lateness_1g: late,
        throughput_1g_bps: bps,
    })
}
