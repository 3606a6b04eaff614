//! The monotonic clock, and waiting until an absolute deadline precisely.
//!
//! `epoll_wait`'s millisecond timeout and the default 50 µs timer slack make plain sleeps late by
//! tens of microseconds (PR_SET_TIMERSLACK(2const)). `Waiter` arms a `timerfd` on
//! CLOCK_MONOTONIC at an absolute time a little *before* the deadline, waits for it together with
//! the input fd in one `epoll`, and spins on the clock for the rest. The calling thread's timer
//! slack is set to 1 ns.
//!
//! How early "a little before" must be depends on the machine: on bare metal a timerfd wakes
//! within a few microseconds, but in some virtual machines a sleeping vCPU is woken only on the
//! host's tick, milliseconds late. `calibrate_wakeup` measures the actual oversleep at start-up,
//! and the spin window is set above it; the summary reports both. While inside the spin window
//! the caller keeps polling its input (a spin that also forwards), and yields the CPU between
//! polls while the deadline is still far, so the hosts' processes can run on a 2-core machine.
//!
//! Real-time priority has a budget. The kernel stops SCHED_FIFO threads that run for more than
//! `sched_rt_runtime_us` (95 %) of each `sched_rt_period_us` (1 s) on a CPU, for the rest of the
//! period (sched(7), "Limiting the CPU usage of real-time and deadline processes"); since Linux
//! 6.12 the fair server (kernel/sched/deadline.c) enforces it, giving normal tasks starved by
//! real-time ones 50 ms of each second in one stretch. A forwarder busy at 1 Gb/s spins between
//! releases 12 µs apart and would reach that within a second, then stall for ~50 ms. So the
//! `Waiter` keeps its own account: the time the thread runs at real-time priority (everything
//! but its blocked `epoll` waits) within each second of the monotonic clock, per CPU and shared
//! by all forwarders of the process, as the kernel accounts it. When the CPU's account reaches
//! `RT_BUDGET_NS`, the thread drops to SCHED_OTHER (at nice −20, the highest normal weight)
//! until the second ends or it moves to a CPU with budget left. Its real-time use thus has a
//! duty cycle of at most 80 % per second, with room for other real-time threads. Shorter
//! windows (100 ms with an 80 ms budget) bound any sliding second more tightly but cost a 1 Gb/s
//! flood more of its rate, as the forwarder drops to normal priority ten times a second
//! (bench/README.md, "the emulator's real-time budget").

use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Nanoseconds on CLOCK_MONOTONIC.
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds since the Unix epoch (for pcap timestamps).
pub fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sets this thread's timer slack to 1 ns so timerfd and epoll wake-ups are not coalesced.
pub fn minimize_timer_slack() {
    // SAFETY: prctl with PR_SET_TIMERSLACK takes an unsigned long; no pointers.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// What woke a wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// The input fd is readable.
    Input,
    /// The deadline was reached.
    Deadline,
    /// Neither (timeout of an unbounded wait, or a signal); just loop.
    Spurious,
}

/// Waits for input or an absolute deadline.
pub struct Waiter {
    epoll: Epoll,
    timer: TimerFd,
    spin_ns: u64,
    budget: RtBudget,
}

/// Real-time running time per second the `Waiter` allows itself (the kernel allows 950 ms).
pub const RT_BUDGET_NS: u64 = 800_000_000;
const RT_WINDOW_NS: u64 = 1_000_000_000;

/// Accounts the thread's running time at real-time priority and switches it between SCHED_FIFO
/// and SCHED_OTHER so that it stays under `RT_BUDGET_NS` per second (module header).
struct RtBudget {
    /// SCHED_FIFO priority (0 = never real-time).
    priority: i32,
    is_realtime: bool,
    /// Start of the current running stretch (since the last charge).
    running_since: u64,
}

