//! Output paths of the commands: checked before a long run starts, so that an unwritable
//! `--json` file or `--report` directory is reported at once rather than after hours of
//! simulation, and written by `longhaul_output`'s rules (atomic for a file, in place for a
//! device, FIFO or descriptor, `-` for standard output).

use anyhow::{Context, Result};
use std::path::Path;

pub use longhaul_output::is_stdout;

/// Check that `path` can be written, without writing it or leaving anything behind.
pub fn check_file(path: &Path, flag: &str) -> Result<()> {
    longhaul_output::check(path).with_context(|| {
        format!(
            "{flag} {} (checked before the run, so no results are lost)",
            path.display()
        )
    })
}

/// Write `text` (with a trailing newline) to `path`; `-` is standard output, for every flag
/// that takes an output file.
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    let mut text = text.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(longhaul_output::write(path, text.as_bytes())?)
}

/// Create the report directory and check that files can be written in it.
pub fn check_dir(dir: &Path, flag: &str) -> Result<()> {
    longhaul_output::create_dir(dir)
        .with_context(|| format!("{flag} {} (checked before the run)", dir.display()))
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
