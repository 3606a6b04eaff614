//! One module per subcommand.

pub mod cc;
