//! The controlled burst experiment (`lion-mbs`): its constants are the scenario's, the MBS is the
//! room the queue leaves, and each claim turns at the edge of its stated error.

use longhaul_metrics::example::example_summary;
use longhaul_metrics::summary::{ClaimKind, LinkSeries, Summary};
use longhaul_reproduce::experiments::lion_mbs::{
    measured_mbs, BUFFER_PACKETS, BURSTS, NIC_BPS, RATE_BPS, ROUTER_BPS,
};
use longhaul_reproduce::scenarios::builtin;
use longhaul_reproduce::{experiment, Plan};

#[test]
fn constants_are_the_scenarios() {
    let c = builtin("seed002-mbs").unwrap().load(&[]).unwrap();
    let link = &c.scenario.links[0];
    assert_eq!(link.rate.0, ROUTER_BPS);
    assert_eq!(link.queue.packets, Some(BUFFER_PACKETS as u64));
    let flow = &c.scenario.flows[0];
    assert_eq!(flow.access.rate.map(|r| r.0), Some(NIC_BPS));
    assert_eq!(c.flows[0].cc.params.f64("rate"), RATE_BPS);
    // Bursts reach from one packet to well above the buffer.
    assert_eq!(BURSTS[0], 1);
    assert!(*BURSTS.last().unwrap() as f64 >= 4.0 * BUFFER_PACKETS);
}

/// A one-flow run: `loss` of `sent` packets dropped, and the router's queue samples.
fn run(loss: f64, sent: u64, queue: &[f64]) -> Summary {
    let mut s = example_summary();
    s.flows.truncate(1);
    let f = &mut s.flows[0];
    f.loss_rate = loss;
    f.packets_sent = Some(sent);
    f.packets_lost = Some((loss * sent as f64).round() as u64);
    f.series = None;
    s.links.truncate(1);
    s.links[0].series = Some(LinkSeries {
        t: (0..queue.len()).map(|i| i as f64 * 1e-3).collect(),
        queue_pkts: queue.to_vec(),
        ..Default::default()
    });
    s
}

#[test]
fn mbs_is_the_mean_room_over_the_queued_share_of_a_burst() {
    // Mean queue 20 of 200 packets: 180 packets of room; a 10 Gb/s burst into 1 Gb/s keeps
    // nine tenths of itself queued, so 200 packets fit.
    let s = run(0.01, 1000, &[0.0, 20.0, 40.0]);
    assert!((measured_mbs(&s).unwrap() - 200.0).abs() < 1e-9);
    assert_eq!(measured_mbs(&run(0.01, 1000, &[])), None);
}

