//! CPU time and the statistics of repeated runs.
//!
//! A thread's CPU time comes from `getrusage(RUSAGE_THREAD)`, the whole process's from
//! `RUSAGE_SELF` (which also counts io_uring's worker threads, `iou-wrk-*`, and threads that
//! have exited). Their sum of user and system time is the scheduler's exact run time; only its
//! split into user and system is sampled at the timer tick, so the tool reports the sum. Softirq
//! work that runs on a thread's own CPU while it runs (loopback delivers a datagram inside the
//! sender's `sendmsg`) is that thread's time; what `ksoftirqd` takes over is nobody's, hence
//! the host's busy time from `/proc/stat` beside it (which also counts any other load).

use anyhow::{bail, Context, Result};
use std::cell::Cell;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// User plus system time of `who` (`RUSAGE_THREAD` or `RUSAGE_SELF`).
fn rusage(who: libc::c_int) -> Result<Duration> {
    // SAFETY: getrusage writes a plain struct of integers.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return Err(std::io::Error::last_os_error()).context("getrusage");
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Ok(tv(ru.ru_utime) + tv(ru.ru_stime))
}

/// CPU time of the calling thread.
pub fn thread_cpu() -> Result<Duration> {
    rusage(libc::RUSAGE_THREAD)
}

/// CPU time of the whole process, all its threads (exited ones included).
pub fn process_cpu() -> Result<Duration> {
    rusage(libc::RUSAGE_SELF)
}

/// Seconds all CPUs of the host spent busy (user, nice, system, irq, softirq) since boot,
/// from `/proc/stat` (in clock ticks, 10 ms each on most systems).
pub fn host_busy() -> Result<f64> {
    let stat = std::fs::read_to_string("/proc/stat").context("reading /proc/stat")?;
    let line = stat.lines().next().unwrap_or_default();
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|w| w.parse().unwrap_or(0))
        .collect();
    if !line.starts_with("cpu ") || ticks.len() < 7 {
        bail!("/proc/stat does not start with the `cpu` line: {line:?}");
    }
    // user nice system idle iowait irq softirq: all but idle and iowait.
    let busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6];
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    Ok(busy as f64 / hz.max(1) as f64)
}

/// Wall time, the process's CPU time and the host's busy time of one case, from the moment
/// its threads are ready (`start`, called by the case) to `stop` (called after they ended).
#[derive(Default)]
pub struct Stopwatch {
    mark: Cell<Option<(Instant, Duration, f64)>>,
}

/// What a [`Stopwatch`] measured, in seconds.
pub struct Sample {
    pub wall: f64,
    pub process: f64,
    pub host: f64,
}

impl Stopwatch {
    pub fn start(&self) -> Result<()> {
        self.mark
            .set(Some((Instant::now(), process_cpu()?, host_busy()?)));
        Ok(())
    }

    pub fn stop(&self) -> Result<Sample> {
        let Some((t0, p0, h0)) = self.mark.take() else {
            bail!("the case never started its clock");
        };
        let wall = t0.elapsed().as_secs_f64();
        Ok(Sample {
            wall,
            process: (process_cpu()? - p0).as_secs_f64(),
            host: host_busy()? - h0,
        })
    }
}

/// The start of a case: its threads set up (buffers, rings) and then wait here, so that the
/// clock starts once all are ready and before any begins.
pub struct Start {
    ready: Barrier,
    go: Barrier,
}

impl Start {
    /// A start for `threads` threads and the caller's.
    pub fn new(threads: usize) -> Start {
        Start {
            ready: Barrier::new(threads + 1),
            go: Barrier::new(threads + 1),
        }
    }

    /// A case's thread: wait until the clock runs.
    pub fn wait(&self) {
        self.ready.wait();
        self.go.wait();
    }

    /// The caller: start `clock` once every thread is ready, then let them go.
    pub fn release(&self, clock: &Stopwatch) -> Result<()> {
        self.ready.wait();
        let started = clock.start();
        self.go.wait();
        started
    }
}

/// The median of `v` (the mean of the middle two for an even count); 0 for none.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// The smallest of `v` (infinity for none).
pub fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The largest of `v` (0 for none).
pub fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        assert_eq!(min(&[3.0, 1.0, 2.0]), 1.0);
        assert_eq!(max(&[3.0, 1.0, 2.0]), 3.0);
    }

    #[test]
    fn a_busy_loop_shows_in_the_threads_cpu_time() {
        let before = thread_cpu().unwrap();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let used = thread_cpu().unwrap() - before;
        // Preemption may steal some of the 50 ms, never add to it.
        assert!(
            used <= start.elapsed() + Duration::from_millis(5),
            "{used:?}"
        );
        assert!(used >= Duration::from_millis(5), "{used:?}");
        assert!(process_cpu().unwrap() >= used);
        assert!(host_busy().unwrap() > 0.0);
    }
}
