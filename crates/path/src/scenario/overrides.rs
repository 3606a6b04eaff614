//! `--set key=value`: one override of the parsed document, by dotted path with array indices.

use super::ScenarioError;

/// Apply one `key=value` override to the parsed document.
pub fn apply_override(doc: &mut toml::Value, assignment: &str) -> Result<(), ScenarioError> {
    let fail = |message: String| ScenarioError::Override {
        assignment: assignment.to_string(),
        message,
    };
    let (key, raw) = assignment.split_once('=').ok_or_else(|| {
        fail("expected KEY=VALUE, e.g. `duration=30s` or `flows.0.cc=reno`".into())
    })?;
    let key = key.trim();
    let raw = raw.trim();
    if key.is_empty() {
        return Err(fail("the key is empty".into()));
    }
    let value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    let parts: Vec<&str> = key.split('.').collect();
    let mut cur = doc;
    for (depth, part) in parts.iter().enumerate() {
        let last = depth + 1 == parts.len();
        let here = parts[..depth].join(".");
        cur = match cur {
            toml::Value::Table(t) => {
                if last {
                    t.insert(part.to_string(), value);
                    return Ok(());
                }
                t.entry(part.to_string())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            toml::Value::Array(a) => {
                let i: usize = part.parse().map_err(|_| {
                    fail(format!("`{here}` is a list: use an index, e.g. `{here}.0`"))
                })?;
                let len = a.len();
                let slot = a.get_mut(i).ok_or_else(|| {
                    fail(format!("`{here}` has {len} entries (indices 0..{len})"))
                })?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
            _ => return Err(fail(format!("`{here}` is a value, not a table or list"))),
        };
    }
    Ok(())
}
