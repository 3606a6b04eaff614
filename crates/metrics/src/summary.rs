//! The result summary: the JSON that `sim`, `lab`, `reproduce` and `perf -J` write.
//!
//! docs/measurements.md fixes the core fields so that results from every mode compare line by line:
//!
//! ```text
//! { scenario, mode: "sim"|"lab"|"perf", duration_s, seed,
//!   links: [ { name, capacity_bps, utilization, drops, queue_delay_ms: { mean, p95, p99 } } ],
//!   flows: [ { id, cc, throughput_bps, utilization, min_rtt_ms, queueing_delay_ms: { mean, p95 },
//!              loss_rate, retransmits, bmps } ],
//!   aggregate: { throughput_bps, utilization, jain, cov, bmps } }
//! ```
//!
//! Everything else here is an optional extra: it is left out of the JSON when absent and defaults
//! when missing, so a lean file with only the core fields parses, and files written before an
//! extra existed keep parsing. Units are in the field names (`_bps`, `_ms`, `_s`, `_pkts`);
//! rates are bits per second, fractions are 0–1 (0.95 = 95 %), bmps is bit-meters per second.
//!
//! A measurement that is undefined (Jain's index of no flows, the CoV of a zero-throughput run) is
//! written as JSON `null` (serde_json's encoding of NaN) and read back as NaN, which reports print
//! as "-". Refusing to write it would lose the rest of a long run's results.

use crate::delay::DelayStats;
use crate::error::MetricsError;
use crate::loss::DropCount;
use crate::provenance::Provenance;
pub use crate::rule::Rule;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Which driver produced the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The packet simulator (`longhaul sim`, `longhaul reproduce`).
    Sim,
    /// Real stacks over the emulator (`longhaul lab`).
    Lab,
    /// A measurement over a real path (`longhaul perf`).
    Perf,
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Sim => "sim",
            Mode::Lab => "lab",
            Mode::Perf => "perf",
        })
    }
}

/// One experiment's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// What ran: the scenario's name, or `perf HOST:PORT`.
    pub scenario: String,
    /// Which driver produced the result.
    pub mode: Mode,
    /// How long the run lasted, seconds.
    #[serde(deserialize_with = "f64_or_null")]
    pub duration_s: f64,
    /// The seed of the run's random streams.
    pub seed: u64,
    /// The links (queues) of the path.
    pub links: Vec<LinkSummary>,
    /// The flows.
    pub flows: Vec<FlowSummary>,
    /// All flows together.
    pub aggregate: Aggregate,
    /// Responsive cross traffic (`sim`, `lab`): one entry per `[[cross_traffic]]` entry whose
    /// transfers are congestion-controlled flows of their own, beside `flows`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub responsive_cross: Vec<ResponsiveCross>,
    /// `reproduce`: the paper's claims and what this run measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<Claim>,
    /// Free-form context: longhaul version, kernel, sysctls, scenario file hash.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub meta: BTreeMap<String, String>,
    /// The command line, scenario hash, build, kernel and CPU of the run (crate::provenance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

/// Queueing (sojourn) delay at a link, milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LinkDelay {
    /// Mean, ms.
    #[serde(deserialize_with = "f64_or_null")]
    pub mean: f64,
    /// 95th percentile, ms.
    #[serde(deserialize_with = "f64_or_null")]
    pub p95: f64,
    /// 99th percentile, ms.
    #[serde(deserialize_with = "f64_or_null")]
    pub p99: f64,
    /// Median, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50: Option<f64>,
    /// Largest, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

impl From<DelayStats> for LinkDelay {
    fn from(d: DelayStats) -> Self {
        LinkDelay {
            mean: d.mean,
            p95: d.p95,
            p99: d.p99,
            p50: Some(d.p50),
            max: Some(d.max),
        }
    }
}

