//! The plan: a sweep file expanded into a numbered list of runs.
//!
//! Index order (`docs/sweep.md`): the scenario files are the outermost dimension, then the
//! `[[zip]]` groups in file order, then the `[axes]` in file order; the last dimension varies
//! fastest. Run `i` is found by mixed-radix decoding, so no list of runs is ever built and
//! `--index N` on a cluster node costs nothing however large the grid.
//!
//! The plan's hash covers everything that decides a run's result — each scenario file's
//! contents, the fixed overrides and every axis with its values — so that a results directory
//! can refuse runs of a changed sweep (`store.rs`). Every value is checked against its scenario
//! before any run starts: a bad value fails the plan naming its axis, not run 4711 an hour in.

use crate::error::{Result, SweepError};
use crate::spec::{assignment, decode, display, literal, Axis, SweepFile};
use longhaul_sim::Scenario;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A sweep of more runs than this is refused unless asked for (`allow_large`).
pub const LARGE: u64 = 1_000_000;

/// The axis name a sweep over several scenario files gives the file.
pub const SCENARIO_AXIS: &str = "scenario";

/// The expanded sweep.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The sweep file as parsed.
    pub file: SweepFile,
    /// The scenario files, resolved against the sweep file's directory.
    pub scenario_paths: Vec<PathBuf>,
    /// The dimensions after the scenario, outermost first: each zip group, then each axis.
    pub dims: Vec<Vec<Axis>>,
    /// The number of runs: the scenarios times each dimension's length.
    pub runs: u64,
    /// What the hash covers, as stored in the results directory.
    pub stamp: Stamp,
}

/// One run: where it comes from and what it overrides.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The run's stable index in the plan.
    pub index: u64,
    /// The scenario file as written in the sweep file, and resolved.
    pub scenario: String,
    /// The scenario file as resolved against the sweep file's directory.
    pub scenario_path: PathBuf,
    /// Axis values in column order (`Plan::axis_names`).
    pub axes: Vec<(String, toml::Value)>,
    /// The `--set` assignments, fixed ones first: `longhaul sim SCENARIO --set …` with these
    /// reproduces the run.
    pub sets: Vec<String>,
}

/// The plan as stored in `DIR/sweep.json`: enough to recognise the same plan and to label
/// results without the sweep file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stamp {
    /// The sweep's name.
    pub name: String,
    /// The plan's hash: a results directory stamped with another hash is refused.
    pub hash: String,
    /// The number of runs.
    pub runs: u64,
    /// Column order of the axis values.
    pub axes: Vec<String>,
    /// Each scenario file as written in the sweep file, with its content's hash.
    pub scenarios: Vec<ScenarioStamp>,
    /// The fixed `--set` assignments every run applies.
    pub set: Vec<String>,
    /// Each dimension's axes with their values as TOML literals, outermost first.
    pub dims: Vec<Vec<AxisStamp>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// A scenario file in the stamp: results are tied to its content.
pub struct ScenarioStamp {
    /// The path as written in the sweep file.
    pub file: String,
    /// The SHA-256 of its content.
    pub sha256: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// One axis in the stamp.
pub struct AxisStamp {
    /// The axis's key.
    pub name: String,
    /// The values as TOML literals; a range as `"A..B step S"` (it may be huge).
    pub values: Vec<String>,
}

impl Plan {
    /// Read a sweep file and expand it; `allow_large` lifts the `LARGE` limit.
    pub fn load(path: &Path, allow_large: bool) -> Result<Plan> {
        Self::new(SweepFile::load(path)?, allow_large)
    }

