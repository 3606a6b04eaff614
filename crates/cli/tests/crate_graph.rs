//! docs/architecture.md's dependency graph is the workspace's: each crate's longhaul
//! dependencies as `cargo metadata` reports them.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Crate → its longhaul dependencies (normal ones), from `cargo metadata`.
fn workspace_graph() -> BTreeMap<String, Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&root)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = m["packages"].as_array().unwrap();
    let names: Vec<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    packages
        .iter()
        .map(|p| {
            let mut deps: Vec<String> = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_string())
                .filter(|d| names.contains(&d.as_str()))
                .collect();
            deps.sort();
            deps.dedup();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

/// The graph as docs/architecture.md writes it.
fn documented_graph() -> BTreeMap<String, Vec<String>> {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md"),
    )
    .unwrap();
    let block = doc
        .split("<!-- crate-graph -->")
        .nth(1)
        .and_then(|b| b.split("<!-- /crate-graph -->").next())
        .expect("docs/architecture.md has a crate-graph block");
    block
        .lines()
        .filter_map(|l| l.split_once(" → "))
        .map(|(name, deps)| {
            let deps = if deps.trim() == "—" {
                Vec::new()
            } else {
                deps.split(", ").map(|d| d.trim().to_string()).collect()
            };
            (name.trim().to_string(), deps)
        })
        .collect()
}

#[test]
fn the_documented_crate_graph_is_the_workspaces() {
    let (actual, documented) = (workspace_graph(), documented_graph());
    assert!(actual.len() > 10, "{actual:?}");
    assert_eq!(
        documented, actual,
        "docs/architecture.md's crate graph differs from `cargo metadata`"
    );
    // The layering the document describes: the emulator does not depend on the simulator,
    // and the path model sits below both engines.
    assert!(!actual["longhaul-emu"].contains(&"longhaul-sim".to_string()));
    for engine in ["longhaul-sim", "longhaul-emu"] {
        assert!(
            actual[engine].contains(&"longhaul-path".to_string()),
            "{engine}"
        );
    }
}
