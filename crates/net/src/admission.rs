//! Who gets a session on the receiver: address validation and limits, decided before any
//! state or Diffie-Hellman work is spent on a datagram.
//!
//! A receiver open to the internet meets handshakes from addresses that will never finish
//! them, spoofed or not. Three rules keep them from locking out real senders:
//!
//! - **Retry tokens** (QUIC's Retry, RFC 9000 §8.1): when more than
//!   [`Limits::retry_above`] sessions are half-open, an INIT without a valid token gets a RETRY
//!   carrying one instead of a session. The token is the time it was made and an HMAC-SHA256
//!   (under a key drawn at start) of that time and the client's address: only a client that
//!   receives at its address can present it, it costs the receiver no state, and it expires
//!   after [`TOKEN_LIFETIME`]. The initiator thus pays a round trip before the receiver spends
//!   anything, and a spoofed flood earns only RETRYs no bigger than its INITs.
//!   A source that already has a half-open session needs a token too, whatever the load: an
//!   off-path attacker spoofing a victim's address can leave at most one half-open session in
//!   its name, and the victim, who receives the RETRY, gets in with the token.
//! - **Per-source limit**: at most [`Limits::per_source`] sessions from one IP address. An INIT
//!   with a valid token beyond it evicts that source's half-open session idle the longest (its
//!   address was just proven: it can only push out its own abandoned handshakes); only a source
//!   whose sessions are all established is refused.
//! - **Eviction**: when every session slot is taken, the half-open session idle the longest
//!   makes room; an established one is never evicted for a newcomer.
//! - **Expiry**: a session still half-open after [`Limits::handshake_timeout`] of silence is
//!   dropped by the receiver (see `recv`), so abandoned handshakes free their slots by
//!   themselves.

use hmac::{Hmac, Mac};
use rand_core::{OsRng, RngCore};
use sha2::Sha256;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a half-open session may stay silent: a handshake's three messages take a round
/// trip and a half, and a lost one is sent again after at most a few seconds of backoff.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a retry token is accepted.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(10);
const TAG_LEN: usize = 16;
/// Bytes of a token: seconds since the epoch, then the truncated HMAC.
pub const TOKEN_LEN: usize = 8 + TAG_LEN;

/// The receiver's admission settings.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Sessions at once.
    pub max_sessions: usize,
    /// Sessions from one IP address.
    pub per_source: usize,
    /// Demand a retry token once this many sessions are half-open (0: always).
    pub retry_above: usize,
    /// A session that has not finished its handshake after this long without a datagram from
    /// its peer is dropped.
    pub handshake_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_sessions: 64,
            per_source: 8,
            retry_above: 8,
            handshake_timeout: HANDSHAKE_TIMEOUT,
        }
    }
}

/// Makes and checks retry tokens.
pub struct Tokens {
    key: [u8; 32],
}

impl Tokens {
    /// Tokens under a key drawn from the operating system's random number generator at start.
    pub fn new() -> Tokens {
        let mut key = [0u8; 32];
        OsRng.fill_bytes(&mut key);
        Tokens { key }
    }

    /// The HMAC over a token's time and the address it was made for.
    fn mac(&self, secs: u64, peer: SocketAddr) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        mac.update(&secs.to_be_bytes());
        match peer.ip() {
            IpAddr::V4(a) => mac.update(&a.octets()),
            IpAddr::V6(a) => mac.update(&a.octets()),
        }
        mac.update(&peer.port().to_be_bytes());
        mac
    }

    /// A token for `peer`, made now.
    pub fn make(&self, peer: SocketAddr) -> [u8; TOKEN_LEN] {
        self.make_at(peer, now_secs())
    }

    fn make_at(&self, peer: SocketAddr, secs: u64) -> [u8; TOKEN_LEN] {
        let mut t = [0u8; TOKEN_LEN];
        t[..8].copy_from_slice(&secs.to_be_bytes());
        t[8..].copy_from_slice(&self.mac(secs, peer).finalize().into_bytes()[..TAG_LEN]);
        t
    }

    /// Whether `token` was made by this receiver for `peer` within the lifetime.
    pub fn check(&self, peer: SocketAddr, token: &[u8]) -> bool {
        self.check_at(peer, token, now_secs())
    }

    fn check_at(&self, peer: SocketAddr, token: &[u8], now: u64) -> bool {
        if token.len() != TOKEN_LEN {
            return false;
        }
        let secs = u64::from_be_bytes(token[..8].try_into().expect("8"));
        if secs > now || now - secs > TOKEN_LIFETIME.as_secs() {
            return false;
        }
        // Constant-time comparison of the truncated tag.
        self.mac(secs, peer)
            .verify_truncated_left(&token[8..])
            .is_ok()
    }
}