/// One link (queue) of the path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkSummary {
    /// The link's name in the scenario.
    pub name: String,
    /// The link's rate, bits per second.
    #[serde(deserialize_with = "f64_or_null")]
    pub capacity_bps: f64,
    /// Payload throughput through the link ÷ its payload capacity (net of 40-byte headers).
    #[serde(deserialize_with = "f64_or_null")]
    pub utilization: f64,
    /// Packets dropped at this link, all reasons.
    pub drops: u64,
    /// Time packets spent queued at the link (sojourn time), ms.
    pub queue_delay_ms: LinkDelay,
    /// The link's MTU, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// One-way propagation delay, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<f64>,
    /// The link's length, km, for b·m/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance_km: Option<f64>,
    /// Queue discipline and limit as configured, e.g. "droptail 1000p".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// Drops by reason (`queue_full`, `aqm`, `random`, ...), summing to `drops`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub drops_by_reason: BTreeMap<String, u64>,
    /// Packets the link sent on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_forwarded: Option<u64>,
    /// The link's time series, if recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<LinkSeries>,
}

/// A link's time series: one entry per interval, all arrays as long as `t`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LinkSeries {
    /// Interval start, seconds.
    pub t: Vec<f64>,
    /// Bytes queued in the interval: a sample (`sim`) or the mean over its events (`lab`).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "vec_f64_or_null"
    )]
    pub queue_bytes: Vec<f64>,
    /// Packets queued in the interval, sampled as `queue_bytes` is.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "vec_f64_or_null"
    )]
    pub queue_pkts: Vec<f64>,
    /// Throughput through the link in the interval, b/s.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "vec_f64_or_null"
    )]
    pub throughput_bps: Vec<f64>,
}

/// Queueing delay of a flow (RTT − min RTT), milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FlowDelay {
    /// Mean, ms.
    #[serde(deserialize_with = "f64_or_null")]
    pub mean: f64,
    /// 95th percentile, ms.
    #[serde(deserialize_with = "f64_or_null")]
    pub p95: f64,
    /// Median, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50: Option<f64>,
    /// 99th percentile, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
    /// Largest, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

/// One flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowSummary {
    /// The flow's id, as the scenario numbers it.
    pub id: u32,
    /// Congestion control name (`fast`, `reno`, ...).
    pub cc: String,
    /// Payload bytes delivered ÷ the flow's active time, b/s.
    #[serde(deserialize_with = "f64_or_null")]
    pub throughput_bps: f64,
    /// Throughput ÷ the payload capacity (net of headers) of what limits the flow, 0–1.
    #[serde(deserialize_with = "f64_or_null")]
    pub utilization: f64,
    /// The smallest RTT sample, ms.
    #[serde(deserialize_with = "f64_or_null")]
    pub min_rtt_ms: f64,
    /// RTT − min RTT over the flow's samples, ms.
    pub queueing_delay_ms: FlowDelay,
    /// Packets lost ÷ packets sent (or retransmitted ÷ sent segments for kernel TCP), 0–1.
    #[serde(deserialize_with = "f64_or_null")]
    pub loss_rate: f64,
    /// Packets retransmitted.
    pub retransmits: u64,
    /// Throughput × the path's distance, bit-meters per second.
    #[serde(deserialize_with = "f64_or_null")]
    pub bmps: f64,
    /// Algorithm parameters as given, e.g. "alpha=200,gamma=0.5".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<String>,
    /// When the flow started, seconds from the start of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_s: Option<f64>,
    /// When the flow's active time ended, seconds from the start of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    /// Length of the flow's path, km.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance_km: Option<f64>,
    /// Payload bytes delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_delivered: Option<u64>,
    /// Data packets sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_sent: Option<u64>,
    /// Data packets dropped anywhere on the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_lost: Option<u64>,
    /// CoV of this flow's 1-s throughput.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cov: Option<f64>,
    /// Where and why this flow's packets were dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drops: Vec<DropCount>,
    /// The flow's time series, if recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<FlowSeries>,
}

