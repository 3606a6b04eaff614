//! Unresponsive cross traffic: packet generators that offer load to one link and do not back
//! off. (Responsive cross traffic is carried by congestion-controlled flows; see `engine`.)
//!
//! Each kind has the configured *average* offered rate `r` with packets of `s` bytes:
//! * **cbr** — one packet every `8s/r` seconds exactly (times are computed from the packet count,
//!   not accumulated, so rounding never drifts).
//! * **poisson** — exponential gaps of mean `8s/r`: the M/·/1 arrival process.
//! * **onoff** — exponential on and off periods of means `on` and `off`; during "on" a CBR
//!   stream at peak `r·(on+off)/on`, so the long-run average is `r` (the ns-2/ns-3
//!   `OnOffApplication` model with exponential periods).
//! * **web** — transfers arrive as a Poisson process of rate `r / (8·mean_size)`; sizes are
//!   Pareto with shape `α` (default 1.2, the heavy tail of web object sizes found by Crovella &
//!   Bestavros, "Self-similarity in World Wide Web traffic", ToN 1997) and scale
//!   `mean·(α−1)/α`, so their mean is `mean_size` (default 100 KiB). Pending transfers are sent
//!   back to back at the link's own rate, as from a host on an access link of that rate.
//!
//! Each source draws from its own seeded random stream, so adding a source does not change the
//! others' packets.

use crate::scenario::CrossKind;
use rand::Rng;
use rand_distr::{Distribution, Exp, Pareto};
use rand_pcg::Pcg64Mcg;

/// One unresponsive cross-traffic source: its arrival process, its link, and its random stream.
#[derive(Debug)]
pub struct CrossSource {
    /// The arrival process.
    pub kind: CrossKind,
    /// Index of the link it loads.
    pub link: usize,
    /// It loads the link's ACK direction.
    pub reverse: bool,
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
    /// A source offering `rate_bps` on average. `link_rate_bps` is the serving link's rate (web
    /// transfers are sent at it); `mean_size` and `shape` are for web, `on`/`off` for onoff.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        kind: CrossKind,
        link: usize,
        reverse: bool,
        rate_bps: f64,
        packet_size: u32,
        start: u64,
        stop: u64,
        on_ns: u64,
        off_ns: u64,
        mean_size: u64,
        shape: f64,
        link_rate_bps: f64,
        seed: u64,
    ) -> CrossSource {
        let gap_ns = packet_size as f64 * 8e9 / rate_bps;
        let (peak_gap_ns, pareto, transfer_rate_per_ns) = match kind {
            CrossKind::Onoff => {
                let duty = on_ns as f64 / (on_ns + off_ns) as f64;
                (gap_ns * duty, None, 0.0)
            }
            CrossKind::Web => {
                let scale = mean_size as f64 * (shape - 1.0) / shape;
                (
                    packet_size as f64 * 8e9 / link_rate_bps,
                    Pareto::new(scale, shape).ok(),
                    rate_bps / (8.0 * mean_size as f64) / 1e9,
                )
            }
            _ => (gap_ns, None, 0.0),
        };
        let mut s = CrossSource {
            kind,
            link,
            reverse,
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
    /// a packet is emitted now, and when to call again (`None`: the source is done).
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

    /// Peak rate of on periods (onoff), bit/s.
    pub fn peak_rate_bps(&self) -> f64 {
        self.packet_size as f64 * 8e9 / self.peak_gap_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered_rate(kind: CrossKind, secs: u64) -> (f64, u64) {
        let stop = secs * 1_000_000_000;
        let mut s = CrossSource::new(
            kind,
            0,
            false,
            10e6,
            1000,
            0,
            stop,
            50_000_000,
            150_000_000,
            50_000,
            1.5,
            100e6,
            7,
        );
        let mut t = s.first_event();
        loop {
            let (_, next) = s.fire(t);
            match next {
                Some(n) => {
                    assert!(
                        n > t || (n == t && kind == CrossKind::Onoff),
                        "time must advance"
                    );
                    t = n
                }
                None => break,
            }
        }
        (s.bytes as f64 * 8.0 / secs as f64, s.packets)
    }

    #[test]
    fn cbr_is_exact() {
        // 10 Mb/s of 1000-byte packets = 1250 packets/s; 10 s = 12,500 packets.
        let (rate, n) = offered_rate(CrossKind::Cbr, 10);
        assert_eq!(n, 12_500);
        assert_eq!(rate, 10e6);
    }

    #[test]
    fn random_kinds_average_to_the_rate() {
        // 200 s of Poisson: 250,000 packets, sd ≈ 0.2 %.
        let (rate, _) = offered_rate(CrossKind::Poisson, 200);
        assert!((rate / 10e6 - 1.0).abs() < 0.01, "poisson {rate}");
        // On/off with 50/150 ms periods: 2000 cycles in 400 s; sd of the on fraction ≈ 2 %.
        let (rate, _) = offered_rate(CrossKind::Onoff, 400);
        assert!((rate / 10e6 - 1.0).abs() < 0.08, "onoff {rate}");
    }
}