impl RtBudget {
    /// Makes the calling thread SCHED_FIFO at `priority` (nice −20 when it runs at normal
    /// scheduling); `priority` 0 leaves it as it is.
    pub fn new(priority: i32) -> Self {
        if priority > 0 {
            // The weight the thread keeps when it runs at normal scheduling.
            // SAFETY: setpriority on the calling thread's id; no pointers.
            unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, -20) };
        }
        let now = now_ns();
        let mut b = Self {
            priority,
            is_realtime: false,
            running_since: now,
        };
        b.set_realtime(true);
        b
    }

    /// Whether the thread has real-time priority now.
    pub fn is_realtime(&self) -> bool {
        self.is_realtime
    }

    fn set_realtime(&mut self, on: bool) {
        if self.priority <= 0 || on == self.is_realtime {
            return;
        }
        let ok = if on {
            make_realtime(self.priority)
        } else {
            make_normal()
        };
        if ok {
            self.is_realtime = on;
        } else if on {
            // Refused (not root, or RT disabled): do not retry on every wait.
            self.priority = 0;
        }
    }

    /// Charges the running time up to `now`; `blocked` means the thread was asleep
    /// since the last charge (not charged).
    pub fn charge(&mut self, now: u64, blocked: bool) {
        let ran = if self.is_realtime && !blocked {
            now.saturating_sub(self.running_since)
        } else {
            0
        };
        self.running_since = now;
        self.account(now, ran);
    }

    fn account(&mut self, now: u64, ran: u64) {
        if self.priority <= 0 {
            return;
        }
        // The kernel accounts per CPU, for all real-time threads on it: charge the CPU this
        // thread runs on now (it changes rarely), shared by every budgeted thread of the
        // process — including one that stopped earlier in the same second.
        // SAFETY: sched_getcpu has no arguments; -1 (error) maps to slot 0.
        let cpu = unsafe { libc::sched_getcpu() }.max(0) as usize % CPU_SLOTS;
        let slot = &CPU_RT_USE[cpu];
        let window = now / RT_WINDOW_NS;
        if slot.window.swap(window, Ordering::Relaxed) != window {
            slot.used_ns.store(0, Ordering::Relaxed);
        }
        let used = slot.used_ns.fetch_add(ran, Ordering::Relaxed) + ran;
        self.set_realtime(used < RT_BUDGET_NS);
    }
}

/// Real-time running time of the process's budgeted threads per CPU in the current window.
struct CpuRtUse {
    window: AtomicU64,
    used_ns: AtomicU64,
}

const CPU_SLOTS: usize = 256;
#[allow(clippy::declare_interior_mutable_const)]
const CPU_RT_USE_INIT: CpuRtUse = CpuRtUse {
    window: AtomicU64::new(0),
    used_ns: AtomicU64::new(0),
};
static CPU_RT_USE: [CpuRtUse; CPU_SLOTS] = [CPU_RT_USE_INIT; CPU_SLOTS];

const INPUT: u64 = 1;
const TIMER: u64 = 2;

impl Waiter {
    /// `input` is polled for readability; deadlines closer than `spin_ns` are spun for.
    /// `realtime_priority` > 0 makes the calling thread SCHED_FIFO at that priority within the
    /// real-time budget (module header); the `Waiter` must live on the thread it waits for.
    pub fn new(
        input: BorrowedFd<'_>,
        spin_ns: u64,
        realtime_priority: i32,
    ) -> std::io::Result<Self> {
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
        let timer = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        epoll.add(input, EpollEvent::new(EpollFlags::EPOLLIN, INPUT))?;
        epoll.add(timer.as_fd(), EpollEvent::new(EpollFlags::EPOLLIN, TIMER))?;
        Ok(Self {
            epoll,
            timer,
            spin_ns,
            budget: RtBudget::new(realtime_priority),
        })
    }

    /// Whether the thread got real-time priority (false: not root, or RT disabled).
    pub fn is_realtime(&self) -> bool {
        self.budget.priority > 0
    }

    /// Polls `input` too: a wait ends when either input is readable.
    pub fn add_input(&mut self, input: BorrowedFd<'_>) -> std::io::Result<()> {
        self.epoll
            .add(input, EpollEvent::new(EpollFlags::EPOLLIN, INPUT))?;
        Ok(())
    }

