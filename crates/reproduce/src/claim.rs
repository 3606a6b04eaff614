//! A claim of a seed paper and the test that decides whether a measurement bears it out.
//!
//! Each claim carries its tolerance in code ([`Rule`]), in its text (so the table says what
//! "holds" meant) and the source of error that tolerance stands for (run length, seeds, a model
//! limit). `holds` is always computed from the measured number; a measurement that is not finite
//! (the run was too short to see the event) never holds. A row the seed papers never claimed
//! (the model against its own prediction, a figure no paper gives) is a [`ClaimKind::Check`] and
//! is counted apart.

pub use longhaul_metrics::rule::{short, Rule};
pub use longhaul_metrics::summary::ClaimKind;
use longhaul_metrics::summary::{Claim, PaperValue};

/// measured ≥ `bound`.
pub fn at_least(bound: f64) -> Rule {
    Rule::AtLeast { bound }
}

/// measured ≤ `bound`.
pub fn at_most(bound: f64) -> Rule {
    Rule::AtMost { bound }
}

/// `lo` ≤ measured ≤ `hi`.
pub fn between(lo: f64, hi: f64) -> Rule {
    Rule::Between { lo, hi }
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
    pub kind: ClaimKind,
    /// The source of error the rule's tolerance stands for.
    pub tolerance: String,
}

impl ClaimSpec {
    /// A seed paper's claim; `tolerance` says where the rule's margin comes from.
    pub fn new(
        text: impl Into<String>,
        paper: PaperValue,
        unit: &'static str,
        source: &'static str,
        rule: Rule,
        tolerance: impl Into<String>,
    ) -> ClaimSpec {
        ClaimSpec {
            text: text.into(),
            paper,
            unit,
            source,
            rule,
            kind: ClaimKind::Seed,
            tolerance: tolerance.into(),
        }
    }

    /// Mark the row as a check the papers never made (counted apart from the seeds' claims).
    pub fn check(mut self) -> ClaimSpec {
        self.kind = ClaimKind::Check;
        self
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
            kind: self.kind,
            rule: Some(self.rule),
            tolerance: (!self.tolerance.is_empty()).then(|| self.tolerance.clone()),
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
