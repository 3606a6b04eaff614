//! Records the git commit the binary is built from as `LONGHAUL_GIT_COMMIT` ("unknown" from a
//! source tarball); `longhaul --version` and every summary's provenance print it.

#[path = "src/build_commit.rs"]
mod build_commit;

fn main() {
    let dir =
        std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    println!("cargo:rerun-if-env-changed=LONGHAUL_GIT_COMMIT");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/build_commit.rs");
    let commit = match std::env::var("LONGHAUL_GIT_COMMIT") {
        Ok(c) if !c.trim().is_empty() => c.trim().to_string(),
        _ => build_commit::commit_of(&dir).unwrap_or_else(|| "unknown".to_string()),
    };
    for f in build_commit::watched_files(&dir) {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    println!("cargo:rustc-env=LONGHAUL_GIT_COMMIT={commit}");
}
