//! Host stalls: a host that now and then stops running its network stack for a few
//! milliseconds (`host_stalls` in a flow of the scenario; docs/scenario.md, "Host stalls").
//!
//! Source: `longhaul lab` runs of kernel TCP over `longhaul emu` (1 Gb/s × 180 ms, one flow,
//! 2-vCPU virtual machines), whose per-packet log, cut into 0.5-ms bins, shows hosts that sent
//! nothing although the emulator had just delivered them packets to answer: the sender about 4
//! such stalls a second (median ~2.5 ms, p90 ~6.5 ms, rare ones to 165 ms), the receiver about
//! 10 a second (median ~3 ms, p90 ~5 ms, at most ~15 ms). Each host's stalls are modelled as an
//! alternating renewal process: the host runs for an exponential time of mean 1/`rate`, then
//! stalls for an exponential time of mean `mean`, and so on. Deviations: real stall lengths
//! have a heavier tail than an exponential of the same median (the sender's 165-ms ones); and
//! because the gaps are counted from a stall's end, a host stalls `rate / (1 + rate·mean)`
//! times a second of run time (3.96/s for 4/s × 2.5 ms), never twice at once.
//!
//! What a stall does to the flow (packets held, timers deferred, all processed at its end) is
//! the engine's (`engine::stalls`); this module draws the stalls and counts them.

use crate::packet::Packet;
use rand_distr::{Distribution, Exp};
use rand_pcg::Pcg64Mcg;
use std::collections::VecDeque;

/// One host's stalls and the packets that reached it while it was stalled.
#[derive(Debug)]
pub struct HostStall {
    /// Exponential running time between stalls (mean 1/rate) and stall length (mean `mean`),
    /// both in ns.
    running: Exp<f64>,
    length: Exp<f64>,
    rng: Pcg64Mcg,
    /// The end of the run: stalled time beyond it is not counted.
    end: u64,
    /// The end of the current stall, while the host is stalled.
    until: Option<u64>,
    /// Packets that arrived during the current stall, in arrival order.
    pub held: VecDeque<Packet>,
    /// Stalls begun.
    pub count: u64,
    /// Time the stalls covered within the run, ns.
    pub stalled_ns: u64,
}

impl HostStall {
    /// A host that stalls `rate_per_s` times a second of running, for `mean_ns` on average,
    /// drawing from its own stream `seed`, in a run that ends at `end`. `None` for a host that
    /// never stalls (a zero rate).
    pub fn new(rate_per_s: f64, mean_ns: u64, seed: u64, end: u64) -> Option<HostStall> {
        let running = Exp::new(rate_per_s / 1e9).ok()?;
        let length = Exp::new(1.0 / mean_ns as f64).ok()?;
        (rate_per_s > 0.0 && mean_ns > 0).then(|| HostStall {
            running,
            length,
            rng: Pcg64Mcg::new(seed as u128 | 1 << 100),
            end,
            until: None,
            held: VecDeque::new(),
            count: 0,
            stalled_ns: 0,
        })
    }

    /// The host is stalled now.
    pub fn stalled(&self) -> bool {
        self.until.is_some()
    }

    /// When a host running at `now` next stalls (at least a nanosecond later).
    pub fn next_start(&mut self, now: u64) -> u64 {
        now.saturating_add(draw(&self.running, &mut self.rng))
    }

    /// Stall from `now`; returns when the stall ends (at least a nanosecond later).
    pub fn begin(&mut self, now: u64) -> u64 {
        let until = now.saturating_add(draw(&self.length, &mut self.rng));
        self.until = Some(until);
        self.count += 1;
        self.stalled_ns += until.min(self.end).saturating_sub(now);
        until
    }

    /// The stall ends; the host runs again.
    pub fn resume(&mut self) {
        self.until = None;
    }
}

/// An exponential draw in whole nanoseconds, at least one (two events of one host never
/// coincide).
fn draw(d: &Exp<f64>, rng: &mut Pcg64Mcg) -> u64 {
    (d.sample(rng).round() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Over 1,000 s of a host stalling 20 times a second of running for 5 ms on average, the
    /// stalls number rate·T/(1 + rate·mean) = 18,182 and cover mean·count = 90.9 s, within a
    /// few standard deviations (count: about ±0.5 %; time: about ±1 %).
    #[test]
    fn stalls_have_the_rate_and_mean_length_asked_for() {
        let end = 1_000_000_000_000;
        let mut h = HostStall::new(20.0, 5_000_000, 7, end).unwrap();
        let mut t = h.next_start(0);
        while t < end {
            assert!(!h.stalled());
            let until = h.begin(t);
            assert!(h.stalled() && until > t);
            h.resume();
            t = h.next_start(until);
        }
        let expect = 20.0 * 1000.0 / (1.0 + 20.0 * 0.005);
        let n = h.count as f64;
        assert!(
            (n / expect - 1.0).abs() < 0.03,
            "{n} stalls, expected {expect:.0}"
        );
        let mean_ms = h.stalled_ns as f64 / n / 1e6;
        assert!(
            (mean_ms / 5.0 - 1.0).abs() < 0.05,
            "mean stall {mean_ms} ms"
        );
    }

    #[test]
    fn a_zero_rate_never_stalls() {
        assert!(HostStall::new(0.0, 5_000_000, 1, 1).is_none());
        assert!(HostStall::new(4.0, 0, 1, 1).is_none());
    }
}
