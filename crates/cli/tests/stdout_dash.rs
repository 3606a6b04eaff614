//! `-` as an output path means standard output for every command that writes JSON: nothing named
//! `-` is created, and standard output is the JSON alone.

use std::process::Command;

fn in_fresh_dir(name: &str, args: &[&str]) -> (std::path::PathBuf, std::process::Output) {
    let d = std::env::temp_dir().join(format!("longhaul-dash-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args(args)
        .current_dir(&d)
        .output()
        .unwrap();
    (d, out)
}

fn assert_json_on_stdout(d: &std::path::Path, out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!d.join("-").exists(), "a file named `-` was written");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON alone ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn reproduce_json_dash_is_stdout() {
    let (d, out) = in_fresh_dir("reproduce", &["reproduce", "lion-contest", "--json", "-"]);
    let v = assert_json_on_stdout(&d, &out);
    let runs = v.as_array().expect("an array of summaries");
    assert!(!runs.is_empty());
    assert!(runs[0]["claims"].as_array().is_some_and(|c| !c.is_empty()));
    // The claim table went to stderr.
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn sim_json_dash_is_stdout() {
    let scenario = std::env::temp_dir().join(format!("longhaul-dash-{}.toml", std::process::id()));
    std::fs::write(
        &scenario,
        r#"
duration = "1s"
[[links]]
name = "l"
rate = "10mbit"
delay = "10ms"
[topology]
kind = "dumbbell"
bottleneck = "l"
[[flows]]
cc = "reno"
"#,
    )
    .unwrap();
    let (d, out) = in_fresh_dir("sim", &["sim", scenario.to_str().unwrap(), "--json", "-"]);
    let v = assert_json_on_stdout(&d, &out);
    assert_eq!(v["mode"], "sim");
    std::fs::remove_dir_all(&d).unwrap();
    std::fs::remove_file(&scenario).unwrap();
}
