//! A very short run of every experiment (a tenth of the default durations, with each
//! experiment's floor) produces claim rows with finite measured values, each verdict its rule's,
//! each tolerance with its source.

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
            // The verdict is the claim's own rule applied to its measured number.
            let rule = c
                .rule
                .unwrap_or_else(|| panic!("{}: `{}` has no rule", e.name, c.claim));
            assert_eq!(c.holds, rule.test(c.measured), "{}: `{}`", e.name, c.claim);
            assert!(
                c.tolerance.is_some(),
                "{}: `{}` states no tolerance source",
                e.name,
                c.claim
            );
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

/// The seeds' contrast on three of the response sweep's own runs each (default plan, p = 1e-4):
/// Reno's measured rate is Mathis' within the experiment's tolerance, and BBR, which does not
/// take loss as its signal, keeps more than half the path where Reno has 1 %.
#[test]
fn reno_follows_mathis_and_bbr_holds_the_path_at_1e_4() {
    use longhaul_reproduce::experiment::Experiment;
    use longhaul_reproduce::experiments::response::{
        grid, half_throughput, theory_bps, tolerance, Point,
    };
    use longhaul_reproduce::experiments::table1::NIC_PAYLOAD_BPS;
    fn pick(cc: &str) -> Vec<Point> {
        grid(&Plan::DEFAULT)
            .unwrap()
            .into_iter()
            .filter(|p| p.cc == cc && p.loss == 1e-4)
            .collect()
    }
    fn runs(_: &Plan) -> Vec<longhaul_reproduce::Run> {
        ["reno", "bbr"]
            .iter()
            .flat_map(|cc| pick(cc))
            .map(|p| longhaul_reproduce::Run {
                label: format!("{}-s{}", p.cc, p.seed),
                scenario: "seed000-response",
                overrides: p.overrides,
            })
            .collect()
    }
    let e = Experiment {
        name: "response-1e-4",
        title: "",
        source: "",
        shortened: "",
        runs,
        claims: |_, _| Vec::new(),
        notes: None,
        page: None,
    };
    let r = run_experiment(&e, &Plan::DEFAULT, 2, &|_| {}).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(r.summaries.len(), 6);
    let mean = |s: &[longhaul_metrics::summary::Summary]| {
        s.iter().map(half_throughput).sum::<f64>() / s.len() as f64
    };
    let reno = mean(&r.summaries[..3]);
    let bbr = mean(&r.summaries[3..]);
    let expected: f64 = pick("reno").iter().map(|p| p.expected_half_losses()).sum();
    let mathis = theory_bps("reno", 1e-4).unwrap();
    let tol = tolerance("reno", 1e-4, expected);
    eprintln!("reno {reno:.0} b/s (Mathis {mathis:.0} ± {tol:.2}), bbr {bbr:.0} b/s");
    assert!(
        (reno - mathis).abs() <= tol * mathis,
        "reno {reno}, Mathis {mathis}"
    );
    assert!(bbr > 0.5 * NIC_PAYLOAD_BPS, "bbr {bbr}");
}
