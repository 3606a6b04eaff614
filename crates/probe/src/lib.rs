//! # longhaul-probe: what a path is, measured with packet trains
//!
//! Before moving a large data set over a long path, one wants to know the path: its round-trip
//! time, the capacity of its narrowest link, how much of that is free, how much it can queue and
//! how much it loses at random. This crate estimates each of these from the send and receive
//! times of probe packets. The estimators here are pure functions and small state machines: they
//! read no clock and touch no socket; a driver sends the packets they ask for, and hands back
//! what both ends saw ([`Train`]).
//!
//! The two ends' clocks share no epoch: a packet's *one-way delay* `received − sent` carries an
//! unknown constant offset, so only its changes within a measurement mean anything. Round-trip
//! times are read on one clock. Clock drift over a few seconds (tens of ppm) is ignored.
//!
//! ## The methods
//!
//! - **Round-trip time** ([`rtt`]): the minimum of echoed ping times is the path's base RTT
//!   (propagation and serialization, no queueing); the jitter is the mean absolute difference
//!   of consecutive samples, as RTP's interarrival jitter (RFC 3550, §6.4.1) without smoothing.
//! - **Capacity by dispersion** ([`capacity`]): packets sent back to back leave the narrowest
//!   link spaced by their serialization time there, `size / C`, and keep that spacing to the
//!   receiver (Keshav, "A control-theoretic approach to flow control", SIGCOMM 1991, the
//!   *packet pair*). Cross traffic that slips between the packets widens some gaps, and a
//!   receiver that takes packets in batches narrows others; Dovrolis, Ramanathan and Moore
//!   ("Packet-dispersion techniques and a capacity-estimation methodology", IEEE/ACM ToN 12(6),
//!   2004) show that the *mode* of many pair samples finds the capacity where their mean does
//!   not, and that a whole train's dispersion converges to the *asymptotic dispersion rate*,
//!   which is below the capacity when cross traffic is present. Both are computed here: the
//!   median over trains, and the mode of pair samples.
//! - **Available bandwidth by SLoPS** ([`slops`]): a periodic stream sent faster than the free
//!   capacity of the tightest link fills its queue, so the stream's one-way delays trend
//!   upward; a stream slower than that does not. Jain and Dovrolis ("End-to-end available
//!   bandwidth: measurement methodology, dynamics, and relation with TCP throughput",
//!   SIGCOMM 2002; the tool *pathload*) search the rate at which the trend turns, deciding
//!   each stream's trend with two statistics of its delays (PCT and PDT).
//! - **Effective queue and maximum burst size** ([`burst`]): a burst sent faster than the
//!   bottleneck drains builds a queue; its last packets wait longer the larger the burst,
//!   until the buffer is full and the queue drops. The queueing delay at that point, times the
//!   capacity, is the buffer; the largest burst that arrives whole is the *maximum burst size*
//!   (MBS), which the packet-drop-avoidance paper (seed 002, LBNL: "The MBS is also called
//!   effective queue size") makes the unit of loss-free sending: any burst above the MBS may
//!   make a router on the path drop packets.
//! - **Path MTU** ([`mtu`]): RFC 8899's datagram packetization-layer path MTU discovery:
//!   probe packets of chosen sizes with the don't-fragment bit set, a size confirmed by any of
//!   several probes arriving and refuted only by all of them being lost, so that neither a
//!   router that drops without ICMP (a black hole) nor random loss misleads it.
//! - **Random loss and reordering** ([`loss`]): packets lost from streams that did not queue
//!   are the path's random loss, given with a Wilson score interval (Wilson, JASA 22, 1927),
//!   which stays inside [0, 1] and is honest for the small counts a short probe sees; a packet
//!   that arrives before one sent ahead of it counts as reordered.
//!
//! ## The measurement
//!
//! [`probe`] ([`client`]) measures the path to a probe server ([`Server`], [`server`]) over
//! an authenticated longhaul connection, with probe datagrams beside it ([`wire`]), and returns
//! a [`Report`] ([`report`]); [`scenario`] writes the measured path as a scenario file for
//! the simulator and the lab, and [`predict`] runs every congestion controller on it in the
//! simulator and names the one to use. [`run`] puts a probe and a server together from the command
//! line's values, as `longhaul probe` runs them.
//!
//! Every result is an [`Estimate`]: the value, an interval, what the interval means, and the
//! method's name, so that a report says how much to trust each number.

#![warn(missing_docs)]

pub mod burst;
pub mod capacity;
pub mod client;
pub mod estimate;
pub mod loss;
pub mod mtu;
pub mod predict;
pub mod report;
pub mod rtt;
pub mod run;
pub mod scenario;
pub mod server;
pub mod slops;
pub mod train;
pub mod wire;

#[cfg(test)]
mod model;

pub use client::{probe, ProbeError, ProbeOptions};
pub use estimate::Estimate;
pub use report::Report;
pub use server::Server;
pub use train::{Packet, Train};
