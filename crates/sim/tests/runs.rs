//! Whole runs: determinism, and single flows that must reach the link's rate.

use longhaul_sim::{run, Outcome, Scenario};

fn sim_with(toml: &str, sets: &[&str]) -> Outcome {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let c = Scenario::parse(toml, "test.toml", "test", &sets).unwrap_or_else(|e| panic!("{e}"));
    run(&c, &mut |_| {}).unwrap()
}

const NOISY: &str = r#"
duration = "5s"
[[links]]
name = "l"
rate = "50mbit"
delay = "10ms"
loss = 0.001
queue = { kind = "red", packets = 200 }
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
count = 2
[[flows]]
cc = "cubic"
extra_rtt = "15ms"
[[cross_traffic]]
kind = "poisson"
link = "l"
rate = "5mbit"
[[cross_traffic]]
kind = "web"
link = "l"
rate = "5mbit"
responsive = true
"#;

fn json(o: &Outcome) -> String {
    serde_json::to_string(o).unwrap()
}

#[test]
fn same_seed_gives_identical_bytes_and_another_seed_differs() {
    let a = sim_with(NOISY, &[]);
    let b = sim_with(NOISY, &[]);
    assert!(
        a.drops.len() > 10,
        "the run must exercise random loss and RED"
    );
    assert_eq!(json(&a), json(&b));
    let c = sim_with(NOISY, &["seed=2"]);
    assert_ne!(a.summary.flows, c.summary.flows);
    // Both transports are deterministic.
    let m1 = sim_with(NOISY, &["transport=model"]);
    let m2 = sim_with(NOISY, &["transport=model"]);
    assert_eq!(json(&m1), json(&m2));
}

fn single_flow(cc: &str, transport: &str, secs: u32) -> Outcome {
    // 100 Mb/s, 40 ms: BDP = 333 packets of 1500 bytes; one BDP of drop-tail buffer.
    sim_with(
        &format!(
            r#"
duration = "{secs}s"
transport = "{transport}"
[[links]]
name = "l"
rate = "100mbit"
delay = "20ms"
distance_km = 4000
queue = {{ kind = "droptail", packets = 333 }}
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "{cc}"
"#
        ),
        &[],
    )
}

#[test]
fn one_reno_flow_fills_the_link() {
    // With a BDP of buffer Reno's halvings never empty the queue: the link stays busy, so the
    // payload rate is the capacity net of headers, minus the slow-start overshoot's recovery.
    for (transport, payload) in [("model", 1460.0), ("proto", 1443.0)] {
        let o = single_flow("reno", transport, 60);
        let f = &o.summary.flows[0];
        let ceiling = 100e6 * payload / 1500.0;
        assert!(
            f.throughput_bps > 0.96 * ceiling && f.throughput_bps <= ceiling,
            "{transport}: {} of {ceiling}",
            f.throughput_bps
        );
        // b·m/s = throughput × 4000 km.
        assert!((f.bmps - f.throughput_bps * 4e6).abs() < 1.0);
        // Reno fills the buffer: the mean queueing delay is a good part of the 40 ms buffer.
        assert!(
            f.queueing_delay_ms.mean > 10.0,
            "{transport}: {:?}",
            f.queueing_delay_ms
        );
        assert!(f.retransmits > 0);
    }
}

#[test]
fn one_fast_flow_fills_the_link_with_alpha_packets_queued() {
    // FAST's equilibrium keeps alpha = 200 packets queued: 200 × 120 µs = 24 ms of queueing
    // delay at 100 Mb/s, below the 333-packet buffer, so there is no loss after slow start.
    let o = single_flow("fast:alpha=200", "proto", 60);
    let f = &o.summary.flows[0];
    let ceiling = 100e6 * 1443.0 / 1500.0;
    assert!(f.throughput_bps > 0.95 * ceiling, "{}", f.throughput_bps);
    let q = &o.summary.links[0].series.as_ref().unwrap().queue_pkts;
    let late = &q[q.len() * 3 / 4..];
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    assert!((mean - 200.0).abs() < 40.0, "queue at equilibrium: {mean}");
}

#[test]
fn a_secure_transport_run_completes_and_pays_the_seal() {
    // The same link as above with every datagram sealed: the Noise handshake completes in the
    // simulator, the link fills, and each full packet carries 27 bytes less payload (1416).
    let o = single_flow("reno", "proto_secure", 20);
    let f = &o.summary.flows[0];
    let ceiling = 100e6 * 1416.0 / 1500.0;
    assert!(
        f.throughput_bps > 0.94 * ceiling && f.throughput_bps <= ceiling,
        "{} of {ceiling}",
        f.throughput_bps
    );
    assert!(f.retransmits > 0);
    assert_eq!(
        o.summary.meta.get("transport").map(String::as_str),
        Some("proto_secure")
    );
    // A byte budget is delivered whole.
    let o = sim_with(
        r#"
duration = "30s"
transport = "proto_secure"
[[links]]
name = "l"
rate = "50mbit"
delay = "10ms"
loss = 0.01
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "cubic"
bytes = "20M"
"#,
        &[],
    );
    assert_eq!(o.summary.flows[0].bytes_delivered, Some(20 << 20));
}
