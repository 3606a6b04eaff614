//! One module per subcommand.

pub mod cc;
pub mod compare;
pub mod reproduce;
pub mod sim;
