//! What the `longhaul sweep` tests share: the built binary and its output as text.

use std::process::{Command, Output};

/// The built `longhaul` with `args`, run to the end.
pub fn longhaul(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args(args)
        .output()
        .expect("longhaul runs")
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
