//! A scenario file as the emulator reads it: a simulator scenario (`[[links]]`, mapped elsewhere)
//! or the `[link]` shorthand of the module above, with `[link.up]`/`[link.down]` (or
//! `a_to_b`/`b_to_a`) overriding one direction.

use super::values::Result;
use super::{RawDirection, Settings, SettingsError, PER_DIRECTION};
use std::path::Path;

/// What a scenario file holds.
#[derive(Debug)]
pub enum ScenarioKind {
    /// `[[links]]`: the simulator's format, to be mapped as `longhaul lab` maps it.
    Simulator,
    /// The `[link]` shorthand's settings.
    Link(Box<Settings>),
}

/// Keys of the simulator's `[[links]]` entries that the `[link]` shorthand does not take.
const SIMULATOR_ONLY: &[&str] = &[
    "queue",
    "reverse_queue",
    "reverse_rate",
    "reverse_loss",
    "distance_km",
];

/// The keys a `[link]` table takes besides the per-direction ones ([`super::PER_DIRECTION`]).
const OTHER_KEYS: &[&str] = &[
    "name", "trace", "cross", "mtu", "seed", "up", "down", "a_to_b", "b_to_a",
];

fn err(m: String) -> SettingsError {
    SettingsError(m)
}

fn scalar(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        _ => None,
    }
}

fn field(t: &toml::Table, k: &str) -> Option<String> {
    t.get(k).and_then(scalar)
}

/// Reads `path`. `link` is the `--link NAME` choice, which only a simulator scenario takes.
pub fn read(path: &Path, link: Option<&str>) -> Result<ScenarioKind> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| err(format!("reading scenario {}: {e}", path.display())))?;
    parse(&text, path, link)
}

/// [`read`] on the file's text; `path` names it in errors.
pub fn parse(text: &str, path: &Path, link: Option<&str>) -> Result<ScenarioKind> {
    let doc: toml::Table = toml::from_str(text)
        .map_err(|e| err(format!("{} is not valid TOML: {e}", path.display())))?;
    if doc.contains_key("links") {
        return Ok(ScenarioKind::Simulator);
    }
    let Some(table) = doc.get("link").and_then(|v| v.as_table()) else {
        return Err(err(format!(
            "{}: no [[links]] (simulator scenario) or [link] section (see `longhaul emu pair \
             --help` and docs/scenario.md)",
            path.display()
        )));
    };
    if link.is_some() {
        return Err(err(format!(
            "{}: --link chooses among [[links]]; this file has a single [link]",
            path.display()
        )));
    }
    let ctx = format!("{} [link]", path.display());
    let mut base = RawDirection::default();
    apply(&mut base, table, &ctx)?;
    let mut ab = base.clone();
    let mut ba = base;
    for (keys, raw) in [(["up", "a_to_b"], &mut ab), (["down", "b_to_a"], &mut ba)] {
        for k in keys {
            if let Some(t) = table.get(k) {
                let t = t
                    .as_table()
                    .ok_or_else(|| err(format!("{ctx}: `{k}` must be a table")))?;
                apply(raw, t, &format!("{ctx}.{k}"))?;
            }
        }
    }
    let integer = |k: &str, what: &str| -> Result<Option<i64>> {
        match table.get(k) {
            Some(v) => v
                .as_integer()
                .map(Some)
                .ok_or_else(|| err(format!("{ctx}: {k} must be {what}"))),
            None => Ok(None),
        }
    };
    let mtu = integer("mtu", "a positive integer")?
        .map(|i| {
            u32::try_from(i).map_err(|_| err(format!("{ctx}: mtu must be a positive integer")))
        })
        .transpose()?;
    let seed = integer("seed", "a non-negative integer")?
        .map(|i| {
            u64::try_from(i).map_err(|_| err(format!("{ctx}: seed must be a non-negative integer")))
        })
        .transpose()?;
    Ok(ScenarioKind::Link(Box::new(Settings {
        base: None,
        ab,
        ba,
        mtu,
        seed,
    })))
}

/// Applies the keys of one `[link]` table onto a direction's settings.
fn apply(raw: &mut RawDirection, t: &toml::Table, ctx: &str) -> Result<()> {
    for k in t.keys() {
        if SIMULATOR_ONLY.contains(&k.as_str()) {
            return Err(err(format!(
                "{ctx}: `{k}` is a key of the simulator's link format, which is read from a \
                 [[links]] entry of a full scenario (docs/scenario.md); in the emulator's [link] \
                 shorthand use queue_packets / queue_bytes / red, and `up`/`down` tables for the \
                 reverse direction"
            )));
        }
        if !PER_DIRECTION.contains(&k.as_str()) && !OTHER_KEYS.contains(&k.as_str()) {
            return Err(err(format!(
                "{ctx}: unknown key `{k}` (known: {}, {})",
                PER_DIRECTION.join(", "),
                OTHER_KEYS.join(", ")
            )));
        }
    }
    // Scalar values; `red` and `gilbert` are tables, read below.
    for k in PER_DIRECTION.iter().chain(&["trace"]) {
        if let (Some(v), Some(slot)) = (field(t, k), raw.value_mut(k)) {
            if *k != "red" && *k != "gilbert" {
                *slot = Some(v);
            }
        }
    }
    if let Some(v) = t.get("red") {
        raw.red = Some(list(
            v,
            ctx,
            "red",
            ["min", "max"],
            [("max_p", "0.1"), ("weight", "0.002")],
        )?);
    }
    if let Some(v) = t.get("gilbert") {
        let optional = [("loss_bad", "1"), ("loss_good", "0")];
        raw.gilbert = Some(list(v, ctx, "gilbert", ["p", "r"], optional)?);
    }
    if let Some(v) = t.get("cross") {
        let arr = v
            .as_array()
            .ok_or_else(|| err(format!("{ctx}: `cross` must be a list of strings")))?;
        raw.cross = arr
            .iter()
            .map(|x| {
                x.as_str()
                    .map(String::from)
                    .ok_or_else(|| err(format!("{ctx}: `cross` entries must be strings")))
            })
            .collect::<Result<_>>()?;
    }
    Ok(())
}

/// A `{ a, b, c, d }` table as the comma-separated list the flags take (`min,max,max_p,weight`):
/// two required keys, two with defaults.
fn list(
    v: &toml::Value,
    ctx: &str,
    what: &str,
    required: [&str; 2],
    optional: [(&str, &str); 2],
) -> Result<String> {
    let keys = [required[0], required[1], optional[0].0, optional[1].0].join(", ");
    let t = v
        .as_table()
        .ok_or_else(|| err(format!("{ctx}: `{what}` must be a table {{ {keys} }}")))?;
    let mut out = Vec::new();
    for k in required {
        out.push(field(t, k).ok_or_else(|| err(format!("{ctx}: {what} needs `{k}`")))?);
    }
    for (k, default) in optional {
        out.push(field(t, k).unwrap_or_else(|| default.to_string()));
    }
    Ok(out.join(","))
}