    /// Waits until `input` is readable or `deadline` (CLOCK_MONOTONIC ns) passes; with no
    /// deadline, waits at most `max_wait` (so the caller can check its stop flag).
    pub fn wait(&mut self, deadline: Option<u64>, max_wait: Duration) -> Wake {
        let now = now_ns();
        self.budget.charge(now, false);
        if let Some(d) = deadline {
            if d <= now {
                return Wake::Deadline;
            }
            if d - now <= self.spin_ns {
                // Inside the spin window: give other threads a chance while the deadline is
                // more than a few microseconds away, then let the caller poll again. At
                // real-time priority a yield only lets threads of the same priority run — the
                // other direction's forwarder, when both share a CPU — so it costs nothing
                // near the deadline; at normal priority it would hand the CPU to any process.
                if self.budget.is_realtime() || d - now > YIELD_ABOVE_NS {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
                return Wake::Spurious;
            }
            let wake_at = d - self.spin_ns;
            let ts = TimeSpec::from(Duration::from_nanos(wake_at));
            let _ = self.timer.set(
                Expiration::OneShot(ts),
                TimerSetTimeFlags::TFD_TIMER_ABSTIME,
            );
        }
        let mut events = [EpollEvent::empty(); 2];
        let timeout = EpollTimeout::try_from(max_wait).unwrap_or(EpollTimeout::NONE);
        let n = self.epoll.wait(&mut events, timeout).unwrap_or(0);
        self.budget.charge(now_ns(), true);
        let mut wake = Wake::Spurious;
        for e in &events[..n] {
            match e.data() {
                INPUT => return Wake::Input,
                TIMER => {
                    // Non-blocking fd: consumes the expiration count.
                    let _ = self.timer.wait();
                    wake = Wake::Deadline;
                }
                _ => {}
            }
        }
        // The timer fires `spin_ns` early on purpose: the caller spins (polling) for the rest.
        if wake == Wake::Deadline && deadline.is_some_and(|d| now_ns() < d) {
            return Wake::Spurious;
        }
        wake
    }

    /// How long before a deadline the wait stops sleeping and spins, in ns: the timer is set this
    /// much early.
    pub fn spin_ns(&self) -> u64 {
        self.spin_ns
    }
}

/// Below this distance to the deadline a spin at normal priority does not yield the CPU.
const YIELD_ABOVE_NS: u64 = 30_000;

/// Measures how late a timerfd wake-up is on this machine: the median oversleep of `trials`
/// waits of 200 µs, in nanoseconds (the median, because on a loaded machine the worst case is
/// scheduling contention, which spinning longer would only make worse).
pub fn calibrate_wakeup(trials: usize) -> u64 {
    minimize_timer_slack();
    let Ok(timer) = TimerFd::new(ClockId::CLOCK_MONOTONIC, TimerFlags::TFD_CLOEXEC) else {
        return 0;
    };
    let mut late = Vec::with_capacity(trials);
    for _ in 0..trials {
        let d = now_ns() + 200_000;
        let ts = TimeSpec::from(Duration::from_nanos(d));
        if timer
            .set(
                Expiration::OneShot(ts),
                TimerSetTimeFlags::TFD_TIMER_ABSTIME,
            )
            .is_err()
        {
            return 0;
        }
        let _ = timer.wait();
        late.push(now_ns().saturating_sub(d));
    }
    late.sort_unstable();
    late.get(late.len() / 2).copied().unwrap_or(0)
}

/// Gives the calling thread SCHED_FIFO priority `prio` (seed 001: dummynet lacked "priority
/// scheduling of its events"). Returns false if the kernel refused (not root, or RT disabled).
/// Linux's RT throttling (sched_rt_runtime_us) still leaves 5 % of each CPU to other tasks.
pub fn make_realtime(prio: i32) -> bool {
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: valid sched_param for the calling thread.
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) == 0 }
}

/// Restricts the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) -> nix::Result<()> {
    let mut set = nix::sched::CpuSet::new();
    set.set(cpu)?;
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
}

/// Restricts the calling thread (or, in a child before exec, the process) to `cpus`.
pub fn confine_to_cpus(cpus: &[usize]) -> nix::Result<()> {
    let mut set = nix::sched::CpuSet::new();
    for &c in cpus {
        set.set(c)?;
    }
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
}

/// The CPUs the calling thread may run on (its affinity mask), ascending.
pub fn allowed_cpus() -> Vec<usize> {
    match nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)) {
        Ok(set) => (0..nix::sched::CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

/// Returns the calling thread to SCHED_OTHER (its nice value is kept).
pub fn make_normal() -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: valid sched_param for the calling thread.
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_OTHER, &param) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_cpus_include_the_one_we_run_on() {
        let cpus = allowed_cpus();
        // SAFETY: sched_getcpu has no preconditions.
        let here = unsafe { libc::sched_getcpu() };
        assert!(
            here >= 0 && cpus.contains(&(here as usize)),
            "{here} in {cpus:?}"
        );
        assert!(cpus.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn monotonic_clock_advances() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
    }

    #[test]
    fn waiter_never_reports_the_deadline_early() {
        minimize_timer_slack();
        let (r, _w) = std::os::unix::net::UnixStream::pair().unwrap();
        let spin = calibrate_wakeup(3) + 50_000;
        let mut w = Waiter::new(r.as_fd(), spin, 0).unwrap();
        for delay in [5_000u64, 200_000, 2_000_000] {
            let d = now_ns() + delay;
            let mut wake = Wake::Spurious;
            while wake != Wake::Deadline {
                wake = w.wait(Some(d), Duration::from_millis(100));
            }
            assert!(now_ns() >= d, "woke before the deadline at {delay} ns");
        }
    }
}