impl Default for Tokens {
    fn default() -> Tokens {
        Tokens::new()
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// One existing session as admission sees it.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    /// The peer's address.
    pub peer: SocketAddr,
    /// The handshake has completed.
    pub established: bool,
    /// Time since it last heard from its peer.
    pub idle: Duration,
}

/// What to do with a new INIT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Open a session (after evicting this one, if set).
    Admit {
        /// The peer whose half-open session to close first.
        evict: Option<SocketAddr>,
    },
    /// Answer with a RETRY carrying a token.
    Retry,
    /// Ignore the datagram.
    Drop,
}

/// What a server does with a datagram from `peer` that belongs to no session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Door {
    /// It is no handshake's first message (`secure`: no INIT): it opens nothing.
    NotAnInit,
    /// Ignore it.
    Drop,
    /// Send this RETRY, carrying a token, to `peer`.
    Retry(Vec<u8>),
    /// Open a session with it (after evicting this one, if set).
    Admit {
        /// The peer whose half-open session to close first.
        evict: Option<SocketAddr>,
    },
}

/// [`decide`] on datagram `d` from `peer`, which belongs to none of `sessions`: with security
/// on (`secure`) only an INIT may open a session, and its token is read from it; without, the
/// plain handshake carries no token, so none is demanded.
pub fn at_the_door(
    limits: &Limits,
    tokens: &Tokens,
    sessions: &[Slot],
    peer: SocketAddr,
    d: &[u8],
    secure: bool,
) -> Door {
    let token = if secure {
        match longhaul_proto::packet::handshake_token(d) {
            Some(t) => t,
            None => return Door::NotAnInit,
        }
    } else {
        &[][..]
    };
    let mut limits = limits.clone();
    if !secure {
        limits.retry_above = usize::MAX;
    }
    match decide(&limits, tokens, sessions, peer, token) {
        Decision::Drop => Door::Drop,
        Decision::Retry => {
            let mut buf = [0u8; 256];
            match longhaul_proto::packet::encode_retry(d, &tokens.make(peer), &mut buf) {
                Some(n) => Door::Retry(buf[..n].to_vec()),
                None => Door::Drop,
            }
        }
        Decision::Admit { evict } => Door::Admit { evict },
    }
}

