//! Establishing the connection.
//!
//! Plain: the client sends a handshake carrying its receive window and mode; the server
//! answers with its own and is established at once; the client is established when the answer
//! arrives (its RTT is the first sample). Lost handshakes are resent on the retransmission timer
//! with backoff. Either side may then send data.
//!
//! Security on ([`crate::secure`]), the same fields ride in the Noise handshake instead: INIT,
//! RESPONSE (the client is established when it arrives and its key is accepted), FINISH (the
//! server is established when it authenticates and the client's key is accepted); the client
//! resends FINISH on its retransmission timer until a sealed datagram from the server shows it
//! arrived. The handshake's cryptography and state are the session's
//! (`crates/proto/src/secure/session.rs`); what they mean for the connection is decided here.
//! Both ends must agree on synthetic or real mode.

use super::{Connection, Side, State};
use crate::error::PacketError;
use crate::packet::{CloseCode, Handshake};
use crate::secure::session::InitOutcome;
use longhaul_cc::Time;
use std::time::Duration;

impl Connection {
    pub(super) fn on_handshake(&mut self, now: Time, h: Handshake) -> Result<(), PacketError> {
        if let Err(e) = self.check_mode(h.synthetic) {
            self.close_with(CloseCode::ProtocolError);
            return Err(e);
        }
        match (self.side, h.response) {
            (Side::Server, false) => {
                // A request; a repeat means our answer was lost.
                self.peer_max_offset = self.peer_max_offset.max(h.recv_window);
                self.handshake_echo_us = h.timestamp_us;
                self.handshake_pending = true;
                if self.state == State::Listening {
                    self.state = State::Established;
                }
                Ok(())
            }
            (Side::Client, true) => {
                if self.state == State::Connecting {
                    let echo = handshake_echo(now, h.echo_us)?;
                    self.handshake_rtt(now, echo);
                    self.establish(h.recv_window);
                }
                Ok(())
            }
            (Side::Server, true) => Err(PacketError::UnexpectedPacket(
                "handshake response",
                "server",
            )),
            (Side::Client, false) => {
                Err(PacketError::UnexpectedPacket("handshake request", "client"))
            }
        }
    }

