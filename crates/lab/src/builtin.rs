//! The built-in lab experiments: scenario files under `scenarios/lab/`, compiled into the
//! binary, each run as one or more variants (`--set` overrides) whose results share one table.

/// One run of a built-in.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// Row label, e.g. `cubic` or `mtu=9000`.
    pub label: String,
    /// `--set` assignments applied to the file.
    pub sets: Vec<String>,
}

/// A built-in experiment.
#[derive(Debug, Clone)]
pub struct Builtin {
    /// The name `longhaul lab NAME` takes.
    pub name: &'static str,
    /// Path in the repository, for messages.
    pub path: &'static str,
    /// The scenario file's text.
    pub text: &'static str,
    /// One line on what the experiment shows.
    pub about: &'static str,
    /// The runs it makes; their results share one table.
    pub variants: Vec<Variant>,
}

const ALGORITHMS: [&str; 7] = [
    "fast",
    "scalable",
    "highspeed",
    "lion",
    "reno",
    "cubic",
    "bbr",
];

fn per_cc(flows: usize, ccs: &[&str]) -> Vec<Variant> {
    ccs.iter()
        .map(|cc| Variant {
            label: cc.to_string(),
            sets: (0..flows).map(|i| format!("flows.{i}.cc={cc}")).collect(),
        })
        .collect()
}

/// Every built-in, in listing order.
pub fn all() -> Vec<Builtin> {
    vec![
        Builtin {
            name: "seed000",
            path: "scenarios/lab/seed000-1g-180ms.toml",
            text: include_str!("../../../scenarios/lab/seed000-1g-180ms.toml"),
            about: "seed 000/001 at lab scale: 1 flow, 1 Gb/s, 180 ms, 1500 B, 4000-packet queue; \
                    fast, scalable, highspeed, lion, reno, cubic, bbr, fast-paper (the papers' \
                    FAST, without the options for real hosts) and fast-a400 (alpha 400 packets, \
                    4.8 ms of queue, which outlasts this host's stalls): docs/lab.md",
            variants: per_cc(1, &ALGORITHMS)
                .into_iter()
                .chain([
                    Variant {
                        label: "fast-paper".into(),
                        sets: vec!["flows.0.cc=\"fast:preset=paper\"".into()],
                    },
                    Variant {
                        label: "fast-a400".into(),
                        sets: vec!["flows.0.cc=\"fast:alpha=400\"".into()],
                    },
                ])
                .collect(),
        },
        Builtin {
            name: "two-rtt",
            path: "scenarios/lab/two-rtt.toml",
            text: include_str!("../../../scenarios/lab/two-rtt.toml"),
            about: "2 flows, 60 and 180 ms RTT, 200 Mb/s: fairness (Jain) per algorithm",
            variants: per_cc(2, &ALGORITHMS),
        },
        Builtin {
            name: "mtu",
            path: "scenarios/lab/seed004-mtu.toml",
            text: include_str!("../../../scenarios/lab/seed004-mtu.toml"),
            about: "seed 004's MTU effect: reno, 1 Gb/s, 180 ms, loss 1e-5, at 1500 and 9000 B",
            variants: [1500, 9000]
                .iter()
                .map(|m| Variant {
                    label: format!("mtu={m}"),
                    sets: vec![format!("links.0.mtu={m}")],
                })
                .collect(),
        },
        Builtin {
            name: "seed002",
            path: "scenarios/lab/seed002-contest.toml",
            text: include_str!("../../../scenarios/lab/seed002-contest.toml"),
            about: "seed 002's 5-s contest at 1/5 scale: lion and reno together, 200 Mb/s, \
                    80 ms, 60 Mb/s Poisson cross traffic (one of the variants reproduce \
                    lion-contest runs beside its claims)",
            variants: vec![Variant {
                label: "lion+reno".to_string(),
                sets: Vec::new(),
            }],
        },
        Builtin {
            name: "short",
            path: "scenarios/lab/short.toml",
            text: include_str!("../../../scenarios/lab/short.toml"),
            about: "20 s, 100 Mb/s, 100 ms, 1000-packet queue: fast, lion and cubic (the CI run)",
            variants: per_cc(1, &["fast", "lion", "cubic"]),
        },
    ]
}

/// `longhaul lab --list`: a table of the built-ins (name, file, what each shows) and how to
/// run one.
pub fn listing() -> String {
    let mut out = format!("{:<10} {:<40} about\n", "name", "file");
    for b in all() {
        out += &format!("{:<10} {:<40} {}\n", b.name, b.path, b.about);
    }
    out + "\nrun one with `sudo longhaul lab NAME [--variant LABEL] [--report DIR]`\n"
}

