//! Emulator configuration: one `DirectionConfig` per direction, plus what both share (MTU).
//!
//! Values are typed and in base units (bits per second, nanoseconds, bytes); parsing of human
//! units (`100mbit`, `90ms`) happens in the command line. `validate` refuses settings that cannot
//! be emulated, with a message that says what to change.

use crate::model::cross::CrossConfig;
use crate::model::delay::DelayConfig;
use crate::model::loss::LossConfig;
use crate::model::port_delay::PortDelay;
use crate::model::queue::QueueLimits;
use crate::model::red::{RedConfig, RedUnit};
use crate::model::trace::Trace;
use serde::Serialize;

/// The bottleneck's capacity.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RateConfig {
    /// No rate limit (delay/loss only, like mm-delay).
    Unlimited,
    /// Constant rate in bits per second.
    Constant {
        /// Bits per second, counting each packet's IP bytes plus the direction's `overhead_bytes`.
        bps: u64,
    },
    /// A mahimahi trace; `path` is for reports.
    Trace {
        /// The trace file as named, for reports.
        path: String,
        /// The parsed trace.
        #[serde(skip)]
        trace: Trace,
    },
}

/// Everything that shapes one direction of the path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirectionConfig {
    /// The bottleneck's capacity.
    pub rate: RateConfig,
    /// Propagation delay, jitter, reordering and duplication after the bottleneck.
    pub delay: DelayConfig,
    /// Droptail limits of the bottleneck queue.
    pub queue: QueueLimits,
    /// RED on the bottleneck queue, if any.
    pub red: Option<RedConfig>,
    /// The random-loss model: corruption on the wire, after the queue and the serialiser.
    pub loss: LossConfig,
    /// Synthetic cross-traffic sources injected into the bottleneck queue.
    pub cross: Vec<CrossConfig>,
    /// Bytes the link adds to each IP packet (e.g. 38 for Ethernet preamble + header + FCS +
    /// gap), counted in its serialisation time, the queue's byte limit and RED in bytes
    /// (`longhaul_path::queue`); 0 = IP bytes only. A scenario's `overhead`.
    pub overhead_bytes: u32,
    /// Seed of the direction's random streams (loss, RED, delay, cross traffic), so a run is
    /// reproducible.
    pub seed: u64,
    /// Extra one-way delay of the flows with these ports, added after the bottleneck (per-flow
    /// RTTs on one shared bottleneck; see `model::port_delay`).
    pub port_delays: Vec<PortDelay>,
    /// The path MTU of this direction, bytes: a hop whose MTU is below the hosts' interfaces.
    /// An IP packet larger than it is dropped without a word (a PMTU "black hole", RFC 2923
    /// §2.1, the case RFC 8899's packetization-layer discovery exists for); `None`: the
    /// interfaces' MTU.
    pub path_mtu: Option<u32>,
}

impl Default for DirectionConfig {
    fn default() -> Self {
        Self {
            rate: RateConfig::Unlimited,
            delay: DelayConfig::default(),
            queue: QueueLimits::default(),
            red: None,
            loss: LossConfig::None,
            cross: Vec::new(),
            overhead_bytes: 0,
            seed: 1,
            port_delays: Vec::new(),
            path_mtu: None,
        }
    }
}

/// Both directions. "a→b" is the uplink in `shell` mode (from the command to the outside).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkConfig {
    /// The direction from a to b (the uplink in shell mode).
    pub a_to_b: DirectionConfig,
    /// The direction from b to a.
    pub b_to_a: DirectionConfig,
    /// The MTU of both TUN devices, in bytes.
    pub mtu: u32,
}

impl Default for LinkConfig {
    fn default() -> Self {
        Self {
            a_to_b: DirectionConfig::default(),
            b_to_a: DirectionConfig {
                seed: 2,
                ..DirectionConfig::default()
            },
            mtu: 1500,
        }
    }
}

/// A setting the emulator cannot honour.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{direction}: {message}")]
pub struct ConfigError {
    /// The direction the problem is in (`a→b`, `b→a` or `link`).
    pub direction: String,
    /// What is wrong and what to change.
    pub message: String,
}

/// Highest rate accepted: the scenario format's (well above what a TUN path on one host can
/// carry).
pub const MAX_RATE_BPS: u64 = longhaul_path::scenario::MAX_RATE_BPS as u64;
/// Longest one-way delay accepted.
pub const MAX_DELAY_NS: u64 = 10_000_000_000;
/// Memory the delay line and queue may hold, per direction.
pub const MAX_BUFFERED_BYTES: u64 = 4 << 30;

