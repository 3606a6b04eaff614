//! The plan: a sweep file expanded into a numbered list of runs.
//!
//! Index order (`docs/sweep.md`): the scenario files are the outermost dimension, then the
//! `[[zip]]` groups in file order, then the `[axes]` in file order; the last dimension varies
//! fastest. Run `i` is found by mixed-radix decoding, so no list of runs is ever built and
//! `--index N` on a cluster node costs nothing however large the grid.
//!
//! A run is identified by its configuration, not by its index: the SHA-256 of its scenario
//! file's content and its `--set` assignments make its key ([`Run::key`]), under which its
//! result is stored (`store.rs`). A sweep file that gains axis values, seeds or scenario files
//! renumbers its runs but keeps their keys, so the runs already finished are found again.
//!
//! The plan as recorded ([`Stamp`]: each scenario file's path and hash, the fixed overrides,
//! every axis with its values, longhaul's version) is enough to rebuild it without the sweep
//! file ([`Plan::from_stamp`]): array tasks run from that record, so a sweep file edited while
//! they run does not change what their indices mean. Every value is checked against its
//! scenario before any run starts: a bad value fails the plan naming its axis, not run 4711 an
//! hour in.

use crate::error::{Result, ScenarioChange, SweepError};
use crate::spec::{assignment, decode, display, literal, Axis, SweepFile, Values};
use longhaul_sim::Scenario;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A sweep of more runs than this is refused unless asked for (`allow_large`).
pub const LARGE: u64 = 1_000_000;

/// The axis name a sweep over several scenario files gives the file.
pub const SCENARIO_AXIS: &str = "scenario";

/// The longhaul version recorded with every plan: results of two versions never mix.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The expanded sweep.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Where the plan was read from: the sweep file, or a record of it (`tasks.rs`).
    pub source: PathBuf,
    /// The dimensions after the scenario, outermost first: each zip group, then each axis.
    pub dims: Vec<Vec<Axis>>,
    /// The number of runs: the scenarios times each dimension's length.
    pub runs: u64,
    /// The plan as recorded in the results directory.
    pub stamp: Stamp,
}

/// One run: where it comes from and what it overrides.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The run's index in its plan.
    pub index: u64,
    /// The scenario file as written in the sweep file.
    pub scenario: String,
    /// The scenario file, absolute.
    pub scenario_path: PathBuf,
    /// The SHA-256 of the scenario file's content when the plan was made.
    pub scenario_sha256: String,
    /// Axis values in column order (`Plan::axis_names`).
    pub axes: Vec<(String, toml::Value)>,
    /// The `--set` assignments, fixed ones first: `longhaul sim SCENARIO --set …` with these
    /// reproduces the run.
    pub sets: Vec<String>,
}

/// The plan as stored in `DIR/sweep.json` and `DIR/plans/`: enough to rebuild it, to label
/// results without the sweep file, and to refuse a scenario that changed under the results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stamp {
    /// The longhaul version that made the plan ([`VERSION`]).
    pub longhaul: String,
    /// The sweep's name.
    pub name: String,
    /// The plan's hash (of everything below but the name): names its record in `DIR/plans/`.
    pub hash: String,
    /// The number of runs.
    pub runs: u64,
    /// Column order of the axis values.
    pub axes: Vec<String>,
    /// Each scenario file: as written, where it is, and its content's hash.
    pub scenarios: Vec<ScenarioStamp>,
    /// The fixed `--set` assignments every run applies.
    pub set: Vec<String>,
    /// Each dimension's axes with their values, outermost first.
    pub dims: Vec<Vec<AxisStamp>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// A scenario file in the stamp: results are tied to its content.
pub struct ScenarioStamp {
    /// The path as written in the sweep file.
    pub file: String,
    /// The file, absolute (links resolved).
    pub path: PathBuf,
    /// The SHA-256 of its content.
    pub sha256: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// One axis in the stamp.
pub struct AxisStamp {
    /// The axis's key.
    pub name: String,
    /// Its values.
    pub values: ValuesStamp,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
/// An axis's values in the stamp.
pub enum ValuesStamp {
    /// The values as TOML literals (`"reno"`, `1e-5`), which read back to the same values.
    List(Vec<String>),
    /// An integer range (it may be huge): `len` values from `start`, `step` apart.
    Range {
        /// The first value.
        start: i64,
        /// The distance between values.
        step: i64,
        /// The number of values.
        len: u64,
    },
}

impl Plan {
    /// Read a sweep file and expand it; `allow_large` lifts the `LARGE` limit.
    pub fn load(path: &Path, allow_large: bool) -> Result<Plan> {
        Self::new(SweepFile::load(path)?, allow_large)
    }

