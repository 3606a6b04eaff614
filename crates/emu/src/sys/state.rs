//! State files: what each running emulator created, so nothing outlives a killed run.
//!
//! Before creating anything, an instance writes `/run/longhaul/emu-<pid>-<instance>.json`
//! (`<instance>` numbers the instances within one process, from 0) listing the namespaces it is
//! about to create, with its PID and the process start time from
//! `/proc/<pid>/stat` (field 22), which tells a live instance from a recycled PID. A clean exit
//! removes the namespaces and then the file. After SIGKILL the file stays; the next run (or
//! `longhaul emu cleanup`) sees that the PID is gone, deletes the namespaces and the file. TUN
//! devices need no entry: they are not persistent and vanish with the process's fds.
//!
//! Namespaces named like ours (`lh<pid>[abs]`) whose PID is dead and that have no state file
//! (a run killed between writing the file and the rename, or a file deleted by hand) are removed
//! too.

use super::{netns, SysError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where state files live (tmpfs: cleared at boot, like the namespaces themselves).
pub const STATE_DIR: &str = "/run/longhaul";

/// What one emulator instance created.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InstanceState {
    /// The emulator's process ID.
    pub pid: u32,
    /// The instance's number within that process (0 for the first).
    pub instance: u32,
    /// The process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), which
    /// tells the process from a later one with the same PID.
    pub start_time: u64,
    /// Init of the PID namespace the hosts' programs run in (`pidns`); `emu exec` starts
    /// programs there. Absent in files of older versions.
    #[serde(default)]
    pub init_pid: Option<u32>,
    /// `pair` or `shell`.
    pub mode: String,
    /// Every namespace the instance creates, recorded before it is created.
    pub namespaces: Vec<String>,
    /// Namespace of side a; `None` = the initial namespace.
    pub side_a: Option<String>,
    /// Namespace of side b; `None` = the initial namespace.
    pub side_b: Option<String>,
    /// Address of side a.
    pub addr_a: String,
    /// Address of side b.
    pub addr_b: String,
}

/// Start time of a process in clock ticks since boot, or None if it does not exist.
pub fn proc_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces; fields after the
    // last ')' are space-separated, field 22 is the 20th of them.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Prefix of every namespace an instance creates: `lh<pid>` for a process's first instance,
/// `lh<pid>i<k>` for further ones in the same process (a library user, or tests).
pub fn prefix(pid: u32, instance: u32) -> String {
    if instance == 0 {
        format!("lh{pid}")
    } else {
        format!("lh{pid}i{instance}")
    }
}

fn file_for(pid: u32, instance: u32) -> PathBuf {
    Path::new(STATE_DIR).join(format!("emu-{pid}-{instance}.json"))
}

/// Is there a state file for any instance of `pid`?
fn has_file(pid: u32) -> bool {
    instances().iter().any(|s| s.pid == pid)
}

impl InstanceState {
    /// Its line in `longhaul emu list`: PID, mode, running or stale, both hosts.
    pub fn line(&self) -> String {
        format!(
            "{:>8}  {:<5}  {:<7}  a={} ({})  b={} ({})",
            self.pid,
            self.mode,
            if self.alive() { "running" } else { "stale" },
            self.addr_a,
            self.side_a.as_deref().unwrap_or("host"),
            self.addr_b,
            self.side_b.as_deref().unwrap_or("host")
        )
    }

    /// What `longhaul emu pair` and `shell` say at start: the mode, PID and both hosts.
    pub fn describe(&self) -> String {
        format!(
            "longhaul emu {}: pid {}, host a {} (netns {}), host b {} ({})",
            self.mode,
            self.pid,
            self.addr_a,
            self.side_a.as_deref().unwrap_or("-"),
            self.addr_b,
            self.side_b
                .as_deref()
                .map(|n| format!("netns {n}"))
                .unwrap_or_else(|| "this host".into()),
        )
    }

    /// Is the process that wrote this still the same running process?
    pub fn alive(&self) -> bool {
        proc_start_time(self.pid) == Some(self.start_time)
    }

    /// Writes the file atomically (temp file + rename).
    pub fn write(&self) -> Result<(), SysError> {
        std::fs::create_dir_all(STATE_DIR)
            .map_err(|e| SysError::io(format!("creating {STATE_DIR}"), e))?;
        let path = file_for(self.pid, self.instance);
        let tmp = path.with_extension("tmp");
        let json = serde_json::to_vec_pretty(self).expect("state serialises");
        std::fs::write(&tmp, json)
            .map_err(|e| SysError::io(format!("writing {}", tmp.display()), e))?;
        std::fs::rename(&tmp, &path)
            .map_err(|e| SysError::io(format!("writing {}", path.display()), e))
    }

