//! The run figures the docs quote are the checked-in expectation's.
//!
//! A page marks the figures a default run measured with HTML comments, which a rendered page
//! does not show:
//!
//! ```text
//! <!-- measured: lion-mbs -->
//! | loss % | 2.74 | 3.56 | … |
//! <!-- /measured -->
//! ```
//!
//! A marker pair may also sit inside a paragraph, around a sentence or a figure; a marker that
//! begins a line stands alone on it after a blank line, since a line that begins with a comment
//! would split its paragraph. Every number between the markers, outside code spans and link
//! targets, must be one of that experiment's numbers in `reproduce-expected.json` at the precision
//! the page prints it: a claim's or its control's `measured`, or a number written in its claim text
//! or its control's name. "3.56" matches 3.5595, "180" matches 179.6, "1,024" matches 1024, "626"
//! matches a claim text's "626.5"; no figure is matched by a number printed more coarsely ("3.93"
//! is not a bound's "3.9"), and a number in a claim's text that is one of the experiment's values,
//! rounded, stands for that value. Figures no claim records (a table printed beside the claims, a
//! `--full` run) stay outside the markers. Every experiment has a block in docs/reproduce.md. A
//! change that moves a figure moves the docs in the same commit; the test names each figure that
//! has no match and the expected numbers nearest to it.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const OPEN: &str = "<!-- measured:";
const CLOSE: &str = "<!-- /measured -->";

/// A number as printed: its value and half its last printed digit (0 for an exact value).
#[derive(Clone, Copy, Debug)]
struct Num {
    value: f64,
    half: f64,
}

impl Num {
    fn exact(value: f64) -> Num {
        Num { value, half: 0.0 }
    }

    /// Whether `self`, a number of the expectation, is `printed`, a figure in the docs: an
    /// exact value inside the figure's rounding interval, or a number printed at least as
    /// finely whose interval overlaps the figure's (not merely touches it: "179" is not "180").
    /// A coarser number explains nothing: "3.93" is not the "3.9" of a bound.
    fn explains(self, printed: Num) -> bool {
        let diff = (self.value - printed.value).abs();
        let slack = 1e-9 * self.value.abs().max(printed.value.abs());
        if self.half == 0.0 {
            diff <= printed.half + slack
        } else {
            self.half <= printed.half * (1.0 + 1e-9) && diff < self.half + printed.half - slack
        }
    }
}

/// `text` with code spans, fenced code and link targets blanked (line breaks kept), so that the
/// numbers left are prose and tables.
fn prose(text: &str) -> String {
    let blank = |s: &str| -> String {
        s.chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect()
    };
    let mut out = String::new();
    let mut fenced = false;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push_str(&blank(line));
        } else if fenced {
            out.push_str(&blank(line));
        } else {
            out.push_str(line);
        }
    }
    // Code spans: a run of backticks up to the next run of the same length.
    let mut text = String::new();
    let mut rest = out.as_str();
    while let Some(at) = rest.find('`') {
        text.push_str(&rest[..at]);
        let ticks = rest[at..].chars().take_while(|&c| c == '`').count();
        let fence = "`".repeat(ticks);
        match rest[at + ticks..].find(&fence) {
            Some(end) => {
                let stop = at + ticks + end + ticks;
                text.push_str(&blank(&rest[at..stop]));
                rest = &rest[stop..];
            }
            None => {
                text.push_str(&rest[at..]);
                rest = "";
            }
        }
    }
    text.push_str(rest);
    // Link targets: `](…)`.
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        out.push_str(&rest[..at + 1]);
        match rest[at..].find(')') {
            Some(end) => {
                out.push_str(&blank(&rest[at + 1..at + end + 1]));
                rest = &rest[at + end + 1..];
            }
            None => rest = &rest[at + 1..],
        }
    }
    out.push_str(rest);
    out
}

