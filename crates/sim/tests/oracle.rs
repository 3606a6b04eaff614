//! The metrics oracle: every summary number of a simulated run, recomputed by a deliberately
//! simple reference straight from the run's raw per-packet events (`run_traced`), over
//! generated scenarios (rates, RTTs, buffers, controllers, flow start and stop times, random
//! loss, Poisson cross traffic, both transports).
//!
//! What is compared, and within what:
//! - bytes delivered, per flow: exact (the sum of the receiver's in-order deliveries);
//! - throughput: delivered bits ÷ the flow's active time, to 1e-12 relative;
//! - queueing delay (RTT − the flow's minimum RTT): mean to 1e-9 ms; p50, p95, p99 by the
//!   nearest-rank rule on the sorted samples, within the histogram's stated resolution
//!   (RTT_p / 2^11, docs/measurements.md); max exact;
//! - the bottleneck's queue delay the same way from every packet's wait;
//! - each interval's throughput from the arrivals in it and goodput from the deliveries,
//!   within one packet per bin (an event at a bin's edge may count on either side);
//! - null exactly where the flow was not active, and Jain's index over finite values only.
//!
//! And the invariants that hold whatever the numbers: p50 ≤ p95 ≤ p99 ≤ max, min ≤ mean ≤ max,
//! utilization ≤ 1, b·m/s ≤ capacity × distance, a throughput bin ≤ capacity + one packet,
//! Jain in [1/n, 1].

use longhaul_metrics::percentile::percentile_sorted;
use longhaul_sim::{run_traced, Scenario};
use proptest::prelude::*;

const CCS: &[&str] = &[
    "reno",
    "cubic",
    "fast",
    "vegas",
    "bbr",
    "lion",
    "highspeed",
    "scalable",
];

#[derive(Debug, Clone)]
struct Gen {
    rate_mbit: u32,
    delay_ms: u32,
    buffer: u32,
    loss: f64,
    cross_fraction: f64,
    model: bool,
    flows: Vec<(usize, u32, Option<u32>)>,
}

fn scenario() -> impl Strategy<Value = Gen> {
    (
        5u32..=200,
        1u32..=40,
        5u32..=800,
        prop_oneof![Just(0.0), Just(1e-4), Just(1e-3)],
        prop_oneof![Just(0.0), Just(0.2), Just(0.5)],
        any::<bool>(),
        prop::collection::vec(
            (0..CCS.len(), 0u32..=1000, prop::option::of(1500u32..=3000)),
            1..=3,
        ),
    )
        .prop_map(
            |(rate_mbit, delay_ms, buffer, loss, cross_fraction, model, flows)| Gen {
                rate_mbit,
                delay_ms,
                buffer,
                loss,
                cross_fraction,
                model,
                flows,
            },
        )
}

const DURATION_MS: u32 = 3000;
const INTERVAL_MS: u32 = 100;

fn toml_of(g: &Gen) -> String {
    let mut s = format!(
        "duration = \"{DURATION_MS}ms\"\ntransport = \"{}\"\n[[links]]\nname = \"l\"\nrate = \"{}mbit\"\n\
         delay = \"{}ms\"\ndistance_km = 1000\nloss = {}\n\
         queue = {{ kind = \"droptail\", packets = {} }}\n\
         [topology]\nkind = \"dumbbell\"\nbottleneck = \"l\"\n\
         [output]\ninterval = \"{INTERVAL_MS}ms\"\n",
        if g.model { "model" } else { "proto" },
        g.rate_mbit,
        g.delay_ms,
        g.loss,
        g.buffer
    );
    for &(cc, start, stop) in &g.flows {
        s += &format!("[[flows]]\ncc = \"{}\"\nstart = \"{start}ms\"\n", CCS[cc]);
        if let Some(stop) = stop {
            s += &format!("stop = \"{stop}ms\"\n");
        }
    }
    if g.cross_fraction > 0.0 {
        s += &format!(
            "[[cross_traffic]]\nkind = \"poisson\"\nlink = \"l\"\nrate = \"{}kbit\"\n",
            (g.rate_mbit as f64 * 1000.0 * g.cross_fraction) as u64
        );
    }
    s
}

/// Nearest-rank percentiles of `v` less its minimum, in ms; and the stated resolution (ms) of
/// a percentile whose underlying value is `v_p` ns.
fn exact_ms(sorted: &[u64], base: u64, p: f64) -> (f64, f64) {
    let as_f: Vec<f64> = sorted.iter().map(|&x| x as f64).collect();
    let v = percentile_sorted(&as_f, p).unwrap();
    ((v - base as f64) / 1e6, v / 2048.0 / 1e6 + 1e-9)
}

