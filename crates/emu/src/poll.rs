//! Busy polling: one thread forwards both directions, polling both inputs and both delay lines
//! without sleeping while anything is on the path.
//!
//! Why: a forwarder that sleeps until each release pays a wake-up per release — a timer or an
//! input interrupt, a context switch, and in a virtual machine a virtualised interrupt, tens of
//! microseconds of CPU per wake-up (see `bench/README.md`, "The emulator's timing on the 2-vCPU
//! VM"). At 1 Gb/s releases are 12–45 µs apart, so the two sleeping forwarders need most of two
//! CPUs just to wake up, exhaust their real-time budget and are then late by a scheduler tick
//! (4 ms at HZ=250) for part of every second.
//! Polling is what DPDK and netmap forwarders do: one thread owns one CPU and never waits, so a
//! release is late only by the work ahead of it in the loop (a read or a write, microseconds).
//!
//! The price is a whole CPU while packets are in flight, shared by nothing: the thread is
//! pinned (`Options::forwarder_cpu`, else the last CPU the process may use) and the hosts'
//! programs started through the emulator are kept off that CPU (`Emulator::host_cpus`). When
//! both delay lines are empty and both inputs dry the thread blocks in one `epoll` on both
//! inputs, so an idle emulator costs nothing; the wake-up then delays only the arrival
//! timestamp of the packet that ends the idle time, not any scheduled release.
//!
//! Priority: the highest normal one (SCHED_OTHER, nice −20), not real-time. A thread that
//! never sleeps uses up the kernel's real-time bandwidth (`sched_rt_runtime_us`, 950 ms of
//! each second) and is then stopped for the rest of the period, tens of milliseconds, also with
//! a 1 µs sleep every millisecond (same bench entry, "Busy polling"). At nice −20 nothing stops it; a
//! kernel thread of its CPU (softirq work, a kworker) runs when it must, for microseconds, and
//! the load balancer keeps ordinary tasks on the other CPUs, which look far less loaded.

use crate::forward::{Direction, DirectionReport, Running};
use crate::sys::clock::{minimize_timer_slack, Waiter};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Forwards both directions on the calling thread until `a`'s stop flag is set (both share it).
/// Returns the two directions' reports, `a` first.
pub fn run_both(a: Direction, b: Direction) -> [DirectionReport; 2] {
    minimize_timer_slack();
    a.pin();
    let stop = a.stop.clone();
    let (in_a, in_b) = (a.input.clone(), b.input.clone());
    // SAFETY: the Arcs keep both fds open for the life of this function.
    let (fd_a, fd_b) = unsafe {
        (
            BorrowedFd::borrow_raw(in_a.as_raw_fd()),
            BorrowedFd::borrow_raw(in_b.as_raw_fd()),
        )
    };
    if a.realtime_priority > 0 {
        // SAFETY: setpriority on the calling thread's id; no pointers.
        unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, -20) };
    }
    let waiter = Waiter::new(fd_a, 0, 0).and_then(|mut w| {
        w.add_input(fd_b)?;
        Ok(w)
    });
    let mut waiter = match waiter {
        Ok(w) => w,
        Err(e) => {
            tracing::error!("busy poll: cannot create the wait set: {e}");
            return [a.start().finish(), b.start().finish()];
        }
    };
    let (mut a, mut b) = (a.start(), b.start());
    while !stop.load(Ordering::Relaxed) {
        // One read per direction and turn: a read copies up to a 64 KB super-packet, and the
        // other direction's releases must not wait behind a batch of them.
        let drained = a.turn(1) & b.turn(1);
        if drained && idle(&a) && idle(&b) {
            // Nothing scheduled: sleep until either host sends (or 50 ms, to look at `stop` again).
            waiter.wait(None, Duration::from_millis(50));
        } else if drained {
            std::hint::spin_loop();
        }
    }
    [a.finish(), b.finish()]
}

fn idle(r: &Running) -> bool {
    r.next_release().is_none()
}
