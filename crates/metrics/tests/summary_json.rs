//! The result-summary JSON: round trips, lean files, nulls, and errors that point at the problem.

use longhaul_metrics::example::example_summary;
use longhaul_metrics::summary::{Mode, PaperValue, Summary};
use longhaul_metrics::MetricsError;
use std::path::Path;

/// Exactly the fields docs/measurements.md lists, nothing more.
const LEAN: &str = r#"{
  "scenario": "sc2002-1flow", "mode": "lab", "duration_s": 3600.0, "seed": 0,
  "links": [ { "name": "ge0", "capacity_bps": 1e9, "utilization": 0.95, "drops": 12,
               "queue_delay_ms": { "mean": 1.5, "p95": 3.0, "p99": 4.5 } } ],
  "flows": [ { "id": 1, "cc": "fast", "throughput_bps": 925e6, "utilization": 0.9503,
               "min_rtt_ms": 180.0, "queueing_delay_ms": { "mean": 1.5, "p95": 3.0 },
               "loss_rate": 0.0001, "retransmits": 12, "bmps": 9.284e15 } ],
  "aggregate": { "throughput_bps": 925e6, "utilization": 0.9503, "jain": 1.0, "cov": 0.02,
                 "bmps": 9.284e15 } }"#;

#[test]
fn lean_file_with_only_the_design_fields_parses() {
    let s = Summary::from_json(LEAN, Path::new("lean.json")).unwrap();
    assert_eq!(s.mode, Mode::Lab);
    assert_eq!(s.flows[0].cc, "fast");
    assert_eq!(s.flows[0].throughput_bps, 925e6);
    assert_eq!(s.flows[0].series, None);
    assert_eq!(s.flows[0].queueing_delay_ms.p99, None);
    assert_eq!(s.links[0].queue_delay_ms.p99, 4.5);
    assert!(s.claims.is_empty());
    assert!(s.problems().is_empty(), "{:?}", s.problems());
    // Writing it back adds no fields that were absent.
    let again = s.to_json().unwrap();
    assert!(!again.contains("series") && !again.contains("claims") && !again.contains("p50"));
    assert_eq!(Summary::from_json(&again, Path::new("x")).unwrap(), s);
}

#[test]
fn full_summary_round_trips_exactly() {
    let s = example_summary();
    assert!(s.flows.iter().all(|f| f.series.is_some()));
    let json = s.to_json().unwrap();
    let back = Summary::from_json(&json, Path::new("example.json")).unwrap();
    // Series carry NaN (null) where a flow had not started, and NaN != NaN: compare the JSON.
    assert_eq!(back.to_json().unwrap(), json);
    assert_eq!(back.flows[0], s.flows[0]);
    assert_eq!(back.links, s.links);
    // And through a file.
    let dir = std::env::temp_dir().join(format!("longhaul-metrics-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.json");
    s.write(&path).unwrap();
    assert_eq!(Summary::read(&path).unwrap().to_json().unwrap(), json);
    assert!(!dir.join("s.json.tmp").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn undefined_values_are_written_as_null_and_read_as_nan() {
    let mut s = example_summary();
    s.aggregate.jain = f64::NAN;
    s.flows[0].series.as_mut().unwrap().rtt_ms[0] = f64::NAN;
    let json = s.to_json().unwrap();
    assert!(json.contains("\"jain\": null"));
    let back = Summary::from_json(&json, Path::new("n.json")).unwrap();
    assert!(back.aggregate.jain.is_nan());
    assert!(back.flows[0].series.as_ref().unwrap().rtt_ms[0].is_nan());
}

#[test]
fn claims_accept_numbers_or_text() {
    let text = LEAN.trim_end().trim_end_matches('}').to_string()
        + r#", "claims": [ { "claim": "utilization", "paper": 0.95, "measured": 0.9503, "holds": true },
                           { "claim": "stable", "paper": "yes", "measured": 0.02, "holds": true } ] }"#;
    let s = Summary::from_json(&text, Path::new("c.json")).unwrap();
    assert_eq!(s.claims[0].paper, PaperValue::Number(0.95));
    assert_eq!(s.claims[1].paper, PaperValue::Text("yes".into()));
}

#[test]
fn malformed_json_names_file_line_and_column() {
    let broken = LEAN.replace("\"seed\": 0,", "\"seed\": 0,,");
    match Summary::from_json(&broken, Path::new("runs/a.json")) {
        Err(MetricsError::Parse {
            path,
            line,
            column,
            message,
        }) => {
            assert_eq!(path, Path::new("runs/a.json"));
            assert_eq!(line, 2);
            assert_eq!(column, 78); // the second comma
            assert_eq!(message, "key must be a string");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    let e = Summary::from_json(&broken, Path::new("runs/a.json")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("runs/a.json is not a longhaul result summary"),
        "{e}"
    );
    assert!(e.to_string().ends_with("at line 2, column 78"), "{e}");
}

#[test]
fn wrong_mode_and_missing_field_are_explained() {
    let e = Summary::from_json(&LEAN.replace("\"lab\"", "\"emu\""), Path::new("m.json"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown variant `emu`") && e.contains("`sim`"),
        "{e}"
    );
    let e = Summary::from_json(&LEAN.replace("\"seed\": 0,", ""), Path::new("m.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing field `seed`"), "{e}");
}

#[test]
fn unreadable_file_is_a_read_error_with_the_path() {
    let e = Summary::read(Path::new("/nonexistent/longhaul/result.json")).unwrap_err();
    assert!(matches!(e, MetricsError::Read { .. }));
    assert!(
        e.to_string().contains("/nonexistent/longhaul/result.json"),
        "{e}"
    );
}

#[test]
fn read_all_accepts_an_array_or_one_object() {
    let dir = std::env::temp_dir().join(format!("longhaul-metrics-ra-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let one = dir.join("one.json");
    let many = dir.join("many.json");
    std::fs::write(&one, LEAN).unwrap();
    std::fs::write(&many, format!("[{LEAN}, {LEAN}]")).unwrap();
    assert_eq!(Summary::read_all(&one).unwrap().len(), 1);
    assert_eq!(Summary::read_all(&many).unwrap().len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn problems_reports_inconsistent_series_and_ids() {
    let mut s = example_summary();
    assert!(s.problems().is_empty(), "{:?}", s.problems());
    s.flows[1].series.as_mut().unwrap().cwnd_pkts.pop();
    s.flows[2].id = s.flows[0].id;
    let p = s.problems();
    assert!(
        p.iter()
            .any(|m| m.contains("series.cwnd_pkts has 199 entries, t has 200")),
        "{p:?}"
    );
    assert!(p.iter().any(|m| m.contains("share an id")), "{p:?}");
}

#[test]
fn drop_ledger_prefers_flows_and_falls_back_to_links() {
    let mut s = example_summary();
    let ledger = s.drop_ledger();
    assert_eq!(ledger.total(), 4);
    assert_eq!(ledger.at("bottleneck"), 4);
    for f in &mut s.flows {
        f.drops.clear();
    }
    s.links[0].drops_by_reason.insert("random".into(), 2);
    let ledger = s.drop_ledger();
    assert_eq!(ledger.total(), 6); // 4 queue_full + 2 random, from the link
    assert_eq!(ledger.for_reason("random"), 2);
}
