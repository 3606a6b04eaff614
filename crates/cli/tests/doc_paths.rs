//! Every repository path the docs and the code comments cite exists: a page or a header that
//! names `crates/…`, `docs/…`, `scenarios/…`, `scripts/…`, `testdata/…` or `bench/…` must point
//! at a file or directory the repository has.
//!
//! What counts as a citation: any such path in a Markdown file, and in the comments of Rust, C
//! and shell sources (`//`, `/*`, ` *`, `#` lines). Paths with a placeholder (`<name>`, `*`, `{`)
//! are patterns, not citations. String literals in code are test data and are not checked.

use std::path::{Path, PathBuf};

const PREFIXES: &[&str] = &[
    "crates/",
    "docs/",
    "scenarios/",
    "scripts/",
    "testdata/",
    "bench/",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if p.is_dir() {
            sources(&p, out);
        } else if ["md", "rs", "h", "c", "sh", "cc"]
            .iter()
            .any(|x| name.ends_with(&format!(".{x}")))
        {
            out.push(p);
        }
    }
}

/// The lines of `text` that are prose: all of a Markdown file, the comments of a source file.
fn prose(path: &Path, text: &str) -> Vec<String> {
    if path.extension().is_some_and(|e| e == "md") {
        return text.lines().map(str::to_string).collect();
    }
    text.lines()
        .filter_map(|l| {
            let t = l.trim_start();
            if t.starts_with("//")
                || t.starts_with("/*")
                || t.starts_with('*')
                || t.starts_with('#')
            {
                Some(t.to_string())
            } else {
                l.find("// ").map(|i| l[i..].to_string())
            }
        })
        .collect()
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_./+-".contains(c)
}

/// The repository paths cited in one line.
fn cited(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for prefix in PREFIXES {
        let mut from = 0;
        while let Some(i) = line[from..].find(prefix) {
            let at = from + i;
            from = at + prefix.len();
            // A prefix inside a longer path (`src/bench/…`, `../docs/…`) is not a citation
            // of the repository's root.
            if line[..at].chars().last().is_some_and(is_path_char) {
                continue;
            }
            let rest = &line[at..];
            let end = rest.find(|c: char| !is_path_char(c)).unwrap_or(rest.len());
            let after = rest[end..].chars().next();
            if matches!(after, Some('<' | '*' | '{')) {
                continue;
            }
            let path = rest[..end].trim_end_matches(['.', '-']);
            if path.len() > prefix.len() {
                out.push(path.to_string());
            }
        }
    }
    out
}

#[test]
fn every_cited_repository_path_exists() {
    let root = root();
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() > 100, "found only {} sources", files.len());
    let mut missing = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        for line in prose(f, &text) {
            for p in cited(&line) {
                if !root.join(&p).exists() {
                    let rel = f.strip_prefix(&root).unwrap_or(f).display().to_string();
                    missing.push(format!("{rel}: {p}"));
                }
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "cited paths that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_scanner_finds_a_citation_and_skips_patterns_and_inner_paths() {
    assert_eq!(cited("see `docs/lab.md`, \"Tests\"."), vec!["docs/lab.md"]);
    assert!(cited("scenarios/<name>.toml and crates/*/tests").is_empty());
    assert!(cited("a/bench/x.rs").is_empty());
    assert_eq!(
        cited("(crates/cc/src/lib.rs)"),
        vec!["crates/cc/src/lib.rs"]
    );
}
