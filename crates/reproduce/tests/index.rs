//! `reproduce --report DIR`: index.html links every run's report with the experiment's claims.

use longhaul_metrics::example::example_summary;
use longhaul_metrics::summary::{Claim, ClaimKind, PaperValue, Rule};
use longhaul_reproduce::output::write_reports;
use longhaul_reproduce::{ExperimentResult, Run};

fn claim(text: &str, paper: f64, measured: f64, holds: bool) -> Claim {
    Claim {
        claim: format!("{text} [holds if within 10 %]"),
        paper: PaperValue::Number(paper),
        measured,
        holds,
        unit: Some("Mb/s".into()),
        source: Some("seed 000, Table 1".into()),
        kind: ClaimKind::Seed,
        rule: Some(Rule::Within {
            target: paper,
            tolerance: 0.1,
        }),
        tolerance: Some("the run's length".into()),
        control: None,
    }
}

#[test]
fn index_links_every_run_with_its_claims() {
    let claims = vec![
        claim("1-flow throughput", 925.0, 931.5, true),
        claim("10-flow <fairness>", 0.99, 0.71, false),
    ];
    let result = ExperimentResult {
        name: "table1",
        title: "Table 1",
        source: "seed 000",
        runs: vec![
            Run::new("fast-1flow", "seed000-180ms"),
            Run::new("fast-10flow", "seed000-180ms"),
        ],
        summaries: vec![example_summary(), example_summary()],
        claims,
        notes: "cross traffic | Lion | TCP\n300 | 377 | 179\n".into(),
        wall_s: 4.0,
        elapsed_s: 2.5,
    };
    let dir = std::env::temp_dir().join(format!("longhaul-index-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let paths = write_reports(&[result], &dir).unwrap();
    let index = paths.last().unwrap();
    assert_eq!(index, &dir.join("index.html"));
    let html = std::fs::read_to_string(index).unwrap();
    // A link per run, to a file that exists.
    for run in ["fast-1flow", "fast-10flow"] {
        let file = format!("table1-{run}.html");
        assert!(
            html.contains(&format!("<a href=\"{file}\">{run}</a>")),
            "{run}"
        );
        assert!(dir.join(&file).is_file());
    }
    // Each claim with the paper's and the measured value, and whether it holds.
    assert!(html.contains("1 of 2 claims hold across 1 experiment."));
    assert!(html.contains("<td>1-flow throughput</td>"));
    // Measured values as the terminal table prints them (931.5 to three figures).
    assert!(html.contains("<td class=\"n\">925</td><td class=\"n\">932</td>"));
    assert!(html.contains("<td class=\"n\">0.99</td><td class=\"n\">0.71</td>"));
    assert!(html.contains("10-flow &lt;fairness&gt;"), "escaped");
    assert!(html.contains("<span class=\"no\">no</span>"));
    assert!(html.contains("within 10 %"));
    // Everything the terminal shows: each claim's kind and where its tolerance comes from, the
    // notes beside the claims, what the default plan shortened, and the true wall-clock time.
    assert!(
        html.contains(">seed</td><td class=\"n\">the run's length</td>"),
        "{html}"
    );
    assert!(html.contains("<pre>cross traffic | Lion | TCP\n300 | 377 | 179\n</pre>"));
    assert!(html.contains("Shortened: "));
    assert!(html.contains("runs are shortened from the papers' durations"));
    assert!(html.contains("2 runs in 2.5 s wall-clock, 4.0 s summed over runs"));
    assert!(html.contains("2.5 s wall-clock, 4.0 s summed over parallel runs"));
    std::fs::remove_dir_all(&dir).unwrap();
}
