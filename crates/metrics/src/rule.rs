//! How a claim's measured number is judged ([`Rule`]), and the short number format claims are
//! printed in ([`short`]).
//!
//! The rule travels with the claim in the result summary, so a reader (or a test) can check that
//! every verdict is the rule applied to the measured number, not a value set by hand.

use serde::{Deserialize, Serialize};

/// How a measured number is judged.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Rule {
    /// measured ≥ the bound.
    AtLeast {
        /// The smallest value that holds.
        bound: f64,
    },
    /// measured ≤ the bound.
    AtMost {
        /// The largest value that holds.
        bound: f64,
    },
    /// |measured − target| ≤ tolerance × |target|.
    Within {
        /// The value aimed at.
        target: f64,
        /// The largest deviation that holds, as a fraction of `|target|`.
        tolerance: f64,
    },
    /// lo ≤ measured ≤ hi.
    Between {
        /// The lower bound, included.
        lo: f64,
        /// The upper bound, included.
        hi: f64,
    },
}

impl Rule {
    /// Whether `measured` satisfies the rule; a number that is not finite (the run was too short
    /// to see the event) never does.
    pub fn test(&self, measured: f64) -> bool {
        if !measured.is_finite() {
            return false;
        }
        match *self {
            Rule::AtLeast { bound } => measured >= bound,
            Rule::AtMost { bound } => measured <= bound,
            Rule::Within { target, tolerance } => {
                (measured - target).abs() <= tolerance * target.abs()
            }
            Rule::Between { lo, hi } => (lo..=hi).contains(&measured),
        }
    }

    /// The rule as a table prints it, e.g. "≥ 90", "6 ± 15 %".
    pub fn describe(&self) -> String {
        match *self {
            Rule::AtLeast { bound } => format!("≥ {}", short(bound)),
            Rule::AtMost { bound } => format!("≤ {}", short(bound)),
            Rule::Within { target, tolerance } => {
                format!("{} ± {} %", short(target), short(tolerance * 100.0))
            }
            Rule::Between { lo, hi } => format!("{}–{}", short(lo), short(hi)),
        }
    }
}

/// A number with at most three significant decimals and no trailing zeros.
pub fn short(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    if x != 0.0 && x.abs() < 1e-3 {
        // Loss rates: 1e-5, 2.5e-8.
        let s = format!("{x:.2e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        return format!("{m}e{e}");
    }
    let digits = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else if x.abs() >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}
