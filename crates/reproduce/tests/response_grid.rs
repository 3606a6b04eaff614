//! `longhaul reproduce response` and `longhaul sweep run scenarios/sweeps/response*.toml` are
//! one grid: the experiment's runs are the sweep plan's, index by index, and the files' run
//! lengths follow the rule stated in them. Its claims follow the measurements: synthetic results
//! on the response functions hold, results at twice Reno's function do not.

use longhaul_metrics::example::example_summary;
use longhaul_metrics::summary::{FlowSeries, Summary};
use longhaul_reproduce::experiments::response::{
    self, grid, planned_duration_s, planned_rate, theory_bps, CAPACITY_BPS,
};
use longhaul_reproduce::Plan;
use longhaul_sweep::plan::Plan as SweepPlan;
use std::path::PathBuf;

fn sweep_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/sweeps")
        .join(name)
}

#[test]
fn the_experiment_runs_the_sweep_files_runs_index_by_index() {
    for (file, plan) in [
        ("response.toml", Plan::DEFAULT),
        ("response-full.toml", Plan::FULL),
    ] {
        let sweep = SweepPlan::load(&sweep_file(file), false).unwrap_or_else(|e| panic!("{e}"));
        let points = grid(&plan).unwrap();
        assert_eq!(sweep.runs, points.len() as u64, "{file}");
        assert_eq!(sweep.runs, 6 * 8 * 3);
        for (i, p) in points.iter().enumerate() {
            let run = sweep.run(i as u64).unwrap();
            assert_eq!(run.sets, p.overrides, "{file}, run {i}");
            assert!(run
                .scenario_path
                .ends_with(format!("{}.toml", response::SCENARIO)));
        }
    }
}

#[test]
fn full_and_default_differ_only_in_lengths_which_follow_the_rule() {
    let default = grid(&Plan::DEFAULT).unwrap();
    let full = grid(&Plan::FULL).unwrap();
    let key = |p: &response::Point| (p.cc.clone(), p.loss.to_bits(), p.seed);
    assert_eq!(
        default.iter().map(key).collect::<Vec<_>>(),
        full.iter().map(key).collect::<Vec<_>>()
    );
    let mut ccs: Vec<&str> = default.iter().map(|p| p.cc.as_str()).collect();
    ccs.sort();
    ccs.dedup();
    assert_eq!(
        ccs,
        [
            "bbr",
            "cubic",
            "fast",
            "highspeed",
            "lion",
            "reno",
            "scalable",
            "vegas"
        ]
    );
    let mut losses: Vec<f64> = default.iter().map(|p| p.loss).collect();
    losses.sort_by(f64::total_cmp);
    losses.dedup();
    assert_eq!(losses, [0.0, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4]);
    for (points, is_full) in [(&default, false), (&full, true)] {
        for p in points {
            assert_eq!(
                p.duration_s as u64,
                planned_duration_s(&p.cc, p.loss, is_full)
            );
            if !is_full {
                assert!(
                    p.duration_s * planned_rate(&p.cc, p.loss) <= 5.01e6,
                    "{p:?}"
                );
            }
            if is_full && p.loss > 0.0 {
                // --full: at least 20 expected losses in every measured half.
                assert!(p.expected_half_losses() >= 20.0, "{p:?}");
            }
        }
    }
    // The default resolves p ≥ 1e-5 only; at 1e-8 --full runs 13.3 h at 1 Gb/s.
    for p in &default {
        assert_eq!(p.expected_half_losses() >= 20.0, p.loss >= 1e-5, "{p:?}");
    }
    assert_eq!(planned_duration_s("bbr", 1e-8, true), 48_000);
}

#[test]
fn a_scaled_plan_shortens_every_run_and_keeps_the_grid() {
    let scaled = grid(&Plan {
        full: false,
        time_scale: 0.1,
    })
    .unwrap();
    let default = grid(&Plan::DEFAULT).unwrap();
    for (s, d) in scaled.iter().zip(&default) {
        assert_eq!(
            (s.cc.as_str(), s.loss, s.seed),
            (d.cc.as_str(), d.loss, d.seed)
        );
        assert!((s.duration_s / d.duration_s - 0.1).abs() < 1e-9);
        assert!(s.overrides.last().unwrap().starts_with("duration="));
    }
}

