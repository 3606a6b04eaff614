//! A lab sweep as a user runs it: `scenarios/sweeps/lab-grid.toml` (the kernel's CUBIC and
//! Reno × a 100-packet and a 1000-packet drop-tail buffer on a 100 Mb/s, 100 ms path, 5 s
//! each) with `sweep run --engine lab`, then the same `collect` and `show` as a simulator
//! sweep. Four real runs one after another: about 25 s.
//!
//! It needs root (network namespaces, TUN devices). Without root it prints SKIPPED and
//! passes, except under `CI=true`, where it fails.

mod sweep_common;

use std::path::Path;
use sweep_common::{longhaul, text};

#[test]
fn a_controller_by_buffer_grid_runs_on_kernel_stacks_and_collects() {
    let test = "a_controller_by_buffer_grid_runs_on_kernel_stacks_and_collects";
    if !longhaul_testenv::root_or_skip(test, "needs root (network namespaces, TUN devices)") {
        return;
    }
    let grid = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/sweeps/lab-grid.toml");
    let grid = grid.to_str().unwrap();
    let out = std::env::temp_dir().join(format!("longhaul-sweep-lab-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let out_s = out.to_str().unwrap();

    let r = longhaul(&[
        "sweep", "run", grid, "--engine", "lab", "--out", out_s, "-q",
    ]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    // Run again: nothing left to do.
    let again = longhaul(&["sweep", "run", grid, "--engine", "lab", "--out", out_s]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(
        text(&again.stdout).contains("4 runs: 4 finished before, 0 ran now, 0 failed"),
        "{}",
        text(&again.stdout)
    );
    // The simulator's results may not join the lab's.
    let sim = longhaul(&["sweep", "run", grid, "--out", out_s, "-q"]);
    assert!(!sim.status.success());
    assert!(
        text(&sim.stderr)
            .contains("holds results of the `lab` engine, and this sweep runs with `sim`"),
        "{}",
        text(&sim.stderr)
    );

    let c = longhaul(&["sweep", "collect", out_s, "--long", "-q"]);
    assert!(c.status.success(), "{}", text(&c.stderr));
    assert!(
        text(&c.stdout).starts_with("collected 4 of 4 runs"),
        "{}",
        text(&c.stdout)
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    // No cell of these rows holds a comma or a quote.
    let mut lines = csv.lines().map(|l| l.split(',').collect::<Vec<_>>());
    let head = lines.next().unwrap();
    assert_eq!(head[..3], ["index", "flows_0_cc", "links_0_queue_packets"]);
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let rows: Vec<Vec<&str>> = lines.collect();
    let cells: Vec<(&str, &str, &str)> = rows.iter().map(|r| (r[1], r[2], r[col("cc")])).collect();
    assert_eq!(
        cells,
        [
            ("cubic", "100", "cubic"),
            ("cubic", "1000", "cubic"),
            ("reno", "100", "reno"),
            ("reno", "1000", "reno")
        ]
    );
    // Real stacks: a 1.2-BDP buffer keeps the link busy; a tenth of it costs throughput.
    let util: Vec<f64> = rows
        .iter()
        .map(|r| r[col("utilization")].parse().unwrap())
        .collect();
    for (small, big) in [(util[0], util[1]), (util[2], util[3])] {
        assert!(big > 0.6 && small < big, "utilization {util:?}");
    }
    // Every result is the lab's: mode `lab`, each with 5 s of measurement.
    for e in std::fs::read_dir(out.join("runs")).unwrap() {
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap();
        assert_eq!(v["mode"], "lab", "{}", v["sweep"]);
        assert_eq!(v["duration_s"], 5.0);
    }
    assert!(out.join("report.html").exists() && out.join("results-long.csv").exists());
    let s = longhaul(&[
        "sweep",
        "show",
        out_s,
        "--where",
        "cc=reno",
        "--columns",
        "index,cc",
    ]);
    assert_eq!(
        text(&s.stdout),
        "index  cc\n-----------\n    2  reno\n    3  reno\n2 rows; 4 of 4 runs\n"
    );
    let _ = std::fs::remove_dir_all(&out);
}
