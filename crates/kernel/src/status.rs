//! What `longhaul kernel list` shows: the congestion controls longhaul loaded, each with its
//! state, parameters, repairs and the sockets using it, as a table or as JSON.

use crate::error::KernelError;
use crate::loader::{self, Loaded};
use crate::sockets::{self, SocketCc};

/// The loaded congestion controls and what uses them, read once.
pub struct Status {
    /// What longhaul loaded (`loader::list`).
    pub loaded: Vec<Loaded>,
    /// Every TCP socket with its congestion control (none when they cannot be read).
    pub sockets: Vec<SocketCc>,
    /// The system's default congestion control (empty when it cannot be read).
    pub default: String,
    /// Every congestion control the kernel offers (`None` when it cannot be read).
    pub available: Option<Vec<String>>,
}

impl Status {
    /// Reads the loaded congestion controls, the sockets, the default and the available ones.
    pub fn read() -> Result<Status, KernelError> {
        Ok(Status {
            loaded: loader::list()?,
            sockets: sockets::tcp_sockets().unwrap_or_default(),
            default: loader::default_congestion_control().unwrap_or_default(),
            available: loader::available().ok(),
        })
    }

    fn users<'a>(&'a self, l: &'a Loaded) -> impl Iterator<Item = &'a SocketCc> + 'a {
        self.sockets
            .iter()
            .filter(move |s| s.congestion_control == l.name)
    }

    /// `longhaul kernel list --json`: `loaded` (one object per congestion control) and
    /// `available`.
    pub fn json(&self) -> serde_json::Value {
        let entries: Vec<serde_json::Value> = self
            .loaded
            .iter()
            .map(|l| {
                let params: serde_json::Map<String, serde_json::Value> = l
                    .params
                    .iter()
                    .flat_map(|p| p.values.iter())
                    .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
                    .collect();
                let users: Vec<serde_json::Value> = self
                    .users(l)
                    .map(|s| {
                        serde_json::json!({
                            "local": s.local.to_string(),
                            "remote": s.remote.to_string(),
                            "state": s.state,
                            "netns": s.netns,
                        })
                    })
                    .collect();
                serde_json::json!({
                    "name": l.name,
                    "algorithm": l.algorithm.name(),
                    "registered": l.registered,
                    "default": l.name == self.default,
                    "params": params,
                    "repairs": l.repairs,
                    "pin_dir": l.pin_dir,
                    "sockets": users,
                })
            })
            .collect();
        serde_json::json!({
            "loaded": entries,
            "available": self.available.clone().unwrap_or_default(),
        })
    }

    /// `longhaul kernel list`: a table of the loaded congestion controls with their sockets,
    /// then the kernel's available ones.
    pub fn text(&self) -> String {
        let mut out = String::new();
        if self.loaded.is_empty() {
            out += "no congestion control loaded by longhaul\n";
        } else {
            out += &format!(
                "{:<16} {:<10} {:<11} {:>7} {:>7}  PARAMETERS\n",
                "NAME", "ALGORITHM", "STATE", "SOCKETS", "REPAIRS"
            );
        }
        for l in &self.loaded {
            let users: Vec<_> = self.users(l).collect();
            let state = if !l.registered {
                "stale-pins"
            } else if l.name == self.default {
                "default"
            } else {
                "registered"
            };
            let params = match &l.params {
                Some(p) if p.values.is_empty() => "-".to_string(),
                Some(p) => p.to_string(),
                None => "(unreadable)".to_string(),
            };
            let note = if l.name != l.algorithm.name() {
                format!(" (name prefixed: {} is {})", l.name, l.algorithm)
            } else {
                String::new()
            };
            let repairs = l.repairs.map_or("-".to_string(), |n| n.to_string());
            out += &format!(
                "{:<16} {:<10} {:<11} {:>7} {:>7}  {}{}\n",
                l.name,
                l.algorithm.name(),
                state,
                users.len(),
                repairs,
                params,
                note
            );
            for s in users {
                out += &format!("{:<16}   {} -> {}\n", "", s.local, s.remote);
            }
        }
        if let Some(all) = &self.available {
            out += &format!("kernel congestion controls: {}\n", all.join(" "));
        }
        out
    }
}
