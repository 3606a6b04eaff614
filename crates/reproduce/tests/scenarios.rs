//! Every built-in scenario parses and validates, on its own and with every experiment's
//! overrides, for the default, full and test plans.

use longhaul_reproduce::scenarios::{builtin, BUILTINS};
use longhaul_reproduce::{Plan, EXPERIMENTS};

#[test]
fn every_builtin_scenario_parses_and_validates() {
    assert_eq!(BUILTINS.len(), 7);
    for b in BUILTINS {
        let checked = b.load(&[]).unwrap_or_else(|e| panic!("{}: {e}", b.path()));
        assert_eq!(
            checked.name,
            b.name,
            "{}: `name` should match the file",
            b.path()
        );
        assert!(!checked.flows.is_empty(), "{} has no flows", b.path());
    }
}

#[test]
fn embedded_scenarios_are_the_files_in_scenarios_dir() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    for b in BUILTINS {
        let on_disk = std::fs::read_to_string(root.join(format!("{}.toml", b.name))).unwrap();
        assert_eq!(
            on_disk,
            b.text,
            "{} differs from the embedded copy",
            b.path()
        );
    }
}

#[test]
fn every_run_of_every_plan_validates() {
    let test_plan = Plan {
        full: false,
        time_scale: 0.1,
    };
    for plan in [Plan::DEFAULT, Plan::FULL, test_plan] {
        for e in EXPERIMENTS {
            let runs = (e.runs)(&plan);
            assert!(!runs.is_empty(), "{} has no runs", e.name);
            for run in runs {
                let b = builtin(run.scenario).expect("a built-in scenario");
                b.load(&run.overrides)
                    .unwrap_or_else(|err| panic!("{} / {}: {err}", e.name, run.label));
            }
        }
    }
}

#[test]
fn table1_runs_have_the_tables_flow_counts_and_full_durations() {
    let e = longhaul_reproduce::experiment("table1").unwrap();
    let runs = (e.runs)(&Plan::FULL);
    let expect = [
        (1, 3_600.0),
        (2, 3_600.0),
        (7, 21_600.0),
        (9, 4_030.0),
        (10, 21_600.0),
    ];
    assert_eq!(runs.len(), expect.len());
    for (run, (flows, secs)) in runs.iter().zip(expect) {
        let c = builtin(run.scenario).unwrap().load(&run.overrides).unwrap();
        assert_eq!(c.flows.len(), flows, "{}", run.label);
        assert_eq!(c.scenario.duration.0, (secs * 1e9) as u64, "{}", run.label);
    }
}
