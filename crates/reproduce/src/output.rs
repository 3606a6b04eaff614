//! The results as the terminal shows them (one table of claims per experiment), as JSON (the
//! result summaries, one per run, the first of each experiment carrying its claims), and as HTML
//! reports (one per run, written by `longhaul-metrics`).

use crate::claim::short;
use crate::experiment::{Experiment, ExperimentResult};
use longhaul_metrics::report::{escape_html, write_html_report, Align, Table};
use longhaul_metrics::summary::{Claim, ClaimKind, Control, PaperValue, Summary};
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

/// Rows of one kind as a table, with each distinct tolerance source numbered beside its rule
/// and listed under the table.
fn kind_table(claims: &[&Claim]) -> String {
    let mut t = Table::new(&[
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Left,
        Align::Left,
        Align::Left,
        Align::Left,
    ]);
    t.header(&[
        "claim", "paper", "measured", "unit", "holds if", "holds", "control",
    ]);
    let mut sources: Vec<&str> = Vec::new();
    let mut controls: Vec<String> = Vec::new();
    for c in claims {
        let (what, rule) = split_claim(c);
        let mark = match c.tolerance.as_deref() {
            Some(why) => {
                let n = match sources.iter().position(|s| *s == why) {
                    Some(i) => i + 1,
                    None => {
                        sources.push(why);
                        sources.len()
                    }
                };
                format!(" [{n}]")
            }
            None => String::new(),
        };
        t.row(vec![
            what.to_string(),
            match &c.paper {
                PaperValue::Number(x) => paper_number(*x),
                PaperValue::Text(t) => t.clone(),
            },
            short(c.measured),
            c.unit.clone().unwrap_or_default(),
            format!("{rule}{mark}"),
            if c.holds { "yes" } else { "NO" }.to_string(),
            match &c.control {
                Some(k) => {
                    let note = k.why.clone();
                    let n = match controls.iter().position(|s| *s == note) {
                        Some(i) => i + 1,
                        None => {
                            controls.push(note);
                            controls.len()
                        }
                    };
                    format!("{} (c{n})", control_cell(k))
                }
                None if c.kind == ClaimKind::Check => "—".to_string(),
                None => "none yet".to_string(),
            },
        ]);
    }
    let mut out = t.render();
    for (i, why) in sources.iter().enumerate() {
        out.push_str(&format!("  [{}] tolerance: {why}\n", i + 1));
    }
    for (i, who) in controls.iter().enumerate() {
        out.push_str(&format!("  (c{}) control: {who}\n", i + 1));
    }
    out
}

/// A control in a table cell: who, its measurement, and whether it fails the claim's rule.
pub fn control_cell(k: &Control) -> String {
    let verdict = if !k.measured.is_finite() {
        "no verdict"
    } else if k.fails {
        "fails"
    } else {
        "PASSES"
    };
    format!("{} {} {verdict}", k.who, short(k.measured))
}

/// One experiment's claims as tables: the seeds' claims, then the checks the papers never made,
/// then the experiment's notes (tables beside the claims).
pub fn claims_table(result: &ExperimentResult) -> String {
    let mut out = format!(
        "== {} — {} ({}; {} run{} in {:.1} s wall-clock, {:.1} s summed over runs)\n",
        result.name,
        result.title,
        result.source,
        result.runs.len(),
        if result.runs.len() == 1 { "" } else { "s" },
        result.elapsed_s,
        result.wall_s
    );
    let of = |kind: ClaimKind| -> Vec<&Claim> {
        result.claims.iter().filter(|c| c.kind == kind).collect()
    };
    let (seed, check) = (of(ClaimKind::Seed), of(ClaimKind::Check));
    if !seed.is_empty() {
        out.push_str(&kind_table(&seed));
    }
    if !check.is_empty() {
        out.push_str(
            "-- own checks (no seed paper claims these; not counted among the seeds' claims)\n",
        );
        out.push_str(&kind_table(&check));
    }
    if !result.notes.is_empty() {
        out.push_str(&result.notes);
    }
    out
}

/// How many claims of `kind` hold, and how many there are.
/// An experiment page's claims as an HTML table: claim, paper, measured, holds.
pub fn claims_html(claims: &[Claim]) -> String {
    let mut out =
        String::from("<table><tr><th>claim</th><th>paper</th><th>measured</th><th>holds</th></tr>");
    for c in claims {
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape_html(&c.claim),
            escape_html(&match &c.paper {
                PaperValue::Number(x) => short(*x),
                PaperValue::Text(t) => t.clone(),
            }),
            short(c.measured),
            if c.holds { "yes" } else { "NO" }
        ));
    }
    out.push_str("</table>\n");
    out
}