#[test]
fn claims_turn_at_counting_noise_and_at_the_window() {
    let e = experiment("lion-mbs").unwrap();
    let sent = 1_000_000u64;
    // Queue empty: MBS = 200 / 0.9 = 222 packets, so bursts up to 128 count as ≤ MBS.
    let curve_with_control = |fall: f64, window: f64, control: (f64, f64)| {
        let mut runs: Vec<Summary> = BURSTS
            .iter()
            .enumerate()
            .map(|(i, _)| run(0.01 + 0.001 * i as f64, sent, &[0.0]))
            .collect();
        // The 16-packet run loses `fall` less than the 8-packet one.
        let eight = BURSTS.iter().position(|&b| b == 8).unwrap();
        let l = runs[eight].flows[0].loss_rate - fall;
        runs[eight + 1] = run(l, sent, &[0.0]);
        runs.push(run(window, sent, &[0.0]));
        runs.push(run(control.0, sent, &[0.0]));
        runs.push(run(control.1, sent, &[0.0]));
        (e.claims)(&Plan::DEFAULT, &runs)
    };
    let curve = |fall: f64, window: f64| curve_with_control(fall, window, (0.01, 0.01));
    let c = curve(0.0, 0.05);
    assert_eq!(c.len(), BURSTS.len() + 1, "ten growth rows and two claims");
    assert!(c.iter().all(|c| c.holds), "{c:#?}");
    // The worst loss at bursts ≤ MBS is the 128-packet run's, 1 % + 7 × 0.1 % = 1.7 %.
    let worst = 0.01 + 0.001 * BURSTS.iter().position(|&b| b == 128).unwrap() as f64;
    assert!((c[BURSTS.len() - 1].measured - worst / 0.05).abs() < 1e-9);
    // Counting noise between the 8- and 16-packet runs: 2·√(13000 + 13000 − fall·1e6)/1e6,
    // about 0.032 %. A fall of 0.03 % is noise, 0.04 % is not.
    assert!(curve(0.0003, 0.05)[3].holds);
    assert!(!curve(0.0004, 0.05)[3].holds);
    // A window-based sender that loses less than small bursts breaks the second claim.
    assert!(!curve(0.0, worst - 1e-4)[BURSTS.len() - 1].holds);
    // The last claim, largest ÷ smallest burst (2 % ÷ 1 %), must clear one by twice the ratio's
    // counting noise, 2·√(1/10,000 + 1/20,000) ≈ 0.0245; the control whose two bursts lose
    // alike fails it.
    let last = &c[BURSTS.len()];
    assert!((last.measured - 2.0).abs() < 1e-9 && last.holds);
    let control = last.control.as_ref().unwrap();
    assert!((control.measured - 1.0).abs() < 1e-9 && control.fails);
    assert_eq!(last.kind, ClaimKind::Seed);
    // A control whose larger burst loses 2 % more than the smaller one is within its noise
    // (2·√(1/10,000 + 1/10,200) ≈ 0.028): it fails too. At 5 % more it passes, and the claim is
    // no longer evidence: it becomes a check.
    let c = curve_with_control(0.0, 0.05, (0.01, 0.0102));
    assert!(c[BURSTS.len()].control.as_ref().unwrap().fails);
    let c = curve_with_control(0.0, 0.05, (0.01, 0.0105));
    assert!(!c[BURSTS.len()].control.as_ref().unwrap().fails);
    assert_eq!(c[BURSTS.len()].kind, ClaimKind::Check);
}

/// The experiment itself, shortened to 3 s a run: the same packets in trains of 1024 lose far
/// more than one at a time, and bursts within the measured MBS lose less than the window.
#[test]
fn short_runs_show_loss_growing_with_the_burst() {
    use longhaul_reproduce::run_experiment;
    let e = experiment("lion-mbs").unwrap();
    let plan = Plan {
        full: false,
        time_scale: 0.15,
    };
    let r = run_experiment(e, &plan, 2, &|_| {}).unwrap();
    let loss: Vec<f64> = r.summaries.iter().map(|s| s.flows[0].loss_rate).collect();
    let sent: Vec<u64> = r
        .summaries
        .iter()
        .map(|s| s.flows[0].packets_sent.unwrap())
        .collect();
    eprintln!("loss by burst {BURSTS:?} and window: {loss:?}");
    // Every paced run sends the same packets: 3 s at 200 Mb/s of 1500-byte packets, 50,000
    // (a train may be cut at the end); the window, clocked by ACKs, about as many.
    let n = BURSTS.len();
    assert!(
        sent[..n]
            .iter()
            .all(|&k| (k as f64 / 50_000.0 - 1.0).abs() < 0.03),
        "{sent:?}"
    );
    assert!((sent[n] as f64 / 50_000.0 - 1.0).abs() < 0.1, "{sent:?}");
    assert!(loss[n - 1] > 5.0 * loss[0], "{loss:?}");
    let mbs = measured_mbs(&r.summaries[0]).unwrap();
    assert!(mbs > 100.0 && mbs < BUFFER_PACKETS / 0.9, "MBS {mbs}");
    for (b, l) in BURSTS.iter().zip(&loss) {
        if (*b as f64) <= mbs {
            assert!(*l < loss[n], "burst {b}: {l} vs window {}", loss[n]);
        }
    }
}