impl LinkConfig {
    /// Both directions with their default queue limits (`DirectionConfig::with_default_queue`).
    pub fn with_default_queues(self) -> Self {
        LinkConfig {
            a_to_b: self.a_to_b.with_default_queue(),
            b_to_a: self.b_to_a.with_default_queue(),
            mtu: self.mtu,
        }
    }

    /// Checks both directions; the first problem found is reported.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(68..=65_535).contains(&self.mtu) {
            return Err(err(
                "link",
                format!(
                    "MTU {} is outside 68..=65535 (IPv4 minimum to TUN maximum); use e.g. 1500 or 9000",
                    self.mtu
                ),
            ));
        }
        self.a_to_b.validate("a→b", self.mtu)?;
        self.b_to_a.validate("b→a", self.mtu)
    }
}

fn err(direction: &str, message: String) -> ConfigError {
    ConfigError {
        direction: direction.into(),
        message,
    }
}

fn check_probability(dir: &str, what: &str, p: f64, allow_one: bool) -> Result<(), ConfigError> {
    let ok = p.is_finite() && p >= 0.0 && (p < 1.0 || (allow_one && p <= 1.0));
    if ok {
        Ok(())
    } else {
        let range = if allow_one { "[0, 1]" } else { "[0, 1)" };
        Err(err(
            dir,
            format!("{what} = {p} is not a probability in {range}"),
        ))
    }
}

/// The queue of a rated direction given no limit: 1000 packets, Linux's default
/// `txqueuelen`, which is also what `tc qdisc add … pfifo` takes without `limit` and the
/// simulator's default queue (docs/scenario.md), so a path means the same thing in both. A
/// bandwidth-delay-product default would need the round trip, which the emulator does not
/// know (the hosts add their own delays); 1000 packets is 12 ms at 1 Gb/s and 1.2 s at 10 Mb/s.
pub const DEFAULT_QUEUE_PACKETS: u64 = 1000;

/// RED's hard limit given no queue limit, in multiples of its max threshold: tc-red(8)
/// recommends a limit "a few times greater than max".
pub const DEFAULT_RED_LIMIT_OVER_MAX: u64 = 4;

impl DirectionConfig {
    /// This direction with the default queue limit if it has a rate and no limit of its own
    /// ([`DEFAULT_QUEUE_PACKETS`], or for RED [`DEFAULT_RED_LIMIT_OVER_MAX`] × its max
    /// threshold, in RED's unit). An unrated direction forms no queue and keeps none.
    pub fn with_default_queue(mut self) -> Self {
        let limited = self.queue.packets.is_some() || self.queue.bytes.is_some();
        if limited || self.rate == RateConfig::Unlimited {
            return self;
        }
        match &self.red {
            Some(red) => {
                let limit = (red.max.ceil() as u64).saturating_mul(DEFAULT_RED_LIMIT_OVER_MAX);
                match red.unit {
                    RedUnit::Packets => self.queue.packets = Some(limit),
                    RedUnit::Bytes => self.queue.bytes = Some(limit),
                }
            }
            None => self.queue.packets = Some(DEFAULT_QUEUE_PACKETS),
        }
        self
    }

    /// Mean capacity in bits per second (None when unlimited).
    pub fn capacity_bps(&self) -> Option<f64> {
        match &self.rate {
            RateConfig::Unlimited => None,
            RateConfig::Constant { bps } => Some(*bps as f64),
            RateConfig::Trace { trace, .. } => Some(trace.mean_rate_bps()),
        }
    }

