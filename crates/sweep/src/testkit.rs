//! Fixtures for the unit tests: a small scenario and a sweep file over it in a fresh directory.

use std::path::PathBuf;

/// One Reno flow over 10 Mb/s × 40 ms for 2 simulated seconds: milliseconds to run.
pub const SCENARIO: &str = r#"
duration = "2s"
[[links]]
name = "b"
rate = "10mbit"
delay = "20ms"
queue = { kind = "droptail", packets = 100 }
[topology]
kind = "dumbbell"
bottleneck = "b"
[[flows]]
cc = "reno"
"#;

/// `s.toml` (SCENARIO), `t.toml` (the same with 30 ms) and `grid.toml` (`sweep`) in a
/// directory of their own, emptied first; returns the sweep file's path.
pub fn fixture(name: &str, sweep: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("longhaul-sweep-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("s.toml"), SCENARIO).unwrap();
    std::fs::write(dir.join("t.toml"), SCENARIO.replace("20ms", "30ms")).unwrap();
    std::fs::write(dir.join("grid.toml"), sweep).unwrap();
    dir.join("grid.toml")
}
