//! Every decoder over arbitrary bytes: the outer layer, the plain packets, the INIT's token,
//! and opening as a sealed datagram. None may panic; what is accepted must be consistent.

#![no_main]

use libfuzzer_sys::fuzz_target;
use longhaul_proto::packet::{self, Outer};
use longhaul_proto::secure::seal::PacketKey;
use longhaul_proto::Cipher;

fuzz_target!(|data: &[u8]| {
    let _ = packet::decode(data);
    match packet::decode_outer(data) {
        Ok(Outer::Init { token, .. }) => {
            assert!(token.len() <= packet::MAX_TOKEN_LEN);
            assert_eq!(packet::handshake_token(data), Some(token));
            let mut retry = [0u8; 128];
            let n = packet::encode_retry(data, token, &mut retry).expect("an INIT can be answered");
            assert!(matches!(packet::decode_outer(&retry[..n]), Ok(Outer::Retry { .. })));
        }
        Ok(Outer::Sealed { seal_number, .. }) => {
            // Without the key nothing opens.
            for cipher in Cipher::ALL {
                let mut b = data.to_vec();
                assert!(PacketKey::new(cipher, &[1; 32]).open(seal_number, &mut b).is_err());
            }
        }
        _ => assert_eq!(packet::handshake_token(data), None),
    }
});
