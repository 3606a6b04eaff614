//! Fixtures for the unit tests: the repository's Reno dumbbell and a sweep file over it in a
//! fresh directory.

use std::path::{Path, PathBuf};

/// `scenarios/dumbbell-reno.toml`: one Reno flow over 100 Mb/s × 40 ms (60 s unless a sweep
/// sets `duration`).
pub fn scenario() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/dumbbell-reno.toml");
    std::fs::read_to_string(path).unwrap()
}

/// The sweep file of a fixture; its directory is removed when the test ends.
pub struct Fixture(PathBuf);

impl std::ops::Deref for Fixture {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Fixture {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// `s.toml` (`scenario()`), `t.toml` (the same with 30 ms) and `grid.toml` (`sweep`) in a
/// directory of their own, emptied first; returns the sweep file's path.
pub fn fixture(name: &str, sweep: &str) -> Fixture {
    let dir = std::env::temp_dir().join(format!("longhaul-sweep-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let s = scenario();
    std::fs::write(dir.join("s.toml"), &s).unwrap();
    std::fs::write(dir.join("t.toml"), s.replace("\"20ms\"", "\"30ms\"")).unwrap();
    std::fs::write(dir.join("grid.toml"), sweep).unwrap();
    Fixture(dir.join("grid.toml"))
}
