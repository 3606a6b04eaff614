//! The PID namespace every program an emulator instance starts runs in, so that all of them end
//! with the instance, however it ends — Ctrl-C, `kill`, or SIGKILL.
//!
//! Why a PID namespace: when a PID namespace's first process (its init) exits, the kernel
//! SIGKILLs every other process in it (pid_namespaces(7)), children of children included. The
//! init here is a process forked at start that only waits on a pipe whose sole write end the
//! emulator holds (close-on-exec, so no program it starts inherits it). However the emulator
//! process ends, the kernel closes that end; init sees the hang-up and exits, and the kernel
//! kills the rest. The alternatives need the emulator to act when it ends, which SIGKILL
//! forbids: a cgroup's `cgroup.kill` must be written by someone, and `PR_SET_PDEATHSIG`
//! reaches only direct children (not a script's own children) and fires when the parent
//! *thread* exits, not the process.
//!
//! A program joins the namespace when it is forked by a thread that entered it with
//! `setns(CLONE_NEWPID)` (which changes only that thread's future children); `spawn_in` does
//! this on a thread of its own, so the caller's later children stay where they were. The
//! programs keep the host's `/proc` and see every process, as before.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::{Child, Command};

/// A PID namespace held open by its init process; dropping it ends every process inside.
#[derive(Debug)]
pub struct PidNamespace {
    init: libc::pid_t,
    /// The write end of init's pipe: closing it (drop, or the process ending) ends init.
    hangup: Option<OwnedFd>,
}

