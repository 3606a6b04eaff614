//! `longhaul perf`: memory-to-memory measurement over the kernel's TCP, in the manner of iperf.
//!
//! Seed 004 shows what a path check looks like — `iperf -c HOST -i 2 -w 32M -l 8M -t 300`, one line
//! of transfer and bandwidth per interval, the granted window next to the requested one — and what
//! it cannot show: why the first seconds were slow (slow start) and whether there was loss ("I
//! think we were lucky not to see any congestion"). perf adds, per interval and stream, what the
//! kernel knows from `TCP_INFO` — retransmits, congestion window, smoothed RTT — and writes the
//! same result summary as `sim` and `lab`, so a real path compares directly with its simulation.
//!
//! * [`protocol`]: the framed control protocol (magic, version, JSON messages);
//! * [`server`]: the accept loop that survives any client;
//! * [`client`]: the test itself; [`report`]: iperf-style text; [`summary`]: the `-J` JSON;
//! * [`socket`], [`tcp_info`]: socket options and `TCP_INFO`; [`sender_limits`]: what held the
//!   sender back.
//!
//! Only the client → server direction is measured (iperf's default); the sender's congestion
//! control is the client's `-C`.

pub mod client;
pub mod protocol;
pub mod report;
pub mod sender_limits;
pub mod server;
pub mod socket;
pub mod summary;
pub mod tcp_info;

pub use client::{run_client, ClientConfig, ClientError, Interval, PerfRun, Progress, Quiet};
pub use sender_limits::SenderLimits;
pub use server::{Server, ServerConfig, ServerEvent};
pub use summary::{interval_bytes, stream_counts, to_summary, PathFacts, SERIES_BASIS};

/// The port `longhaul perf` listens on by default (iperf3 uses 5201).
pub const DEFAULT_PORT: u16 = 5301;
