//! A small synthetic summary for documentation, tests and trying the report writer
//! (`example_summary()`): two FAST flows and a Reno flow sharing a 1 Gb/s, 85 ms path for 20 s,
//! driven through the real recorders. The dynamics are made up (a FAST-like ramp to an equal
//! share with a steady queue, a Reno sawtooth), not simulated: use `longhaul sim` for results.

use crate::recorder::{aggregate, FlowRecorder, LinkRecorder, PathContext};
use crate::summary::{Claim, ClaimKind, Mode, PaperValue, Rule, Summary};

/// The example's run length, seconds.
pub const EXAMPLE_DURATION_S: f64 = 20.0;

/// Build the example summary (deterministic: the same value on every call).
pub fn example_summary() -> Summary {
    let path = PathContext {
        capacity_bps: 1e9,
        mtu: 1500,
        distance_km: 3_948.0,
    };
    let step = 0.01;
    let payload = 1460u64;
    let base_rtt = 0.085;
    let mut flows: Vec<FlowRecorder> = [(1, "fast"), (2, "fast"), (3, "reno")]
        .iter()
        .map(|&(id, cc)| FlowRecorder::new(id, cc, 0.1).expect("0.1 s is a valid interval"))
        .collect();
    flows[0] = flows[0].clone().with_params("alpha=200,gamma=0.5");
    let mut link = LinkRecorder::new("bottleneck", 1e9, 1500, 0.1).expect("valid interval");
    let steps = (EXAMPLE_DURATION_S / step) as u32;
    for k in 0..steps {
        let t = f64::from(k) * step;
        // Target rates in b/s: FAST flows ramp over 2 s (the second starts at 2 s) to 320 Mb/s;
        // Reno saws between 150 and 300 Mb/s with a 5-s period.
        let fast1 = 320e6 * (t / 2.0).min(1.0);
        let fast2 = if t < 2.0 {
            0.0
        } else {
            320e6 * ((t - 2.0) / 2.0).min(1.0)
        };
        let reno = 150e6 + 150e6 * ((t % 5.0) / 5.0);
        let queue_s = 0.002 + 0.003 * ((t % 5.0) / 5.0);
        for (i, rate) in [fast1, fast2, reno].into_iter().enumerate() {
            if rate <= 0.0 {
                continue;
            }
            let bytes = (rate * step / 8.0) as u64;
            let pkts = bytes.div_ceil(payload);
            let f = &mut flows[i];
            f.on_sent(t, pkts);
            f.on_delivered(t, bytes);
            f.on_rtt(t, base_rtt + queue_s);
            f.on_cwnd(t, rate * (base_rtt + queue_s) / 8.0 / payload as f64);
            f.on_inflight(t, rate * base_rtt / 8.0 / payload as f64);
            link.on_forwarded(t, bytes, queue_s);
        }
        link.on_queue(
            t,
            (queue_s * 1e9 / 8.0) as u64,
            (queue_s * 1e9 / 8.0 / 1500.0) as u64,
        );
        // Reno loses one packet at the top of each sawtooth (every 500 steps = 5 s).
        if (k + 1) % 500 == 0 {
            flows[2].on_drop("bottleneck", crate::loss::REASON_QUEUE_FULL, 1);
            flows[2].on_retransmit(1);
            link.on_drop(crate::loss::REASON_QUEUE_FULL, 1);
        }
    }
    let summaries: Vec<_> = flows
        .iter()
        .map(|f| {
            let active = if f.id() == 2 {
                EXAMPLE_DURATION_S - 2.0
            } else {
                EXAMPLE_DURATION_S
            };
            f.finish(active, EXAMPLE_DURATION_S, &path)
        })
        .collect();
    let agg = aggregate(&flows, &summaries, EXAMPLE_DURATION_S, &path);
    let mut link_summary = link.finish(EXAMPLE_DURATION_S);
    link_summary.delay_ms = Some(42.5);
    link_summary.distance_km = Some(path.distance_km);
    link_summary.queue = Some("droptail 1000p".to_string());
    let utilization = agg.utilization;
    Summary {
        scenario: "example-3flows".to_string(),
        mode: Mode::Sim,
        duration_s: EXAMPLE_DURATION_S,
        seed: 1,
        links: vec![link_summary],
        flows: summaries,
        aggregate: agg,
        claims: vec![Claim {
            claim: "aggregate utilization".to_string(),
            paper: PaperValue::Text("88–95 %".to_string()),
            measured: utilization,
            holds: Rule::AtLeast { bound: 0.88 }.test(utilization),
            unit: Some("fraction".to_string()),
            source: Some("seed 000, Table 1".to_string()),
            kind: ClaimKind::Seed,
            rule: Some(Rule::AtLeast { bound: 0.88 }),
            tolerance: None,
        }],
        meta: [("generator".to_string(), "example".to_string())].into(),
        provenance: None,
    }
}
