//! A server connection with security on, fed arbitrary datagrams (the input split at 0xff 0xfe
//! markers into several). Nothing may panic, and no sequence of datagrams from someone without
//! a genuine client's handshake may establish it with a key it has not authenticated.

#![no_main]

use libfuzzer_sys::fuzz_target;
use longhaul_cc::CcSpec;
use longhaul_proto::{Config, Connection, Identity, PeerPolicy, Security, Side, Time};
use std::collections::HashSet;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let server = Identity::from_private([2; 32]);
    let allowed = Identity::from_private([1; 32]).public_key();
    let config = Config {
        security: Security::noise(
            server,
            PeerPolicy::AllowList(Arc::new(HashSet::from([allowed]))),
        ),
        ..Config::new(CcSpec::default_for("reno").unwrap())
    };
    let mut now = Time::from_millis(1);
    let mut s = Connection::new(config, Side::Server, now).unwrap();
    let mut buf = vec![0u8; 65_536];
    for datagram in data.split(|&b| b == 0xff).take(64) {
        let _ = s.handle_packet(now, datagram);
        while s.poll_transmit(now, &mut buf).is_some() {}
        now += std::time::Duration::from_millis(1);
        s.handle_timeout(now);
        // Only the allowed client's key, proven in a FINISH, establishes the server; the fuzzer
        // cannot forge that.
        assert!(!s.is_established());
    }
});
