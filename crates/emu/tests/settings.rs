//! The emulator's settings as users write them: the `[link]` shorthand with per-direction
//! overrides, a simulator scenario's link mapped as `longhaul lab` maps it, the command line's
//! values laid over either, bad keys and unemulable links refused with what to write instead.

use longhaul_emu::config::{LinkConfig, RateConfig};
use longhaul_emu::model::cross::CrossProcess;
use longhaul_emu::model::loss::LossConfig;
use longhaul_emu::model::red::RedUnit;
use longhaul_emu::settings::file::{parse, ScenarioKind};
use longhaul_emu::settings::{self, per_direction, Overrides, Settings};
use std::path::{Path, PathBuf};

fn link(text: &str) -> Result<Settings, String> {
    match parse(text, Path::new("s.toml"), None).map_err(|e| e.to_string())? {
        ScenarioKind::Link(s) => Ok(*s),
        ScenarioKind::Simulator => Err("read as a simulator scenario".into()),
    }
}

#[test]
fn link_section_with_direction_overrides() {
    let s = link(
        r#"
[link]
rate = "1gbit"
delay = "90ms"
queue_bytes = "4M"
red = { min = "300k", max = "900k", max_p = 0.05 }
mtu = 9000
path_mtu = 8000
seed = 4
cross = ["poisson,rate=200mbit,size=1000"]
[link.down]
rate = "100mbit"
loss = 0.001
path_mtu = 1500
"#,
    )
    .unwrap();
    let c = s.link_config().unwrap();
    assert_eq!(c.mtu, 9000);
    assert_eq!(
        (c.a_to_b.path_mtu, c.b_to_a.path_mtu),
        (Some(8000), Some(1500))
    );
    assert_eq!(c.a_to_b.rate, RateConfig::Constant { bps: 1_000_000_000 });
    assert_eq!(c.b_to_a.rate, RateConfig::Constant { bps: 100_000_000 });
    assert_eq!(c.a_to_b.delay.delay_ns, 90_000_000);
    assert_eq!(c.b_to_a.delay.delay_ns, 90_000_000);
    assert_eq!(c.a_to_b.queue.bytes, Some(4 << 20));
    let red = c.a_to_b.red.unwrap();
    assert_eq!(
        (red.min, red.max, red.unit, red.ecn),
        (
            (300 << 10) as f64,
            (900 << 10) as f64,
            RedUnit::Bytes,
            false
        )
    );
    assert_eq!(red.max_p, 0.05);
    assert_eq!(c.b_to_a.loss, LossConfig::Bernoulli { p: 0.001 });
    assert_eq!(c.a_to_b.loss, LossConfig::None);
    assert_eq!(c.a_to_b.cross.len(), 1);
    assert_eq!(c.a_to_b.cross[0].packet_bytes, 1000);
    assert_eq!((c.a_to_b.seed, c.b_to_a.seed), (8, 9));
}

#[test]
fn simulator_files_are_left_to_their_mapping() {
    let text = "[[links]]\nname = \"core\"\nrate = \"1gbit\"\ndelay = \"10ms\"\n";
    assert!(matches!(
        parse(text, Path::new("s.toml"), Some("core")).unwrap(),
        ScenarioKind::Simulator
    ));
    let e = parse(
        "[link]\nrate = \"1gbit\"\n",
        Path::new("s.toml"),
        Some("core"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("--link chooses among [[links]]"), "{e}");
    let e = parse("duration = \"1s\"\n", Path::new("s.toml"), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no [[links]]"), "{e}");
}

#[test]
fn unknown_and_simulator_only_keys_are_refused() {
    let e = link("[link]\nrate = \"1gbit\"\nbogus = 1\n").unwrap_err();
    assert!(e.contains("unknown key `bogus`"), "{e}");
    for key in [
        "queue = \"nonsense\"",
        "reverse_rate = \"1mbit\"",
        "distance_km = 10",
    ] {
        let e = link(&format!("[link]\nrate = \"1gbit\"\n{key}\n")).unwrap_err();
        assert!(e.contains("[[links]]"), "{key}: {e}");
    }
    let e = link("[link]\nrate = \"1gbit\"\nred = { max = \"9k\" }\n").unwrap_err();
    assert!(e.contains("red needs `min`"), "{e}");
}

#[test]
fn bad_values_name_the_direction_and_setting() {
    let e = link("[link]\nrate = \"1gbit\"\n[link.up]\nloss = \"150%\"\n")
        .unwrap()
        .link_config()
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("a→b: loss:") && e.contains("within 0..1"),
        "{e}"
    );
    let e = link("[link]\nrate = \"fast\"\n")
        .unwrap()
        .link_config()
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("a→b: rate:") && e.contains("gbit"), "{e}");
}