/// Every number in `text` with its byte offset and as printed. A digit right after a letter is
/// part of a name (`seed002`, `p95`, `x1`) and is skipped; signs are not read (ranges are
/// written with dashes); a comma followed by exactly three digits separates thousands; `e-5`
/// after a number is its exponent.
fn numbers(text: &str) -> Vec<(usize, String, Num)> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let digit = |i: usize| chars.get(i).is_some_and(|&(_, c)| c.is_ascii_digit());
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let after_word = i > 0 && {
            let p = chars[i - 1].1;
            p.is_alphanumeric() || p == '_' || p == '.'
        };
        if !c.is_ascii_digit() {
            i += 1;
            continue;
        }
        if after_word {
            while i < chars.len() && (chars[i].1.is_alphanumeric() || chars[i].1 == '.') {
                i += 1;
            }
            continue;
        }
        let mut digits = String::new();
        while digit(i) {
            digits.push(chars[i].1);
            i += 1;
            // Thousands: ",ddd" not followed by another digit.
            if !digit(i)
                && chars.get(i).is_some_and(|&(_, c)| c == ',')
                && (1..=3).all(|k| digit(i + k))
                && !digit(i + 4)
            {
                i += 1;
            }
        }
        let mut decimals = 0i32;
        if chars.get(i).is_some_and(|&(_, c)| c == '.') && digit(i + 1) {
            digits.push('.');
            i += 1;
            while digit(i) {
                digits.push(chars[i].1);
                decimals += 1;
                i += 1;
            }
        }
        let mut exponent = 0i32;
        if chars.get(i).is_some_and(|&(_, c)| c == 'e' || c == 'E') {
            let sign = chars.get(i + 1).map(|&(_, c)| c);
            let (negative, skip) = match sign {
                Some('-') | Some('−') => (true, 2),
                Some('+') => (false, 2),
                _ => (false, 1),
            };
            if digit(i + skip) {
                i += skip;
                let mut e = String::new();
                while digit(i) {
                    e.push(chars[i].1);
                    i += 1;
                }
                exponent = e.parse::<i32>().unwrap() * if negative { -1 } else { 1 };
            }
        }
        let end = chars.get(i).map_or(text.len(), |&(at, _)| at);
        let mantissa: f64 = digits.parse().unwrap();
        let scale = 10f64.powi(exponent);
        let num = Num {
            value: mantissa * scale,
            half: 0.5 * 10f64.powi(-decimals) * scale,
        };
        found.push((at, text[at..end].to_string(), num));
    }
    found
}

/// One number an experiment's expectation allows, and where it comes from.
struct Allowed {
    num: Num,
    source: String,
}

/// The numbers of each experiment in `reproduce-expected.json`.
fn allowed() -> Vec<(String, Vec<Allowed>)> {
    let path = root().join("crates/reproduce/testdata/reproduce-expected.json");
    let all: Vec<Value> = serde_json::from_str(&read(&path)).unwrap();
    let mut by: Vec<(String, Vec<Allowed>)> = Vec::new();
    for c in &all {
        let name = c["experiment"].as_str().unwrap().to_string();
        let claim = c["claim"].as_str().unwrap();
        let short: String = claim.chars().take(60).collect();
        let mut nums = Vec::new();
        if let Some(m) = c["measured"].as_f64() {
            nums.push(Allowed {
                num: Num::exact(m),
                source: format!("measured {m} of \"{short}…\""),
            });
        }
        for (_, printed, num) in numbers(claim) {
            nums.push(Allowed {
                num,
                source: format!("\"{printed}\" in \"{short}…\""),
            });
        }
        let control = &c["control"];
        if let Some(m) = control["measured"].as_f64() {
            nums.push(Allowed {
                num: Num::exact(m),
                source: format!("control's measured {m} of \"{short}…\""),
            });
        }
        if let Some(who) = control["who"].as_str() {
            for (_, printed, num) in numbers(who) {
                nums.push(Allowed {
                    num,
                    source: format!("\"{printed}\" in control \"{who}\""),
                });
            }
        }
        match by.iter_mut().find(|(n, _)| *n == name) {
            Some((_, list)) => list.extend(nums),
            None => by.push((name, nums)),
        }
    }
    // A number in a claim's text that is an exact value of the experiment, printed rounded,
    // stands for that value: "4.895" is 4.89501, which the docs print as 4.90, not 4.89.
    for (_, nums) in &mut by {
        let exact: Vec<f64> = nums
            .iter()
            .filter(|a| a.num.half == 0.0)
            .map(|a| a.num.value)
            .collect();
        nums.retain(|a| a.num.half == 0.0 || !exact.iter().any(|&m| Num::exact(m).explains(a.num)));
    }
    by
}

