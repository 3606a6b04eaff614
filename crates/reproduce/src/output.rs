//! The results as the terminal shows them (one table of claims per experiment), as JSON (the
//! result summaries, one per run, the first of each experiment carrying its claims), and as HTML
//! reports (one per run, written by `longhaul-metrics`).

use crate::claim::short;
use crate::experiment::{Experiment, ExperimentResult};
use longhaul_metrics::report::{write_html_report, Align, Table};
use longhaul_metrics::summary::{Claim, PaperValue, Summary};
use longhaul_metrics::MetricsError;
use std::path::{Path, PathBuf};

/// Split a claim's text into what is claimed and its tolerance ("holds if …").
pub fn split_claim(claim: &Claim) -> (&str, &str) {
    match claim.claim.rsplit_once(" [holds if ") {
        Some((what, rule)) => (what, rule.trim_end_matches(']')),
        None => (claim.claim.as_str(), ""),
    }
}

/// A paper's figure as the paper prints it (18.03 stays 18.03), unless it is a computed ratio
/// with many digits.
pub fn paper_number(x: f64) -> String {
    let exact = format!("{x}");
    if exact.len() <= 7 {
        exact
    } else {
        short(x)
    }
}

/// One experiment's claims as a table: claim, paper, measured, unit, holds-if, holds.
pub fn claims_table(result: &ExperimentResult) -> String {
    let mut out = format!(
        "== {} — {} ({}; {} run{}, {:.1} s wall-clock in all)\n",
        result.name,
        result.title,
        result.source,
        result.runs.len(),
        if result.runs.len() == 1 { "" } else { "s" },
        result.wall_s
    );
    let mut t = Table::new(&[
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Left,
        Align::Left,
        Align::Left,
    ]);
    t.header(&["claim", "paper", "measured", "unit", "holds if", "holds"]);
    for c in &result.claims {
        let (what, rule) = split_claim(c);
        t.row(vec![
            what.to_string(),
            match &c.paper {
                PaperValue::Number(x) => paper_number(*x),
                PaperValue::Text(t) => t.clone(),
            },
            short(c.measured),
            c.unit.clone().unwrap_or_default(),
            rule.to_string(),
            if c.holds { "yes" } else { "NO" }.to_string(),
        ]);
    }
    out.push_str(&t.render());
    out
}

/// The closing line: how many claims held.
pub fn totals(results: &[ExperimentResult]) -> String {
    let all: Vec<&Claim> = results.iter().flat_map(|r| &r.claims).collect();
    let held = all.iter().filter(|c| c.holds).count();
    let wall: f64 = results.iter().map(|r| r.wall_s).sum();
    format!(
        "{held} of {} claims hold across {} experiment{} (runs took {wall:.1} s wall-clock in all); \
         docs/reproduce.md explains each disagreement",
        all.len(),
        results.len(),
        if results.len() == 1 { "" } else { "s" },
    )
}

/// `--list`: one line per experiment with its source and what the default run shortens.
pub fn list(experiments: &[&Experiment]) -> String {
    let mut t = Table::new(&[Align::Left, Align::Left, Align::Left]);
    t.header(&["name", "experiment", "source"]);
    for e in experiments {
        t.row(vec![e.name.into(), e.title.into(), e.source.into()]);
    }
    let mut out = t.render();
    out.push_str("\nDefault run (a few minutes for all) vs --full (the papers' durations):\n");
    for e in experiments {
        out.push_str(&format!("  {:<18} {}\n", e.name, e.shortened));
    }
    out
}

/// Every run's summary, in experiment and run order (what `--json` writes).
pub fn all_summaries(results: &[ExperimentResult]) -> Vec<&Summary> {
    results.iter().flat_map(|r| &r.summaries).collect()
}

/// The index page of a report directory: per experiment, its claims (paper, measured, holds)
/// and a link to each run's report (and to the experiment's own page where it has one).
pub fn index_page(results: &[ExperimentResult]) -> String {
    use longhaul_metrics::report::{escape_html as esc, html_page, html_table};
    let all: Vec<&Claim> = results.iter().flat_map(|r| &r.claims).collect();
    let held = all.iter().filter(|c| c.holds).count();
    let mut h = format!(
        "<h1>longhaul reproduce</h1>\n<p>{held} of {} claims hold across {} experiment{}.</p>\n",
        all.len(),
        results.len(),
        if results.len() == 1 { "" } else { "s" }
    );
    for r in results {
        h.push_str(&format!(
            "<h2 id=\"{}\">{} — {}</h2>\n<p>{}</p>\n<p>runs:",
            esc(r.name),
            esc(r.name),
            esc(r.title),
            esc(r.source)
        ));
        for run in &r.runs {
            let file = format!("{}-{}.html", r.name, run.label);
            h.push_str(&format!(
                " <a href=\"{}\">{}</a>",
                esc(&file),
                esc(&run.label)
            ));
        }
        if crate::experiment(r.name).and_then(|e| e.page).is_some() {
            h.push_str(&format!(
                " · <a href=\"{}.html\">the experiment's figure</a>",
                esc(r.name)
            ));
        }
        h.push_str("</p>\n");
        let rows: Vec<Vec<String>> = r
            .claims
            .iter()
            .map(|c| {
                let (what, rule) = split_claim(c);
                vec![
                    esc(what),
                    esc(&match &c.paper {
                        PaperValue::Number(x) => paper_number(*x),
                        PaperValue::Text(t) => t.clone(),
                    }),
                    esc(&short(c.measured)),
                    esc(c.unit.as_deref().unwrap_or("")),
                    esc(rule),
                    if c.holds {
                        "yes".into()
                    } else {
                        "<span class=\"no\">no</span>".into()
                    },
                ]
            })
            .collect();
        html_table(
            &mut h,
            &["claim", "paper", "measured", "unit", "holds if", "holds"],
            &rows,
            1,
        );
    }
    html_page("reproduce", &h)
}

/// Write one HTML report per run into `dir` (`<experiment>-<run>.html`) and `index.html`
/// linking them with their claims; returns the paths, the index last.
pub fn write_reports(
    results: &[ExperimentResult],
    dir: &Path,
) -> Result<Vec<PathBuf>, MetricsError> {
    let mut paths = Vec::new();
    for r in results {
        for (run, s) in r.runs.iter().zip(&r.summaries) {
            let path = dir.join(format!("{}-{}.html", r.name, run.label));
            write_html_report(s, &path)?;
            paths.push(path);
        }
        if let Some(page) = crate::experiment(r.name).and_then(|e| e.page) {
            let path = dir.join(format!("{}.html", r.name));
            longhaul_metrics::summary::write_atomically(&path, page(r)?.as_bytes())?;
            paths.push(path);
        }
    }
    let index = dir.join("index.html");
    longhaul_metrics::summary::write_atomically(&index, index_page(results).as_bytes())?;
    paths.push(index);
    Ok(paths)
}