    /// Checks this direction for a link of `mtu` bytes against the emulator's limits (rate, delay,
    /// probabilities, loss model); `dir` names the direction in the error.
    pub fn validate(&self, dir: &str, mtu: u32) -> Result<(), ConfigError> {
        if let RateConfig::Constant { bps } = self.rate {
            if bps == 0 || bps > MAX_RATE_BPS {
                return Err(err(
                    dir,
                    format!("rate {bps} b/s is outside 1 b/s ..= 400 Gb/s"),
                ));
            }
            // A packet must serialise in well under the delay line's horizon.
            if (mtu as u64 * 8).saturating_mul(1_000_000_000) / bps > MAX_DELAY_NS {
                return Err(err(
                    dir,
                    format!("rate {bps} b/s needs more than 10 s to send one {mtu}-byte packet"),
                ));
            }
        }
        if self.overhead_bytes > mtu {
            return Err(err(
                dir,
                format!(
                    "overhead of {} bytes per packet exceeds the MTU ({mtu} bytes); Ethernet adds 38",
                    self.overhead_bytes
                ),
            ));
        }
        if let Some(p) = self.path_mtu {
            if !(68..=mtu).contains(&p) {
                return Err(err(
                    dir,
                    format!(
                        "path MTU {p} is outside 68..={mtu} (IPv4's minimum to the interfaces' MTU)"
                    ),
                ));
            }
        }
        if self.delay.delay_ns > MAX_DELAY_NS {
            return Err(err(
                dir,
                format!(
                    "one-way delay {} ms exceeds the 10 s maximum",
                    self.delay.delay_ns / 1_000_000
                ),
            ));
        }
        for d in &self.port_delays {
            if d.extra_ns > MAX_DELAY_NS {
                return Err(err(
                    dir,
                    format!(
                        "extra delay {} ms of port {} exceeds the 10 s maximum",
                        d.extra_ns / 1_000_000,
                        d.port
                    ),
                ));
            }
        }
        self.delay
            .check()
            .map_err(|(what, message)| err(dir, format!("{what}: {message}")))?;
        self.loss
            .check()
            .map_err(|e| err(dir, format!("loss {}: {}", e.field, e.message)))?;
        if let Some(p) = self.queue.packets {
            if p == 0 {
                return Err(err(
                    dir,
                    "a queue of 0 packets drops everything; use at least 1".into(),
                ));
            }
        }
        if let Some(b) = self.queue.bytes {
            if b < mtu as u64 {
                return Err(err(
                    dir,
                    format!("a queue of {b} bytes cannot hold one {mtu}-byte packet; use ≥ {mtu}"),
                ));
            }
            if b > MAX_BUFFERED_BYTES {
                return Err(err(
                    dir,
                    format!("queue of {b} bytes exceeds the 4 GiB buffer limit"),
                ));
            }
        }
        if let Some(red) = &self.red {
            if !(red.min >= 0.0 && red.min < red.max && red.max.is_finite()) {
                return Err(err(
                    dir,
                    format!(
                        "RED min threshold {} must be at least 0 and below max threshold {}",
                        red.min, red.max
                    ),
                ));
            }
            check_probability(dir, "RED max_p", red.max_p, true)?;
            if !(red.weight > 0.0 && red.weight <= 1.0) {
                return Err(err(
                    dir,
                    format!("RED weight {} must be in (0, 1]", red.weight),
                ));
            }
            let (limit, unit) = match red.unit {
                RedUnit::Packets => (self.queue.packets, "packets"),
                RedUnit::Bytes => (self.queue.bytes, "bytes"),
            };
            if let Some(l) = limit {
                if red.max > l as f64 {
                    return Err(err(
                        dir,
                        format!(
                            "RED max threshold {} exceeds the queue limit {l} {unit}",
                            red.max
                        ),
                    ));
                }
            }
            if self.rate == RateConfig::Unlimited {
                return Err(err(
                    dir,
                    "RED needs a rate: without a bottleneck no queue ever forms".into(),
                ));
            }
        }
        if (self.queue.packets.is_some() || self.queue.bytes.is_some())
            && self.rate == RateConfig::Unlimited
        {
            return Err(err(
                dir,
                "a queue limit needs a rate (--rate or --trace): without a bottleneck no queue forms"
                    .into(),
            ));
        }
        for c in &self.cross {
            if let Some(problem) = c.problem(mtu) {
                return Err(err(dir, problem));
            }
            if self.rate == RateConfig::Unlimited {
                return Err(err(
                    dir,
                    "cross traffic needs a rate: it competes for the bottleneck".into(),
                ));
            }
        }
        // Memory: packets in flight in the delay line at full rate, plus the queue.
        if let Some(cap) = self.capacity_bps() {
            let in_flight = cap / 8.0 * (self.delay.delay_ns as f64 / 1e9);
            if in_flight > MAX_BUFFERED_BYTES as f64 {
                return Err(err(
                    dir,
                    format!(
                        "rate × delay = {:.1} GB in flight exceeds the 4 GiB buffer limit",
                        in_flight / 1e9
                    ),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        LinkConfig::default().validate().unwrap();
    }

    #[test]
    fn a_rated_direction_without_a_limit_gets_the_default_queue() {
        let mut link = LinkConfig::default();
        link.a_to_b.rate = RateConfig::Constant { bps: 100_000_000 };
        link.b_to_a.rate = RateConfig::Constant { bps: 100_000_000 };
        link.b_to_a.red = Some(RedConfig::bytes(300_000, 900_000, 0.1, 0.002, false));
        let o = crate::emulator::Options::new(link.clone());
        assert_eq!(o.link.a_to_b.queue.packets, Some(1000));
        assert_eq!(o.link.a_to_b.queue.bytes, None);
        assert_eq!(o.link.b_to_a.queue.bytes, Some(3_600_000), "4 × RED's max");
        assert_eq!(o.link.b_to_a.queue.packets, None);
        o.link.validate().unwrap();
        // RED in packets: 4 × its max in packets.
        let mut d = link.b_to_a.clone();
        d.red = Some(RedConfig {
            unit: RedUnit::Packets,
            ..RedConfig::bytes(50, 150, 0.1, 0.002, true)
        });
        let d = d.with_default_queue();
        assert_eq!((d.queue.packets, d.queue.bytes), (Some(600), None));

        // A limit of its own is kept; an unrated direction keeps none (no queue forms).
        link.a_to_b.queue.bytes = Some(2 << 20);
        let d = link.a_to_b.with_default_queue();
        assert_eq!((d.queue.packets, d.queue.bytes), (None, Some(2 << 20)));
        let d = DirectionConfig::default().with_default_queue();
        assert_eq!((d.queue.packets, d.queue.bytes), (None, None));
    }

    #[test]
    fn refuses_impossible_settings() {
        let c = LinkConfig {
            mtu: 70_000,
            ..Default::default()
        };
        assert!(c.validate().unwrap_err().message.contains("MTU"));

        let mut c = LinkConfig::default();
        c.a_to_b.loss = LossConfig::Bernoulli { p: 1.5 };
        let e = c.validate().unwrap_err();
        assert_eq!(e.direction, "a→b");
        assert!(e.message.contains("probability"));

        let mut c = LinkConfig::default();
        c.b_to_a.rate = RateConfig::Constant { bps: 1_000_000 };
        c.b_to_a.queue.bytes = Some(1000);
        assert!(c.validate().unwrap_err().message.contains("cannot hold"));

        let mut c = LinkConfig::default();
        c.b_to_a.path_mtu = Some(1501);
        let e = c.validate().unwrap_err();
        assert_eq!(e.direction, "b→a");
        assert!(
            e.message.contains("path MTU 1501 is outside 68..=1500"),
            "{e}"
        );
        c.b_to_a.path_mtu = Some(1400);
        c.validate().unwrap();

        let mut c = LinkConfig::default();
        c.a_to_b.queue.packets = Some(100);
        assert!(c.validate().unwrap_err().message.contains("needs a rate"));

        let mut c = LinkConfig::default();
        c.b_to_a.overhead_bytes = 1501;
        let e = c.validate().unwrap_err();
        assert!(e.message.contains("overhead of 1501 bytes"), "{e}");
        c.b_to_a.overhead_bytes = 38;
        c.validate().unwrap();

        // RED's thresholds are checked against the limit in its own unit.
        let mut c = LinkConfig::default();
        c.a_to_b.rate = RateConfig::Constant { bps: 1_000_000 };
        c.a_to_b.queue.packets = Some(100);
        c.a_to_b.red = Some(RedConfig {
            unit: RedUnit::Packets,
            ..RedConfig::bytes(50, 150, 0.1, 0.002, true)
        });
        let e = c.validate().unwrap_err();
        assert!(
            e.message
                .contains("max threshold 150 exceeds the queue limit 100 packets"),
            "{e}"
        );
        c.a_to_b.red.as_mut().unwrap().max = 100.0;
        c.validate().unwrap();

        let mut c = LinkConfig::default();
        c.a_to_b.rate = RateConfig::Constant {
            bps: 100_000_000_000,
        };
        c.a_to_b.delay.delay_ns = 1_000_000_000;
        assert!(c.validate().unwrap_err().message.contains("in flight"));
    }
}
