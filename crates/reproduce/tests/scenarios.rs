//! Every built-in scenario parses and validates, on its own and with every experiment's
//! overrides, for the default, full and test plans.

use longhaul_reproduce::scenarios::{builtin, BUILTINS};
use longhaul_reproduce::{Plan, EXPERIMENTS};

#[test]
fn every_builtin_scenario_parses_and_validates() {
    assert_eq!(BUILTINS.len(), 10);
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
    use longhaul_reproduce::experiments::table1::{CONTRAST_DATA, CONTROLLERS};
    // Every controller on every row, FAST first, then FAST and Reno with random loss on the two
    // 180 ms rows for the slide's hour, then the data-only controllers likewise.
    let table = CONTROLLERS.len() * expect.len();
    assert_eq!(runs.len(), table + 4 + 2 * CONTRAST_DATA.len());
    for (i, run) in runs.iter().enumerate() {
        let c = builtin(run.scenario).unwrap().load(&run.overrides).unwrap();
        let (cc, (flows, secs), loss) = if i < table {
            (CONTROLLERS[i / expect.len()], expect[i % expect.len()], 0.0)
        } else if i < table + 4 {
            let k = i - table;
            (["fast", "reno"][k % 2], (k / 2 + 1, 3_600.0), 1e-6)
        } else {
            let k = i - table - 4;
            let n = CONTRAST_DATA.len();
            (CONTRAST_DATA[k % n], (k / n + 1, 3_600.0), 1e-6)
        };
        assert_eq!(c.flows.len(), flows, "{}", run.label);
        assert!(
            c.flows.iter().all(|f| f.cc.algorithm == cc),
            "{}",
            run.label
        );
        assert_eq!(c.scenario.duration.0, (secs * 1e9) as u64, "{}", run.label);
        assert_eq!(c.scenario.links[0].loss.mean(), loss, "{}", run.label);
    }
}

/// By default the data-only contrast runs last 24 s (one expected loss per flow in the averaged
/// half at the card's 83,333 packets/s), FAST's and Reno's 120 s.
#[test]
fn table1_contrast_runs_default_lengths() {
    use longhaul_reproduce::experiments::table1::{CONTRAST_DATA, CONTROLLERS};
    let e = longhaul_reproduce::experiment("table1").unwrap();
    let runs = (e.runs)(&Plan::DEFAULT);
    let first = CONTROLLERS.len() * 5;
    let secs: Vec<u64> = runs[first..]
        .iter()
        .map(|r| {
            let c = builtin(r.scenario).unwrap().load(&r.overrides).unwrap();
            c.scenario.duration.0 / 1_000_000
        })
        .collect();
    let mut want = vec![120_000; 4];
    want.extend(vec![24_000; 2 * CONTRAST_DATA.len()]);
    assert_eq!(secs, want);
}

#[test]
fn slide4_runs_are_linux_2_4_on_the_180ms_path_scaled_by_ten_by_default() {
    use longhaul_sim::scenario::{OnFull, Stack, TransportKind};
    let e = longhaul_reproduce::experiment("slide4").unwrap();
    // (plan, card Mb/s, host queues, path Mb/s, path buffer, cross Mb/s, seconds)
    let plans = [
        (
            Plan::FULL,
            1_000.0,
            [100, 10_000],
            2_500.0,
            4_000,
            125.0,
            3_600.0,
        ),
        (Plan::DEFAULT, 100.0, [10, 1_000], 250.0, 400, 12.5, 360.0),
    ];
    for (plan, card, queues, path, buffer, cross, secs) in plans {
        let runs = (e.runs)(&plan);
        // Reno's runs (the claims), then FAST's on the same hosts and path (their controls).
        let expect = ["reno", "fast"].into_iter().flat_map(|cc| {
            [
                (cc, 1, queues[0]),
                (cc, 1, queues[1]),
                (cc, 2, queues[0]),
                (cc, 2, queues[1]),
            ]
        });
        assert_eq!(runs.len(), 8);
        for (run, (cc, flows, txq)) in runs.iter().zip(expect) {
            let c = builtin(run.scenario).unwrap().load(&run.overrides).unwrap();
            let sc = &c.scenario;
            assert_eq!(c.flows.len(), flows, "{}", run.label);
            assert_eq!(sc.transport, TransportKind::Model, "{}", run.label);
            let access = &sc.flows[0].access;
            assert_eq!(access.on_full, OnFull::Drop, "{}", run.label);
            assert_eq!(access.packets, Some(txq), "{}", run.label);
            assert_eq!(access.rate.unwrap().0, card * 1e6, "{}", run.label);
            assert_eq!(sc.links[0].rate.0, path * 1e6, "{}", run.label);
            assert_eq!(sc.links[0].queue.packets, Some(buffer), "{}", run.label);
            assert_eq!(sc.links[0].delay.0, 90_000_000, "{}", run.label);
            assert_eq!(sc.cross_traffic[0].rate.0, cross * 1e6, "{}", run.label);
            assert_eq!(sc.duration.0, (secs * 1e9) as u64, "{}", run.label);
            assert_eq!(c.flows[0].cc.algorithm.to_string(), cc, "{}", run.label);
            assert_eq!(sc.flows[0].stack, Stack::Linux24, "{}", run.label);
        }
    }
}
