//! One direction's settings as text (from a `[link]` table or a flag), and their parsing onto a
//! [`DirectionConfig`].

use super::values::{floats, parse_cross, parse_probability, Result};
use super::SettingsError;
use crate::config::{DirectionConfig, RateConfig};
use crate::model::loss::LossConfig;
use crate::model::red::RedConfig;
use crate::model::trace::Trace;
use longhaul_path::units;
use std::path::Path;

/// Unparsed settings of one direction, from the file and/or flags.
#[derive(Default, Clone, Debug, PartialEq)]
pub struct RawDirection {
    /// Bottleneck rate (`1gbit`); a bare number is bit/s.
    pub rate: Option<String>,
    /// A mahimahi trace file; takes precedence over `rate`.
    pub trace: Option<String>,
    /// One-way delay (`90ms`); a bare number is seconds.
    pub delay: Option<String>,
    /// Droptail limit in packets (`1000`, or `1000p`).
    pub queue_packets: Option<String>,
    /// Droptail limit in bytes (`4M`).
    pub queue_bytes: Option<String>,
    /// RED as `min,max[,max_p[,weight]]`, thresholds in bytes (defaults: max_p 0.1, weight 0.002).
    pub red: Option<String>,
    /// Bernoulli loss probability (`1%` or `0.01`); 0 turns loss off. Excludes `gilbert`.
    pub loss: Option<String>,
    /// Gilbert–Elliott loss as `p,r[,loss_bad[,loss_good]]` (defaults: loss_bad 1, loss_good 0).
    /// Excludes `loss`.
    pub gilbert: Option<String>,
    /// Standard deviation of the delay's jitter (`2ms`).
    pub jitter: Option<String>,
    /// Reordering probability; the shift defaults to 1 ms.
    pub reorder: Option<String>,
    /// How far forward a reordered packet is released (`1ms`).
    pub reorder_by: Option<String>,
    /// Duplication probability.
    pub duplicate: Option<String>,
    /// Bytes added to each packet for serialisation time (`38` for Ethernet framing).
    pub overhead: Option<String>,
    /// The path MTU, bytes: larger IP packets are dropped (`1400`).
    pub path_mtu: Option<String>,
    /// Cross-traffic specs, `KIND,rate=R[,size=B][,on=D,off=D]`
    /// ([`parse_cross`]).
    pub cross: Vec<String>,
}

/// `what` of `dir`, as errors name a value.
fn at(dir: &str, what: &str) -> impl Fn(String) -> SettingsError {
    let prefix = format!("{dir}: {what}");
    move |e| SettingsError(format!("{prefix}: {e}"))
}

fn duration_ns(s: &str, dir: &str, what: &str) -> Result<u64> {
    units::parse_duration(s).map(|n| n.0).map_err(at(dir, what))
}

fn size(s: &str, dir: &str, what: &str) -> Result<u64> {
    units::parse_size(s).map(|b| b.0).map_err(at(dir, what))
}

impl RawDirection {
    /// The slot of a key given as one value per direction: every key of
    /// [`super::PER_DIRECTION`] and `trace`; `None` for any other.
    pub fn value_mut(&mut self, key: &str) -> Option<&mut Option<String>> {
        Some(match key {
            "rate" => &mut self.rate,
            "trace" => &mut self.trace,
            "delay" => &mut self.delay,
            "queue_packets" => &mut self.queue_packets,
            "queue_bytes" => &mut self.queue_bytes,
            "red" => &mut self.red,
            "loss" => &mut self.loss,
            "gilbert" => &mut self.gilbert,
            "jitter" => &mut self.jitter,
            "reorder" => &mut self.reorder,
            "reorder_by" => &mut self.reorder_by,
            "duplicate" => &mut self.duplicate,
            "overhead" => &mut self.overhead,
            "path_mtu" => &mut self.path_mtu,
            _ => return None,
        })
    }

