//! `lion-matched`: Lion, and BBR as the control, are each held against the window of the
//! ladder whose throughput is closest to theirs, if within 10 % on either side.

use longhaul_metrics::example::example_summary;
use longhaul_metrics::summary::{Claim, Summary};
use longhaul_reproduce::experiments::lion_matched::ladder;
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

/// Lion, BBR ×1, Reno ×32, CUBIC ×64, then the ladder: each window delivers `window(offered)`
/// (Mb/s, loss).
fn claims(lion: (f64, f64), bbr: (f64, f64), window: impl Fn(f64) -> (f64, f64)) -> Vec<Claim> {
    let e = experiment("lion-matched").unwrap();
    let mut runs = vec![
        run(lion.0, lion.1),
        run(bbr.0, bbr.1),
        run(75.0, 0.02),
        run(98.0, 0.034),
    ];
    runs.extend(ladder().into_iter().map(|r| {
        let (mbps, loss) = window(r / 1e6);
        run(mbps, loss)
    }));
    (e.claims)(&Plan::DEFAULT, &runs)
}

#[test]
fn each_sender_meets_the_window_closest_to_its_rate() {
    // Windows deliver what they are offered and lose 0.2 %; Lion at 35 Mb/s loses 0.1 %, BBR at
    // 600 Mb/s 1 %.
    let c = claims((35.0, 0.001), (600.0, 0.01), |m| (m, 0.002));
    assert!((c[0].measured - 0.5).abs() < 1e-9, "{c:#?}");
    assert!(c[0].holds);
    // The closest rung to 35 Mb/s is offered 35.2 Mb/s (10 · 1.15⁹).
    assert!(c[0].claim.contains("window-35 "), "{}", c[0].claim);
    let control = c[0].control.as_ref().unwrap();
    assert!((control.measured - 5.0).abs() < 1e-9, "{c:#?}");
    assert!(control.fails && c[0].evidenced());
    // Reno ×32 and CUBIC ×64 reach 98 ÷ 35 of Lion's throughput: the own check fails.
    assert!((c[1].measured - 98.0 / 35.0).abs() < 1e-9);
    assert!(!c[1].holds);
}

#[test]
fn a_faster_window_matches_too_and_a_far_one_does_not() {
    // Windows deliver 8 % more than offered: still within 10 %, and lose more than Lion.
    let c = claims((35.0, 0.001), (600.0, 0.01), |m| (1.08 * m, 0.004));
    assert!(c[0].holds, "{c:#?}");
    // A window far faster than Lion is no match, however little it loses.
    let c = claims((35.0, 0.001), (600.0, 0.01), |m| {
        (m, if m > 100.0 { 0.0001 } else { 0.002 })
    });
    assert!((c[0].measured - 0.5).abs() < 1e-9, "{c:#?}");
    // A ladder that stops short of the sender's rate leaves it unmatched: BBR at 600 Mb/s
    // against windows that never deliver more than 300 Mb/s.
    let c = claims((35.0, 0.001), (600.0, 0.01), |m| (m.min(300.0), 0.002));
    let control = c[0].control.as_ref().unwrap();
    assert!(control.measured.is_nan(), "{c:#?}");
    assert!(!control.fails && !c[0].evidenced());
    assert!(
        c[0].claim.contains("no window within 10 %"),
        "{}",
        c[0].claim
    );
}

#[test]
fn the_ladder_spans_10_mbps_to_1_gbps_in_steps_of_15_percent() {
    let l = ladder();
    assert_eq!(l.first(), Some(&10e6));
    assert!(*l.last().unwrap() <= 1e9 && *l.last().unwrap() * 1.15 > 1e9);
    for w in l.windows(2) {
        assert!((w[1] / w[0] - 1.15).abs() < 1e-6, "{w:?}");
    }
}
