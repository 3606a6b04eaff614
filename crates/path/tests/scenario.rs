//! Scenario errors name the file, the field and what is allowed; overrides reach any field.

use longhaul_path::Scenario;

const OK: &str = r#"
duration = "10s"
[[links]]
name = "core"
rate = "1gbit"
delay = "90ms"
[topology]
kind = "dumbbell"
bottleneck = "core"
[[flows]]
cc = "reno"
"#;

fn err(text: &str, sets: &[&str]) -> String {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    match Scenario::parse(text, "exp.toml", "exp", &sets) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_valid_scenario_gets_its_defaults() {
    let c = Scenario::parse(OK, "exp.toml", "exp", &[]).unwrap();
    assert_eq!(c.name, "exp");
    assert_eq!(c.scenario.seed, 1);
    assert_eq!(c.scenario.links[0].mtu, 1500);
    assert_eq!(c.scenario.links[0].delay.0, 90_000_000);
    assert_eq!(c.scenario.links[0].overhead.0, 0);
    assert_eq!(c.flows.len(), 1);
    assert_eq!(c.flows[0].stop, 10_000_000_000);
}

#[test]
fn unknown_fields_are_named_with_the_allowed_ones() {
    let e = err(
        &OK.replace("delay = \"90ms\"", "delay = \"90ms\"\nlatency = 3"),
        &[],
    );
    assert!(e.starts_with("exp.toml: field `links[0].latency`"), "{e}");
    assert!(
        e.contains("unknown field `latency`") && e.contains("`delay`"),
        "{e}"
    );
}

#[test]
fn bad_values_say_what_is_allowed() {
    let e = err(&OK.replace("\"1gbit\"", "\"fast\""), &[]);
    assert!(e.contains("links[0].rate") && e.contains("1gbit"), "{e}");
    let e = err(&OK.replace("kind = \"dumbbell\"", "kind = \"star\""), &[]);
    assert!(
        e.contains("topology.kind") && e.contains("parking_lot"),
        "{e}"
    );
    let e = err(&OK.replace("cc = \"reno\"", "cc = \"tahoe\""), &[]);
    assert!(e.contains("flows[0].cc") && e.contains("reno"), "{e}");
    let e = err(&OK.replace("cc = \"reno\"", "cc = \"reno:beta=7\""), &[]);
    assert!(e.contains("flows[0].cc") && e.contains("beta"), "{e}");
    let e = err(
        &OK.replace("delay = \"90ms\"", "delay = \"90ms\"\nloss = 1.5"),
        &[],
    );
    assert!(
        e.contains("links[0].loss") && e.contains("probability"),
        "{e}"
    );
}

/// `loss` is a probability or a loss model's table; a bad model names its parameter.
#[test]
fn loss_models_are_checked_by_parameter() {
    let with = |loss: &str| OK.replace("delay = \"90ms\"", &format!("delay = \"90ms\"\n{loss}"));
    let c = Scenario::parse(
        &with("loss = { model = \"gilbert_elliott\", p = 0.01, r = 0.25 }"),
        "exp.toml",
        "exp",
        &[],
    )
    .unwrap();
    assert!((c.scenario.links[0].loss.mean() - 0.01 / 0.26).abs() < 1e-12);
    let e = err(
        &with("reverse_loss = { model = \"gilbert_elliott\", p = 0.01, r = 0 }"),
        &[],
    );
    assert!(
        e.starts_with("exp.toml: field `links[0].reverse_loss.r`") && e.contains("r > 0"),
        "{e}"
    );
    let e = err(
        &with("loss = { model = \"gilbert_elliott\", p = 2, r = 0.5 }"),
        &[],
    );
    assert!(
        e.contains("links[0].loss.p") && e.contains("not a probability in [0, 1]"),
        "{e}"
    );
    let e = err(&with("loss = { model = \"fading\" }"), &[]);
    assert!(
        e.contains("links[0].loss") && e.contains("gilbert_elliott"),
        "{e}"
    );
    // `--set` still takes a plain probability.
    let c = Scenario::parse(OK, "exp.toml", "exp", &["links.0.loss=0.001".into()]).unwrap();
    assert_eq!(c.scenario.links[0].loss.mean(), 0.001);
}

/// `jitter`, `reorder`, `reorder_by` and `duplicate` are checked as the delay line needs them.
#[test]
fn delay_line_settings_are_checked() {
    let with = |extra: &str| OK.replace("delay = \"90ms\"", &format!("delay = \"90ms\"\n{extra}"));
    let c = Scenario::parse(
        &with("jitter = \"2ms\"\nreorder = 0.01\nreorder_by = \"1ms\"\nduplicate = 0.02"),
        "exp.toml",
        "exp",
        &[],
    )
    .unwrap();
    let d = c.scenario.links[0].delay_config();
    assert_eq!(
        (
            d.delay_ns,
            d.jitter_ns,
            d.reorder_p,
            d.reorder_by_ns,
            d.duplicate_p
        ),
        (90_000_000, 2_000_000, 0.01, 1_000_000, 0.02)
    );
    let e = err(&with("duplicate = 1.0"), &[]);
    assert!(
        e.starts_with("exp.toml: field `links[0].duplicate`") && e.contains("[0, 1)"),
        "{e}"
    );
    let e = err(&with("reorder = 0.01"), &[]);
    assert!(
        e.starts_with("exp.toml: field `links[0].reorder_by`") && e.contains("shift"),
        "{e}"
    );
    let e = err(&with("reorder = 1.5\nreorder_by = \"1ms\""), &[]);
    assert!(
        e.contains("links[0].reorder") && e.contains("[0, 1)"),
        "{e}"
    );
    let e = err(&with("jitter = \"1s\""), &[]);
    assert!(e.contains("links[0].jitter") && e.contains("10×"), "{e}");
}

#[test]
fn a_links_overhead_is_a_size_up_to_its_mtu() {
    let with = |v: &str| {
        OK.replace(
            "delay = \"90ms\"",
            &format!("delay = \"90ms\"\noverhead = {v}"),
        )
    };
    for (v, bytes) in [("\"38B\"", 38), ("42", 42), ("\"1500\"", 1500)] {
        let c = Scenario::parse(&with(v), "exp.toml", "exp", &[]).unwrap();
        assert_eq!(c.scenario.links[0].overhead.0, bytes, "{v}");
    }
    let e = err(&with("\"1501B\""), &[]);
    assert!(
        e.contains("links[0].overhead") && e.contains("exceeds the link's MTU (1500 bytes)"),
        "{e}"
    );
    let e = err(&with("\"38 bits\""), &[]);
    assert!(e.contains("links[0].overhead"), "{e}");
    let e = err(&with("-1"), &[]);
    assert!(e.contains("links[0].overhead"), "{e}");
    // `--set` reaches it like any key.
    let c = Scenario::parse(OK, "exp.toml", "exp", &["links.0.overhead=38".into()]).unwrap();
    assert_eq!(c.scenario.links[0].overhead.0, 38);
}

#[test]
fn references_are_checked() {
    let e = err(
        &OK.replace("bottleneck = \"core\"", "bottleneck = \"edge\""),
        &[],
    );
    assert!(
        e.contains("topology.bottleneck") && e.contains("links are: core"),
        "{e}"
    );
    let e = err(&format!("{OK}path = [\"core\"]\n"), &[]);
    assert!(
        e.contains("flows[0].path") && e.contains("parking_lot"),
        "{e}"
    );
    let e = err(
        &format!("{OK}[[cross_traffic]]\nkind = \"onoff\"\nlink = \"core\"\nrate = \"1mbit\"\n"),
        &[],
    );
    assert!(
        e.contains("cross_traffic[0].on") && e.contains("needs"),
        "{e}"
    );
    let lot = r#"
duration = "1s"
[[links]]
name = "a"
rate = "1gbit"
delay = "1ms"
[[links]]
name = "b"
rate = "1gbit"
delay = "1ms"
[[links]]
name = "c"
rate = "1gbit"
delay = "1ms"
[topology]
kind = "parking_lot"
chain = ["a", "b", "c"]
[[flows]]
cc = "reno"
path = ["a", "c"]
"#;
    let e = err(lot, &[]);
    assert!(
        e.contains("flows[0].path") && e.contains("contiguous"),
        "{e}"
    );
}

#[test]
fn red_and_droptail_parameters_do_not_mix() {
    let q = OK.replace(
        "delay = \"90ms\"",
        "delay = \"90ms\"\nqueue = { kind = \"droptail\", packets = 100, max_p = 0.1 }",
    );
    let e = err(&q, &[]);
    assert!(
        e.contains("links[0].queue.max_p") && e.contains("red"),
        "{e}"
    );
    let q = OK.replace(
        "delay = \"90ms\"",
        "delay = \"90ms\"\nqueue = { kind = \"red\", packets = 100, min_th = 80, max_th = 40 }",
    );
    let e = err(&q, &[]);
    assert!(e.contains("links[0].queue.min_th"), "{e}");
}

#[test]
fn overrides_reach_nested_fields_and_report_bad_paths() {
    let sets: Vec<String> = [
        "duration=30s",
        "flows.0.cc=cubic",
        "links.0.queue={ kind = \"droptail\", packets = 500 }",
        "seed=9",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let c = Scenario::parse(OK, "exp.toml", "exp", &sets).unwrap();
    assert_eq!(c.scenario.duration.0, 30_000_000_000);
    assert_eq!(c.flows[0].cc.algorithm, "cubic");
    assert_eq!(c.scenario.links[0].queue.packets, Some(500));
    assert_eq!(c.scenario.seed, 9);
    let e = err(OK, &["flows.3.cc=reno"]);
    assert!(
        e.contains("--set flows.3.cc=reno") && e.contains("1 entries"),
        "{e}"
    );
    let e = err(OK, &["duration"]);
    assert!(e.contains("KEY=VALUE"), "{e}");
    // An override that produces a bad value is reported against the field.
    let e = err(OK, &["links.0.rate=fast"]);
    assert!(e.contains("links[0].rate"), "{e}");
}

#[test]
fn toml_syntax_errors_name_the_file() {
    let e = err("duration = \n", &[]);
    assert!(e.starts_with("exp.toml: not valid TOML"), "{e}");
}

#[test]
fn limits_on_intervals_thresholds_and_durations_are_named() {
    // 1 ns over 10 s would be 10^10 samples per series: refused, with the smallest interval
    // that fits (10 s ÷ 10^6 = 10 µs), which is accepted.
    let e = err(OK, &["output.interval=\"1ns\""]);
    println!("{e}");
    assert!(
        e.contains("output.interval") && e.contains("at least 10 us"),
        "{e}"
    );
    assert!(Scenario::parse(OK, "exp.toml", "exp", &["output.interval=\"10us\"".into()]).is_ok());
    // RED thresholds above the queue's 100 packets would never be reached.
    let red = OK.replace(
        "delay = \"90ms\"",
        "delay = \"90ms\"\nqueue = { kind = \"red\", packets = 100, min_th = 20, max_th = 150 }",
    );
    let e = err(&red, &[]);
    println!("{e}");
    assert!(
        e.contains("links[0].queue.max_th") && e.contains("queue limit (100 packets)"),
        "{e}"
    );
    let e = err(
        &red.replace("min_th = 20, max_th = 150", "min_th = 120"),
        &[],
    );
    // (max_th defaults to half the limit, so min_th = 120 is first refused for ordering.)
    assert!(e.contains("links[0].queue.min_th"), "{e}");
    // A queue of 150 holds max_th = 150: accepted.
    assert!(Scenario::parse(
        &red.replace("packets = 100", "packets = 150"),
        "exp.toml",
        "exp",
        &[]
    )
    .is_ok());
    // An absurd duration is too long, not negative.
    let e = err(OK, &["duration=\"1e30s\""]);
    println!("{e}");
    assert!(e.contains("too long") && !e.contains("non-negative"), "{e}");
}

/// A trace file in a fresh directory, and a scenario beside it that names it.
fn traced(trace: &str, link: &str) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!(
        "lh-scenario-trace-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cell.up"), trace).unwrap();
    let text = OK.replace("rate = \"1gbit\"\n", link);
    (dir, text)
}