    /// Expand a parsed sweep file into its runs; `allow_large` lifts the `LARGE` limit.
    pub fn new(file: SweepFile, allow_large: bool) -> Result<Plan> {
        let base = file.path.parent().unwrap_or(Path::new("")).to_path_buf();
        let scenario_paths: Vec<PathBuf> = file.scenarios.iter().map(|s| base.join(s)).collect();
        let dims = file.dims();
        let mut runs = scenario_paths.len() as u128;
        for d in &dims {
            runs = runs.saturating_mul(d[0].values.len() as u128);
        }
        if runs > LARGE as u128 && !allow_large {
            return Err(SweepError::TooLarge {
                file: file.path.clone(),
                runs: runs.to_string(),
                shape: shape(&file.scenarios, &dims),
                limit: LARGE,
            });
        }
        let runs = u64::try_from(runs).map_err(|_| SweepError::TooLarge {
            file: file.path.clone(),
            runs: runs.to_string(),
            shape: shape(&file.scenarios, &dims),
            limit: u64::MAX,
        })?;

        let fixed: Vec<String> = file.set.iter().map(|(k, v)| assignment(k, v)).collect();
        let mut scenarios = Vec::new();
        for (written, path) in file.scenarios.iter().zip(&scenario_paths) {
            let bytes = std::fs::read(path).map_err(|e| SweepError::Syntax {
                file: file.path.clone(),
                message: format!(
                    "scenario `{written}` ({}): {e}; scenario paths are relative to the sweep file",
                    path.display()
                ),
            })?;
            check_values(&file, path, &fixed, &dims)?;
            scenarios.push(ScenarioStamp {
                file: written.clone(),
                sha256: hex(&Sha256::digest(&bytes)),
            });
        }

        let mut axes = Vec::new();
        if scenario_paths.len() > 1 {
            axes.push(SCENARIO_AXIS.to_string());
        }
        axes.extend(dims.iter().flatten().map(|a| a.name.clone()));
        let dim_stamps: Vec<Vec<AxisStamp>> = dims
            .iter()
            .map(|d| d.iter().map(axis_stamp).collect())
            .collect();
        let mut stamp = Stamp {
            name: file.name.clone(),
            hash: String::new(),
            runs,
            axes,
            scenarios,
            set: fixed,
            dims: dim_stamps,
        };
        stamp.hash = stamp.content_hash();
        Ok(Plan {
            file,
            scenario_paths,
            dims,
            runs,
            stamp,
        })
    }

    /// Column order of axis values: `scenario` (several files only), then every axis.
    pub fn axis_names(&self) -> &[String] {
        &self.stamp.axes
    }

    /// Run `index`.
    pub fn run(&self, index: u64) -> Result<Run> {
        if index >= self.runs {
            return Err(SweepError::IndexOutOfRange {
                index,
                runs: self.runs,
                last: self.runs.saturating_sub(1),
            });
        }
        let (picks, rest) = decode(&self.dims, index);
        let s = rest as usize;
        let mut axes = Vec::new();
        if self.scenario_paths.len() > 1 {
            axes.push((
                SCENARIO_AXIS.to_string(),
                toml::Value::String(self.file.scenarios[s].clone()),
            ));
        }
        let mut sets = self.stamp.set.clone();
        for (dim, &i) in self.dims.iter().zip(&picks) {
            for a in dim {
                let v = a.values.get(i);
                sets.push(assignment(&a.name, &v));
                axes.push((a.name.clone(), v));
            }
        }
        Ok(Run {
            index,
            scenario: self.file.scenarios[s].clone(),
            scenario_path: self.scenario_paths[s].clone(),
            axes,
            sets,
        })
    }

