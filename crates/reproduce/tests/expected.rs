//! Verdicts under test: `longhaul reproduce` at its default durations must give every claim the
//! verdict and the value checked in as `crates/reproduce/testdata/reproduce-expected.json`, so
//! a change that moves a figure updates that file in the same commit.
//!
//! Regenerate the file (after checking that the new figures are right, and saying so in
//! docs/reproduce.md):
//!
//! ```sh
//! LONGHAUL_UPDATE_EXPECTED=1 cargo test --profile ci -p longhaul-reproduce --test expected
//! ```
//!
//! Values must match exactly, with no tolerance: the simulator is deterministic (virtual time,
//! seeded randomness, the same result bit for bit on one or two threads), and JSON keeps every
//! f64 exactly (shortest round-trip form). NaN, written as `null`, matches NaN.

use longhaul_metrics::summary::ClaimKind;
use longhaul_reproduce::{run_experiment, Plan, EXPERIMENTS};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One claim's expected outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Expected {
    experiment: String,
    claim: String,
    kind: ClaimKind,
    /// `None` for a measurement that is not finite.
    measured: Option<f64>,
    holds: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    control: Option<ExpectedControl>,
}

/// A claim's control: who ran in the system's place, its value, and whether it fails.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ExpectedControl {
    who: String,
    measured: Option<f64>,
    fails: bool,
}

fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/reproduce-expected.json")
}

const REGENERATE: &str =
    "LONGHAUL_UPDATE_EXPECTED=1 cargo test --profile ci -p longhaul-reproduce --test expected";

fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x.to_bits() == y.to_bits(),
        (None, None) => true,
        _ => false,
    }
}

fn same_control(a: &Option<ExpectedControl>, b: &Option<ExpectedControl>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x.who == y.who && x.fails == y.fails && same(x.measured, y.measured),
        (None, None) => true,
        _ => false,
    }
}

#[test]
fn every_claim_has_its_checked_in_verdict_and_value() {
    let start = std::time::Instant::now();
    let mut got = Vec::new();
    for e in EXPERIMENTS {
        let r = run_experiment(e, &Plan::DEFAULT, 2, &|_| {}).unwrap_or_else(|err| panic!("{err}"));
        for c in r.claims {
            got.push(Expected {
                experiment: e.name.to_string(),
                claim: c.claim,
                kind: c.kind,
                measured: c.measured.is_finite().then_some(c.measured),
                holds: c.holds,
                control: c.control.map(|k| ExpectedControl {
                    who: k.who,
                    measured: k.measured.is_finite().then_some(k.measured),
                    fails: k.fails,
                }),
            });
        }
    }
    eprintln!(
        "reproduce, default plan: {} claims in {:.0} s",
        got.len(),
        start.elapsed().as_secs_f64()
    );
    if std::env::var_os("LONGHAUL_UPDATE_EXPECTED").is_some() {
        let text = serde_json::to_string_pretty(&got).unwrap() + "\n";
        std::fs::write(path(), text).unwrap_or_else(|e| panic!("{}: {e}", path().display()));
        eprintln!("wrote {}", path().display());
        return;
    }
    let text = std::fs::read_to_string(path())
        .unwrap_or_else(|e| panic!("{}: {e}; write it with `{REGENERATE}`", path().display()));
    let want: Vec<Expected> = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; regenerate it with `{REGENERATE}`",
            path().display()
        )
    });
    let mut diffs = Vec::new();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if g.experiment != w.experiment
            || g.claim != w.claim
            || g.kind != w.kind
            || g.holds != w.holds
            || !same(g.measured, w.measured)
            || !same_control(&g.control, &w.control)
        {
            diffs.push(format!(
                "#{i} {} `{}`: expected {:?} ({}, {:?}, control {:?}), got {:?} ({}, {:?}, \
                 control {:?})",
                g.experiment,
                g.claim,
                w.measured,
                if w.holds { "holds" } else { "NO" },
                w.kind,
                w.control,
                g.measured,
                if g.holds { "holds" } else { "NO" },
                g.kind,
                g.control
            ));
        }
    }
    if got.len() != want.len() {
        diffs.push(format!("{} claims, expected {}", got.len(), want.len()));
    }
    assert!(
        diffs.is_empty(),
        "{} claim(s) moved; if the change is meant, regenerate with `{REGENERATE}` and say why in \
         docs/reproduce.md:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}
