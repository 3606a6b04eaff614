//! Network namespaces through `ip netns`, so they are visible to `ip netns exec` and to users.
//!
//! A named namespace is a bind mount under /run/netns; it outlives our process, which is why
//! `state` records every name before it is created. Entering one from a thread uses `setns(2)`
//! (network namespaces are per thread), so sockets and TUN devices opened by that thread belong to
//! the namespace.

use super::SysError;
use nix::sched::{setns, CloneFlags};
use std::fs::File;
use std::process::{Command, Stdio};

/// Runs `ip ARGS`, turning a failure into an error that quotes ip's message.
pub fn ip(args: &[&str]) -> Result<(), SysError> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                SysError::NoIp
            } else {
                SysError::io("running ip", e)
            }
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(SysError::Ip {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

/// Path of a named namespace's bind mount.
pub fn path(name: &str) -> String {
    format!("/run/netns/{name}")
}

/// Whether a network namespace of this name exists (its bind mount under `/run/netns`).
pub fn exists(name: &str) -> bool {
    std::path::Path::new(&path(name)).exists()
}

/// Creates a named namespace with its loopback up.
pub fn add(name: &str) -> Result<(), SysError> {
    ip(&["netns", "add", name])?;
    ip(&["-n", name, "link", "set", "lo", "up"])
}

/// Deletes a named namespace (and with it every device still inside). Missing is not an error.
pub fn delete(name: &str) -> Result<(), SysError> {
    if !exists(name) {
        return Ok(());
    }
    ip(&["netns", "delete", name])
}

/// PIDs of the processes (other than this one) whose network namespace is the named one, as
/// `ip netns pids` finds them: same device and inode as the namespace's bind mount.
pub fn pids_in(name: &str) -> Vec<u32> {
    use std::os::unix::fs::MetadataExt;
    let Ok(target) = std::fs::metadata(path(name)) else {
        return Vec::new();
    };
    let me = std::process::id();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::metadata(format!("/proc/{pid}/ns/net"))
                .is_ok_and(|m| m.dev() == target.dev() && m.ino() == target.ino())
        })
        .collect()
}

/// SIGKILLs every process in the named namespace (before deleting it: a namespace whose
/// name is gone lives on as long as a process is in it).
pub fn kill_all_in(name: &str) {
    for pid in pids_in(name) {
        // SAFETY: kill(2); the PID was in our namespace a moment ago.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    }
}

/// Names of all namespaces under /run/netns.
pub fn list() -> Vec<String> {
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Moves the calling thread into the named namespace (for the rest of its life).
pub fn enter(name: &str) -> Result<(), SysError> {
    let f =
        File::open(path(name)).map_err(|e| SysError::io(format!("opening {}", path(name)), e))?;
    setns(f, CloneFlags::CLONE_NEWNET)
        .map_err(|e| SysError::io(format!("entering namespace {name}"), e.into()))
}

/// Runs `f` on a fresh thread inside namespace `name` (the caller's namespace is untouched).
pub fn run_in<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, SysError> {
    let name = name.to_string();
    std::thread::spawn(move || -> Result<T, SysError> {
        enter(&name)?;
        Ok(f())
    })
    .join()
    .map_err(|_| SysError::io("namespace thread", std::io::Error::other("panicked")))?
}

/// Steers the receive processing of packets written into `dev` (of namespace `ns`, or of this
/// one) to `cpus`: Receive Packet Steering (`/sys/class/net/DEV/queues/rx-0/rps_cpus`,
/// Documentation/networking/scaling.rst). Each namespace has its own view of
/// `/sys/class/net`, which `ip netns exec` mounts; so the write goes through it.
pub fn steer_receive(ns: Option<&str>, dev: &str, cpus: &[usize]) -> Result<(), SysError> {
    let mask = cpu_mask(cpus);
    let path = format!("/sys/class/net/{dev}/queues/rx-0/rps_cpus");
    let script = format!("echo {mask} > {path}");
    let mut c = match ns {
        Some(n) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", n, "sh", "-c", &script]);
            c
        }
        None => {
            let mut c = Command::new("sh");
            c.args(["-c", &script]);
            c
        }
    };
    let out = c
        .stdin(Stdio::null())
        .output()
        .map_err(|e| SysError::io(format!("writing {path}"), e))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(SysError::io(
            format!("writing {mask} to {path}"),
            std::io::Error::other(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        ))
    }
}

/// A CPU set in the kernel's sysfs format: 32-bit hex words, most significant first,
/// comma-separated (`rps_cpus`, `smp_affinity`).
fn cpu_mask(cpus: &[usize]) -> String {
    let mut words = vec![0u32; cpus.iter().max().map_or(1, |m| m / 32 + 1)];
    for &c in cpus {
        words[c / 32] |= 1 << (c % 32);
    }
    words
        .iter()
        .rev()
        .map(|w| format!("{w:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::cpu_mask;

    #[test]
    fn cpu_masks_are_hex_words_most_significant_first() {
        assert_eq!(cpu_mask(&[0]), "00000001");
        assert_eq!(cpu_mask(&[1, 3]), "0000000a");
        assert_eq!(cpu_mask(&[31]), "80000000");
        assert_eq!(cpu_mask(&[0, 33]), "00000002,00000001");
        assert_eq!(cpu_mask(&[]), "00000000");
    }
}
