//! The pandas and xarray recipes of docs/sweep.md on a real sweep: `sweep_pandas.py` loads
//! `results.csv` and `results-long.csv` (from `sweep collect --long`) with pandas, pivots them
//! into xarray DataArrays with the axes as labelled dimensions, checks every route against the
//! CSV read by Python's csv module, and here its numbers are checked against the run files.
//!
//! pandas and xarray come from the project's setup (`scripts/packages.txt`: Debian's
//! python3-pandas and python3-xarray); nothing is installed here. The first of `python3` and
//! `/usr/bin/python3` that has both is used; with neither the test says it skipped, except
//! under `CI=true`, where it fails.

mod sweep_common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use sweep_common::{longhaul, text};

/// `longhaul` with `args`, which must succeed.
fn longhaul_ok(args: &[&str]) {
    let o = longhaul(args);
    assert!(o.status.success(), "longhaul {args:?}: {}", text(&o.stderr));
}

/// A python3 with pandas and xarray, if there is one.
fn python() -> Option<&'static str> {
    ["python3", "/usr/bin/python3"].into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import pandas, xarray"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn pandas_and_xarray_load_the_same_values_as_the_csv() {
    let python = python();
    if !longhaul_testenv::require(
        "pandas_and_xarray_load_the_same_values_as_the_csv",
        python.is_some(),
        "needs a python3 with pandas and xarray (scripts/setup.sh installs them)",
    ) {
        return;
    }
    let python = python.unwrap();
    let dir = std::env::temp_dir().join(format!("longhaul-sweep-pandas-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let reno = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/dumbbell-reno.toml");
    std::fs::copy(reno, dir.join("path.toml")).unwrap();
    std::fs::write(
        dir.join("grid.toml"),
        "scenario = \"path.toml\"\n[set]\nduration = \"2s\"\n\"flows.0.count\" = 2\n\
         [axes]\n\"flows.0.cc\" = [\"reno\", \"cubic\"]\n\"links.0.loss\" = [0, 1e-3]\n\
         seed = [1, 2]\n",
    )
    .unwrap();
    let out = dir.join("out");
    let (grid, out_s) = (dir.join("grid.toml"), out.to_str().unwrap());
    longhaul_ok(&["sweep", "run", grid.to_str().unwrap(), "--out", out_s, "-q"]);
    longhaul_ok(&["sweep", "collect", out_s, "--long", "-q"]);

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sweep_pandas.py");
    let o = Command::new(python)
        .arg(&script)
        .arg(&out)
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "{python} {}: {}",
        script.display(),
        text(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // 8 runs × 2 flows; the long format has every numeric column of each row.
    assert_eq!(v["rows"], 16);
    assert_eq!(v["checked"], v["long_rows"]);
    assert!(
        v["long_rows"].as_u64().unwrap() > 16 * 30,
        "{}",
        v["long_rows"]
    );
    assert_eq!(
        v["dims"],
        serde_json::json!(["flows_0_cc", "links_0_loss", "seed", "flow"])
    );
    assert_eq!(v["shape"], serde_json::json!([2, 2, 2, 2]));

    // Each cell of the throughput array is the run file's number, bit for bit.
    let mut files: BTreeMap<(String, String, u64), serde_json::Value> = BTreeMap::new();
    for e in std::fs::read_dir(out.join("runs")).unwrap() {
        let r: serde_json::Value =
            serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap();
        let a = &r["sweep"]["axes"];
        let key = (
            a["flows.0.cc"].as_str().unwrap().to_string(),
            a["links.0.loss"].to_string(),
            a["seed"].as_u64().unwrap(),
        );
        files.insert(key, r);
    }
    assert_eq!(files.len(), 8);
    let cells = v["throughput"].as_array().unwrap();
    assert_eq!(cells.len(), 16);
    let mut lossy = Vec::new();
    for c in cells {
        let loss = c["links_0_loss"].as_f64().unwrap();
        let key = (
            c["flows_0_cc"].as_str().unwrap().to_string(),
            if loss == 0.0 { "0" } else { "0.001" }.to_string(),
            c["seed"].as_u64().unwrap(),
        );
        let run = &files[&key];
        let flow = c["flow"].as_u64().unwrap() as usize;
        let want = run["flows"][flow]["throughput_bps"].as_f64().unwrap();
        let got = c["value"].as_f64().unwrap();
        assert_eq!(got.to_bits(), want.to_bits(), "{c}");
        assert!(got > 1e6 && got < 100e6, "{c}");
        if loss > 0.0 {
            lossy.push(got);
        }
    }
    // Random loss of 1e-3 costs Reno and CUBIC throughput: the labels are not shuffled.
    let clean: f64 = cells
        .iter()
        .filter(|c| c["links_0_loss"].as_f64() == Some(0.0))
        .map(|c| c["value"].as_f64().unwrap())
        .sum();
    assert!(lossy.iter().sum::<f64>() < 0.8 * clean, "{lossy:?} {clean}");
}
