//! Termination signals for programs that must clean up (the emulator, the lab, a transfer):
//! SIGINT, SIGTERM and SIGHUP are blocked in every thread and collected with `sigtimedwait`, so
//! Ctrl-C and `kill` always reach the cleanup code instead of ending the process in the middle
//! of it (children get a clean mask from std). And the two signal dispositions a command-line
//! program sets at its start: SIGINT's default, and SIGPIPE's for programs that only print.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn termination_set() -> libc::sigset_t {
    // SAFETY: sigset manipulation on a local, zero-initialised set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGHUP);
        set
    }
}

/// Lets SIGINT stop the program however it was started. A shell without job control (a
/// script's `longhaul perf server &`) starts background commands with SIGINT ignored, and an
/// ignored signal is discarded even where it is blocked to be waited for: `kill -INT` and
/// Ctrl-C would do nothing. SIGHUP stays as inherited: ignoring it is what `nohup` asks for.
pub fn stop_on_sigint() {
    // SAFETY: restores the default action of one signal; no handler is involved.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
}

/// Lets a closed pipe end a program that only prints (listings, tables), as it ends
/// `ls | head -1`: quietly, by SIGPIPE, instead of a panic in `println!` (Rust ignores SIGPIPE,
/// so the write fails and the print macros panic). Only for programs that hold no sockets,
/// children or files to clean up (not the emulator, the lab, send or recv): for those, a write
/// to a closed pipe stays an error they handle.
pub fn end_quietly_on_closed_pipe() {
    // SAFETY: restores the default action of one signal; no handler is involved.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

/// Blocks SIGINT, SIGTERM and SIGHUP in this thread and the threads it spawns afterwards, so
/// that they wait for [`wait_signal`] instead of ending the process.
pub fn block_termination_signals() {
    let set = termination_set();
    // SAFETY: valid set; threads spawned afterwards inherit the mask.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
}

/// Waits up to `timeout` for a (blocked) termination signal; returns its number.
pub fn wait_signal(timeout: Duration) -> Option<i32> {
    let set = termination_set();
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: valid set and timespec; info may be null.
    let s = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &ts) };
    (s > 0).then_some(s)
}

/// Blocks the termination signals ([`block_termination_signals`]) and returns a flag that a
/// watcher thread sets when one arrives, for loops that poll a flag rather than wait.
pub fn stop_flag() -> Arc<AtomicBool> {
    block_termination_signals();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    std::thread::spawn(move || loop {
        if wait_signal(Duration::from_millis(500)).is_some() {
            s.store(true, Ordering::Relaxed);
        }
    });
    stop
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blocked signal raised in this thread waits, pending, until it is collected; then
    /// nothing is left.
    #[test]
    fn a_blocked_termination_signal_is_collected_not_delivered() {
        block_termination_signals();
        // SAFETY: raise(3) of a signal this thread blocks: it stays pending for the thread.
        unsafe { libc::raise(libc::SIGHUP) };
        assert_eq!(wait_signal(Duration::from_secs(1)), Some(libc::SIGHUP));
        assert_eq!(wait_signal(Duration::from_millis(1)), None);
    }
}
