//! Typed, validated algorithm parameters.
//!
//! Each algorithm declares its parameters as a table of [`ParamSpec`]s (name, type, range,
//! default, unit, help) and optional named [`Preset`]s. User input arrives as text
//! (`fast:alpha=200,gamma=0.5` on a command line) or as a TOML table (a scenario file); both are
//! checked against the table, so an unknown name or an out-of-range value is an error that says
//! what is allowed, and every algorithm gets its values already typed.

use serde::Serialize;
use std::fmt;
use thiserror::Error;

/// What values a parameter accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    /// A real number in `[min, max]`.
    Float {
        /// The smallest value accepted.
        min: f64,
        /// The largest value accepted.
        max: f64,
    },
    /// An integer in `[min, max]`.
    Int {
        /// The smallest value accepted.
        min: i64,
        /// The largest value accepted.
        max: i64,
    },
    /// `true` or `false`.
    Bool,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
}

/// A parameter value.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// A real number.
    Float(f64),
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// One of the words of a [`ParamKind::Choice`].
    Choice(&'static str),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Float(x) => write!(f, "{x}"),
            Value::Int(x) => write!(f, "{x}"),
            Value::Bool(x) => write!(f, "{x}"),
            Value::Choice(x) => f.write_str(x),
        }
    }
}

/// One parameter of an algorithm.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    /// The parameter's key in specs and TOML tables (`alpha`, `update_period`, …).
    pub name: &'static str,
    /// Its type and the values it accepts.
    pub kind: ParamKind,
    /// The value used when neither a preset nor the user sets it.
    pub default: Value,
    /// Unit shown to users ("packets", "s", "" for dimensionless).
    pub unit: &'static str,
    /// One line on what the parameter does, shown by `longhaul cc list` and in errors.
    pub help: &'static str,
}

impl ParamSpec {
    /// A description of the allowed values, for errors and `cc list`.
    pub fn allowed(&self) -> String {
        match self.kind {
            ParamKind::Float { min, max } => format!("a number in [{min}, {max}]"),
            ParamKind::Int { min, max } => format!("an integer in [{min}, {max}]"),
            ParamKind::Bool => "true or false".to_string(),
            ParamKind::Choice(words) => format!("one of {}", words.join(", ")),
        }
    }
}

/// A named set of parameter values (e.g. FAST's `paper` and `ns2`, Scalable's `linux`).
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// The preset's name, as given with `preset=NAME`.
    pub name: &'static str,
    /// One line on where its values come from, shown by `longhaul cc list`.
    pub help: &'static str,
    /// Values that differ from the parameter defaults.
    pub values: &'static [(&'static str, Value)],
}

