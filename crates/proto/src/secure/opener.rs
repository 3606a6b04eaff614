//! Opening sealed datagrams away from the connection's thread.
//!
//! Opening a datagram is an AEAD decryption under a key the connection already holds; it
//! changes nothing. What does change state — the anti-replay window, following the peer to a
//! newer key, the count of failures towards the integrity limit — stays with the connection.
//! So a driver can take a copy of the receive keys ([`crate::Connection::opener`]), open
//! datagrams with it on another thread, and hand the connection what opened
//! ([`crate::Connection::handle_opened`]), which then decides as if it had opened them itself:
//! the generation of the key that authenticated the datagram must still be one it takes
//! (current, previous for an older seal number, or up to four ahead), and the seal number must
//! pass the replay window. Only the order differs: the window is checked after the decryption
//! instead of before, which costs a replayed datagram one decryption and nothing else.
//!
//! A copy goes out of date when the connection's keys move ([`Opener::epoch`] against
//! [`crate::Connection::opener_epoch`]); a datagram whose phase names a key the copy does not
//! hold is handed over as it arrived ([`OpenAttempt::Pass`]), and the connection opens it.

use super::keys::{HeldKeys, OpenError};
use super::session::MAX_DATAGRAM;
use crate::packet::{self, Outer, SEAL_HEADER_LEN};

/// A copy of a connection's receive keys, to open its datagrams on any thread.
#[derive(Clone, Debug)]
pub struct Opener {
    keys: HeldKeys,
    epoch: u64,
}

/// A datagram that authenticated: which key and seal number, and where its plain packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenedDatagram {
    pub(crate) generation: u64,
    pub(crate) seal_number: u64,
    len: usize,
}

impl OpenedDatagram {
    /// The plain packet inside `datagram` (the bytes [`Opener::open`] opened in place; other
    /// bytes give a packet that does not decode, or nothing).
    pub fn plain<'a>(&self, datagram: &'a [u8]) -> &'a [u8] {
        datagram
            .get(SEAL_HEADER_LEN..SEAL_HEADER_LEN + self.len)
            .unwrap_or(&[])
    }
}

/// What [`Opener::open`] made of a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenAttempt {
    /// Authenticated and decrypted in place: for [`crate::Connection::handle_opened`].
    Opened(OpenedDatagram),
    /// Sealed, but it did not authenticate under the key its phase names (its bytes are now
    /// unspecified): for [`crate::Connection::handle_open_failed`].
    Failed,
    /// Not a sealed datagram, or sealed under a key this copy does not hold: untouched, for
    /// [`crate::Connection::handle_packet_at`].
    Pass,
}

impl Opener {
    pub(crate) fn new(keys: HeldKeys, epoch: u64) -> Opener {
        Opener { keys, epoch }
    }

    /// Which state of the connection's keys this copy is of.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Open `datagram` in place if it is sealed under a key this copy holds.
    pub fn open(&self, datagram: &mut [u8]) -> OpenAttempt {
        let (key_phase, seal_number) = match packet::decode_outer(datagram) {
            Ok(Outer::Sealed {
                key_phase,
                seal_number,
            }) => (key_phase, seal_number),
            _ => return OpenAttempt::Pass,
        };
        if datagram.len() > MAX_DATAGRAM {
            return OpenAttempt::Pass;
        }
        match self.keys.open(key_phase, seal_number, datagram) {
            Ok((len, generation)) => OpenAttempt::Opened(OpenedDatagram {
                generation,
                seal_number,
                len,
            }),
            Err(OpenError::Failed) => OpenAttempt::Failed,
            Err(OpenError::UnknownPhase { .. }) => OpenAttempt::Pass,
        }
    }
}
