//! The emulator's settings as users write them: a scenario file's `[link]` shorthand and the
//! command line's per-direction values, both as text, turned into a checked [`LinkConfig`].
//!
//! Every per-direction value is `VALUE` (both directions) or `A2B/B2A` ([`per_direction`]). A
//! simulator scenario (`[[links]]`, docs/scenario.md) is mapped by `crate::scenario` and its
//! result becomes [`Settings::base`]; [`overrides`] puts the command line's values on top of a
//! file's and gives the checked [`LinkConfig`] ([`link_config`]). For emulator-only settings a
//! file may instead hold the `[link]` shorthand ([`file`](mod@file)):
//!
//! ```toml
//! [link]
//! rate = "1gbit"          # or trace = "file.trace" (mahimahi format)
//! delay = "90ms"          # one way
//! queue_packets = 1000    # droptail limit; and/or queue_bytes = "4M" (default: 1000 packets)
//! red = { min = "300k", max = "900k", max_p = 0.1, weight = 0.002 }
//! loss = "1%"             # Bernoulli; or gilbert = { p = 0.01, r = 0.25, loss_bad = 1.0 }
//! mtu = 9000
//! path_mtu = 1400         # a hop with a smaller MTU: larger packets are dropped
//! cross = ["poisson,rate=200mbit"]
//! [link.down]             # overrides for b→a (and [link.up] for a→b)
//! rate = "100mbit"
//! ```
//!
//! Values are read in the scenario file's units (`longhaul_path::units`): a bare number is bit/s
//! or seconds there. The command line requires units and checks them
//! ([`Overrides::quantities`]) before they get here.

pub mod file;
pub mod overrides;
pub mod raw;
pub mod values;

use crate::config::LinkConfig;
pub use overrides::{link_config, Overrides, Quantity};
pub use raw::RawDirection;
use thiserror::Error;

/// A setting that cannot be used, with what to do about it.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct SettingsError(pub String);

impl SettingsError {
    /// `context: self`, as a caller adds where the value came from.
    pub fn context(self, context: &str) -> SettingsError {
        SettingsError(format!("{context}: {}", self.0))
    }
}

/// Settings of both directions before they are parsed: a mapped simulator link (`base`) or the
/// defaults, with the `[link]` shorthand's and the flags' values on top.
#[derive(Default, Clone, Debug)]
pub struct Settings {
    /// A link mapped from a simulator scenario.
    pub base: Option<LinkConfig>,
    /// The a→b values.
    pub ab: RawDirection,
    /// The b→a values.
    pub ba: RawDirection,
    /// The MTU in bytes (`None`: 1500).
    pub mtu: Option<u32>,
    /// The seed (`None`: 1, unless a mapped simulator link keeps its own); a→b gets `2·seed`, b→a
    /// `2·seed + 1`.
    pub seed: Option<u64>,
}

/// The settings given per direction (`VALUE` or `A2B/B2A`), as `[link]` keys; a flag's name is
/// the key with `-` for `_`.
pub const PER_DIRECTION: [&str; 13] = [
    "rate",
    "delay",
    "queue_packets",
    "queue_bytes",
    "red",
    "loss",
    "gilbert",
    "jitter",
    "reorder",
    "reorder_by",
    "duplicate",
    "overhead",
    "path_mtu",
];

/// Splits `A/B` into per-direction values (`V` alone means both).
pub fn per_direction(v: &str) -> (String, String) {
    match v.split_once('/') {
        Some((a, b)) => (a.trim().into(), b.trim().into()),
        None => (v.to_string(), v.to_string()),
    }
}

impl Settings {
    /// The checked configuration: the values parsed onto the base (or the defaults), the default
    /// queues filled in. The seed gives each direction its own streams (2·seed, 2·seed + 1);
    /// a mapped simulator link keeps its own unless a seed is given.
    pub fn link_config(&self) -> Result<LinkConfig, SettingsError> {
        let mtu = self.mtu.unwrap_or(1500);
        let from_simulator = self.base.is_some();
        let (mut ab, mut ba) = match &self.base {
            Some(l) => (l.a_to_b.clone(), l.b_to_a.clone()),
            None => Default::default(),
        };
        if !from_simulator || self.seed.is_some() {
            let seed = self.seed.unwrap_or(1);
            ab.seed = seed.wrapping_mul(2);
            ba.seed = seed.wrapping_mul(2) + 1;
        }
        let cfg = LinkConfig {
            a_to_b: self.ab.build("a→b", ab)?,
            b_to_a: self.ba.build("b→a", ba)?,
            mtu,
        }
        .with_default_queues();
        cfg.validate().map_err(|e| SettingsError(e.to_string()))?;
        Ok(cfg)
    }
}
