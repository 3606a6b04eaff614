//! Queueing-delay percentiles are measured finely enough to tell a path's queue apart: one flow
//! alone on a 180 ms path, whose queueing delay (RTT − min RTT) is the bottleneck's sojourn
//! time, must report the same median and p95 as the bottleneck's queue within the flow
//! histogram's stated resolution (RTT / 2^11, 0.1 ms at 200 ms), and every summary obeys p50 ≤
//! p95 ≤ p99 ≤ max and mean ≤ max. (The tails are not compared: the flow samples once per ACK,
//! the queue once per packet, and the two weightings part at p99 by a few tenths of a
//! millisecond.)

use longhaul_sim::{run, Scenario};

/// FAST alone over 1 Gb/s × 180 ms: a standing queue of a few milliseconds that moves by less
/// than a millisecond, the case where coarse buckets report p50 = p95 = p99.
const FAST_180MS: &str = r#"
duration = "30s"
[[links]]
name = "path"
rate = "1gbit"
delay = "90ms"
queue = { kind = "droptail", packets = 4000 }
[topology]
kind = "dumbbell"
bottleneck = "path"
[[flows]]
cc = "fast:alpha=500"
"#;

#[test]
fn a_flows_queueing_delay_matches_its_bottleneck_within_the_resolution() {
    let c = Scenario::parse(FAST_180MS, "fast.toml", "fast", &[]).unwrap();
    let o = run(&c, &mut |_| {}).unwrap();
    let s = &o.summary;
    let flow = &s.flows[0].queueing_delay_ms;
    let link = s
        .links
        .iter()
        .find(|l| l.name == "path")
        .expect("the bottleneck's summary");
    let queue = &link.queue_delay_ms;
    let rtt_ms = s.flows[0].min_rtt_ms + flow.max.unwrap();
    // The flow histogram's bound (RTT_p / 2^11), the bottleneck's (its sojourn / 2^11), and one
    // packet's transmission at 1 Gb/s (12 µs): the flow's RTT includes its own packet's
    // serialization at the bottleneck, which the sojourn time does not.
    let tolerance = rtt_ms / 2048.0 + 0.012 + queue.p99 / 2048.0;
    for (what, f, q) in [
        ("p50", flow.p50.unwrap(), queue.p50.unwrap()),
        ("p95", flow.p95, queue.p95),
    ] {
        assert!(
            (f - q).abs() <= tolerance,
            "{what}: flow {f:.4} ms, bottleneck {q:.4} ms, tolerance {tolerance:.4} ms"
        );
    }
    assert!(queue.p99 > 0.5, "a standing queue exists: {queue:?}");
    for f in &s.flows {
        let d = &f.queueing_delay_ms;
        let (p50, p99, max) = (d.p50.unwrap(), d.p99.unwrap(), d.max.unwrap());
        assert!(
            0.0 <= p50 && p50 <= d.p95 && d.p95 <= p99 && p99 <= max,
            "{d:?}"
        );
        assert!(d.mean <= max, "{d:?}");
    }
}