/// Errors in naming an algorithm or setting its parameters.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ParamError {
    /// No registered algorithm has this name.
    #[error("unknown congestion control `{name}`; known: {known}")]
    UnknownAlgorithm {
        /// The name as given.
        name: String,
        /// The registry's names, comma-separated.
        known: String,
    },
    /// The algorithm has no parameter of this name.
    #[error("`{algorithm}` has no parameter `{name}`; its parameters: {known}")]
    UnknownParam {
        /// The algorithm's name.
        algorithm: &'static str,
        /// The parameter name as given.
        name: String,
        /// The algorithm's parameter names, comma-separated.
        known: String,
    },
    /// The algorithm has no preset of this name.
    #[error("`{algorithm}` has no preset `{name}`; its presets: {known}")]
    UnknownPreset {
        /// The algorithm's name.
        algorithm: &'static str,
        /// The preset name as given.
        name: String,
        /// The algorithm's preset names, comma-separated.
        known: String,
    },
    /// A value of the wrong type or outside the parameter's range.
    #[error("`{algorithm}:{name}={value}`: expected {expected}")]
    BadValue {
        /// The algorithm's name.
        algorithm: &'static str,
        /// The parameter's name.
        name: &'static str,
        /// The value as given.
        value: String,
        /// What the parameter accepts (see [`ParamSpec::allowed`]).
        expected: String,
    },
    /// A spec string sets the same parameter twice.
    #[error("`{algorithm}`: parameter `{name}` given twice")]
    Duplicate {
        /// The algorithm's name.
        algorithm: &'static str,
        /// The parameter given twice.
        name: String,
    },
    /// The text does not have the form `NAME` or `NAME:key=value,…`.
    #[error("cannot parse `{input}`: {reason} (expected NAME or NAME:key=value,key=value)")]
    Syntax {
        /// The text (or TOML value) as given.
        input: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Each value is valid but the combination is not (FAST's `beta` below `alpha`), or the setup
    /// is invalid.
    #[error("`{algorithm}`: {reason}")]
    Invalid {
        /// The algorithm's name.
        algorithm: &'static str,
        /// What is inconsistent.
        reason: String,
    },
}

/// The validated parameter values of one algorithm instance, in declaration order.
#[derive(Clone, Debug)]
pub struct Params {
    algorithm: &'static str,
    specs: &'static [ParamSpec],
    preset: Option<&'static str>,
    values: Vec<Value>,
    /// The values before any explicit setting: defaults with the preset applied.
    base: Vec<Value>,
}

impl PartialEq for Params {
    fn eq(&self, other: &Params) -> bool {
        self.algorithm == other.algorithm
            && self.preset == other.preset
            && self.values == other.values
    }
}

impl Params {
    /// The defaults, with an optional preset applied.
    pub fn defaults(
        algorithm: &'static str,
        specs: &'static [ParamSpec],
        presets: &'static [Preset],
        preset: Option<&str>,
    ) -> Result<Params, ParamError> {
        let mut p = Params {
            algorithm,
            specs,
            preset: None,
            values: specs.iter().map(|s| s.default).collect(),
            base: Vec::new(),
        };
        if let Some(name) = preset {
            let found = presets.iter().find(|p| p.name == name).ok_or_else(|| {
                ParamError::UnknownPreset {
                    algorithm,
                    name: name.to_string(),
                    known: join(presets.iter().map(|p| p.name)),
                }
            })?;
            for (k, v) in found.values {
                let i = p.index(k)?;
                p.values[i] = *v;
            }
            p.preset = Some(found.name);
        }
        p.base = p.values.clone();
        Ok(p)
    }

    /// The name of the algorithm these values belong to.
    pub fn algorithm(&self) -> &'static str {
        self.algorithm
    }

    /// The preset the defaults were taken from, if one was named.
    pub fn preset(&self) -> Option<&'static str> {
        self.preset
    }

    /// The algorithm's parameter table, in the order the values are kept.
    pub fn specs(&self) -> &'static [ParamSpec] {
        self.specs
    }

    fn index(&self, name: &str) -> Result<usize, ParamError> {
        self.specs
            .iter()
            .position(|s| s.name == name)
            .ok_or_else(|| ParamError::UnknownParam {
                algorithm: self.algorithm,
                name: name.to_string(),
                known: join(self.specs.iter().map(|s| s.name)),
            })
    }

    /// Set a parameter from text, checking type and range.
    pub fn set_str(&mut self, name: &str, text: &str) -> Result<(), ParamError> {
        let i = self.index(name)?;
        let spec = self.specs[i];
        let bad = || ParamError::BadValue {
            algorithm: self.algorithm,
            name: spec.name,
            value: text.to_string(),
            expected: spec.allowed(),
        };
        let v = match spec.kind {
            ParamKind::Float { .. } => Value::Float(text.trim().parse().map_err(|_| bad())?),
            ParamKind::Int { .. } => Value::Int(text.trim().parse().map_err(|_| bad())?),
            ParamKind::Bool => Value::Bool(parse_bool(text).ok_or_else(bad)?),
            ParamKind::Choice(words) => {
                Value::Choice(words.iter().find(|w| **w == text.trim()).ok_or_else(bad)?)
            }
        };
        self.set(i, v, text)
    }

    /// Set a parameter from a TOML value, checking type and range.
    pub fn set_toml(&mut self, name: &str, value: &toml::Value) -> Result<(), ParamError> {
        let i = self.index(name)?;
        let spec = self.specs[i];
        let text = value.to_string();
        let bad = || ParamError::BadValue {
            algorithm: self.algorithm,
            name: spec.name,
            value: text.clone(),
            expected: spec.allowed(),
        };
        let v = match (spec.kind, value) {
            (ParamKind::Float { .. }, toml::Value::Float(x)) => Value::Float(*x),
            (ParamKind::Float { .. }, toml::Value::Integer(x)) => Value::Float(*x as f64),
            (ParamKind::Int { .. }, toml::Value::Integer(x)) => Value::Int(*x),
            (ParamKind::Bool, toml::Value::Boolean(x)) => Value::Bool(*x),
            (ParamKind::Choice(words), toml::Value::String(s)) => {
                Value::Choice(words.iter().find(|w| **w == s.as_str()).ok_or_else(bad)?)
            }
            _ => return Err(bad()),
        };
        self.set(i, v, &text)
    }

    fn set(&mut self, i: usize, v: Value, text: &str) -> Result<(), ParamError> {
        let spec = self.specs[i];
        let in_range = match (spec.kind, v) {
            (ParamKind::Float { min, max }, Value::Float(x)) => {
                x.is_finite() && x >= min && x <= max
            }
            (ParamKind::Int { min, max }, Value::Int(x)) => x >= min && x <= max,
            _ => true,
        };
        if !in_range {
            return Err(ParamError::BadValue {
                algorithm: self.algorithm,
                name: spec.name,
                value: text.to_string(),
                expected: spec.allowed(),
            });
        }
        self.values[i] = v;
        Ok(())
    }

    fn value(&self, name: &str) -> Value {
        match self.index(name) {
            Ok(i) => self.values[i],
            // A misspelt name in an algorithm's own code is a programming error caught by its
            // unit tests; fall back to a value that makes such tests fail loudly.
            Err(_) => Value::Float(f64::NAN),
        }
    }

    /// A float parameter (integers widen).
    pub fn f64(&self, name: &str) -> f64 {
        match self.value(name) {
            Value::Float(x) => x,
            Value::Int(x) => x as f64,
            Value::Bool(b) => b as u8 as f64,
            Value::Choice(_) => f64::NAN,
        }
    }

    /// An integer parameter.
    pub fn i64(&self, name: &str) -> i64 {
        match self.value(name) {
            Value::Int(x) => x,
            Value::Float(x) => x as i64,
            Value::Bool(b) => b as i64,
            Value::Choice(_) => 0,
        }
    }

    /// A boolean parameter.
    pub fn bool(&self, name: &str) -> bool {
        matches!(self.value(name), Value::Bool(true))
    }

    /// A choice parameter.
    pub fn choice(&self, name: &str) -> &'static str {
        match self.value(name) {
            Value::Choice(c) => c,
            _ => "",
        }
    }

    /// `(name, value)` pairs in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, Value)> + '_ {
        self.specs
            .iter()
            .zip(&self.values)
            .map(|(s, v)| (s.name, *v))
    }

    /// Parameters whose value differs from the defaults with the preset applied (for
    /// canonical spec strings: `fast:preset=ns2,alpha=300` lists only what was set on top).
    pub fn non_default(&self) -> impl Iterator<Item = (&'static str, Value)> + '_ {
        self.specs
            .iter()
            .zip(self.values.iter().zip(&self.base))
            .filter(|(_, (v, b))| v != b)
            .map(|(s, (v, _))| (s.name, *v))
    }

    /// Parameters whose value differs from the algorithm's own defaults, whichever preset or
    /// setting made it so: what a consumer that knows no presets (the kernel programs' parameter
    /// blocks) must be told.
    pub fn differing_from_defaults(&self) -> impl Iterator<Item = (&'static str, Value)> + '_ {
        self.specs
            .iter()
            .zip(&self.values)
            .filter(|(s, v)| **v != s.default)
            .map(|(s, v)| (s.name, *v))
    }

    /// An invalid-combination error for this algorithm (e.g. FAST's beta < alpha).
    pub fn invalid(&self, reason: impl Into<String>) -> ParamError {
        ParamError::Invalid {
            algorithm: self.algorithm,
            reason: reason.into(),
        }
    }
}

pub(crate) fn join<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}

