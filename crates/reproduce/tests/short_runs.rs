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
