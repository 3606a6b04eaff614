//! Where a datagram the receiving thread did not open goes: to its session, or, for a
//! handshake's first datagram, through admission to a new session.

use super::session::{Session, Whose};
use super::{PeerMap, RecvOptions};
use crate::admission::{self, Door as Admission, Slot, Tokens};
use crate::part::Landing;
use crate::recv_thread::Openers;
use crate::socket::Arrival;
use crate::store::Store;
use longhaul_proto::{Connection, Side};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

/// Where a datagram not already opened goes: to its session, or, for an INIT (a plain
/// handshake without security), through admission to a new one.
pub(super) struct Door<'a> {
    pub(super) sessions: &'a mut PeerMap<Session>,
    pub(super) options: &'a RecvOptions,
    pub(super) tokens: &'a Tokens,
    pub(super) store: &'a mut Store,
    pub(super) secure: bool,
    /// Datagrams to send once the reading is done: RETRYs, and the service's answers.
    pub(super) replies: Vec<(SocketAddr, Vec<u8>)>,
    /// The receiving thread's table of keys, which must forget an evicted session.
    pub(super) openers: Option<Arc<Openers>>,
    /// Datagrams without a session that opened none (see
    /// [`Received::without_session`](super::Received::without_session)).
    pub(super) without_session: &'a mut u64,
    /// When this batch of datagrams was read: a session's `last_heard` (one clock read per
    /// batch, not per datagram; its uses count seconds).
    pub(super) heard: Instant,
}

impl Door<'_> {
    /// The piece the session of `peer` fills next, to receive the next datagram into
    /// ([`Session::land`]).
    pub(super) fn land(&mut self, peer: SocketAddr) -> Option<Landing> {
        self.sessions.get_mut(&peer)?.land(self.store)
    }

    /// A datagram received into `landing`, the piece of `from`'s session: handled there.
    pub(super) fn landed(&mut self, from: SocketAddr, mut landing: Landing, n: usize, at: Arrival) {
        let s = self.sessions.get_mut(&from).expect("landing in a session");
        // The service's own datagrams go to its sessions, never to a transfer's connection.
        let service = self.options.service.as_ref();
        if service.is_some_and(|g| g.owns(&landing.area()[..n])) {
            s.give_back(self.store, landing, 0..0);
            return;
        }
        if s.landed(self.store, at, landing, n).is_ok() {
            s.last_heard = self.heard;
        }
    }

    /// A datagram received into `landing`, the piece of `peer`'s session, that is not for it
    /// (another sender's, or a coalesced run): the piece goes back untouched, the datagram's
    /// bytes are copied into `buf`.
    pub(super) fn not_landed(
        &mut self,
        peer: SocketAddr,
        mut landing: Landing,
        buf: &mut [u8],
        n: usize,
    ) {
        buf[..n].copy_from_slice(&landing.area()[..n]);
        if let Some(s) = self.sessions.get_mut(&peer) {
            s.give_back(self.store, landing, 0..0);
        }
    }

    pub(super) fn datagram(&mut self, from: SocketAddr, d: &mut [u8], at: Arrival) {
        let (sessions, options, tokens, secure) =
            (&mut *self.sessions, self.options, self.tokens, self.secure);
        // The service's own datagrams go to its sessions, never to a connection.
        if options.service.as_ref().is_some_and(|s| s.owns(d)) {
            if let Some(Whose::Service(g)) = sessions.get_mut(&from).map(|s| &mut s.whose) {
                if let Some(reply) = g.datagram(d, at.stamped) {
                    self.replies.push((from, reply));
                }
            }
            return;
        }
        // ACK delays count from the datagram's own arrival (see `socket`).
        let now = at.now;
        if let Some(s) = sessions.get_mut(&from) {
            if s.datagram(self.store, at, d).is_ok() {
                s.last_heard = self.heard;
            }
            return;
        }
        // Only an INIT (or, without security, a plain handshake) may open a session.
        let slots: Vec<Slot> = sessions
            .iter()
            .map(|(p, s)| Slot {
                peer: *p,
                established: s.past_handshake(),
                idle: s.last_heard.elapsed(),
            })
            .collect();
        match admission::at_the_door(&options.limits, tokens, &slots, from, d, secure) {
            Admission::NotAnInit => *self.without_session += 1,
            Admission::Drop => {}
            Admission::Retry(retry) => self.replies.push((from, retry)),
            Admission::Admit { evict } => {
                let Ok(mut conn) = Connection::new(options.config.clone(), Side::Server, now)
                else {
                    return;
                };
                // Only a valid handshake opens a session: stray datagrams cost no state.
                if conn.handle_packet_at(now, at.stamped, d, false).is_err() || conn.is_closed() {
                    *self.without_session += 1;
                    return;
                }
                if let Some((peer, mut old)) = evict.and_then(|p| sessions.remove_entry(&p)) {
                    old.suspend_all(self.store);
                    if let Some(o) = &self.openers {
                        o.remove(&peer);
                    }
                }
                let undecided = options.service.is_some();
                sessions.insert(from, Session::new(conn, from, undecided));
            }
        }
    }
}
