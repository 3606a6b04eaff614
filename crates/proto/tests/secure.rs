//! The secure transport end to end: the Noise handshake with each cipher, transfers over a
//! lossy, reordering, duplicating channel with crypto on, key updates, hostile datagrams
//! injected during a transfer, peer policies, RETRY, and the integrity limit.

mod common;

use common::{next_event, random_bytes, read_all, run, Link, LinkParams, Workload};
use longhaul_cc::CcSpec;
use longhaul_proto::packet::{self, AckFields, AckRange, DataHeader, SEAL_HEADER_LEN};
use longhaul_proto::{
    Cipher, CloseCode, Config, Connection, Identity, KeyLimits, PacketError, PacketKind,
    PeerPolicy, Security, Side, Time,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

const MBIT: f64 = 1e6;

fn identity(seed: u8) -> Identity {
    Identity::from_private([seed; 32])
}

fn secure(local: &Identity, peer: PeerPolicy, cipher: Cipher) -> Config {
    Config {
        recv_window: 4 << 20,
        send_buffer: 4 << 20,
        security: Security::Noise {
            local: local.clone(),
            peer,
            cipher,
            key_limits: None,
        },
        ..Config::new(CcSpec::default_for("reno").unwrap())
    }
}

fn endpoint(config: Config, side: Side, now: Time) -> Connection {
    Connection::new(config, side, now).expect("valid configuration")
}

/// A client and a server that accept any peer key, with this machine's preferred cipher.
fn trusting_pair(client: &Identity, server: &Identity, now: Time) -> (Connection, Connection) {
    let c = endpoint(
        secure(client, PeerPolicy::Any, Cipher::preferred()),
        Side::Client,
        now,
    );
    let s = endpoint(
        secure(server, PeerPolicy::Any, Cipher::preferred()),
        Side::Server,
        now,
    );
    (c, s)
}

fn with_limits(mut c: Config, limits: KeyLimits) -> Config {
    if let Security::Noise { key_limits, .. } = &mut c.security {
        *key_limits = Some(limits);
    }
    c
}

/// Rejections a healthy secure transfer over a duplicating, reordering channel produces:
/// duplicated datagrams (replays), sealed datagrams that overtook FINISH, repeated handshake
/// messages, and datagrams that arrived after the end.
fn benign(e: &str) -> bool {
    [
        "accepted before",
        "before the handshake produced keys",
        "repeated",
        "closed",
    ]
    .iter()
    .any(|p| e.contains(p))
}

/// Exchange datagrams between two connections directly (no loss, no delay) until neither has
/// anything to send, letting delayed-ACK timers (not retransmission timers) fire; returns the
/// kinds each sent.
fn pump(c: &mut Connection, s: &mut Connection, now: Time) -> (Vec<PacketKind>, Vec<PacketKind>) {
    let mut buf = vec![0u8; 65_536];
    let (mut from_c, mut from_s) = (Vec::new(), Vec::new());
    let mut now = now;
    for _ in 0..1000 {
        let soon = now + Duration::from_millis(30);
        for conn in [&mut *c, &mut *s] {
            if conn.poll_timeout().is_some_and(|t| t <= soon) {
                now = now.max(conn.poll_timeout().unwrap());
                conn.handle_timeout(now);
            }
        }
        let mut moved = false;
        while let Some(t) = c.poll_transmit(now, &mut buf) {
            from_c.push(t.kind);
            let _ = s.handle_packet(now, &buf[..t.len]);
            moved = true;
        }
        while let Some(t) = s.poll_transmit(now, &mut buf) {
            from_s.push(t.kind);
            let _ = c.handle_packet(now, &buf[..t.len]);
            moved = true;
        }
        if !moved {
            break;
        }
    }
    (from_c, from_s)
}

#[test]
fn handshake_with_each_cipher_authenticates_both_keys() {
    let (ci, si) = (identity(1), identity(2));
    for (client_pref, server_pref, expect) in [
        (
            Cipher::ChaCha20Poly1305,
            Cipher::ChaCha20Poly1305,
            Cipher::ChaCha20Poly1305,
        ),
        (Cipher::Aes256Gcm, Cipher::Aes256Gcm, Cipher::Aes256Gcm),
        // The server picks among what the client offers.
        (
            Cipher::ChaCha20Poly1305,
            Cipher::Aes256Gcm,
            Cipher::Aes256Gcm,
        ),
        (
            Cipher::Aes256Gcm,
            Cipher::ChaCha20Poly1305,
            Cipher::ChaCha20Poly1305,
        ),
        (Cipher::Aegis256X4, Cipher::Aegis256X4, Cipher::Aegis256X4),
        (
            Cipher::ChaCha20Poly1305,
            Cipher::Aegis256X4,
            Cipher::Aegis256X4,
        ),
        (Cipher::Aegis256X4, Cipher::Aes256Gcm, Cipher::Aes256Gcm),
    ] {
        let now = Time::from_millis(1);
        let mut c = Connection::new(
            secure(&ci, PeerPolicy::Exactly(si.public_key()), client_pref),
            Side::Client,
            now,
        )
        .unwrap();
        let mut s = endpoint(
            secure(
                &si,
                PeerPolicy::AllowList(Arc::new(HashSet::from([ci.public_key()]))),
                server_pref,
            ),
            Side::Server,
            now,
        );
        assert!(c.is_secure() && s.is_secure());
        c.write(b"hello over noise");
        c.finish();
        let (from_c, from_s) = pump(&mut c, &mut s, now);
        // INIT, RESPONSE, FINISH in clear, then sealed data.
        assert_eq!(
            &from_c[..2],
            &[PacketKind::Handshake, PacketKind::Handshake]
        );
        assert_eq!(from_s[0], PacketKind::Handshake);
        assert!(c.is_established() && s.is_established());
        assert_eq!(c.peer_key(), Some(si.public_key()));
        assert_eq!(s.peer_key(), Some(ci.public_key()));
        assert_eq!(c.cipher(), Some(expect));
        assert_eq!(s.cipher(), Some(expect));
        let mut out = [0u8; 64];
        let n = s.read(&mut out);
        assert_eq!(&out[..n], b"hello over noise");
        assert!(s.is_recv_finished());
        assert!(c.is_send_complete());
        assert_eq!(s.stats().auth_failures + c.stats().auth_failures, 0);
    }
}

#[test]
fn identities_generate_and_derive_their_public_keys() {
    let a = Identity::generate().unwrap();
    let b = Identity::generate().unwrap();
    assert_ne!(a.public_key(), b.public_key());
    assert_eq!(Identity::from_private(a.private_key()), a);
    // The Debug form shows the public key only.
    let shown = format!("{a:?}");
    assert!(shown.contains(&longhaul_proto::secure::hex(&a.public_key())));
    assert!(!shown.contains(&longhaul_proto::secure::hex(&a.private_key())));
}

#[test]
fn hostile_channel_transfer_is_exact_with_each_cipher() {
    let data = random_bytes(2 << 20, 21);
    let (ci, si) = (identity(3), identity(4));
    for (i, cipher) in Cipher::ALL.into_iter().enumerate() {
        for (j, loss) in [0.01, 0.05].into_iter().enumerate() {
            let link = LinkParams::hostile(50.0 * MBIT, Duration::from_millis(10), loss);
            let out = run(
                secure(&ci, PeerPolicy::Exactly(si.public_key()), cipher),
                secure(&si, PeerPolicy::Any, cipher),
                link,
                link,
                Workload::Both(&data, &data[..500_000]),
                300 + (i * 2 + j) as u64,
                Time::from_millis(3_600_000),
            );
            assert!(out.at_server == data, "{cipher} loss {loss}: data differs");
            assert!(out.at_client == data[..500_000], "{cipher} loss {loss}");
            assert!(
                out.rejected.iter().all(|e| benign(e)),
                "{cipher} loss {loss}: {:?}",
                out.rejected
            );
            let (c, s) = (out.client.stats(), out.server.stats());
            assert!(
                out.ab.duplicated > 0 && s.replays > 0,
                "duplicates not refused"
            );
            assert_eq!(c.auth_failures + s.auth_failures, 0);
            assert!(c.packets_retransmitted > 0);
            assert_eq!(s.bytes_received, data.len() as u64);
            // Every datagram after the handshake carries the 27 bytes of the seal.
            assert!(c.wire_bytes_sent >= c.bytes_sent + c.datagrams_sent * 27);
        }
    }
}

#[test]
fn key_updates_under_loss_and_reordering() {
    let data = random_bytes(3 << 20, 22);
    let (ci, si) = (identity(5), identity(6));
    let limits = KeyLimits {
        packets_per_key: 64,
        failed_opens: 1 << 20,
    };
    for cipher in Cipher::ALL {
        let link = LinkParams::hostile(50.0 * MBIT, Duration::from_millis(10), 0.03);
        let out = run(
            with_limits(secure(&ci, PeerPolicy::Any, cipher), limits),
            with_limits(secure(&si, PeerPolicy::Any, cipher), limits),
            link,
            link,
            Workload::Bytes(&data),
            23,
            Time::from_millis(3_600_000),
        );
        assert!(out.at_server == data, "{cipher}: data differs");
        assert!(out.rejected.iter().all(|e| benign(e)), "{:?}", out.rejected);
        let (c, s) = (out.client.stats(), out.server.stats());
        // About 2200 data packets at 64 per key, and ACKs at 64 per key the other way.
        assert!(c.key_updates >= 30, "{cipher}: {c:?}");
        assert!(s.key_updates >= 10, "{cipher}: {s:?}");
        // Each side followed (nearly) every update of the other; a skipped generation counts
        // as the steps it skips.
        assert_eq!(s.peer_key_updates, c.key_updates, "{cipher}");
        assert!(c.peer_key_updates + 1 >= s.key_updates, "{cipher}");
        assert_eq!(c.auth_failures + s.auth_failures, 0, "{cipher}");
    }
}

/// A transfer during which an injector sends every kind of bad datagram at both ends: replays
/// of genuine datagrams, bit-flipped and truncated copies, forged sealed datagrams, clear
/// CLOSE, DATA (with a packet number far ahead), ACK and HANDSHAKE packets, handshake messages
/// and random bytes. Every one must be refused and counted, and the transfer must end
/// bit-exact.
#[test]
fn injected_forgeries_are_dropped_and_counted_and_the_transfer_is_exact() {
    // Enough datagrams that the first ones fall behind the anti-replay window.
    let data = random_bytes(16 << 20, 24);
    let (ci, si) = (identity(7), identity(8));
    let now0 = Time::ZERO;
    let mut c = endpoint(
        secure(&ci, PeerPolicy::Any, Cipher::ChaCha20Poly1305),
        Side::Client,
        now0,
    );
    let mut s = endpoint(
        secure(&si, PeerPolicy::Any, Cipher::Aes256Gcm),
        Side::Server,
        now0,
    );
    let link = LinkParams::hostile(50.0 * MBIT, Duration::from_millis(10), 0.02);
    let mut ab = Link::new(link, 31);
    let mut ba = Link::new(link, 32);
    let mut rng = SmallRng::seed_from_u64(33);
    let mut now = now0;
    let mut buf = vec![0u8; 65_536];
    let mut written = 0usize;
    let mut received = Vec::new();
    // Genuine datagrams seen on each path, to replay and mutate.
    let mut seen_ab: Vec<Vec<u8>> = Vec::new();
    let mut seen_ba: Vec<Vec<u8>> = Vec::new();
    let mut injected = [0u64; 2];
    let mut refused = [0u64; 2];
    loop {
        if written < data.len() {
            written += c.write(&data[written..]);
            if written == data.len() {
                c.finish();
            }
        }
        read_all(&mut s, &mut received);
        while let Some(t) = c.poll_transmit(now, &mut buf) {
            ab.send(now, &buf[..t.len], t.wire_len);
        }
        while let Some(t) = s.poll_transmit(now, &mut buf) {
            ba.send(now, &buf[..t.len], t.wire_len);
        }
        if c.is_send_complete() && s.is_recv_finished() {
            break;
        }
        assert!(
            !c.is_closed() && !s.is_closed(),
            "{:?} {:?}",
            c.close_reason(),
            s.close_reason()
        );
        let next = next_event(&ab, &ba, &c, &s).expect("stuck");
        now = now.max(next);
        assert!(now < Time::from_millis(600_000), "transfer stalled");
        // Genuine datagrams, once accepted, are material for replays and mutations.
        while let Some(p) = ab.pop_due(now) {
            if s.handle_packet(now, &p).is_ok() && p[1] == 9 && seen_ab.len() < 4096 {
                seen_ab.push(p);
            }
        }
        while let Some(p) = ba.pop_due(now) {
            if c.handle_packet(now, &p).is_ok() && p[1] == 9 && seen_ba.len() < 4096 {
                seen_ba.push(p);
            }
        }
        // Ten forgeries at each end per event, once both ends have keys.
        if seen_ab.len() > 10 && seen_ba.len() > 10 {
            for (to, seen, k) in [(&mut s, &seen_ab, 0usize), (&mut c, &seen_ba, 1usize)] {
                for _ in 0..10 {
                    let bad = forge(&mut rng, seen, to);
                    injected[k] += 1;
                    let before = to.stats().packets_rejected;
                    assert!(
                        to.handle_packet(now, &bad).is_err(),
                        "accepted a forgery: {bad:?}"
                    );
                    assert_eq!(to.stats().packets_rejected, before + 1);
                    refused[k] += 1;
                }
            }
        }
        if c.poll_timeout().is_some_and(|t| t <= now) {
            c.handle_timeout(now);
        }
        if s.poll_timeout().is_some_and(|t| t <= now) {
            s.handle_timeout(now);
        }
    }
    assert!(received == data, "data differs");
    assert_eq!(injected, refused);
    assert!(injected[0] > 10_000 && injected[1] > 10_000, "{injected:?}");
    // Replays of the first datagrams are too old at the receiver of the data.
    assert!(s.stats().too_old > 100, "{:?}", s.stats());
    for conn in [&c, &s] {
        let st = conn.stats();
        assert!(st.auth_failures > 1000, "{st:?}");
        assert!(st.replays > 1000, "{st:?}");
        assert!(st.unsealed > 1000, "{st:?}");
        // The integrity limit is far away.
        assert!(conn.close_reason().is_none());
    }
}

/// One bad datagram for `to`, built from the genuine sealed ones in `sealed`.
fn forge(rng: &mut SmallRng, sealed: &[Vec<u8>], to: &Connection) -> Vec<u8> {
    let pick = |rng: &mut SmallRng| sealed[rng.gen_range(0..sealed.len())].clone();
    let mut b = [0u8; 256];
    match rng.gen_range(0..9) {
        // A replay, byte for byte (recent ones are duplicates, the first ones are too old).
        0 => {
            if rng.gen_bool(0.5) {
                sealed[rng.gen_range(0..sealed.len().min(50))].clone()
            } else {
                sealed[sealed.len() - 1 - rng.gen_range(0..sealed.len().min(50))].clone()
            }
        }
        // Bit flips anywhere, header included.
        1 => {
            let mut d = pick(rng);
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(0..d.len());
                d[i] ^= 1 << rng.gen_range(0..8);
            }
            // Point it at a fresh seal number so that it reaches the tag check.
            let n = u64::from_be_bytes(d[3..11].try_into().unwrap());
            d[3..11].copy_from_slice(&(n + 1_000_000 + rng.gen_range(0..1000)).to_be_bytes());
            d
        }
        // Truncated.
        2 => {
            let d = pick(rng);
            d[..rng.gen_range(0..d.len())].to_vec()
        }
        // A forged sealed datagram: a valid header, random body.
        3 => {
            let mut d = vec![0u8; rng.gen_range(SEAL_HEADER_LEN + 19..1500)];
            rng.fill(&mut d[..]);
            d[0] = 1;
            d[1] = 9;
            d[2] = rng.gen_range(0..3);
            d[3..11].copy_from_slice(&rng.gen_range(0..u64::MAX / 2).to_be_bytes());
            d
        }
        // Clear CLOSE.
        4 => {
            let n = packet::encode_close(CloseCode::Application, &mut b).unwrap();
            b[..n].to_vec()
        }
        // Clear DATA with a packet number far ahead (the wedge of a plain connection).
        5 => {
            let h = DataHeader {
                packet_number: 1_000_000 + rng.gen_range(0..1000),
                timestamp_us: 1,
                offset: 0,
                len: 0,
                fin: false,
                synthetic: false,
            };
            let n = packet::encode_data_header(&h, &mut b).unwrap();
            b[..n].to_vec()
        }
        // Clear ACK.
        6 => {
            let f = AckFields {
                ack_delay_us: 0,
                echo_us: 0,
                cumulative: 0,
                max_offset: 1 << 40,
                ce_count: 0,
            };
            let n =
                packet::encode_ack(&f, [AckRange { high: 5, low: 0 }].into_iter(), &mut b).unwrap();
            b[..n].to_vec()
        }
        // A handshake message from a stranger (an INIT or FINISH from nowhere, a RESPONSE).
        7 => {
            let mut d = vec![0u8; rng.gen_range(40..200)];
            rng.fill(&mut d[..]);
            d[0] = 1;
            d[1] = match to.side() {
                Side::Server => [5, 7][rng.gen_range(0..2)],
                Side::Client => [6, 8][rng.gen_range(0..2)],
            };
            if d[1] == 5 {
                d[2] = 0;
            }
            d
        }
        // Random bytes.
        _ => {
            let mut d = vec![0u8; rng.gen_range(0..300)];
            rng.fill(&mut d[..]);
            d
        }
    }
}

