//! A claim of a seed paper and the test that decides whether a measurement bears it out.
//!
//! Each claim carries its tolerance in code ([`Rule`]) and in its text, so the table says what
//! "holds" meant. `holds` is always computed from the measured number; a measurement that is not
//! finite (the run was too short to see the event) never holds.

use longhaul_metrics::summary::{Claim, PaperValue};

/// How a measured number is judged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// measured ≥ the bound.
    AtLeast(f64),
    /// measured ≤ the bound.
    AtMost(f64),
    /// |measured − target| ≤ tolerance × |target|.
    Within { target: f64, tolerance: f64 },
    /// lo ≤ measured ≤ hi.
    Between(f64, f64),
}

impl Rule {
    /// Whether `measured` satisfies the rule.
    pub fn test(&self, measured: f64) -> bool {
        if !measured.is_finite() {
            return false;
        }
        match *self {
            Rule::AtLeast(bound) => measured >= bound,
            Rule::AtMost(bound) => measured <= bound,
            Rule::Within { target, tolerance } => {
                (measured - target).abs() <= tolerance * target.abs()
            }
            Rule::Between(lo, hi) => (lo..=hi).contains(&measured),
        }
    }

    /// The rule as the table prints it, e.g. "≥ 90", "6 ± 15 %".
    pub fn describe(&self) -> String {
        match *self {
            Rule::AtLeast(b) => format!("≥ {}", short(b)),
            Rule::AtMost(b) => format!("≤ {}", short(b)),
            Rule::Within { target, tolerance } => {
                format!("{} ± {} %", short(target), short(tolerance * 100.0))
            }
            Rule::Between(lo, hi) => format!("{}–{}", short(lo), short(hi)),
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

/// A claim before it meets a measurement.
#[derive(Clone, Debug)]
pub struct ClaimSpec {
    /// What is claimed, in the paper's terms.
    pub text: String,
    /// The paper's figure (a number, or text for a range or a qualitative statement).
    pub paper: PaperValue,
    pub unit: &'static str,
    /// Seed file and table/figure.
    pub source: &'static str,
    pub rule: Rule,
}

impl ClaimSpec {
    pub fn new(
        text: impl Into<String>,
        paper: PaperValue,
        unit: &'static str,
        source: &'static str,
        rule: Rule,
    ) -> ClaimSpec {
        ClaimSpec {
            text: text.into(),
            paper,
            unit,
            source,
            rule,
        }
    }

    /// Judge `measured`: the claim row of the result summary. The tolerance is part of the
    /// claim's text ("holds if …").
    pub fn evaluate(&self, measured: f64) -> Claim {
        Claim {
            claim: format!("{} [holds if {}]", self.text, self.rule.describe()),
            paper: self.paper.clone(),
            measured,
            holds: self.rule.test(measured),
            unit: (!self.unit.is_empty()).then(|| self.unit.to_string()),
            source: Some(self.source.to_string()),
        }
    }
}

/// The paper gives a number.
pub fn num(x: f64) -> PaperValue {
    PaperValue::Number(x)
}

/// The paper gives a range or a statement.
pub fn text(s: &str) -> PaperValue {
    PaperValue::Text(s.to_string())
}
