//! The command line stays thin: it parses arguments, calls a crate and prints, so its code
//! outside tests (every `.rs` file under `crates/cli/src`, less its `#[cfg(test)]` items) stays
//! under [`LIMIT`] lines. Logic that grows here belongs in the crate that does the work
//! (docs/architecture.md).

use std::path::{Path, PathBuf};

/// Lines of non-test code the CLI may have.
const LIMIT: usize = 3_000;

/// Lines of `text` outside its `#[cfg(test)]` items. An item is the attributes after
/// `#[cfg(test)]` and then one line ending in `;` (`mod x;`, `use …;`) or a block, which ends at
/// the first line that is a `}` indented as the item's first line (as rustfmt writes it).
fn non_test_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let (mut count, mut i) = (0, 0);
    while i < lines.len() {
        if lines[i].trim() != "#[cfg(test)]" {
            count += 1;
            i += 1;
            continue;
        }
        i += 1;
        while i < lines.len() && lines[i].trim_start().starts_with("#[") {
            i += 1;
        }
        let Some(first) = lines.get(i) else { break };
        if !first.trim_end().ends_with(';') {
            let indent = &first[..first.len() - first.trim_start().len()];
            let end = format!("{indent}}}");
            while i < lines.len() && lines[i].trim_end() != end {
                i += 1;
            }
        }
        i += 1;
    }
    count
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn test_items_are_not_counted() {
    let text = "use a;\n\
                fn f() {\n    g();\n}\n\
                #[cfg(test)]\n#[path = \"x.rs\"]\nmod x;\n\
                #[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {\n        let _ = \"{\";\n    }\n}\n\
                fn h() {}\n";
    assert_eq!(non_test_lines(text), 5);
    assert_eq!(non_test_lines("fn f() {}\n#[cfg(test)]\n"), 1);
}

#[test]
fn the_cli_has_fewer_than_3000_lines_of_non_test_code() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let counted: Vec<(usize, String)> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let name = f.strip_prefix(&src).unwrap().display().to_string();
            (non_test_lines(&text), name)
        })
        .collect();
    assert!(counted.len() > 10, "{counted:?}");
    let total: usize = counted.iter().map(|(n, _)| n).sum();
    assert!(
        total < LIMIT,
        "crates/cli/src has {total} lines of non-test code (limit {LIMIT}); move logic into the \
         crate that does the work. By file: {counted:?}"
    );
}
