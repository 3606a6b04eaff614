//! The parts of one sender that every longhaul transport shares: in-flight records, loss
//! detection, the RTT estimator and retransmission timeout, delivery-rate samples and pacing.
//!
//! longhaul's transport (`crates/proto`), the simulator's TCP model
//! (`crates/sim/src/transport/model.rs`) and the single-bottleneck loop ([`crate::bottleneck`])
//! are three senders built from these modules, so each rule exists once:
//!
//! - [`sent`]: the records of packets in flight, a ring indexed by packet number;
//! - [`loss`]: RACK loss detection in RFC 9002 §6.1's form (packet and time thresholds);
//! - [`rtt`]: RFC 6298's estimator, RFC 9002's probe timeout and the backoff of RFC 6298 §5.5;
//! - [`rate`]: delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation);
//! - [`pacer`]: the pacing clock, as a token bucket and in Linux's train shape.
//!
//! They sit in this crate, below the transports, because the controllers' shared test vectors
//! are recorded from [`crate::bottleneck`] and must be recordable without a transport. Like the
//! controllers they are sans-IO: every call takes `now`, nothing reads a clock.

pub mod loss;
pub mod pacer;
pub mod rate;
pub mod rtt;
pub mod sent;