/// A marked block: the page, the experiment, the line its text starts on, its text.
struct Block {
    page: String,
    experiment: String,
    line: usize,
    text: String,
}

fn blocks(page: &str, text: &str) -> Vec<Block> {
    // A line that begins with an HTML comment starts an HTML block in Markdown: inside a
    // paragraph it would split the paragraph, and text after the comment on that line would not
    // be rendered as Markdown. So a marker begins a line only alone on it, after a blank line.
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if !(line.starts_with(OPEN) || line.starts_with(CLOSE)) {
            continue;
        }
        let alone = line.trim_end().ends_with("-->") && line.matches("<!--").count() == 1;
        let after_blank = i == 0 || lines[i - 1].trim().is_empty();
        assert!(
            alone && after_blank,
            "{page}:{}: a marker that begins a line must stand alone on it after a blank line \
             (else Markdown splits the paragraph); move it after a word of the text",
            i + 1
        );
    }
    let mut found = Vec::new();
    let mut rest = text;
    let mut offset = 0;
    while let Some(at) = rest.find(OPEN) {
        let line = 1 + text[..offset + at].matches('\n').count();
        let head = &rest[at + OPEN.len()..];
        let end = head
            .find("-->")
            .unwrap_or_else(|| panic!("{page}:{line}: an unclosed `{OPEN}` comment"));
        let experiment = head[..end].trim().to_string();
        let body = &head[end + 3..];
        let stop = body.find(CLOSE).unwrap_or_else(|| {
            panic!("{page}:{line}: `{OPEN} {experiment} -->` without `{CLOSE}`")
        });
        let inner = &body[..stop];
        assert!(
            !inner.contains(OPEN),
            "{page}:{line}: a `{OPEN}` block opens inside another"
        );
        found.push(Block {
            page: page.to_string(),
            experiment,
            line,
            text: inner.to_string(),
        });
        let consumed = (at + OPEN.len()) + (end + 3) + stop + CLOSE.len();
        offset += consumed;
        rest = &rest[consumed..];
    }
    let stray = text.matches(CLOSE).count();
    assert_eq!(
        stray,
        found.len(),
        "{page}: a `{CLOSE}` without its opening marker"
    );
    found
}

/// README.md and every page under docs/.
fn pages() -> Vec<(String, String)> {
    let root = root();
    let mut names = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    names.extend(docs);
    names
        .into_iter()
        .map(|n| {
            let text = read(&root.join(&n));
            (n, text)
        })
        .collect()
}

