//! `longhaul compare`: side-by-side output, and errors that name the file and the position.

use longhaul_metrics::example::example_summary;
use std::path::PathBuf;
use std::process::Command;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("longhaul-compare-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn longhaul(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .arg("compare")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn compares_two_summaries() {
    let d = dir("ok");
    let a = d.join("sim.json");
    let b = d.join("lab.json");
    let sa = example_summary();
    let mut sb = example_summary();
    sb.flows[0].throughput_bps *= 0.5;
    sa.write(&a).unwrap();
    sb.write(&b).unwrap();
    let out = longhaul(&[a.as_os_str(), b.as_os_str()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("sim.json") && stdout.contains("lab.json"));
    assert!(stdout.contains("flow 1 (fast)"));
    assert!(stdout.contains("-50.0 %"), "{stdout}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn malformed_json_names_the_file_line_and_column() {
    let d = dir("bad");
    let a = d.join("good.json");
    let b = d.join("broken.json");
    example_summary().write(&a).unwrap();
    std::fs::write(&b, "{\n  \"scenario\": \"x\",\n  \"mode\": sim\n}\n").unwrap();
    let out = longhaul(&[a.as_os_str(), b.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("broken.json is not a longhaul result summary"),
        "{stderr}"
    );
    assert!(stderr.contains("line 3, column 11"), "{stderr}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn missing_file_is_named() {
    let d = dir("missing");
    let a = d.join("nope.json");
    let out = longhaul(&[a.as_os_str(), a.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("cannot read") && stderr.contains("nope.json"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn report_overlays_every_run_in_one_set_of_figures() {
    let d = dir("overlay");
    let files: Vec<PathBuf> = ["sim.json", "lab.json", "other.json"]
        .iter()
        .map(|n| d.join(n))
        .collect();
    for (k, f) in files.iter().enumerate() {
        let mut s = example_summary();
        s.flows[0].throughput_bps *= 1.0 - 0.1 * k as f64;
        s.aggregate.throughput_bps *= 1.0 - 0.1 * k as f64;
        s.write(f).unwrap();
    }
    let report = d.join("report");
    let mut args: Vec<&std::ffi::OsStr> = files.iter().map(|f| f.as_os_str()).collect();
    args.push("--report".as_ref());
    args.push(report.as_os_str());
    let out = longhaul(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    let svg = std::fs::read_to_string(report.join("figures/throughput.svg")).unwrap();
    assert!(html.contains(&svg));
    // Each run's three flows, labelled by file, in the one throughput figure.
    for f in &files {
        for flow in ["flow 1 (fast)", "flow 2 (fast)", "flow 3 (reno)"] {
            let name = format!("\n{}: {flow}\n", f.display());
            assert!(svg.contains(&name), "{name}");
        }
    }
    // The headline table lists each run's aggregate throughput.
    let agg = |k: usize| {
        let s = longhaul_metrics::summary::Summary::read(&files[k]).unwrap();
        format!("{:.1}", s.aggregate.throughput_bps / 1e6)
    };
    assert_ne!(agg(0), agg(2));
    for k in 0..3 {
        assert!(
            html.contains(&format!("<td class=\"n\">{}</td>", agg(k))),
            "{}",
            agg(k)
        );
    }
    // More than two files need --report.
    let out = longhaul(&[
        files[0].as_os_str(),
        files[1].as_os_str(),
        files[2].as_os_str(),
    ]);
    assert!(!out.status.success());
    std::fs::remove_dir_all(&d).unwrap();
}