/// The built-in called `name`.
pub fn find(name: &str) -> Option<Builtin> {
    all().into_iter().find(|b| b.name == name)
}

/// What `longhaul lab TARGET` runs: a scenario's text, its file (for messages), the name it
/// defaults to, and its variants.
#[derive(Debug, Clone)]
pub struct Target {
    /// The scenario file's text.
    pub text: String,
    /// The file, as messages name it.
    pub file: String,
    /// The scenario's default name (the file's stem, or the built-in's name).
    pub stem: String,
    /// The runs to make: one without overrides for a file, the built-in's (or the one
    /// `variant` names) for a built-in.
    pub variants: Vec<Variant>,
}

/// `target` as a scenario file, else as a built-in's name (a file wins over a built-in of the
/// same name); `variant` keeps only the built-in's variant of that label.
pub fn resolve(target: &str, variant: Option<&str>) -> Result<Target, crate::LabError> {
    let path = std::path::Path::new(target);
    if path.exists() {
        let text = std::fs::read_to_string(path).map_err(|e| crate::LabError::Setup {
            what: format!("reading scenario {target}"),
            message: e.to_string(),
        })?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into());
        return Ok(Target {
            text,
            file: target.to_string(),
            stem,
            variants: vec![Variant {
                label: String::new(),
                sets: vec![],
            }],
        });
    }
    let Some(b) = find(target) else {
        let known: Vec<_> = all().iter().map(|b| b.name).collect();
        return Err(crate::LabError::UnknownBuiltin {
            name: target.to_string(),
            known: known.join(", "),
        });
    };
    let mut v = b.variants.clone();
    if let Some(only) = variant {
        v.retain(|x| x.label == only);
        if v.is_empty() {
            let labels: Vec<_> = b.variants.iter().map(|x| x.label.clone()).collect();
            return Err(crate::LabError::UnknownVariant {
                name: b.name.to_string(),
                variant: only.to_string(),
                labels: labels.join(", "),
            });
        }
    }
    Ok(Target {
        text: b.text.to_string(),
        file: b.path.to_string(),
        stem: b.name.to_string(),
        variants: v,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::LabPlan;
    use longhaul_sim::Scenario;

    #[test]
    fn every_builtin_variant_maps_onto_the_lab_and_the_simulator() {
        for b in all() {
            for v in &b.variants {
                let checked = Scenario::parse(b.text, b.path, b.name, &v.sets)
                    .unwrap_or_else(|e| panic!("{} {}: {e}", b.name, v.label));
                let plan = LabPlan::from_scenario(&checked, b.path)
                    .unwrap_or_else(|e| panic!("{} {}: {e}", b.name, v.label));
                assert!(!plan.flows.is_empty());
            }
        }
        let seed = find("seed000").unwrap();
        assert_eq!(seed.variants.len(), 9);
        assert!(seed.variants.iter().any(|v| v.label == "lion"));
        let params = |label: &str| {
            let v = seed.variants.iter().find(|v| v.label == label).unwrap();
            let checked = Scenario::parse(seed.text, seed.path, "seed000", &v.sets).unwrap();
            LabPlan::from_scenario(&checked, seed.path).unwrap().flows[0]
                .params
                .clone()
        };
        // The kernel knows no presets: it is told every value that differs from its defaults.
        assert!(params("fast").is_empty());
        assert_eq!(
            params("fast-paper"),
            ["mi_backlog=0", "period_min=false", "climb=0", "pace=false"]
        );
        assert_eq!(params("fast-a400"), ["alpha=400"]);
        let mtu = find("mtu").unwrap();
        let jumbo = Scenario::parse(mtu.text, mtu.path, "mtu", &mtu.variants[1].sets).unwrap();
        assert_eq!(LabPlan::from_scenario(&jumbo, "mtu").unwrap().mtu, 9000);
        let contest = find("seed002").unwrap();
        let checked = Scenario::parse(contest.text, contest.path, "seed002", &[]).unwrap();
        let ccs: Vec<String> = LabPlan::from_scenario(&checked, contest.path)
            .unwrap()
            .flows
            .iter()
            .map(|f| f.cc.clone())
            .collect();
        assert_eq!(ccs, ["lion", "reno"]);
        assert!(find("nope").is_none());
    }
}