    /// Ends the programs, deletes everything recorded, then the file. Every step is attempted;
    /// the first error is returned.
    pub fn teardown(&self) -> Result<(), SysError> {
        let mut first = None;
        if let Some(init) = self.init_pid {
            super::pidns::kill_init(init);
        }
        for ns in &self.namespaces {
            // Programs started in the namespace some other way (`ip netns exec` by hand).
            netns::kill_all_in(ns);
        }
        for ns in &self.namespaces {
            if let Err(e) = netns::delete(ns) {
                first.get_or_insert(e);
            }
        }
        let _ = std::fs::remove_file(file_for(self.pid, self.instance).with_extension("tmp"));
        if let Err(e) = std::fs::remove_file(file_for(self.pid, self.instance)) {
            if e.kind() != std::io::ErrorKind::NotFound {
                first.get_or_insert(SysError::io("removing state file", e));
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// All state files (unreadable ones are skipped).
pub fn instances() -> Vec<InstanceState> {
    let Ok(dir) = std::fs::read_dir(STATE_DIR) else {
        return Vec::new();
    };
    let mut v: Vec<InstanceState> = dir
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| std::fs::read(e.path()).ok())
        .filter_map(|b| serde_json::from_slice(&b).ok())
        .collect();
    v.sort_by_key(|s| s.pid);
    v
}

/// The live instance whose emulator has PID `id`, or the only live one when `id` is `None`;
/// the error says what is running and how to choose.
pub fn running(id: Option<u32>) -> Result<InstanceState, String> {
    let live: Vec<_> = instances()
        .into_iter()
        .filter(|s| s.alive())
        .filter(|s| id.is_none_or(|id| id == s.pid))
        .collect();
    match live.as_slice() {
        [] => Err(match id {
            Some(id) => format!("no running emulator with pid {id} (see `longhaul emu list`)"),
            None => "no emulator is running; start one with `longhaul emu pair`".into(),
        }),
        [one] => Ok(one.clone()),
        many => Err(format!(
            "{} emulators are running (pids {}); choose one with --id PID",
            many.len(),
            many.iter()
                .map(|s| s.pid.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Removes what dead instances left behind; returns a description of each removal.
pub fn cleanup_stale() -> Vec<String> {
    let mut removed = Vec::new();
    for s in instances() {
        if !s.alive() {
            match s.teardown() {
                Ok(()) => removed.push(format!(
                    "instance {} ({}): namespaces {}",
                    s.pid,
                    s.mode,
                    s.namespaces.join(", ")
                )),
                Err(e) => removed.push(format!("instance {}: cleanup failed: {e}", s.pid)),
            }
        }
    }
    // Orphan namespaces with our naming scheme: the owner is dead, or has no state file (a live
    // instance writes its file before creating any namespace, so that cannot be a live one).
    for ns in netns::list() {
        if let Some(pid) = owner_pid(&ns) {
            let orphan =
                pid != std::process::id() && (proc_start_time(pid).is_none() || !has_file(pid));
            if orphan {
                netns::kill_all_in(&ns);
            }
            if orphan && netns::delete(&ns).is_ok() {
                removed.push(format!("orphan namespace {ns}"));
            }
        }
    }
    removed
}

/// The PID encoded in a namespace name `lh<pid>[i<k>]<side>`, if it is one of ours.
pub fn owner_pid(ns: &str) -> Option<u32> {
    let rest = ns.strip_prefix("lh")?;
    let side = rest.chars().last()?;
    if !matches!(side, 'a' | 'b' | 's') {
        return None;
    }
    let body = &rest[..rest.len() - 1];
    let (pid, instance) = match body.split_once('i') {
        Some((p, k)) => (p, Some(k)),
        None => (body, None),
    };
    if let Some(k) = instance {
        k.parse::<u32>().ok()?;
    }
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_start_time_is_readable() {
        assert!(proc_start_time(std::process::id()).is_some());
        assert!(proc_start_time(u32::MAX).is_none());
    }

    #[test]
    fn namespace_names_round_trip() {
        assert_eq!(owner_pid(&format!("{}a", prefix(1234, 0))), Some(1234));
        assert_eq!(owner_pid(&format!("{}b", prefix(1234, 7))), Some(1234));
        assert_eq!(owner_pid("lh-r-17977-1"), None);
        assert_eq!(owner_pid("lh77s"), Some(77));
        assert_eq!(owner_pid("lhxa"), None);
        assert_eq!(owner_pid("other"), None);
        assert_eq!(owner_pid("lh12z"), None);
    }
}
