//! Steal time: how long the hypervisor kept each virtual CPU from running while it had work.
//!
//! In a virtual machine the emulator's release times can be only as punctual as its vCPU is
//! scheduled: a vCPU the host does not run for 2 ms makes every release due in those 2 ms at
//! least that late, whatever the forwarder does. Linux counts that time per CPU as `steal` in
//! `/proc/stat` (proc(5), eighth value of each `cpuN` line, in USER_HZ ticks). The emulator
//! reads it at start and stop and reports the share of the run each CPU lost, so a lateness
//! tail can be told apart from the emulator's own.

use serde::Serialize;

/// Steal-time counters of every CPU at one instant: (cpu, ticks).
#[derive(Debug, Clone, Default)]
pub struct StealSnapshot(Vec<(usize, u64)>);

/// One CPU's steal time over an interval.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct CpuSteal {
    /// The CPU's number.
    pub cpu: usize,
    /// Time stolen from it during the interval, in ms.
    pub steal_ms: f64,
    /// steal time / the interval's wall time.
    pub share: f64,
}

impl StealSnapshot {
    /// Reads `/proc/stat` (empty if unreadable: not Linux, or no steal accounting).
    pub fn now() -> Self {
        std::fs::read_to_string("/proc/stat")
            .map(|s| Self::parse(&s))
            .unwrap_or_default()
    }

    /// The per-CPU steal ticks in `/proc/stat` text.
    pub fn parse(stat: &str) -> Self {
        let cpus = stat
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let cpu = f.next()?.strip_prefix("cpu")?.parse::<usize>().ok()?;
                // user nice system idle iowait irq softirq steal
                let steal = f.nth(7)?.parse::<u64>().ok()?;
                Some((cpu, steal))
            })
            .collect();
        Self(cpus)
    }

    /// Steal per CPU from `earlier` to `self`, over `wall_s` seconds of wall time.
    pub fn since(&self, earlier: &Self, wall_s: f64) -> Vec<CpuSteal> {
        let tick_ms = 1000.0 / clock_ticks_per_second();
        self.0
            .iter()
            .filter_map(|&(cpu, now)| {
                let (_, then) = earlier.0.iter().find(|(c, _)| *c == cpu)?;
                let steal_ms = now.saturating_sub(*then) as f64 * tick_ms;
                Some(CpuSteal {
                    cpu,
                    steal_ms,
                    share: if wall_s > 0.0 {
                        steal_ms / 1e3 / wall_s
                    } else {
                        0.0
                    },
                })
            })
            .collect()
    }
}

/// Runs `f` and returns its result with the largest share of any CPU the hypervisor stole
/// meanwhile (0 without steal accounting).
pub fn largest_stolen_during<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let (before, start) = (StealSnapshot::now(), std::time::Instant::now());
    let out = f();
    let stolen = StealSnapshot::now()
        .since(&before, start.elapsed().as_secs_f64())
        .iter()
        .map(|c| c.share)
        .fold(0.0, f64::max);
    (out, stolen)
}

/// USER_HZ, the unit of `/proc/stat` (100 on every Linux architecture in practice).
fn clock_ticks_per_second() -> f64 {
    // SAFETY: sysconf has no pointer arguments.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "cpu  3907714 17571 600961 1962545 14382 0 39188 97080 0 0\n\
                          cpu0 1980617 8378 297690 958121 8211 0 18885 49976 0 0\n\
                          cpu1 1927097 9192 303270 1004424 6171 0 20302 47103 0 0\n\
                          intr 1 2 3\n";
    const AFTER: &str = "cpu  3907714 17571 600961 1962545 14382 0 39188 97180 0 0\n\
                         cpu0 1980617 8378 297690 958121 8211 0 18885 49986 0 0\n\
                         cpu1 1927097 9192 303270 1004424 6171 0 20302 47193 0 0\n";

    #[test]
    fn steal_is_the_eighth_value_of_each_cpu_line() {
        let s = StealSnapshot::parse(BEFORE);
        assert_eq!(s.0, vec![(0, 49976), (1, 47103)]);
    }

    #[test]
    fn steal_over_an_interval_is_a_share_of_its_wall_time() {
        let tick_ms = 1000.0 / clock_ticks_per_second();
        let d = StealSnapshot::parse(AFTER).since(&StealSnapshot::parse(BEFORE), 10.0);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].cpu, 0);
        assert!((d[0].steal_ms - 10.0 * tick_ms).abs() < 1e-9);
        assert!((d[1].steal_ms - 90.0 * tick_ms).abs() < 1e-9);
        // 90 ticks of 10 ms (USER_HZ 100) in 10 s: 9 %.
        assert!((d[1].share - 90.0 * tick_ms / 1e4).abs() < 1e-12);
    }

    #[test]
    fn unreadable_or_foreign_text_gives_nothing() {
        assert!(StealSnapshot::parse("garbage\ncpuX 1 2\ncpu3 1 2 3\n")
            .0
            .is_empty());
        assert!(StealSnapshot::default()
            .since(&StealSnapshot::default(), 1.0)
            .is_empty());
    }
}