fn check(g: &Gen) -> Result<(), TestCaseError> {
    let text = toml_of(g);
    let c = Scenario::parse(&text, "oracle.toml", "oracle", &[]).unwrap();
    let o = run_traced(&c, &mut |_| {}).unwrap();
    let t = o.trace.as_ref().expect("a traced run keeps its events");
    let s = &o.summary;
    let end_ns = DURATION_MS as u64 * 1_000_000;
    let dt_ns = INTERVAL_MS as u64 * 1_000_000;
    let mss = 1500.0; // an upper bound on any packet's payload
    let payload_capacity = g.rate_mbit as f64 * 1e6;
    let one_packet_bps = mss * 8.0 / (dt_ns as f64 / 1e9);
    for (i, f) in s.flows.iter().enumerate() {
        let cf = &c.flows[i];
        // Bytes and throughput.
        let delivered: u64 = t.deliveries[i].iter().map(|d| d.1).sum();
        prop_assert_eq!(f.bytes_delivered, Some(delivered), "flow {} bytes", i);
        // Active from start to the run's end; a flow whose application stopped early, to the
        // stop or its last delivery, whichever is later (the send buffer drains).
        let last_delivery = t.deliveries[i].last().map_or(0, |d| d.0);
        let last = if cf.stop < end_ns {
            cf.stop.max(last_delivery).min(end_ns)
        } else {
            end_ns
        };
        let active_s = (last - cf.start) as f64 / 1e9;
        let tput = delivered as f64 * 8.0 / active_s;
        prop_assert!(
            (f.throughput_bps - tput).abs() <= 1e-12 * tput.max(1.0),
            "flow {i}: throughput {} vs {tput}",
            f.throughput_bps
        );
        prop_assert!(
            f.utilization.is_nan() || f.utilization <= 1.0,
            "flow {i} utilization {}",
            f.utilization
        );
        prop_assert!(f.bmps <= payload_capacity * 1000.0 * 1e3 * (1.0 + 1e-12));
        prop_assert!((0.0..=1.0).contains(&f.loss_rate) || f.loss_rate.is_nan());
        // Queueing delay.
        let mut rtt = t.rtt_ns[i].clone();
        rtt.sort_unstable();
        let q = &f.queueing_delay_ms;
        if let (Some(&base), Some(&top)) = (rtt.first(), rtt.last()) {
            prop_assert!((f.min_rtt_ms - base as f64 / 1e6).abs() < 1e-9);
            let mean = rtt.iter().map(|&x| (x - base) as f64).sum::<f64>() / rtt.len() as f64 / 1e6;
            prop_assert!(
                (q.mean - mean).abs() <= 1e-9 * mean.max(1.0),
                "flow {i} mean {} vs {mean}",
                q.mean
            );
            for (name, got, p) in [
                ("p50", q.p50.unwrap(), 50.0),
                ("p95", q.p95, 95.0),
                ("p99", q.p99.unwrap(), 99.0),
            ] {
                let (want, tol) = exact_ms(&rtt, base, p);
                prop_assert!(
                    (got - want).abs() <= tol,
                    "flow {i} {name}: {got} vs exact {want} (±{tol})"
                );
            }
            prop_assert!((q.max.unwrap() - (top - base) as f64 / 1e6).abs() < 1e-9);
            let (p50, p95, p99, max) = (q.p50.unwrap(), q.p95, q.p99.unwrap(), q.max.unwrap());
            prop_assert!(
                0.0 <= p50 && p50 <= p95 && p95 <= p99 && p99 <= max,
                "{q:?}"
            );
            prop_assert!(q.mean <= max + 1e-12, "{q:?}");
        }
        // Series: nulls exactly outside the flow's life, bins from the raw events.
        let se = f.series.as_ref().unwrap();
        for (k, &ts) in se.t.iter().enumerate() {
            let lo = (ts * 1e9).round() as u64;
            let hi = lo + dt_ns;
            let delivered_in = t.deliveries[i].iter().any(|d| d.0 > lo && d.0 <= hi);
            let active = cf.start < hi && (cf.stop > lo || delivered_in);
            prop_assert_eq!(
                se.throughput_bps[k].is_finite(),
                active,
                "flow {} bin {}",
                i,
                k
            );
            if !active {
                continue;
            }
            let sum = |v: &[(u64, u64)]| {
                v.iter()
                    .filter(|e| e.0 > lo && e.0 <= hi)
                    .map(|e| e.1)
                    .sum::<u64>() as f64
                    * 8e9
                    / dt_ns as f64
            };
            let arrivals: Vec<(u64, u64)> =
                t.arrivals[i].iter().map(|&(a, b)| (a, b as u64)).collect();
            let want = sum(&arrivals);
            prop_assert!(
                (se.throughput_bps[k] - want).abs() <= one_packet_bps + 1e-6,
                "flow {i} bin {k}: {} vs {want}",
                se.throughput_bps[k]
            );
            let want = sum(&t.deliveries[i]);
            let slack = one_packet_bps * 64.0; // deliveries come in runs: one event may straddle
            prop_assert!(
                (se.goodput_bps[k] - want).abs() <= slack,
                "flow {i} goodput bin {k}: {} vs {want}",
                se.goodput_bps[k]
            );
            prop_assert!(
                se.throughput_bps[k] <= payload_capacity + one_packet_bps,
                "flow {i} bin {k}: {}",
                se.throughput_bps[k]
            );
        }
    }
    // The bottleneck's queue.
    let link = s.links.iter().find(|l| l.name == "l").unwrap();
    let mut soj = t.link_sojourn_ns[0][0].clone();
    soj.sort_unstable();
    if let Some(&top) = soj.last() {
        let qd = &link.queue_delay_ms;
        for (name, got, p) in [("p95", qd.p95, 95.0), ("p99", qd.p99, 99.0)] {
            let (want, tol) = exact_ms(&soj, 0, p);
            prop_assert!((got - want).abs() <= tol, "link {name}: {got} vs {want}");
        }
        prop_assert!((qd.max.unwrap() - top as f64 / 1e6).abs() < 1e-9);
        prop_assert!(
            qd.p95 <= qd.p99 && qd.p99 <= qd.max.unwrap() && qd.mean <= qd.max.unwrap() + 1e-12
        );
    }
    prop_assert!(
        link.utilization <= 1.0 + 1e-12,
        "link utilization {}",
        link.utilization
    );
    // The aggregate.
    let a = &s.aggregate;
    prop_assert!(
        a.utilization.is_nan() || a.utilization <= 1.0 + 1e-12,
        "aggregate utilization {}",
        a.utilization
    );
    prop_assert!(
        a.bmps.is_nan() || a.bmps <= payload_capacity * 1000.0 * 1e3 * (1.0 + 1e-12),
        "aggregate b·m/s {}",
        a.bmps
    );
    let n = s.flows.iter().filter(|f| f.throughput_bps > 0.0).count();
    if a.jain.is_finite() && n > 0 {
        prop_assert!(
            a.jain <= 1.0 + 1e-12 && a.jain >= 1.0 / s.flows.len() as f64 - 1e-12,
            "jain {}",
            a.jain
        );
    }
    if let Some(agg) = &a.series {
        for &b in &agg.throughput_bps {
            prop_assert!(
                !b.is_finite() || b <= payload_capacity + one_packet_bps,
                "aggregate bin {b}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        failure_persistence: None,
        max_shrink_iters: 50,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_summary_number_agrees_with_the_raw_events(g in scenario()) {
        check(&g)?;
    }
}

/// A link kept busy to the end of a short run: the packet on the wire when the run ends is not
/// all carried, so the link's utilization stays at most 1 (counting that packet in full, 0.6 %
/// of a 1-s run at 2 Mb/s, put it above 1), and near 1: the link idles only until the first
/// packets arrive (Poisson traffic at 333 packets/s, and the flow's handshake).
#[test]
fn a_link_busy_to_the_end_of_a_run_is_used_at_most_fully() {
    for transport in ["model", "proto"] {
        let c = Scenario::parse(
            &format!(
                r#"
duration = "1s"
transport = "{transport}"
[[links]]
name = "l"
rate = "2mbit"
delay = "5ms"
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
[[cross_traffic]]
kind = "poisson"
link = "l"
rate = "4mbit"
packet_size = 1500
"#
            ),
            "busy.toml",
            "busy",
            &[],
        )
        .unwrap();
        let o = run_traced(&c, &mut |_| {}).unwrap();
        let link = o.summary.links.iter().find(|l| l.name == "l").unwrap();
        assert!(
            link.utilization <= 1.0 && link.utilization >= 0.98,
            "{transport}: {}",
            link.utilization
        );
    }
}