#[test]
fn unauthorized_client_is_refused_and_none_of_its_data_is_taken() {
    let (ci, si, other) = (identity(9), identity(10), identity(11));
    let now = Time::from_millis(1);
    let mut c = endpoint(
        secure(&ci, PeerPolicy::Any, Cipher::preferred()),
        Side::Client,
        now,
    );
    let allowed = PeerPolicy::AllowList(Arc::new(HashSet::from([other.public_key()])));
    let mut s =
        Connection::new(secure(&si, allowed, Cipher::preferred()), Side::Server, now).unwrap();
    c.write(&[7u8; 100_000]);
    c.finish();
    let (_, from_s) = pump(&mut c, &mut s, now);
    assert_eq!(from_s.last(), Some(&PacketKind::Close));
    assert!(s.is_closed() && c.is_closed());
    assert_eq!(
        s.close_reason().map(|r| (r.code, r.by_peer)),
        Some((CloseCode::Unauthorized, false))
    );
    assert_eq!(
        c.close_reason().map(|r| (r.code, r.by_peer)),
        Some((CloseCode::Unauthorized, true))
    );
    // The server knows whom it refused, and took nothing.
    assert_eq!(s.peer_key(), Some(ci.public_key()));
    assert_eq!(s.stats().bytes_received, 0);
    assert_eq!(s.stats().packets_received, 0);
    assert_eq!(s.readable(), 0);
}

