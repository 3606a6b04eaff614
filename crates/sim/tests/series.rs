//! The simulator's time series obey their definitions (docs/measurements.md):
//! - a flow that has not started, or has stopped, has no value (JSON `null`), so the
//!   per-interval Jain index counts only the flows that run: three FAST flows joining at 0, 4
//!   and 8 s read "no index" while one runs alone, not 1/3;
//! - a throughput bin is what the path carried and never exceeds the bottleneck's capacity by
//!   more than one packet, though goodput bins do after a loss recovery.

use longhaul_metrics::report::figures::jain_series;
use longhaul_sim::{run, Scenario};

const STAGGERED: &str = r#"
duration = "12s"
[[links]]
name = "l"
rate = "100mbit"
delay = "10ms"
queue = { kind = "droptail", packets = 500 }
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "fast"
stop = "10s"
[[flows]]
cc = "fast"
start = "4s"
[[flows]]
cc = "fast"
start = "8s"
[output]
interval = "100ms"
"#;

#[test]
fn inactive_flows_are_gaps_and_jain_counts_active_flows_only() {
    let c = Scenario::parse(STAGGERED, "s.toml", "s", &[]).unwrap();
    let o = run(&c, &mut |_| {}).unwrap();
    let s = &o.summary;
    let series = |i: usize| s.flows[i].series.as_ref().unwrap();
    for (i, (from, to)) in [(0.0, 10.0), (4.0, 12.0), (8.0, 12.0)]
        .into_iter()
        .enumerate()
    {
        let se = series(i);
        // After its application stops, a flow sends what its buffer holds: its intervals hold
        // values while it delivers, then stay gaps; it had drained by the run's end.
        let drained = se
            .goodput_bps
            .iter()
            .zip(&se.t)
            .position(|(g, &t)| t >= to - 1e-9 && !g.is_finite())
            .unwrap_or(se.t.len());
        let drained_at = se.t.get(drained).copied().unwrap_or(12.0);
        if to < 12.0 {
            assert!(drained < se.t.len(), "flow {i} still sending at the end");
            assert!(drained_at < to + 1.0, "flow {i} drained at {drained_at} s");
        }
        for (k, &t) in se.t.iter().enumerate() {
            // The interval [t, t + 0.1) overlaps the flow's life or it is a gap.
            let active = t + 0.1 > from + 1e-9 && t < drained_at - 1e-9;
            for (name, v) in [
                ("throughput", se.throughput_bps[k]),
                ("cwnd", se.cwnd_pkts[k]),
                ("inflight", se.inflight_pkts[k]),
            ] {
                assert_eq!(
                    v.is_finite(),
                    active,
                    "flow {i} {name} at {t:.1} s: {v} (active {from}..{drained_at} s)"
                );
            }
        }
    }
    let jain = jain_series(s).unwrap();
    for &(t, j) in &jain {
        if t < 3.95 {
            assert!(j.is_nan(), "one flow alone has no index at {t}: {j}");
        } else if t > 6.0 && t < 7.9 {
            assert!(j > 0.5, "two flows at {t}: {j}");
        }
    }
    // The flow's CoV is over the seconds it ran throughout, not the zeros before it started.
    assert!(s.flows[2].cov.is_some_and(|c| c.is_finite()));
    let json = serde_json::to_value(s).unwrap();
    assert!(json["flows"][1]["series"]["throughput_bps"][0].is_null());
}

/// CUBIC through 200 Mb/s with random loss: every recovery releases the bytes held behind its
/// hole at once.
const LOSSY: &str = r#"
duration = "20s"
[[links]]
name = "l"
rate = "200mbit"
delay = "10ms"
loss = 0.0005
queue = { kind = "droptail", packets = 200 }
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "cubic"
[output]
interval = "100ms"
"#;

#[test]
fn a_throughput_bin_never_exceeds_the_capacity_but_goodput_bins_may() {
    let c = Scenario::parse(LOSSY, "s.toml", "s", &[]).unwrap();
    let o = run(&c, &mut |_| {}).unwrap();
    let f = &o.summary.flows[0];
    let se = f.series.as_ref().unwrap();
    // Payload capacity (1448 of every 1500 bytes on the wire) plus one packet per 100-ms bin:
    // a packet straddling a bin boundary lands whole in one of them.
    let mss = 1448.0;
    let ceiling = 200e6 * mss / 1500.0 + mss * 8.0 / 0.1;
    let top = se.throughput_bps.iter().copied().fold(0.0, f64::max);
    assert!(
        top <= ceiling,
        "throughput bin {top:.0} b/s above {ceiling:.0}"
    );
    assert!(
        top > 0.9 * 200e6 * mss / 1500.0,
        "the link was used: {top:.0}"
    );
    let aggregate = o.summary.aggregate.series.as_ref().unwrap();
    let top_aggregate = aggregate.throughput_bps.iter().copied().fold(0.0, f64::max);
    assert!(
        top_aggregate <= ceiling,
        "aggregate bin {top_aggregate:.0} b/s"
    );
    let top_goodput = se.goodput_bps.iter().copied().fold(0.0, f64::max);
    assert!(
        top_goodput > ceiling,
        "a recovery released a burst of in-order data: {top_goodput:.0} b/s"
    );
    // Both series account for every byte: goodput sums to the delivered payload, throughput
    // to at least that (retransmissions arrive too).
    let sum = |v: &[f64]| v.iter().sum::<f64>() * 0.1 / 8.0;
    let delivered = f.bytes_delivered.unwrap() as f64;
    assert!(
        (sum(&se.goodput_bps) - delivered).abs() <= mss,
        "{}",
        sum(&se.goodput_bps)
    );
    assert!(sum(&se.throughput_bps) >= delivered - mss);
}

#[test]
fn without_an_interval_a_bin_spans_the_longest_round_trip() {
    // 2 × 90 ms of path plus 40 ms of extra RTT: 220 ms, so 250-ms bins.
    let text = r#"
duration = "5s"
[[links]]
name = "l"
rate = "50mbit"
delay = "90ms"
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
[[flows]]
cc = "reno"
extra_rtt = "40ms"
"#;
    let c = Scenario::parse(text, "s.toml", "s", &[]).unwrap();
    assert_eq!(c.scenario.output.interval.0, 250_000_000);
    let o = run(&c, &mut |_| {}).unwrap();
    let t = &o.summary.flows[0].series.as_ref().unwrap().t;
    assert_eq!(&t[..3], &[0.0, 0.25, 0.5]);
    // A short path keeps 100 ms; a file's own interval always wins.
    let short = text
        .replace("\"90ms\"", "\"10ms\"")
        .replace("\"40ms\"", "\"0ms\"");
    let c = Scenario::parse(&short, "s.toml", "s", &[]).unwrap();
    assert_eq!(c.scenario.output.interval.0, 100_000_000);
    let set = ["output.interval=\"50ms\"".to_string()];
    let c = Scenario::parse(text, "s.toml", "s", &set).unwrap();
    assert_eq!(c.scenario.output.interval.0, 50_000_000);
}
