//! The path model's cost and timing, without devices or root:
//! `cargo bench --profile ci -p longhaul-emu --bench model`.
//!
//! The forwarding benchmark (`forwarding.rs`, `longhaul emu bench`) measures the emulator as a
//! whole, and on a shared machine its figures move by ±15 % between identical runs. This one
//! measures the part every packet goes through, `PathModel::on_arrival` (the bottleneck queue
//! with its limits and RED, the serialiser, loss, the delay line, cross traffic), with hand-made
//! arrival times, so the CPU cost per packet and the computed times can be compared between
//! builds exactly:
//!
//! * **packets per second** — a flood of 1500-byte packets at 1.1× a 1 Gb/s rate into a
//!   1000-packet drop-tail queue (the queue full, a tenth dropped), the same with RED in bytes,
//!   and a 10 Gb/s link carrying alternating 1500- and 52-byte packets (data and ACK sizes)
//!   with Poisson cross traffic at a fifth of its rate. Best of `REPEATS` runs of `PACKETS`
//!   decisions each (the best is the run least disturbed by other work).
//! * **release-time error** — the departure times the model computes against the exact ones
//!   (`8·Σbytes/R` after the busy period's start) over one busy period of 1,000,000 packets,
//!   at 1 Gb/s (whole nanoseconds per byte) and 10 Gb/s (0.8 ns per byte): the largest
//!   difference in ns and the last packet's.
//!
//! `LONGHAUL_BENCH_PACKETS` sets the decisions per run (default 2,000,000).

use longhaul_emu::config::{DirectionConfig, RateConfig};
use longhaul_emu::model::cross::{CrossConfig, CrossProcess};
use longhaul_emu::model::delay::DelayConfig;
use longhaul_emu::model::path::{PathModel, Verdict};
use longhaul_emu::model::queue::QueueLimits;
use longhaul_emu::model::red::RedConfig;
use std::hint::black_box;
use std::time::Instant;

const REPEATS: usize = 5;

fn direction(bps: u64) -> DirectionConfig {
    DirectionConfig {
        rate: RateConfig::Constant { bps },
        queue: QueueLimits {
            packets: Some(1000),
            bytes: None,
        },
        delay: DelayConfig::constant(50_000_000),
        ..Default::default()
    }
}

/// Decisions per second over `n` arrivals of `size(k)` bytes every `gap_ns`, best of REPEATS.
fn rate(cfg: &DirectionConfig, n: u64, gap_ns: f64, size: impl Fn(u64) -> u32) -> (f64, u64) {
    let mut best = f64::INFINITY;
    let mut delivered = 0;
    for _ in 0..REPEATS {
        let mut m = PathModel::new(cfg, 1500, 0);
        let t0 = Instant::now();
        for k in 0..n {
            let d = m.on_arrival((k as f64 * gap_ns) as u64, size(k), false);
            black_box(d);
        }
        best = best.min(t0.elapsed().as_secs_f64());
        delivered = m.counters().delivered_packets;
    }
    (n as f64 / best, delivered)
}

/// Largest and final |computed − exact| departure, ns, over one busy period of `n` packets.
fn timing_error(bps: u64, n: u64, size: impl Fn(u64) -> u32) -> (f64, f64) {
    let mut cfg = direction(bps);
    cfg.queue.packets = None;
    let mut m = PathModel::new(&cfg, 1500, 0);
    let (mut bits, mut worst, mut last) = (0u128, 0f64, 0f64);
    for k in 0..n {
        let b = size(k);
        bits += 8 * b as u128;
        let Verdict::Deliver { departure, .. } = m.on_arrival(0, b, false).verdict else {
            panic!("an unlimited queue dropped a packet");
        };
        let exact = bits as f64 * 1e9 / bps as f64;
        last = departure as f64 - exact;
        worst = worst.max(last.abs());
    }
    (worst, last)
}

fn main() {
    let n: u64 = std::env::var("LONGHAUL_BENCH_PACKETS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let mixed = |k: u64| if k & 1 == 0 { 1500 } else { 52 };
    println!("| model run | decisions/s | delivered of {n} |");
    println!("|---|---|---|");
    // 1500 B at 1.1 Gb/s: one every 10,909 ns.
    let flood_gap = 1500.0 * 8.0 / 1.1;
    let (r, d) = rate(&direction(1_000_000_000), n, flood_gap, |_| 1500);
    println!(
        "| 1 Gb/s drop-tail 1000p, flood at 1.1x | {:.2} M | {d} |",
        r / 1e6
    );
    let mut red = direction(1_000_000_000);
    red.red = Some(RedConfig::bytes(150_000, 450_000, 0.1, 0.002, true));
    let (r, d) = rate(&red, n, flood_gap, |_| 1500);
    println!("| 1 Gb/s RED, flood at 1.1x | {:.2} M | {d} |", r / 1e6);
    let mut cross = direction(10_000_000_000);
    cross.cross = vec![CrossConfig::new(CrossProcess::Poisson, 2e9, 1500)];
    // 1552 B per pair at 8.8 Gb/s of our own: a pair every 1,411 ns.
    let (r, d) = rate(&cross, n, 1552.0 * 8.0 / 8.8 / 2.0, mixed);
    println!(
        "| 10 Gb/s, 1500/52 B, Poisson cross 2 Gb/s | {:.2} M | {d} |",
        r / 1e6
    );
    println!();
    println!("| release-time error, one busy period of 1,000,000 packets | largest ns | last ns |");
    println!("|---|---|---|");
    for (what, bps) in [("1 Gb/s", 1_000_000_000), ("10 Gb/s", 10_000_000_000)] {
        let (w, l) = timing_error(bps, 1_000_000, |_| 1500);
        println!("| {what}, 1500 B | {w:.1} | {l:+.1} |");
        let (w, l) = timing_error(bps, 1_000_000, mixed);
        println!("| {what}, 1500/52 B | {w:.1} | {l:+.1} |");
    }
}