/// A flow's time series: one entry per interval, all non-empty arrays as long as `t`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FlowSeries {
    /// Interval start, seconds.
    pub t: Vec<f64>,
    /// Payload the path carried to the receiving host in the interval, b/s.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "vec_f64_or_null"
    )]
    pub throughput_bps: Vec<f64>,
    /// Payload delivered in order to the application in the interval, b/s (where the driver
    /// tells it apart from `throughput_bps`, what the path carried: after a loss recovery the
    /// bytes held behind the hole are delivered at once, so a goodput bin can exceed the
    /// capacity and a throughput bin cannot).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "vec_f64_or_null"
    )]
    pub goodput_bps: Vec<f64>,
    /// Congestion window, packets.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "vec_f64_or_null"
    )]
    pub cwnd_pkts: Vec<f64>,
    /// Smoothed or mean RTT in the interval, ms.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "vec_f64_or_null"
    )]
    pub rtt_ms: Vec<f64>,
    /// Packets in flight.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "vec_f64_or_null"
    )]
    pub inflight_pkts: Vec<f64>,
    /// Packets the sender declared lost in the interval.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "vec_f64_or_null"
    )]
    pub lost_pkts: Vec<f64>,
    /// Packets retransmitted in the interval.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "vec_f64_or_null"
    )]
    pub retransmits: Vec<f64>,
}

/// All flows together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Aggregate {
    /// All flows' payload bytes ÷ the run's span, b/s.
    #[serde(deserialize_with = "f64_or_null")]
    pub throughput_bps: f64,
    /// Throughput through the most loaded bottleneck ÷ its payload capacity, 0–1.
    #[serde(deserialize_with = "f64_or_null")]
    pub utilization: f64,
    /// Jain's index over the flows' throughputs.
    #[serde(deserialize_with = "f64_or_null")]
    pub jain: f64,
    /// CoV of the aggregate throughput over 1-s intervals.
    #[serde(deserialize_with = "f64_or_null")]
    pub cov: f64,
    /// Bit-meters per second of all flows together.
    #[serde(deserialize_with = "f64_or_null")]
    pub bmps: f64,
    /// Payload bytes all flows delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_delivered: Option<u64>,
    /// Capacity the utilization was computed against (see crate::throughput on Table 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_bps: Option<f64>,
    /// What `capacity_bps` is: the link that limits the flows (`"core"`), or their own access
    /// links when those are slower (`"the access links of flows 1, 2"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<String>,
    /// The aggregate throughput over time, if recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<AggregateSeries>,
}

/// The aggregate throughput over time (seed 000's Figure 2).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AggregateSeries {
    /// Interval start, seconds.
    pub t: Vec<f64>,
    /// Throughput of all flows in the interval, b/s.
    #[serde(deserialize_with = "vec_f64_or_null")]
    pub throughput_bps: Vec<f64>,
}

/// What one responsive `[[cross_traffic]]` entry's transfers did: web transfers, or an on/off
/// source's on periods, each a congestion-controlled flow of its own over the entry's link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsiveCross {
    /// The entry's index in the scenario's `cross_traffic` list; `compare` pairs entries by it.
    pub index: u32,
    /// The arrival process, `web` or `onoff`.
    pub kind: String,
    /// The link it loads.
    pub link: String,
    /// The transfers' congestion control.
    pub cc: String,
    /// Transfers begun.
    pub transfers: u64,
    /// Transfers that delivered all their bytes before the run's end.
    pub completed: u64,
    /// Payload bytes delivered, including what transfers still running at the end had
    /// delivered by then.
    pub bytes_delivered: u64,
    /// `bytes_delivered` × 8 ÷ the entry's active time (its `start` to its `stop`), b/s.
    #[serde(deserialize_with = "f64_or_null")]
    pub rate_bps: f64,
}

