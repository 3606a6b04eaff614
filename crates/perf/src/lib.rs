//! longhaul-perf: the two tools a network engineer runs on a real path.
//!
//! * [`perf`] — `longhaul perf server|client`: memory-to-memory TCP measurement over the kernel's
//!   TCP, in the manner of iperf (seed 004 shows the Land Speed Record's iperf run). Each report
//!   interval prints transfer, bitrate, retransmits, cwnd and RTT read from `TCP_INFO`; `-J` writes
//!   the result summary of docs/measurements.md (`longhaul_metrics::summary::Summary`, mode `perf`).
//! * [`tune`] — `longhaul tune --rate R --rtt T [--apply]`: the bandwidth-delay product, the socket
//!   buffers, txqueuelen, MTU and congestion-control advice of seed 004 and ESnet's fasterdata
//!   host-tuning pages, checked against the running host, with the exact commands to fix what
//!   falls short.
//!
//! The main types: [`perf::client::ClientConfig`] is what `longhaul perf client` asks for and
//! [`perf::client::PerfRun`] what it measured; [`tune::PathSpec`] is the path `tune` sizes a
//! host for and [`tune::TuneReport`] its checks of the host.

#![warn(missing_docs)]

pub mod perf;
pub mod tune;
