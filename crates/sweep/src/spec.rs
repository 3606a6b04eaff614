//! The sweep file: which scenario files to run, which fields to fix, and which to vary.
//!
//! ```toml
//! name = "small-grid"                          # shown in reports (default: the file name)
//! scenario = "../dumbbell-reno.toml"           # or scenarios = ["a.toml", "b.toml"],
//!                                              # relative to this file
//! [set]                                        # fixed overrides for every run
//! duration = "5s"
//!
//! [axes]                                       # varied as a product, in this order
//! "flows.0.cc" = ["fast", "reno", "cubic", "bbr"]
//! "links.0.loss" = [0, 1e-6, 1e-5]
//! seed = "1..3"                                # an inclusive integer range: 1, 2, 3
//!
//! [[zip]]                                      # varied together, position by position
//! "links.0.delay" = ["10ms", "40ms"]
//! "links.0.queue.packets" = [83, 333]
//! ```
//!
//! Every key is a `--set` path of `longhaul sim` (`crates/path/src/scenario/overrides.rs` applies it, the
//! same function as on the command line), so the sweep knows nothing of the scenario's schema.
//! Keys may be quoted (`"flows.0.cc"`) or dotted (`flows.0.cc`): both mean the same path, and
//! serde hands the keys over in file order, which fixes the index order (`plan.rs`).

use crate::error::{Result, SweepError};
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// The largest integer range written as a string (`"1..5"`) that is accepted at all; the plan
/// refuses far fewer runs unless asked (`plan::LARGE`).
const MAX_RANGE: u64 = 1 << 40;

/// A parsed sweep file.
#[derive(Clone, Debug)]
pub struct SweepFile {
    /// The file as given.
    pub path: PathBuf,
    /// The sweep's name (`name`), which labels its results.
    pub name: String,
    /// Scenario files as written, relative to the sweep file's directory.
    pub scenarios: Vec<String>,
    /// Fixed `--set` overrides, in file order.
    pub set: Vec<(String, toml::Value)>,
    /// Product axes, in file order.
    pub axes: Vec<Axis>,
    /// Zip groups: the axes of a group advance together.
    pub zips: Vec<Vec<Axis>>,
}

/// One varied field: a `--set` path and its values.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The `--set` path the axis varies, e.g. `flows.cc`.
    pub name: String,
    /// The values it takes.
    pub values: Values,
}

/// An axis's values: a list as written, or an inclusive integer range.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Values as written in the sweep file.
    List(Vec<toml::Value>),
    /// `A..B step S`: from `start`, `len` values `step` apart.
    Range {
        /// The first value.
        start: i64,
        /// The distance between values.
        step: i64,
        /// The number of values.
        len: u64,
    },
}

