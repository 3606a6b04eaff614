//! A run split across two threads (`engine::split`) gives the single-threaded run's outcome
//! bit for bit: summary, time series, drop log, event and packet counts.

use longhaul_sim::{run_on, run_split_whenever_possible, Checked, Outcome, Scenario};

fn check(toml: &str, sets: &[&str]) -> Checked {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    Scenario::parse(toml, "test.toml", "test", &sets).unwrap_or_else(|e| panic!("{e}"))
}

/// One thread, or two whenever the network can be split (these networks are too small for
/// the split to pay, so `run` would keep them on one).
fn sim(toml: &str, sets: &[&str], threads: usize) -> Outcome {
    let c = check(toml, sets);
    match threads {
        1 => run_on(&c, 1, &mut |_| {}).unwrap(),
        _ => run_split_whenever_possible(&c, &mut |_| {}).unwrap(),
    }
}

/// Runs `toml` on one and on two threads; asserts the second was split and both agree.
fn same_on_two_threads(toml: &str, sets: &[&str]) -> Outcome {
    let one = sim(toml, sets, 1);
    let two = sim(toml, sets, 2);
    assert_eq!(one.threads, 1);
    assert_eq!(two.threads, 2, "{sets:?}: the run was not split");
    assert_eq!(one.events, two.events, "{sets:?}: event counts");
    assert_eq!(one.packet_hops, two.packet_hops, "{sets:?}: packet counts");
    assert_eq!(one.drops, two.drops, "{sets:?}: drop logs");
    assert_eq!(
        serde_json::to_string(&one).unwrap(),
        serde_json::to_string(&two).unwrap(),
        "{sets:?}: outcomes"
    );
    one
}

/// Three flows with different RTTs behind rated host links, unresponsive cross traffic on the
/// bottleneck, a small ACK queue with random loss (drops on both parts, merged into one log),
/// samples every 100 ms.
const MIXED: &str = r#"
duration = "4s"
transport = "model"
[[links]]
name = "l"
rate = "100mbit"
reverse_rate = "3mbit"
delay = "20ms"
loss = 0.0005
reverse_loss = 0.002
queue = { kind = "droptail", packets = 60 }
reverse_queue = { kind = "droptail", packets = 10 }
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
count = 2
access = { rate = "200mbit", packets = 50 }
[[flows]]
cc = "fast"
extra_rtt = "30ms"
[[cross_traffic]]
kind = "poisson"
link = "l"
rate = "10mbit"
[output]
interval = "100ms"
"#;

#[test]
fn a_split_run_is_the_single_threaded_run() {
    let o = same_on_two_threads(MIXED, &[]);
    // The run must exercise what the split has to reproduce: drops on the data path and on
    // the ACK path (two threads' logs merged), and every flow moving data.
    let reverse = o.drops.iter().filter(|d| d.direction == "reverse").count();
    let forward = o.drops.len() - reverse;
    assert!(
        forward > 20 && reverse > 20,
        "drops: {forward} forward, {reverse} reverse"
    );
    assert!(o.summary.flows.iter().all(|f| f.throughput_bps > 1e6));
    // Linux 2.4's delayed ACKs put timers on the receivers (the far part).
    same_on_two_threads(MIXED, &["flows.0.stack=\"linux-2.4\""]);
    // The proto transport: its packets' header bytes cross between the threads' buffer pools.
    same_on_two_threads(MIXED, &["transport=\"proto\""]);
    // RED with ECN at the bottleneck; a drop log shorter than the drops.
    same_on_two_threads(
        MIXED,
        &[
            "links.0.queue={ kind = \"red\", packets = 60, ecn = true }",
            "flows.0.ecn=true",
            "output.drop_log_limit=25",
        ],
    );
}

#[test]
fn seed000_splits_and_agrees() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/seed000-fast-1flow.toml"
    );
    let text = std::fs::read_to_string(path).unwrap();
    for transport in ["model", "proto"] {
        let o = same_on_two_threads(
            &text,
            &["duration=\"10s\"", &format!("transport=\"{transport}\"")],
        );
        assert!(o.summary.flows[0].throughput_bps > 5e8, "{transport}");
    }
}

#[test]
fn only_long_paths_split_by_default() {
    // MIXED's 20 ms at 100 Mb/s hold 166 packets: too few for two threads to pay.
    assert_eq!(
        run_on(&check(MIXED, &[]), 2, &mut |_| {}).unwrap().threads,
        1
    );
    // 90 ms at 1 Gb/s hold 7,500.
    let long = [
        "links.0.rate=\"1gbit\"",
        "links.0.delay=\"90ms\"",
        "duration=\"1s\"",
    ];
    assert_eq!(
        run_on(&check(MIXED, &long), 2, &mut |_| {})
            .unwrap()
            .threads,
        2
    );
    assert_eq!(
        run_on(&check(MIXED, &long), 1, &mut |_| {})
            .unwrap()
            .threads,
        1
    );
}

#[test]
fn runs_that_cannot_be_split_stay_on_one_thread() {
    // Responsive cross traffic creates flows during the run; a zero-delay bottleneck leaves
    // no lookahead.
    for sets in [
        &[
            "cross_traffic.0.kind=\"web\"",
            "cross_traffic.0.responsive=true",
        ][..],
        &["links.0.delay=\"0ms\"", "flows.1.extra_rtt=\"0ms\""][..],
    ] {
        let o = sim(MIXED, sets, 2);
        assert_eq!(o.threads, 1, "{sets:?}");
    }
}