#[test]
fn client_expecting_another_server_key_aborts_before_sending_anything_sealed() {
    let (ci, si, expected) = (identity(12), identity(13), identity(14));
    let now = Time::from_millis(1);
    let mut c = endpoint(
        secure(
            &ci,
            PeerPolicy::Exactly(expected.public_key()),
            Cipher::preferred(),
        ),
        Side::Client,
        now,
    );
    let mut s = endpoint(
        secure(&si, PeerPolicy::Any, Cipher::preferred()),
        Side::Server,
        now,
    );
    c.write(b"secret data");
    let (from_c, _) = pump(&mut c, &mut s, now);
    // Only the INIT left the client: no FINISH (which would reveal its identity), no data.
    assert_eq!(from_c, vec![PacketKind::Handshake]);
    assert!(c.is_closed());
    assert_eq!(
        c.close_reason().map(|r| (r.code, r.by_peer)),
        Some((CloseCode::PeerKeyMismatch, false))
    );
    assert_eq!(c.peer_key(), Some(si.public_key()));
    assert_eq!(c.stats().packets_sent, 0);
    assert!(!s.is_established());
    assert_eq!(s.peer_key(), None);
}

#[test]
fn retry_round_trip() {
    let (ci, si) = (identity(15), identity(16));
    let now = Time::from_millis(1);
    let mut c = endpoint(
        secure(&ci, PeerPolicy::Any, Cipher::preferred()),
        Side::Client,
        now,
    );
    let mut buf = vec![0u8; 2048];
    let t = c.poll_transmit(now, &mut buf).unwrap();
    let init = buf[..t.len].to_vec();
    assert!(init.len() >= packet::INIT_MIN_LEN);
    // The driver sees an INIT without a token and answers with a RETRY, creating nothing.
    assert_eq!(packet::handshake_token(&init), Some(&[][..]));
    let mut retry = [0u8; 128];
    let n = packet::encode_retry(&init, b"opaque-token-from-the-driver", &mut retry).unwrap();
    // A RETRY that echoes another INIT (an off-path forgery) is ignored.
    let mut forged = retry[..n].to_vec();
    forged[5] ^= 1;
    assert!(matches!(
        c.handle_packet(now, &forged),
        Err(PacketError::RetryIgnored(_))
    ));
    c.handle_packet(now, &retry[..n]).unwrap();
    let t = c.poll_transmit(now, &mut buf).unwrap();
    let init2 = buf[..t.len].to_vec();
    assert_eq!(
        packet::handshake_token(&init2),
        Some(&b"opaque-token-from-the-driver"[..])
    );
    assert!(init2.len() >= packet::INIT_MIN_LEN);
    // One RETRY only.
    let n2 = packet::encode_retry(&init2, b"again", &mut retry).unwrap();
    assert!(matches!(
        c.handle_packet(now, &retry[..n2]),
        Err(PacketError::RetryIgnored(_))
    ));
    // Not an INIT: no token, no RETRY.
    assert_eq!(packet::handshake_token(&retry[..n2]), None);
    assert_eq!(
        packet::encode_retry(&retry[..n2], b"x", &mut [0u8; 128]),
        None
    );
    // The driver is satisfied and creates the connection with the second INIT.
    let mut s = endpoint(
        secure(&si, PeerPolicy::Any, Cipher::preferred()),
        Side::Server,
        now,
    );
    s.handle_packet(now, &init2).unwrap();
    let t = s.poll_transmit(now, &mut buf).unwrap();
    let later = now + Duration::from_millis(30);
    c.handle_packet(later, &buf[..t.len]).unwrap();
    // The repeated INIT was new (fresh timestamp), so its answer gave an RTT sample.
    assert_eq!(c.stats().rtt_samples, 1);
    assert_eq!(c.stats().latest_rtt_us, 30_000);
    c.write(b"after retry");
    pump(&mut c, &mut s, later);
    assert!(c.is_established() && s.is_established());
    let mut out = [0u8; 32];
    let n = s.read(&mut out);
    assert_eq!(&out[..n], b"after retry");
    // A RETRY after the RESPONSE is ignored.
    assert!(c.handle_packet(later, &retry[..n2]).is_err());
    assert!(c.is_established());
}

