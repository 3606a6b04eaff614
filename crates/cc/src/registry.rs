//! The list of algorithms, and how a user's text or TOML becomes a running controller.

use crate::controller::{CongestionControl, Setup};
use crate::params::{join, ParamError, ParamSpec, Params, Preset};
use std::fmt;
use std::str::FromStr;

/// Builds a controller from validated parameters and the connection's setup.
pub type BuildFn = fn(&Params, &Setup) -> Result<Box<dyn CongestionControl>, ParamError>;

/// An algorithm as the registry knows it.
#[derive(Clone, Copy)]
pub struct Algorithm {
    /// The name used everywhere (`fast`, `cubic`, …).
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// Where the algorithm comes from (paper, RFC, seed file).
    pub source: &'static str,
    /// The parameters it accepts, with types, ranges and defaults.
    pub params: &'static [ParamSpec],
    /// Its named parameter sets (may be empty).
    pub presets: &'static [Preset],
    /// Builds a controller from validated parameters; may reject invalid combinations.
    pub build: BuildFn,
}

impl fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Algorithm")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Algorithm {
    /// Its entry in `longhaul cc list`: name and summary, source, one line per parameter
    /// (default, unit, allowed values, help) and per preset, then a blank line.
    pub fn describe(&self) -> String {
        use crate::params::ParamKind;
        let mut out = format!("{:<10} {}\n", self.name, self.summary);
        out += &format!("{:<10} source: {}\n", "", self.source);
        for p in self.params {
            let unit = if p.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", p.unit)
            };
            let range = match p.kind {
                ParamKind::Float { .. } | ParamKind::Int { .. } | ParamKind::Choice(_) => {
                    format!(" ({})", p.allowed())
                }
                ParamKind::Bool => String::new(),
            };
            out += &format!(
                "{:<12}{}={}{}{}  {}\n",
                "", p.name, p.default, unit, range, p.help
            );
        }
        for pr in self.presets {
            let vals: Vec<String> = pr.values.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out += &format!(
                "{:<12}preset={} [{}]  {}\n",
                "",
                pr.name,
                vals.join(","),
                pr.help
            );
        }
        out + "\n"
    }
}

/// Every algorithm, in the order `longhaul cc list` shows them.
pub fn algorithms() -> &'static [Algorithm] {
    crate::algorithms::ALL
}

/// Look an algorithm up by name.
pub fn find(name: &str) -> Result<&'static Algorithm, ParamError> {
    algorithms()
        .iter()
        .chain(crate::algorithms::EXPERIMENTS)
        .find(|a| a.name == name)
        .ok_or_else(|| ParamError::UnknownAlgorithm {
            name: name.to_string(),
            known: join(algorithms().iter().map(|a| a.name)),
        })
}

/// An algorithm with validated parameters: what `fast:alpha=200,gamma=0.5` means.
#[derive(Clone, Debug, PartialEq)]
pub struct CcSpec {
    /// The algorithm's registry name.
    pub algorithm: &'static str,
    /// Its parameter values, validated against the algorithm's table.
    pub params: Params,
}

impl CcSpec {
    /// The algorithm with its default parameters.
    pub fn default_for(name: &str) -> Result<CcSpec, ParamError> {
        let a = find(name)?;
        Ok(CcSpec {
            algorithm: a.name,
            params: Params::defaults(a.name, a.params, a.presets, None)?,
        })
    }

    /// From a TOML value: either a string (`"fast:alpha=200"`) or a table with the algorithm's
    /// name under `name` (or `algorithm`), an optional `preset`, and parameters as keys.
    pub fn from_toml(value: &toml::Value) -> Result<CcSpec, ParamError> {
        match value {
            toml::Value::String(s) => s.parse(),
            toml::Value::Table(t) => {
                let name = t
                    .get("name")
                    .or_else(|| t.get("algorithm"))
                    .and_then(|v| v.as_str())
                    .ok_or_else(|| ParamError::Syntax {
                        input: value.to_string(),
                        reason: "a congestion-control table needs `name = \"ALGO\"`".into(),
                    })?;
                let mut spec = Self::from_table(name, t)?;
                spec.algorithm = find(name)?.name;
                Ok(spec)
            }
            other => Err(ParamError::Syntax {
                input: other.to_string(),
                reason: "expected a string or a table".into(),
            }),
        }
    }

    /// From an algorithm name and a TOML table of parameters (`preset` selects a preset;
    /// `name`/`algorithm` keys are ignored).
    pub fn from_table(name: &str, table: &toml::Table) -> Result<CcSpec, ParamError> {
        let a = find(name)?;
        let preset = match table.get("preset") {
            None => None,
            Some(toml::Value::String(s)) => Some(s.as_str()),
            Some(other) => {
                return Err(ParamError::Syntax {
                    input: other.to_string(),
                    reason: "`preset` must be a string".into(),
                })
            }
        };
        let mut params = Params::defaults(a.name, a.params, a.presets, preset)?;
        for (k, v) in table {
            if !matches!(k.as_str(), "preset" | "name" | "algorithm") {
                params.set_toml(k, v)?;
            }
        }
        Ok(CcSpec {
            algorithm: a.name,
            params,
        })
    }

    /// Build a controller. A setup that [`Setup::validate`] rejects is an error.
    pub fn build(&self, setup: &Setup) -> Result<Box<dyn CongestionControl>, ParamError> {
        setup.validate().map_err(|reason| ParamError::Invalid {
            algorithm: self.algorithm,
            reason,
        })?;
        (find(self.algorithm)?.build)(&self.params, setup)
    }
}

impl FromStr for CcSpec {
    type Err = ParamError;

    fn from_str(input: &str) -> Result<CcSpec, ParamError> {
        let syntax = |reason: &str| ParamError::Syntax {
            input: input.to_string(),
            reason: reason.into(),
        };
        let (name, rest) = match input.split_once(':') {
            Some((n, r)) => (n.trim(), Some(r)),
            None => (input.trim(), None),
        };
        if name.is_empty() {
            return Err(syntax("missing algorithm name"));
        }
        let a = find(name)?;
        let mut pairs = Vec::new();
        if let Some(rest) = rest {
            for item in rest.split(',').filter(|s| !s.trim().is_empty()) {
                let (k, v) = item
                    .split_once('=')
                    .ok_or_else(|| syntax("a parameter lacks `=value`"))?;
                let k = k.trim();
                if pairs.iter().any(|(seen, _)| *seen == k) {
                    return Err(ParamError::Duplicate {
                        algorithm: a.name,
                        name: k.to_string(),
                    });
                }
                pairs.push((k, v.trim()));
            }
        }
        let preset = pairs.iter().find(|(k, _)| *k == "preset").map(|(_, v)| *v);
        let mut params = Params::defaults(a.name, a.params, a.presets, preset)?;
        for (k, v) in pairs.iter().filter(|(k, _)| *k != "preset") {
            params.set_str(k, v)?;
        }
        // Reject impossible combinations now, not when a run starts.
        (a.build)(&params, &Setup::default())?;
        Ok(CcSpec {
            algorithm: a.name,
            params,
        })
    }
}

impl fmt::Display for CcSpec {
    /// The canonical form: the name, the preset if any, and values that differ from defaults.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.algorithm)?;
        let mut sep = ':';
        if let Some(p) = self.params.preset() {
            write!(f, "{sep}preset={p}")?;
            sep = ',';
        }
        for (k, v) in self.params.non_default() {
            write!(f, "{sep}{k}={v}")?;
            sep = ',';
        }
        Ok(())
    }
}
