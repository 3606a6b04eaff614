//! Unresponsive cross traffic: packet generators that offer load to one link and do not back
//! off, as clock-free state machines. The simulator drives a [`CrossSource`] from its event
//! queue in virtual time; the emulator reads [`CrossArrivals`] (the same source, packet by
//! packet) against its real-time clock and injects each packet into its bottleneck queue.
//! Responsive cross traffic is carried by congestion-controlled flows, which each engine runs
//! itself (the simulator's transfers, the lab's kernel TCP connections); the source draws their
//! schedule ([`CrossSource::responsive_transfer`], [`CrossSource::responsive_transfers`]), so
//! both engines run the same transfers at the same times for the same seed.
//!
//! Each kind has the configured *average* offered rate `r` with packets of `s` bytes:
//! * **cbr** — one packet every `8s/r` seconds exactly (times are computed from the packet count,
//!   not accumulated, so rounding never drifts).
//! * **poisson** — exponential gaps of mean `8s/r`: the M/·/1 arrival process.
//! * **onoff** — exponential on and off periods of means `on` and `off`, starting with an on
//!   period; during "on" a CBR stream at peak `r·(on+off)/on` from the period's start, so the
//!   long-run average is `r` (the ns-2/ns-3 `OnOffApplication` model with exponential periods;
//!   ns-2's `Application/Traffic/Exponential` gives the on-period rate as `rate` instead). Each
//!   on period sends ⌈length/gap⌉ packets, half a packet more than its share on average.
//! * **web** — transfers arrive as a Poisson process of rate `r / (8·mean_size)`; sizes are
//!   Pareto with shape `α` (default 1.2, the heavy tail of web object sizes found by Crovella &
//!   Bestavros, "Self-similarity in World Wide Web traffic", ToN 1997) and scale
//!   `mean·(α−1)/α`, so their mean is `mean_size` (default 100 KiB), rounded up to whole packets.
//!   Pending transfers are sent back to back at the link's own rate, as from a host on an access
//!   link of that rate.
//!
//! Each source draws from its own seeded random stream (a PCG64 MCG), so adding a source does
//! not change the others' packets, and the draw order is part of the simulator's reproducible
//! results: changing it changes `reproduce-expected.json`.

use crate::scenario::{CheckedCross, CrossKind, CrossSpec};
use rand::Rng;
use rand_distr::{Distribution, Exp, Pareto};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

/// Web transfers' mean size when a scenario gives none, bytes.
pub const DEFAULT_WEB_MEAN_BYTES: u64 = 100 * 1024;
/// Web transfers' Pareto shape when a scenario gives none.
pub const DEFAULT_WEB_SHAPE: f64 = 1.2;

/// An arrival process and its parameters; for each, the configured rate is the average load.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "process", rename_all = "snake_case")]
pub enum CrossProcess {
    /// Constant bit rate: one packet every `8·size/rate` seconds.
    Cbr,
    /// Exponential inter-arrival times with the CBR gap as their mean.
    Poisson,
    /// CBR at `rate·(on+off)/on` during ON periods, silent during OFF periods, both of
    /// exponentially distributed length.
    OnOff {
        /// Mean length of an ON period, in ns.
        mean_on_ns: u64,
        /// Mean length of an OFF period, in ns.
        mean_off_ns: u64,
    },
    /// Poisson arrivals of Pareto-sized transfers, each sent at the link's rate.
    Web {
        /// Mean transfer size, bytes.
        mean_bytes: u64,
        /// Pareto shape (> 1 for a finite mean).
        shape: f64,
    },
}

impl CrossProcess {
    /// The scenario file's name for this kind.
    pub fn kind(&self) -> CrossKind {
        match self {
            CrossProcess::Cbr => CrossKind::Cbr,
            CrossProcess::Poisson => CrossKind::Poisson,
            CrossProcess::OnOff { .. } => CrossKind::Onoff,
            CrossProcess::Web { .. } => CrossKind::Web,
        }
    }
}

/// One cross-traffic source as both engines configure it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CrossConfig {
    /// The arrival process.
    pub kind: CrossProcess,
    /// Average offered load, bits per second (on/off sends faster while ON: see
    /// [`CrossConfig::peak_rate_bps`]).
    pub rate_bps: f64,
    /// Packet size in bytes.
    pub packet_bytes: u32,
    /// When it starts, ns after the engine's epoch.
    #[serde(default)]
    pub start_ns: u64,
    /// When it stops, ns after the engine's epoch (`u64::MAX`: never).
    #[serde(default = "never")]
    pub stop_ns: u64,
}