impl Values {
    /// How many values there are.
    pub fn len(&self) -> u64 {
        match self {
            Values::List(v) => v.len() as u64,
            Values::Range { len, .. } => *len,
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`th value (`i < len()`).
    pub fn get(&self, i: u64) -> toml::Value {
        match self {
            Values::List(v) => v[i as usize].clone(),
            Values::Range { start, step, .. } => toml::Value::Integer(start + step * i as i64),
        }
    }
}

/// Mixed-radix decoding of run `index` over `dims` (outermost first, the last varying
/// fastest): each dimension's position, and the quotient left for the scenario files.
pub fn decode(dims: &[Vec<Axis>], index: u64) -> (Vec<u64>, u64) {
    let mut rest = index;
    let mut picks = vec![0; dims.len()];
    for (d, dim) in dims.iter().enumerate().rev() {
        let n = dim[0].values.len();
        picks[d] = rest % n;
        rest /= n;
    }
    (picks, rest)
}

impl SweepFile {
    /// The dimensions after the scenario, outermost first: each `[[zip]]` group, then each
    /// axis (`docs/sweep.md`'s index order).
    pub fn dims(&self) -> Vec<Vec<Axis>> {
        self.zips
            .iter()
            .cloned()
            .chain(self.axes.iter().map(|a| vec![a.clone()]))
            .collect()
    }

    /// Read and check a sweep file (its scenario files are checked by `Plan::new`).
    pub fn load(path: &Path) -> Result<SweepFile> {
        let text = std::fs::read_to_string(path).map_err(|source| SweepError::Read {
            file: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parse sweep file text; `path` names it in errors and gives the default name.
    pub fn parse(text: &str, path: &Path) -> Result<SweepFile> {
        let file = path.to_path_buf();
        let raw: Raw = toml::from_str(text).map_err(|e| SweepError::Syntax {
            file: file.clone(),
            message: e.to_string().trim_end().to_string(),
        })?;
        let syntax = |message: &str| SweepError::Syntax {
            file: file.clone(),
            message: message.to_string(),
        };
        let scenarios = match (raw.scenario, raw.scenarios) {
            (Some(one), None) => vec![one],
            (None, Some(many)) if !many.is_empty() => many,
            (None, _) => {
                return Err(syntax(
                    "no scenario: add `scenario = \"FILE.toml\"` (or `scenarios = [...]`), \
                     relative to the sweep file",
                ))
            }
            (Some(_), Some(_)) => {
                return Err(syntax(
                    "both `scenario` and `scenarios`: give one (a list for several files)",
                ))
            }
        };
        // The name labels the results, the report and the Slurm job: one line of text.
        if let Some(c) = raw
            .name
            .as_deref()
            .and_then(|n| n.chars().find(|c| c.is_control()))
        {
            let kind = if c == '\n' || c == '\r' {
                "a line break"
            } else {
                "a control character"
            };
            return Err(syntax(&format!(
                "`name` {:?} has {kind}; a sweep's name is one line of text: write it on one \
                 line, without control characters",
                raw.name.as_deref().unwrap_or_default()
            )));
        }
        let name = raw.name.unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "sweep".into())
        });

        let mut set = Vec::new();
        flatten("", raw.set, &mut set);
        let mut leaves = Vec::new();
        flatten("", raw.axes, &mut leaves);
        let mut axes = Vec::new();
        for (name, value) in leaves {
            axes.push(axis(&file, name, value, true)?);
        }
        let mut zips = Vec::new();
        for (g, group) in raw.zip.into_iter().enumerate() {
            let mut leaves = Vec::new();
            flatten("", group, &mut leaves);
            if leaves.is_empty() {
                return Err(syntax(&format!("[[zip]] group {} has no axes", g + 1)));
            }
            let mut members = Vec::new();
            for (name, value) in leaves {
                members.push(axis(&file, name, value, false)?);
            }
            let first: &Axis = &members[0];
            if let Some(other) = members
                .iter()
                .find(|a| a.values.len() != first.values.len())
            {
                return Err(SweepError::Axis {
                    file,
                    axis: other.name.clone(),
                    message: format!(
                        "has {} values but `{}` in the same [[zip]] group has {}; a zip group's \
                         axes advance together and need equally many values",
                        other.values.len(),
                        first.name,
                        first.values.len()
                    ),
                });
            }
            // A zip group's positions are its runs: a value may repeat in one of its axes
            // (the same controller at two loss rates), a whole position may not.
            let n = first.values.len();
            let position = |i: u64| members.iter().map(|a| a.values.get(i)).collect::<Vec<_>>();
            for i in 0..n {
                if let Some(j) = (0..i).find(|&j| position(j) == position(i)) {
                    return Err(SweepError::Axis {
                        file,
                        axis: first.name.clone(),
                        message: format!(
                            "[[zip]] group {}: positions {} and {} are the same run; each \
                             position is one set of runs",
                            g + 1,
                            j + 1,
                            i + 1
                        ),
                    });
                }
            }
            zips.push(members);
        }

        // A field is fixed or varied once: a second mention would silently win or lose.
        let mut seen: Vec<&str> = Vec::new();
        let names = set
            .iter()
            .map(|(n, _)| n.as_str())
            .chain(axes.iter().map(|a| a.name.as_str()))
            .chain(zips.iter().flatten().map(|a| a.name.as_str()));
        for n in names {
            if seen.contains(&n) {
                return Err(SweepError::Axis {
                    file,
                    axis: n.to_string(),
                    message: "is given more than once (in [set], [axes] or a [[zip]] group); \
                              keep one"
                        .into(),
                });
            }
            seen.push(n);
        }
        for (n, _) in &set {
            check_path(&file, n)?;
        }
        Ok(SweepFile {
            path: file,
            name,
            scenarios,
            set,
            axes,
            zips,
        })
    }
}

/// The `--set` assignment for one value: the value written as TOML, so that
/// `apply_override` reads back exactly this value (a string stays a string, 1e-8 a float).
pub fn assignment(path: &str, value: &toml::Value) -> String {
    format!("{path}={}", literal(value))
}

