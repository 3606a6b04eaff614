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
