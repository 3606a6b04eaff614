//! Seed 003 (Scalable TCP): "cwnd += 0.01 per ACK, −12.5 % on loss": after a loss the window
//! regains its size in ln(1/(1−b))/ln(1+a) = ln(1/0.875)/ln(1.01) = 13.4 RTTs, 2.7 s at 200 ms,
//! whatever the rate; Reno needs W/2 RTTs, proportional to the rate (Kelly's table at 200 ms:
//! 17 s at 10 Mb/s, 2 min 47 s at 100 Mb/s, 28 min at 1 Gb/s).
//!
//! Model (`scenarios/seed003-scalable.toml`): one flow on a 200 ms path whose drop-tail buffer is
//! 10 % of the bandwidth-delay product, at several rates. The flow fills the buffer and loses a
//! packet again and again, and every loss is a recovery. Recovery time is measured on the
//! congestion window: from the last sample at the window held before a reduction to the first
//! sample back at it (median over the run's recoveries). Sampled every 20 ms for Scalable and
//! 100 ms for Reno. The buffer adds up to 10 % to the RTT while the window is above the
//! bandwidth-delay product, so recoveries take slightly longer than 13.4 propagation RTTs.
//!
//! Default: Scalable at 100 Mb/s and 1 Gb/s for 40 s, Reno at 10 Mb/s (240 s) and 100 Mb/s
//! (800 s). `--full` adds Scalable at 10 Gb/s and Reno at 1 Gb/s (two hours).

use crate::claim::{between, num, ClaimSpec, Rule};
use crate::experiment::{Experiment, Plan, Run};
use crate::measure::{median, recovery_times};
use longhaul_metrics::summary::{Claim, Summary};

/// Where the experiment's claims come from.
pub const SOURCE: &str = "seed 003; Kelly, CCR 33(2) 2003, Table 1";

/// Scalable's recovery, 13.4 RTTs of 200 ms, s.
pub const SCALABLE_RECOVERY_S: f64 = 2.7;
/// The buffer (10 % of the bandwidth-delay product) lengthens the RTT by up to this fraction
/// while the window is above the product, so a recovery counted in RTTs of 200 ms takes up to
/// this much longer in seconds.
pub const BUFFER_RTT: f64 = 0.10;
/// Kelly's figures are rounded (2.7 s for 13.4 × 0.2 = 2.68 s, 17 s for 16.7 s) and the window
/// is sampled every 20 ms (Scalable) or 100 ms (Reno): 3 % either way.
pub const ROUNDING: f64 = 0.03;
/// Reno's window at loss is the product plus the buffer (1.1 W), not Kelly's W: it halves to
/// 0.55 W and regrows 0.55 W packets, 10 % more than W/2.
pub const RENO_WINDOW: f64 = 0.10;

/// The band a recovery time of `cc` may fall in around the paper's `t` (s).
pub fn time_band(cc: &str, t: f64) -> Rule {
    let slow = if cc == "reno" {
        (1.0 + BUFFER_RTT) * (1.0 + RENO_WINDOW)
    } else {
        1.0 + BUFFER_RTT
    };
    between(t * (1.0 - ROUNDING), t * slow * (1.0 + ROUNDING))
}
const TIME_WHY: &str = "Kelly's rounding and the window samples (3 % each way), the buffer's up to 10 % longer RTT (and for Reno a loss at 1.1 W: 10 % more to regrow)";
/// Scalable's recovery times at different rates may differ by the window samples (20 ms of
/// 2.7 s, under 1 % each): the buffer's RTT share is the same at every rate.
pub const SCALABLE_RATIO_TOLERANCE: f64 = 0.02;
const SCALABLE_RATIO_WHY: &str = "the 20 ms window samples, under 1 % of each time; the buffer is the same share of the product at every rate";
/// Reno's ratio: each of its two times may sit anywhere in its band.
pub fn reno_ratio_band() -> Rule {
    let slow = (1.0 + BUFFER_RTT) * (1.0 + RENO_WINDOW);
    between(10.0 / slow, 10.0 * slow)
}
const RENO_RATIO_WHY: &str = "each time anywhere between Kelly's figure and 1.21 × it (the buffer's RTT and the loss at 1.1 W)";
/// A window reduction is a fall of more than this fraction (Scalable cuts 12.5 %).
pub const MIN_DROP: f64 = 0.05;

/// One run: algorithm, rate, Kelly's recovery time, default and full durations.
struct Case {
    cc: &'static str,
    rate_mbps: f64,
    paper_s: f64,
    default_s: Option<f64>,
    full_s: f64,
    min_s: f64,
}

const CASES: [Case; 6] = [
    Case {
        cc: "scalable",
        rate_mbps: 100.0,
        paper_s: SCALABLE_RECOVERY_S,
        default_s: Some(40.0),
        full_s: 300.0,
        min_s: 15.0,
    },
    Case {
        cc: "scalable",
        rate_mbps: 1000.0,
        paper_s: SCALABLE_RECOVERY_S,
        default_s: Some(40.0),
        full_s: 300.0,
        min_s: 15.0,
    },
    Case {
        cc: "scalable",
        rate_mbps: 10_000.0,
        paper_s: SCALABLE_RECOVERY_S,
        default_s: None,
        full_s: 120.0,
        min_s: 15.0,
    },
    Case {
        cc: "reno",
        rate_mbps: 10.0,
        paper_s: 17.0,
        default_s: Some(240.0),
        full_s: 1200.0,
        min_s: 80.0,
    },
    Case {
        cc: "reno",
        rate_mbps: 100.0,
        paper_s: 167.0,
        default_s: Some(800.0),
        full_s: 3600.0,
        min_s: 500.0,
    },
    Case {
        cc: "reno",
        rate_mbps: 1000.0,
        paper_s: 1680.0,
        default_s: None,
        full_s: 7200.0,
        min_s: 5000.0,
    },
];

