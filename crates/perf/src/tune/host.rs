//! Reading (and writing) the running host's settings.
//!
//! A sysctl `net.core.rmem_max` is the file `/proc/sys/net/core/rmem_max`; an interface's MTU and
//! transmit queue length are `/sys/class/net/DEV/mtu` and `tx_queue_len` (what `ip link` shows).
//! Both roots are parameters so tests read and write a fake tree in a temporary directory.

use super::TuneError;
use std::path::{Path, PathBuf};

/// Where the host's settings live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRoots {
    /// `/proc/sys` on a real host.
    pub proc_sys: PathBuf,
    /// `/sys/class/net` on a real host.
    pub sys_class_net: PathBuf,
}

impl Default for HostRoots {
    fn default() -> Self {
        HostRoots {
            proc_sys: PathBuf::from("/proc/sys"),
            sys_class_net: PathBuf::from("/sys/class/net"),
        }
    }
}

/// One network interface as `ip link` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// The interface name (`eth0`).
    pub name: String,
    /// Its MTU, bytes.
    pub mtu: u32,
    /// Its transmit queue length, packets.
    pub txqueuelen: u64,
    /// `operstate` is `up` (or `unknown`, which loopback and some virtual devices report).
    pub up: bool,
    /// It is a loopback device (ARPHRD_LOOPBACK, or named `lo`).
    pub loopback: bool,
}

impl HostRoots {
    /// The file behind a sysctl name; rejects names that could leave the tree.
    pub fn sysctl_path(&self, key: &str) -> Result<PathBuf, TuneError> {
        let ok = !key.is_empty()
            && key
                .split('.')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if !ok {
            return Err(TuneError::InvalidPath(format!("sysctl name `{key}`")));
        }
        Ok(self.proc_sys.join(key.replace('.', "/")))
    }

    /// A sysctl's value with whitespace runs collapsed to one space (`4096 131072 6291456`), or
    /// `None` when this kernel does not have it.
    pub fn read_sysctl(&self, key: &str) -> Result<Option<String>, TuneError> {
        let path = self.sysctl_path(key)?;
        read_optional(&path).map(|o| o.map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")))
    }

    /// Write a sysctl (as `sysctl -w` does).
    pub fn write_sysctl(&self, key: &str, value: &str) -> Result<(), TuneError> {
        let path = self.sysctl_path(key)?;
        write_value(&path, value)
    }

    /// The file of one interface attribute (`mtu`, `tx_queue_len`).
    pub fn interface_path(&self, dev: &str, attr: &str) -> Result<PathBuf, TuneError> {
        if dev.is_empty() || dev.contains('/') || dev == "." || dev == ".." {
            return Err(TuneError::InvalidPath(format!("interface name `{dev}`")));
        }
        Ok(self.sys_class_net.join(dev).join(attr))
    }

    /// Write one interface attribute (as `ip link set dev DEV txqueuelen N` does).
    pub fn write_interface(&self, dev: &str, attr: &str, value: &str) -> Result<(), TuneError> {
        write_value(&self.interface_path(dev, attr)?, value)
    }

    /// The host's interfaces, sorted by name. Entries without a readable `mtu` are skipped.
    pub fn interfaces(&self) -> Result<Vec<Interface>, TuneError> {
        let dir = &self.sys_class_net;
        let entries = std::fs::read_dir(dir).map_err(|source| TuneError::Read {
            path: dir.clone(),
            error: source,
        })?;
        let mut out = Vec::new();
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let base = dir.join(&name);
            let Some(mtu) = read_optional(&base.join("mtu"))? else {
                continue;
            };
            let mtu = parse_u64(&base.join("mtu"), &mtu)? as u32;
            let txq = match read_optional(&base.join("tx_queue_len"))? {
                Some(t) => parse_u64(&base.join("tx_queue_len"), &t)?,
                None => 0,
            };
            let state = read_optional(&base.join("operstate"))?.unwrap_or_default();
            // ARPHRD_LOOPBACK = 772 (include/uapi/linux/if_arp.h).
            let loopback =
                read_optional(&base.join("type"))?.as_deref() == Some("772") || name == "lo";
            out.push(Interface {
                name,
                mtu,
                txqueuelen: txq,
                up: state == "up" || state == "unknown",
                loopback,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

fn read_optional(path: &Path) -> Result<Option<String>, TuneError> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s.trim().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(TuneError::Read {
            path: path.to_path_buf(),
            error: source,
        }),
    }
}

fn write_value(path: &Path, value: &str) -> Result<(), TuneError> {
    std::fs::write(path, format!("{value}\n")).map_err(|source| {
        let hint = match source.kind() {
            std::io::ErrorKind::PermissionDenied => {
                " (run as root; in a container /proc/sys may be read-only: set it on the host)"
            }
            std::io::ErrorKind::NotFound => " (this kernel does not have that setting)",
            _ => "",
        };
        TuneError::Write {
            path: path.to_path_buf(),
            error: source,
            hint,
        }
    })
}

/// Parse a decimal unsigned integer read from `path`.
pub fn parse_u64(path: &Path, text: &str) -> Result<u64, TuneError> {
    text.trim().parse().map_err(|_| TuneError::Parse {
        path: path.to_path_buf(),
        text: text.to_string(),
        expected: "a non-negative integer",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_names_map_to_files_and_cannot_escape() {
        let r = HostRoots::default();
        assert_eq!(
            r.sysctl_path("net.ipv4.tcp_rmem").unwrap(),
            PathBuf::from("/proc/sys/net/ipv4/tcp_rmem")
        );
        assert!(r.sysctl_path("net..x").is_err());
        assert!(r.sysctl_path("net/../../etc/passwd").is_err());
        assert!(r.interface_path("../etc", "mtu").is_err());
    }
}
