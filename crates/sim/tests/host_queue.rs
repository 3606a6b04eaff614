//! The sender's host queue (its access link's txqueuelen): a sender blocked by a full host
//! queue does not earn window growth (Linux `tcp_is_cwnd_limited`), and the `on_full = "drop"`
//! option drops at the full queue and tells the sender at once (Linux 2.4's `tcp_enter_cwr`).

use longhaul_sim::{run, Outcome, Scenario};

fn sim_with(toml: &str, sets: &[&str]) -> Outcome {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let c = Scenario::parse(toml, "test.toml", "test", &sets).unwrap_or_else(|e| panic!("{e}"));
    run(&c, &mut |_| {}).unwrap()
}

/// A 10 Mb/s NIC with a 100-packet host queue in front of a 100 Mb/s, 20 ms path: the NIC is
/// the bottleneck, and nothing on the path ever drops (its queue holds 1000 packets and never
/// builds, since the NIC paces the packets at a tenth of its rate).
const SLOW_NIC: &str = r#"
duration = "20s"
[[links]]
name = "l"
rate = "100mbit"
delay = "10ms"
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
access = { rate = "10mbit", packets = 100 }
[output]
interval = "100ms"
"#;

#[test]
fn a_sender_blocked_by_its_host_queue_does_not_grow_its_window() {
    // What the path and the host queue can hold: the NIC's bandwidth-delay product (10 Mb/s ×
    // 20.1 ms of propagation and serialisation ÷ 12,000 bits ≈ 17 packets), the one on the
    // NIC's wire and the 100 waiting in the host queue: 118 packets. In slow start Linux lets
    // the window reach twice the most packets that were in flight (`tcp_is_cwnd_limited`), so
    // the window stays within twice 118 and the one packet a delayed ACK may leave unacknowledged,
    // plus the growth of the ACK that crosses the bound (2 packets with proto's delayed ACKs). Before the rule, Reno never saw a loss and grew by
    // every acknowledged packet for 20 s: about 16,600 packets.
    let holds = 10e6 * 0.0201 / 12_000.0 + 1.0 + 100.0;
    for transport in ["proto", "model"] {
        let o = sim_with(SLOW_NIC, &[&format!("transport={transport}")]);
        assert!(o.drops.is_empty(), "{transport}: block mode never drops");
        let f = &o.summary.flows[0];
        let cwnd = &f.series.as_ref().unwrap().cwnd_pkts;
        let max = cwnd.iter().cloned().fold(0.0, f64::max);
        println!(
            "{transport}: max cwnd {max:.0} packets, final {:.0}, path + host queue {holds:.0}, \
             throughput {:.2} Mb/s",
            cwnd.last().unwrap(),
            f.throughput_bps / 1e6
        );
        assert!(
            max <= 2.0 * (holds + 1.0) + 2.0,
            "{transport}: cwnd {max} exceeds 2 × ({holds} + 1) + 2"
        );
        // The window still covers what the host queue lets through: the NIC stays busy.
        assert!(
            max >= holds,
            "{transport}: cwnd {max} never reached the {holds} packets the path can hold"
        );
        assert!(
            f.throughput_bps > 0.95 * 10e6 * 1443.0 / 1500.0,
            "{transport}: {}",
            f.throughput_bps
        );
    }
}

#[test]
fn a_full_host_queue_in_drop_mode_drops_and_the_sender_halves_once_per_window() {
    // Linux 2.4 on the same path: the 101st packet waiting for the NIC is dropped at the host,
    // and Reno takes it as congestion. Every drop is counted at the host with its own reason,
    // the window is halved once per episode (not once per dropped packet), and with a host
    // queue of six bandwidth-delay products the halved window still keeps the NIC busy.
    let holds = 10e6 * 0.0201 / 12_000.0 + 1.0 + 100.0;
    for transport in ["proto", "model"] {
        let o = sim_with(
            SLOW_NIC,
            &[
                &format!("transport={transport}"),
                "flows.0.access.on_full=drop",
            ],
        );
        assert!(!o.drops.is_empty(), "{transport}: the host queue must drop");
        assert!(
            o.drops.iter().all(|d| d.reason == "host_queue_full"
                && d.link == "access:0"
                && d.flow == Some(0)),
            "{transport}: {:?}",
            &o.drops[..3.min(o.drops.len())]
        );
        let f = &o.summary.flows[0];
        assert_eq!(f.drops.len(), 1, "{transport}: {:?}", f.drops);
        assert_eq!(f.drops[0].reason, "host_queue_full");
        assert_eq!(f.drops[0].packets, o.drops.len() as u64);
        let cwnd = &f.series.as_ref().unwrap().cwnd_pkts;
        let max = cwnd.iter().cloned().fold(0.0, f64::max);
        let later_min = cwnd[20..].iter().cloned().fold(f64::MAX, f64::min);
        let halvings = cwnd.windows(2).filter(|w| w[1] < 0.75 * w[0]).count();
        println!(
            "{transport}: {} host drops, {halvings} halvings in 100-ms samples, cwnd {later_min:.0}–{max:.0} \
             (holds {holds:.0}), throughput {:.2} Mb/s",
            o.drops.len(),
            f.throughput_bps / 1e6
        );
        // The window can no longer outgrow what the host queue holds: the drop stops it.
        assert!(max <= holds + 5.0, "{transport}: cwnd {max} > {holds} + 5");
        // One halving per episode: a drop of every packet offered to the full queue, each
        // taken as a new congestion event, would drive the window towards its minimum.
        assert!(
            later_min >= 0.45 * holds,
            "{transport}: cwnd fell to {later_min}, below half of {holds}"
        );
        assert!(
            halvings >= 2,
            "{transport}: a sawtooth, not {halvings} halvings"
        );
        assert!(
            f.throughput_bps > 0.9 * 10e6 * 1443.0 / 1500.0,
            "{transport}: {}",
            f.throughput_bps
        );
    }
}

