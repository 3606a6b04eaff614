//! # longhaul-cc: congestion control for long fat networks
//!
//! Every algorithm longhaul ships — FAST, Scalable, HighSpeed, Reno, Vegas, CUBIC, BBR and the
//! Lion pacing controller — as a deterministic, sans-IO state machine behind one trait,
//! [`CongestionControl`]. A driver (the simulator, the UDP transport, a test) feeds it
//! [`event`]s with an explicit `now` and reads back the window, slow-start threshold, pacing
//! rate and maximum burst. Nothing here reads a clock, does I/O or allocates per ACK.
//!
//! Below the transports, [`sender`] holds the parts of one sender they share (in-flight records,
//! loss detection, the RTT estimator and timeout, delivery-rate samples, pacing), and
//! [`bottleneck`] is the smallest closed loop built from them, from which the shared test
//! vectors ([`vectors`]) are recorded.
//!
//! Algorithms are created by name with validated parameters:
//! ```
//! use longhaul_cc::{CcSpec, Setup};
//! let spec: CcSpec = "reno:beta=0.7".parse().unwrap();
//! let cc = spec.build(&Setup::default()).unwrap();
//! assert_eq!(cc.name(), "reno");
//! ```

#![warn(missing_docs)]

pub mod algorithms;
pub mod bottleneck;
pub mod controller;
pub mod event;
pub mod minmax;
pub mod params;
pub mod registry;
pub mod response;
pub mod sender;
mod serde_nanos;
#[cfg(test)]
mod testkit;
pub mod time;
pub mod vectors;
pub mod window;

pub use controller::{CongestionControl, Setup, INFINITE_SSTHRESH};
pub use event::{AckEvent, EcnEvent, Event, LossEvent, RateSample, RtoEvent, SentEvent};
pub use params::{ParamError, ParamKind, ParamSpec, Params, Preset, Value};
pub use registry::{algorithms, find, Algorithm, CcSpec};
pub use time::Time;
