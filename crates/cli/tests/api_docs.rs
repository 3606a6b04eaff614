//! The API documentation: `cargo doc --workspace --no-deps` builds without a warning, and no
//! public item of a library crate goes undocumented.
//!
//! Every library crate's `lib.rs` opens with a `//!` header (what the crate is for, its main
//! types) and carries `#![warn(missing_docs)]`, so `cargo build` names an undocumented public
//! item where it is added. This test makes both rules fail the suite: it runs rustdoc over the
//! workspace with `RUSTDOCFLAGS="-D warnings -D missing_docs"`, which turns rustdoc's own
//! warnings (a broken intra-doc link, a bad code block) and every missing doc comment into
//! errors, in every crate, whatever its lib.rs says.
//!
//! The flags go to rustdoc only, never to rustc (`RUSTFLAGS` would rebuild every dependency),
//! and the run has a target directory of its own under the build's (`CARGO_TARGET_TMPDIR`):
//! rustdoc's output depends on `RUSTDOCFLAGS`, so sharing `target/doc` with a developer's own
//! `cargo doc` would make each redo the other's work. The first run checks every dependency
//! there (about two minutes on two cores); later runs redo only the crates that changed.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn rustdoc_finds_no_warning_and_no_undocumented_public_item() {
    let out = Command::new(env!("CARGO"))
        .current_dir(root())
        .args([
            "doc",
            "--workspace",
            "--no-deps",
            "--locked",
            "--target-dir",
        ])
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("api-docs"))
        .env("RUSTDOCFLAGS", "-D warnings -D missing_docs")
        // Cargo prefers this one to RUSTDOCFLAGS when it is set.
        .env_remove("CARGO_ENCODED_RUSTDOCFLAGS")
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Cargo's progress lines would bury the diagnostics: keep only those.
    let diagnostics: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("Compiling")
                || t.starts_with("Checking")
                || t.starts_with("Documenting")
                || t.starts_with("Blocking")
                || t.starts_with("Finished"))
        })
        .collect();
    assert!(
        out.status.success(),
        "`cargo doc --workspace --no-deps` with RUSTDOCFLAGS=\"-D warnings -D missing_docs\" \
         failed: document what it names (docs say what an item is, its unit and why).\n{}",
        diagnostics.join("\n")
    );
}

#[test]
fn every_library_crate_opens_with_its_purpose_and_warns_of_missing_docs() {
    let crates = root().join("crates");
    let mut libraries = 0;
    for entry in std::fs::read_dir(&crates).unwrap() {
        let lib = entry.unwrap().path().join("src/lib.rs");
        let Ok(text) = std::fs::read_to_string(&lib) else {
            continue; // a binary crate
        };
        libraries += 1;
        let name = lib
            .strip_prefix(root())
            .unwrap_or(&lib)
            .display()
            .to_string();
        assert!(
            text.trim_start().starts_with("//!"),
            "{name} must open with a `//!` header: what the crate is for, and its main types"
        );
        assert!(
            text.lines().any(|l| l.trim() == "#![warn(missing_docs)]"),
            "{name} lacks `#![warn(missing_docs)]`"
        );
    }
    assert!(libraries >= 12, "found {libraries} library crates");
}