    /// Expand a parsed sweep file into its runs; `allow_large` lifts the `LARGE` limit.
    pub fn new(file: SweepFile, allow_large: bool) -> Result<Plan> {
        let base = file.path.parent().unwrap_or(Path::new("")).to_path_buf();
        let dims = file.dims();
        let runs = count(&file.path, file.scenarios.len(), &dims, allow_large)?;

        let fixed: Vec<String> = file.set.iter().map(|(k, v)| assignment(k, v)).collect();
        let mut scenarios: Vec<ScenarioStamp> = Vec::new();
        for written in &file.scenarios {
            let joined = base.join(written);
            let unreadable = |e: std::io::Error| SweepError::Syntax {
                file: file.path.clone(),
                message: format!(
                    "scenario `{written}` ({}): {e}; scenario paths are relative to the sweep file",
                    joined.display()
                ),
            };
            let bytes = std::fs::read(&joined).map_err(unreadable)?;
            let path = std::fs::canonicalize(&joined).map_err(unreadable)?;
            check_values(&file, &joined, &fixed, &dims)?;
            let sha256 = hex(&Sha256::digest(&bytes));
            // Runs are their scenario's content: two files alike would be the same runs twice.
            if let Some(twin) = scenarios.iter().find(|s| s.sha256 == sha256) {
                return Err(SweepError::Syntax {
                    file: file.path.clone(),
                    message: format!(
                        "scenarios `{}` and `{written}` have the same content, so their runs \
                         would be the same runs; give one of them",
                        twin.file
                    ),
                });
            }
            scenarios.push(ScenarioStamp {
                file: written.clone(),
                path,
                sha256,
            });
        }

        let mut axes = Vec::new();
        if scenarios.len() > 1 {
            axes.push(SCENARIO_AXIS.to_string());
        }
        axes.extend(dims.iter().flatten().map(|a| a.name.clone()));
        let mut stamp = Stamp {
            longhaul: VERSION.to_string(),
            name: file.name.clone(),
            hash: String::new(),
            runs,
            axes,
            scenarios,
            set: fixed,
            dims: dims
                .iter()
                .map(|d| d.iter().map(axis_stamp).collect())
                .collect(),
        };
        stamp.hash = stamp.content_hash();
        Ok(Plan {
            source: file.path,
            dims,
            runs,
            stamp,
        })
    }

    /// The plan a stamp records, read from `source` (named in errors); no file is read, so a
    /// results directory can be labelled where its scenario files are not. `allow_large` lifts
    /// the `LARGE` limit, as for the sweep file.
    pub fn from_stamp(stamp: Stamp, source: &Path, allow_large: bool) -> Result<Plan> {
        let damaged = |why: String| SweepError::BadResult {
            path: source.to_path_buf(),
            message: format!("not a plan longhaul can rebuild: {why}"),
        };
        if stamp.longhaul != VERSION {
            return Err(SweepError::VersionChanged {
                what: source.display().to_string(),
                found: stamp.longhaul.clone(),
                ours: VERSION.to_string(),
            });
        }
        let mut dims = Vec::new();
        for d in &stamp.dims {
            let mut dim = Vec::new();
            for a in d {
                let values = match &a.values {
                    ValuesStamp::List(list) => Values::List(
                        list.iter()
                            .map(|l| {
                                parse_literal(l).ok_or_else(|| {
                                    damaged(format!("axis `{}`: {l} is not a TOML value", a.name))
                                })
                            })
                            .collect::<Result<_>>()?,
                    ),
                    &ValuesStamp::Range { start, step, len } => Values::Range { start, step, len },
                };
                if values.is_empty() {
                    return Err(damaged(format!("axis `{}` has no values", a.name)));
                }
                dim.push(Axis {
                    name: a.name.clone(),
                    values,
                });
            }
            if dim.is_empty() || dim.iter().any(|a| a.values.len() != dim[0].values.len()) {
                return Err(damaged("a dimension's axes differ in length".into()));
            }
            dims.push(dim);
        }
        if stamp.scenarios.is_empty() {
            return Err(damaged("no scenario".into()));
        }
        let runs = count(source, stamp.scenarios.len(), &dims, allow_large)?;
        if runs != stamp.runs || stamp.hash != stamp.content_hash() {
            return Err(damaged(
                "its hash or number of runs does not match its content".into(),
            ));
        }
        Ok(Plan {
            source: source.to_path_buf(),
            dims,
            runs,
            stamp,
        })
    }

