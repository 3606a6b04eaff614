//! Termination signals for commands that must clean up: SIGINT/SIGTERM/SIGHUP are blocked in
//! every thread and collected with sigtimedwait, so Ctrl-C and `kill` always reach the cleanup
//! code (children get a clean mask from std).

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

/// Lets SIGINT stop longhaul however it was started. A shell without job control (a script's
/// `longhaul perf server &`) starts background commands with SIGINT ignored, and an ignored
/// signal is discarded even where longhaul blocks it to wait for it: `kill -INT` and Ctrl-C
/// did nothing. SIGHUP stays as inherited: ignoring it is what `nohup` asks for.
pub fn stop_on_sigint() {
    // SAFETY: restores the default action of one signal; no handler is involved.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
}

/// Lets a closed pipe end a command that only prints, as it ends `ls | head -1`: quietly, by
/// SIGPIPE, instead of a panic in `println!` (Rust ignores SIGPIPE, so the write fails and the
/// print macros panic). Only for commands that hold no sockets, children or files to clean up:
/// for those, a write to a closed pipe stays an error they handle.
pub fn end_quietly_on_closed_pipe() {
    // SAFETY: restores the default action of one signal; no handler is involved.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

pub fn block_termination_signals() {
    let set = termination_set();
    // SAFETY: valid set; threads spawned afterwards inherit the mask.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
}

/// Waits up to `timeout` for a termination signal; returns its number.
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

/// For commands that only print (listings, tables): a reader that stops early (`| head`) ends
/// the process quietly, as with other Unix tools, instead of a "failed printing to stdout"
/// panic. Not for commands that must clean up on exit (emu, lab, send/recv): Rust's default of
/// ignoring SIGPIPE keeps their cleanup paths reachable.
pub fn end_quietly_on_closed_stdout() {
    // SAFETY: restoring the default disposition of one signal; no handler runs.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}