/// A boolean parameter as every longhaul command reads it (algorithm specs, `kernel load`):
/// `true` or `false`, which is how they are printed; `1`/`0` are accepted too.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec {
            name: "alpha",
            kind: ParamKind::Float {
                min: 0.0,
                max: 10.0,
            },
            default: Value::Float(2.0),
            unit: "packets",
            help: "",
        },
        ParamSpec {
            name: "mode",
            kind: ParamKind::Choice(&["table", "formula"]),
            default: Value::Choice("table"),
            unit: "",
            help: "",
        },
        ParamSpec {
            name: "n",
            kind: ParamKind::Int { min: 1, max: 5 },
            default: Value::Int(3),
            unit: "",
            help: "",
        },
    ];
    const PRESETS: &[Preset] = &[Preset {
        name: "big",
        help: "",
        values: &[("alpha", Value::Float(9.0))],
    }];

    #[test]
    fn text_values_are_typed_and_range_checked() {
        let mut p = Params::defaults("t", SPECS, PRESETS, None).unwrap();
        p.set_str("alpha", "3.5").unwrap();
        p.set_str("mode", "formula").unwrap();
        p.set_str("n", "5").unwrap();
        assert_eq!(p.f64("alpha"), 3.5);
        assert_eq!(p.choice("mode"), "formula");
        assert_eq!(p.i64("n"), 5);
        let e = p.set_str("alpha", "11").unwrap_err();
        assert!(e.to_string().contains("[0, 10]"), "{e}");
        assert!(p.set_str("n", "2.5").is_err());
        assert!(p.set_str("alpha", "NaN").is_err());
        assert!(p
            .set_str("mode", "guess")
            .unwrap_err()
            .to_string()
            .contains("table, formula"));
        let e = p.set_str("alpah", "1").unwrap_err();
        assert!(e.to_string().contains("alpha, mode, n"), "{e}");
    }

    #[test]
    fn toml_values_and_presets() {
        let mut p = Params::defaults("t", SPECS, PRESETS, Some("big")).unwrap();
        assert_eq!(p.f64("alpha"), 9.0);
        p.set_toml("alpha", &toml::Value::Integer(4)).unwrap();
        assert_eq!(p.f64("alpha"), 4.0);
        assert!(p.set_toml("n", &toml::Value::Float(1.0)).is_err());
        assert!(Params::defaults("t", SPECS, PRESETS, Some("small")).is_err());
        assert_eq!(
            p.non_default().count(),
            1,
            "alpha=4 differs from the preset's 9"
        );
        let q = Params::defaults("t", SPECS, PRESETS, Some("big")).unwrap();
        assert_eq!(
            q.non_default().count(),
            0,
            "preset values are not listed again"
        );
    }
}
