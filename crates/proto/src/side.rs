//! Which end of a connection an endpoint is: the client starts the handshake, the server waits
//! for it. The connection and its secure session (`crates/proto/src/secure/session.rs`) both
//! act on it, so it sits below both.

/// Which end of the connection this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// Starts the handshake.
    Client,
    /// Waits for it.
    Server,
}
