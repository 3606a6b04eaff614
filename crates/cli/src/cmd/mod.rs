//! One module per subcommand.

pub mod cc;
pub mod compare;
pub mod completions;
pub mod emu;
#[cfg(feature = "kernel")]
pub mod kernel;
pub mod keygen;
#[cfg(feature = "kernel")]
pub mod lab;
pub mod man;
pub mod perf;
pub mod probe;
pub mod remote;
pub mod reproduce;
pub mod sim;
pub mod sweep;
pub mod transfer;
pub mod tune;