/// A link's capacity is a rate or a mahimahi trace, per direction; a trace is read relative to
/// the scenario's file and its mean rate becomes the link's `rate`.
#[test]
fn a_trace_sets_a_links_capacity_and_its_mean_rate() {
    // One opportunity every ms (1504 B): 12.032 Mb/s; three per 2 ms: 18.048 Mb/s.
    let (dir, text) = traced("1\n", "trace = \"cell.up\"\n");
    std::fs::write(dir.join("cell.down"), "1\n2\n2\n").unwrap();
    let file = dir.join("exp.toml");
    std::fs::write(&file, &text).unwrap();
    let c = Scenario::load(&file, &[]).unwrap();
    let l = &c.scenario.links[0];
    assert!((l.rate.0 - 12.032e6).abs() < 1e-3, "{}", l.rate.0);
    assert_eq!(l.reverse_rate, None);
    // The ACK direction follows the data direction's trace.
    let t = &c.traces[0];
    assert_eq!(t.forward.as_ref().unwrap().mean_rate_bps(), l.rate.0);
    assert_eq!(t.reverse, t.forward);
    // A reverse trace of its own; or a reverse rate, which is constant.
    let set = |k: &str| vec![k.to_string()];
    let c = Scenario::load(&file, &set("links.0.reverse_trace=cell.down")).unwrap();
    let rev = c.scenario.links[0].reverse_rate.unwrap().0;
    assert!((rev - 18.048e6).abs() < 1e-3, "{rev}");
    assert!(c.traces[0].reverse.is_some() && c.traces[0].reverse != c.traces[0].forward);
    let c = Scenario::load(&file, &set("links.0.reverse_rate=1mbit")).unwrap();
    assert_eq!(c.traces[0].reverse, None);
    // A constant-rate link has no trace.
    let c = Scenario::parse(OK, "exp.toml", "exp", &[]).unwrap();
    assert_eq!(c.traces[0], Default::default());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_trace_and_a_rate_for_one_direction_or_neither_are_refused() {
    let (dir, text) = traced("1\n", "trace = \"cell.up\"\n");
    let file = dir.join("exp.toml").display().to_string();
    let e = err(
        &OK.replace("rate = \"1gbit\"", "rate = \"1gbit\"\ntrace = \"x\""),
        &[],
    );
    assert!(
        e.starts_with("exp.toml: field `links[0].trace`") && e.contains("not both"),
        "{e}"
    );
    let e = err(&OK.replace("rate = \"1gbit\"\n", ""), &[]);
    assert!(
        e.starts_with("exp.toml: field `links[0].rate`") && e.contains("missing"),
        "{e}"
    );
    let both = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        Scenario::parse(&text, &file, "exp", &sets)
            .unwrap_err()
            .to_string()
    };
    let e = both(&[
        "links.0.reverse_trace=cell.up",
        "links.0.reverse_rate=1mbit",
    ]);
    assert!(
        e.contains("field `links[0].reverse_trace`") && e.contains("not both"),
        "{e}"
    );
    // A missing or malformed file is named with the field.
    let e = both(&["links.0.trace=nowhere.trace"]);
    assert!(
        e.contains("field `links[0].trace`") && e.contains("nowhere.trace"),
        "{e}"
    );
    std::fs::write(dir.join("bad.trace"), "5\n3\n").unwrap();
    let e = both(&["links.0.reverse_trace=bad.trace"]);
    assert!(
        e.contains("field `links[0].reverse_trace`") && e.contains("must not decrease"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
