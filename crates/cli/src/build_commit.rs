//! The git commit a build comes from, shared by `build.rs` (which records it) and the tests.
//!
//! Built from a source tarball (no `.git`) or without git installed, the commit is unknown;
//! packagers can name it with `LONGHAUL_GIT_COMMIT`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `git` run in `dir`, its trimmed output when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

/// The commit checked out at `dir` (full hex), or `None` outside a git work tree. Uncommitted
/// changes are not flagged: cargo reruns the build script only when the commit changes.
pub fn commit_of(dir: &Path) -> Option<String> {
    // A tarball unpacked inside some other repository must not take that repository's commit.
    let top = PathBuf::from(git(dir, &["rev-parse", "--show-toplevel"])?);
    let dir = dir.canonicalize().ok()?;
    if !dir.starts_with(top.canonicalize().ok()?) {
        return None;
    }
    git(&dir, &["rev-parse", "HEAD"])
}

/// Files whose change means a new commit is checked out: HEAD, the branch it names, and
/// packed-refs (for `cargo:rerun-if-changed`).
pub fn watched_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let path = |p: &str| git(dir, &["rev-parse", "--git-path", p]).map(|f| dir.join(f));
    files.extend(path("HEAD"));
    files.extend(path("packed-refs"));
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        files.extend(path(&branch));
    }
    files
}
