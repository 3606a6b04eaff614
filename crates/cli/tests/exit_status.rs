//! The exit-status scheme docs/cli.md documents: 0 for work done, 1 for an error (printed as
//! `longhaul: …`), 2 for a command line that does not parse (`error: …` and a usage line).

use std::process::Command;

fn longhaul(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn work_errors_and_usage_errors_have_their_own_status_and_prefix() {
    assert_eq!(longhaul(&["cc", "list"]).0, Some(0));
    let (code, err) = longhaul(&["sim", "/nonexistent/scenario.toml"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.starts_with("longhaul: "), "{err}");
    let (code, err) = longhaul(&["sim", "--no-such-flag"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("Usage:"),
        "{err}"
    );
}

#[test]
fn the_probe_server_refuses_the_probers_simulate_and_scenario() {
    for flag in [
        &["--simulate"][..],
        &["--scenario", "out.toml"],
        &["--mtu", "1400"],
    ] {
        let mut args = vec!["probe", "--serve", "--insecure", "--port", "1"];
        args.extend(flag);
        let (code, err) = longhaul(&args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("longhaul: --serve takes no HOST, --scenario, --simulate or --mtu"),
            "{args:?}: {err}"
        );
    }
}
