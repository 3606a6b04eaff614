//! The monotonic clock, and waiting until an absolute deadline precisely.
//!
//! `epoll_wait`'s millisecond timeout and the default 50 µs timer slack make plain sleeps late by
//! tens of microseconds (PR_SET_TIMERSLACK(2const)). `Waiter` arms a `timerfd` on
//! CLOCK_MONOTONIC at an absolute time a little *before* the deadline, waits for it together with
//! the input fd in one `epoll`, and spins on the clock for the last few microseconds. The calling
//! thread's timer slack is set to 1 ns.

use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use std::os::fd::{AsFd, BorrowedFd};
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
}

const INPUT: u64 = 1;
const TIMER: u64 = 2;

impl Waiter {
    /// `input` is polled for readability; deadlines closer than `spin_ns` are spun for.
    pub fn new(input: BorrowedFd<'_>, spin_ns: u64) -> std::io::Result<Self> {
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
        })
    }

    /// Waits until `input` is readable or `deadline` (CLOCK_MONOTONIC ns) passes; with no
    /// deadline, waits at most `max_wait` (so the caller can check its stop flag).
    pub fn wait(&mut self, deadline: Option<u64>, max_wait: Duration) -> Wake {
        let now = now_ns();
        if let Some(d) = deadline {
            if d <= now {
                return Wake::Deadline;
            }
            if d - now <= self.spin_ns {
                return self.spin_until(d);
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
        if wake == Wake::Deadline {
            if let Some(d) = deadline {
                return self.spin_until(d);
            }
        }
        wake
    }

    fn spin_until(&self, deadline: u64) -> Wake {
        while now_ns() < deadline {
            std::hint::spin_loop();
        }
        Wake::Deadline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_advances() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
    }

    #[test]
    fn waiter_never_returns_before_the_deadline() {
        minimize_timer_slack();
        let (r, _w) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut w = Waiter::new(r.as_fd(), 20_000).unwrap();
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
