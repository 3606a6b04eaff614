//! One module per subcommand.

pub mod cc;
pub mod compare;
pub mod emu;
pub mod kernel;
pub mod reproduce;
pub mod sim;
