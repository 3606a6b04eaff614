//! The claim counts README.md and docs/reproduce.md quote are the checked-in expectation's:
//! a change that moves a verdict moves the docs in the same commit.

use serde_json::Value;
use std::path::PathBuf;

fn repo(path: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// (seed claims that hold, seed claims, of them against a failing control, without a control,
/// own checks that hold, own checks) in `reproduce-expected.json`.
fn counts() -> [usize; 6] {
    let all: Vec<Value> =
        serde_json::from_str(&repo("crates/reproduce/testdata/reproduce-expected.json")).unwrap();
    let seed: Vec<&Value> = all.iter().filter(|c| c["kind"] == "seed").collect();
    let check: Vec<&Value> = all.iter().filter(|c| c["kind"] == "check").collect();
    let holds = |c: &Value| c["holds"] == true;
    [
        seed.iter().filter(|c| holds(c)).count(),
        seed.len(),
        seed.iter()
            .filter(|c| holds(c) && c["control"]["fails"] == true)
            .count(),
        seed.iter().filter(|c| c["control"].is_null()).count(),
        check.iter().filter(|c| holds(c)).count(),
        check.len(),
    ]
}

/// `text` with line breaks as spaces, so a sentence wrapped anywhere still matches.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn docs_quote_the_expected_counts() {
    let [held, seeds, evidenced, uncontrolled, checks_held, checks] = counts();
    let docs = flat(&repo("docs/reproduce.md"));
    let without = match uncontrolled {
        0 => String::new(),
        1 => "1 claim has no control yet; ".to_string(),
        n => format!("{n} claims have no control yet; "),
    };
    let want = format!(
        "**{held} of {seeds} seed claims hold, {evidenced} of them against a control that fails** \
         ({without}{checks_held} of {checks} own checks hold)"
    );
    assert!(docs.contains(&want), "docs/reproduce.md should say: {want}");
    let readme = flat(&repo("README.md"));
    let want = format!(
        "{held} of {seeds} seed claims hold, {evidenced} of them against a control that fails"
    );
    assert!(readme.contains(&want), "README.md should say: {want}");
}
