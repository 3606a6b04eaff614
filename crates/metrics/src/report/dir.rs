//! `--report DIR`: everything about one run in one directory.

use super::figures::{figures, Run};
use super::{html_report, summary_table};
use crate::error::MetricsError;
use crate::summary::Summary;
use longhaul_output::{create_dir, write};
use std::path::{Path, PathBuf};

/// Write `summary.json`, `summary.txt` (the terminal table) and `report.html` into `dir`,
/// creating it if needed. Returns the paths written, in that order.
pub fn write_report_dir(s: &Summary, dir: &Path) -> Result<Vec<PathBuf>, MetricsError> {
    create_dir(dir)?;
    let files = [
        (dir.join("summary.json"), s.to_json()?),
        (dir.join("summary.txt"), summary_table(s)),
        (dir.join("report.html"), html_report(s)?),
    ];
    let mut written = Vec::new();
    for (path, text) in files {
        write(&path, text.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

/// Export each drawn figure as `dir/<slug>.svg` for a paper (figures that lack their series are
/// skipped). Returns the paths written.
pub fn write_figures(runs: &[Run], dir: &Path) -> Result<Vec<PathBuf>, MetricsError> {
    create_dir(dir)?;
    let mut written = Vec::new();
    for f in figures(runs)? {
        if let Some(svg) = f.svg {
            let path = dir.join(format!("{}.svg", f.slug));
            write(&path, svg.as_bytes())?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::example_summary;

    #[test]
    fn writes_three_files_that_read_back() {
        let dir = std::env::temp_dir().join(format!("longhaul-report-dir-{}", std::process::id()));
        let s = example_summary();
        let files = write_report_dir(&s, &dir.join("nested")).unwrap();
        assert_eq!(files.len(), 3);
        let back = Summary::read(&files[0]).unwrap();
        assert_eq!(back.flows[0], s.flows[0]);
        let txt = std::fs::read_to_string(&files[1]).unwrap();
        assert!(txt.starts_with("example-3flows"));
        let html = std::fs::read_to_string(&files[2]).unwrap();
        assert!(html.contains("<svg"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unwritable_directory_is_an_error_naming_it() {
        // A directory cannot be created under a regular file.
        let file =
            std::env::temp_dir().join(format!("longhaul-report-file-{}", std::process::id()));
        std::fs::write(&file, "x").unwrap();
        let e = write_report_dir(&example_summary(), &file.join("sub")).unwrap_err();
        assert!(e.to_string().contains("cannot write"), "{e}");
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn figures_export_as_svg_files_equal_to_the_reports() {
        let dir = std::env::temp_dir().join(format!("longhaul-figures-{}", std::process::id()));
        let s = example_summary();
        let files = write_figures(&[("", &s)], &dir).unwrap();
        let html = html_report(&s).unwrap();
        assert_eq!(files.len(), 11);
        for f in &files {
            let svg = std::fs::read_to_string(f).unwrap();
            assert!(
                svg.starts_with("<svg") && html.contains(&svg),
                "{}",
                f.display()
            );
        }
        assert!(dir.join("cwnd.svg").is_file() && dir.join("throughput-delay.svg").is_file());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
