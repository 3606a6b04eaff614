//! Another protocol served beside transfers on a receiver's socket: `longhaul probe`'s far end
//! (`longhaul_probe::server`), so that a `longhaul recv` answers probes with the keys, trust and
//! admission it admits senders with.
//!
//! A session starts as every session does: admission at the door, then the connection's
//! handshake. What the peer first writes on the connection's stream tells whose it is: a
//! sender writes the transfer protocol's magic (`crate::framing::MAGIC`), a service's client
//! something else ([`Service::claims`]). A service's session then gets the stream
//! ([`ServiceSession::advance`]) and the datagrams of its own kind from the same peer
//! ([`Service::owns`], [`ServiceSession::datagram`]), which travel beside the connection's and
//! are never handed to it. The receiver keeps driving the connection (timers, flushing,
//! closing), so a service holds no socket and no loop of its own.

use longhaul_proto::{Connection, Time};

/// A protocol a receiver serves beside transfers.
pub trait Service: Send + Sync {
    /// Whether a stream that starts with `first` (one or more bytes) is this service's:
    /// `None` while `first` is too short to tell.
    fn claims(&self, first: &[u8]) -> Option<bool>;
    /// Whether datagram `d` is one of this service's own (not a connection's).
    fn owns(&self, d: &[u8]) -> bool;
    /// A new session, for a connection whose stream the service claimed.
    fn session(&self) -> Box<dyn ServiceSession>;
}

/// One client's session of a [`Service`].
pub trait ServiceSession: Send {
    /// `input` arrived on the connection's stream (the first call has the bytes the claim
    /// was made on): act on it and write the answers to `conn`. An error ends the session
    /// with that reason.
    fn advance(&mut self, input: &[u8], conn: &mut Connection) -> Result<(), String>;
    /// One of the service's datagrams arrived from this session's peer, stamped by the kernel
    /// at `stamped`; the datagram to answer with, if any.
    fn datagram(&mut self, d: &[u8], stamped: Time) -> Option<Vec<u8>>;
    /// What the session did, for its report (e.g. `12 trains`).
    fn summary(&self) -> String;
}