fn never() -> u64 {
    u64::MAX
}

impl CrossConfig {
    /// A source running from the epoch on.
    pub fn new(kind: CrossProcess, rate_bps: f64, packet_bytes: u32) -> CrossConfig {
        CrossConfig {
            kind,
            rate_bps,
            packet_bytes,
            start_ns: 0,
            stop_ns: u64::MAX,
        }
    }

    /// A scenario's `[[cross_traffic]]` entry and its checked form (packet size, start, stop).
    pub fn from_scenario(spec: &CrossSpec, checked: &CheckedCross) -> CrossConfig {
        let kind = match spec.kind {
            CrossKind::Cbr => CrossProcess::Cbr,
            CrossKind::Poisson => CrossProcess::Poisson,
            CrossKind::Onoff => CrossProcess::OnOff {
                mean_on_ns: spec.on.map_or(0, |d| d.0),
                mean_off_ns: spec.off.map_or(0, |d| d.0),
            },
            CrossKind::Web => CrossProcess::Web {
                mean_bytes: spec.size.map_or(DEFAULT_WEB_MEAN_BYTES, |b| b.0),
                shape: spec.shape.unwrap_or(DEFAULT_WEB_SHAPE),
            },
        };
        CrossConfig {
            kind,
            rate_bps: spec.rate.0,
            packet_bytes: checked.packet_size,
            start_ns: checked.start,
            stop_ns: checked.stop,
        }
    }

    /// Mean offered load in bits per second.
    pub fn mean_load_bps(&self) -> f64 {
        self.rate_bps
    }

    /// The rate while sending: the average for cbr and poisson, `rate·(on+off)/on` during an
    /// on/off source's ON periods; web sends at the link's rate, given by the engine.
    pub fn peak_rate_bps(&self) -> f64 {
        match self.kind {
            CrossProcess::OnOff {
                mean_on_ns,
                mean_off_ns,
            } => self.rate_bps * (mean_on_ns + mean_off_ns) as f64 / mean_on_ns.max(1) as f64,
            _ => self.rate_bps,
        }
    }

