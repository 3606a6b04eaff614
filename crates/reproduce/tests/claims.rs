//! Claims evaluated on synthetic summaries, at the edge of their tolerance; the rules; `--list`.

use longhaul_metrics::example::example_summary;
use longhaul_metrics::summary::{FlowSeries, FlowSummary, Summary};
use longhaul_reproduce::claim::{at_least, at_most, between, num, ClaimKind, ClaimSpec, Rule};
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

/// `synthetic`, with each flow's 1-s series at the card's full rate in the first half (slow
/// start, left out of the default plan's average) and at its throughput in the second.
fn halves(flows: &[(&str, f64)], duration_s: f64) -> Summary {
    let mut s = synthetic(flows, duration_s);
    for f in &mut s.flows {
        let t: Vec<f64> = (0..duration_s as usize).map(|i| i as f64).collect();
        let bps = f.throughput_bps;
        let throughput_bps = t
            .iter()
            .map(|&x| {
                if x < duration_s / 2.0 {
                    NIC_PAYLOAD_BPS
                } else {
                    bps
                }
            })
            .collect();
        f.series = Some(FlowSeries {
            t,
            throughput_bps,
            ..Default::default()
        });
    }
    s
}

#[test]
fn rules_hold_at_their_edges_and_not_beyond() {
    assert!(at_least(90.0).test(90.0));
    assert!(!at_least(90.0).test(89.999));
    assert!(at_most(0.9).test(0.9));
    assert!(!at_most(0.9).test(0.9001));
    let r = Rule::Within {
        target: 6.0,
        tolerance: 0.15,
    };
    assert!(r.test(6.899) && r.test(5.101));
    assert!(!r.test(6.91) && !r.test(5.09));
    assert!(between(6.0, 58.0).test(6.0) && !between(6.0, 58.0).test(58.1));
    assert!(!at_least(0.0).test(f64::NAN), "NaN never holds");
    assert_eq!(r.describe(), "6 ± 15 %");
}