/// How many claims of `kind` held, and how many there are, over all results.
pub fn count(results: &[ExperimentResult], kind: ClaimKind) -> (usize, usize) {
    let all: Vec<&Claim> = results
        .iter()
        .flat_map(|r| &r.claims)
        .filter(|c| c.kind == kind)
        .collect();
    (all.iter().filter(|c| c.holds).count(), all.len())
}

/// The closing line: how many of the seeds' claims held, and the own checks apart.
pub fn totals(results: &[ExperimentResult]) -> String {
    let (held, seeds) = count(results, ClaimKind::Seed);
    let (checks_held, checks) = count(results, ClaimKind::Check);
    let claims = || results.iter().flat_map(|r| &r.claims);
    let evidenced = claims().filter(|c| c.evidenced()).count();
    let uncontrolled = claims()
        .filter(|c| c.kind == ClaimKind::Seed && c.control.is_none())
        .count();
    // Experiments run one after another, their runs in parallel: the wall-clock time is the
    // sum of the experiments', the simulation time the sum of the runs'.
    let wall: f64 = results.iter().map(|r| r.elapsed_s).sum();
    let simulated: f64 = results.iter().map(|r| r.wall_s).sum();
    let without = match uncontrolled {
        0 => String::new(),
        1 => "1 claim has no control yet; ".to_string(),
        n => format!("{n} claims have no control yet; "),
    };
    format!(
        "{held} of {seeds} seed claims hold across {} experiment{}, {evidenced} of them against a \
         control that fails ({without}{checks_held} of {checks} own checks; {wall:.1} s \
         wall-clock, {simulated:.1} s summed over parallel runs); docs/reproduce.md explains each \
         disagreement",
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
    let plan = results
        .iter()
        .flat_map(|r| &r.summaries)
        .find_map(|s| s.meta.get("plan"))
        .map_or("default", String::as_str);
    let mut h = format!(
        "<h1>longhaul reproduce</h1>\n<p>{held} of {} claims hold across {} experiment{}.</p>\n\
         <p>{}</p>\n<p>Plan: {}{}</p>\n",
        all.len(),
        results.len(),
        if results.len() == 1 { "" } else { "s" },
        esc(&totals(results)),
        esc(plan),
        if plan == "full" {
            " (the papers' durations)."
        } else {
            ": runs are shortened from the papers' durations, as each experiment says below; \
             `--full` runs them whole."
        }
    );
    for r in results {
        h.push_str(&format!(
            "<h2 id=\"{}\">{} — {}</h2>\n<p>{}; {} run{} in {:.1} s wall-clock, {:.1} s summed \
             over runs</p>\n",
            esc(r.name),
            esc(r.name),
            esc(r.title),
            esc(r.source),
            r.runs.len(),
            if r.runs.len() == 1 { "" } else { "s" },
            r.elapsed_s,
            r.wall_s
        ));
        if plan != "full" {
            if let Some(e) = crate::experiment(r.name) {
                h.push_str(&format!("<p>Shortened: {}</p>\n", esc(e.shortened)));
            }
        }
        h.push_str("<p>runs (simulated seconds):");
        for (run, s) in r.runs.iter().zip(&r.summaries) {
            let file = format!("{}-{}.html", r.name, run.label);
            h.push_str(&format!(
                " <a href=\"{}\">{}</a> ({})",
                esc(&file),
                esc(&run.label),
                short(s.duration_s)
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
                    match c.kind {
                        ClaimKind::Seed => "seed".into(),
                        ClaimKind::Check => "own check".into(),
                    },
                    esc(c.tolerance.as_deref().unwrap_or("")),
                    esc(&c.control.as_ref().map_or("none yet".to_string(), |k| {
                        format!("{} ({})", control_cell(k), k.why)
                    })),
                ]
            })
            .collect();
        html_table(
            &mut h,
            &[
                "claim",
                "paper",
                "measured",
                "unit",
                "holds if",
                "holds",
                "kind",
                "tolerance from",
                "control",
            ],
            &rows,
            1,
        );
        if !r.notes.is_empty() {
            h.push_str(&format!(
                "<h3>Beside the claims</h3>\n<pre>{}</pre>\n",
                esc(&r.notes)
            ));
        }
    }
    // The build and machine are the same for every run; each run's report has its own command.
    if let Some(p) = results
        .iter()
        .flat_map(|r| &r.summaries)
        .find_map(|s| s.provenance.as_ref())
    {
        let rows: Vec<(String, String)> = p
            .rows()
            .into_iter()
            .filter(|(k, _)| !k.starts_with("scenario"))
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        longhaul_metrics::report::provenance_section(&mut h, &rows);
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
            longhaul_output::write(&path, page(r)?.as_bytes()).map_err(MetricsError::from)?;
            paths.push(path);
        }
    }
    let index = dir.join("index.html");
    longhaul_output::write(&index, index_page(results).as_bytes()).map_err(MetricsError::from)?;
    paths.push(index);
    Ok(paths)
}
