//! Making each flow's (and each responsive cross-traffic entry's) congestion control available
//! in the kernel, and removing what we added.
//!
//! `reno`, `cubic` and `bbr` are the kernel's own (`net/ipv4/tcp_cong.c`, `tcp_cubic.c`,
//! `tcp_bbr.c`); BBR may be a module, so a missing `bbr` is loaded with `modprobe tcp_bbr`
//! before giving up. `fast`, `scalable`, `highspeed`, `vegas` and `lion` are longhaul's eBPF programs
//! (crates/kernel). Each distinct (algorithm, parameters) pair of a run is loaded under a name of
//! its own, `lab<pid>_<k>`, so a run never collides with a congestion control a user loaded
//! (`longhaul kernel load fast`), nor with a concurrent run, and its parameters are exactly the
//! scenario's. Congestion controls are global to the kernel (not per namespace), which is why a
//! unique name matters.
//!
//! The guard unloads what it loaded when dropped: at the end of a run, on an error, and when a
//! signal interrupts the run. Sockets still using a congestion control keep it until they close
//! (crates/kernel `unload`). A run killed with SIGKILL leaves its names registered; the next run
//! removes every `lab<pid>_*` whose process is gone.

use crate::error::LabError;
use crate::plan::KERNEL_NATIVE;
use longhaul_kernel::{Algorithm, LoadOptions, ParamValues};
use std::process::Command;

/// Prefix of the names a lab run registers.
pub const NAME_PREFIX: &str = "lab";

/// Congestion controls a run loaded; unloaded on drop.
#[derive(Debug, Default)]
pub struct LoadedControls {
    loaded: Vec<String>,
    /// What was done to make them available (for the summary's `meta`).
    pub notes: Vec<String>,
}

impl LoadedControls {
    /// Makes every given congestion control (algorithm name, parameters; `LabPlan::controls`)
    /// available; returns the name each one's sockets select (`TCP_CONGESTION`), in the
    /// order given.
    pub fn prepare(specs: &[(&str, &[String])]) -> Result<(LoadedControls, Vec<String>), LabError> {
        let mut me = LoadedControls::default();
        me.notes.extend(remove_stale());
        let mut by_spec: Vec<((&str, &[String]), String)> = Vec::new();
        let mut names = Vec::new();
        for &(cc, params) in specs {
            let key = (cc, params);
            if let Some((_, n)) = by_spec.iter().find(|(k, _)| *k == key) {
                names.push(n.clone());
                continue;
            }
            let name = if KERNEL_NATIVE.contains(&cc) {
                me.ensure_native(cc)?;
                cc.to_string()
            } else {
                let name = format!(
                    "{NAME_PREFIX}{}_{}",
                    std::process::id() % 1_000_000,
                    by_spec.len()
                );
                me.load_ebpf(cc, params, &name)?;
                name
            };
            by_spec.push((key, name.clone()));
            names.push(name);
        }
        Ok((me, names))
    }

    fn ensure_native(&mut self, cc: &str) -> Result<(), LabError> {
        let available = available()?;
        if available.iter().any(|a| a == cc) {
            return Ok(());
        }
        let module = format!("tcp_{cc}");
        let tried = Command::new("modprobe").arg(&module).output();
        let why = match tried {
            Ok(o) if o.status.success() => {
                if available_contains(cc)? {
                    self.notes.push(format!("loaded kernel module {module}"));
                    return Ok(());
                }
                "modprobe succeeded but the kernel still does not list it".to_string()
            }
            Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
            Err(e) => format!("modprobe could not run ({e})"),
        };
        Err(LabError::Congestion {
            name: cc.to_string(),
            message: format!(
                "this kernel does not provide it (available: {}); `modprobe {module}` failed: \
                 {why}. Build the kernel with CONFIG_TCP_CONG_{}, or run the scenario without \
                 this flow",
                available.join(" "),
                cc.to_uppercase()
            ),
        })
    }

    fn load_ebpf(&mut self, cc: &str, settings: &[String], name: &str) -> Result<(), LabError> {
        let err = |message: String| LabError::Congestion {
            name: cc.to_string(),
            message,
        };
        let algorithm = Algorithm::parse(cc).map_err(|e| err(e.to_string()))?;
        let params = ParamValues::from_settings(algorithm, settings).map_err(|e| {
            err(format!(
                "{e}; the eBPF program takes the parameters `longhaul kernel list` shows"
            ))
        })?;
        longhaul_kernel::load(&LoadOptions {
            params,
            name: Some(name.to_string()),
        })
        .map_err(|e| err(format!("loading the eBPF program as `{name}`: {e}")))?;
        self.loaded.push(name.to_string());
        self.notes.push(format!(
            "loaded eBPF {cc}{} as {name}",
            if settings.is_empty() {
                String::new()
            } else {
                format!(":{}", settings.join(","))
            }
        ));
        Ok(())
    }

    /// Names registered by this run.
    pub fn loaded(&self) -> &[String] {
        &self.loaded
    }

    /// Unloads everything; returns the errors (a name that would not unload is reported, the
    /// rest are still tried).
    pub fn unload_all(&mut self) -> Vec<String> {
        let mut errors = Vec::new();
        for name in self.loaded.drain(..) {
            if let Err(e) = longhaul_kernel::unload(&name) {
                errors.push(format!(
                    "{name}: {e} (remove it with `longhaul kernel unload {name}`)"
                ));
            }
        }
        errors
    }
}

impl Drop for LoadedControls {
    fn drop(&mut self) {
        for e in self.unload_all() {
            tracing::warn!("unloading congestion control {e}");
        }
    }
}

fn available() -> Result<Vec<String>, LabError> {
    longhaul_kernel::loader::available().map_err(|e| LabError::Congestion {
        name: "(any)".into(),
        message: e.to_string(),
    })
}

fn available_contains(cc: &str) -> Result<bool, LabError> {
    Ok(available()?.iter().any(|a| a == cc))
}

/// The pid in a name `lab<pid>_<k>`.
pub fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(NAME_PREFIX)?;
    let (pid, k) = rest.split_once('_')?;
    k.parse::<u32>().ok()?;
    pid.parse().ok()
}

/// Unloads `lab<pid>_*` left by runs whose process is gone (a pid is kept modulo 10⁶, as in the
/// name; a live process with those digits keeps its names).
fn remove_stale() -> Vec<String> {
    let Ok(loaded) = longhaul_kernel::list() else {
        return Vec::new();
    };
    let live: Vec<u32> = std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
                .map(|p| p % 1_000_000)
                .collect()
        })
        .unwrap_or_default();
    let mut notes = Vec::new();
    for l in loaded {
        if let Some(pid) = owner_pid(&l.name) {
            if !live.contains(&pid) && longhaul_kernel::unload(&l.name).is_ok() {
                notes.push(format!("removed stale congestion control {}", l.name));
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_of_a_lab_name() {
        assert_eq!(owner_pid("lab4242_0"), Some(4242));
        assert_eq!(owner_pid("lab4242_12"), Some(4242));
        assert_eq!(owner_pid("fast"), None);
        assert_eq!(owner_pid("lab_0"), None);
        assert_eq!(owner_pid("lab12x_0"), None);
        assert_eq!(owner_pid("lab12_x"), None);
        // Fits TCP_CA_NAME_MAX (15 bytes with the NUL) for any pid and up to 999 specs.
        assert!(format!("{NAME_PREFIX}{}_{}", 999_999, 999).len() <= 15);
    }
}
