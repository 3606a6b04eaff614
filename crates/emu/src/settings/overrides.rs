//! The link to emulate from a scenario file and the command line: the file's link (a simulator
//! scenario's, mapped by `crate::scenario` exactly as `longhaul lab` maps it, or the `[link]`
//! shorthand of [`super::file`]) with the flags' values on top, per direction where they may
//! differ (`VALUE` or `A2B/B2A`, [`super::per_direction`]). Flags win.
//!
//! A simulator scenario supplies one link (`--link NAME`, default the dumbbell's bottleneck, or
//! the only link): its rate and `reverse_rate`, delay, mtu, `queue`/`reverse_queue` (droptail or
//! RED), `loss`/`reverse_loss` and the `[[cross_traffic]]` on it; what the emulator cannot do is
//! refused naming the field. Its flows are not run (`emu pair|shell` bring their own traffic).

use super::file::{self, ScenarioKind};
use super::{per_direction, Settings, SettingsError};
use crate::config::LinkConfig;
use std::path::Path;

/// Settings given on the command line, as text; `None` and empty lists keep the file's values.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// Values by `[link]` key ([`super::PER_DIRECTION`]), each `VALUE` or `A2B/B2A`.
    pub per_direction: Vec<(&'static str, String)>,
    /// A mahimahi trace for a→b (replaces the rate in that direction).
    pub uplink_trace: Option<String>,
    /// A mahimahi trace for b→a.
    pub downlink_trace: Option<String>,
    /// Cross-traffic specs, `KIND,rate=R[,…][,dir=ab|ba|both]` (default `dir=ab`).
    pub cross: Vec<String>,
    /// The MTU in bytes.
    pub mtu: Option<u32>,
    /// The seed.
    pub seed: Option<u64>,
}

/// What a value that takes a unit measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// A rate (`100mbit`).
    Rate,
    /// A duration (`90ms`).
    Duration,
}

impl Overrides {
    /// Every rate and duration among the values, each direction's separately, with the flag it
    /// came from (`rate`, `reorder-by`, `cross rate`, `cross on/off`), in the order given: a
    /// flag needs a unit where a file's bare number has one (bit/s, seconds), so the command
    /// line checks these before they are read in the file's units.
    pub fn quantities(&self) -> Vec<(String, Quantity, String)> {
        let mut out = Vec::new();
        for (key, v) in &self.per_direction {
            let q = match *key {
                "rate" => Quantity::Rate,
                "delay" | "jitter" | "reorder_by" => Quantity::Duration,
                _ => continue,
            };
            let (flag, (x, y)) = (key.replace('_', "-"), per_direction(v));
            out.extend([(flag.clone(), q, x), (flag, q, y)]);
        }
        for kv in self.cross.iter().flat_map(|spec| spec.split(',').skip(1)) {
            match kv.trim().split_once('=') {
                Some(("rate", v)) => out.push(("cross rate".into(), Quantity::Rate, v.into())),
                Some(("on" | "off", v)) => {
                    out.push(("cross on/off".into(), Quantity::Duration, v.into()))
                }
                _ => {}
            }
        }
        out
    }
}

/// The checked link: `scenario`'s (`link` chooses among a simulator scenario's links), or the
/// defaults without one, with `overrides` on top.
pub fn link_config(
    scenario: Option<&Path>,
    link: Option<&str>,
    overrides: &Overrides,
) -> Result<LinkConfig, SettingsError> {
    let mut s = match scenario {
        Some(p) => from_scenario(p, link)?,
        None if link.is_some() => {
            return Err(SettingsError(
                "--link chooses a link of --scenario FILE; give the scenario too".into(),
            ))
        }
        None => Settings::default(),
    };
    s.apply(overrides)?;
    s.link_config()
}

/// The settings a scenario file supplies: its `[link]`, or the chosen link of a simulator
/// scenario, parsed and checked by the scenario's own parser and mapped by `crate::scenario`.
pub fn from_scenario(path: &Path, link: Option<&str>) -> Result<Settings, SettingsError> {
    match file::read(path, link)? {
        ScenarioKind::Link(s) => Ok(*s),
        ScenarioKind::Simulator => from_simulator_scenario(path, link),
    }
}

/// An error and its causes, `a: b: c`.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

fn from_simulator_scenario(path: &Path, name: Option<&str>) -> Result<Settings, SettingsError> {
    let checked = longhaul_path::Scenario::load(path, &[]).map_err(|e| SettingsError(chain(&e)))?;
    let file = path.display().to_string();
    let li = crate::scenario::link_index(&checked, name, &file)
        .map_err(|e| SettingsError(e.to_string()))?;
    let mapped = crate::scenario::emulated_link(&checked, li, &file).map_err(|e| {
        SettingsError(format!(
            "{e} (the emulator cannot run this link as written)"
        ))
    })?;
    Ok(Settings {
        mtu: Some(mapped.config.mtu),
        base: Some(mapped.config),
        ..Default::default()
    })
}

impl Settings {
    /// Lays `o` over these settings: its values replace theirs, direction by direction, and
    /// its cross traffic is added to theirs. A rate given without a trace replaces a trace from
    /// the file.
    pub fn apply(&mut self, o: &Overrides) -> Result<(), SettingsError> {
        let (ab, ba) = (&mut self.ab, &mut self.ba);
        for (key, v) in &o.per_direction {
            let (x, y) = per_direction(v);
            let unknown = || SettingsError(format!("`{key}` is not a per-direction setting"));
            *ab.value_mut(key).ok_or_else(unknown)? = Some(x);
            *ba.value_mut(key).ok_or_else(unknown)? = Some(y);
        }
        if o.per_direction.iter().any(|(k, _)| *k == "rate") {
            ab.trace = None;
            ba.trace = None;
        }
        if let Some(t) = &o.uplink_trace {
            ab.trace = Some(t.clone());
        }
        if let Some(t) = &o.downlink_trace {
            ba.trace = Some(t.clone());
        }
        for spec in &o.cross {
            let dir = spec
                .split(',')
                .find_map(|kv| kv.trim().strip_prefix("dir="))
                .unwrap_or("ab");
            if dir == "ab" || dir == "both" {
                ab.cross.push(spec.clone());
            }
            if dir == "ba" || dir == "both" {
                ba.cross.push(spec.clone());
            }
        }
        self.mtu = o.mtu.or(self.mtu);
        self.seed = o.seed.or(self.seed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_durations_are_listed_per_direction_with_their_flags() {
        let o = Overrides {
            per_direction: vec![
                ("rate", "100mbit/10mbit".into()),
                ("loss", "1%".into()),
                ("reorder_by", "1ms".into()),
            ],
            cross: vec!["onoff,rate=5mbit,size=1500,on=1s,off=2s,dir=ba".into()],
            ..Default::default()
        };
        let q = |f: &str, q, v: &str| (f.to_string(), q, v.to_string());
        use Quantity::{Duration as D, Rate as R};
        assert_eq!(
            o.quantities(),
            [
                q("rate", R, "100mbit"),
                q("rate", R, "10mbit"),
                q("reorder-by", D, "1ms"),
                q("reorder-by", D, "1ms"),
                q("cross rate", R, "5mbit"),
                q("cross on/off", D, "1s"),
                q("cross on/off", D, "2s"),
            ]
        );
    }
}