/// Decide on an INIT from `peer` carrying `token` (empty if none).
pub fn decide(
    limits: &Limits,
    tokens: &Tokens,
    sessions: &[Slot],
    peer: SocketAddr,
    token: &[u8],
) -> Decision {
    let validated = !token.is_empty() && tokens.check(peer, token);
    if !token.is_empty() && !validated {
        // A stale or forged token: a client takes one RETRY only, so another would not help.
        return Decision::Drop;
    }
    let half_open = sessions.iter().filter(|s| !s.established).count();
    let same_source = |s: &&Slot| s.peer.ip() == peer.ip();
    let source_half_open = sessions
        .iter()
        .filter(same_source)
        .filter(|s| !s.established)
        .count();
    if !validated && (half_open >= limits.retry_above || source_half_open > 0) {
        return Decision::Retry;
    }
    let from_source = sessions.iter().filter(same_source).count();
    if from_source >= limits.per_source {
        // Only a proven address may push out its own abandoned handshakes.
        return match sessions
            .iter()
            .filter(same_source)
            .filter(|s| validated && !s.established)
            .max_by_key(|s| s.idle)
        {
            Some(s) => Decision::Admit {
                evict: Some(s.peer),
            },
            None => Decision::Drop,
        };
    }
    if sessions.len() < limits.max_sessions {
        return Decision::Admit { evict: None };
    }
    match sessions
        .iter()
        .filter(|s| !s.established)
        .max_by_key(|s| s.idle)
    {
        Some(s) => Decision::Admit {
            evict: Some(s.peer),
        },
        None => Decision::Drop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn tokens_bind_the_address_and_expire() {
        let t = Tokens::new();
        let a = addr("192.0.2.1:4000");
        let tok = t.make_at(a, 1000);
        assert!(t.check_at(a, &tok, 1000));
        assert!(t.check_at(a, &tok, 1010));
        assert!(!t.check_at(a, &tok, 1011), "expired");
        assert!(
            !t.check_at(addr("192.0.2.1:4001"), &tok, 1000),
            "other port"
        );
        assert!(
            !t.check_at(addr("192.0.2.2:4000"), &tok, 1000),
            "other host"
        );
        let mut forged = tok;
        forged[20] ^= 1;
        assert!(!t.check_at(a, &forged, 1000));
        assert!(
            !Tokens::new().check_at(a, &tok, 1000),
            "another receiver's key"
        );
        assert!(!t.check_at(a, &tok[..10], 1000));
    }

    fn slot(peer: &str, established: bool, idle_s: u64) -> Slot {
        Slot {
            peer: addr(peer),
            established,
            idle: Duration::from_secs(idle_s),
        }
    }

    #[test]
    fn half_open_floods_meet_retries_and_full_tables_evict_the_idlest_half_open() {
        let t = Tokens::new();
        let limits = Limits {
            max_sessions: 3,
            per_source: 2,
            retry_above: 2,
            handshake_timeout: HANDSHAKE_TIMEOUT,
        };
        let new = addr("198.51.100.7:9");
        // Few half-open sessions: admitted without a round trip.
        let s = [slot("192.0.2.1:1", false, 1)];
        assert_eq!(
            decide(&limits, &t, &s, new, &[]),
            Decision::Admit { evict: None }
        );
        // Many: a token is required, and a valid one admits.
        let s = [slot("192.0.2.1:1", false, 1), slot("192.0.2.2:1", false, 5)];
        assert_eq!(decide(&limits, &t, &s, new, &[]), Decision::Retry);
        assert_eq!(
            decide(&limits, &t, &s, new, &t.make(new)),
            Decision::Admit { evict: None }
        );
        assert_eq!(
            decide(&limits, &t, &s, new, &[1; TOKEN_LEN]),
            Decision::Drop
        );
        // Full: the half-open session idle longest goes, never an established one.
        let s = [
            slot("192.0.2.1:1", true, 100),
            slot("192.0.2.2:1", false, 5),
            slot("192.0.2.3:1", false, 9),
        ];
        assert_eq!(
            decide(&limits, &t, &s, new, &t.make(new)),
            Decision::Admit {
                evict: Some(addr("192.0.2.3:1"))
            }
        );
        let s = [
            slot("192.0.2.1:1", true, 1),
            slot("192.0.2.2:1", true, 1),
            slot("192.0.2.3:1", true, 1),
        ];
        assert_eq!(decide(&limits, &t, &s, new, &t.make(new)), Decision::Drop);
        // One source cannot take more than its share.
        let s = [
            slot("198.51.100.7:1", true, 1),
            slot("198.51.100.7:2", true, 1),
        ];
        assert_eq!(decide(&limits, &t, &s, new, &t.make(new)), Decision::Drop);
    }

    #[test]
    fn abandoned_handshakes_from_one_address_cannot_lock_it_out() {
        let t = Tokens::new();
        let limits = Limits::default();
        let victim = addr("192.0.2.9:5000");
        // Eight handshakes from the victim's address that never finished (aborted sends, or an
        // attacker spoofing it).
        let s: Vec<Slot> = (0..8)
            .map(|i| slot(&format!("192.0.2.9:{}", 6000 + i), false, i))
            .collect();
        // Without a token the victim's next INIT meets a RETRY (no state spent)...
        assert_eq!(decide(&limits, &t, &s, victim, &[]), Decision::Retry);
        // ... and with the token it pushes out its own idlest half-open handshake.
        assert_eq!(
            decide(&limits, &t, &s, victim, &t.make(victim)),
            Decision::Admit {
                evict: Some(addr("192.0.2.9:6007"))
            }
        );
        // Established sessions of that address are never pushed out.
        let s: Vec<Slot> = (0..8)
            .map(|i| slot(&format!("192.0.2.9:{}", 6000 + i), true, i))
            .collect();
        assert_eq!(
            decide(&limits, &t, &s, victim, &t.make(victim)),
            Decision::Drop
        );
    }

    #[test]
    fn a_source_with_a_half_open_session_needs_a_token_whatever_the_load() {
        let t = Tokens::new();
        let limits = Limits::default();
        let victim = addr("192.0.2.9:5000");
        let other = addr("198.51.100.1:5000");
        // One half-open session, far below retry_above: its source must still prove its
        // address, so a spoofer cannot open a second one in its name; other sources need not.
        let s = [slot("192.0.2.9:6000", false, 0)];
        assert_eq!(decide(&limits, &t, &s, victim, &[]), Decision::Retry);
        assert_eq!(
            decide(&limits, &t, &s, other, &[]),
            Decision::Admit { evict: None }
        );
        assert_eq!(
            decide(&limits, &t, &s, victim, &t.make(victim)),
            Decision::Admit { evict: None }
        );
    }
}
