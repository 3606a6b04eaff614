//! Cross traffic generated at the bottleneck.
//!
//! Instead of an extra host sending competing traffic, the emulator injects synthetic packets
//! straight into the bottleneck queue. They take queue space and serialisation time exactly like
//! real packets (and are dropped by droptail/RED like them) but are discarded after the
//! bottleneck, so the hosts only see their effect: less capacity and more queueing delay.
//!
//! The generators are the simulator's, from `longhaul_path::cross`: every kind (cbr, poisson,
//! onoff, web), with `rate` the *average* offered load, a start and a stop, and the same
//! packets for the same seed. `PathModel` reads each source's [`CrossArrivals`] against its
//! clock (the epoch is the emulator's start) and feeds the packets due into the queue; a web
//! source sends its transfers at the direction's rate (a trace's mean rate).

pub use longhaul_path::cross::{CrossArrivals, CrossConfig, CrossProcess, CrossSource};
