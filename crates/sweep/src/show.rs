//! `longhaul sweep show DIR`: the collected table, filtered and cut to a few columns, for a
//! look in the terminal.
//!
//! The columns are those of `results.csv` ([`crate::collect::table`]); `--where NAME=VALUE`
//! keeps the rows whose cell in column NAME is VALUE (numbers compare as numbers, so
//! `links_0_loss=0.00001` matches `1e-5`; several `--where` must all hold), and `--columns`
//! picks the columns shown.

use crate::collect::{ColumnKind, Table};
use crate::error::{Result, SweepError};

/// One `--where NAME=VALUE` condition.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    /// The column name.
    pub column: String,
    /// The value its cell must have.
    pub value: String,
}

impl std::str::FromStr for Condition {
    type Err = SweepError;

    fn from_str(s: &str) -> Result<Self> {
        match s.split_once('=') {
            Some((c, v)) if !c.trim().is_empty() => Ok(Condition {
                column: c.trim().to_string(),
                value: v.trim().to_string(),
            }),
            _ => Err(SweepError::Query {
                message: format!(
                    "--where `{s}`: expected COLUMN=VALUE, e.g. --where cc=fast (a column name \
                     of results.csv)"
                ),
            }),
        }
    }
}

/// Whether a cell holds `value`: the same text, or the same number.
fn matches(cell: &str, value: &str) -> bool {
    if cell == value {
        return true;
    }
    match (cell.parse::<f64>(), value.parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The columns shown when none are asked for: the row's identity and its cc, then the
/// headline metrics.
pub const DEFAULT_METRICS: [&str; 5] = [
    "cc",
    "throughput_bps",
    "utilization",
    "qdelay_p95_ms",
    "loss_rate",
];

/// The rows of `t` that meet every condition, cut to `columns` (default: `index`, the axes,
/// `flow` and [`DEFAULT_METRICS`]), as a new table. An unknown column name is an error that
/// lists the names there are.
pub fn select(t: &Table, conditions: &[Condition], columns: &[String]) -> Result<Table> {
    let tests: Vec<(usize, &str)> = conditions
        .iter()
        .map(|c| Ok((t.position(&c.column)?, c.value.as_str())))
        .collect::<Result<_>>()?;
    let picked: Vec<usize> = if columns.is_empty() {
        let mut v: Vec<usize> = (0..t.columns.len())
            .filter(|&i| t.kinds[i] == ColumnKind::Id)
            .collect();
        v.extend(
            DEFAULT_METRICS
                .iter()
                .filter_map(|m| t.columns.iter().position(|c| c == m)),
        );
        v
    } else {
        columns
            .iter()
            .map(|c| t.position(c.trim()))
            .collect::<Result<_>>()?
    };
    let rows = t
        .rows
        .iter()
        .filter(|r| tests.iter().all(|&(i, v)| matches(&r[i], v)))
        .map(|r| picked.iter().map(|&i| r[i].clone()).collect())
        .collect();
    Ok(Table {
        columns: picked.iter().map(|&i| t.columns[i].clone()).collect(),
        kinds: picked.iter().map(|&i| t.kinds[i]).collect(),
        rows,
    })
}

/// `t` as aligned text: a header, a rule, one line per row; text columns left-aligned, the
/// rest right-aligned.
pub fn render(t: &Table) -> String {
    use longhaul_metrics::report::{Align, Table as Text};
    let align: Vec<Align> = t
        .kinds
        .iter()
        .map(|k| match k {
            ColumnKind::Text => Align::Left,
            _ => Align::Right,
        })
        .collect();
    let mut out = Text::new(&align);
    out.header(&t.columns);
    for r in &t.rows {
        out.row(r.clone());
    }
    out.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let row = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        Table {
            columns: ["index", "links_0_loss", "flow", "cc", "throughput_bps"]
                .map(String::from)
                .to_vec(),
            kinds: vec![
                ColumnKind::Id,
                ColumnKind::Id,
                ColumnKind::Id,
                ColumnKind::Text,
                ColumnKind::Metric,
            ],
            rows: vec![
                row(&["0", "0", "0", "fast", "95000000.0"]),
                row(&["1", "1e-5", "0", "fast", "94000000.0"]),
                row(&["2", "1e-5", "0", "reno", "31000000.5"]),
            ],
        }
    }

    #[test]
    fn where_keeps_matching_rows_and_numbers_compare_as_numbers() {
        let t = sample();
        let w: Vec<Condition> = ["links_0_loss=0.00001", "cc=fast"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let cols = ["index", "throughput_bps"].map(String::from);
        let s = select(&t, &w, &cols).unwrap();
        assert_eq!(s.rows, [["1", "94000000.0"]]);
        assert_eq!(
            render(&s),
            "index  throughput_bps\n---------------------\n    1      94000000.0\n"
        );
        // No --columns: identity columns and the headline metrics there are.
        let all = select(&t, &[], &[]).unwrap();
        assert_eq!(
            all.columns,
            ["index", "links_0_loss", "flow", "cc", "throughput_bps"]
        );
        assert_eq!(all.rows.len(), 3);
    }

    #[test]
    fn unknown_columns_and_malformed_conditions_say_what_to_write() {
        let t = sample();
        let e = select(&t, &["speed=1".parse().unwrap()], &[])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "no column `speed`; the columns are: index, links_0_loss, flow, cc, throughput_bps"
        );
        let e = select(&t, &[], &["index".into(), "tput".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("no column `tput`; the columns are: index,"),
            "{e}"
        );
        for bad in ["cc", "=fast", ""] {
            let e = bad.parse::<Condition>().unwrap_err().to_string();
            assert!(e.contains("expected COLUMN=VALUE"), "{bad}: {e}");
        }
        assert_eq!(
            "cc = fast".parse::<Condition>().unwrap(),
            Condition {
                column: "cc".into(),
                value: "fast".into()
            }
        );
    }
}
