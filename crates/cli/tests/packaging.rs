//! Packaging: every crate's metadata and the license files it names, and the simulator-only
//! build (`--no-default-features`), which leaves out everything that needs the eBPF toolchain
//! (scripts/check-sim-only.sh builds it with clang and bpftool out of reach).

use std::path::Path;
use std::process::Command;

fn cargo(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_crate_has_its_metadata_and_the_license_files_exist() {
    let meta: serde_json::Value =
        serde_json::from_str(&cargo(&["metadata", "--no-deps", "--format-version", "1"])).unwrap();
    let root = Path::new(meta["workspace_root"].as_str().unwrap());
    let packages = meta["packages"].as_array().unwrap();
    assert!(packages.len() >= 12, "{} packages", packages.len());
    for p in packages {
        let name = p["name"].as_str().unwrap();
        assert_eq!(p["license"], "GPL-2.0-only OR MIT", "{name}");
        for field in ["description", "readme"] {
            let v = p[field].as_str().unwrap_or("");
            assert!(!v.is_empty(), "{name} has no {field}");
        }
        assert!(
            Path::new(p["readme"].as_str().unwrap()).is_file(),
            "{name}: readme missing"
        );
        assert!(
            !p["keywords"].as_array().unwrap().is_empty(),
            "{name} has no keywords"
        );
    }
    // The two licenses of the SPDX expression, and the file that names both.
    let read = |f: &str| std::fs::read_to_string(root.join(f)).unwrap();
    let gpl = read("LICENSE-GPL-2.0");
    assert!(gpl.contains("GNU GENERAL PUBLIC LICENSE") && gpl.contains("Version 2, June 1991"));
    assert!(read("LICENSE-MIT").starts_with("MIT License"));
    let license = read("LICENSE");
    assert!(license.contains("GPL-2.0-only OR MIT"));
    assert!(license.contains("LICENSE-GPL-2.0") && license.contains("LICENSE-MIT"));
}

/// The packages of longhaul's dependency tree (normal and build dependencies).
fn tree(features: &[&str]) -> String {
    let mut args = vec![
        "tree",
        "--locked",
        "-p",
        "longhaul",
        "-e",
        "normal,build",
        "--prefix",
        "none",
    ];
    args.extend_from_slice(features);
    cargo(&args)
}

#[test]
fn no_default_features_needs_no_ebpf_toolchain() {
    // libbpf-cargo drives clang; longhaul-kernel's build script runs bpftool and clang.
    let needs_toolchain = [
        "longhaul-kernel ",
        "longhaul-lab ",
        "libbpf-cargo ",
        "libbpf-sys ",
    ];
    let full = tree(&[]);
    for name in needs_toolchain {
        assert!(full.contains(name), "the default build lost `{name}`");
    }
    let sim_only = tree(&["--no-default-features"]);
    for name in needs_toolchain {
        assert!(
            !sim_only.contains(name),
            "the simulator-only build still has `{name}`"
        );
    }
    for name in ["longhaul-sim ", "longhaul-emu ", "longhaul-reproduce "] {
        assert!(
            sim_only.contains(name),
            "the simulator-only build lacks `{name}`"
        );
    }
}
