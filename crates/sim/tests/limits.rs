//! Scenarios the machine cannot run are refused before they start, with the estimate and the
//! limit, instead of growing until the allocator aborts.

use longhaul_sim::budget::{self, PACKET_BYTES};
use longhaul_sim::{Scenario, SimError};

const OK: &str = r#"
duration = "10s"
[[links]]
name = "core"
rate = "1gbit"
delay = "90ms"
queue = { kind = "droptail", packets = 1000 }
[topology]
kind = "dumbbell"
bottleneck = "core"
[[flows]]
cc = "reno"
"#;

fn err(sets: &[&str]) -> String {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    match Scenario::parse(OK, "exp.toml", "exp", &sets) {
        Ok(_) => panic!("expected an error for {sets:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn rates_beyond_the_clock_are_refused_with_the_range() {
    // 1e15 aborted in BufPool::put after 4.3 GB; 1e300 ran and printed 0 Mb/s.
    for (set, field) in [
        ("links.0.rate=1e15", "links[0].rate"),
        ("links.0.rate=1e300", "links[0].rate"),
        ("links.0.reverse_rate=1tbit", "links[0].reverse_rate"),
        ("links.0.rate=10", "links[0].rate"),
        (
            "flows.0.access={ rate = \"500gbit\" }",
            "flows[0].access.rate",
        ),
    ] {
        let e = err(&[set]);
        assert!(e.contains(field) && e.contains("400gbit"), "{set}: {e}");
    }
    let ok = Scenario::parse(OK, "exp.toml", "exp", &["links.0.rate=400gbit".into()]);
    assert!(ok.is_ok(), "400 Gb/s is the top of the range");
}

#[test]
fn cross_traffic_rates_are_bounded_too() {
    let text = format!("{OK}[[cross_traffic]]\nkind = \"cbr\"\nlink = \"core\"\nrate = \"1e13\"\n");
    let e = Scenario::parse(&text, "exp.toml", "exp", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("cross_traffic[0].rate"), "{e}");
}

#[test]
fn more_flows_than_the_simulator_runs_are_refused_before_expanding_them() {
    // Expanding 10^8 flows alone would take gigabytes; the count is refused first.
    let e = err(&["flows.0.count=100000000"]);
    assert!(
        e.contains("100000000 flows") && e.contains("1000000"),
        "{e}"
    );
}

#[test]
fn the_estimate_counts_the_path_queues_flows_and_samples() {
    let c = Scenario::parse(OK, "exp.toml", "exp", &[]).unwrap();
    let e = budget::estimate(&c);
    // 1 Gb/s × 180 ms / 12,000 bits = 15,000 packets, plus 1000 packets each way.
    assert!((e.packets - 17_000.0).abs() < 1e-6, "{e:?}");
    assert_eq!(e.flows, 1);
    // No interval in the file: the first of the defaults at least the 180-ms RTT, 200 ms.
    assert_eq!(e.samples, 51, "10 s at 200 ms, and the sample at 0");
    assert!(
        e.bytes > e.packets * PACKET_BYTES as f64 && e.bytes < 30e6,
        "{e:?}"
    );

    let wide = Scenario::parse(OK, "exp.toml", "exp", &["links.0.rate=10gbit".into()]).unwrap();
    let w = budget::estimate(&wide);
    assert!((w.packets - 152_000.0).abs() < 1e-6, "{w:?}");

    let longer = ["flows.0.extra_rtt=\"820ms\"".to_string()];
    let l = budget::estimate(&Scenario::parse(OK, "exp.toml", "exp", &longer).unwrap());
    // 1 Gb/s × 1 s / 12,000 bits, plus the two queues.
    assert!(
        (l.packets - (1e9 / 12_000.0 + 2000.0)).abs() < 1e-6,
        "1 s of RTT: {l:?}"
    );
}

#[test]
fn a_run_beyond_the_limit_names_the_estimate_and_the_limit() {
    let sets = ["flows.0.count=1000000".to_string()];
    let c = Scenario::parse(OK, "exp.toml", "exp", &sets).unwrap();
    let e = budget::estimate(&c);
    assert!(e.bytes > 30e9, "a million flows at 32 KiB: {e:?}");
    let limit = 8u64 << 30;
    match budget::check(&c, limit) {
        Err(SimError::Memory { message }) => {
            assert!(message.contains("8.0 GiB is available"), "{message}");
            assert!(message.contains("1000000 flows"), "{message}");
            assert!(message.contains("GiB of memory"), "{message}");
        }
        other => panic!("expected a memory error, got {other:?}"),
    }
    let small = Scenario::parse(OK, "exp.toml", "exp", &[]).unwrap();
    assert!(budget::check(&small, limit).is_ok());
}

#[test]
fn run_refuses_what_the_machine_cannot_hold() {
    // An hour of one-way delay at 400 Gb/s is 2.4·10^11 packets: no machine holds them.
    let sets = [
        "links.0.rate=400gbit".to_string(),
        "links.0.delay=1h".into(),
    ];
    let c = Scenario::parse(OK, "exp.toml", "exp", &sets).unwrap();
    if budget::available_memory().is_none() {
        eprintln!("no /proc/meminfo: run's memory check is skipped here");
        return;
    }
    match longhaul_sim::run(&c, &mut |_| {}) {
        Err(SimError::Memory { message }) => assert!(message.contains("TiB"), "{message}"),
        Err(e) => panic!("expected a memory error, got {e}"),
        Ok(_) => panic!("a run of 2.4e11 packets in flight was started"),
    }
}

/// A sender that ignores loss (a fixed 10 Gb/s into 100 Mb/s) keeps at most the receiver's
/// window in flight on both transports, as a real host would, instead of growing the
/// simulation's memory with every packet it sends (unbounded, it took 24 GB in 2 s).
#[test]
fn in_flight_stays_within_the_receive_window_on_both_transports() {
    use longhaul_proto::config::DEFAULT_RECV_WINDOW;
    use longhaul_sim::run;
    let text = r#"
duration = "3s"
[[links]]
name = "core"
rate = "100mbit"
delay = "20ms"
queue = { kind = "droptail", packets = 333 }
[topology]
kind = "dumbbell"
bottleneck = "core"
[[flows]]
cc = "paced:rate=1e10"
[output]
interval = "100ms"
"#;
    for transport in ["model", "proto"] {
        let sets = vec![format!("transport=\"{transport}\"")];
        let c = Scenario::parse(text, "w.toml", "w", &sets).unwrap();
        let o = run(&c, &mut |_| {}).unwrap();
        let f = &o.summary.flows[0];
        let most = f
            .series
            .as_ref()
            .unwrap()
            .inflight_pkts
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .fold(0.0, f64::max);
        let window_pkts = DEFAULT_RECV_WINDOW as f64 / 1400.0;
        assert!(
            most > 0.5 * window_pkts,
            "{transport}: the window filled ({most})"
        );
        assert!(most <= window_pkts, "{transport}: {most} packets in flight");
    }
}
