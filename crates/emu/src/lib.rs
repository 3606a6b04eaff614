//! longhaul's WAN emulator: a long fat network on one machine.
//!
//! Seed 001 asks for a lab "where we will know exactly where packets are lost" and lists what was
//! wrong with dummynet: imprecise timing, no priority for its events, bandwidth that fluctuates
//! with the workload. The kernel here has no netem, so the path is built in user space, on the
//! design of mahimahi (Netravali et al., USENIX ATC 2015): the hosts live in network namespaces,
//! each with a TUN device, and this process carries every packet from one TUN to the other through
//! a model of the path — a bottleneck queue, a serialiser at the configured rate, random loss on
//! the wire, and a propagation delay line.
//!
//! Unlike mahimahi, time is kept in nanoseconds on the monotonic clock, each packet's release time
//! is *computed* from logical timestamps rather than slept for (so timer error never accumulates),
//! the whole path is one pass in one thread per direction, and every drop is counted with its
//! reason.
//!
//! The main types: [`LinkConfig`] describes the path in each direction, [`Emulator::start`]
//! builds it as a pair or shell of namespaces and runs it, and its [`Summary`] counts what
//! each direction carried, dropped and delayed.
//!
//! Layout: `model` is pure and clock-free (unit-tested with explicit times); `config` holds the
//! typed settings and `settings` reads them as users write them (scenario file, flags), and
//! `scenario` maps a simulator scenario's link onto them; `sys` wraps the kernel (TUN,
//! namespaces, timers, termination signals, state files); `forward` is the per-direction I/O
//! loop; `gso` reads and cuts the TCP super-packets a TUN with offloads hands over, and
//! `coalesce` decides which of their wire segments leave together; `ecn` reads and marks an IP
//! packet's ECN field, as RED with ECN does; `emulator` sets up and tears
//! down a pair or shell, and `run` runs one around a command (or a command on a running one);
//! `observe` holds the counters, lateness statistics, event log and pcap writer, and `report`
//! the path as built and the summary as text for people; `naive` is the baseline forwarder the
//! benchmark compares against.

#![warn(missing_docs)]

pub mod bench;
pub mod coalesce;
pub mod config;
pub mod ecn;
pub mod emulator;
pub mod forward;
pub mod gso;
pub mod model;
pub mod naive;
pub mod observe;
pub mod poll;
pub mod probe;
pub mod report;
pub mod run;
pub mod scenario;
pub mod settings;
pub mod sys;

pub use config::{ConfigError, DirectionConfig, LinkConfig, RateConfig};
pub use emulator::{Emulator, EmulatorError, Mode, Options, Summary};