#[test]
fn docs_quote_the_expected_figures() {
    let allowed = allowed();
    let mut problems = Vec::new();
    let mut checked = 0;
    let mut all = Vec::new();
    for (page, text) in pages() {
        all.extend(blocks(&page, &text));
    }
    for block in &all {
        let Some((_, nums)) = allowed.iter().find(|(n, _)| *n == block.experiment) else {
            let names: Vec<&str> = allowed.iter().map(|(n, _)| n.as_str()).collect();
            problems.push(format!(
                "{}:{}: no experiment `{}` in reproduce-expected.json (there are: {})",
                block.page,
                block.line,
                block.experiment,
                names.join(", ")
            ));
            continue;
        };
        let text = prose(&block.text);
        let found = numbers(&text);
        if found.is_empty() {
            problems.push(format!(
                "{}:{}: the `{}` block quotes no figure",
                block.page, block.line, block.experiment
            ));
        }
        for (at, printed, num) in found {
            checked += 1;
            if nums.iter().any(|a| a.num.explains(num)) {
                continue;
            }
            let line = block.line + text[..at].matches('\n').count();
            let mut near: Vec<&Allowed> = nums.iter().collect();
            near.sort_by(|a, b| {
                let d = |x: &Allowed| (x.num.value - num.value).abs();
                d(a).total_cmp(&d(b))
            });
            let mut seen = BTreeSet::new();
            let near: Vec<String> = near
                .into_iter()
                .filter(|a| seen.insert(a.source.clone()))
                .take(3)
                .map(|a| format!("      {}", a.source))
                .collect();
            problems.push(format!(
                "{}:{}: \"{printed}\" in the `{}` block is none of the experiment's expected \
                 numbers; the nearest:\n{}",
                block.page,
                line,
                block.experiment,
                near.join("\n")
            ));
        }
    }
    // Every experiment shows its run somewhere in docs/reproduce.md.
    for (name, _) in &allowed {
        if !all
            .iter()
            .any(|b| b.page == "docs/reproduce.md" && b.experiment == *name)
        {
            problems.push(format!(
                "docs/reproduce.md: no `{OPEN} {name} -->` block for experiment `{name}`"
            ));
        }
    }
    println!(
        "{} marked blocks, {checked} figures held to reproduce-expected.json",
        all.len()
    );
    assert!(
        problems.is_empty(),
        "{} problem(s) with the run figures the docs quote (how they are marked and matched: \
         crates/reproduce/tests/doc_figures.rs):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn numbers_are_read_at_their_printed_precision() {
    let read = |s: &str| -> Vec<(String, f64, f64)> {
        numbers(s)
            .into_iter()
            .map(|(_, p, n)| (p, n.value, n.half))
            .collect()
    };
    let one = |s: &str| {
        let n = numbers(s);
        assert_eq!(n.len(), 1, "{s}: {n:?}");
        n[0].2
    };
    assert_eq!(
        read("loss 3.56 %, 1,024 packets, 2.2×"),
        vec![
            ("3.56".to_string(), 3.56, 0.005),
            ("1,024".to_string(), 1024.0, 0.5),
            ("2.2".to_string(), 2.2, 0.05),
        ]
    );
    // Lists keep their commas; names and code are not figures.
    assert_eq!(read("1, 2, 4").len(), 3);
    assert!(read("seed002, p95, bbr-x1, table1").is_empty());
    assert!(numbers(&prose("run `longhaul sim --set a=3` ([x](a/b2.md))")).is_empty());
    // Blanking keeps line breaks, so a figure's line is found in the blanked text.
    let text = prose("`a × 2`\n(see [it](x/3.md)) 5 %");
    let found = numbers(&text);
    assert_eq!(found.len(), 1);
    assert_eq!(text[..found[0].0].matches('\n').count(), 1);
    assert!((one("3.0e-4").value - 3e-4).abs() < 1e-15);
    assert!((one("1e-5").half - 0.5e-5).abs() < 1e-15);
    // Rounded to the printed digit, not truncated, and not a neighbouring rounded figure.
    assert!(Num::exact(3.5595).explains(one("3.56")));
    assert!(!Num::exact(3.5595).explains(one("3.57")));
    assert!(Num::exact(0.6611).explains(one("0.66")));
    assert!(Num::exact(179.59).explains(one("180")));
    assert!(!one("180").explains(one("179")));
    assert!(one("626.5").explains(one("626")));
    assert!(one("11.170").explains(one("11.2")));
    assert!(!Num::exact(4.89501).explains(one("4.89")));
    // A coarser number, such as a bound's, explains no finer figure near it.
    assert!(!one("3.9").explains(one("3.93")));
    assert!(!one("4").explains(one("4.29")));
    assert!(one("87").explains(one("87")));
}