/// A value as a TOML literal (`"reno"`, `1e-8`, `{ name = "fast", alpha = 200 }`).
pub fn literal(value: &toml::Value) -> String {
    match value {
        // Rust's shortest exact form, with an exponent where it is shorter (1e-8, not
        // 0.00000001), which TOML reads back to the same bits; TOML spells NaN `nan`.
        toml::Value::Float(x) if x.is_nan() => "nan".into(),
        toml::Value::Float(x) => format!("{x:?}"),
        other => other.to_string(),
    }
}

/// A value for people and CSV cells: strings without quotes, everything else as TOML.
pub fn display(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => literal(other),
    }
}

fn check_path(file: &Path, name: &str) -> Result<()> {
    let bad = name.is_empty()
        || name.contains('=')
        || name.chars().any(char::is_whitespace)
        || name.split('.').any(str::is_empty);
    if bad {
        return Err(SweepError::Axis {
            file: file.to_path_buf(),
            axis: name.to_string(),
            message: "is not a `--set` path (dotted field names and list indices, e.g. \
                      `flows.0.cc`, without spaces or `=`)"
                .into(),
        });
    }
    Ok(())
}

/// One axis from its TOML value; `unique`: each value once (an `[axes]` entry; a zip group
/// checks its positions instead).
fn axis(file: &Path, name: String, value: toml::Value, unique: bool) -> Result<Axis> {
    check_path(file, &name)?;
    let fail = |message: String| SweepError::Axis {
        file: file.to_path_buf(),
        axis: name.clone(),
        message,
    };
    let values = match value {
        toml::Value::Array(list) => {
            if list.is_empty() {
                return Err(fail("has no values: give at least one".into()));
            }
            for (i, v) in list.iter().enumerate() {
                if unique && list[..i].contains(v) {
                    return Err(SweepError::Value {
                        file: file.to_path_buf(),
                        axis: name.clone(),
                        value: literal(v),
                        message: "appears twice; each value is one set of runs".into(),
                    });
                }
            }
            Values::List(list)
        }
        toml::Value::String(s) => parse_range(&s).map_err(|why| SweepError::Value {
            file: file.to_path_buf(),
            axis: name.clone(),
            value: format!("\"{s}\""),
            message: format!(
                "{why}; an axis is a list (`[\"fast\", \"reno\"]`) or an inclusive integer range \
                     (`\"1..5\"`, `\"0..100 step 10\"`); a fixed value goes in [set]"
            ),
        })?,
        other => {
            return Err(fail(format!(
                "is a single value ({}); an axis is a list of values or a range such as \"1..5\"; \
                 a fixed value goes in [set]",
                literal(&other)
            )))
        }
    };
    Ok(Axis { name, values })
}

/// `"A..B"` or `"A..B step S"`: the integers from A to B inclusive.
fn parse_range(s: &str) -> std::result::Result<Values, String> {
    let (span, step) = match s.split_once(" step ") {
        Some((span, step)) => {
            let step: i64 = step
                .trim()
                .parse()
                .map_err(|_| format!("step `{}` is not an integer", step.trim()))?;
            if step <= 0 {
                return Err(format!("step {step} must be positive"));
            }
            (span, step)
        }
        None => (s, 1),
    };
    let (a, b) = span
        .split_once("..")
        .ok_or_else(|| "not a range".to_string())?;
    let int = |x: &str| {
        x.trim()
            .parse::<i64>()
            .map_err(|_| format!("`{}` is not an integer", x.trim()))
    };
    let (start, end) = (int(a)?, int(b)?);
    if end < start {
        return Err(format!("the range ends ({end}) before it starts ({start})"));
    }
    let len = (end as i128 - start as i128) as u128 / step as u128 + 1;
    if len > MAX_RANGE as u128 {
        return Err(format!("the range has {len} values"));
    }
    Ok(Values::Range {
        start,
        step,
        len: len as u64,
    })
}

/// The file as serde sees it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: Option<String>,
    scenario: Option<String>,
    scenarios: Option<Vec<String>>,
    #[serde(default)]
    set: Ordered,
    #[serde(default)]
    axes: Ordered,
    #[serde(default)]
    zip: Vec<Ordered>,
}