    /// The sweep's name.
    pub fn name(&self) -> &str {
        &self.stamp.name
    }

    /// Column order of axis values: `scenario` (several files only), then every axis.
    pub fn axis_names(&self) -> &[String] {
        &self.stamp.axes
    }

    /// Refuse the plan if a scenario file's content is no longer what the plan recorded.
    pub fn check_scenarios(&self) -> Result<()> {
        for s in &self.stamp.scenarios {
            let since = format!("this plan was made ({})", self.source.display());
            read_checked(
                &s.file,
                &s.path,
                &s.sha256,
                &since,
                "plan again from the sweep file",
            )?;
        }
        Ok(())
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
        let scenario = &self.stamp.scenarios[rest as usize];
        let mut axes = Vec::new();
        if self.stamp.scenarios.len() > 1 {
            axes.push((
                SCENARIO_AXIS.to_string(),
                toml::Value::String(scenario.file.clone()),
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
            scenario: scenario.file.clone(),
            scenario_path: scenario.path.clone(),
            scenario_sha256: scenario.sha256.clone(),
            axes,
            sets,
        })
    }

    /// "2 scenarios × flows.0.cc (4) × seed (3) = 24 runs"
    pub fn describe(&self) -> String {
        let files: Vec<&str> = self
            .stamp
            .scenarios
            .iter()
            .map(|s| s.file.as_str())
            .collect();
        format!(
            "{} = {} run{}",
            shape(&files, &self.dims),
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

    /// The command that runs it alone, as a POSIX shell reads it:
    /// `longhaul sim SCENARIO --set … --set …`.
    pub fn sim_command(&self) -> String {
        let mut cmd = format!(
            "longhaul sim {}",
            longhaul_output::shell::word(&self.scenario_path.display().to_string())
        );
        for s in &self.sets {
            cmd.push_str(&format!(" --set {}", longhaul_output::shell::word(s)));
        }
        cmd
    }

    /// The run's identity: its scenario's content and its overrides (`config_key`).
    pub fn key(&self) -> String {
        config_key(&self.scenario_sha256, &self.sets)
    }

    /// The scenario file's bytes, refused if they are no longer those the plan recorded (the
    /// run's key would name another configuration).
    pub fn read_scenario(&self) -> Result<Vec<u8>> {
        read_checked(
            &self.scenario,
            &self.scenario_path,
            &self.scenario_sha256,
            "the sweep was planned",
            "plan the sweep again",
        )
    }

    /// The run's scenario from `bytes` (`read_scenario`) with its overrides: exactly what
    /// `longhaul sim` does with the same file and `--set` arguments.
    pub fn parse(&self, bytes: &[u8]) -> Result<longhaul_sim::Checked> {
        let text = std::str::from_utf8(bytes).map_err(|e| SweepError::Syntax {
            file: self.scenario_path.clone(),
            message: format!("the scenario file is not UTF-8: {e}"),
        })?;
        let file = self.scenario_path.display().to_string();
        Ok(Scenario::parse(
            text,
            &file,
            &self.default_name(),
            &self.sets,
        )?)
    }

    /// The scenario's name when its file gives none: the file's stem, as `longhaul sim` names
    /// it.
    pub fn default_name(&self) -> String {
        self.scenario_path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into())
    }

    /// Read and load the run's scenario with its overrides.
    pub fn load(&self) -> Result<longhaul_sim::Checked> {
        self.parse(&self.read_scenario()?)
    }
}

/// The bytes of scenario file `written` at `path`, refused unless their SHA-256 is `sha256`
/// (recorded when `since` happened; `what_to_do` otherwise than restore it).
fn read_checked(
    written: &str,
    path: &Path,
    sha256: &str,
    since: &str,
    what_to_do: &str,
) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(|e| SweepError::Syntax {
        file: path.to_path_buf(),
        message: format!("cannot read scenario `{written}`: {e}"),
    })?;
    let now = hex(&Sha256::digest(&bytes));
    if now != sha256 {
        return Err(SweepError::ScenarioChanged(Box::new(ScenarioChange {
            file: written.to_string(),
            path: path.to_path_buf(),
            then: sha256.to_string(),
            now,
            since: since.to_string(),
            advice: format!("restore it, or {what_to_do}"),
        })));
    }
    Ok(bytes)
}

/// A configuration's key: the first 16 hex digits of the SHA-256 over the scenario file's hash
/// and the `--set` assignments. The assignments are taken in path order, so that reordering a
/// sweep file's axes keeps its runs, unless one path lies inside another
/// (`links.0.queue` and `links.0.queue.packets`), where the order they apply in decides the
/// run.
pub fn config_key(scenario_sha256: &str, sets: &[String]) -> String {
    let path = |s: &str| s.split_once('=').map_or(s, |(p, _)| p).to_string();
    let paths: Vec<String> = sets.iter().map(|s| path(s)).collect();
    let nested = paths.iter().any(|a| {
        paths.iter().any(|b| {
            b.len() > a.len() && b.starts_with(a.as_str()) && b[a.len()..].starts_with('.')
        })
    });
    let mut ordered: Vec<&String> = sets.iter().collect();
    if !nested {
        ordered.sort_by_key(|s| path(s));
    }
    let canonical = serde_json::json!({ "scenario": scenario_sha256, "set": ordered });
    hex(&Sha256::digest(canonical.to_string().as_bytes()))[..16].to_string()
}

impl Stamp {
    /// SHA-256 over the canonical JSON of what decides the runs and their order (not the name,
    /// not the version, not the hash itself).
    fn content_hash(&self) -> String {
        let canonical = serde_json::json!({
            "scenarios": self.scenarios,
            "set": self.set,
            "dims": self.dims,
        });
        hex(&Sha256::digest(canonical.to_string().as_bytes()))[..16].to_string()
    }

