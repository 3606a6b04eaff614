//! The emulator's settings as users write them: the `[link]` shorthand with per-direction
//! overrides, the simulator's format recognised and left to its mapping, bad keys refused with
//! what to write instead.

use longhaul_emu::config::RateConfig;
use longhaul_emu::model::loss::LossConfig;
use longhaul_emu::settings::file::{parse, ScenarioKind};
use longhaul_emu::settings::{per_direction, Settings};
use std::path::Path;

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
seed = 4
cross = ["poisson,rate=200mbit,size=1000"]
[link.down]
rate = "100mbit"
loss = 0.001
"#,
    )
    .unwrap();
    let c = s.link_config().unwrap();
    assert_eq!(c.mtu, 9000);
    assert_eq!(c.a_to_b.rate, RateConfig::Constant { bps: 1_000_000_000 });
    assert_eq!(c.b_to_a.rate, RateConfig::Constant { bps: 100_000_000 });
    assert_eq!(c.a_to_b.delay.delay_ns, 90_000_000);
    assert_eq!(c.b_to_a.delay.delay_ns, 90_000_000);
    assert_eq!(c.a_to_b.queue.bytes, Some(4 << 20));
    let red = c.a_to_b.red.unwrap();
    assert_eq!((red.min_bytes, red.max_bytes), (300 << 10, 900 << 10));
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
