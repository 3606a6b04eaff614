//! The algorithms this crate ships, their load-time parameters, and how parameter values map
//! onto the fixed-point globals (`const volatile struct lh_<algorithm>_params lh_params`) the
//! eBPF programs read.
//!
//! Every program's parameter block is a struct of `u32`s; [`ParamValues::encode`] and
//! [`ParamValues::decode`] convert between user units and that block, so the values a loaded
//! program really uses can be read back from its pinned `.rodata` map.
//!
//! Its parts: `params` (each algorithm's parameters, as tables), `values` (values given as
//! settings, checked one by one and against each other), `encoding` (values to and from the
//! programs' parameter blocks). Here: the [`Algorithm`]s themselves.

mod encoding;
mod params;
mod values;

pub use params::ParamSpec;
pub use values::{split_spec, ParamValues};

use crate::error::KernelError;
use params::{FAST_PARAMS, HIGHSPEED_PARAMS, LION_PARAMS, SCALABLE_PARAMS, VEGAS_PARAMS};
use std::fmt;

/// One of the congestion controls in `src/bpf/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// FAST TCP (`fast.bpf.c`).
    Fast,
    /// Scalable TCP (`scalable.bpf.c`).
    Scalable,
    /// HighSpeed TCP, RFC 3649 (`highspeed.bpf.c`).
    HighSpeed,
    /// TCP Vegas (`vegas.bpf.c`).
    Vegas,
    /// The Lion pacing controller (`lion.bpf.c`).
    Lion,
}

impl Algorithm {
    /// Every algorithm, in the order they are listed.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Fast,
        Algorithm::Scalable,
        Algorithm::HighSpeed,
        Algorithm::Vegas,
        Algorithm::Lion,
    ];

    /// The algorithm's name, also its default registered congestion-control name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Fast => "fast",
            Algorithm::Scalable => "scalable",
            Algorithm::HighSpeed => "highspeed",
            Algorithm::Vegas => "vegas",
            Algorithm::Lion => "lion",
        }
    }

    /// One line on how the algorithm works, for `longhaul kernel algorithms`.
    pub fn summary(self) -> &'static str {
        match self {
            Algorithm::Fast => "FAST TCP: delay-based, keeps alpha packets queued per flow",
            Algorithm::Scalable => "Scalable TCP: +a per ACK, -b on loss above a legacy window",
            Algorithm::HighSpeed => "HighSpeed TCP (RFC 3649): window-dependent a(w), b(w) table",
            Algorithm::Vegas => "TCP Vegas: +-1 packet per RTT to keep alpha..beta queued",
            Algorithm::Lion => {
                "Lion: paces at the available bandwidth in bursts of the MBS; ignores random loss"
            }
        }
    }

    /// The algorithm's load-time parameters.
    pub fn params(self) -> &'static [ParamSpec] {
        match self {
            Algorithm::Fast => FAST_PARAMS,
            Algorithm::Scalable => SCALABLE_PARAMS,
            Algorithm::HighSpeed => HIGHSPEED_PARAMS,
            Algorithm::Vegas => VEGAS_PARAMS,
            Algorithm::Lion => LION_PARAMS,
        }
    }

    /// Its entry in `longhaul kernel algorithms`: name and summary, then one line per
    /// parameter (default, unit, range, help).
    pub fn describe(self) -> String {
        let mut out = format!("{:<10} {}\n", self.name(), self.summary());
        for p in self.params() {
            let unit = if p.unit.is_empty() || p.unit == "bool" {
                String::new()
            } else {
                format!(" {}", p.unit)
            };
            out += &format!(
                "{:<12}{}={}{} [{}..{}]  {}\n",
                "", p.name, p.default, unit, p.min, p.max, p.help
            );
        }
        out
    }

    /// The algorithm called `name`.
    pub fn parse(name: &str) -> Result<Algorithm, KernelError> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| KernelError::UnknownAlgorithm {
                name: name.to_string(),
                available: Algorithm::ALL.map(Algorithm::name).join(", "),
            })
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_name_lists_every_algorithm() {
        let e = Algorithm::parse("reno").unwrap_err().to_string();
        for a in Algorithm::ALL {
            assert!(e.contains(a.name()), "{e}");
        }
        assert!(e.contains("`reno`"), "{e}");
    }
}