    /// `base` (from a simulator scenario, or the defaults) with these settings applied; `dir`
    /// names the direction in errors.
    pub fn build(&self, dir: &str, base: DirectionConfig) -> Result<DirectionConfig> {
        let mut c = base;
        c.rate = match (&self.trace, &self.rate) {
            (Some(t), _) => RateConfig::Trace {
                path: t.clone(),
                trace: Trace::from_file(Path::new(t))
                    .map_err(|e| SettingsError(format!("{dir}: trace: {e}")))?,
            },
            (None, Some(r)) => {
                let bps = units::parse_rate(r).map_err(at(dir, "rate"))?.0;
                RateConfig::Constant {
                    bps: bps.round() as u64,
                }
            }
            (None, None) => c.rate,
        };
        if let Some(d) = &self.delay {
            c.delay.delay_ns = duration_ns(d, dir, "delay")?;
        }
        if let Some(j) = &self.jitter {
            c.delay.jitter_ns = duration_ns(j, dir, "jitter")?;
        }
        if let Some(p) = &self.reorder {
            c.delay.reorder_p =
                parse_probability(p).map_err(|e| e.context(&format!("{dir}: reorder")))?;
            c.delay.reorder_by_ns = 1_000_000;
        }
        if let Some(d) = &self.reorder_by {
            c.delay.reorder_by_ns = duration_ns(d, dir, "reorder-by")?;
        }
        if let Some(p) = &self.duplicate {
            c.delay.duplicate_p =
                parse_probability(p).map_err(|e| e.context(&format!("{dir}: duplicate")))?;
        }
        if let Some(q) = &self.queue_packets {
            let n: u32 = q.trim().trim_end_matches('p').parse().map_err(|_| {
                SettingsError(format!("{dir}: queue-packets `{q}` is not a packet count"))
            })?;
            c.queue.packets = Some(n.into());
        }
        if let Some(q) = &self.queue_bytes {
            c.queue.bytes = Some(size(q, dir, "queue-bytes")?);
        }
        if let Some(r) = &self.red {
            let v = floats(r, "red", 2, 4)?;
            // The shorthand's RED is `tc red`'s: in bytes, dropping, and every arrival above
            // `max` is dropped (not gentle).
            c.red = Some(RedConfig::bytes(
                size(&v[0], dir, "red min")?,
                size(&v[1], dir, "red max")?,
                v.get(2)
                    .map(|s| parse_probability(s))
                    .transpose()?
                    .unwrap_or(0.1),
                v.get(3)
                    .map(|s| {
                        s.parse::<f64>().map_err(|_| {
                            SettingsError(format!("{dir}: red weight `{s}` is not a number"))
                        })
                    })
                    .transpose()?
                    .unwrap_or(0.002),
                false,
            ));
        }
        match (&self.loss, &self.gilbert) {
            (Some(_), Some(_)) => {
                return Err(SettingsError(format!(
                    "{dir}: give either --loss or --gilbert, not both"
                )))
            }
            (Some(l), None) => {
                let p = parse_probability(l).map_err(|e| e.context(&format!("{dir}: loss")))?;
                c.loss = if p > 0.0 {
                    LossConfig::Bernoulli { p }
                } else {
                    LossConfig::None
                };
            }
            (None, Some(g)) => {
                let v = floats(g, "gilbert", 2, 4)?;
                let pr = |i: usize, d: f64| -> Result<f64> {
                    v.get(i).map(|s| parse_probability(s)).unwrap_or(Ok(d))
                };
                c.loss = LossConfig::GilbertElliott {
                    p: pr(0, 0.0)?,
                    r: pr(1, 0.0)?,
                    loss_bad: pr(2, 1.0)?,
                    loss_good: pr(3, 0.0)?,
                };
            }
            (None, None) => {}
        }
        if let Some(o) = &self.overhead {
            let bytes = size(o, dir, "overhead")?;
            c.overhead_bytes = u32::try_from(bytes).map_err(|_| {
                SettingsError(format!("{dir}: overhead {bytes} is not a packet's framing"))
            })?;
        }
        if let Some(m) = &self.path_mtu {
            let bytes = size(m, dir, "path-mtu")?;
            c.path_mtu =
                Some(u32::try_from(bytes).map_err(|_| {
                    SettingsError(format!("{dir}: path-mtu {bytes} is not an MTU"))
                })?);
        }
        for spec in &self.cross {
            c.cross
                .push(parse_cross(spec).map_err(|e| e.context(&format!("{dir}: cross")))?);
        }
        Ok(c)
    }
}