#[test]
fn lost_handshake_messages_are_resent() {
    let (ci, si) = (identity(17), identity(18));
    let mut now = Time::from_millis(1);
    let (mut c, mut s) = trusting_pair(&ci, &si, now);
    let mut buf = vec![0u8; 2048];
    // INIT lost; the handshake timer sends the same INIT again.
    let init = c
        .poll_transmit(now, &mut buf)
        .map(|t| buf[..t.len].to_vec())
        .unwrap();
    now = c.poll_timeout().unwrap();
    c.handle_timeout(now);
    let t = c.poll_transmit(now, &mut buf).unwrap();
    assert_eq!(&buf[..t.len], &init[..]);
    s.handle_packet(now, &buf[..t.len]).unwrap();
    // RESPONSE lost; the client's INIT again draws the same RESPONSE.
    let resp = s
        .poll_transmit(now, &mut buf)
        .map(|t| buf[..t.len].to_vec())
        .unwrap();
    now = c.poll_timeout().unwrap();
    c.handle_timeout(now);
    let t = c.poll_transmit(now, &mut buf).unwrap();
    s.handle_packet(now, &buf[..t.len]).unwrap();
    let t = s.poll_transmit(now, &mut buf).unwrap();
    assert_eq!(&buf[..t.len], &resp[..]);
    now += Duration::from_millis(20);
    c.handle_packet(now, &buf[..t.len]).unwrap();
    assert!(c.is_established());
    // The INIT was sent three times: no RTT sample from the handshake (Karn).
    assert_eq!(c.stats().rtt_samples, 0);
    // FINISH and the first data lost: the retransmission timer sends FINISH again, then data.
    c.write(b"finally");
    c.finish();
    let mut kinds = Vec::new();
    while let Some(t) = c.poll_transmit(now, &mut buf) {
        kinds.push(t.kind);
    }
    assert_eq!(kinds[0], PacketKind::Handshake);
    assert!(kinds[1..].contains(&PacketKind::Data));
    now = c.poll_timeout().unwrap();
    c.handle_timeout(now);
    let t = c.poll_transmit(now, &mut buf).unwrap();
    assert_eq!(t.kind, PacketKind::Handshake, "FINISH first");
    s.handle_packet(now, &buf[..t.len]).unwrap();
    assert!(s.is_established());
    pump(&mut c, &mut s, now);
    let mut out = [0u8; 16];
    let n = s.read(&mut out);
    assert_eq!(&out[..n], b"finally");
    assert!(c.is_send_complete());
}