    /// "2 scenarios × flows.0.cc (4) × seed (3) = 24 runs"
    pub fn describe(&self) -> String {
        format!(
            "{} = {} run{}",
            shape(&self.file.scenarios, &self.dims),
            self.runs,
            if self.runs == 1 { "" } else { "s" }
        )
    }
}

impl Run {
    /// The axis values for people: `flows.0.cc=reno seed=2`.
    pub fn label(&self) -> String {
        self.axes
            .iter()
            .map(|(k, v)| format!("{k}={}", display(v)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Load the run's scenario with its overrides: exactly what `longhaul sim` does with the
    /// same file and `--set` arguments.
    pub fn load(&self) -> Result<longhaul_sim::Checked, longhaul_sim::ScenarioError> {
        Scenario::load(&self.scenario_path, &self.sets)
    }
}

impl Stamp {
    /// SHA-256 over the canonical JSON of everything but the name and the hash itself.
    fn content_hash(&self) -> String {
        let canonical = serde_json::json!({
            "scenarios": self.scenarios,
            "set": self.set,
            "dims": self.dims,
        });
        hex(&Sha256::digest(canonical.to_string().as_bytes()))[..16].to_string()
    }

    /// What differs from `other`, for the message refusing a changed plan.
    pub fn difference(&self, other: &Stamp) -> String {
        let mut what = Vec::new();
        for (a, b) in self.scenarios.iter().zip(&other.scenarios) {
            if a.file == b.file && a.sha256 != b.sha256 {
                what.push(format!("scenario {} was edited", a.file));
            }
        }
        if self
            .scenarios
            .iter()
            .map(|s| &s.file)
            .ne(other.scenarios.iter().map(|s| &s.file))
        {
            what.push("the scenario files differ".into());
        }
        if self.set != other.set {
            what.push("the [set] values differ".into());
        }
        if self.dims != other.dims {
            what.push("the axes or their values differ".into());
        }
        if self.runs != other.runs {
            what.push(format!("{} runs against {}", other.runs, self.runs));
        }
        if what.is_empty() {
            String::new()
        } else {
            format!(": {}", what.join(", "))
        }
    }
}

fn axis_stamp(a: &Axis) -> AxisStamp {
    use crate::spec::Values;
    AxisStamp {
        name: a.name.clone(),
        values: match &a.values {
            Values::List(v) => v.iter().map(literal).collect(),
            Values::Range { start, step, len } => vec![format!(
                "{start}..{} step {step}",
                start + step * (*len as i64 - 1)
            )],
        },
    }
}

fn shape(scenarios: &[String], dims: &[Vec<Axis>]) -> String {
    let mut parts = Vec::new();
    if scenarios.len() > 1 {
        parts.push(format!("{} scenarios", scenarios.len()));
    }
    for d in dims {
        let names: Vec<&str> = d.iter().map(|a| a.name.as_str()).collect();
        let name = if d.len() == 1 {
            names[0].to_string()
        } else {
            format!("zip({})", names.join(", "))
        };
        parts.push(format!("{name} ({})", d[0].values.len()));
    }
    if parts.is_empty() {
        parts.push("no axes".into());
    }
    parts.join(" × ")
}

/// Check each value of each dimension on its own (with the fixed overrides) against the
/// scenario, so a value that can never work fails the plan naming its axis. A range is checked
/// at both ends: its values differ only in number. Combinations that fail together (a RED
/// threshold above a queue size on another axis) are each run's own error.
fn check_values(
    file: &SweepFile,
    scenario: &Path,
    fixed: &[String],
    dims: &[Vec<Axis>],
) -> Result<()> {
    Scenario::load(scenario, fixed).map_err(|e| SweepError::Syntax {
        file: file.path.clone(),
        message: format!("the scenario with the [set] values: {e}"),
    })?;
    for dim in dims {
        let n = dim[0].values.len();
        let picks: Vec<u64> = match &dim[0].values {
            crate::spec::Values::Range { .. } if n > 2 => vec![0, n - 1],
            _ => (0..n).collect(),
        };
        for i in picks {
            let mut sets = fixed.to_vec();
            sets.extend(dim.iter().map(|a| assignment(&a.name, &a.values.get(i))));
            if let Err(e) = Scenario::load(scenario, &sets) {
                let a = &dim[0];
                let value = if dim.len() == 1 {
                    literal(&a.values.get(i))
                } else {
                    dim.iter()
                        .map(|a| format!("{}={}", a.name, literal(&a.values.get(i))))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return Err(SweepError::Value {
                    file: file.path.clone(),
                    axis: a.name.clone(),
                    value,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{fixture, scenario};

    #[test]
    fn product_order_is_last_axis_fastest_after_zips_and_scenarios() {
        let f = fixture(
            "order",
            r#"
            scenarios = ["s.toml", "t.toml"]
            [axes]
            "flows.0.cc" = ["reno", "cubic"]
            seed = "1..3"
            [[zip]]
            "links.0.queue.packets" = [50, 100]
            "links.0.loss" = [0.0, 1e-4]
            "#,
        );
        let p = Plan::load(&f, false).unwrap();
        assert_eq!(p.runs, 2 * 2 * 2 * 3);
        assert_eq!(
            p.axis_names(),
            [
                "scenario",
                "links.0.queue.packets",
                "links.0.loss",
                "flows.0.cc",
                "seed"
            ]
        );
        assert_eq!(
            p.describe(),
            "2 scenarios × zip(links.0.queue.packets, links.0.loss) (2) × flows.0.cc (2) × seed (3) = 24 runs"
        );
        let r = p.run(0).unwrap();
        assert_eq!(
            r.label(),
            "scenario=s.toml links.0.queue.packets=50 links.0.loss=0.0 flows.0.cc=reno seed=1"
        );
        let r = p.run(1).unwrap();
        assert_eq!(
            r.label(),
            "scenario=s.toml links.0.queue.packets=50 links.0.loss=0.0 flows.0.cc=reno seed=2"
        );
        let r = p.run(3).unwrap();
        assert_eq!(
            r.label(),
            "scenario=s.toml links.0.queue.packets=50 links.0.loss=0.0 flows.0.cc=cubic seed=1"
        );
        let r = p.run(6).unwrap();
        assert_eq!(
            r.label(),
            "scenario=s.toml links.0.queue.packets=100 links.0.loss=0.0001 flows.0.cc=reno seed=1"
        );
        let r = p.run(23).unwrap();
        assert_eq!(
            r.label(),
            "scenario=t.toml links.0.queue.packets=100 links.0.loss=0.0001 flows.0.cc=cubic seed=3"
        );
        assert_eq!(r.scenario_path, f.parent().unwrap().join("t.toml"));
        assert_eq!(
            r.sets,
            [
                "links.0.queue.packets=100",
                "links.0.loss=0.0001",
                "flows.0.cc=\"cubic\"",
                "seed=3"
            ]
        );
        // The overrides are the simulator's own: the run's scenario has them.
        let checked = r.load().unwrap();
        assert_eq!(checked.scenario.seed, 3);
        assert_eq!(checked.scenario.links[0].loss, 1e-4);
        let e = p.run(24).unwrap_err();
        assert_eq!(
            e.to_string(),
            "run 24 is beyond the plan's 24 runs (indices 0 to 23)"
        );
        // Every index is a distinct run.
        let all: std::collections::BTreeSet<String> =
            (0..24).map(|i| p.run(i).unwrap().label()).collect();
        assert_eq!(all.len(), 24);
    }

    #[test]
    fn bad_values_fail_the_plan_naming_axis_and_value() {
        let f = fixture(
            "badvalue",
            "scenario = \"s.toml\"\n[axes]\n\"flows.0.cc\" = [\"reno\", \"warp\"]\n",
        );
        let e = Plan::load(&f, false).unwrap_err().to_string();
        assert!(e.contains("axis `flows.0.cc`, value \"warp\""), "{e}");
        let f = fixture(
            "badpath",
            "scenario = \"s.toml\"\n[axes]\n\"links.3.loss\" = [0.1]\n",
        );
        let e = Plan::load(&f, false).unwrap_err().to_string();
        assert!(
            e.contains("axis `links.3.loss`, value 0.1") && e.contains("has 1 entries"),
            "{e}"
        );
        let f = fixture("nofile", "scenario = \"missing.toml\"\n");
        let e = Plan::load(&f, false).unwrap_err().to_string();
        assert!(e.contains("scenario `missing.toml`"), "{e}");
    }

    #[test]
    fn large_grids_are_refused_unless_asked() {
        let f = fixture(
            "large",
            "scenario = \"s.toml\"\n[axes]\nseed = \"1..1000\"\n\"flows.0.count\" = \"1..1001\"\n",
        );
        let e = Plan::load(&f, false).unwrap_err().to_string();
        assert!(
            e.contains("the sweep has 1001000 runs (seed (1000) × flows.0.count (1001))"),
            "{e}"
        );
        assert!(e.contains("--allow-large"));
        let p = Plan::load(&f, true).unwrap();
        assert_eq!(p.runs, 1_001_000);
        // Decoding needs no list of runs: the last run is at hand.
        assert_eq!(
            p.run(1_000_999).unwrap().label(),
            "seed=1000 flows.0.count=1001"
        );
    }

    #[test]
    fn hash_follows_content_not_cosmetics() {
        let f = fixture("hash", "scenario = \"s.toml\"\n[axes]\nseed = [1, 2]\n");
        let a = Plan::load(&f, false).unwrap().stamp;
        std::fs::write(
            &f,
            "name = \"renamed\"\nscenario = \"s.toml\"\n[axes]\nseed = [1, 2]\n",
        )
        .unwrap();
        assert_eq!(Plan::load(&f, false).unwrap().stamp.hash, a.hash);
        std::fs::write(&f, "scenario = \"s.toml\"\n[axes]\nseed = [1, 3]\n").unwrap();
        let b = Plan::load(&f, false).unwrap().stamp;
        assert_ne!(b.hash, a.hash);
        assert_eq!(a.difference(&b), ": the axes or their values differ");
        std::fs::write(&f, "scenario = \"s.toml\"\n[axes]\nseed = [1, 2]\n").unwrap();
        std::fs::write(
            f.parent().unwrap().join("s.toml"),
            scenario().replace("60s", "30s"),
        )
        .unwrap();
        let c = Plan::load(&f, false).unwrap().stamp;
        assert_ne!(c.hash, a.hash);
        assert_eq!(a.difference(&c), ": scenario s.toml was edited");
    }
}