    fn mode_name(synthetic: bool) -> &'static str {
        if synthetic {
            "synthetic"
        } else {
            "real"
        }
    }

    pub(super) fn check_mode(&self, peer_synthetic: bool) -> Result<(), PacketError> {
        if peer_synthetic != self.config.synthetic {
            return Err(PacketError::ModeMismatch {
                local: Self::mode_name(self.config.synthetic),
                peer: Self::mode_name(peer_synthetic),
            });
        }
        Ok(())
    }

    /// Server: the client's INIT. The first is answered with a RESPONSE (the connection stays
    /// listening until FINISH); a repeated one is answered with the same RESPONSE again.
    pub(super) fn on_init(&mut self, now: Time, message: &[u8]) -> Result<(), PacketError> {
        if self.side != Side::Server {
            return Err(PacketError::UnexpectedPacket("INIT", "client"));
        }
        if self.state != State::Listening {
            return Err(PacketError::RepeatedHandshake("INIT"));
        }
        let synthetic = self.config.synthetic;
        let recv_window = self.recv.advertise();
        let outcome = self.session().on_init(message, |hello, cipher| {
            crate::secure::handshake::ServerHello {
                synthetic,
                recv_window,
                timestamp_us: now.as_micros(),
                echo_us: hello.timestamp_us,
                cipher,
            }
        })?;
        if let InitOutcome::New(hello) = outcome {
            self.peer_max_offset = hello.recv_window;
            self.peer_synthetic = hello.synthetic;
        }
        self.handshake_pending = true;
        Ok(())
    }

    /// Client: the server's RESPONSE. Its key is checked against the policy; then FINISH goes
    /// out, the keys are in place and the connection is established.
    pub(super) fn on_response(&mut self, now: Time, message: &[u8]) -> Result<(), PacketError> {
        if self.side != Side::Client {
            return Err(PacketError::UnexpectedPacket("RESPONSE", "server"));
        }
        if self.state != State::Connecting {
            return Err(PacketError::RepeatedHandshake("RESPONSE"));
        }
        let hello = match self.session().on_response(message) {
            Ok(h) => h,
            Err(e) => {
                if self.session().broken() {
                    self.close_with(CloseCode::HandshakeFailed);
                }
                return Err(e);
            }
        };
        self.last_received = now;
        if !self.session().peer_allowed() {
            // Not the server we meant to reach: stop before revealing who we are.
            self.close_with(CloseCode::PeerKeyMismatch);
            return Ok(());
        }
        if let Err(e) = self.session().write_finish() {
            self.close_with(CloseCode::HandshakeFailed);
            return Err(e);
        }
        self.finish_pending = true;
        self.scratch = vec![0; self.config.max_datagram_size()];
        if let Err(e) = self.check_mode(hello.synthetic) {
            // FINISH goes out first, so that the close can be sealed.
            self.close_with(CloseCode::ProtocolError);
            return Err(e);
        }
        let echo = handshake_echo(now, hello.echo_us)?;
        if !self.handshake_repeated {
            // Karn: after a repeated INIT the echo may belong to an earlier copy.
            self.handshake_rtt(now, echo);
        }
        self.establish(hello.recv_window);
        Ok(())
    }

    /// The handshake's round trip as an RTT sample. Measured before any queue of ours:
    /// delay-based controllers take it as the propagation delay (Linux: the SYN-ACK's RTT
    /// enters tp->rtt_min).
    fn handshake_rtt(&mut self, now: Time, echo: Time) {
        let sample = self.rtt_sample(now, echo);
        self.update_rtt(sample, Duration::ZERO);
        self.cc.on_rtt_sample(now, sample);
        self.stats.rtt_samples += 1;
    }

    /// The handshake is over: the peer's window is known and no handshake message is repeated.
    fn establish(&mut self, peer_recv_window: u64) {
        self.peer_max_offset = peer_recv_window;
        self.state = State::Established;
        self.rto_backoff = 0;
        self.handshake_sent_at = None;
    }

    /// Server: the client's FINISH. Once it authenticates, the client's key is checked against
    /// the policy: accepted, the connection is established; refused, a sealed close
    /// `Unauthorized` answers and nothing of the client's is taken.
    pub(super) fn on_finish(&mut self, now: Time, message: &[u8]) -> Result<(), PacketError> {
        if self.side != Side::Server {
            return Err(PacketError::UnexpectedPacket("FINISH", "client"));
        }
        if self.state != State::Listening {
            return Err(PacketError::RepeatedHandshake("FINISH"));
        }
        self.session().on_finish(message)?;
        self.last_received = now;
        self.handshake_pending = false;
        if !self.session().peer_allowed() {
            self.close_with(CloseCode::Unauthorized);
            return Ok(());
        }
        if let Err(e) = self.check_mode(self.peer_synthetic) {
            self.close_with(CloseCode::ProtocolError);
            return Err(e);
        }
        self.scratch = vec![0; self.config.max_datagram_size()];
        self.state = State::Established;
        Ok(())
    }

    /// Security on: the next handshake message to send, if one is due: the client's INIT (new,
    /// or the same again) and FINISH, the server's RESPONSE.
    pub(super) fn poll_handshake_message(&mut self, now: Time, buf: &mut [u8]) -> Option<usize> {
        match self.side {
            Side::Client if self.finish_pending => {
                let n = self.session().finish_datagram(buf)?;
                self.finish_pending = false;
                Some(n)
            }
            Side::Client if self.handshake_pending && self.state == State::Connecting => {
                let (synthetic, window) = (self.config.synthetic, self.recv.advertise());
                let (n, repeated) =
                    self.session()
                        .write_init(synthetic, window, now.as_micros(), buf)?;
                self.handshake_pending = false;
                self.handshake_sent_at = Some(now);
                self.handshake_repeated |= repeated;
                Some(n)
            }
            Side::Server if self.handshake_pending && self.state == State::Listening => {
                let n = self.session().response_datagram(buf)?;
                self.handshake_pending = false;
                Some(n)
            }
            _ => None,
        }
    }

    /// Client, security on: FINISH was sent and nothing sealed from the server has shown yet
    /// that it arrived.
    pub(super) fn finish_unconfirmed(&self) -> bool {
        self.side == Side::Client && self.secure.as_ref().is_some_and(|s| !s.confirmed())
    }
}

/// The peer's echo of our handshake timestamp; one from the future is refused.
fn handshake_echo(now: Time, echo_us: u64) -> Result<Time, PacketError> {
    let echo = Time::from_micros(echo_us);
    if echo > now {
        return Err(PacketError::FutureTimestamp {
            echo_us,
            now_us: now.as_micros(),
        });
    }
    Ok(echo)
}
