//! Claims evaluated on synthetic summaries, at the edge of their tolerance; the rules; `--list`.

use longhaul_metrics::example::example_summary;
use longhaul_metrics::summary::{FlowSummary, Summary};
use longhaul_reproduce::claim::{num, ClaimSpec, Rule};
use longhaul_reproduce::experiments::table1::NIC_PAYLOAD_BPS;
use longhaul_reproduce::output::{list, paper_number, split_claim};
use longhaul_reproduce::{experiment, Plan, EXPERIMENTS};

/// A summary whose flows have the given congestion controls and throughputs (b/s).
fn synthetic(flows: &[(&str, f64)], duration_s: f64) -> Summary {
    let mut s = example_summary();
    let template = s.flows[0].clone();
    s.duration_s = duration_s;
    s.flows = flows
        .iter()
        .enumerate()
        .map(|(i, &(cc, bps))| FlowSummary {
            id: i as u32,
            cc: cc.to_string(),
            throughput_bps: bps,
            series: None,
            ..template.clone()
        })
        .collect();
    s
}

#[test]
fn rules_hold_at_their_edges_and_not_beyond() {
    assert!(Rule::AtLeast(90.0).test(90.0));
    assert!(!Rule::AtLeast(90.0).test(89.999));
    assert!(Rule::AtMost(0.9).test(0.9));
    assert!(!Rule::AtMost(0.9).test(0.9001));
    let r = Rule::Within {
        target: 6.0,
        tolerance: 0.15,
    };
    assert!(r.test(6.899) && r.test(5.101));
    assert!(!r.test(6.91) && !r.test(5.09));
    assert!(Rule::Between(6.0, 58.0).test(6.0) && !Rule::Between(6.0, 58.0).test(58.1));
    assert!(!Rule::AtLeast(0.0).test(f64::NAN), "NaN never holds");
    assert_eq!(r.describe(), "6 ± 15 %");
}

#[test]
fn claim_text_carries_its_tolerance() {
    let c = ClaimSpec::new("x", num(95.0), "%", "seed 000", Rule::AtLeast(90.0)).evaluate(91.0);
    assert!(c.holds);
    assert_eq!(split_claim(&c), ("x", "≥ 90"));
    assert_eq!(c.measured, 91.0);
}

/// Table 1's utilization claim: 1 flow at 95 % − 5 pp holds at exactly 90 % of the card's
/// payload rate and fails just below; b·m/s is judged against 9.28 × 0.95.
#[test]
fn table1_one_flow_utilization_at_the_tolerance_edge() {
    let e = experiment("table1").unwrap();
    let counts = [1, 2, 7, 9, 10];
    let run = |share: f64| {
        let summaries: Vec<Summary> = counts
            .iter()
            .map(|&n| synthetic(&vec![("fast", share * NIC_PAYLOAD_BPS); n], 3600.0))
            .collect();
        (e.claims)(&Plan::FULL, &summaries)
    };
    // Edges are tested a hair inside and outside: 0.9 × C ÷ C need not be exactly 0.9 in f64.
    let at_edge = run(0.90 + 1e-12);
    assert_eq!(at_edge.len(), 10);
    assert!((at_edge[0].measured - 90.0).abs() < 1e-9);
    assert!(at_edge[0].holds, "90 % is the edge of ≥ 95 − 5");
    // b·m/s: 0.9 × 973.33 Mb/s × 10,037 km = 8.79e15 < 9.28 × 0.95 = 8.816e15.
    assert!((at_edge[1].measured - 0.9 * NIC_PAYLOAD_BPS * 10_037e3 / 1e15).abs() < 1e-9);
    assert!(!at_edge[1].holds);
    let below = run(0.8999);
    assert!(!below[0].holds);
    // 10 flows: paper 88 %, holds from 83 %.
    assert!(at_edge[8].holds);
    assert!(!run(0.8299)[8].holds && run(0.83 + 1e-12)[8].holds);
}

/// The 5-s contest: Lion 327 Mb/s ± 35 %, stock TCP 175 Mb/s ± 35 %, Lion ÷ TCP ≥ 1.
#[test]
fn lion_contest_claims_at_the_tolerance_edge() {
    let e = experiment("lion-contest").unwrap();
    // One bit per second inside each edge.
    let lion_edge = 327e6 * 0.65 + 1.0;
    let reno_edge = 175e6 * 1.35 - 1.0;
    let s = synthetic(&[("lion", lion_edge), ("reno", reno_edge)], 5.0);
    let c = (e.claims)(&Plan::DEFAULT, &[s]);
    assert_eq!(c.len(), 3);
    assert!(c[0].holds, "327 × 0.65 is the lower edge");
    assert!(c[1].holds, "175 × 1.35 is the upper edge");
    assert!((c[2].measured - lion_edge / reno_edge).abs() < 1e-12);
    assert!(!c[2].holds, "212.6 < 236.3 Mb/s: Lion did not win");
    let s = synthetic(&[("lion", 327e6 * 0.65 - 1e3), ("reno", 100e6)], 5.0);
    let c = (e.claims)(&Plan::DEFAULT, &[s]);
    assert!(!c[0].holds && !c[1].holds && c[2].holds);
}

#[test]
fn list_names_every_experiment() {
    let text = list(EXPERIMENTS);
    for e in EXPERIMENTS {
        assert!(text.contains(e.name), "--list lacks {}", e.name);
        assert!(text.contains(e.title));
    }
    assert_eq!(EXPERIMENTS.len(), 10);
}

#[test]
fn paper_figures_print_as_the_paper_prints_them() {
    assert_eq!(paper_number(18.03), "18.03");
    assert_eq!(paper_number(33.99), "33.99");
    assert_eq!(paper_number(4500.0), "4500");
    assert_eq!(paper_number(327.0 / 175.0), "1.87");
}

#[test]
fn wording_quotes_the_faq_and_says_wall_clock() {
    use longhaul_metrics::summary::PaperValue;
    use longhaul_reproduce::experiment::ExperimentResult;
    use longhaul_reproduce::output::{claims_table, totals};
    // reno-climb's prediction drops the FAQ's factor 0.5 (one segment per RTT); its paper
    // cell must quote the FAQ's law with that factor and say it was replaced.
    let e = EXPERIMENTS.iter().find(|e| e.name == "reno-climb").unwrap();
    let plan = Plan::DEFAULT;
    let runs: Vec<Summary> = (e.runs)(&plan)
        .iter()
        .map(|_| synthetic(&[("reno", 500e6)], 60.0))
        .collect();
    let claims = (e.claims)(&plan, &runs);
    let law = claims
        .iter()
        .find(|c| c.claim.contains("one segment per RTT"))
        .unwrap();
    match &law.paper {
        PaperValue::Text(t) => assert!(t.contains("0.5·t·MTU/RTT²"), "{t}"),
        other => panic!("{other}"),
    }
    // The seconds printed with each experiment are wall-clock time, not simulated time.
    let result = ExperimentResult {
        name: e.name,
        title: e.title,
        source: e.source,
        runs: (e.runs)(&plan),
        summaries: runs,
        claims,
        wall_s: 3.3,
    };
    let table = claims_table(&result);
    assert!(table.contains("3.3 s wall-clock in all"), "{table}");
    assert!(!table.contains("of simulation"));
    let total = totals(std::slice::from_ref(&result));
    assert!(total.contains("3.3 s wall-clock in all"), "{total}");
}
