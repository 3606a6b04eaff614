//! A scenario link's packet duplication, mahimahi rate traces and framing overhead, in the
//! simulator: duplicates reach the far end and leave the transfer intact; a traced link sends
//! only at its delivery opportunities and carries the trace's mean rate; a link's `overhead`
//! costs each packet its bytes of capacity.

use longhaul_sim::{run_traced, Scenario};

/// A 5 MiB transfer over a link that duplicates 5 % of the packets each way. Every duplicate
/// reaches the receiver (data) or the sender (ACKs) beside its original; the transport takes
/// each byte once, so exactly the transfer's bytes are delivered. The duplicates are binomial:
/// within 4 standard deviations of 5 % of the packets sent.
#[test]
fn a_duplicating_link_delivers_each_copy_and_the_transfer_completes() {
    for transport in ["model", "proto"] {
        let c = Scenario::parse(
            &format!(
                r#"
duration = "20s"
transport = "{transport}"
[[links]]
name = "l"
rate = "100mbit"
delay = "10ms"
duplicate = 0.05
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
bytes = "5M"
"#
            ),
            "test.toml",
            "test",
            &[],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let o = run_traced(&c, &mut |_| {}).unwrap();
        let t = o.trace.as_ref().expect("traced");
        let delivered: u64 = t.deliveries[0].iter().map(|&(_, b)| b).sum();
        assert_eq!(delivered, 5 * 1024 * 1024, "{transport}");
        for p in &o.ports {
            let n = p.packets as f64;
            let sd = (n * 0.05 * 0.95).sqrt();
            assert!(
                (p.duplicates as f64 - 0.05 * n).abs() < 4.0 * sd,
                "{transport} {}: {} duplicates of {} packets",
                p.direction,
                p.duplicates,
                p.packets
            );
        }
        // Every data packet sent arrives, and so does every copy (nothing is lost or left on
        // the wire: the transfer ends long before the run).
        let fwd = &o.ports[0];
        println!(
            "{transport}: {} packets, {} duplicates; ACKs {} and {}",
            fwd.packets, fwd.duplicates, o.ports[1].packets, o.ports[1].duplicates
        );
        assert_eq!(fwd.queue_at_end_packets, 0);
        assert_eq!(
            t.arrivals[0].len() as u64,
            fwd.packets + fwd.duplicates,
            "{transport}"
        );
    }
}

/// A trace with an opportunity every ms for the first half of each 100-ms period (ms 1 to 50,
/// and 100, which is the next period's 0): 51 × 1504 bytes per 100 ms, 6.137 Mb/s. A Reno flow
/// keeps the link busy, so every data packet leaves at an opportunity, a whole millisecond in
/// the period's first half, and reaches the receiver 5 ms later; the link carries close to the
/// trace's mean rate and never more (plus the one packet at the end), and the summary gives
/// that mean as the link's capacity.
#[test]
fn a_traced_link_sends_only_at_its_opportunities() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut trace: Vec<String> = (1..=50).map(|ms| ms.to_string()).collect();
    trace.push("100".into());
    std::fs::write(dir.join("half.trace"), trace.join("\n")).unwrap();
    let file = dir.join("traced.toml");
    std::fs::write(
        &file,
        r#"
duration = "10s"
transport = "model"
[[links]]
name = "l"
trace = "half.trace"
delay = "5ms"
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
"#,
    )
    .unwrap();
    let c = Scenario::load(&file, &[]).unwrap_or_else(|e| panic!("{e}"));
    let o = run_traced(&c, &mut |_| {}).unwrap();
    let mean_bps = 51.0 * 1504.0 * 8.0 / 0.1;
    assert_eq!(o.summary.links[0].capacity_bps, mean_bps);
    let t = o.trace.as_ref().expect("traced");
    let ms = 1_000_000u64;
    let arrivals = &t.arrivals[0];
    assert!(arrivals.len() > 1000, "{} arrivals", arrivals.len());
    for &(at, _) in arrivals {
        let left = at - 5 * ms;
        assert_eq!(left % ms, 0, "left at {left} ns, not at an opportunity");
        assert!(left % (100 * ms) <= 50 * ms, "left at {left} ns, in a gap");
    }
    // Bytes on the wire: every packet is 1500 bytes (the model transport's 40-byte headers
    // and 1460 of payload).
    let p = &o.ports[0];
    let carried_bps = p.packets as f64 * 1500.0 * 8.0 / 10.0;
    println!("{} packets, {carried_bps} b/s of {mean_bps}", p.packets);
    assert!(
        carried_bps <= mean_bps + 1500.0 * 8.0 / 10.0,
        "{carried_bps} b/s through a {mean_bps} b/s trace"
    );
    assert!(
        carried_bps > 0.9 * mean_bps,
        "{carried_bps} b/s through a {mean_bps} b/s trace"
    );
}