#[test]
fn a_plain_peer_and_a_secure_peer_do_not_talk() {
    let si = identity(19);
    let now = Time::from_millis(1);
    let plain = Config::new(CcSpec::default_for("reno").unwrap());
    let mut c = Connection::new(plain.clone(), Side::Client, now).unwrap();
    let mut s = endpoint(
        secure(&si, PeerPolicy::Any, Cipher::preferred()),
        Side::Server,
        now,
    );
    let mut buf = vec![0u8; 2048];
    let t = c.poll_transmit(now, &mut buf).unwrap();
    assert_eq!(
        s.handle_packet(now, &buf[..t.len]),
        Err(PacketError::Unsealed("HANDSHAKE"))
    );
    assert_eq!(s.stats().unsealed, 1);
    // And a plain server does not understand an INIT.
    let mut c2 = endpoint(
        secure(&si, PeerPolicy::Any, Cipher::preferred()),
        Side::Client,
        now,
    );
    let mut s2 = Connection::new(plain, Side::Server, now).unwrap();
    let t = c2.poll_transmit(now, &mut buf).unwrap();
    assert_eq!(
        s2.handle_packet(now, &buf[..t.len]),
        Err(PacketError::UnknownType(5))
    );
}

#[test]
fn mismatched_modes_close_both_ends_with_an_authenticated_close() {
    let (ci, si) = (identity(20), identity(21));
    let now = Time::from_millis(1);
    let mut cc = secure(&ci, PeerPolicy::Any, Cipher::preferred());
    cc.synthetic = true;
    let mut c = Connection::new(cc, Side::Client, now).unwrap();
    let mut s = endpoint(
        secure(&si, PeerPolicy::Any, Cipher::preferred()),
        Side::Server,
        now,
    );
    pump(&mut c, &mut s, now);
    assert!(c.is_closed() && s.is_closed());
    assert_eq!(c.close_reason().unwrap().code, CloseCode::ProtocolError);
    assert_eq!(s.close_reason().unwrap().code, CloseCode::ProtocolError);
}