    /// What is wrong with it, if anything: a rate, a packet size within `20..=mtu`, a positive
    /// mean on period, a web mean of at least a packet and a shape above 1.
    pub fn problem(&self, mtu: u32) -> Option<String> {
        if !(self.rate_bps.is_finite() && self.rate_bps > 0.0) {
            return Some("cross traffic rate must be positive".into());
        }
        if self.packet_bytes < 20 || self.packet_bytes > mtu {
            return Some(format!(
                "cross traffic packet size {} must be within 20..={mtu} (the MTU)",
                self.packet_bytes
            ));
        }
        if self.start_ns >= self.stop_ns {
            return Some("cross traffic must start before it stops".into());
        }
        match self.kind {
            CrossProcess::OnOff { mean_on_ns: 0, .. } => {
                Some("on/off cross traffic needs a positive mean on time".into())
            }
            CrossProcess::Web { mean_bytes, shape } => {
                if !(shape.is_finite() && shape > 1.0) {
                    Some(format!("web cross traffic's shape {shape} must exceed 1"))
                } else if mean_bytes < self.packet_bytes as u64 {
                    Some(format!(
                        "web cross traffic's mean size {mean_bytes} B is below its packet size {}",
                        self.packet_bytes
                    ))
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

/// One unresponsive cross-traffic source: its arrival process and its random stream.
#[derive(Debug)]
pub struct CrossSource {
    /// The arrival process.
    pub kind: CrossKind,
    /// Bytes per packet.
    pub packet_size: u32,
    /// When it starts, ns.
    pub start: u64,
    /// When it stops, ns.
    pub stop: u64,
    /// Mean gap between packets at the average rate (cbr, poisson), ns.
    gap_ns: f64,
    /// Packet gap at peak rate (onoff) or at the link rate (web), ns.
    peak_gap_ns: f64,
    on_mean_ns: f64,
    off_mean_ns: f64,
    transfer_rate_per_ns: f64,
    pareto: Option<Pareto<f64>>,
    rng: Pcg64Mcg,
    /// CBR: packets emitted so far.
    count: u64,
    /// On/off: end of the current on period; web: next transfer arrival.
    phase_end: u64,
    on: bool,
    /// Web: bytes of arrived transfers not yet sent.
    backlog: u64,
    next_emit: u64,
    /// Packets emitted (unresponsive sources only).
    pub packets: u64,
    /// Bytes emitted (unresponsive sources only).
    pub bytes: u64,
    /// Transfers begun (web arrivals, or responsive transfers started).
    pub transfers: u64,
}

fn exp_sample(rng: &mut Pcg64Mcg, mean: f64) -> f64 {
    if mean <= 0.0 {
        return 0.0;
    }
    Exp::new(1.0 / mean).map(|d| d.sample(rng)).unwrap_or(mean)
}

impl CrossSource {
    /// A source for `cfg` whose times are `epoch` + the configured start and stop.
    /// `link_rate_bps` is the serving link's rate (web transfers are sent at it).
    pub fn new(cfg: &CrossConfig, epoch: u64, link_rate_bps: f64, seed: u64) -> CrossSource {
        let start = epoch.saturating_add(cfg.start_ns);
        let stop = epoch.saturating_add(cfg.stop_ns);
        let packet_size = cfg.packet_bytes;
        let rate_bps = cfg.rate_bps;
        let (on_ns, off_ns) = match cfg.kind {
            CrossProcess::OnOff {
                mean_on_ns,
                mean_off_ns,
            } => (mean_on_ns, mean_off_ns),
            _ => (0, 0),
        };
        // The arithmetic below is the simulator's since its first release: reproduced results
        // depend on every rounding.
        let gap_ns = packet_size as f64 * 8e9 / rate_bps;
        let (peak_gap_ns, pareto, transfer_rate_per_ns) = match cfg.kind {
            CrossProcess::OnOff { .. } => {
                let duty = on_ns as f64 / (on_ns + off_ns) as f64;
                (gap_ns * duty, None, 0.0)
            }
            CrossProcess::Web { mean_bytes, shape } => {
                let scale = mean_bytes as f64 * (shape - 1.0) / shape;
                (
                    packet_size as f64 * 8e9 / link_rate_bps,
                    Pareto::new(scale, shape).ok(),
                    rate_bps / (8.0 * mean_bytes as f64) / 1e9,
                )
            }
            _ => (gap_ns, None, 0.0),
        };
        let kind = cfg.kind.kind();
        let mut s = CrossSource {
            kind,
            packet_size,
            start,
            stop,
            gap_ns,
            peak_gap_ns,
            on_mean_ns: on_ns as f64,
            off_mean_ns: off_ns as f64,
            transfer_rate_per_ns,
            pareto,
            rng: Pcg64Mcg::new(seed as u128 | 1 << 100),
            count: 0,
            phase_end: start,
            on: false,
            backlog: 0,
            next_emit: start,
            packets: 0,
            bytes: 0,
            transfers: 0,
        };
        if kind == CrossKind::Web {
            s.phase_end = start + exp_sample(&mut s.rng, 1.0 / s.transfer_rate_per_ns) as u64;
            s.next_emit = u64::MAX;
        }
        s
    }

    /// The time of the first event.
    pub fn first_event(&self) -> u64 {
        self.start
    }

    /// Draw a web transfer size (bytes) — also used by responsive web traffic.
    pub fn transfer_size(&mut self) -> u64 {
        match &self.pareto {
            Some(p) => (p.sample(&mut self.rng).min(1e12) as u64).max(1),
            None => self.packet_size as u64,
        }
    }

    /// Advance the source at `now` (the time its last requested event fired). Returns whether
    /// a packet is emitted now, and when to call again (`None`: the source is done). Events
    /// that emit nothing are period boundaries (onoff) and transfer arrivals (web).
    pub fn fire(&mut self, now: u64) -> (bool, Option<u64>) {
        if now >= self.stop {
            return (false, None);
        }
        let size = self.packet_size as u64;
        let (emit, next) = match self.kind {
            CrossKind::Cbr => {
                self.count += 1;
                let next = self.start + (self.count as f64 * self.gap_ns).round() as u64;
                (true, next)
            }
            CrossKind::Poisson => {
                let emit = now > self.start || self.count > 0;
                self.count += 1;
                let gap = exp_sample(&mut self.rng, self.gap_ns).max(1.0) as u64;
                (emit, now + gap)
            }
            CrossKind::Onoff => {
                if now >= self.phase_end {
                    // Period boundary: toggle (the first call starts an off period's end = on).
                    self.on = !self.on;
                    let mean = if self.on {
                        self.on_mean_ns
                    } else {
                        self.off_mean_ns
                    };
                    self.phase_end = now + exp_sample(&mut self.rng, mean).max(1.0) as u64;
                    self.next_emit = now;
                }
                if self.on && now >= self.next_emit {
                    self.count += 1;
                    self.next_emit = now + self.peak_gap_ns.round().max(1.0) as u64;
                    (true, self.next_emit.min(self.phase_end))
                } else if self.on {
                    (false, self.next_emit.min(self.phase_end))
                } else {
                    (false, self.phase_end)
                }
            }
            CrossKind::Web => {
                let mut emit = false;
                if now >= self.phase_end {
                    let s = self.transfer_size();
                    self.transfers += 1;
                    self.backlog += s.div_ceil(size) * size;
                    let gap = exp_sample(&mut self.rng, 1.0 / self.transfer_rate_per_ns).max(1.0);
                    self.phase_end = now + gap as u64;
                    if self.next_emit == u64::MAX {
                        self.next_emit = now;
                    }
                }
                if self.backlog > 0 && now >= self.next_emit {
                    emit = true;
                    self.backlog -= size;
                    self.next_emit = if self.backlog > 0 {
                        now + self.peak_gap_ns.round().max(1.0) as u64
                    } else {
                        u64::MAX
                    };
                }
                (emit, self.next_emit.min(self.phase_end))
            }
        };
        if emit {
            self.packets += 1;
            self.bytes += size;
        }
        (emit, (next < self.stop).then_some(next))
    }

    /// A uniform draw from this source's stream (for responsive transfer sizes).
    pub fn uniform(&mut self) -> f64 {
        self.rng.gen()
    }

    /// Responsive web: the next transfer's arrival gap, ns.
    pub fn next_transfer_gap(&mut self) -> u64 {
        exp_sample(&mut self.rng, 1.0 / self.transfer_rate_per_ns).max(1.0) as u64
    }

    /// Responsive onoff: an on period's length and the following off period's, ns.
    pub fn on_off_periods(&mut self) -> (u64, u64) {
        let on = exp_sample(&mut self.rng, self.on_mean_ns).max(1.0) as u64;
        let off = exp_sample(&mut self.rng, self.off_mean_ns) as u64;
        (on, off)
    }

    /// Responsive traffic: the transfer that begins at `now` and when the next one begins, ns
    /// (counted in [`transfers`](Self::transfers)). A web transfer has a Pareto size and the
    /// next arrives after an exponential gap; an on period of an on/off source carries what
    /// the peak rate sends in it (at least one byte), and the next begins after it and the
    /// off period that follows. The first transfer begins at the source's start.
    pub fn responsive_transfer(&mut self, now: u64) -> Transfer {
        let (bytes, next_ns) = match self.kind {
            CrossKind::Onoff => {
                let (on, off) = self.on_off_periods();
                let bytes = (self.peak_rate_bps() * on as f64 * 1e-9 / 8.0) as u64;
                (bytes.max(1), now + on + off)
            }
            _ => (self.transfer_size(), now + self.next_transfer_gap()),
        };
        self.transfers += 1;
        Transfer {
            at_ns: now,
            bytes,
            next_ns,
        }
    }

    /// Responsive traffic's transfers from the source's start until its stop, in order.
    pub fn responsive_transfers(self) -> ResponsiveTransfers {
        ResponsiveTransfers {
            next: Some(self.first_event()),
            src: self,
        }
    }

    /// Peak rate of on periods (onoff), bit/s.
    pub fn peak_rate_bps(&self) -> f64 {
        self.packet_size as f64 * 8e9 / self.peak_gap_ns
    }

    /// The source as a sequence of packet arrivals.
    pub fn arrivals(self) -> CrossArrivals {
        CrossArrivals::new(self)
    }
}

/// One responsive transfer, as [`CrossSource::responsive_transfer`] draws it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    /// When it begins, ns (from the source's epoch).
    pub at_ns: u64,
    /// Payload bytes it carries.
    pub bytes: u64,
    /// When the next transfer begins, ns.
    pub next_ns: u64,
}

/// A responsive source's transfers in order, those that begin before its stop: the schedule
/// the simulator's events follow, for an engine that runs it against its own clock (the lab).
#[derive(Debug)]
pub struct ResponsiveTransfers {
    src: CrossSource,
    next: Option<u64>,
}

impl Iterator for ResponsiveTransfers {
    type Item = Transfer;

    fn next(&mut self) -> Option<Transfer> {
        let now = self.next.filter(|&t| t < self.src.stop)?;
        let t = self.src.responsive_transfer(now);
        self.next = Some(t.next_ns);
        Some(t)
    }
}

/// A source's packets one by one, for an engine that has no event queue of its own (the
/// emulator): [`peek`](Self::peek) gives the next packet's time, [`advance`](Self::advance)
/// consumes it. The source's events that emit nothing are run through on the way, so the
/// packets are exactly those the simulator's event loop would emit.
#[derive(Debug)]
pub struct CrossArrivals {
    src: CrossSource,
    /// The source's next event.
    event: Option<u64>,
    /// The next packet's time.
    next: Option<u64>,
}

impl CrossArrivals {
    /// The packets of `src`, from its first event on.
    pub fn new(src: CrossSource) -> CrossArrivals {
        let mut a = CrossArrivals {
            event: Some(src.first_event()),
            next: None,
            src,
        };
        a.advance();
        a
    }

    /// When the next packet arrives, ns (`u64::MAX`: never).
    pub fn peek(&self) -> u64 {
        self.next.unwrap_or(u64::MAX)
    }

    /// Consumes the next packet and finds the one after it.
    pub fn advance(&mut self) {
        self.next = loop {
            let Some(t) = self.event else { break None };
            let (emit, next) = self.src.fire(t);
            self.event = next;
            if emit {
                break Some(t);
            }
        };
    }

    /// Size of each packet, bytes.
    pub fn packet_bytes(&self) -> u32 {
        self.src.packet_size
    }

    /// The source (its counters count the packets found so far, one ahead of those consumed).
    pub fn source(&self) -> &CrossSource {
        &self.src
    }
}

impl Iterator for CrossArrivals {
    /// A packet's arrival time (ns) and size (bytes).
    type Item = (u64, u32);

    fn next(&mut self) -> Option<(u64, u32)> {
        let t = self.next?;
        self.advance();
        Some((t, self.src.packet_size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: f64 = 10e6;
    const PACKET: u32 = 1000;

    /// Bytes a source offers in `secs` seconds, counted through [`CrossArrivals`].
    fn offered(kind: CrossProcess, secs: u64, seed: u64) -> (u64, u64) {
        let stop = secs * 1_000_000_000;
        let cfg = CrossConfig {
            stop_ns: stop,
            ..CrossConfig::new(kind, RATE, PACKET)
        };
        let mut last = 0;
        let mut packets = 0;
        for (t, size) in CrossSource::new(&cfg, 0, 100e6, seed).arrivals() {
            assert!(t >= last && t < stop, "{kind:?}: {t} after {last}");
            assert_eq!(size, PACKET);
            last = t;
            packets += 1;
        }
        (packets * PACKET as u64, packets)
    }

    /// Checks that the offered rate is within `z` standard deviations (`rel_sd`, relative) plus
    /// a known bias (`bias`, relative) of the configured rate.
    fn assert_rate(what: &str, bytes: u64, secs: u64, rel_sd: f64, bias: f64) {
        let rate = bytes as f64 * 8.0 / secs as f64;
        let err = rate / RATE - 1.0;
        // 5 standard deviations: a false failure once in ~1.7 million seeds.
        let tol = 5.0 * rel_sd + bias;
        assert!(
            err.abs() <= tol,
            "{what}: {rate} b/s is {:.3} % off {RATE}; tolerance {:.3} %",
            err * 100.0,
            tol * 100.0
        );
    }

    #[test]
    fn cbr_is_exact() {
        // 10 Mb/s of 1000-byte packets = 1250 packets/s; 10 s = 12,500 packets.
        let (bytes, n) = offered(CrossProcess::Cbr, 10, 7);
        assert_eq!(n, 12_500);
        assert_eq!(bytes * 8 / 10, 10_000_000);
    }

    #[test]
    fn every_kind_offers_its_configured_mean_rate() {
        let secs = 200;
        let gap_s = PACKET as f64 * 8.0 / RATE;
        for seed in [1, 2, 3] {
            // Poisson: the count over T is Poisson with mean n = T/gap; relative sd 1/√n.
            let n = secs as f64 / gap_s;
            let (bytes, _) = offered(CrossProcess::Poisson, secs, seed);
            assert_rate("poisson", bytes, secs, 1.0 / n.sqrt(), 0.0);

            // On/off: the rate is peak × Σon / Σ(on+off) over C = T/(on+off) cycles. By the
            // delta method the relative sd of that ratio is √((1−d)²on² + d²off²) / (d(on+off)√C)
            // for exponential periods (sd = mean), d = on/(on+off). Each on period sends half a
            // packet more than its share on average: a bias of gap_peak / (2·on).
            let (on, off) = (0.05, 0.15);
            let d = on / (on + off);
            let cycles = secs as f64 / (on + off);
            let sd = (((1.0 - d) * on).powi(2) + (d * off).powi(2)).sqrt()
                / (d * (on + off) * cycles.sqrt());
            let bias = gap_s * d / (2.0 * on);
            let kind = CrossProcess::OnOff {
                mean_on_ns: 50_000_000,
                mean_off_ns: 150_000_000,
            };
            let (bytes, _) = offered(kind, secs, seed);
            assert_rate("onoff", bytes, secs, sd, bias);

            // Web: bytes are a compound Poisson sum over n = T·r/(8·mean) transfers, with relative
            // sd √(E[S²]/n)/E[S] = √((α−1)²/(α(α−2)) / n) for Pareto sizes. That needs α > 2 (at
            // the default 1.2 the variance is infinite and no sample count bounds the error), so
            // the test uses α = 2.5. Rounding each transfer up to whole packets adds half a
            // packet per transfer: a bias of s/(2·mean).
            let (mean, shape) = (50_000.0, 2.5);
            let n = secs as f64 * RATE / (8.0 * mean);
            let sd = ((shape - 1.0f64).powi(2) / (shape * (shape - 2.0)) / n).sqrt();
            let bias = PACKET as f64 / (2.0 * mean);
            let kind = CrossProcess::Web {
                mean_bytes: mean as u64,
                shape,
            };
            let (bytes, _) = offered(kind, secs, seed);
            assert_rate("web", bytes, secs, sd, bias);
        }
    }

    #[test]
    fn arrivals_are_the_packets_the_event_loop_emits() {
        let kind = CrossProcess::OnOff {
            mean_on_ns: 10_000_000,
            mean_off_ns: 30_000_000,
        };
        let cfg = CrossConfig {
            start_ns: 1_000_000,
            stop_ns: 2_000_000_000,
            ..CrossConfig::new(kind, 20e6, 1500)
        };
        // The simulator's way: fire at each requested event.
        let mut src = CrossSource::new(&cfg, 5, 100e6, 9);
        let mut t = Some(src.first_event());
        let mut fired = Vec::new();
        while let Some(now) = t {
            let (emit, next) = src.fire(now);
            if emit {
                fired.push((now, 1500));
            }
            t = next;
        }
        let arrivals: Vec<_> = CrossSource::new(&cfg, 5, 100e6, 9).arrivals().collect();
        assert!(arrivals.len() > 100);
        assert_eq!(arrivals, fired);
        assert_eq!(arrivals[0].0, 1_000_005, "starts at epoch + start");
    }

    #[test]
    fn web_sends_transfers_back_to_back_at_the_link_rate() {
        let cfg = CrossConfig::new(
            CrossProcess::Web {
                mean_bytes: 30_000,
                shape: 1.2,
            },
            1e6,
            1000,
        );
        // 100 Mb/s link: 1000 B every 80 µs within a transfer.
        let times: Vec<u64> = CrossSource::new(&cfg, 0, 100e6, 3)
            .arrivals()
            .take(2000)
            .map(|(t, _)| t)
            .collect();
        let gaps = times.windows(2).filter(|w| w[1] - w[0] == 80_000).count();
        assert!(gaps > 1000, "{gaps} of 1999 gaps at the link's packet time");
    }

    #[test]
    fn problems_are_named() {
        let ok = CrossConfig::new(CrossProcess::Cbr, 1e6, 1000);
        assert_eq!(ok.problem(1500), None);
        assert!(ok.problem(900).unwrap().contains("packet size"));
        let web = CrossConfig::new(
            CrossProcess::Web {
                mean_bytes: 100,
                shape: 1.2,
            },
            1e6,
            1000,
        );
        assert!(web.problem(1500).unwrap().contains("mean size"));
        let onoff = CrossConfig::new(
            CrossProcess::OnOff {
                mean_on_ns: 0,
                mean_off_ns: 5,
            },
            1e6,
            1000,
        );
        assert!(onoff.problem(1500).unwrap().contains("on time"));
    }
}