/// A paced sender at 150 Mb/s into a 100 Mb/s link with `overhead = "38B"` (Ethernet's framing)
/// and a queue that never fills: the link is busy from the first packet to the end. Each of the
/// model transport's 1500-byte packets (40 bytes of headers, 1460 of payload) takes
/// (1500 + 38) · 8 / 100 Mb/s = 123,040 ns on the wire, so consecutive packets reach the
/// receiver exactly that far apart (120,000 ns without the overhead), and the payload the flow
/// gets is 100 Mb/s · 1460 / 1538 = 94.928 Mb/s: the capacity times payload over wire size.
/// Without `overhead` the same link carries 100 · 1460 / 1500 = 97.333 Mb/s of payload.
#[test]
fn a_links_overhead_costs_each_packet_its_bytes_of_capacity() {
    let run = |overhead: &str| {
        let c = Scenario::parse(
            &format!(
                r#"
duration = "2s"
transport = "model"
[[links]]
name = "l"
rate = "100mbit"
delay = "5ms"
{overhead}
queue = {{ kind = "droptail", packets = 100000 }}
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "paced:rate=150e6"
"#
            ),
            "test.toml",
            "test",
            &[],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        run_traced(&c, &mut |_| {}).unwrap()
    };
    for (overhead, wire_bytes) in [("overhead = \"38B\"", 1538u64), ("", 1500)] {
        let o = run(overhead);
        let t = o.trace.as_ref().expect("traced");
        let arrivals = &t.arrivals[0];
        assert!(arrivals.len() > 10_000, "{} arrivals", arrivals.len());
        assert!(arrivals.iter().all(|&(_, payload)| payload == 1460));
        let tx_ns = wire_bytes * 8 * 1_000_000_000 / 100_000_000;
        // Until its first RTT sample the sender has only its initial window; from then on
        // (well within 100 ms) it sends faster than the link and the queue never empties.
        let arrivals: Vec<(u64, u32)> = arrivals
            .iter()
            .copied()
            .filter(|&(at, _)| at >= 100_000_000)
            .collect();
        for w in arrivals.windows(2) {
            assert_eq!(w[1].0 - w[0].0, tx_ns, "{overhead}: gap at {} ns", w[0].0);
        }
        let (first, last) = (arrivals[0].0, arrivals[arrivals.len() - 1].0);
        let payload_bps =
            (arrivals.len() - 1) as f64 * 1460.0 * 8.0 / ((last - first) as f64 / 1e9);
        let expected = 100e6 * 1460.0 / wire_bytes as f64;
        println!("{overhead}: {payload_bps} b/s of payload, expected {expected}");
        assert!((payload_bps / expected - 1.0).abs() < 1e-9, "{payload_bps}");
        // The flow's summary throughput counts from its start, before the link got busy.
        let flow = o.summary.flows[0].throughput_bps;
        assert!(
            flow <= expected && flow > 0.95 * expected,
            "{overhead}: flow throughput {flow} for {expected}"
        );
    }
}
