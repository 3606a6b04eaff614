//! The shared test vectors in `testdata/cc-vectors/` replay exactly through the Rust reference,
//! and every registered algorithm and preset has a file.

use longhaul_cc::vectors::{self, VectorFile};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cc-vectors")
}

fn load(name: &str) -> VectorFile {
    let path = dir().join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; regenerate with `longhaul cc vectors`",
            path.display()
        )
    });
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_algorithm_and_preset_has_vectors_that_replay_exactly() {
    let specs = vectors::vector_specs();
    // Eight algorithms, their presets, and nothing else: a file without a spec is stale.
    let mut names: Vec<&str> = specs.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "bbr",
            "bbr-linux",
            "cubic",
            "cubic-linux",
            "fast",
            "fast-ns2",
            "fast-paper",
            "highspeed",
            "lion",
            "reno",
            "scalable",
            "scalable-linux",
            "vegas",
            "vegas-ns2",
        ]
    );
    let mut files: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort_unstable();
    let mut expected: Vec<String> = names.iter().map(|n| format!("{n}.json")).collect();
    expected.sort_unstable();
    assert_eq!(
        files, expected,
        "testdata/cc-vectors holds exactly one file per spec"
    );
    for (name, spec) in specs {
        let file = load(&name);
        assert_eq!(file.format, vectors::FORMAT, "{name}");
        assert_eq!(
            file.spec,
            spec.to_string(),
            "{name}: spec changed; regenerate the vectors"
        );
        assert_eq!(file.sequences.len(), 5, "{name}");
        for seq in &file.sequences {
            assert!(
                seq.steps.len() > 50,
                "{name}/{}: only {} steps",
                seq.name,
                seq.steps.len()
            );
        }
        let checked = vectors::replay(&file)
            .unwrap_or_else(|m| panic!("{name}: {m}; if the change is intended, regenerate"));
        assert!(checked > 200, "{name}: {checked}");
    }
}

#[test]
fn the_sequences_cover_loss_timeout_and_equilibrium() {
    let file = load("reno");
    let kinds = |seq: &str| -> (usize, usize, usize) {
        let s = file.sequences.iter().find(|s| s.name == seq).unwrap();
        let count = |t: &str| {
            s.steps
                .iter()
                .filter(|st| serde_json::to_value(st.event).unwrap()["type"] == t)
                .count()
        };
        (count("ack"), count("loss"), count("rto"))
    };
    let (acks, losses, _) = kinds("slow_start_and_avoidance");
    assert!(
        acks > 100 && losses >= 1,
        "buffer overflow expected: {acks} acks {losses} losses"
    );
    let (_, losses, _) = kinds("random_loss");
    assert!(losses >= 5);
    let (_, _, rtos) = kinds("timeout");
    assert!(rtos >= 1, "the outage must cause a timeout");
}

#[test]
fn a_tampered_vector_is_caught() {
    let mut file = load("reno");
    let step = &mut file.sequences[0].steps[20];
    step.cwnd += 1.0;
    let m = vectors::replay(&file).unwrap_err();
    assert_eq!(
        (m.sequence.as_str(), m.step),
        ("slow_start_and_avoidance", 20)
    );
}

/// The files `longhaul cc vectors` writes are the ones kept in testdata, and a kept file that
/// differs is named.
#[test]
fn the_rendered_vectors_are_the_kept_files_and_a_changed_one_is_named() {
    let rendered = vectors::render_all().unwrap();
    assert_eq!(rendered.len(), vectors::vector_specs().len());
    vectors::check(&dir(), &rendered).unwrap();
    let scratch = std::env::temp_dir().join(format!("lh-cc-vectors-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    for r in &rendered {
        std::fs::write(scratch.join(&r.file_name), &r.text).unwrap();
    }
    vectors::check(&scratch, &rendered).unwrap();
    let changed = scratch.join(&rendered[0].file_name);
    std::fs::write(&changed, "{}\n").unwrap();
    let e = vectors::check(&scratch, &rendered).unwrap_err();
    assert!(e.contains(&changed.display().to_string()), "{e}");
    std::fs::remove_dir_all(&scratch).unwrap();
}
