//! Check where results will go before a long run starts, so that an unwritable `--json` file
//! or `--report` directory is reported at once rather than after hours of simulation.

use anyhow::{Context, Result};
use std::fs::OpenOptions;
use std::path::Path;

/// Check that `path` can be written: open it for appending (which neither truncates an
/// existing file nor changes its contents) and, if it did not exist, remove it again so a run
/// that later fails leaves nothing behind. `-` (standard output) is always writable.
pub fn check_file(path: &Path, flag: &str) -> Result<()> {
    if is_stdout(path) {
        return Ok(());
    }
    let existed = path.exists();
    OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .with_context(|| {
            format!(
                "{flag} {}: cannot write there (checked before the run, so no results are lost); \
                 choose another path",
                path.display()
            )
        })?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Write `text` (with a trailing newline) to `path`; `-` is standard output, for every flag
/// that takes an output file. A file is written through a temporary file and a rename, so a
/// crash never leaves half a result in place of a good one.
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    let mut text = text.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if is_stdout(path) {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .context("writing to standard output")?;
        return Ok(());
    }
    longhaul_metrics::summary::write_atomically(path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// Whether an output path means standard output (`-`).
pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
}

/// Create the report directory and check that a file can be written in it.
pub fn check_dir(dir: &Path, flag: &str) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "{flag} {}: cannot create the directory (checked before the run); choose another",
            dir.display()
        )
    })?;
    check_file(&dir.join("summary.json"), flag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritable_places_are_refused_and_checks_leave_no_trace() {
        let tmp = std::env::temp_dir().join(format!("longhaul-outputs-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        // A file inside a path whose parent is a regular file can never be created.
        let blocker = tmp.join("plain-file");
        std::fs::write(&blocker, "keep").unwrap();
        let e = check_file(&blocker.join("out.json"), "--json").unwrap_err();
        assert!(format!("{e:#}").contains("--json"), "{e:#}");
        let e = check_dir(&blocker.join("report"), "--report").unwrap_err();
        assert!(format!("{e:#}").contains("--report"), "{e:#}");
        // A writable new file is checked and removed again; an existing one is untouched.
        let fresh = tmp.join("new.json");
        check_file(&fresh, "--json").unwrap();
        assert!(!fresh.exists());
        check_file(&blocker, "--json").unwrap();
        assert_eq!(std::fs::read_to_string(&blocker).unwrap(), "keep");
        check_file(Path::new("-"), "--json").unwrap();
        // A report directory is created.
        let dir = tmp.join("a/b");
        check_dir(&dir, "--report").unwrap();
        assert!(dir.is_dir() && !dir.join("summary.json").exists());
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
