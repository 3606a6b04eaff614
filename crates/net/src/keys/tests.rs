use super::known_hosts::parse_known_host;
use super::text::decode_key;
use super::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::fs;
use std::os::unix::fs::PermissionsExt;

// The key pairs, keys and helpers the tests of every part of `keys` share.

// RFC 7748, section 6.1: Alice's and Bob's X25519 key pairs and their shared secret.
pub(super) const ALICE_PRIVATE: &str = "dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=";
pub(super) const ALICE_PUBLIC: &str = "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=";
pub(super) const BOB_PUBLIC: &str = "3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx+FG+IK08=";
// `SHA256:` + unpadded base64 of SHA-256 of Alice's public key (computed independently).
pub(super) const ALICE_FINGERPRINT: &str = "SHA256:MAyclgO5Kks57TlYv5JAEUgE20/TcwEsDKR0MtY0Ja4";

pub(super) fn key(b64: &str) -> PublicKey {
    b64.parse().unwrap()
}

pub(super) fn alice() -> KeyPair {
    KeyPair::from_private(&decode_key(ALICE_PRIVATE).unwrap())
}

pub(super) fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

pub(super) fn write(path: &Path, text: &str, mode: u32) {
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

pub(super) fn parse_error(e: KeyError) -> (usize, String) {
    match e {
        KeyError::Parse { line, problem, .. } => (line, problem),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn garbage_never_panics() {
    let mut rng = SmallRng::seed_from_u64(11);
    let alphabet: Vec<char> = "longhaul-x25519-private AZaz09+/=#[]:,.| \t\r\n\u{1b}é\u{0}"
        .chars()
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    for _ in 0..3000 {
        let len = rng.gen_range(0..120);
        let text: String = (0..len)
            .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
            .collect();
        let _ = PublicKey::parse_line(&text);
        let _ = text.parse::<PublicKey>();
        let _ = host_name(&text);
        let _ = parse_known_host(&text, 1);
        write(&path, &text, 0o600);
        let _ = read_private_key(&path);
        let _ = AuthorizedKeys::load(&path);
        let _ = KnownHosts::load(&path);
    }
}

#[test]
fn locations_follow_longhaul_home() {
    // (The default paths under a real `$LONGHAUL_HOME`: the CLI's keygen test.)
    let os = |s: &str| Some(std::ffi::OsString::from(s));
    assert_eq!(
        home_from(os("/srv/lh"), os("/home/alice")).unwrap(),
        Path::new("/srv/lh")
    );
    assert_eq!(
        home_from(os(""), os("/home/alice")).unwrap(),
        Path::new("/home/alice/.longhaul")
    );
    assert_eq!(
        home_from(None, os("/home/alice")).unwrap(),
        Path::new("/home/alice/.longhaul")
    );
    let e = home_from(None, os("")).unwrap_err().to_string();
    assert!(e.contains("set $LONGHAUL_HOME"), "{e}");
    assert_eq!(
        public_key_path(Path::new("/k/id_x25519")),
        Path::new("/k/id_x25519.pub")
    );
}
