//! The built-in scenario files, embedded in the binary so `longhaul reproduce` runs from any
//! directory. They are ordinary scenario files (the schema of `longhaul_sim::scenario`): a user
//! can run any one with `longhaul sim scenarios/<name>.toml`, and each holds the paper's full-scale,
//! full-length run; `reproduce` shortens or varies them with `--set`-style overrides.

use longhaul_sim::{Checked, Scenario, ScenarioError};

/// A scenario file shipped in `scenarios/`.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    /// The file's stem (`scenarios/<name>.toml`).
    pub name: &'static str,
    /// The file's contents.
    pub text: &'static str,
}

macro_rules! builtin {
    ($name:literal) => {
        Builtin {
            name: $name,
            text: include_str!(concat!("../../../scenarios/", $name, ".toml")),
        }
    };
}

/// Every scenario `reproduce` uses.
pub const BUILTINS: &[Builtin] = &[
    builtin!("seed000-180ms"),
    builtin!("seed000-85ms"),
    builtin!("seed000-response"),
    builtin!("fast-equilibrium"),
    builtin!("seed002-buffers"),
    builtin!("seed002-burst"),
    builtin!("seed002-contest"),
    builtin!("seed002-mbs"),
    builtin!("seed003-scalable"),
    builtin!("seed004-reno-climb"),
];

/// The built-in scenario called `name`.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

impl Builtin {
    /// The path a user would pass to `longhaul sim`.
    pub fn path(&self) -> String {
        format!("scenarios/{}.toml", self.name)
    }

    /// Parse, apply `overrides` (`key=value`, as `longhaul sim --set` takes) and check.
    pub fn load(&self, overrides: &[String]) -> Result<Checked, ScenarioError> {
        Scenario::parse(self.text, &self.path(), self.name, overrides)
    }
}
