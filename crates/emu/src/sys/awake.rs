//! Keeping the CPUs out of their idle sleep while packets are in flight.
//!
//! A forwarder blocked in `epoll` is woken by the kernel when a packet reaches its TUN device or
//! its timer fires. If the CPU it sleeps on is idle, that CPU has halted, and waking it costs
//! the CPU's idle-exit latency: microseconds for a shallow C-state on bare metal, but in a virtual
//! machine whose idle loop is `HLT` (no cpuidle driver) the halted vCPU is descheduled by the
//! hypervisor, and the wake-up interrupt waits until the host runs it again. Measured on the
//! 2-vCPU VM this project is tested on: a forwarder noticed a packet 100–160 µs after it arrived,
//! and timer wake-ups were sometimes milliseconds late (crates/emu/README.md, "Timing").
//!
//! Two remedies, both the ones latency-sensitive Linux programs use (cyclictest does the first):
//!
//! - a PM QoS request of 0 µs CPU wake-up latency (`/dev/cpu_dma_latency`, held open while
//!   running; Documentation/power/pm_qos_interface.rst): cpuidle then only uses its polling
//!   state. It does nothing when the machine has no cpuidle driver, as such VMs do.
//! - one spinner thread per CPU, pinned, at `SCHED_IDLE` (sched(7): runs only when nothing else
//!   wants the CPU, and is preempted as soon as anything does). It keeps the CPU running the
//!   guest, so a wake-up is an interrupt to a running CPU. It takes CPU time from nobody inside
//!   the machine; the cost is power (and, in a VM, host CPU time).
//!
//! The spinners run only while some forwarder is busy — packets in a delay line or traffic in
//! the last `LINGER_NS` — and sleep in 1 ms naps otherwise, so an idle emulator left running
//! for hours does not burn its CPUs. The first packet after a quiet second is therefore noticed
//! at the machine's normal wake-up latency.

use super::clock::now_ns;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the spinners keep running after the last sign of traffic.
pub const LINGER_NS: u64 = 1_000_000_000;
/// At most this many spinner threads (one per CPU of the process's affinity mask).
const MAX_SPINNERS: usize = 16;

/// Shared "keep the CPUs awake until" time that forwarders extend.
#[derive(Debug, Default)]
pub struct AwakeDeadline(AtomicU64);

impl AwakeDeadline {
    /// Keeps the CPUs awake until at least `now + LINGER_NS`.
    #[inline]
    pub fn touch(&self, now: u64) {
        let until = now + LINGER_NS;
        // Written at most once per millisecond: forwarders call this on every wait.
        if until > self.0.load(Ordering::Relaxed) + 1_000_000 {
            self.0.store(until, Ordering::Relaxed);
        }
    }

    fn active(&self, now: u64) -> bool {
        now < self.0.load(Ordering::Relaxed)
    }
}

/// The running spinners and the PM QoS request; stopped and released on drop.
pub struct KeepAwake {
    pub deadline: Arc<AwakeDeadline>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    _pm_qos: Option<std::fs::File>,
    spinners: usize,
}

impl KeepAwake {
    /// Starts one spinner per CPU the process may run on (at most `MAX_SPINNERS`) and holds a
    /// zero-latency PM QoS request if the kernel offers one. Never fails: what cannot be had
    /// (no permission, no such device) is simply not used.
    pub fn start() -> KeepAwake {
        let deadline = Arc::new(AwakeDeadline::default());
        let stop = Arc::new(AtomicBool::new(false));
        let pm_qos = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .and_then(|mut f| {
                use std::io::Write;
                // The request holds while the file stays open (binary s32, microseconds).
                f.write_all(&0i32.to_ne_bytes())?;
                Ok(f)
            })
            .ok();
        let mut threads = Vec::new();
        for cpu in allowed_cpus().into_iter().take(MAX_SPINNERS) {
            let (d, s) = (deadline.clone(), stop.clone());
            if let Ok(h) = std::thread::Builder::new()
                .name(format!("keep-awake {cpu}"))
                .spawn(move || spin(cpu, &d, &s))
            {
                threads.push(h);
            }
        }
        KeepAwake {
            deadline,
            stop,
            spinners: threads.len(),
            threads,
            _pm_qos: pm_qos,
        }
    }

    /// Number of spinner threads running.
    pub fn spinners(&self) -> usize {
        self.spinners
    }
}

impl Drop for KeepAwake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}

/// CPUs in the calling thread's affinity mask.
fn allowed_cpus() -> Vec<usize> {
    match nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)) {
        Ok(set) => (0..nix::sched::CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn spin(cpu: usize, deadline: &AwakeDeadline, stop: &AtomicBool) {
    let mut set = nix::sched::CpuSet::new();
    if set.set(cpu).is_err()
        || nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).is_err()
    {
        return;
    }
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: valid sched_param for the calling thread. Without SCHED_IDLE the spinner would
    // compete with the hosts' processes, so it does not run at all.
    if unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_IDLE, &param) } != 0 {
        return;
    }
    while !stop.load(Ordering::Relaxed) {
        let now = now_ns();
        if deadline.active(now) {
            let until = now + 100_000;
            while now_ns() < until {
                std::hint::spin_loop();
            }
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_extends_by_the_linger_time_and_expires() {
        let d = AwakeDeadline::default();
        assert!(!d.active(5));
        d.touch(10_000_000);
        assert!(d.active(10_000_000 + LINGER_NS - 1));
        assert!(!d.active(10_000_000 + LINGER_NS));
        // A touch less than 1 ms later does not write (the deadline moves in 1 ms steps).
        d.touch(10_500_000);
        assert!(!d.active(10_000_000 + LINGER_NS));
        d.touch(11_000_001);
        assert!(d.active(11_000_000 + LINGER_NS));
    }

    #[test]
    fn spinners_start_and_stop() {
        let k = KeepAwake::start();
        assert_eq!(k.spinners(), allowed_cpus().len().min(MAX_SPINNERS));
        k.deadline.touch(now_ns());
        std::thread::sleep(Duration::from_millis(5));
        drop(k); // joins every spinner; a hang here fails the test by timeout
    }
}
