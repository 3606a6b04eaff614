//! `lion-matched`: Lion is held against the window-based run that delivers at least 90 % of its
//! throughput with the least loss, and against the fastest one when none does.

use longhaul_metrics::example::example_summary;
use longhaul_metrics::summary::Summary;
use longhaul_reproduce::{experiment, Plan};

/// A one-flow run delivering `mbps` with `loss` of its 1,000,000 packets dropped.
fn run(mbps: f64, loss: f64) -> Summary {
    let mut s = example_summary();
    s.flows.truncate(1);
    let f = &mut s.flows[0];
    f.throughput_bps = mbps * 1e6;
    f.loss_rate = loss;
    f.packets_sent = Some(1_000_000);
    f.packets_lost = Some((loss * 1e6).round() as u64);
    s
}

/// Lion, BBR ×1/×2/×4, windows at 600/700/800, Reno ×32, CUBIC ×64, the smooth sender.
fn claims(lion: (f64, f64), bbr1: (f64, f64)) -> Vec<longhaul_metrics::summary::Claim> {
    let e = experiment("lion-matched").unwrap();
    let runs = vec![
        run(lion.0, lion.1),
        run(bbr1.0, bbr1.1),
        run(500.0, 0.08),
        run(520.0, 0.09),
        run(450.0, 0.18),
        run(480.0, 0.20),
        run(500.0, 0.25),
        run(78.0, 0.018),
        run(103.0, 0.037),
        run(574.0, 0.088),
    ];
    (e.claims)(&Plan::DEFAULT, &runs)
}

#[test]
fn lion_meets_the_least_lossy_matched_run() {
    // BBR ×1 at 90 % of Lion's 600 Mb/s is matched; the others (≤ 520) are not.
    let c = claims((600.0, 0.10), (540.0, 0.099));
    assert!((c[0].measured - 0.10 / 0.099).abs() < 1e-9, "{c:#?}");
    assert!(!c[0].holds);
    assert!(c[0].claim.contains("bbr-x1"));
    // 1 Mb/s short of 90 %: no run is matched, the fastest (BBR ×1) stands in.
    let c = claims((600.0, 0.10), (539.0, 0.12));
    assert!(c[0].claim.contains("none delivers"), "{}", c[0].claim);
    assert!(c[0].holds);
    // Reno ×32 and CUBIC ×64 reach 103 ÷ 600 of Lion's throughput.
    assert!((c[1].measured - 103.0 / 600.0).abs() < 1e-9);
    assert!(c[1].holds);
}