#[test]
fn the_integrity_limit_closes_the_connection() {
    let (ci, si) = (identity(22), identity(23));
    let now = Time::from_millis(1);
    let limits = KeyLimits {
        packets_per_key: 1 << 20,
        failed_opens: 100,
    };
    let mut c = Connection::new(
        with_limits(secure(&ci, PeerPolicy::Any, Cipher::preferred()), limits),
        Side::Client,
        now,
    )
    .unwrap();
    let mut s = Connection::new(
        with_limits(secure(&si, PeerPolicy::Any, Cipher::preferred()), limits),
        Side::Server,
        now,
    )
    .unwrap();
    c.write(b"x");
    pump(&mut c, &mut s, now);
    assert!(s.is_established());
    let mut forged = vec![0u8; 100];
    forged[0] = 1;
    forged[1] = 9;
    for i in 0..101u64 {
        forged[3..11].copy_from_slice(&(1000 + i).to_be_bytes());
        assert_eq!(
            s.handle_packet(now, &forged),
            Err(PacketError::AuthenticationFailed)
        );
    }
    assert_eq!(s.stats().auth_failures, 101);
    let mut buf = vec![0u8; 2048];
    let t = s.poll_transmit(now, &mut buf).unwrap();
    assert_eq!(t.kind, PacketKind::Close);
    assert_eq!(s.close_reason().unwrap().code, CloseCode::IntegrityLimit);
    c.handle_packet(now, &buf[..t.len]).unwrap();
    assert_eq!(
        c.close_reason().map(|r| (r.code, r.by_peer)),
        Some((CloseCode::IntegrityLimit, true))
    );
}