    /// What differs from `earlier`, for people: `seed: 4 values against 3; 48 runs against 36`.
    pub fn difference(&self, earlier: &Stamp) -> String {
        let mut what = Vec::new();
        let files = |s: &Stamp| {
            s.scenarios
                .iter()
                .map(|x| x.file.clone())
                .collect::<Vec<_>>()
        };
        let (now, then) = (files(self), files(earlier));
        let added: Vec<&String> = now.iter().filter(|f| !then.contains(f)).collect();
        let dropped: Vec<&String> = then.iter().filter(|f| !now.contains(f)).collect();
        if !added.is_empty() {
            what.push(format!("new scenario files {added:?}"));
        }
        if !dropped.is_empty() {
            what.push(format!("scenario files left out {dropped:?}"));
        }
        if self.set != earlier.set {
            what.push("other [set] values".into());
        }
        let axes = |s: &Stamp| s.dims.iter().flatten().cloned().collect::<Vec<AxisStamp>>();
        let (now, then) = (axes(self), axes(earlier));
        for a in &now {
            match then.iter().find(|b| b.name == a.name) {
                None => what.push(format!("new axis {}", a.name)),
                Some(b) if b.values != a.values => {
                    let (x, y) = (a.values.count(), b.values.count());
                    what.push(if x == y {
                        format!("{}: other values", a.name)
                    } else {
                        format!("{}: {x} values against {y}", a.name)
                    });
                }
                Some(_) => {}
            }
        }
        for b in &then {
            if !now.iter().any(|a| a.name == b.name) {
                what.push(format!("axis {} left out", b.name));
            }
        }
        if self.runs != earlier.runs {
            what.push(format!("{} runs against {}", self.runs, earlier.runs));
        }
        if what.is_empty() {
            what.push("the order of the runs".into());
        }
        what.join("; ")
    }
}

impl ValuesStamp {
    /// How many values there are.
    fn count(&self) -> u64 {
        match self {
            ValuesStamp::List(v) => v.len() as u64,
            ValuesStamp::Range { len, .. } => *len,
        }
    }
}

/// A TOML literal as written by `spec::literal`, read back.
fn parse_literal(literal: &str) -> Option<toml::Value> {
    let mut table: toml::Table = toml::from_str(&format!("v = {literal}")).ok()?;
    table.remove("v")
}

fn axis_stamp(a: &Axis) -> AxisStamp {
    AxisStamp {
        name: a.name.clone(),
        values: match &a.values {
            Values::List(v) => ValuesStamp::List(v.iter().map(literal).collect()),
            &Values::Range { start, step, len } => ValuesStamp::Range { start, step, len },
        },
    }
}

/// The number of runs of `scenarios` files over `dims`, refused past `LARGE` unless
/// `allow_large`.
fn count(file: &Path, scenarios: usize, dims: &[Vec<Axis>], allow_large: bool) -> Result<u64> {
    let mut runs = scenarios as u128;
    for d in dims {
        runs = runs.saturating_mul(d[0].values.len() as u128);
    }
    let too_large = |limit: u64| SweepError::TooLarge {
        file: file.to_path_buf(),
        runs: runs.to_string(),
        shape: shape(&vec![""; scenarios], dims),
        limit,
    };
    if runs > LARGE as u128 && !allow_large {
        return Err(too_large(LARGE));
    }
    u64::try_from(runs).map_err(|_| too_large(u64::MAX))
}

fn shape(scenarios: &[&str], dims: &[Vec<Axis>]) -> String {
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
        assert_eq!(checked.scenario.links[0].loss.mean(), 1e-4);
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
        assert_eq!(b.difference(&a), "seed: other values");
        std::fs::write(&f, "scenario = \"s.toml\"\n[axes]\nseed = [1, 2]\n").unwrap();
        let s = f.parent().unwrap().join("s.toml");
        std::fs::write(&s, scenario().replace("60s", "30s")).unwrap();
        let c = Plan::load(&f, false).unwrap().stamp;
        assert_ne!(c.hash, a.hash);
        assert_ne!(c.scenarios[0].sha256, a.scenarios[0].sha256);
        assert_eq!(a.longhaul, VERSION);
        assert_eq!(a.scenarios[0].path, std::fs::canonicalize(&s).unwrap());
        std::fs::write(
            &f,
            "scenarios = [\"s.toml\", \"t.toml\"]\n[set]\nduration = \"2s\"\n[axes]\n\
             seed = [1, 2]\n\"flows.0.cc\" = [\"reno\"]\n",
        )
        .unwrap();
        let d = Plan::load(&f, false).unwrap().stamp;
        assert_eq!(
            d.difference(&c),
            "new scenario files [\"t.toml\"]; other [set] values; new axis flows.0.cc; 4 runs \
             against 2"
        );
    }