#[test]
fn values_split_per_direction() {
    assert_eq!(per_direction("1gbit"), ("1gbit".into(), "1gbit".into()));
    assert_eq!(
        per_direction("100mbit / 10mbit"),
        ("100mbit".into(), "10mbit".into())
    );
}

/// The link a scenario file and flags give, or the error as text.
fn from_file(path: &Path, flags: &Overrides) -> Result<LinkConfig, String> {
    settings::link_config(Some(path), None, flags).map_err(|e| e.to_string())
}

/// [`from_file`] on `text`, written to a fresh file.
fn from_text(tag: &str, text: &str, flags: &Overrides) -> Result<LinkConfig, String> {
    let dir = std::env::temp_dir().join(format!("lh-emu-settings-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("s.toml");
    std::fs::write(&p, text).unwrap();
    let r = from_file(&p, flags);
    std::fs::remove_dir_all(&dir).unwrap();
    r
}

fn repo_scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name)
}

/// Flags win over a `[link]` file's values, per direction.
#[test]
fn flags_override_a_link_file() {
    let text =
        "[link]\nrate = \"1gbit\"\ndelay = \"90ms\"\nmtu = 9000\n[link.down]\nrate = \"100mbit\"\n";
    let flags = Overrides {
        per_direction: vec![("delay", "50ms/60ms".into())],
        mtu: Some(1500),
        ..Default::default()
    };
    let c = from_text("flags", text, &flags).unwrap();
    assert_eq!(c.mtu, 1500);
    assert_eq!(c.a_to_b.rate, RateConfig::Constant { bps: 1_000_000_000 });
    assert_eq!(c.b_to_a.rate, RateConfig::Constant { bps: 100_000_000 });
    assert_eq!(c.a_to_b.delay.delay_ns, 50_000_000);
    assert_eq!(c.b_to_a.delay.delay_ns, 60_000_000);
}

#[test]
fn a_rate_flag_replaces_a_files_trace_and_cross_traffic_goes_its_way() {
    let text = "[link]\ntrace = \"none.trace\"\ndelay = \"10ms\"\n";
    let flags = Overrides {
        per_direction: vec![("rate", "100mbit/10mbit".into())],
        cross: vec!["cbr,rate=1mbit,dir=ba".into(), "poisson,rate=2mbit".into()],
        ..Default::default()
    };
    let c = from_text("trace", text, &flags).unwrap();
    assert_eq!(c.a_to_b.rate, RateConfig::Constant { bps: 100_000_000 });
    assert_eq!(c.b_to_a.rate, RateConfig::Constant { bps: 10_000_000 });
    assert_eq!((c.a_to_b.cross.len(), c.b_to_a.cross.len()), (1, 1));
    assert_eq!(c.b_to_a.cross[0].kind, CrossProcess::Cbr);
}

#[test]
fn a_link_without_a_scenario_is_refused() {
    let e = settings::link_config(None, Some("core"), &Overrides::default()).unwrap_err();
    assert!(e.to_string().contains("--scenario"), "{e}");
}

const SIM_HEAD: &str = r#"
duration = "30s"
seed = 5
[topology]
kind = "dumbbell"
bottleneck = "core"
[[flows]]
cc = "cubic"
"#;