/// A table's entries in file order (toml hands them to a map visitor in document order; a
/// `toml::Value` table would sort them).
#[derive(Default)]
struct Ordered(Vec<(String, Node)>);

enum Node {
    Leaf(toml::Value),
    Table(Ordered),
}

/// Dotted keys and sub-tables become dotted paths; lists and strings are leaves.
fn flatten(prefix: &str, table: Ordered, out: &mut Vec<(String, toml::Value)>) {
    for (key, node) in table.0 {
        let path = if prefix.is_empty() {
            key
        } else {
            format!("{prefix}.{key}")
        };
        match node {
            Node::Leaf(v) => out.push((path, v)),
            Node::Table(t) => flatten(&path, t, out),
        }
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Node::deserialize(d)? {
            Node::Table(t) => Ok(t),
            Node::Leaf(v) => Err(serde::de::Error::custom(format!(
                "expected a table, found {}",
                v.type_str()
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a table, a list or a value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Node>()? {
            entries.push((k, v));
        }
        Ok(Node::Table(Ordered(entries)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element::<toml::Value>()? {
            items.push(v);
        }
        Ok(Node::Leaf(toml::Value::Array(items)))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Leaf(toml::Value::String(v.to_string())))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Node, E> {
        Ok(Node::Leaf(toml::Value::String(v)))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Leaf(toml::Value::Integer(v)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Node, E> {
        i64::try_from(v)
            .map(|v| Node::Leaf(toml::Value::Integer(v)))
            .map_err(|_| E::custom(format!("{v} is too large for a TOML integer")))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Leaf(toml::Value::Float(v)))
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Leaf(toml::Value::Boolean(v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<SweepFile> {
        SweepFile::parse(text, Path::new("grid.toml"))
    }

    #[test]
    fn axes_keep_file_order_quoted_or_dotted() {
        let f = parse(
            r#"
            scenario = "s.toml"
            [set]
            duration = "5s"
            links.0.queue.packets = 100
            [axes]
            seed = "1..3"
            "flows.0.cc" = ["reno", { name = "fast", alpha = 200 }]
            links.0.loss = [0, 1e-6]
            "#,
        )
        .unwrap();
        let names: Vec<&str> = f.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["seed", "flows.0.cc", "links.0.loss"]);
        assert_eq!(f.name, "grid");
        assert_eq!(f.set[1].0, "links.0.queue.packets");
        assert_eq!(
            f.axes[0].values,
            Values::Range {
                start: 1,
                step: 1,
                len: 3
            }
        );
        // An inline table inside a list is one value, not more paths.
        assert_eq!(f.axes[1].values.len(), 2);
        assert_eq!(
            assignment("flows.0.cc", &f.axes[1].values.get(1)),
            "flows.0.cc={ alpha = 200, name = \"fast\" }"
        );
        assert_eq!(assignment("x", &f.axes[2].values.get(1)), "x=1e-6");
        for x in [1e-8, 0.1, 2.0, 1e300, -0.0, f64::INFINITY] {
            let text = format!("v = {}", literal(&toml::Value::Float(x)));
            let back: toml::Table = toml::from_str(&text).unwrap();
            assert_eq!(
                back["v"].as_float().unwrap().to_bits(),
                x.to_bits(),
                "{text}"
            );
        }
        assert_eq!(display(&f.axes[1].values.get(0)), "reno");
    }

    #[test]
    fn ranges_are_inclusive_and_may_step() {
        assert_eq!(
            parse_range("0..100 step 10").unwrap(),
            Values::Range {
                start: 0,
                step: 10,
                len: 11
            }
        );
        let r = parse_range("-2..2").unwrap();
        let all: Vec<toml::Value> = (0..r.len()).map(|i| r.get(i)).collect();
        assert_eq!(all, [-2, -1, 0, 1, 2].map(toml::Value::Integer));
        assert_eq!(parse_range("5..5").unwrap().len(), 1);
        assert_eq!(parse_range("0..9 step 4").unwrap().len(), 3);
        assert!(parse_range("5..1").unwrap_err().contains("ends (1) before"));
        assert!(parse_range("1..x")
            .unwrap_err()
            .contains("`x` is not an integer"));
        assert!(parse_range("1..3 step 0").unwrap_err().contains("positive"));
        assert!(parse_range("fast").unwrap_err().contains("not a range"));
    }

    #[test]
    fn errors_name_the_axis_and_value() {
        let e = parse("scenario = \"s.toml\"\n[axes]\nseed = \"1..x\"\n").unwrap_err();
        assert_eq!(
            e.to_string().split(';').next().unwrap(),
            "grid.toml: axis `seed`, value \"1..x\": `x` is not an integer"
        );
        let e = parse("scenario = \"s.toml\"\n[axes]\nseed = 4\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("grid.toml: axis `seed`: is a single value (4)"),
            "{e}"
        );
        let e = parse("scenario = \"s.toml\"\n[axes]\n\"links.0.loss\" = []\n").unwrap_err();
        assert!(e.to_string().contains("axis `links.0.loss`: has no values"));
        let e = parse(
            "scenario = \"s.toml\"\n[axes]\n\"flows.0.cc\" = [\"reno\", \"fast\", \"reno\"]\n",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("axis `flows.0.cc`, value \"reno\": appears twice"),
            "{e}"
        );
        let e =
            parse("scenario = \"s.toml\"\n[set]\nseed = 1\n[axes]\nseed = [1, 2]\n").unwrap_err();
        assert!(e
            .to_string()
            .contains("axis `seed`: is given more than once"));
        let e = parse("scenario = \"s.toml\"\n[axes]\n\"a b\" = [1]\n").unwrap_err();
        assert!(e.to_string().contains("is not a `--set` path"));
    }

    #[test]
    fn zip_groups_need_equal_lengths() {
        let f = parse(
            "scenario = \"s.toml\"\n[[zip]]\n\"links.0.delay\" = [\"10ms\", \"40ms\"]\n\
             \"links.0.queue.packets\" = [83, 333]\n",
        )
        .unwrap();
        assert_eq!(f.zips.len(), 1);
        assert_eq!(f.zips[0].len(), 2);
        let e = parse(
            "scenario = \"s.toml\"\n[[zip]]\n\"links.0.delay\" = [\"10ms\", \"40ms\"]\n\
             \"links.0.queue.packets\" = [83]\n",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains(
                "axis `links.0.queue.packets`: has 1 values but `links.0.delay` in the same \
                 [[zip]] group has 2"
            ),
            "{e}"
        );
    }

    #[test]
    fn zip_values_may_repeat_but_positions_may_not() {
        let f = parse(
            "scenario = \"s.toml\"\n[[zip]]\n\"flows.0.cc\" = [\"reno\", \"reno\", \"fast\"]\n\
             \"links.0.loss\" = [0, 1e-6, 0]\n",
        )
        .unwrap();
        assert_eq!(f.zips[0][0].values.len(), 3);
        let e = parse(
            "scenario = \"s.toml\"\n[[zip]]\n\"flows.0.cc\" = [\"reno\", \"fast\", \"reno\"]\n\
             \"links.0.loss\" = [0, 1e-6, 0]\n",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("[[zip]] group 1: positions 1 and 3 are the same run"),
            "{e}"
        );
    }

    #[test]
    fn scenario_is_required_once() {
        let e = parse("[axes]\nseed = \"1..2\"\n").unwrap_err();
        assert!(e.to_string().contains("no scenario"), "{e}");
        let e = parse("scenario = \"a\"\nscenarios = [\"b\"]\n").unwrap_err();
        assert!(e.to_string().contains("both `scenario` and `scenarios`"));
        let e = parse("scenario = \"a\"\nbogus = 1\n").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let f = parse("scenarios = [\"a.toml\", \"b.toml\"]\n").unwrap();
        assert_eq!(f.scenarios, ["a.toml", "b.toml"]);
    }

    #[test]
    fn a_name_is_one_line() {
        let e = parse("name = \"grid\\n#SBATCH --wrap=evil\"\nscenario = \"s.toml\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("grid.toml: `name` \"grid\\n#SBATCH --wrap=evil\" has a line break"),
            "{e}"
        );
        assert!(e.contains("write it on one line"), "{e}");
        let e = parse("name = \"a\\u0007b\"\nscenario = \"s.toml\"\n").unwrap_err();
        assert!(e.to_string().contains("has a control character"), "{e}");
        // Spaces, quotes and other text are a name like any.
        let f = parse("name = \"loss grid 'v2' \\\"#1\\\" 50%\"\nscenario = \"s.toml\"\n").unwrap();
        assert_eq!(f.name, "loss grid 'v2' \"#1\" 50%");
    }
}