/// What a paper says, as a number or as text ("≥ 90 %", "stable").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PaperValue {
    /// A number, compared with `measured` by the claim's rule.
    Number(f64),
    /// A statement that is not a single number ("stable").
    Text(String),
}

impl std::fmt::Display for PaperValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PaperValue::Number(x) => write!(f, "{x}"),
            PaperValue::Text(s) => f.write_str(s),
        }
    }
}

/// One row of `reproduce`: a claim of a seed paper (or a check of the model's own prediction)
/// and whether this run bears it out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// What the paper (or the check) states, in words.
    pub claim: String,
    /// The paper's figure.
    pub paper: PaperValue,
    /// What this run measured.
    #[serde(deserialize_with = "f64_or_null")]
    pub measured: f64,
    /// Whether `measured` satisfies the rule; computed, never set by hand.
    pub holds: bool,
    /// The unit of `paper` and `measured` (`Mb/s`, `%`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Where the claim comes from (seed file and table/figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// A seed paper's claim, or a check the papers never made.
    #[serde(default)]
    pub kind: ClaimKind,
    /// The rule `holds` applies to `measured`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<Rule>,
    /// The source of error the rule's tolerance stands for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<String>,
    /// The same test on a system that lacks the claimed property.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<Control>,
}

/// A claim's control: the same experiment and rule with something that lacks the claimed
/// property in place of the system under test. A claim is evidence only if its control fails:
/// a test that any system passes says nothing of the one it is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Control {
    /// What ran in its place, as the claim names it ("reno", "BBR ×1").
    pub who: String,
    /// Why it lacks the property.
    pub why: String,
    /// What the control measured.
    #[serde(deserialize_with = "f64_or_null")]
    pub measured: f64,
    /// The control's measurement fails the claim's rule. A measurement that is not finite
    /// gives no verdict and does not fail.
    pub fails: bool,
}

impl Claim {
    /// A seed claim that holds and whose control fails: evidence of the claimed property.
    pub fn evidenced(&self) -> bool {
        self.kind == ClaimKind::Seed && self.holds && self.control.as_ref().is_some_and(|c| c.fails)
    }
}

/// Whose claim a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimKind {
    /// A figure or statement of a seed paper.
    #[default]
    Seed,
    /// The model checked against its own prediction, or a figure no paper gives; not counted
    /// among the seeds' claims.
    Check,
}

/// Accept a number, or `null` as NaN (how serde_json writes NaN and infinities).
fn f64_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A number array whose gaps (NaN, written as `null`) read back as NaN.
fn vec_f64_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    Ok(Vec::<Option<f64>>::deserialize(d)?
        .into_iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect())
}

impl Summary {
    /// Parse a summary from JSON text; `origin` names it in errors (a file name, "stdin").
    pub fn from_json(text: &str, origin: &Path) -> Result<Summary, MetricsError> {
        let summary: Summary = serde_json::from_str(text).map_err(|e| parse_error(origin, &e))?;
        Ok(summary)
    }

