//! A flow that has not started, or has stopped, has no value in the time series (JSON `null`),
//! so the per-interval Jain index counts only the flows that run: three FAST flows joining at
//! 0, 4 and 8 s read "no index" while one runs alone, not 1/3.

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
        for (k, &t) in se.t.iter().enumerate() {
            // The interval [t, t + 0.1) overlaps the flow's life or it is a gap.
            let active = t + 0.1 > from + 1e-9 && t < to - 1e-9;
            for (name, v) in [
                ("throughput", se.throughput_bps[k]),
                ("cwnd", se.cwnd_pkts[k]),
                ("inflight", se.inflight_pkts[k]),
            ] {
                assert_eq!(
                    v.is_finite(),
                    active,
                    "flow {i} {name} at {t:.1} s: {v} (active {from}..{to} s)"
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
