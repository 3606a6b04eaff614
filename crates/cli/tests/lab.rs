//! `longhaul lab` without running anything: the built-in list, and scenario errors that name the
//! field before any namespace is created (no root needed). Only in builds with the `kernel` feature.
#![cfg(feature = "kernel")]

use std::process::Command;

fn longhaul(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .arg("lab")
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .unwrap()
}

#[test]
fn lists_the_builtins_with_their_files() {
    let out = longhaul(&["--list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for (name, file) in [
        ("seed000", "scenarios/lab/seed000-1g-180ms.toml"),
        ("two-rtt", "scenarios/lab/two-rtt.toml"),
        ("mtu", "scenarios/lab/seed004-mtu.toml"),
        ("short", "scenarios/lab/short.toml"),
    ] {
        assert!(text.contains(name) && text.contains(file), "{text}");
        assert!(
            std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
                .join(file)
                .exists()
        );
    }
}

#[test]
fn refuses_what_the_lab_cannot_run_naming_the_field() {
    let cases = [
        (vec!["scenarios/parking-lot.toml"], "field `topology.kind`"),
        (
            vec!["scenarios/seed000-180ms.toml"],
            "field `flows[0].access`",
        ),
        (
            vec!["short", "--set", "flows.0.cc=\"paced:rate=50e6\""],
            "field `flows[0].cc`",
        ),
        (
            vec!["short", "--variant", "vegas"],
            "variants: fast, lion, cubic",
        ),
        (vec!["no-such-thing"], "built-ins are: seed000"),
    ];
    for (args, needle) in cases {
        let out = longhaul(&args);
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: `{err}` lacks `{needle}`");
    }
}
