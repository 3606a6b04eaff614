//! Every summary records where it came from: `sim --json` and `--report`, checked against the
//! scenario file's bytes, `uname -r`, `/proc/cpuinfo` and `longhaul --version`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn longhaul(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args(args)
        .output()
        .unwrap()
}

fn scenario() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/dumbbell-reno.toml")
}

fn tool(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn version_names_the_commit() {
    let out = longhaul(&["--version"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let commit = text
        .split("(commit ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap_or_else(|| panic!("no commit in `{text}`"));
    assert!(text.starts_with(&format!("longhaul {} ", env!("CARGO_PKG_VERSION"))));
    let head = tool(
        "git",
        &["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"],
    );
    match head {
        Some(h) if std::env::var_os("LONGHAUL_GIT_COMMIT").is_none() => assert_eq!(commit, h),
        _ => assert!(!commit.is_empty()),
    }
}

#[test]
fn sim_summary_and_report_record_command_scenario_build_kernel_and_cpu() {
    let dir = std::env::temp_dir().join(format!("longhaul-prov-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("s.json");
    let report = dir.join("report");
    let file = scenario();
    let args = [
        "sim",
        file.to_str().unwrap(),
        "--duration",
        "1s",
        "--set",
        "flows.0.cc=cubic",
        "--quiet",
        "--json",
        json.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ];
    let out = longhaul(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let p = &s["provenance"];
    let command: Vec<&str> = p["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(&command[1..], &args[..], "the exact command line");
    assert_eq!(p["scenario"]["path"], file.to_str().unwrap());
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(p["scenario"]["bytes"], bytes.len() as u64);
    if let Some(sum) = tool("sha256sum", &[file.to_str().unwrap()]) {
        assert_eq!(
            p["scenario"]["sha256"],
            sum.split_whitespace().next().unwrap()
        );
    }
    if let Some(release) = tool("uname", &["-r"]) {
        assert_eq!(p["kernel"], release);
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = p["cpu"].as_str().unwrap();
    assert!(cpu == "unknown" || cpuinfo.contains(cpu), "{cpu}");
    assert_eq!(p["version"], env!("CARGO_PKG_VERSION"));
    let version = String::from_utf8_lossy(&longhaul(&["--version"]).stdout).to_string();
    assert!(version.contains(p["commit"].as_str().unwrap()), "{version}");
    // The report directory's summary is the same, and its page prints the provenance.
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(&again["provenance"], p);
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(html.contains("<h2>Provenance</h2>"));
    assert!(html.contains(p["scenario"]["sha256"].as_str().unwrap()));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The scenario is read once, before the run, and the provenance hashes exactly those bytes:
/// a scenario that can be read only once (a named pipe, as `<(…)` gives) still yields a
/// result, where a second read after the run would wait for a writer that never comes.
#[test]
fn sim_reads_its_scenario_once_and_hashes_what_it_ran() {
    let dir = std::env::temp_dir().join(format!("longhaul-prov-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("scenario.toml");
    let json = dir.join("s.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let bytes = std::fs::read(scenario()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args(["sim", fifo.to_str().unwrap(), "--duration", "1s", "--quiet"])
        .arg("--json")
        .arg(&json)
        .spawn()
        .unwrap();
    // Opening the pipe for writing waits for the reader: the run has started.
    std::fs::write(&fifo, &bytes).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("`sim` read its scenario a second time (it waits on the empty pipe)");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success());
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let p = &s["provenance"]["scenario"];
    assert_eq!(p["bytes"], bytes.len() as u64);
    if let Some(sum) = tool("sha256sum", &[scenario().to_str().unwrap()]) {
        assert_eq!(p["sha256"], sum.split_whitespace().next().unwrap());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
