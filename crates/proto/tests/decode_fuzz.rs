//! The decoder against hostile input: random bytes, mutated valid packets and truncations must
//! yield a value or an error, never a panic; valid packets must round-trip exactly.

use longhaul_proto::packet::{
    self, AckFields, AckRange, CloseCode, DataHeader, Handshake, Packet, MAX_ACK_RANGES, MAX_VALUE,
};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn arb_data() -> impl Strategy<Value = (DataHeader, Vec<u8>)> {
    (
        0..=MAX_VALUE,
        any::<u64>(),
        0..=MAX_VALUE - 65_535,
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(any::<u8>(), 0..1500),
    )
        .prop_map(|(pn, ts, offset, fin, synthetic, payload)| {
            let h = DataHeader {
                packet_number: pn,
                timestamp_us: ts,
                offset,
                len: payload.len() as u16,
                fin,
                synthetic,
            };
            (h, if synthetic { vec![] } else { payload })
        })
}

/// Valid ACK ranges: descending, separated by gaps of at least one.
fn arb_ranges() -> impl Strategy<Value = Vec<AckRange>> {
    (
        1u64..1 << 40,
        prop::collection::vec((0u64..1000, 1u64..1000), 1..=MAX_ACK_RANGES),
    )
        .prop_map(|(top, steps)| {
            let mut out = Vec::new();
            let mut high = top + 2_000_000;
            for (len, gap) in steps {
                let low = high.saturating_sub(len);
                out.push(AckRange { high, low });
                if low < gap + 1 {
                    break;
                }
                high = low - gap - 1;
            }
            out
        })
}