impl PidNamespace {
    /// Creates the namespace and its init process.
    pub fn create() -> io::Result<PidNamespace> {
        let mut fds = [0 as RawFd; 2];
        // SAFETY: pipe2 writes two descriptors into the array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors are fresh and owned here.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let (r, w) = (read.as_raw_fd(), write.as_raw_fd());
        // A second pipe says when init is ready (named, its inherited descriptors closed): init
        // closes its copy of the write end, and the read below sees end-of-file. Without the
        // wait a caller could look for the init before the child has run at all (it lost that
        // race under a CPU hog on each core).
        let mut ready_fds = [0 as RawFd; 2];
        // SAFETY: pipe2 writes two descriptors into the array.
        if unsafe { libc::pipe2(ready_fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors are fresh and owned here.
        let (ready_read, ready_write) = unsafe {
            (
                OwnedFd::from_raw_fd(ready_fds[0]),
                OwnedFd::from_raw_fd(ready_fds[1]),
            )
        };
        // unshare(CLONE_NEWPID) changes the calling thread's future children only: do it on a
        // thread that forks init and ends.
        let init = std::thread::scope(|s| {
            s.spawn(move || -> io::Result<libc::pid_t> {
                nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWPID)
                    .map_err(io::Error::from)?;
                // SAFETY: the child runs only async-signal-safe system calls (`init`).
                match unsafe { libc::fork() } {
                    -1 => Err(io::Error::last_os_error()),
                    0 => init(r, w),
                    pid => Ok(pid),
                }
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the namespace thread panicked")))
        })?;
        drop(read);
        drop(ready_write);
        let mut ready = File::from(ready_read);
        let mut byte = [0u8; 1];
        // Ok(0) is end-of-file: init is ready. Another process forked meanwhile may hold the
        // write end until it execs (a moment); EINTR is retried.
        loop {
            match io::Read::read(&mut ready, &mut byte) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(PidNamespace {
            init,
            hangup: Some(write),
        })
    }

    /// The init process's PID (in the caller's namespace), for `spawn_in` from elsewhere.
    pub fn init_pid(&self) -> u32 {
        self.init as u32
    }

    /// Spawns `cmd` inside this namespace.
    pub fn spawn(&self, cmd: &mut Command) -> io::Result<Child> {
        spawn_in(self.init_pid(), cmd)
    }
}

impl Drop for PidNamespace {
    /// Ends init, and with it every process in the namespace. Init is reaped on a thread of its
    /// own: it finishes exiting only once every process of the namespace has been reaped,
    /// including programs whose parent is this process and which the caller may reap later.
    fn drop(&mut self) {
        self.hangup = None;
        let init = self.init;
        std::thread::spawn(move || {
            let mut status = 0;
            // SAFETY: waits for our own child.
            unsafe { libc::waitpid(init, &mut status, 0) };
        });
    }
}

/// Spawns `cmd` inside the PID namespace whose init is `init` (a PID of the caller's
/// namespace), from any process of the emulator's user: `longhaul emu exec` uses it.
pub fn spawn_in(init: u32, cmd: &mut Command) -> io::Result<Child> {
    let ns = File::open(format!("/proc/{init}/ns/pid"))?;
    std::thread::scope(|s| {
        s.spawn(|| {
            nix::sched::setns(ns.as_fd(), nix::sched::CloneFlags::CLONE_NEWPID)
                .map_err(io::Error::from)?;
            cmd.spawn()
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the spawning thread panicked")))
    })
}

/// The namespace's init: closes everything but its end of the pipe, then reaps orphans until
/// the pipe hangs up, and exits (the kernel then kills the namespace). Only async-signal-safe
/// calls: it runs in a child forked from a multi-threaded process.
fn init(read: RawFd, write: RawFd) -> ! {
    // SAFETY: plain system calls on descriptors and memory this process owns.
    unsafe {
        libc::close(write);
        let name = b"longhaul-init\0";
        libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0);
        // TUN devices and sockets inherited from the emulator must not outlive it here; this
        // also closes the ready pipe's write end, which tells `create` that init is ready.
        let mut fd = 3;
        while fd < 65_536 {
            if fd != read {
                libc::close(fd);
            }
            fd += 1;
        }
        loop {
            let mut p = libc::pollfd {
                fd: read,
                events: libc::POLLIN,
                revents: 0,
            };
            let n = libc::poll(&mut p, 1, 200);
            if n > 0 && p.revents != 0 {
                libc::_exit(0);
            }
            // Orphans of the namespace are re-parented here: reap them.
            while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) > 0 {}
        }
    }
}

/// Is `pid` alive and an init of ours? (Its command name is `longhaul-init`.)
pub fn is_init(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "longhaul-init")
}

/// Ends the namespace of init `pid` from another process (`longhaul emu cleanup`): SIGKILL to
/// init makes the kernel kill the rest.
pub fn kill_init(pid: u32) {
    if is_init(pid) {
        // SAFETY: kill(2) of a process checked to be one of our inits.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    }
}

/// Runs `child` (if any) until it exits (its exit code), a signal arrives (128 + the signal),
/// or `deadline` passes (`None`). `signal` waits up to the time given for a termination
/// signal; on one the child gets SIGTERM, then SIGKILL after 2 s.
pub fn supervise(
    mut child: Option<Child>,
    deadline: Option<std::time::Instant>,
    signal: &mut dyn FnMut(std::time::Duration) -> Option<i32>,
) -> io::Result<Option<i32>> {
    use std::time::{Duration, Instant};
    loop {
        if let Some(sig) = signal(Duration::from_millis(100)) {
            if let Some(c) = child.as_mut() {
                // SAFETY: plain kill(2) on our own child.
                unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
                let t = Instant::now();
                while t.elapsed() < Duration::from_secs(2) {
                    if c.try_wait()?.is_some() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                let _ = c.kill();
                let _ = c.wait();
            }
            return Ok(Some(128 + sig));
        }
        if let Some(c) = child.as_mut() {
            if let Some(status) = c.try_wait()? {
                return Ok(Some(status.code().unwrap_or(1)));
            }
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn alive(pid: u32) -> bool {
        // A zombie has no /proc/PID/ns links to follow but still has a stat; state Z is dead.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| !s[s.rfind(')').unwrap_or(0)..].starts_with(") Z"))
    }

    fn gone_within(pid: u32, limit: Duration) -> bool {
        let t = Instant::now();
        while t.elapsed() < limit {
            if !alive(pid) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    /// Needs CAP_SYS_ADMIN (unshare of a PID namespace); skipped otherwise.
    #[test]
    fn dropping_the_namespace_ends_a_program_and_its_children() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("SKIPPED: needs root");
            return;
        }
        let ns = PidNamespace::create().unwrap();
        assert!(is_init(ns.init_pid()));
        // A shell that starts a grandchild and prints its PID: PDEATHSIG would miss it.
        let mut child = ns
            .spawn(
                Command::new("sh")
                    .args(["-c", "sleep 600 & echo $!; wait"])
                    .stdout(std::process::Stdio::piped()),
            )
            .unwrap();
        let mut line = String::new();
        use std::io::BufRead;
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // $! is the grandchild's PID inside the namespace; find it in ours by its parent.
        let inner: u32 = line.trim().parse().unwrap();
        assert!(
            inner < 100,
            "PIDs inside a fresh namespace are small: {inner}"
        );
        let sh = child.id();
        let sleep: u32 = std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children"))
            .unwrap()
            .split_whitespace()
            .next()
            .expect("the shell's child")
            .parse()
            .unwrap();
        assert!(alive(sh) && alive(sleep));
        let init = ns.init_pid();
        drop(ns);
        assert!(
            gone_within(sh, Duration::from_secs(5)),
            "the program outlived it"
        );
        assert!(
            gone_within(sleep, Duration::from_secs(5)),
            "its child outlived it"
        );
        let _ = child.wait();
        assert!(
            gone_within(init, Duration::from_secs(5)),
            "init outlived it"
        );
    }
}