#[test]
fn drop_mode_needs_a_host_queue() {
    let bad = SLOW_NIC.replace(
        r#"access = { rate = "10mbit", packets = 100 }"#,
        r#"access = { delay = "1ms", on_full = "drop" }"#,
    );
    let e = Scenario::parse(&bad, "test.toml", "test", &[]).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("flows[0].access.on_full") && msg.contains("rate"),
        "{msg}"
    );
    let typo = SLOW_NIC.replace("packets = 100 }", r#"packets = 100, on_full = "discard" }"#);
    let msg = Scenario::parse(&typo, "test.toml", "test", &[])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("block") && msg.contains("drop"), "{msg}");
}

#[test]
fn the_linux_2_4_stack_is_a_model_transport_option() {
    let with_stack = SLOW_NIC.replace(
        "access = { rate = \"10mbit\", packets = 100 }",
        "access = { rate = \"10mbit\", packets = 100 }\nstack = \"linux-2.4\"",
    );
    assert!(with_stack.contains("stack"));
    let msg = Scenario::parse(&with_stack, "test.toml", "test", &[])
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("flows[0].stack") && msg.contains("transport = \"model\""),
        "{msg}"
    );
    let c = Scenario::parse(
        &with_stack,
        "test.toml",
        "test",
        &["transport=model".into()],
    );
    assert!(c.is_ok(), "{:?}", c.err());
}

#[test]
fn host_and_reverse_queues_have_their_own_series() {
    // Behind the 10 Mb/s NIC the backlog waits in the 100-packet host queue, not at the
    // 100 Mb/s link; the summary lists that queue as `access:0` (the drop log's name) with a
    // queue-length series, and the link's ACK direction has a series too.
    let o = sim_with(SLOW_NIC, &[]);
    let s = &o.summary;
    let link = |name: &str| s.links.iter().find(|l| l.name == name).unwrap();
    let series = |name: &str| {
        link(name)
            .series
            .clone()
            .unwrap_or_else(|| panic!("{name}"))
    };
    let (host, fwd, rev) = (series("access:0"), series("l"), series("l (reverse)"));
    // 20 s at 100 ms: 200 samples in each.
    for q in [&host, &fwd, &rev] {
        assert_eq!(q.t.len(), 200);
        assert_eq!(q.queue_pkts.len(), 200);
    }
    let max = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    let late_mean = |v: &[f64]| v[100..].iter().sum::<f64>() / 100.0;
    println!(
        "host queue max {} mean(10-20 s) {:.1}; link queue max {}; ACK queue max {}",
        max(&host.queue_pkts),
        late_mean(&host.queue_pkts),
        max(&fwd.queue_pkts),
        max(&rev.queue_pkts)
    );
    assert!(max(&host.queue_pkts) <= 100.0);
    assert!(late_mean(&host.queue_pkts) > 50.0);
    // The NIC paces packets at a tenth of the link's rate: at most one waits there, and ACKs
    // (one per two 1500-byte packets at 100 Mb/s) never queue.
    assert!(max(&fwd.queue_pkts) <= 1.0);
    assert!(max(&rev.queue_pkts) <= 1.0);
    // The host link carries the flow's payload: about 10 Mb/s × 1443/1500 over the run.
    let h = link("access:0");
    assert_eq!(h.capacity_bps, 10e6);
    assert!(
        h.utilization > 0.95 && h.utilization <= 1.0,
        "{}",
        h.utilization
    );
}

/// A flow held to its 10 Mb/s card on a 100 Mb/s path is judged against the card: its
/// utilization, and the aggregate's, are of the 10 Mb/s that limits it (as seed 000's Table 1
/// judges its flows against their 1 Gb/s cards), and the summary says which link that is.
#[test]
fn utilization_is_against_the_link_that_limits_the_flow() {
    let o = sim_with(SLOW_NIC, &[]);
    let a = &o.summary.aggregate;
    assert_eq!(a.capacity_bps, Some(10e6));
    assert_eq!(a.limited_by.as_deref(), Some("the access link of flow 0"));
    let f = &o.summary.flows[0];
    // Reno on a 118-packet pipe keeps the card busy: ≥ 90 % over 20 s (slow start included).
    assert!(
        f.utilization > 0.9 && f.utilization <= 1.0,
        "{}",
        f.utilization
    );
    assert!(
        (a.utilization - f.utilization).abs() < 1e-9,
        "{} vs {}",
        a.utilization,
        f.utilization
    );
}