fn encode_data(h: &DataHeader, payload: &[u8]) -> Vec<u8> {
    let mut buf = vec![0u8; 70_000];
    let n = packet::encode_data_header(h, &mut buf).unwrap();
    buf[n..n + payload.len()].copy_from_slice(payload);
    buf.truncate(n + payload.len());
    buf
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn data_round_trips((h, payload) in arb_data()) {
        let buf = encode_data(&h, &payload);
        let decoded = packet::decode(&buf).unwrap();
        prop_assert_eq!(decoded, Packet::Data { header: h, payload: &payload });
    }

    #[test]
    fn ack_round_trips(ranges in arb_ranges(), f in (any::<u64>(), any::<u64>(), 0..=MAX_VALUE, 0..=MAX_VALUE, any::<u64>())) {
        let fields = AckFields { ack_delay_us: f.0, echo_us: f.1, cumulative: f.2, max_offset: f.3, ce_count: f.4 };
        let mut buf = vec![0u8; 1024];
        let n = packet::encode_ack(&fields, ranges.iter().copied(), &mut buf).unwrap();
        let Packet::Ack(a) = packet::decode(&buf[..n]).unwrap() else { panic!("not an ack") };
        prop_assert_eq!(a.ranges().collect::<Vec<_>>(), ranges.clone());
        prop_assert_eq!(a.largest(), ranges[0].high);
        prop_assert_eq!((a.ack_delay_us, a.echo_us, a.cumulative, a.max_offset, a.ce_count), f);
    }

    #[test]
    fn handshake_and_close_round_trip(resp in any::<bool>(), syn in any::<bool>(), w in any::<u64>(), ts in any::<u64>(), e in any::<u64>(), code in any::<u8>()) {
        let h = Handshake { response: resp, synthetic: syn, recv_window: w, timestamp_us: ts, echo_us: e };
        let mut buf = [0u8; 64];
        let n = packet::encode_handshake(&h, &mut buf).unwrap();
        prop_assert_eq!(packet::decode(&buf[..n]), Ok(Packet::Handshake(h)));
        let n = packet::encode_close(CloseCode::Other(code), &mut buf).unwrap();
        let Ok(Packet::Close(c)) = packet::decode(&buf[..n]) else { panic!("not a close") };
        // Known codes decode to their names, others stay numbered.
        prop_assert!(c == CloseCode::Other(code) || code <= 6);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let _ = packet::decode(&bytes);
    }

    #[test]
    fn mutated_packets_never_panic_and_stay_consistent(
        (h, payload) in arb_data(),
        ranges in arb_ranges(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut data = encode_data(&h, &payload);
        let mut ack = vec![0u8; 1024];
        let n = packet::encode_ack(&AckFields { ack_delay_us: 1, echo_us: 2, cumulative: 3, max_offset: 4, ce_count: 5 }, ranges.into_iter(), &mut ack).unwrap();
        ack.truncate(n);
        for buf in [&mut data, &mut ack] {
            for (i, v) in &flips {
                let i = i.index(buf.len());
                buf[i] ^= *v;
            }
            if let Ok(p) = packet::decode(buf) {
                // Whatever decodes must obey the invariants the connection relies on.
                match p {
                    Packet::Data { header, payload } => {
                        prop_assert!(header.packet_number <= MAX_VALUE);
                        prop_assert!(header.offset + header.len as u64 <= MAX_VALUE);
                        prop_assert_eq!(payload.len(), if header.synthetic { 0 } else { header.len as usize });
                    }
                    Packet::Ack(a) => {
                        let r: Vec<_> = a.ranges().collect();
                        prop_assert!(!r.is_empty() && r.len() <= MAX_ACK_RANGES);
                        prop_assert!(r.iter().all(|x| x.low <= x.high && x.high <= MAX_VALUE));
                        prop_assert!(r.windows(2).all(|w| w[1].high + 1 < w[0].low));
                    }
                    _ => {}
                }
            }
            let k = cut.index(buf.len());
            let _ = packet::decode(&buf[..k]);
        }
    }
}

/// A million random datagrams, biased towards plausible headers so that the deeper checks run.
#[test]
fn a_million_random_packets_through_the_decoder() {
    let mut rng = SmallRng::seed_from_u64(0x5eed);
    let mut buf = [0u8; 700];
    let mut accepted = [0u64; 4];
    let mut rejected = 0u64;
    for i in 0..1_000_000u32 {
        let len = rng.gen_range(0..buf.len());
        rng.fill(&mut buf[..len]);
        if len >= 2 && i % 4 != 0 {
            buf[0] = 1;
            buf[1] = rng.gen_range(1..=4);
            if len >= 3 && i % 2 == 0 {
                buf[2] &= 0x03;
            }
            if buf[1] == 3 && len >= 44 && i % 8 == 2 {
                buf[2] = 0;
                buf[43] = rng.gen_range(1..=3);
            }
        }
        match packet::decode(&buf[..len]) {
            Ok(p) => accepted[p.kind() as usize] += 1,
            Err(e) => {
                rejected += 1;
                assert!(!e.to_string().is_empty());
            }
        }
    }
    assert_eq!(accepted.iter().sum::<u64>() + rejected, 1_000_000);
    // Random bytes are almost always rejected, but fixed-size packets with a valid header can
    // be accepted: the handshake and the close packet have no redundancy to check.
    assert!(rejected > 900_000, "{rejected}");
    assert!(accepted[packet::PacketKind::Close as usize] > 0);
}

/// Mutated copies of real traffic fed into live connections: rejected or accepted, never a
/// panic, and the connections stay usable.
#[test]
fn mutated_traffic_never_panics_a_connection() {
    use longhaul_cc::CcSpec;
    use longhaul_proto::{Config, Connection, Side, Time};
    let mut rng = SmallRng::seed_from_u64(77);
    let cfg = Config::new(CcSpec::default_for("reno").unwrap());
    let mut now = Time::from_millis(1);
    let mut c = Connection::new(cfg.clone(), Side::Client, now).unwrap();
    let mut s = Connection::new(cfg.clone(), Side::Server, now).unwrap();
    let mut buf = vec![0u8; 2000];
    let payload = vec![9u8; 200_000];
    let mut rejected = 0u64;
    let mut restarts = 0;
    let mut fed = 0u64;
    for round in 0..20_000u32 {
        now += std::time::Duration::from_millis(2);
        if c.send_buffered() < 1 << 20 {
            c.write(&payload);
        }
        for (f, r) in [
            pump(&mut c, &mut s, now, &mut rng, &mut buf),
            pump(&mut s, &mut c, now, &mut rng, &mut buf),
        ] {
            fed += f;
            rejected += r;
        }
        let mut sink = [0u8; 4096];
        while s.read(&mut sink) > 0 {}
        if c.is_closed() || s.is_closed() || round % 2000 == 1999 {
            // A forged close (or a corrupted handshake) may end a connection: start over.
            restarts += 1;
            c = Connection::new(cfg.clone(), Side::Client, now).unwrap();
            s = Connection::new(cfg.clone(), Side::Server, now).unwrap();
        }
    }
    assert!(restarts >= 10);
    // About 6 % of the datagrams are damaged; much damage is detected (damage to payload bytes
    // or timestamps cannot be: integrity is the UDP checksum's job).
    assert!(fed > 20_000, "only {fed} datagrams exchanged");
    assert!(rejected * 100 > fed, "{rejected} of {fed} rejected");
}

fn pump(
    from: &mut longhaul_proto::Connection,
    to: &mut longhaul_proto::Connection,
    now: longhaul_proto::Time,
    rng: &mut SmallRng,
    buf: &mut [u8],
) -> (u64, u64) {
    let (mut fed, mut rejected) = (0, 0);
    while let Some(t) = from.poll_transmit(now, buf) {
        fed += 1;
        let mut pkt = buf[..t.len].to_vec();
        if rng.gen_bool(0.05) {
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(0..pkt.len());
                pkt[i] ^= rng.gen::<u8>() | 1;
            }
        }
        if rng.gen_bool(0.01) {
            pkt.truncate(rng.gen_range(0..pkt.len()));
        }
        if to.handle_packet(now, &pkt).is_err() {
            rejected += 1;
        }
    }
    if from.poll_timeout().is_some_and(|t| t <= now) {
        from.handle_timeout(now);
    }
    (fed, rejected)
}

