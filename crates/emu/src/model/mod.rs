//! The per-direction path model: pure, deterministic and clock-free.
//!
//! Every function here takes the current time as an argument (`Nanos`, nanoseconds on an
//! arbitrary monotonic epoch) and never reads a clock, sleeps or touches a file descriptor. The
//! I/O layer (`crate::forward`) reads packets from TUN devices, asks the model what happens to
//! each one, and writes them out at the release time the model computed. The same model can be
//! driven from a unit test with hand-picked times, which is how its exactness is checked.
//!
//! The stages, in the order a packet meets them (the simulator's link, `sim/src/port.rs`,
//! computed instead of slept for):
//!
//! 1. the bottleneck queue (`queue`, from `longhaul_path::queue`: drop-tail in packets and/or
//!    bytes counting what waits behind the packet on the wire, optionally RED in packets or
//!    bytes, marking ECN-capable packets when it has `ecn`), shared with the cross traffic
//!    generated at the bottleneck (`cross`: the simulator's generators, from
//!    `longhaul_path::cross`);
//! 2. the serialiser (`serializer`, from `longhaul_path::serializer`: a constant rate exact over
//!    each busy period, or a mahimahi trace from `longhaul_path::trace`), which computes the
//!    instant the last bit leaves the bottleneck from logical timestamps, counting each packet's
//!    bytes plus the link's framing overhead;
//! 3. random loss (`loss`, from `longhaul_path::loss`: Bernoulli or Gilbert–Elliott) — corruption
//!    on the wire: asked about every packet offered to the queue, cross traffic's too, and
//!    applied to one the queue accepted, after its transmission;
//! 4. the propagation delay line (`delay`, from `longhaul_path::delay`), with optional jitter,
//!    reordering and duplication, and per-flow extra delay keyed by port (`port_delay`).
//!
//! `path::PathModel` composes them and keeps the counters.

pub mod cross;
pub mod path;
pub mod port_delay;
pub mod red;

/// The delay line (jitter, reordering, duplication), shared with the simulator.
pub use longhaul_path::delay;
/// The random-loss models, shared with the simulator.
pub use longhaul_path::loss;
/// The bottleneck queue (drop-tail limits, RED and framing overhead), shared with the simulator.
pub use longhaul_path::queue;
/// The bottleneck's transmitter, shared with the simulator.
pub use longhaul_path::serializer;
/// mahimahi link traces and their serialiser.
pub use longhaul_path::trace;

/// Nanoseconds on the monotonic clock of whoever drives the model.
pub type Nanos = u64;

/// One second in `Nanos`.
pub const SECOND: Nanos = 1_000_000_000;