#[test]
fn claim_text_carries_its_tolerance_and_its_source() {
    let c = ClaimSpec::new("x", num(95.0), "%", "seed 000", at_least(90.0), "why").evaluate(91.0);
    assert!(c.holds);
    assert_eq!(split_claim(&c), ("x", "≥ 90"));
    assert_eq!(c.measured, 91.0);
    assert_eq!(c.kind, ClaimKind::Seed);
    assert_eq!(c.rule, Some(at_least(90.0)));
    assert_eq!(c.tolerance.as_deref(), Some("why"));
    let json = serde_json::to_string(&c).unwrap();
    assert!(json.contains(r#""kind":"seed""#), "{json}");
    assert!(
        json.contains(r#""rule":{"kind":"at_least","bound":90.0}"#),
        "{json}"
    );
    let check = ClaimSpec::new("y", num(1.0), "", "s", at_most(1.0), "").check();
    assert_eq!(check.evaluate(1.0).kind, ClaimKind::Check);
    assert_eq!(check.evaluate(1.0).tolerance, None);
}

/// Table 1's utilization claim: 1 flow at 95 % × 1443/1460 (93.9 %) holds at that share of the
/// card's payload rate and fails just below; b·m/s is judged against 9.28 × 1443/1460.
#[test]
fn table1_one_flow_utilization_at_the_tolerance_edge() {
    use longhaul_reproduce::experiments::table1::{CONTRAST_ROWS, CONTROLLERS, HEADER_RATIO};
    let e = experiment("table1").unwrap();
    let counts = [1, 2, 7, 9, 10];
    let run = |share: f64, contrast: (f64, f64)| {
        let mut summaries: Vec<Summary> = CONTROLLERS
            .iter()
            .flat_map(|cc| {
                counts
                    .iter()
                    .map(move |&n| synthetic(&vec![(*cc, share * NIC_PAYLOAD_BPS); n], 3600.0))
            })
            .collect();
        for &row in &CONTRAST_ROWS {
            for (cc, x) in [("fast", contrast.0), ("reno", contrast.1)] {
                summaries.push(synthetic(
                    &vec![(cc, x * NIC_PAYLOAD_BPS); counts[row]],
                    3600.0,
                ));
            }
        }
        (e.claims)(&Plan::FULL, &summaries)
    };
    let edge = 0.95 * HEADER_RATIO;
    // Edges are tested a hair inside and outside: x × C ÷ C need not be exactly x in f64.
    let at_edge = run(edge + 1e-12, (0.88 * HEADER_RATIO + 1e-12, 0.48));
    assert_eq!(at_edge.len(), 10 + 4);
    assert!((at_edge[0].measured - 100.0 * edge).abs() < 1e-9);
    assert!(at_edge[0].holds, "93.9 % is the edge of ≥ 95 × 1443/1460");
    // b·m/s: 0.9389 × 973.33 Mb/s × 10,037 km = 9.1729e15 ≥ 9.28 × 1443/1460 = 9.1719e15.
    assert!((at_edge[1].measured - edge * NIC_PAYLOAD_BPS * 10_037e3 / 1e15).abs() < 1e-9);
    assert!(at_edge[1].holds);
    let below = run(edge - 1e-4, (0.9, 0.1));
    assert!(!below[0].holds && !below[1].holds);
    // 10 flows: paper 88 %, holds from 86.98 %.
    let ten = 0.88 * HEADER_RATIO;
    assert!(!run(ten - 1e-4, (0.9, 0.1))[8].holds && run(ten + 1e-12, (0.9, 0.1))[8].holds);
    // The contrast: FAST at ≥ 88 × 1443/1460, Reno at ≤ 48 %, with random loss.
    assert!(
        at_edge[10].holds && at_edge[11].holds,
        "{:?}",
        &at_edge[10..]
    );
    let fails = run(edge, (0.88 * HEADER_RATIO - 1e-4, 0.4801));
    assert!(!fails[10].holds && !fails[11].holds);
    assert!(fails[10]
        .claim
        .starts_with("FAST, 1 flow, 180 ms, random loss 1e-6"));
}

/// The side-by-side notes print every controller's contrast run: FAST and Reno in their 120-s
/// row, the data-only controllers in their 24-s row, each value in its controller's column; the
/// claims stay FAST's and Reno's.
#[test]
fn table1_notes_show_every_controller_on_the_contrast_rows() {
    use longhaul_reproduce::experiments::table1::{
        CONTRAST_CLAIMED, CONTRAST_DATA, CONTRAST_ROWS, CONTROLLERS,
    };
    let e = experiment("table1").unwrap();
    let counts = [1u32, 2, 7, 9, 10];
    let mut summaries: Vec<Summary> = CONTROLLERS
        .iter()
        .flat_map(|cc| {
            counts
                .iter()
                .map(move |&n| halves(&vec![(*cc, 0.5 * NIC_PAYLOAD_BPS); n as usize], 30.0))
        })
        .collect();
    // Distinct shares: 11 %, 12 % (FAST, Reno, 1 flow), 21 %, 22 % (2 flows); the others
    // 31–35 % (1 flow) and 41–45 % (2 flows).
    for (k, &row) in CONTRAST_ROWS.iter().enumerate() {
        for (j, cc) in CONTRAST_CLAIMED.iter().enumerate() {
            let share = (10.0 * (k + 1) as f64 + (j + 1) as f64) / 100.0;
            let n = counts[row] as usize;
            summaries.push(halves(&vec![(*cc, share * NIC_PAYLOAD_BPS); n], 120.0));
        }
    }
    for (k, &row) in CONTRAST_ROWS.iter().enumerate() {
        for (j, cc) in CONTRAST_DATA.iter().enumerate() {
            let share = (30.0 + 10.0 * k as f64 + (j + 1) as f64) / 100.0;
            let n = counts[row] as usize;
            summaries.push(halves(&vec![(*cc, share * NIC_PAYLOAD_BPS); n], 24.0));
        }
    }
    let notes = (e.notes.unwrap())(&Plan::DEFAULT, &summaries);
    let cells = |label: &str| -> Vec<String> {
        let line = notes
            .lines()
            .find(|l| l.contains(label))
            .unwrap_or_else(|| panic!("no row `{label}` in\n{notes}"));
        line.split("  ")
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()
    };
    let column = |cc: &str| 2 + CONTROLLERS.iter().position(|c| *c == cc).unwrap();
    for (k, flows) in ["1 flow,", "2 flows,"].iter().enumerate() {
        let claimed = cells(&format!("{flows} 180 ms, loss 1e-6, 120 s"));
        let data = cells(&format!("{flows} 180 ms, loss 1e-6, 24 s"));
        for (j, cc) in CONTRAST_CLAIMED.iter().enumerate() {
            let want = format!("{}", 10 * (k + 1) + j + 1);
            assert_eq!(claimed[column(cc)], want, "{cc} {flows}\n{notes}");
            assert_eq!(data[column(cc)], "-", "{cc} {flows}\n{notes}");
        }
        for (j, cc) in CONTRAST_DATA.iter().enumerate() {
            let want = format!("{}", 30 + 10 * k + j + 1);
            assert_eq!(data[column(cc)], want, "{cc} {flows}\n{notes}");
            assert_eq!(claimed[column(cc)], "-", "{cc} {flows}\n{notes}");
        }
    }
    // Only FAST's and Reno's contrast runs are claims.
    let claims = (e.claims)(&Plan::DEFAULT, &summaries);
    assert_eq!(claims.len(), 10 + 4);
}

/// The control of the contest: stock TCP against stock TCP must stay below the paper's margin,
/// which Lion's ratio must reach; stock TCP's own throughput is a check (a property of the
/// Linux 2.4 model, not of Lion), not a seed claim.
#[test]
fn lion_contest_control_must_miss_the_margin_lion_must_reach() {
    use longhaul_metrics::summary::ClaimKind;
    use longhaul_reproduce::experiments::lion::{
        CONTEST_CONTROL, CONTEST_RATIO_MIN, CONTEST_VARIANTS,
    };
    let e = experiment("lion-contest").unwrap();
    let runs = (e.runs)(&Plan::DEFAULT);
    assert_eq!(runs.last().unwrap().label, CONTEST_CONTROL);
    assert!(runs
        .last()
        .unwrap()
        .overrides
        .iter()
        .any(|o| o == "flows.0.cc=\"reno\""));
    // 327 × 0.985 ÷ (175 × 1.015).
    assert!(
        (CONTEST_RATIO_MIN - 1.813).abs() < 0.001,
        "{CONTEST_RATIO_MIN}"
    );
    let contest = synthetic(&[("lion", 330e6), ("reno", 175e6)], 5.0);
    let other = || synthetic(&[("lion", 330e6), ("reno", 175e6)], 5.0);
    let with_control = |first: f64, second: f64| {
        let mut all = vec![contest.clone()];
        all.extend((1..CONTEST_VARIANTS.len()).map(|_| other()));
        all.push(synthetic(&[("reno", first), ("reno", second)], 5.0));
        (e.claims)(&Plan::DEFAULT, &all)
    };
    let c = with_control(250e6, 245e6);
    assert_eq!(c.len(), 3);
    assert_eq!(
        c[1].kind,
        ClaimKind::Check,
        "stock TCP's throughput is a check"
    );
    assert!(c[2].holds, "Lion 330 ÷ 175 reaches the margin");
    let control = c[2].control.as_ref().unwrap();
    assert!((control.measured - 250.0 / 245.0).abs() < 1e-9);
    assert!(control.fails, "equal Renos stay below the margin");
    assert!(c[2].evidenced());
    // A control at 2.7× passes the test too: the ratio is then no evidence, and a check.
    let c = with_control(400e6, 150e6);
    assert!(!c[2].control.as_ref().unwrap().fails);
    assert!(!c[2].evidenced() && c[2].kind == ClaimKind::Check);
    // Lion above stock TCP, but below the paper's margin: the ratio claim fails.
    let c = (e.claims)(
        &Plan::DEFAULT,
        &[synthetic(&[("lion", 300e6), ("reno", 200e6)], 5.0)],
    );
    assert!(!c[2].holds);
}

/// The 5-s contest: Lion 327 Mb/s ± 1.5 %, stock TCP 175 Mb/s ± 1.5 %, Lion ÷ TCP at least the
/// paper's margin.
#[test]
fn lion_contest_claims_at_the_tolerance_edge() {
    use longhaul_reproduce::experiments::lion::CONTEST_TOLERANCE;
    let e = experiment("lion-contest").unwrap();
    // One bit per second inside each edge.
    let lion_edge = 327e6 * (1.0 - CONTEST_TOLERANCE) + 1.0;
    let reno_edge = 175e6 * (1.0 + CONTEST_TOLERANCE) - 1.0;
    let s = synthetic(&[("lion", lion_edge), ("reno", reno_edge)], 5.0);
    let c = (e.claims)(&Plan::DEFAULT, &[s]);
    assert_eq!(c.len(), 3);
    assert!(c[0].holds, "327 × 0.985 is the lower edge");
    assert!(c[1].holds, "175 × 1.015 is the upper edge");
    assert!((c[2].measured - lion_edge / reno_edge).abs() < 1e-12);
    assert!(c[2].holds);
    let s = synthetic(&[("lion", lion_edge - 1e3), ("reno", 400e6)], 5.0);
    let c = (e.claims)(&Plan::DEFAULT, &[s]);
    assert!(!c[0].holds && !c[1].holds && !c[2].holds);
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
    // The seconds printed with each experiment are wall-clock time, not simulated time; runs in
    // parallel take less wall-clock time than their sum.
    let result = ExperimentResult {
        name: e.name,
        title: e.title,
        source: e.source,
        runs: (e.runs)(&plan),
        summaries: runs,
        claims,
        notes: String::new(),
        wall_s: 7.5,
        elapsed_s: 3.3,
    };
    let table = claims_table(&result);
    assert!(
        table.contains("in 3.3 s wall-clock, 7.5 s summed over runs"),
        "{table}"
    );
    assert!(!table.contains("of simulation"));
    // The one-segment row is the model's own prediction: shown apart, not counted as a seed's.
    let checks = table.find("own checks").expect("a checks section");
    assert!(
        table.find("one segment per RTT").unwrap() > checks,
        "{table}"
    );
    assert!(table.find("the FAQ's time").unwrap() < checks, "{table}");
    let total = totals(std::slice::from_ref(&result));
    assert!(
        total.contains("3.3 s wall-clock, 7.5 s summed over parallel runs"),
        "{total}"
    );
    let seeds = result
        .claims
        .iter()
        .filter(|c| c.kind == ClaimKind::Seed)
        .count();
    assert_eq!(seeds, 2);
    assert!(total.contains(" of 2 seed claims hold"), "{total}");
    assert!(total.contains(" of 1 own checks"), "{total}");
}

/// The contest prints its claims on every variant (stock TCP's host queue, cross traffic),
/// marking the judged model, with each claim's verdict there; the control (Linux 2.4 in Lion's
/// place) runs last.
#[test]
fn lion_contest_prints_its_claims_on_every_variant() {
    use longhaul_reproduce::experiments::lion::{CONTEST_CONTROL, CONTEST_VARIANTS};
    let e = experiment("lion-contest").unwrap();
    let runs = (e.runs)(&Plan::DEFAULT);
    assert_eq!(runs.len(), CONTEST_VARIANTS.len() + 1);
    assert_eq!(runs.last().unwrap().label, CONTEST_CONTROL);
    // The judged model: txqueuelen 100, no cross traffic.
    assert_eq!(CONTEST_VARIANTS[0].1, 100);
    assert_eq!(CONTEST_VARIANTS[0].2, 0.0);
    let mut summaries: Vec<Summary> = [
        (327e6, 175e6),
        (600e6, 100e6),
        (500e6, 150e6),
        (150e6, 200e6),
        (170e6, 400e6),
        (160e6, 300e6),
    ]
    .iter()
    .map(|&(lion, reno)| synthetic(&[("lion", lion), ("reno", reno)], 5.0))
    .collect();
    let notes = (e.notes.expect("the contest prints its variants"))(&Plan::DEFAULT, &summaries);
    let judged = notes
        .lines()
        .find(|l| l.contains("(judged)"))
        .unwrap_or_else(|| panic!("no judged row: {notes}"));
    assert!(
        judged.contains("327 yes") && judged.contains("175 yes"),
        "{judged}"
    );
    // Lion's throughput is judged one-sided: more than the paper's holds, less fails.
    assert!(notes.contains("600 yes"), "{notes}");
    assert!(notes.contains("150 NO"), "{notes}");
    // Where stock TCP got more than Lion the ratio fails.
    assert!(notes.contains("0.75 NO"), "{notes}");
    assert!(notes.contains("0.425 NO"), "{notes}");
    // Claims: Lion's throughput and the ratio are seed claims; the control (two Renos sharing
    // equally) fails both.
    summaries.push(synthetic(&[("reno", 250e6), ("reno", 250e6)], 5.0));
    let claims = (e.claims)(&Plan::DEFAULT, &summaries);
    let seeds: Vec<_> = claims
        .iter()
        .filter(|c| c.kind == ClaimKind::Seed)
        .collect();
    assert_eq!(seeds.len(), 2, "{claims:?}");
    assert!(seeds.iter().all(|c| c.holds), "{claims:?}");
    assert!(
        seeds
            .iter()
            .all(|c| c.control.as_ref().is_some_and(|k| k.fails)),
        "{claims:?}"
    );
}

/// lion-buffers: per transport and cross traffic, the count of buffers where Lion loses no more
/// than the better window-based sender at ≥ 90 % of the faster one's rate, and the same count
/// for BBR, the control, which must miss at least one.
#[test]
fn lion_buffers_counts_cells_and_its_control_must_miss_one() {
    use longhaul_reproduce::experiments::lion_buffers::{grid, CONTROL_CC, SEEDS};
    let e = experiment("lion-buffers").unwrap();
    let points = grid(&Plan::DEFAULT).unwrap();
    assert_eq!((e.runs)(&Plan::DEFAULT).len(), points.len());
    let with_loss = |cc: &str, bps: f64, lost: u64| {
        let mut s = synthetic(&[(cc, bps)], 30.0);
        s.flows[0].packets_sent = Some(100_000);
        s.flows[0].packets_lost = Some(lost);
        s
    };
    // Lion: 80 Mb/s, 1 loss; Reno 60 Mb/s, 5; CUBIC 70 Mb/s, 3; BBR 80 Mb/s, 2 except on the
    // deepest buffer of every group, where it loses nothing.
    let summaries: Vec<Summary> = points
        .iter()
        .map(|p| match p.cc.as_str() {
            "lion" => with_loss("lion", 80e6, 1),
            "reno" => with_loss("reno", 60e6, 5),
            "cubic" => with_loss("cubic", 70e6, 3),
            _ => with_loss(
                CONTROL_CC,
                80e6,
                if p.buffer_packets == 667 { 0 } else { 5 },
            ),
        })
        .collect();
    let c = (e.claims)(&Plan::DEFAULT, &summaries);
    assert_eq!(c.len(), 4);
    for claim in &c {
        assert_eq!(claim.measured, 5.0);
        assert!(claim.holds, "{}", claim.claim);
        let control = claim.control.as_ref().unwrap();
        assert_eq!(control.measured, 1.0);
        assert!(control.fails, "the control missed four buffers");
        assert!(claim.evidenced());
    }
    // Lion slower than 90 % of CUBIC's 70 Mb/s in one buffer: that group misses it.
    let mut slow = summaries.clone();
    for run in slow.iter_mut().take(SEEDS) {
        *run = with_loss("lion", 62e6, 0);
    }
    let c = (e.claims)(&Plan::DEFAULT, &slow);
    assert_eq!(c[0].measured, 4.0);
    assert!(
        !c[0].holds && c[0].claim.contains("missed: 2.1 %"),
        "{}",
        c[0].claim
    );
    // A control that holds everywhere fails its claim.
    let all: Vec<Summary> = points
        .iter()
        .zip(&summaries)
        .map(|(p, s)| {
            if p.cc == CONTROL_CC {
                with_loss(CONTROL_CC, 80e6, 0)
            } else {
                s.clone()
            }
        })
        .collect();
    let c = (e.claims)(&Plan::DEFAULT, &all);
    assert!(!c[0].control.as_ref().unwrap().fails && !c[0].evidenced());
}