// ---------------------------------------------------------------------------------------------
// The secure transport's packets: sealed datagrams, the outer layer, and Noise messages.
// Together these run 1.1 million cases (measured: a few seconds in the ci profile).
// ---------------------------------------------------------------------------------------------

mod secure {
    use longhaul_cc::CcSpec;
    use longhaul_proto::packet::{self, Outer, SEAL_HEADER_LEN, SEAL_OVERHEAD};
    use longhaul_proto::secure::seal::PacketKey;
    use longhaul_proto::{
        Cipher, Config, Connection, Identity, PacketError, PeerPolicy, Security, Side, Time,
    };
    use proptest::prelude::*;

    fn cipher() -> impl Strategy<Value = Cipher> {
        prop::sample::select(Cipher::ALL.to_vec())
    }

    fn seal(key: &PacketKey, phase: u8, n: u64, inner: &[u8]) -> Vec<u8> {
        let mut buf = vec![0u8; inner.len() + SEAL_OVERHEAD];
        buf[SEAL_HEADER_LEN..SEAL_HEADER_LEN + inner.len()].copy_from_slice(inner);
        let len = key.seal(phase, n, &mut buf, inner.len()).unwrap();
        assert_eq!(len, buf.len());
        buf
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(600_000))]

        /// Whatever the bytes, the outer decoder answers, and what it accepts is consistent.
        #[test]
        fn outer_layer_of_random_bytes(
            kind in 0u8..12,
            bytes in prop::collection::vec(any::<u8>(), 0..300),
        ) {
            let mut d = bytes;
            if d.len() >= 2 {
                d[0] = 1;
                d[1] = kind;
            }
            match packet::decode_outer(&d) {
                Ok(Outer::Init { token, message }) => {
                    prop_assert!(token.len() <= packet::MAX_TOKEN_LEN);
                    prop_assert!(message.len() >= packet::RETRY_ECHO_LEN);
                    prop_assert_eq!(packet::handshake_token(&d), Some(token));
                }
                Ok(Outer::Retry { echo, token }) => {
                    prop_assert_eq!(echo.len(), packet::RETRY_ECHO_LEN);
                    prop_assert!(token.len() <= packet::MAX_TOKEN_LEN);
                }
                Ok(Outer::Sealed { .. }) => prop_assert!(d.len() >= SEAL_OVERHEAD + 3),
                Ok(_) => {}
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(250_000))]

        /// Sealing then opening gives back the packet; the header says what was sealed.
        #[test]
        fn sealed_datagrams_round_trip(
            c in cipher(),
            phase in any::<u8>(),
            n in any::<u64>(),
            inner in prop::collection::vec(any::<u8>(), 3..1500),
        ) {
            let key = PacketKey::new(c, &[9; 32]);
            let mut d = seal(&key, phase, n, &inner);
            prop_assert_eq!(
                packet::decode_outer(&d),
                Ok(Outer::Sealed { key_phase: phase, seal_number: n })
            );
            let m = key.open(n, &mut d).unwrap();
            prop_assert_eq!(&d[SEAL_HEADER_LEN..SEAL_HEADER_LEN + m], &inner[..]);
        }

        /// Any change to a sealed datagram, any cut, and any other key or nonce fails to open.
        #[test]
        fn mutated_sealed_datagrams_never_open(
            c in cipher(),
            n in any::<u64>(),
            inner in prop::collection::vec(any::<u8>(), 3..200),
            flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
            cut in any::<prop::sample::Index>(),
        ) {
            let key = PacketKey::new(c, &[5; 32]);
            let d = seal(&key, 0, n, &inner);
            let mut flipped = d.clone();
            for (i, x) in &flips {
                let i = i.index(flipped.len());
                flipped[i] ^= x;
            }
            if flipped != d {
                prop_assert!(key.open(n, &mut flipped).is_err());
            }
            let k = cut.index(d.len());
            prop_assert!(key.open(n, &mut d[..k].to_vec()).is_err());
            prop_assert!(key.open(n.wrapping_add(1), &mut d.clone()).is_err());
            prop_assert!(PacketKey::new(c, &[6; 32]).open(n, &mut d.clone()).is_err());
        }
    }

    fn config(seed: u8) -> Config {
        Config {
            security: Security::noise(Identity::from_private([seed; 32]), PeerPolicy::Any),
            ..Config::new(CcSpec::default_for("reno").unwrap())
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]

        /// Random and mutated handshake messages at every step of a handshake are refused and
        /// change nothing: the genuine handshake then completes as if they had not come.
        #[test]
        fn forged_noise_messages_change_nothing(
            step in 0usize..3,
            random in prop::collection::vec(any::<u8>(), 0..260),
            flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 0..4),
            use_random in any::<bool>(),
        ) {
            let now = Time::from_millis(1);
            let mut c = Connection::new(config(1), Side::Client, now).unwrap();
            let mut s = Connection::new(config(2), Side::Server, now).unwrap();
            let mut buf = vec![0u8; 2048];
            let mut genuine = Vec::new();
            // Walk the handshake up to `step`, keeping each genuine message.
            let t = c.poll_transmit(now, &mut buf).unwrap();
            genuine.push(buf[..t.len].to_vec());
            if step >= 1 {
                s.handle_packet(now, &genuine[0]).unwrap();
                let t = s.poll_transmit(now, &mut buf).unwrap();
                genuine.push(buf[..t.len].to_vec());
            }
            if step >= 2 {
                c.handle_packet(now, &genuine[1]).unwrap();
                let t = c.poll_transmit(now, &mut buf).unwrap();
                genuine.push(buf[..t.len].to_vec());
            }
            // The forgery: random bytes of the right type, or the genuine message mutated.
            let mut bad = if use_random || flips.is_empty() {
                let mut d = random.clone();
                if d.len() >= 2 {
                    d[0] = 1;
                    d[1] = [5, 6, 7][step];
                }
                d
            } else {
                genuine[step].clone()
            };
            for (i, x) in &flips {
                if !bad.is_empty() {
                    let i = i.index(bad.len());
                    bad[i] ^= x;
                }
            }
            // Flips that cancel out (the same byte flipped twice by the same bits) leave the
            // genuine message: no forgery to refuse.
            if bad == genuine[step] {
                return Ok(());
            }
            let target_is_server = step != 1;
            let r = if target_is_server {
                s.handle_packet(now, &bad)
            } else {
                c.handle_packet(now, &bad)
            };
            // An INIT to a fresh server may be well-formed (it has no authentication):
            // then it is simply a new client; nothing more to check for it.
            if step == 0 && r.is_ok() {
                return Ok(());
            }
            prop_assert!(r.is_err(), "forgery accepted at step {}", step);
            prop_assert!(!matches!(r, Err(PacketError::Closed)));
            prop_assert!(!c.is_closed() && !s.is_closed());
            // The genuine handshake completes.
            if step == 0 {
                s.handle_packet(now, &genuine[0]).unwrap();
                let t = s.poll_transmit(now, &mut buf).unwrap();
                genuine.push(buf[..t.len].to_vec());
            }
            if step <= 1 {
                c.handle_packet(now, &genuine[1]).unwrap();
                let t = c.poll_transmit(now, &mut buf).unwrap();
                genuine.push(buf[..t.len].to_vec());
            }
            s.handle_packet(now, &genuine[2]).unwrap();
            prop_assert!(c.is_established() && s.is_established());
            prop_assert_eq!(s.peer_key(), Some(Identity::from_private([1; 32]).public_key()));
        }
    }

    /// Random datagrams into a server connection at every stage: never a panic; it only ever
    /// becomes established through a genuine handshake.
    #[test]
    fn random_datagrams_never_establish_a_server() {
        use rand::rngs::SmallRng;
        use rand::{Rng, SeedableRng};
        let mut rng = SmallRng::seed_from_u64(11);
        let now = Time::from_millis(1);
        let mut s = Connection::new(config(2), Side::Server, now).unwrap();
        let mut d = [0u8; 400];
        for i in 0..100_000u32 {
            let len = rng.gen_range(0..d.len());
            rng.fill(&mut d[..len]);
            if len >= 2 && i % 2 == 0 {
                d[0] = 1;
                d[1] = rng.gen_range(1..=9);
                if d[1] == 5 && len >= 3 {
                    d[2] = rng.gen_range(0..=64);
                }
            }
            let _ = s.handle_packet(now, &d[..len]);
            assert!(!s.is_established(), "established by random bytes");
            if s.is_closed() {
                s = Connection::new(config(2), Side::Server, now).unwrap();
            }
        }
    }
}
