//! The metrics oracle on a recorded lab run (no root needed: it reads a fixture).
//!
//! `crates/lab/testdata/oracle/` holds a real run of its `scenario.toml` (Reno, then CUBIC from
//! 1 s, over 20 Mb/s × 40 ms RTT with a 20-packet queue; its `README.md` says how it
//! was recorded): the scenario, the emulator's whole event log (gzip), its report
//! (`emulator.json`), the run's clock (`clock.json`) and the summary the run wrote
//! (`summary.json`). The test
//! 1. rebuilds the links' metrics with lab's own pipeline from those raw inputs
//!    (`queue_log::read_run`, `summary::links`) and finds them equal to what the run wrote;
//! 2. holds them to the deliberately simple reference of `link_oracle` (what it compares and
//!    within what is stated there);
//! 3. shows the reference has teeth: the same inputs less one `drop` line of the log fail it.

mod link_oracle;

use flate2::read::GzDecoder;
use longhaul_emu::forward::DirectionReport;
use longhaul_lab::queue_log::{self, QueueLog};
use longhaul_lab::{plan_from_text, summary, LabPlan, RunClock};
use longhaul_metrics::summary::{LinkSummary, Summary};
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/oracle")
        .join(name)
}

fn text(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The recorded run's raw inputs.
struct Recorded {
    plan: LabPlan,
    clock: RunClock,
    directions: Vec<DirectionReport>,
    log: String,
    written: Summary,
}

fn recorded() -> Recorded {
    let plan = plan_from_text(
        &text("scenario.toml"),
        "testdata/oracle/scenario.toml",
        "scenario",
        &[],
    )
    .expect("the scenario maps onto the lab");
    let clock: RunClock = serde_json::from_str(&text("clock.json")).unwrap();
    let emulator: Value = serde_json::from_str(&text("emulator.json")).unwrap();
    let directions: Vec<DirectionReport> =
        serde_json::from_value(emulator["directions"].clone()).unwrap();
    let mut log = String::new();
    GzDecoder::new(std::fs::File::open(fixture("emulator-events.log.gz")).unwrap())
        .read_to_string(&mut log)
        .unwrap();
    let written = Summary::read(&fixture("summary.json")).unwrap();
    Recorded {
        plan,
        clock,
        directions,
        log,
        written,
    }
}

/// Lab's pipeline from the raw inputs: the two directions' queue logs and the links.
fn pipeline(r: &Recorded, log: &str) -> ([QueueLog; 2], Vec<LinkSummary>) {
    let read = |dir: &str| {
        queue_log::read_run(
            log.as_bytes(),
            dir,
            &r.plan,
            r.clock.epoch_ns,
            r.clock.span_s,
        )
        .unwrap()
    };
    let logs = [read("a>b"), read("b>a")];
    let links = summary::links(&r.plan, &r.directions, &logs[0], &logs[1], r.clock.span_s);
    (logs, links)
}

/// The emulator's coalescing window the run used, ns (`meta.emu_coalesce_us`).
fn coalesce_ns(s: &Summary) -> u64 {
    let us: f64 = s.meta["emu_coalesce_us"].parse().unwrap();
    (us * 1e3).round() as u64
}

fn check(r: &Recorded, log: &str) -> [link_oracle::Found; 2] {
    let (logs, links) = pipeline(r, log);
    link_oracle::check(&link_oracle::Run {
        plan: &r.plan,
        clock: r.clock,
        log,
        coalesce_ns: coalesce_ns(&r.written),
        directions: &r.directions,
        links: &links,
        queue_logs: [&logs[0], &logs[1]],
    })
}

/// Every number of `a` equals `b`'s to 1e-12 relative (JSON's decimal text round-trips an f64
/// to within an ulp); everything else exactly.
fn assert_close(a: &Value, b: &Value, at: &str) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
                "{at}: {x} vs {y}"
            );
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}: lengths");
            for (i, (x, y)) in x.iter().zip(y).enumerate() {
                assert_close(x, y, &format!("{at}[{i}]"));
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            let keys = |m: &serde_json::Map<String, Value>| m.keys().cloned().collect::<Vec<_>>();
            assert_eq!(keys(x), keys(y), "{at}: fields");
            for (k, v) in x {
                assert_close(v, &y[k], &format!("{at}.{k}"));
            }
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}

#[test]
fn the_pipeline_rebuilds_the_recorded_links_from_the_raw_inputs() {
    let r = recorded();
    let (_, links) = pipeline(&r, &r.log);
    assert_eq!(links.len(), r.written.links.len());
    for (rebuilt, written) in links.iter().zip(&r.written.links) {
        assert_close(
            &serde_json::to_value(rebuilt).unwrap(),
            &serde_json::to_value(written).unwrap(),
            &written.name,
        );
    }
}

#[test]
fn the_recorded_links_agree_with_the_reference() {
    let r = recorded();
    let found = check(&r, &r.log);
    for f in &found {
        eprintln!("{}", f.line());
    }
    // The recording is the run it claims to be: a full queue that dropped, on both flows'
    // path; and nothing dropped in the ACK direction.
    let [data, acks] = &found;
    assert!(
        data.drops.get("queue_full").copied().unwrap_or(0) >= 10,
        "{data:?}"
    );
    assert!(data.utilization > 0.5, "{data:?}");
    assert!(acks.drops.is_empty() && acks.accepted > 1000, "{acks:?}");
}

#[test]
fn the_reference_notices_a_missing_drop() {
    let r = recorded();
    let first_drop = r.log.find(" a>b drop ").expect("the run dropped");
    let start = r.log[..first_drop].rfind('\n').unwrap() + 1;
    let end = first_drop + r.log[first_drop..].find('\n').unwrap() + 1;
    let log = format!("{}{}", &r.log[..start], &r.log[end..]);
    let failed = std::panic::catch_unwind(|| check(&r, &log));
    let message = failed.expect_err("a log short of one drop must disagree with the counters");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("drops by reason"), "{message}");
}
