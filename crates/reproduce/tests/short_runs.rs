//! A very short run of every experiment (a tenth of the default durations, with each
//! experiment's floor) produces claim rows with finite measured values.

use longhaul_reproduce::{run_experiment, Plan, EXPERIMENTS};

#[test]
fn every_experiment_runs_short_and_measures_finite_values() {
    let plan = Plan {
        full: false,
        time_scale: 0.1,
    };
    for e in EXPERIMENTS {
        let r = run_experiment(e, &plan, 2, &|_| {}).unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(r.summaries.len(), r.runs.len());
        assert!(!r.claims.is_empty(), "{} has no claims", e.name);
        assert_eq!(r.summaries[0].claims, r.claims);
        for c in &r.claims {
            assert!(
                c.measured.is_finite(),
                "{}: `{}` measured {}",
                e.name,
                c.claim,
                c.measured
            );
            assert_eq!(c.holds, c.holds && c.measured.is_finite());
        }
    }
}

/// Seed 004's factor 0.5: the Linux 2.4 model (delayed ACKs, growth once per ACK) climbs half a
/// segment per RTT, so its 200→1000 Mb/s climb takes twice the one-segment-per-RTT one.
#[test]
fn linux_2_4_reno_climbs_half_as_fast_as_modern_reno() {
    let e = EXPERIMENTS.iter().find(|e| e.name == "reno-climb").unwrap();
    let r = run_experiment(e, &Plan::DEFAULT, 2, &|_| {}).unwrap_or_else(|err| panic!("{err}"));
    let measured = |prefix: &str| {
        r.claims
            .iter()
            .find(|c| c.claim.starts_with(prefix))
            .unwrap_or_else(|| panic!("no claim starting `{prefix}`"))
            .measured
    };
    let linux24 = measured("Linux 2.4 Reno 200→1000 Mb/s");
    let modern = measured("same climb, one segment per RTT");
    eprintln!("climb: Linux 2.4 {linux24:.0} s, modern {modern:.0} s");
    assert!(
        (linux24 / modern - 2.0).abs() < 0.1,
        "Linux 2.4 {linux24} s vs modern {modern} s"
    );
}
