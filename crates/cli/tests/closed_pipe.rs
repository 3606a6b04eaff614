//! A command that only prints ends quietly when its reader goes away (`longhaul cc list | head
//! -1`), by SIGPIPE as other Unix tools do, never with a panic and a backtrace.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

fn closed_reader(args: &[&str]) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end before the command has printed anything.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(
        out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
        "{args:?}: {:?}, {err}",
        out.status
    );
}

#[test]
fn printing_commands_end_quietly_on_a_closed_pipe() {
    closed_reader(&["cc", "list"]);
    closed_reader(&["cc", "trace", "reno", "--duration", "5s"]);
    closed_reader(&["completions", "bash"]);
    closed_reader(&["man"]);
    #[cfg(feature = "kernel")]
    {
        closed_reader(&["lab", "--list"]);
        closed_reader(&["kernel", "algorithms"]);
    }
}
