//! Cost of the streaming accumulators per sample, against keeping every sample and sorting.
//!
//! `cargo bench -p longhaul-metrics --bench accumulators [-- N]` (N samples, default 10 million).
//! Prints ns per sample and each variant's time as a ratio of the baseline measured in the same
//! run (exact: push every RTT into a Vec, sort, read the percentiles), plus memory held.

use longhaul_metrics::online::{DelayAccumulator, IntervalBinner, LogHistogram, RunningStats};
use longhaul_metrics::percentile::nearest_rank;
use std::hint::black_box;
use std::time::Instant;

/// Deterministic RTTs in ns: 180 ms + a queueing delay from a 64-bit LCG (up to ~40 ms).
fn rtts(n: usize) -> Vec<u64> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            180_000_000 + (x >> 38) * 1_000 % 40_000_000
        })
        .collect()
}

fn time<R>(f: impl FnOnce() -> R) -> (f64, R) {
    let t = Instant::now();
    let r = f();
    (t.elapsed().as_secs_f64(), r)
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let data = rtts(n);

    let (base, exact) = time(|| {
        let mut v = Vec::new();
        for &x in &data {
            v.push(black_box(x));
        }
        v.sort_unstable();
        let p = |q: f64| v[(nearest_rank(q, v.len() as u64) - 1) as usize];
        (p(50.0), p(95.0), p(99.0), v.capacity() * 8)
    });

    let (t_hist, hist) = time(|| {
        let mut h = LogHistogram::new(10).unwrap();
        for &x in &data {
            h.record(black_box(x));
        }
        h
    });
    let (t_delay, delay) = time(|| {
        let mut d = DelayAccumulator::new();
        for &x in &data {
            d.record_ns(black_box(x));
        }
        d
    });
    let (t_welford, _) = time(|| {
        let mut s = RunningStats::new();
        for &x in &data {
            s.push(black_box(x as f64));
        }
        s
    });
    let (t_bin, _) = time(|| {
        let mut b = IntervalBinner::new(0.1).unwrap();
        for (i, &x) in data.iter().enumerate() {
            b.add(black_box(i as f64 * 1e-6), x & 0xfff);
        }
        b
    });

    let per = |t: f64| t * 1e9 / n as f64;
    println!("samples: {n}");
    println!(
        "{:<44} {:>9} {:>9} {:>12}",
        "variant", "ns/sample", "× exact", "memory"
    );
    let row = |name: &str, t: f64, mem: String| {
        println!("{name:<44} {:>9.2} {:>9.3} {mem:>12}", per(t), t / base)
    };
    row(
        "exact: Vec push + sort + percentiles",
        base,
        format!("{} KiB", exact.3 / 1024),
    );
    row(
        "LogHistogram::record (p = 10)",
        t_hist,
        format!("{} KiB", hist.memory_bytes() / 1024),
    );
    row("DelayAccumulator::record_ns", t_delay, "~same".into());
    row("RunningStats::push (Welford)", t_welford, "40 B".into());
    row("IntervalBinner::add (0.1 s)", t_bin, "-".into());
    for (q, e) in [(50.0, exact.0), (95.0, exact.1), (99.0, exact.2)] {
        let h = hist.percentile(q).unwrap();
        println!(
            "p{q}: exact {e} ns, histogram {h} ns, relative error {:.2e} (bound {:.2e})",
            (h as f64 - e as f64).abs() / e as f64,
            hist.relative_error_bound()
        );
    }
    let q = delay.queueing_stats_ms().unwrap();
    println!(
        "queueing delay: mean {:.3} ms, p95 {:.3} ms, p99 {:.3} ms",
        q.mean, q.p95, q.p99
    );
}
