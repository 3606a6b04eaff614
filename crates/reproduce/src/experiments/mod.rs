//! The seed experiments, one module each (the two Lion experiments share one).

pub mod equilibrium;
pub mod lion;
pub mod lion_buffers;
pub mod lion_matched;
pub mod lion_mbs;
pub mod reno_climb;
pub mod response;
pub mod scalable;
pub mod slide4;
pub mod table1;