#[test]
fn synthetic_mode_works_sealed() {
    let (ci, si) = (identity(24), identity(25));
    let mut cc = secure(&ci, PeerPolicy::Any, Cipher::preferred());
    let mut sc = secure(&si, PeerPolicy::Any, Cipher::preferred());
    cc.synthetic = true;
    sc.synthetic = true;
    cc.send_buffer = 1 << 30;
    let link = LinkParams::hostile(100.0 * MBIT, Duration::from_millis(25), 0.02);
    let n = 5_000_000u64;
    let out = run(
        cc,
        sc,
        link,
        link,
        Workload::Synthetic(n),
        26,
        Time::from_millis(3_600_000),
    );
    assert_eq!(out.synthetic_read, n);
    assert!(out.rejected.iter().all(|e| benign(e)), "{:?}", out.rejected);
    let c = out.client.stats();
    // Header, seal and the elided payload on the wire.
    assert!(c.wire_bytes_sent >= n + c.packets_sent * (29 + 27));
}

#[test]
fn config_accounts_for_the_seal() {
    let si = identity(26);
    let plain = Config::default();
    let sealed = secure(&si, PeerPolicy::Any, Cipher::preferred());
    assert_eq!(plain.mss_for(1500), 1443);
    assert_eq!(sealed.mss_for(1500), 1416);
    assert_eq!(Config::mss_for_mtu(1500), 1443);
    assert_eq!(sealed.max_datagram_size(), sealed.mss as usize + 29 + 27);
    let mut tiny = sealed.clone();
    tiny.mss = 64;
    assert!(tiny.max_datagram_size() >= packet::MAX_HANDSHAKE_DATAGRAM);
    let mut huge = sealed;
    huge.mss = packet::MAX_PAYLOAD;
    assert!(Connection::new(huge, Side::Client, Time::ZERO).is_err());
}

/// A client (identity `seed`) and a server (`seed + 1`) with this machine's cipher, keys
/// updated every `packets_per_key` datagrams, after their handshake.
fn established_with_key_limit(
    seed: u8,
    packets_per_key: u64,
    now: Time,
) -> (Connection, Connection) {
    let limits = KeyLimits {
        packets_per_key,
        failed_opens: 1 << 20,
    };
    let cipher = Cipher::preferred();
    let config = |id: &Identity| with_limits(secure(id, PeerPolicy::Any, cipher), limits);
    let mut c = endpoint(config(&identity(seed)), Side::Client, now);
    let mut s = endpoint(config(&identity(seed + 1)), Side::Server, now);
    pump(&mut c, &mut s, now);
    (c, s)
}

/// A driver may seal on another thread (`poll_transmit_vectored`): seals applied there, in
/// reverse order and across key updates, open at the peer, which gets every byte; a datagram
/// whose seal was not applied is refused.
#[test]
fn seals_applied_later_on_another_thread_open_at_the_peer() {
    let now = Time::from_millis(1);
    let (mut c, mut s) = established_with_key_limit(7, 5, now);
    assert!(c.is_established() && s.is_established());

    // The initial window's worth: ten datagrams, two generations of keys.
    let data = random_bytes(10 * 1400, 9);
    assert_eq!(c.write(&data), data.len());
    let max = c.config().max_datagram_size();
    let mut datagrams = Vec::new();
    let mut buf = vec![0u8; max];
    while let Some((t, seal, _)) = c.poll_transmit_vectored(now, &mut buf) {
        let seal = seal.expect("every datagram after the handshake is sealed");
        assert_eq!(seal.len(), t.len);
        datagrams.push((buf[..t.len].to_vec(), seal));
    }
    assert!(datagrams.len() >= 10, "{} datagrams", datagrams.len());
    assert!(c.stats().key_updates >= 1, "{:?}", c.stats());

    // Unsealed bytes are refused, and counted as a failure to open.
    let before = s.stats().auth_failures + s.stats().packets_rejected;
    assert!(s.handle_packet(now, &datagrams[0].0).is_err());
    assert!(s.stats().auth_failures + s.stats().packets_rejected > before);

    let sealed = std::thread::spawn(move || {
        let mut out: Vec<Vec<u8>> = Vec::new();
        for (mut bytes, seal) in datagrams.into_iter().rev() {
            let n = seal.apply(&mut bytes).expect("room for the seal");
            bytes.truncate(n);
            out.push(bytes);
        }
        out.reverse();
        out
    })
    .join()
    .unwrap();
    for d in &sealed {
        s.handle_packet(now, d).expect("a sealed datagram opens");
    }
    let mut got = vec![0u8; data.len() + 1];
    assert_eq!(s.read(&mut got), data.len());
    assert_eq!(&got[..data.len()], &data[..]);
    assert_eq!(s.stats().peer_key_updates, c.stats().key_updates);
}

