//! An emulator instance around one command, as `longhaul emu pair` and `longhaul emu shell` run
//! it: build the path, run the command on side a until it exits, a termination signal arrives
//! or a deadline passes, then tear the path down; and a command run on a side of an instance
//! that is already running (`longhaul emu exec`). What people should read goes through a `say`
//! callback, one line at a time; the caller prints it.

use crate::emulator::{spawn_on, Emulator, EmulatorError, Mode, Options, Side, Summary};
use crate::sys::signals::{block_termination_signals, wait_signal};
use crate::sys::{pidns, state};
use std::process::Child;
use std::time::{Duration, Instant};

/// What the run settings can get wrong before the path is built.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OptionError(pub String);

/// The command line's output settings, checked against this machine and each other.
#[derive(Debug, Clone, Default)]
pub struct OutputSettings {
    /// Per-packet event log file.
    pub event_log: Option<std::path::PathBuf>,
    /// Directory for `a.pcap` and `b.pcap`.
    pub pcap_dir: Option<std::path::PathBuf>,
    /// Spin this long before a release (default: measured).
    pub spin: Option<Duration>,
    /// Normal instead of real-time priority for the forwarding threads.
    pub no_realtime: bool,
    /// Pin the forwarding threads to this CPU; it must be one this process may run on.
    pub forwarder_cpu: Option<usize>,
    /// TUN offloads off.
    pub no_offload: bool,
    /// The coalescing span of offloaded super-packets; refused with `no_offload`.
    pub coalesce: Option<Duration>,
    /// One polling thread for both directions.
    pub busy_poll: bool,
}

/// A duration in nanoseconds, saturating past 584 years.
fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

impl Options {
    /// These options with `out` laid over them; refuses a CPU this process may not run on, and
    /// a coalescing span without offloads.
    pub fn with_output(mut self, out: &OutputSettings) -> Result<Options, OptionError> {
        self.event_log = out.event_log.clone();
        self.pcap_dir = out.pcap_dir.clone();
        if out.no_realtime {
            self.realtime_priority = 0;
        }
        self.spin_ns = out.spin.map(nanos);
        if let Some(cpu) = out.forwarder_cpu {
            let online = crate::sys::clock::allowed_cpus();
            if !online.contains(&cpu) {
                return Err(OptionError(format!(
                    "--forwarder-cpu {cpu}: this process may run on CPUs {online:?} only (see \
                     `nproc`, `taskset -p $$`)"
                )));
            }
            self.forwarder_cpu = Some(cpu);
        }
        self.offload = !out.no_offload;
        if let Some(c) = out.coalesce {
            if out.no_offload {
                return Err(OptionError(
                    "--coalesce applies to offloaded super-packets; drop it or --no-offload".into(),
                ));
            }
            self.coalesce_ns = nanos(c);
        }
        self.busy_poll = out.busy_poll;
        Ok(self)
    }
}

/// Builds the path of `opts` in `mode`, runs `command` (if any) on side a, and stops when it
/// exits, a termination signal arrives or `deadline` passes. Returns the emulator's summary
/// and the exit code to pass on: the command's (0 for none), 128 + a signal's, within 0..=255.
pub fn run(
    mode: Mode,
    opts: Options,
    command: &[String],
    deadline: Option<Instant>,
    say: &mut dyn FnMut(&str),
) -> Result<(Summary, i32), EmulatorError> {
    for line in opts.link.describe().lines() {
        say(&format!("longhaul emu: {line}"));
    }
    block_termination_signals();
    let emu = Emulator::start(mode, opts)?;
    say(&emu.state().describe());
    if let (Some(cpu), Some(hosts)) = (emu.forwarder_cpu(), emu.host_cpus()) {
        say(&format!(
            "longhaul emu: busy polling on CPU {cpu}; programs run through the emulator use CPUs \
             {hosts:?}"
        ));
    }
    if mode == Mode::Pair {
        say(&format!(
            "run commands with: longhaul emu exec a -- CMD   (or: ip netns exec {} CMD)",
            emu.state().side_a.as_deref().unwrap_or_default()
        ));
    }
    let child = match command.first() {
        None => {
            if deadline.is_none() {
                say("press Ctrl-C to stop");
            }
            None
        }
        Some(program) => Some(
            emu.spawn(&mut emu.command(Side::A, command))
                .map_err(|source| EmulatorError::Io {
                    what: format!("starting {program}"),
                    source,
                })?,
        ),
    };
    let code = supervise(child, deadline, say)?;
    let summary = emu.stop()?;
    Ok((summary, code))
}

/// Runs `command` on `side` of the running instance `id` (the only one when `None`) in its PID
/// namespace, so that it and whatever it starts end with the emulator; waits for it and
/// returns its exit code (as [`run`]'s).
pub fn exec(
    id: Option<u32>,
    side: Side,
    command: &[String],
    say: &mut dyn FnMut(&str),
) -> Result<i32, String> {
    let inst = state::running(id)?;
    block_termination_signals();
    let child = spawn_on(&inst, side, command)?;
    supervise(Some(child), None, say).map_err(|e| e.to_string())
}

/// [`pidns::supervise`] with the termination signals, each said as it stops the run.
fn supervise(
    child: Option<Child>,
    deadline: Option<Instant>,
    say: &mut dyn FnMut(&str),
) -> Result<i32, EmulatorError> {
    let code = pidns::supervise(child, deadline, &mut |d| {
        let sig = wait_signal(d);
        if let Some(sig) = sig {
            say(&format!("longhaul emu: signal {sig}, stopping"));
        }
        sig
    })
    .map_err(|source| EmulatorError::Io {
        what: "waiting for the command".into(),
        source,
    })?;
    Ok(code.unwrap_or(0).clamp(0, 255))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LinkConfig;

    #[test]
    fn offload_forwarder_cpu_and_coalesce_settings() {
        let link = LinkConfig::default();
        let with = |f: &OutputSettings| Options::new(link.clone()).with_output(f);
        let mut f = OutputSettings::default();
        let o = with(&f).unwrap();
        assert!(o.offload);
        assert_eq!(o.coalesce_ns, crate::emulator::DEFAULT_COALESCE_NS);
        assert_eq!(o.forwarder_cpu, None);
        f.no_offload = true;
        f.forwarder_cpu = Some(crate::sys::clock::allowed_cpus()[0]);
        let o = with(&f).unwrap();
        assert!(!o.offload);
        assert_eq!(o.forwarder_cpu, f.forwarder_cpu);
        f.forwarder_cpu = Some(100_000);
        let e = with(&f).unwrap_err().to_string();
        assert!(e.contains("--forwarder-cpu 100000"), "{e}");
        f.forwarder_cpu = None;
        f.coalesce = Some(Duration::from_micros(5));
        assert!(with(&f).is_err(), "--coalesce needs offloads");
        f.no_offload = false;
        assert_eq!(with(&f).unwrap().coalesce_ns, 5_000);
        assert!(!with(&f).unwrap().busy_poll);
        f.busy_poll = true;
        assert!(with(&f).unwrap().busy_poll);
        f.spin = Some(Duration::from_micros(30));
        assert_eq!(with(&f).unwrap().spin_ns, Some(30_000));
    }
}