    /// Read a summary file. Errors name the file and, for bad JSON, the line and column.
    pub fn read(path: &Path) -> Result<Summary, MetricsError> {
        let text = std::fs::read_to_string(path).map_err(|source| MetricsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_json(&text, path)
    }

    /// Read a file holding either one summary or a JSON array of them (`reproduce` writes one per
    /// experiment).
    pub fn read_all(path: &Path) -> Result<Vec<Summary>, MetricsError> {
        let text = std::fs::read_to_string(path).map_err(|source| MetricsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        if text.trim_start().starts_with('[') {
            serde_json::from_str(&text).map_err(|e| parse_error(path, &e))
        } else {
            Ok(vec![Self::from_json(&text, path)?])
        }
    }

    /// Pretty-printed JSON with a trailing newline.
    pub fn to_json(&self) -> Result<String, MetricsError> {
        let mut s = serde_json::to_string_pretty(self).map_err(MetricsError::Encode)?;
        s.push('\n');
        Ok(s)
    }

    /// Write the JSON to `path` by the rules of `longhaul_output::write` (atomically for a file,
    /// in place for a device, FIFO or descriptor).
    pub fn write(&self, path: &Path) -> Result<(), MetricsError> {
        Ok(longhaul_output::write(path, self.to_json()?.as_bytes())?)
    }

    /// Where and why packets were dropped in this run. Flows and links describe the same drops
    /// from two sides, so this takes the flows' ledgers when any flow has one, and otherwise the
    /// links' counts by reason (located at the link).
    pub fn drop_ledger(&self) -> crate::loss::LossLedger {
        use crate::loss::LossLedger;
        let mut ledger = LossLedger::new();
        if self.flows.iter().any(|f| !f.drops.is_empty()) {
            for f in &self.flows {
                ledger.merge(&LossLedger::from_rows(&f.drops));
            }
        } else {
            for l in &self.links {
                for (reason, n) in &l.drops_by_reason {
                    ledger.record(&l.name, reason, *n);
                }
            }
        }
        ledger
    }

    /// Consistency problems a reader should know about: time-series arrays of different lengths,
    /// negative rates, fractions outside [0, 1] where they must be inside. Empty when all is well.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.duration_s.is_nan() || self.duration_s <= 0.0 {
            out.push(format!(
                "duration_s is {} (must be positive)",
                self.duration_s
            ));
        }
        for (i, f) in self.flows.iter().enumerate() {
            let at = format!("flows[{i}] (id {})", f.id);
            if f.throughput_bps < 0.0 {
                out.push(format!("{at}: negative throughput_bps"));
            }
            if !(0.0..=1.0).contains(&f.loss_rate) && !f.loss_rate.is_nan() {
                out.push(format!("{at}: loss_rate {} outside [0, 1]", f.loss_rate));
            }
            if let Some(s) = &f.series {
                let n = s.t.len();
                for (name, v) in [
                    ("throughput_bps", &s.throughput_bps),
                    ("cwnd_pkts", &s.cwnd_pkts),
                    ("rtt_ms", &s.rtt_ms),
                    ("inflight_pkts", &s.inflight_pkts),
                    ("lost_pkts", &s.lost_pkts),
                    ("retransmits", &s.retransmits),
                ] {
                    if !v.is_empty() && v.len() != n {
                        out.push(format!(
                            "{at}: series.{name} has {} entries, t has {n}",
                            v.len()
                        ));
                    }
                }
            }
        }
        for l in &self.links {
            if let Some(s) = &l.series {
                let n = s.t.len();
                for (name, v) in [
                    ("queue_bytes", &s.queue_bytes),
                    ("queue_pkts", &s.queue_pkts),
                    ("throughput_bps", &s.throughput_bps),
                ] {
                    if !v.is_empty() && v.len() != n {
                        out.push(format!(
                            "links `{}`: series.{name} has {} entries, t has {n}",
                            l.name,
                            v.len()
                        ));
                    }
                }
            }
        }
        if let Some(s) = &self.aggregate.series {
            if s.t.len() != s.throughput_bps.len() {
                out.push(format!(
                    "aggregate.series: throughput_bps has {} entries, t has {}",
                    s.throughput_bps.len(),
                    s.t.len()
                ));
            }
        }
        let ids: std::collections::BTreeSet<u32> = self.flows.iter().map(|f| f.id).collect();
        if ids.len() != self.flows.len() {
            out.push("two flows share an id".to_string());
        }
        out
    }
}

fn parse_error(origin: &Path, e: &serde_json::Error) -> MetricsError {
    // serde_json's Display appends " at line L column C"; keep the message without it.
    let full = e.to_string();
    let message = match full.rfind(" at line ") {
        Some(i) => full[..i].to_string(),
        None => full,
    };
    MetricsError::Parse {
        path: origin.to_path_buf(),
        message,
        line: e.line(),
        column: e.column(),
    }
}
