//! `--report DIR`: everything about one run in one directory.

use super::figures::{figures, Run};
use super::html_report;
use crate::error::MetricsError;
use crate::summary::Summary;
use longhaul_output::{create_dir, write};
use std::path::{Path, PathBuf};

/// `--report DIR` of one run (`longhaul sim`, `longhaul lab`): `summary.json`, `report.html`,
/// each figure as `figures/<slug>.svg`, and the engine's own `files` (name and contents), in
/// that order, creating `dir` if needed. Returns the paths written.
pub fn write_report_dir(
    s: &Summary,
    dir: &Path,
    files: &[(&str, String)],
) -> Result<Vec<PathBuf>, MetricsError> {
    create_dir(dir)?;
    let mut written = vec![dir.join("summary.json"), dir.join("report.html")];
    write(&written[0], s.to_json()?.as_bytes())?;
    write(&written[1], html_report(s)?.as_bytes())?;
    written.extend(write_figures(&[("", s)], &dir.join("figures"))?);
    for (name, text) in files {
        let path = dir.join(name);
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
    fn writes_the_summary_page_figures_and_extra_files_that_read_back() {
        let dir = std::env::temp_dir().join(format!("longhaul-report-dir-{}", std::process::id()));
        let s = example_summary();
        let extra = [("drops.csv", "time_s\n".to_string())];
        let files = write_report_dir(&s, &dir.join("nested"), &extra).unwrap();
        assert_eq!(files.len(), 2 + 11 + 1);
        let back = Summary::read(&files[0]).unwrap();
        assert_eq!(back.flows[0], s.flows[0]);
        let html = std::fs::read_to_string(&files[1]).unwrap();
        assert!(html.contains("<svg"));
        assert!(files[2].starts_with(dir.join("nested/figures")));
        assert_eq!(files[13], dir.join("nested/drops.csv"));
        assert_eq!(std::fs::read_to_string(&files[13]).unwrap(), "time_s\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unwritable_directory_is_an_error_naming_it() {
        // A directory cannot be created under a regular file.
        let file =
            std::env::temp_dir().join(format!("longhaul-report-file-{}", std::process::id()));
        std::fs::write(&file, "x").unwrap();
        let e = write_report_dir(&example_summary(), &file.join("sub"), &[]).unwrap_err();
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
