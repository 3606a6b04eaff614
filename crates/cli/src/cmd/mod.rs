//! One module per subcommand.

pub mod cc;
pub mod compare;
pub mod emu;
pub mod kernel;
pub mod keygen;
pub mod lab;
pub mod perf;
pub mod remote;
pub mod reproduce;
pub mod sim;
pub mod sweep;
pub mod transfer;
pub mod tune;
