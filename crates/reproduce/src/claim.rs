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
use longhaul_metrics::summary::{Claim, Control, PaperValue};

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
    /// The unit of the paper's figure and of the measurement (`Mb/s`, `%`; empty for none).
    pub unit: &'static str,
    /// Seed file and table/figure.
    pub source: &'static str,
    /// The test the measurement must pass.
    pub rule: Rule,
    /// A seed paper's claim, or a check the papers never made.
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
            control: None,
        }
    }

    /// Judge `measured`, and `control` (what ran in the system's place, why it lacks the
    /// property, its measurement) under the same rule. A seed claim whose control passes too
    /// is not evidence of the property: it is counted as a check.
    pub fn evaluate_against(&self, measured: f64, control: (&str, &str, f64)) -> Claim {
        let (who, why, value) = control;
        let fails = value.is_finite() && !self.rule.test(value);
        let mut c = self.evaluate(measured);
        if value.is_finite() && !fails {
            c.kind = ClaimKind::Check;
        }
        c.control = Some(Control {
            who: who.to_string(),
            why: why.to_string(),
            measured: value,
            fails,
        });
        c
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ClaimSpec {
        ClaimSpec::new(
            "utilization",
            num(95.0),
            "%",
            "seed 000",
            at_least(90.0),
            "",
        )
    }

    #[test]
    fn a_claim_is_evidence_only_if_its_control_fails() {
        let c = spec().evaluate_against(98.0, ("reno", "halves on loss", 12.0));
        assert!(c.holds && c.evidenced());
        assert_eq!(c.kind, ClaimKind::Seed);
        let k = c.control.unwrap();
        assert!(k.fails && k.measured == 12.0 && k.who == "reno");
    }

    #[test]
    fn a_claim_whose_control_passes_too_is_a_check() {
        let c = spec().evaluate_against(98.0, ("reno", "halves on loss", 97.0));
        assert!(c.holds && !c.evidenced());
        assert_eq!(c.kind, ClaimKind::Check);
        assert!(!c.control.unwrap().fails);
    }

    #[test]
    fn a_control_without_a_measurement_gives_no_verdict() {
        let c = spec().evaluate_against(98.0, ("bbr", "no match", f64::NAN));
        assert_eq!(c.kind, ClaimKind::Seed, "it stays a claim");
        assert!(!c.evidenced(), "but is no evidence");
        assert!(!c.control.unwrap().fails);
    }
}