fn label(c: &Case) -> String {
    if c.rate_mbps >= 1000.0 {
        format!("{}-{}gbit", c.cc, c.rate_mbps / 1000.0)
    } else {
        format!("{}-{}mbit", c.cc, c.rate_mbps)
    }
}

fn cases(plan: &Plan) -> Vec<&'static Case> {
    CASES
        .iter()
        .filter(|c| plan.full || c.default_s.is_some())
        .collect()
}

fn runs(plan: &Plan) -> Vec<Run> {
    cases(plan)
        .into_iter()
        .map(|c| {
            // 10 % of the bandwidth-delay product at 200 ms, in 1500-byte packets.
            let buffer = (c.rate_mbps * 1e6 * 0.2 / (8.0 * 1500.0) * 0.1).round() as u64;
            let secs = plan
                .secs(c.default_s.unwrap_or(c.full_s), c.full_s)
                .max(c.min_s);
            let mut run = Run::new(label(c), "seed003-scalable")
                .set("flows.0.cc", format!("\"{}\"", c.cc))
                .set("links.0.rate", format!("\"{}mbit\"", c.rate_mbps))
                .set("links.0.queue.packets", buffer.max(2))
                .secs(secs);
            if c.cc == "reno" {
                run = run.set("output.interval", "\"100ms\"");
            }
            run
        })
        .collect()
}

fn recovery(s: &Summary) -> f64 {
    match s.flows.first().and_then(|f| f.series.as_ref()) {
        Some(series) => median(&recovery_times(&series.t, &series.cwnd_pkts, MIN_DROP, 0.0)),
        None => f64::NAN,
    }
}

fn claims(plan: &Plan, summaries: &[Summary]) -> Vec<Claim> {
    let cases = cases(plan);
    let times: Vec<(&Case, f64)> = cases
        .iter()
        .zip(summaries)
        .map(|(c, s)| (*c, recovery(s)))
        .collect();
    // The other controller's run at the nearest rate: its recovery time under this one's rule.
    let other = |c: &Case| {
        times
            .iter()
            .filter(|(o, _)| o.cc != c.cc)
            .min_by(|(a, _), (b, _)| {
                let d = |o: &Case| (o.rate_mbps / c.rate_mbps).ln().abs();
                d(a).total_cmp(&d(b))
            })
            .map(|(o, t)| (label(o), *t))
            .unwrap_or_else(|| ("none".to_string(), f64::NAN))
    };
    let mut out = Vec::new();
    for &(c, t) in &times {
        let (who, control) = other(c);
        out.push(
            ClaimSpec::new(
                format!("{} at {}, 200 ms: loss-recovery time", c.cc, label(c)),
                num(c.paper_s),
                "s",
                SOURCE,
                time_band(c.cc, c.paper_s),
                TIME_WHY,
            )
            .evaluate_against(t, (&who, control_why(c.cc), control)),
        );
    }
    let of = |cc: &str| -> Vec<(f64, f64)> {
        times
            .iter()
            .filter(|(c, _)| c.cc == cc)
            .map(|(c, t)| (c.rate_mbps, *t))
            .collect()
    };
    let (scalable, reno) = (of("scalable"), of("reno"));
    out.push(
        ClaimSpec::new(
            "Scalable: recovery time independent of rate (slowest ÷ fastest)",
            num(1.0),
            "×",
            SOURCE,
            Rule::Within {
                target: 1.0,
                tolerance: SCALABLE_RATIO_TOLERANCE,
            },
            SCALABLE_RATIO_WHY,
        )
        .evaluate_against(
            spread(&scalable),
            ("reno", control_why("scalable"), spread(&reno)),
        ),
    );
    let at = |runs: &[(f64, f64)], r: f64| {
        runs.iter()
            .find(|(m, _)| *m == r)
            .map_or(f64::NAN, |(_, t)| *t)
    };
    // Scalable over the same tenfold step of rate (100 Mb/s to 1 Gb/s).
    out.push(
        ClaimSpec::new(
            "Reno: recovery time ∝ rate (100 Mb/s ÷ 10 Mb/s)",
            num(10.0),
            "×",
            SOURCE,
            reno_ratio_band(),
            RENO_RATIO_WHY,
        )
        .evaluate_against(
            at(&reno, 100.0) / at(&reno, 10.0),
            (
                "scalable, 1 Gb/s ÷ 100 Mb/s",
                control_why("reno"),
                at(&scalable, 1000.0) / at(&scalable, 100.0),
            ),
        ),
    );
    out
}

/// Slowest ÷ fastest recovery time of (rate, time) pairs.
fn spread(runs: &[(f64, f64)]) -> f64 {
    let (lo, hi) = runs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(_, t)| {
            (lo.min(t), hi.max(t))
        });
    hi / lo
}

/// Why the other controller is the control of a claim about `cc`.
fn control_why(cc: &str) -> &'static str {
    if cc == "scalable" {
        "Reno grows its window by one packet per round trip, so its recovery time grows with \
         the rate"
    } else {
        "Scalable grows its window by 1 % per round trip, so its recovery time does not depend \
         on the rate"
    }
}

/// The `scalable-recovery` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "scalable-recovery",
    title: "Scalable TCP's loss recovery: constant time across rates, Reno's ∝ rate",
    source: SOURCE,
    shortened: "Scalable 100M/1G 40 s, Reno 10M/100M; --full adds Scalable 10G, Reno 1G (2 h)",
    runs,
    claims,
    notes: None,
    page: None,
};