    #[test]
    fn keys_follow_the_configuration_not_the_index() {
        let f = fixture(
            "keys",
            "scenario = \"s.toml\"\n[set]\nduration = \"1s\"\n[axes]\n\
             \"flows.0.cc\" = [\"reno\", \"cubic\"]\nseed = \"1..3\"\n",
        );
        let a = Plan::load(&f, false).unwrap();
        let keys = |p: &Plan| -> std::collections::BTreeMap<String, String> {
            (0..p.runs)
                .map(|i| {
                    let r = p.run(i).unwrap();
                    (r.key(), r.label())
                })
                .collect()
        };
        let ka = keys(&a);
        assert_eq!(ka.len(), 6);
        // More values, another axis order, a value moved from [set] into a one-value axis: the
        // same configurations keep their keys, under other indices.
        std::fs::write(
            &f,
            "scenario = \"s.toml\"\n[axes]\nseed = \"0..4\"\nduration = [\"1s\"]\n\
             \"flows.0.cc\" = [\"reno\", \"bbr\", \"cubic\"]\n",
        )
        .unwrap();
        let b = Plan::load(&f, false).unwrap();
        let kb = keys(&b);
        assert_eq!(kb.len(), 15);
        for (key, label) in &ka {
            assert!(kb.contains_key(key), "{label} lost its key");
        }
        assert_eq!(a.run(1).unwrap().key(), b.run(6).unwrap().key());
        // The scenario's content is part of the key.
        let s = f.parent().unwrap().join("s.toml");
        std::fs::write(&s, scenario().replace("60s", "30s")).unwrap();
        let c = Plan::load(&f, false).unwrap();
        assert!(keys(&c).keys().all(|k| !kb.contains_key(k)));
        // A path inside another keeps the order the overrides apply in.
        let sha = &a.stamp.scenarios[0].sha256;
        let (whole, part) = (
            "links.0.queue={ packets = 50 }".to_string(),
            "links.0.queue.packets=80".to_string(),
        );
        assert_ne!(
            config_key(sha, &[whole.clone(), part.clone()]),
            config_key(sha, &[part, whole])
        );
        assert_eq!(
            config_key(sha, &["seed=1".into(), "duration=\"1s\"".into()]),
            config_key(sha, &["duration=\"1s\"".into(), "seed=1".into()])
        );
    }