#[test]
fn repo_scenario_maps_the_simulators_link_format() {
    // scenarios/dumbbell-fast.toml: 1 Gb/s, 40 ms, droptail 10000 packets, seed 1.
    let c = from_file(&repo_scenario("dumbbell-fast.toml"), &Overrides::default()).unwrap();
    assert_eq!(c.mtu, 1500);
    for d in [&c.a_to_b, &c.b_to_a] {
        assert_eq!(d.rate, RateConfig::Constant { bps: 1_000_000_000 });
        assert_eq!(d.delay.delay_ns, 40_000_000);
        assert_eq!(d.queue.packets, Some(10_000));
        assert_eq!(d.queue.bytes, None);
        assert!(d.red.is_none());
        assert!(d.cross.is_empty());
    }
    // The simulator's streams (seed, seed + 1), as `longhaul lab` uses them.
    assert_eq!((c.a_to_b.seed, c.b_to_a.seed), (1, 2));
    // Flags still override a scenario's link.
    let flags = Overrides {
        per_direction: vec![
            ("rate", "100mbit".into()),
            ("queue_packets", "500/50".into()),
        ],
        seed: Some(3),
        ..Default::default()
    };
    let c = from_file(&repo_scenario("dumbbell-fast.toml"), &flags).unwrap();
    assert_eq!(c.a_to_b.rate, RateConfig::Constant { bps: 100_000_000 });
    assert_eq!(c.a_to_b.delay.delay_ns, 40_000_000);
    assert_eq!(
        (c.a_to_b.queue.packets, c.b_to_a.queue.packets),
        (Some(500), Some(50))
    );
    assert_eq!((c.a_to_b.seed, c.b_to_a.seed), (6, 7));
}

#[test]
fn repo_red_ecn_scenario_maps_its_red_and_refuses_its_responsive_cross_traffic() {
    // scenarios/red-ecn-cross.toml: RED in packets that marks ECN, and responsive web
    // transfers, which would need hosts of their own.
    let path = repo_scenario("red-ecn-cross.toml");
    let e = from_file(&path, &Overrides::default()).unwrap_err();
    assert!(e.contains("cross_traffic[2].responsive"), "{e}");
    // Without them, the link maps: RED as the simulator runs it (packets, min 200, max 600,
    // max_p 0.1, marking ECN), beside the unresponsive sources.
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replace("responsive = true", "");
    let c = from_text("red-ecn", &text, &Overrides::default()).unwrap();
    let red = c.a_to_b.red.unwrap();
    assert_eq!(
        (red.min, red.max, red.unit, red.max_p, red.ecn),
        (200.0, 600.0, RedUnit::Packets, 0.1, true)
    );
    assert_eq!(c.a_to_b.queue.packets, Some(2000));
    assert_eq!(c.a_to_b.cross.len(), 3);
}

#[test]
fn simulator_red_reverse_settings_and_cross_traffic_are_emulated() {
    let text = format!(
        r#"{SIM_HEAD}
[[links]]
name = "core"
rate = "200mbit"
reverse_rate = "20mbit"
delay = "30ms"
mtu = 9000
loss = 0.01
reverse_loss = 0.002
queue = {{ kind = "red", packets = 400, min_th = 40, max_th = 120, max_p = 0.05, weight = 0.004, gentle = false }}
reverse_queue = {{ kind = "droptail", bytes = "2M" }}
[[cross_traffic]]
kind = "poisson"
link = "core"
rate = "50mbit"
packet_size = 1000
[[cross_traffic]]
kind = "cbr"
link = "core"
rate = "1mbit"
reverse = true
"#
    );
    let c = from_text("red", &text, &Overrides::default()).unwrap();
    assert_eq!(c.mtu, 9000);
    assert_eq!(c.a_to_b.rate, RateConfig::Constant { bps: 200_000_000 });
    assert_eq!(c.b_to_a.rate, RateConfig::Constant { bps: 20_000_000 });
    assert_eq!(c.a_to_b.loss, LossConfig::Bernoulli { p: 0.01 });
    assert_eq!(c.b_to_a.loss, LossConfig::Bernoulli { p: 0.002 });
    assert_eq!(c.a_to_b.queue.packets, Some(400));
    // Thresholds in packets stay packets, as the simulator counts them.
    let red = c.a_to_b.red.unwrap();
    assert_eq!(
        (red.min, red.max, red.unit, red.gentle, red.ecn),
        (40.0, 120.0, RedUnit::Packets, false, false)
    );
    assert_eq!((red.max_p, red.weight), (0.05, 0.004));
    assert!(c.b_to_a.red.is_none());
    assert_eq!(c.b_to_a.queue.bytes, Some(2 << 20)); // "2M" is 2 MiB, as in the simulator
    assert_eq!(c.a_to_b.cross.len(), 1);
    assert_eq!(c.a_to_b.cross[0].kind, CrossProcess::Poisson);
    assert_eq!(c.a_to_b.cross[0].rate_bps, 50e6);
    assert_eq!(c.a_to_b.cross[0].packet_bytes, 1000);
    // The reverse source defaults to the link's MTU.
    assert_eq!(c.b_to_a.cross.len(), 1);
    assert_eq!(c.b_to_a.cross[0].packet_bytes, 9000);
}