/// A result whose one flow sends at `bps` for `duration_s` seconds.
fn synthetic(bps: f64, duration_s: usize) -> Summary {
    let mut s = example_summary();
    s.flows.truncate(1);
    s.duration_s = duration_s as f64;
    let t: Vec<f64> = (0..duration_s).map(|i| i as f64).collect();
    let thr = vec![bps; duration_s];
    s.flows[0].series = Some(FlowSeries {
        t,
        throughput_bps: thr,
        ..FlowSeries::default()
    });
    s.flows[0].packets_lost = Some(40);
    s
}

fn synthetic_results(reno_factor: f64) -> Vec<Summary> {
    grid(&Plan::DEFAULT)
        .unwrap()
        .iter()
        .map(|p| {
            // Vegas answers loss as Reno does; the others without a function fill the path.
            let like = if p.cc == "vegas" {
                "reno"
            } else {
                p.cc.as_str()
            };
            let bps = theory_bps(like, p.loss).unwrap_or(CAPACITY_BPS)
                * if p.cc == "reno" { reno_factor } else { 1.0 };
            synthetic(bps, p.duration_s as usize)
        })
        .collect()
}

#[test]
fn claims_hold_on_the_response_functions_and_fail_at_twice_renos() {
    let e = longhaul_reproduce::experiment("response").unwrap();
    let on = (e.claims)(&Plan::DEFAULT, &synthetic_results(1.0));
    assert!(on.len() > 20, "{} claims", on.len());
    for c in &on {
        assert!(c.holds, "{} measured {}", c.claim, c.measured);
    }
    // Reno falls under half at 1e-5, the first loss rate the default resolves.
    let reno = on
        .iter()
        .find(|c| c.claim.starts_with("reno: first loss rate"))
        .unwrap();
    assert_eq!(reno.measured, 1e-5);
    let twice = (e.claims)(&Plan::DEFAULT, &synthetic_results(2.0));
    let failed: Vec<&str> = twice
        .iter()
        .filter(|c| !c.holds)
        .map(|c| c.claim.as_str())
        .collect();
    assert!(
        failed
            .iter()
            .any(|c| c.starts_with("reno, p = 1e-5: throughput"))
            && failed
                .iter()
                .any(|c| c.starts_with("reno, p = 1e-4: throughput")),
        "{failed:?}"
    );
    assert!(failed.iter().all(|c| c.starts_with("reno")), "{failed:?}");
}

/// "Fills the link" is judged against the deepest sawtooth a filling controller can have: half
/// of the path's 15,000 packets plus the scenario's 10,000-packet host queue, 83.3 % of the path,
/// × the transport's 1443/1460: 82.36 %. A run at 83 % of the card holds, one at 82 % and
/// CUBIC's 70 % do not.
#[test]
fn fills_the_link_floor_is_the_deepest_sawtooth() {
    use longhaul_reproduce::experiments::response::{FILLS_PCT, HOST_QUEUE_PACKETS, PATH_PACKETS};
    use longhaul_reproduce::experiments::table1::{HEADER_RATIO, NIC_PAYLOAD_BPS};
    use longhaul_reproduce::scenarios::builtin;
    use longhaul_reproduce::theory::{CUBIC_BETA, RENO_BETA, SCALABLE_B};
    assert!((PATH_PACKETS - 15_000.0).abs() < 1e-6);
    let c = builtin(response::SCENARIO).unwrap().load(&[]).unwrap();
    assert_eq!(
        c.scenario.flows[0].access.packets,
        Some(HOST_QUEUE_PACKETS as u64)
    );
    const { assert!(RENO_BETA <= CUBIC_BETA && RENO_BETA <= 1.0 - SCALABLE_B) };
    let want = 100.0 * HEADER_RATIO * 0.5 * 25_000.0 / 15_000.0;
    assert!((FILLS_PCT - want).abs() < 1e-9 && (FILLS_PCT - 82.36).abs() < 0.01);
    let e = longhaul_reproduce::experiment("response").unwrap();
    let points = grid(&Plan::DEFAULT).unwrap();
    let at = |share: f64| {
        let summaries: Vec<Summary> = points
            .iter()
            .map(|p| synthetic(share * NIC_PAYLOAD_BPS, p.duration_s as usize))
            .collect();
        let claims = (e.claims)(&Plan::DEFAULT, &summaries);
        let c = claims
            .into_iter()
            .find(|c| c.claim.starts_with("cubic, p = 0: fills the link"))
            .unwrap();
        assert!(c.tolerance.as_deref().unwrap().contains("deepest sawtooth"));
        c.holds
    };
    assert!(at(0.83));
    assert!(!at(0.82));
    assert!(!at(0.70));
}
