//! Network-model behaviour with hand-computed expectations: queues drop exactly when full, RED
//! starts at its minimum threshold, RTTs are the sum of the configured delays plus
//! serialisation, parking-lot routes, and cross traffic delivers its configured average rate.

use longhaul_sim::{run, Outcome, Scenario};

fn sim(toml: &str) -> Outcome {
    let c = Scenario::parse(toml, "test.toml", "test", &[]).unwrap_or_else(|e| panic!("{e}"));
    run(&c, &mut |_| {}).unwrap()
}

/// Link `a` carries only CBR cross traffic: 150 Mb/s of 1500-byte packets (one every 80 µs)
/// into a 100 Mb/s link (one served every 120 µs). A Reno flow runs on link `b`.
fn overload(queue: &str) -> String {
    format!(
        r#"
duration = "1s"
[[links]]
name = "a"
rate = "100mbit"
delay = "1ms"
queue = {queue}
[[links]]
name = "b"
rate = "100mbit"
delay = "1ms"
[topology]
kind = "parking_lot"
chain = ["a", "b"]
[[flows]]
cc = "reno"
path = ["b"]
[[cross_traffic]]
kind = "cbr"
link = "a"
rate = "150mbit"
"#
    )
}

#[test]
fn droptail_drops_exactly_when_the_queue_is_full() {
    let o = sim(&overload(r#"{ kind = "droptail", packets = 50 }"#));
    // Packet k arrives at 80k µs; floor(2k/3) packets have finished by then, one is in service,
    // so it finds ceil(k/3) − 1 waiting. It is dropped when that reaches 50: k = 151, 12.08 ms.
    let first = &o.drops[0];
    assert_eq!(first.link, "a");
    assert_eq!(first.reason, "queue_full");
    assert_eq!(first.flow, None);
    assert!((first.time_s - 0.012_08).abs() < 1e-12, "{}", first.time_s);
    // (The Reno flow on link `b` may drop its own packets there.)
    let on_a: Vec<_> = o.drops.iter().filter(|d| d.link == "a").collect();
    assert!(on_a
        .iter()
        .all(|d| d.reason == "queue_full" && d.flow.is_none()));
    // 12,500 packets offered in 1 s; every one is sent, dropped or still waiting at the end.
    let a = &o.ports[0];
    assert_eq!((a.link.as_str(), a.direction), ("a", "forward"));
    assert_eq!(
        a.packets + a.drops_queue_full + a.queue_at_end_packets,
        12_500
    );
    let series = o.summary.links[0].series.as_ref().unwrap();
    assert_eq!(
        a.queue_at_end_packets as f64,
        *series.queue_pkts.last().unwrap()
    );
    assert_eq!(o.summary.links[0].drops as usize, on_a.len());
    assert_eq!(
        o.summary.links[0].drops_by_reason["queue_full"],
        a.drops_queue_full
    );
    assert_eq!(a.max_queue_packets, 50);
    // Transmitted: one per 120 µs for 1 s (8,334 started, the last finishing after the end).
    assert!((8_333..=8_335).contains(&a.packets), "{}", a.packets);
    // Payload utilization: the link was busy throughout with 1460-byte payloads.
    let u = o.summary.links[0].utilization;
    assert!((0.9999..=1.0001).contains(&u), "{u}");
    assert_eq!(o.cross_traffic[0].rate_bps, 150e6);
}

#[test]
fn byte_limited_droptail_holds_that_many_bytes() {
    let o = sim(&overload(r#"{ kind = "droptail", bytes = 30000 }"#));
    // 30,000 bytes are 20 waiting packets: the first drop is at ceil(k/3) − 1 = 20, k = 61.
    assert!(
        (o.drops[0].time_s - 61.0 * 80e-6).abs() < 1e-12,
        "{}",
        o.drops[0].time_s
    );
    assert_eq!(o.ports[0].max_queue_packets, 20);
}

#[test]
fn red_starts_dropping_at_min_threshold() {
    // weight = 1: the average is the instantaneous queue, so the threshold crossing is exact.
    let o = sim(&overload(
        r#"{ kind = "red", packets = 100, min_th = 20, max_th = 60, max_p = 0.1, weight = 1.0 }"#,
    ));
    // The queue an arrival finds reaches 20 at k = 61 (4.88 ms): no drop may come earlier.
    let first = &o.drops[0];
    assert_eq!(first.reason, "red_early");
    assert!(first.time_s >= 61.0 * 80e-6 - 1e-12, "{}", first.time_s);
    // Overload 1.5 : 1 must be shed by RED and (if the average passes 2·max_th) the limit.
    let a = &o.ports[0];
    assert!(a.drops_red > 1000, "{}", a.drops_red);
    assert!(a.max_queue_packets <= 100);
}

#[test]
fn red_marks_ecn_capable_packets_instead_of_dropping() {
    let o = sim(r#"
duration = "20s"
[[links]]
name = "l"
rate = "100mbit"
delay = "10ms"
queue = { kind = "red", packets = 500, min_th = 30, max_th = 90, max_p = 0.1, ecn = true }
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
ecn = true
"#);
    let l = &o.ports[0];
    assert!(
        l.ecn_marks > 100,
        "RED must mark ECT packets: {}",
        l.ecn_marks
    );
    // Early signals become marks; only slow start's overshoot (while RED's slow average
    // lags) may overflow the queue or pass the forced region.
    assert!(o.drops.iter().all(|d| d.reason != "red_early"));
    assert!(
        o.drops.iter().all(|d| d.time_s < 5.0),
        "no drops once the flow follows marks"
    );
    // The flow reacts to the marks: after slow start the queue stays in RED's region.
    let q = &o.summary.links[0].series.as_ref().unwrap().queue_pkts;
    let settled = &q[q.len() / 2..];
    assert!(settled.iter().all(|&n| n < 250.0), "{settled:?}");
    // RED's region (30–90 packets) is below the BDP (167 packets), so Reno's halvings leave
    // the link idle part of each cycle: ~85 %, not the ~100 % of a BDP drop-tail buffer.
    let u = o.summary.flows[0].utilization;
    assert!(u > 0.75 && u < 0.95, "{u}");
}

#[test]
fn min_rtt_is_twice_the_delays_plus_serialisation() {
    // The model transport: every packet is 1500 bytes and every ACK 40, so the minimum RTT is
    // exact. (longhaul-proto's smallest sample comes from its handshake; see below.)
    let o = sim(r#"
duration = "5s"
transport = "model"
[[links]]
name = "l"
rate = "100mbit"
delay = "20ms"
queue = { kind = "droptail", packets = 1000 }
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
bytes = 146000
[[flows]]
cc = "reno"
extra_rtt = "30ms"
bytes = 146000
start = "2s"
[[flows]]
cc = "reno"
extra_rtt = "60ms"
access = { delay = "5ms" }
bytes = 146000
start = "3s"
"#);
    // 2 × 20 ms + a 1500-byte packet at 100 Mb/s (120 µs) + a 40-byte ACK (3.2 µs).
    let base = 40.0 + 0.12 + 0.0032;
    let rtts: Vec<f64> = o.summary.flows.iter().map(|f| f.min_rtt_ms).collect();
    assert!((rtts[0] - base).abs() < 1e-9, "{rtts:?}");
    assert!((rtts[1] - (base + 30.0)).abs() < 1e-9, "{rtts:?}");
    // Access delay counts both ways: + 2 × 5 ms.
    assert!((rtts[2] - (base + 60.0 + 10.0)).abs() < 1e-9, "{rtts:?}");
    for f in &o.summary.flows {
        assert_eq!(
            f.bytes_delivered,
            Some(146_000),
            "transfers complete exactly"
        );
    }
}

#[test]
fn parking_lot_routes_long_and_short_flows() {
    parking_lot("model", 0);
    // longhaul-proto sends one handshake packet per flow before its data.
    parking_lot("proto", 1);
}

fn parking_lot(transport: &str, setup_packets: u64) {
    let o = sim(&format!(
        r#"
transport = "{transport}"
duration = "10s"
[[links]]
name = "l1"
rate = "100mbit"
delay = "5ms"
[[links]]
name = "l2"
rate = "50mbit"
delay = "10ms"
[[links]]
name = "l3"
rate = "100mbit"
delay = "15ms"
[topology]
kind = "parking_lot"
chain = ["l1", "l2", "l3"]
[[flows]]
cc = "reno"
[[flows]]
cc = "reno"
path = ["l1"]
[[flows]]
cc = "reno"
path = ["l2"]
[[flows]]
cc = "reno"
path = ["l2", "l3"]
"#
    ));
    let s = &o.summary;
    let link = |name: &str, dir: &str| {
        o.ports
            .iter()
            .find(|l| l.link == name && l.direction == dir)
            .unwrap()
    };
    let drops =
        |l: &longhaul_sim::summary::PortReport| l.drops_queue_full + l.drops_red + l.drops_random;
    let sent = |i: usize| s.flows[i].packets_sent.unwrap() + setup_packets;
    // l1 is the first hop of flows 0 and 1: it saw exactly their packets.
    let l1 = link("l1", "forward");
    assert_eq!(
        l1.packets + drops(l1) + l1.queue_at_end_packets,
        sent(0) + sent(1)
    );
    // l2 is the first hop of flows 2 and 3 and the second of flow 0.
    let l2 = link("l2", "forward");
    let from_flow0 = (l2.packets + drops(l2) + l2.queue_at_end_packets) - sent(2) - sent(3);
    assert!(
        from_flow0 <= sent(0) && from_flow0 + 1000 > sent(0),
        "{from_flow0}"
    );
    // l3 carries only flows 0 and 3 (after l2): never more than they sent.
    let l3 = link("l3", "forward");
    assert!(l3.packets + drops(l3) <= sent(0) + sent(3));
    assert!(l3.packets > 0);
    // Paths and RTTs: flow 0 crosses all three links. Exact for the model transport (1500-byte
    // packets, 40-byte ACKs, first samples before any queue). Proto's smallest sample is its
    // handshake's, of small packets before any queue: propagation (2 × 30 ms, 2 × 25 ms) plus
    // well under a millisecond of serialisation.
    let ser = |rate: f64| 1500.0 * 8.0 / rate * 1e3 + 40.0 * 8.0 / rate * 1e3;
    let rtt0 = 2.0 * 30.0 + 2.0 * ser(100e6) + ser(50e6);
    let rtt3 = 2.0 * 25.0 + ser(50e6) + ser(100e6);
    let (m0, m3) = (s.flows[0].min_rtt_ms, s.flows[3].min_rtt_ms);
    if setup_packets == 0 {
        assert!((m0 - rtt0).abs() < 1e-6, "{m0} vs {rtt0}");
        assert!((m3 - rtt3).abs() < 1e-6, "{m3} vs {rtt3}");
    } else {
        assert!(
            (60.0..rtt0).contains(&m0) && (50.0..rtt3).contains(&m3),
            "{m0} {m3}"
        );
    }
    // l2 (50 Mb/s) is shared by three flows and busy; the long flow gets the smallest share.
    let l2_util = s.links.iter().find(|l| l.name == "l2").unwrap().utilization;
    assert!(l2_util > 0.9, "{l2_util}");
    assert!(s.flows[0].throughput_bps < s.flows[2].throughput_bps);
    // ACKs of flow 0 return over l3, l2, l1 reverse.
    assert!(link("l1", "reverse").packets >= sent(0) / 2);
}

fn cross_rate(kind_fields: &str, secs: u32) -> (f64, f64) {
    let o = sim(&format!(
        r#"
duration = "{secs}s"
[[links]]
name = "l"
rate = "1gbit"
delay = "5ms"
queue = {{ kind = "droptail", packets = 100000 }}
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
bytes = "10k"
[[cross_traffic]]
link = "l"
rate = "50mbit"
{kind_fields}
"#
    ));
    let c = &o.cross_traffic[0];
    (c.rate_bps, o.summary.links[0].utilization)
}

#[test]
fn cross_traffic_of_each_kind_offers_its_average_rate() {
    let (r, _) = cross_rate(r#"kind = "cbr""#, 10);
    assert!((r / 50e6 - 1.0).abs() < 1e-3, "cbr {r}");
    let (r, _) = cross_rate(r#"kind = "poisson""#, 20);
    assert!((r / 50e6 - 1.0).abs() < 0.02, "poisson {r}");
    let (r, _) = cross_rate(
        r#"kind = "onoff"
on = "20ms"
off = "30ms""#,
        40,
    );
    assert!((r / 50e6 - 1.0).abs() < 0.08, "onoff {r}");
    // Pareto shape 2.5 (finite variance) so 60 s of transfers average out.
    let (r, _) = cross_rate(
        r#"kind = "web"
size = "50k"
shape = 2.5"#,
        60,
    );
    assert!((r / 50e6 - 1.0).abs() < 0.1, "web {r}");
    let (r, util) = cross_rate(
        r#"kind = "web"
size = "50k"
shape = 2.5
responsive = true"#,
        60,
    );
    assert!((r / 50e6 - 1.0).abs() < 0.12, "responsive web {r}");
    assert!(util > 0.04 && util < 0.07, "{util}");
}

#[test]
fn a_rated_access_link_limits_the_sender_without_host_drops() {
    // A 10 Mb/s NIC in front of a 100 Mb/s bottleneck: the sender blocks on its full host
    // queue (like a socket on a full qdisc) instead of dropping, and gets the NIC's rate.
    let o = sim(r#"
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
"#);
    assert!(o.drops.is_empty(), "{:?}", &o.drops[..o.drops.len().min(3)]);
    let f = &o.summary.flows[0];
    // proto: 1443 payload bytes per 1500-byte packet, minus the handshake and slow start.
    let ceiling = 10e6 * 1443.0 / 1500.0;
    assert!(
        f.throughput_bps > 0.97 * ceiling && f.throughput_bps <= ceiling,
        "{}",
        f.throughput_bps
    );
    // The bottleneck never queues: the access link paces the packets at 10 Mb/s.
    assert_eq!(o.ports[0].max_queue_packets, 0);
}

#[test]
fn responsive_on_off_traffic_backs_off_against_a_bulk_flow() {
    let o = sim(r#"
duration = "30s"
[[links]]
name = "l"
rate = "100mbit"
delay = "10ms"
queue = { kind = "droptail", packets = 200 }
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
[[cross_traffic]]
kind = "onoff"
link = "l"
rate = "30mbit"
on = "500ms"
off = "500ms"
responsive = true
"#);
    let c = &o.cross_traffic[0];
    assert!(c.responsive && c.transfers >= 20, "{c:?}");
    // Responsive transfers take a real share, and everything delivered crossed the link:
    // bulk + transfers ≈ the link's payload throughput (its utilization × 97.33 Mb/s of payload
    // capacity), short only by retransmitted duplicates. (Every transfer restarts slow start
    // into a 200-packet buffer, so losses and timeouts leave the link ~75 % busy.)
    let total = o.summary.flows[0].throughput_bps + c.rate_bps;
    assert!(c.rate_bps > 5e6 && c.rate_bps < 35e6, "{}", c.rate_bps);
    let through_link = o.summary.links[0].utilization * 100e6 * 1460.0 / 1500.0;
    assert!(
        total <= through_link * 1.001 && total > 0.97 * through_link,
        "{total} vs {through_link}"
    );
}

/// Aggregate utilization of a parking lot is that of its most loaded bottleneck: the payload of
/// the flows crossing a link ÷ that link's capacity net of 40-byte headers (1460/1500), and the
/// largest over the chain. Three 100 Mb/s links, one long flow and one short flow on each: every
/// link carries two flows, so the answer is near, and never above, 100 % — not the sum of all
/// four flows over one link (≈ 290 %).
#[test]
fn parking_lot_aggregate_utilization_is_that_of_the_most_loaded_link() {
    let o = sim(r#"
duration = "10s"
[[links]]
name = "a"
rate = "100mbit"
delay = "10ms"
[[links]]
name = "b"
rate = "100mbit"
delay = "10ms"
[[links]]
name = "c"
rate = "100mbit"
delay = "10ms"
[topology]
kind = "parking_lot"
chain = ["a", "b", "c"]
[[flows]]
cc = "reno"
[[flows]]
cc = "reno"
path = ["a"]
[[flows]]
cc = "reno"
path = ["b"]
[[flows]]
cc = "reno"
path = ["c"]
"#);
    let s = &o.summary;
    let bytes = |i: usize| s.flows[i].bytes_delivered.unwrap() as f64;
    let payload_capacity = 100e6 * 1460.0 / 1500.0;
    let expected = (1..=3)
        .map(|short| (bytes(0) + bytes(short)) * 8.0 / s.duration_s / payload_capacity)
        .fold(0.0, f64::max);
    let got = s.aggregate.utilization;
    println!("aggregate utilization {:.4} (expected {expected:.4})", got);
    assert!((got - expected).abs() < 1e-9, "{got} vs {expected}");
    assert!(got > 0.8 && got <= 1.0, "{got}");
    // The aggregate throughput stays the sum of all flows' goodput (about 3 links' worth).
    let total: f64 = (0..4).map(bytes).sum::<f64>() * 8.0 / s.duration_s;
    assert!((s.aggregate.throughput_bps - total).abs() < 1.0);
    assert_eq!(s.aggregate.capacity_bps, Some(100e6));
}

/// Random loss drops each packet independently with the configured probability, in each
/// direction. CBR cross traffic of 1500-byte packets at 50 Mb/s for 20 s offers n = 83,333
/// packets into a 100 Mb/s link that never queues them; the number lost is binomial(n, p), with
/// standard deviation √(n·p·(1−p)): 28.7 packets at p = 1 %, 40.4 at p = 2 %. The measured rate
/// must lie within 4 standard deviations (a false failure once in ~16,000 seeds; the run is
/// deterministic, so a given seed either always passes or always fails).
#[test]
fn random_loss_drops_the_configured_fraction_in_each_direction() {
    for (loss, reverse_loss) in [(0.01, 0.0), (0.0, 0.02)] {
        let o = sim(&format!(
            r#"
duration = "20s"
[[links]]
name = "l"
rate = "100mbit"
delay = "5ms"
loss = {loss}
reverse_loss = {reverse_loss}
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
bytes = "10k"
start = "19s"
[[cross_traffic]]
kind = "cbr"
link = "l"
rate = "50mbit"
reverse = {}
"#,
            reverse_loss > 0.0
        ));
        let (p, dir) = if reverse_loss > 0.0 {
            (reverse_loss, "reverse")
        } else {
            (loss, "forward")
        };
        let port = o
            .ports
            .iter()
            .find(|x| x.link == "l" && x.direction == dir)
            .unwrap();
        let cross = o.cross_traffic[0].packets;
        // A randomly lost packet is lost on the wire: it was transmitted (counted in
        // `packets`) and never arrives. The small flow adds a handful of its own packets (or
        // ACKs) to the same port.
        let offered = port.packets + port.drops_queue_full + port.queue_at_end_packets;
        assert!(
            offered >= cross && offered < cross + 100,
            "{offered} vs {cross}"
        );
        assert_eq!(port.drops_queue_full, 0);
        let n = offered as f64;
        let measured = port.drops_random as f64 / n;
        let sd = (p * (1.0 - p) / n).sqrt();
        println!(
            "{dir}: {} of {offered} lost = {:.4} % (configured {:.1} %, 4 sd = {:.4} %)",
            port.drops_random,
            100.0 * measured,
            100.0 * p,
            400.0 * sd
        );
        assert!(
            (measured - p).abs() < 4.0 * sd,
            "{measured} vs {p} ± 4 × {sd}"
        );
        // The other direction loses nothing.
        let other = o
            .ports
            .iter()
            .find(|x| x.link == "l" && x.direction != dir)
            .unwrap();
        assert_eq!(other.drops_random, 0);
    }
}

/// Gilbert–Elliott loss (`loss = { model = "gilbert_elliott", … }`, `longhaul_path::loss`)
/// gives its stationary mean loss rate, in bursts. With p = 0.01, r = 0.25, loss_good = 0 and
/// loss_bad = 1 a packet is lost exactly when the chain is Bad: the mean rate is
/// π = p/(p+r) = 3.846 % and a burst lasts 1/r = 4 packets on average. The same CBR load as
/// above offers n = 83,333 packets. The losses are a sum of n correlated Bernoulli(π) draws; for
/// a two-state Markov chain with second eigenvalue λ = 1 − p − r = 0.74 the binomial variance
/// n·π·(1−π) is multiplied by (1+λ)/(1−λ) = 6.69 (the chain's integrated autocorrelation;
/// Kemeny & Snell, "Finite Markov Chains", 1960, §4.6), so the rate's standard deviation is
/// √(π(1−π)·6.69/n) = 0.172 %; the measured rate must lie within 4 of them. About
/// n·π·r = 800 bursts have geometric lengths of mean 4 and standard deviation √(1−r)/r = 3.46,
/// so their mean length has a standard deviation of 3.46/√800 = 0.12; within 4 of them too.
#[test]
fn gilbert_elliott_loss_gives_its_mean_rate_in_bursts() {
    let (p, r) = (0.01, 0.25);
    let o = sim(&format!(
        r#"
duration = "20s"
[[links]]
name = "l"
rate = "100mbit"
delay = "5ms"
loss = {{ model = "gilbert_elliott", p = {p}, r = {r} }}
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
bytes = "10k"
start = "19s"
[[cross_traffic]]
kind = "cbr"
link = "l"
rate = "50mbit"
[output]
drop_log_limit = 1000000
"#
    ));
    let port = o
        .ports
        .iter()
        .find(|x| x.link == "l" && x.direction == "forward")
        .unwrap();
    assert_eq!(port.drops_queue_full, 0);
    let n = (port.packets + port.queue_at_end_packets) as f64;
    let pi = p / (p + r);
    let lambda = 1.0 - p - r;
    let sd = (pi * (1.0 - pi) * (1.0 + lambda) / (1.0 - lambda) / n).sqrt();
    let measured = port.drops_random as f64 / n;
    println!(
        "{} of {n} lost = {:.4} % (mean {:.4} %, 4 sd = {:.4} %)",
        port.drops_random,
        100.0 * measured,
        100.0 * pi,
        400.0 * sd
    );
    assert!(
        (measured - pi).abs() < 4.0 * sd,
        "{measured} vs {pi} ± 4 × {sd}"
    );
    // Bursts: runs of cross-traffic losses one CBR gap (240 µs) apart, before the flow starts.
    let times: Vec<f64> = o
        .drops
        .iter()
        .filter(|d| d.reason == "random_loss" && d.flow.is_none() && d.time_s < 19.0)
        .map(|d| d.time_s)
        .collect();
    assert_eq!(o.drops_unlogged, 0);
    let bursts = 1 + times.windows(2).filter(|w| w[1] - w[0] > 360e-6).count();
    let mean_burst = times.len() as f64 / bursts as f64;
    let burst_sd = (1.0 - r).sqrt() / r / (bursts as f64).sqrt();
    println!(
        "{bursts} bursts, mean length {mean_burst:.3} (expected 4 ± {:.3})",
        4.0 * burst_sd
    );
    assert!(
        (mean_burst - 1.0 / r).abs() < 4.0 * burst_sd,
        "{mean_burst} vs {} ± 4 × {burst_sd}",
        1.0 / r
    );
    // The ACK direction has no loss model and loses nothing.
    let reverse = o
        .ports
        .iter()
        .find(|x| x.link == "l" && x.direction == "reverse")
        .unwrap();
    assert_eq!(reverse.drops_random, 0);
}

/// A link's `jitter`, `reorder` and `reorder_by` reach both directions' delay lines
/// (`longhaul_path::delay`; their distributions are checked on a port in `port::tests`). With
/// a constant delay no RTT sample can be below 2 × 10 ms; with 1 ms of jitter each way the
/// round trip's offset has sd √2 ms, so among hundreds of samples some lie more than 1 ms below
/// (each one with probability 24 %). Reordering 1 % of packets by 2 ms (about 70 of a
/// 10 MiB transfer) must not stop the transfer: every byte is delivered, in order.
#[test]
fn jitter_and_reordering_reach_the_delay_lines() {
    let c = Scenario::parse(
        r#"
duration = "20s"
transport = "model"
[[links]]
name = "l"
rate = "100mbit"
delay = "10ms"
jitter = "1ms"
reorder = 0.01
reorder_by = "2ms"
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
bytes = "10M"
"#,
        "test.toml",
        "test",
        &[],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = longhaul_sim::run_traced(&c, &mut |_| {}).unwrap();
    let t = o.trace.expect("traced");
    let rtts = &t.rtt_ns[0];
    let min = *rtts.iter().min().expect("RTT samples");
    println!("{} RTT samples, min {} µs", rtts.len(), min / 1000);
    assert!(rtts.len() > 200, "{}", rtts.len());
    assert!(min < 19_000_000, "min RTT {min} ns");
    let delivered: u64 = t.deliveries[0].iter().map(|&(_, b)| b).sum();
    assert_eq!(delivered, c.scenario.flows[0].bytes.expect("a transfer").0);
}

/// Before a flow's first RTT sample its RTT series has a gap (NaN, JSON `null`), not 0 ms: the
/// first 100-ms interval of a 180-ms path has no sample, and every sample after is at least the
/// path's round trip.
#[test]
fn rtt_series_has_a_gap_before_the_first_sample_never_zero() {
    let o = sim(r#"
duration = "2s"
[[links]]
name = "l"
rate = "100mbit"
delay = "90ms"
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
[output]
interval = "100ms"
"#);
    let s = o.summary.flows[0].series.as_ref().expect("a series");
    assert!(s.rtt_ms[0].is_nan(), "first interval: {:?}", &s.rtt_ms[..3]);
    assert!(
        s.rtt_ms.iter().all(|r| r.is_nan() || *r >= 180.0),
        "{:?}",
        s.rtt_ms
    );
    assert!(s.rtt_ms.iter().filter(|r| r.is_finite()).count() >= 15);
    let json: serde_json::Value = serde_json::from_str(&o.summary.to_json().unwrap()).unwrap();
    assert!(json["flows"][0]["series"]["rtt_ms"][0].is_null(), "{json}");
}

/// BBR alone on a 100 Mb/s, 40 ms path: between start-up and the first PROBE_RTT (10 s) it
/// cruises at `1 − pacing_margin` = 99 % of the payload capacity (Linux converts its
/// payload-byte bandwidth to packet bytes before pacing; without that it would run at
/// 1460/1500 of that, 96.4 %).
#[test]
fn steady_state_bbr_delivers_99_percent_of_payload_capacity() {
    let o = sim(r#"
duration = "9s"
[[links]]
name = "l"
rate = "100mbit"
delay = "20ms"
queue = { kind = "droptail", packets = 2000 }
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "bbr"
"#);
    let s = o.summary.flows[0].series.as_ref().expect("a series");
    let steady: Vec<f64> =
        s.t.iter()
            .zip(&s.throughput_bps)
            .filter(|(t, _)| (3.0..8.6).contains(*t))
            .map(|(_, b)| *b)
            .collect();
    let mean = steady.iter().sum::<f64>() / steady.len() as f64;
    let share = mean / (100e6 * 1460.0 / 1500.0);
    eprintln!(
        "BBR steady state: {:.2} % of payload capacity",
        100.0 * share
    );
    assert!(
        (0.985..=1.0).contains(&share),
        "steady state {:.2} % of payload capacity",
        100.0 * share
    );
}