#[test]
fn a_scenarios_overhead_is_the_emulators_and_the_flag_overrides_it() {
    let text = format!(
        "{SIM_HEAD}\n[[links]]\nname = \"core\"\nrate = \"1gbit\"\ndelay = \"10ms\"\noverhead = \"38B\"\n"
    );
    let c = from_text("overhead", &text, &Overrides::default()).unwrap();
    assert_eq!((c.a_to_b.overhead_bytes, c.b_to_a.overhead_bytes), (38, 38));
    let flags = Overrides {
        per_direction: vec![("overhead", "0/42".into())],
        ..Default::default()
    };
    let c = from_text("overhead-flag", &text, &flags).unwrap();
    assert_eq!((c.a_to_b.overhead_bytes, c.b_to_a.overhead_bytes), (0, 42));
    let flags = Overrides {
        per_direction: vec![("overhead", "2000".into())],
        ..Default::default()
    };
    let e = from_text("overhead-big", &text, &flags).unwrap_err();
    assert!(e.contains("overhead of 2000 bytes"), "{e}");
}

#[test]
fn malformed_or_unemulable_simulator_links_are_refused() {
    let link = |extra: &str| {
        format!(
            "{SIM_HEAD}\n[[links]]\nname = \"core\"\nrate = \"1gbit\"\ndelay = \"10ms\"\n{extra}\n"
        )
    };
    let cases = [
        ("queue = \"nonsense\"", "links[0].queue"),
        (
            "queue = { kind = \"sfq\", packets = 10 }",
            "links[0].queue.kind",
        ),
        (
            "[[cross_traffic]]\nkind = \"web\"\nlink = \"core\"\nrate = \"1mbit\"\nresponsive = true",
            "cross_traffic[0].responsive",
        ),
        ("trace = \"nowhere.trace\"", "links[0].trace"),
    ];
    for (extra, field) in cases {
        let e = from_text("bad", &link(extra), &Overrides::default()).unwrap_err();
        assert!(e.contains(field), "`{extra}`: `{e}` lacks `{field}`");
    }
    // Web cross traffic is the simulator's generator, emulated too.
    let c = from_text(
        "web",
        &link("[[cross_traffic]]\nkind = \"web\"\nlink = \"core\"\nrate = \"1mbit\""),
        &Overrides::default(),
    )
    .unwrap();
    assert!(matches!(c.a_to_b.cross[0].kind, CrossProcess::Web { .. }));
    // Jitter and duplication are the path's models, emulated in both directions.
    let c = from_text(
        "jitter",
        &link("jitter = \"1ms\"\nduplicate = 0.001"),
        &Overrides::default(),
    )
    .unwrap();
    for d in [&c.a_to_b, &c.b_to_a] {
        assert_eq!((d.delay.jitter_ns, d.delay.duplicate_p), (1_000_000, 0.001));
    }
    // Cross traffic limited in time counts from the emulator's zero point.
    let c = from_text(
        "timed",
        &link(
            "[[cross_traffic]]\nkind = \"cbr\"\nlink = \"core\"\nrate = \"1mbit\"\nstart = \"1s\"",
        ),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(
        (c.a_to_b.cross[0].start_ns, c.a_to_b.cross[0].stop_ns),
        (1_000_000_000, u64::MAX)
    );
}
