//! This binary's identity (version and git commit, from `build.rs`) and the provenance every
//! summary it writes carries (`longhaul_metrics::provenance`).

use longhaul_metrics::provenance::{Build, Provenance, ScenarioFile};

/// The package version and the commit the binary was built from ("unknown" without git).
pub const BUILD: Build = Build {
    version: env!("CARGO_PKG_VERSION"),
    commit: env!("LONGHAUL_GIT_COMMIT"),
};

/// What `longhaul --version` prints after the program name.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("LONGHAUL_GIT_COMMIT"),
    ")"
);

/// This run's provenance, without a scenario.
pub fn capture() -> Provenance {
    Provenance::capture(BUILD)
}

/// This run's provenance with a scenario given as its text: a built-in one, or a file's text
/// as it was read for the run.
pub fn with_text(path: &str, text: &str) -> Provenance {
    capture().with_scenario(ScenarioFile::of_content(path, text.as_bytes()))
}

/// The build script's commit lookup, tested here.
#[cfg(test)]
#[path = "build_commit.rs"]
mod build_commit;

#[cfg(test)]
mod tests {
    use super::build_commit;
    use super::*;
    use std::path::Path;

    #[test]
    fn the_build_records_the_commit_or_says_unknown() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        match build_commit::commit_of(here) {
            // The build script reruns when HEAD moves, so the binary names the checked-out
            // commit (unless a packager named one).
            Some(c) if std::env::var_os("LONGHAUL_GIT_COMMIT").is_none() => {
                assert_eq!(BUILD.commit, c);
                assert!(
                    c.len() == 40 && c.chars().all(|c| c.is_ascii_hexdigit()),
                    "{c}"
                );
            }
            Some(_) => {}
            None => assert_eq!(BUILD.commit, "unknown"),
        }
        assert!(VERSION.starts_with(env!("CARGO_PKG_VERSION")) && VERSION.contains(BUILD.commit));
    }

    #[test]
    fn a_tree_without_git_history_has_no_commit() {
        // A source tarball unpacked outside any repository.
        let dir = std::env::temp_dir().join(format!("longhaul-tarball-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(build_commit::commit_of(&dir), None);
        assert!(build_commit::watched_files(&dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn built_in_scenarios_are_hashed_from_their_text() {
        let p = with_text("scenarios/lab/x.toml", "abc");
        let s = p.scenario.unwrap();
        assert_eq!(s.path, "scenarios/lab/x.toml");
        assert_eq!(&s.sha256[..8], "ba7816bf");
        assert_eq!(p.commit, BUILD.commit);
    }
}