/// A driver may open on another thread (`Connection::opener`): what opens there is taken as if
/// the connection had opened it, and the data arrives exact; what the copy of the keys cannot
/// open (a newer key than it holds) is passed on and the connection opens it; a replay of an
/// opened datagram, and a forged one, are refused and counted as the connection's own.
#[test]
fn datagrams_opened_on_another_thread_are_taken_as_if_opened_here() {
    use longhaul_proto::OpenAttempt;
    let now = Time::from_millis(1);
    let (mut c, mut s) = established_with_key_limit(9, 2, now);
    let opener = s.opener().expect("keys exist after the handshake");
    assert_eq!(s.opener_epoch(), Some(opener.epoch()));

    let data = random_bytes(10 * 1400, 11);
    assert_eq!(c.write(&data), data.len());
    let mut buf = vec![0u8; 65_536];
    let mut sealed = Vec::new();
    while let Some(t) = c.poll_transmit(now, &mut buf) {
        sealed.push(buf[..t.len].to_vec());
    }
    assert!(sealed.len() >= 10, "{} datagrams", sealed.len());
    let pristine = sealed.last().unwrap().clone();
    let copy = opener.clone();
    let attempts: Vec<(Vec<u8>, OpenAttempt)> = std::thread::spawn(move || {
        sealed
            .into_iter()
            .map(|mut d| {
                let a = copy.open(&mut d);
                (d, a)
            })
            .collect()
    })
    .join()
    .unwrap();
    let (mut opened, mut passed) = (0, 0);
    let mut first_opened = None;
    for (d, a) in &attempts {
        match a {
            OpenAttempt::Opened(o) => {
                s.handle_opened(now, now, *o, d, false, 0)
                    .expect("an opened datagram is taken");
                opened += 1;
                first_opened.get_or_insert((d.clone(), *o));
            }
            OpenAttempt::Pass => {
                s.handle_packet(now, d).expect("the connection opens it");
                passed += 1;
            }
            OpenAttempt::Failed => panic!("a genuine datagram failed to open"),
        }
    }
    // Two generations held (current and next), five or more used by the sender.
    assert!(
        opened >= 2 && passed >= 2,
        "{opened} opened, {passed} passed"
    );
    assert_ne!(s.opener_epoch(), Some(opener.epoch()), "the keys moved on");
    let mut got = vec![0u8; data.len() + 1];
    assert_eq!(s.read(&mut got), data.len());
    assert_eq!(&got[..data.len()], &data[..]);
    assert_eq!(s.stats().peer_key_updates, c.stats().key_updates);

    // The same datagram again is a replay, however it was opened.
    let (d, o) = first_opened.unwrap();
    let replays = s.stats().replays;
    assert!(s.handle_opened(now, now, o, &d, false, 0).is_err());
    assert_eq!(s.stats().replays, replays + 1);
    // A forged datagram fails where it is opened and counts here.
    // (The newest datagram: sealed under the key the receiver is at now, which it holds.)
    let mut forged = pristine;
    let fresh = s.opener().unwrap();
    let n = forged.len();
    forged[n - 1] ^= 1;
    assert_eq!(fresh.open(&mut forged), OpenAttempt::Failed);
    let failures = s.stats().auth_failures;
    s.handle_open_failed();
    assert_eq!(s.stats().auth_failures, failures + 1);
    // Bytes that are not a sealed datagram are passed on untouched.
    let mut plain = vec![1u8, 2, 3];
    assert_eq!(fresh.open(&mut plain), OpenAttempt::Pass);
    assert_eq!(plain, [1, 2, 3]);
}

/// With security on a payload in a buffer given to `write_owned` is lent to the datagram's
/// seal, not written by the connection nor returned beside the datagram: the connection writes
/// the header, leaves the payload's room untouched, and the seal, applied, fills it with the
/// ciphertext; every datagram opens at the peer, which reads the buffer given.
#[test]
fn a_sealed_payload_is_lent_to_its_seal() {
    let now = Time::from_millis(1);
    let (mut c, mut s) = established_with_key_limit(11, 1 << 20, now);
    let data: Vec<u8> = random_bytes(8 * 1400, 12).iter().map(|b| b | 1).collect();
    assert_eq!(c.write_owned(data.clone()), Ok(data.len()));
    let mut buf = vec![0u8; c.config().max_datagram_size()];
    let mut sent = 0;
    while let Some((t, seal, payload)) = c.poll_transmit_vectored(now, &mut buf) {
        assert!(payload.is_none(), "a sealed payload came back: {t:?}");
        assert_eq!(t.kind, PacketKind::Data);
        let body = SEAL_HEADER_LEN + packet::DATA_HEADER_LEN..t.len - packet::SEAL_TAG_LEN;
        assert!(body.len() >= 1000, "{t:?}");
        assert!(
            buf[body.clone()].iter().all(|&b| b == 0),
            "the payload was written"
        );
        let seal = seal.expect("sealed");
        assert_eq!(seal.apply(&mut buf), Some(t.len));
        assert!(
            buf[body].iter().any(|&b| b != 0),
            "the seal wrote no ciphertext"
        );
        assert_eq!(t.wire_len, t.len);
        s.handle_packet(now, &buf[..t.len]).expect("it opens");
        buf.fill(0);
        sent += 1;
    }
    assert!(sent >= 8, "{sent} datagrams");
    let mut got = Vec::new();
    read_all(&mut s, &mut got);
    assert_eq!(got, data);
}