    #[test]
    fn a_stamp_rebuilds_the_same_runs() {
        let f = fixture(
            "rebuild",
            r#"
            scenarios = ["s.toml", "t.toml"]
            [set]
            duration = "1s"
            [axes]
            "flows.0.cc" = ["reno", { name = "fast", alpha = 200 }]
            "links.0.loss" = [0, 1e-8, 0.1]
            seed = "1..7 step 3"
            [[zip]]
            "links.0.queue.packets" = [50, 100]
            "flows.0.start" = ["0s", "0.5s"]
            "#,
        );
        let plan = Plan::load(&f, false).unwrap();
        let json = serde_json::to_string(&plan.stamp).unwrap();
        let back: Stamp = serde_json::from_str(&json).unwrap();
        let rebuilt = Plan::from_stamp(back, Path::new("x.json"), false).unwrap();
        assert_eq!(rebuilt.runs, plan.runs);
        assert_eq!(rebuilt.describe(), plan.describe());
        for i in 0..plan.runs {
            assert_eq!(rebuilt.run(i).unwrap(), plan.run(i).unwrap());
        }
        rebuilt.check_scenarios().unwrap();
        // A scenario edited since: refused by the plan and by each run.
        let t = f.parent().unwrap().join("t.toml");
        std::fs::write(&t, scenario()).unwrap();
        let e = rebuilt.check_scenarios().unwrap_err().to_string();
        assert!(
            e.starts_with("scenario t.toml (")
                && e.contains("has changed since this plan was made (x.json)"),
            "{e}"
        );
        let last = rebuilt.run(plan.runs - 1).unwrap();
        assert!(last.load().is_err() && plan.run(0).unwrap().load().is_ok());
        // A damaged record, another version, a large plan: refused.
        let mut bad = plan.stamp.clone();
        bad.runs += 1;
        let e = Plan::from_stamp(bad, Path::new("x.json"), false).unwrap_err();
        assert!(
            e.to_string()
                .contains("x.json: not a plan longhaul can rebuild"),
            "{e}"
        );
        let mut old = plan.stamp.clone();
        old.longhaul = "0.0.9".into();
        let e = Plan::from_stamp(old, Path::new("x.json"), false).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("x.json was made by longhaul 0.0.9"),
            "{e}"
        );
        std::fs::write(&f, "scenario = \"s.toml\"\n[axes]\nseed = \"1..1000001\"\n").unwrap();
        let large = Plan::load(&f, true).unwrap();
        let e = Plan::from_stamp(large.stamp.clone(), Path::new("x.json"), false).unwrap_err();
        assert!(e.to_string().contains("--allow-large"), "{e}");
        assert!(Plan::from_stamp(large.stamp, Path::new("x.json"), true).is_ok());
    }

    #[test]
    fn scenarios_alike_are_refused() {
        let f = fixture("twins", "scenarios = [\"s.toml\", \"u.toml\"]\n");
        std::fs::write(f.parent().unwrap().join("u.toml"), scenario()).unwrap();
        let e = Plan::load(&f, false).unwrap_err().to_string();
        assert!(
            e.contains("scenarios `s.toml` and `u.toml` have the same content"),
            "{e}"
        );
    }
}
