//! `longhaul tune --apply`: write the settings that fall short and report what changed.
//!
//! Only [`Status::Short`] checks are written; each value is read back afterwards, so the report
//! shows what the kernel actually holds (it may clamp or refuse). A failure on one setting does not
//! stop the others. The caller checks for root first (see `longhaul tune`); this module only writes
//! files under the given roots, which is what lets tests apply to a fake tree.

use super::advice::{Check, Status, Target, TuneReport};
use super::host::HostRoots;
use super::TuneError;

/// One setting `--apply` tried to change.
#[derive(Debug)]
pub struct Applied {
    /// The setting's name, as the report shows it.
    pub name: String,
    /// Its value before the write.
    pub before: Option<String>,
    /// The value read back after writing, or the error.
    pub after: Result<Option<String>, TuneError>,
}

impl Applied {
    /// Its line in `longhaul tune --apply`: the value before and after, or why it is
    /// unchanged.
    pub fn line(&self) -> String {
        let before = self.before.as_deref().unwrap_or("-");
        match &self.after {
            Ok(after) => format!(
                "  {:32} {before} -> {}",
                self.name,
                after.as_deref().unwrap_or("-")
            ),
            Err(e) => format!("  {:32} {before} unchanged: {e}", self.name),
        }
    }
}

/// Write every short setting of `report` under `roots`.
pub fn apply_fixes(report: &TuneReport, roots: &HostRoots) -> Vec<Applied> {
    report
        .checks
        .iter()
        .filter(|c| c.status == Status::Short)
        .map(|c| apply_one(c, roots))
        .collect()
}

fn apply_one(c: &Check, roots: &HostRoots) -> Applied {
    let after = match &c.target {
        Target::Sysctl(key) => roots
            .write_sysctl(key, &c.recommended)
            .and_then(|()| roots.read_sysctl(key)),
        Target::Interface { dev, attr } => roots
            .write_interface(dev, attr, &c.recommended)
            .and_then(|()| {
                let p = roots.interface_path(dev, attr)?;
                std::fs::read_to_string(&p)
                    .map(|s| Some(s.trim().to_string()))
                    .map_err(|source| TuneError::Read {
                        path: p,
                        error: source,
                    })
            }),
    };
    Applied {
        name: c.name.clone(),
        before: c.current.clone(),
        after,
    }
}
