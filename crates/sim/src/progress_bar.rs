//! `longhaul sim`'s progress line on stderr while a run goes: a bar of the simulated time,
//! events and packet-hops per wall second, and the ETA; at the end, the run's speed.

use crate::{Outcome, Progress};
use std::io::Write;
use std::time::Instant;

/// A one-line progress display: simulated time, events per wall second, and the ETA.
pub struct ProgressBar {
    enabled: bool,
    started: Instant,
    last_draw: f64,
}

impl ProgressBar {
    /// A bar drawn only when `enabled` (stderr is a terminal and the user did not ask for
    /// quiet).
    pub fn new(enabled: bool) -> Self {
        ProgressBar {
            enabled,
            started: Instant::now(),
            last_draw: -1.0,
        }
    }

    /// Redraws the line (at most five times a second).
    pub fn update(&mut self, p: &Progress) {
        if !self.enabled {
            return;
        }
        let wall = self.started.elapsed().as_secs_f64();
        if wall - self.last_draw < 0.2 {
            return;
        }
        self.last_draw = wall;
        let frac = (p.sim_ns as f64 / p.duration_ns.max(1) as f64).clamp(0.0, 1.0);
        let width = 30;
        let filled = (frac * width as f64) as usize;
        let eta = if frac > 0.0 {
            wall * (1.0 - frac) / frac
        } else {
            f64::NAN
        };
        eprint!(
            "\r[{}{}] {:.1}/{:.1} s simulated  {:.1} M events/s  {:.1} M pkt-hops/s  ETA {}   ",
            "#".repeat(filled),
            "-".repeat(width - filled),
            p.sim_ns as f64 / 1e9,
            p.duration_ns as f64 / 1e9,
            p.events as f64 / wall.max(1e-9) / 1e6,
            p.packets as f64 / wall.max(1e-9) / 1e6,
            if eta.is_finite() {
                format!("{eta:.0} s")
            } else {
                "-".into()
            },
        );
        let _ = std::io::stderr().flush();
    }

    /// Replaces the line with the run's speed: simulated and wall seconds, events per second,
    /// threads.
    pub fn finish(&mut self, o: &Outcome, wall: f64) {
        if !self.enabled {
            return;
        }
        eprintln!(
            "\r{:<120}\rsimulated {:.1} s in {:.1} s wall ({:.0}× real time), {:.1} M events/s, {} thread{}",
            "",
            o.summary.duration_s,
            wall,
            o.summary.duration_s / wall.max(1e-9),
            o.events as f64 / wall.max(1e-9) / 1e6,
            o.threads,
            if o.threads == 1 { "" } else { "s" }
        );
    }
}
