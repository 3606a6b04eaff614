//! What longhaul's tests need from the machine, and the one rule for a test that cannot get it.
//!
//! Tests that need root (network namespaces, TUN devices, eBPF, mounts) or a system service
//! (sshd, Slurm) run for real wherever they can. Where they cannot, a test says so and is
//! skipped — unless `CI=true`: CI runs as root with every package installed, so a skip there
//! hides a broken setup and fails the test instead.

#![warn(missing_docs)]

use std::io::Write;

/// True when this process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// True when `test` may run, i.e. when what it `needs` (a phrase such as "needs root (network
/// namespaces, TUN)") is `met`. Otherwise, under `CI=true` it panics naming the test and the
/// need; elsewhere it writes `SKIPPED <test>: <needs>` to the standard error handle itself (the
/// test harness captures `eprintln!` of passing tests, and a skip must be seen) and returns
/// false.
pub fn require(test: &str, met: bool, needs: &str) -> bool {
    if met {
        return true;
    }
    if ci() {
        panic!("{test}: {needs}, and CI=true forbids skipping");
    }
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: {needs}");
    false
}

/// [`require`] for root: `needs` says what root is for.
pub fn root_or_skip(test: &str, needs: &str) -> bool {
    require(test, is_root(), needs)
}

/// True under `CI=true`.
pub fn ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_met_need_runs_whatever_the_environment() {
        assert!(require("t", true, "needs nothing"));
    }

    #[test]
    fn an_unmet_need_skips_outside_ci_and_fails_inside() {
        let outcome = std::panic::catch_unwind(|| require("t", false, "needs a unicorn"));
        if ci() {
            let message = outcome.unwrap_err();
            let text = message
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            assert_eq!(text, "t: needs a unicorn, and CI=true forbids skipping");
        } else {
            assert_eq!(outcome.ok(), Some(false));
        }
    }
}
