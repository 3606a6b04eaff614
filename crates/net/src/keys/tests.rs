use super::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::fs;

// RFC 7748, section 6.1: Alice's and Bob's X25519 key pairs and their shared secret.
const ALICE_PRIVATE: &str = "dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=";
const ALICE_PUBLIC: &str = "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=";
const BOB_PUBLIC: &str = "3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx+FG+IK08=";
// `SHA256:` + unpadded base64 of SHA-256 of Alice's public key (computed independently).
const ALICE_FINGERPRINT: &str = "SHA256:MAyclgO5Kks57TlYv5JAEUgE20/TcwEsDKR0MtY0Ja4";

fn key(b64: &str) -> PublicKey {
    b64.parse().unwrap()
}

fn alice() -> KeyPair {
    KeyPair::from_private(&decode_key(ALICE_PRIVATE).unwrap())
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn write(path: &Path, text: &str, mode: u32) {
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn parse_error(e: KeyError) -> (usize, String) {
    match e {
        KeyError::Parse { line, problem, .. } => (line, problem),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn key_pair_is_standard_x25519() {
    let pair = alice();
    assert_eq!(pair.public, key(ALICE_PUBLIC));
    // The pairs agree on RFC 7748's shared secret: plain X25519, as Noise's 25519 DH is.
    let secret = x25519_dalek::StaticSecret::from(*pair.private_bytes());
    let shared = secret.diffie_hellman(&x25519_dalek::PublicKey::from(key(BOB_PUBLIC).0));
    assert_eq!(
        STANDARD.encode(shared.as_bytes()),
        "Sl2dW6TOLeFyjjv0gDUPJeB+IclH0Z4zdvCbPB4WF0I="
    );
    let a = KeyPair::generate().unwrap();
    let b = KeyPair::generate().unwrap();
    assert_ne!(a.public, b.public);
    assert_eq!(KeyPair::from_private(a.private_bytes()).public, a.public);
    let debug = format!("{pair:?}");
    assert!(
        !debug.contains(ALICE_PRIVATE) && debug.contains("<secret>"),
        "{debug}"
    );
}

#[test]
fn fingerprint_is_sha256_unpadded_base64() {
    assert_eq!(key(ALICE_PUBLIC).fingerprint(), ALICE_FINGERPRINT);
    let fp = KeyPair::generate().unwrap().public.fingerprint();
    assert!(
        fp.starts_with("SHA256:") && fp.len() == 7 + 43 && !fp.contains('='),
        "{fp}"
    );
}

#[test]
fn public_key_lines_round_trip() {
    let k = key(ALICE_PUBLIC);
    assert_eq!(k.to_string(), format!("longhaul-x25519 {ALICE_PUBLIC}"));
    let line = k.to_line(Some("alice@laptop (lab 2)"));
    assert_eq!(
        line,
        format!("longhaul-x25519 {ALICE_PUBLIC} alice@laptop (lab 2)")
    );
    let (parsed, comment) = PublicKey::parse_line(&format!("  {line}  \n")).unwrap();
    assert_eq!(parsed, k);
    assert_eq!(comment.as_deref(), Some("alice@laptop (lab 2)"));
    assert_eq!(PublicKey::parse_line(&k.to_line(None)).unwrap(), (k, None));
    // `--peer-key` may be given the line or the bare key.
    assert_eq!(line.parse::<PublicKey>().unwrap(), k);
    assert_eq!(format!(" {ALICE_PUBLIC} ").parse::<PublicKey>().unwrap(), k);
    assert_eq!(PublicKey::try_from(&k.0[..]).unwrap(), k);
    assert!(PublicKey::try_from(&k.0[..31]).is_err());
}

#[test]
fn bad_public_key_lines_say_what_was_expected() {
    let cases = [
        (
            "",
            "no key: expected `longhaul-x25519 <base64 key> [comment]`",
        ),
        ("longhaul-x25519", "`longhaul-x25519` without a key"),
        (
            "longhaul-x25519 AAAA",
            "decodes to 3 bytes; a longhaul key has 32",
        ),
        ("longhaul-x25519 not*base64", "not valid base64"),
        ("ssh-ed25519 AAAAC3Nz u@h", "`ssh-ed25519` is an ssh key"),
        (
            &format!("longhaul-x25519-private {ALICE_PRIVATE}"),
            "this is a private key",
        ),
        (
            "rsa AAAA",
            "expected `longhaul-x25519 <base64 key> [comment]`, found `rsa AAAA`",
        ),
    ];
    for (line, expected) in cases {
        let e = PublicKey::parse_line(line).unwrap_err().to_string();
        assert!(e.contains(expected), "{line:?}: {e}");
    }
    assert!("longhaul-x25519".parse::<PublicKey>().is_err());
    assert!("x".parse::<PublicKey>().is_err());
    // What is quoted back is escaped and cut short.
    let e = PublicKey::parse_line(&format!("\x1b[31m{}", "y".repeat(100))).unwrap_err();
    let e = e.to_string();
    assert!(
        e.contains("\\u{1b}[31m") && e.contains('…') && !e.contains('\x1b'),
        "{e}"
    );
}

#[test]
fn writes_a_pair_with_owner_only_private_key() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("new-home");
    let path = home.join("id_x25519");
    let pair = KeyPair::generate().unwrap();
    let pub_path = write_keypair(&path, &pair, Some("alice@laptop"), false).unwrap();
    assert_eq!(pub_path, home.join("id_x25519.pub"));
    assert_eq!(mode(&home), 0o700);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&pub_path), 0o644);
    let read = read_private_key(&path).unwrap();
    assert_eq!(read.public, pair.public);
    assert_eq!(read.private_bytes(), pair.private_bytes());
    assert_eq!(
        fs::read_to_string(&pub_path).unwrap(),
        format!("{} alice@laptop\n", pair.public)
    );
    assert_eq!(
        read_public_key(&pub_path).unwrap(),
        (pair.public, Some("alice@laptop".into()))
    );
}

#[test]
fn never_overwrites_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("id_x25519");
    let first = KeyPair::generate().unwrap();
    write_keypair(&path, &first, None, false).unwrap();
    let before = (
        fs::read(&path).unwrap(),
        fs::read(public_key_path(&path)).unwrap(),
    );

    let second = KeyPair::generate().unwrap();
    let e = write_keypair(&path, &second, None, false).unwrap_err();
    assert!(
        matches!(&e, KeyError::Exists { path: p } if *p == path),
        "{e:?}"
    );
    assert!(e.to_string().contains("--force"), "{e}");
    let after = (
        fs::read(&path).unwrap(),
        fs::read(public_key_path(&path)).unwrap(),
    );
    assert_eq!(before, after);

    // A `.pub` alone also stops it, before any private key is written.
    let lone = dir.path().join("other");
    fs::write(public_key_path(&lone), "x").unwrap();
    let e = write_keypair(&lone, &second, None, false).unwrap_err();
    assert!(matches!(e, KeyError::Exists { .. }), "{e:?}");
    assert!(!lone.exists());

    // Even with force, a link or a FIFO in the way is refused and left as it was.
    let elsewhere = tempfile::tempdir().unwrap();
    let link = elsewhere.path().join("linked");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    let e = write_keypair(&link, &second, None, true).unwrap_err();
    assert!(matches!(e, KeyError::NotRegular { .. }), "{e:?}");
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let fifo = elsewhere.path().join("fifo");
    nix::unistd::mkfifo(&public_key_path(&fifo), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let e = write_keypair(&fifo, &second, None, true).unwrap_err();
    assert!(
        e.to_string().contains("remove it or choose another path"),
        "{e}"
    );
    assert!(!fifo.exists(), "nothing written before the refusal");
    assert_eq!(before.0, fs::read(&path).unwrap());

    // With force, the pair is replaced, still owner-only, and no temporary file is left.
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    write_keypair(&path, &second, Some("new"), true).unwrap();
    assert_eq!(read_private_key(&path).unwrap().public, second.public);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(
        read_public_key(&public_key_path(&path)).unwrap(),
        (second.public, Some("new".into()))
    );
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

#[test]
fn refuses_a_comment_that_would_break_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("id");
    let e = write_keypair(&path, &alice(), Some("a\nlonghaul-x25519 evil"), false).unwrap_err();
    assert!(e.to_string().contains("control character"), "{e}");
    assert!(!path.exists());
}

#[test]
fn refuses_a_private_key_others_can_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("id_x25519");
    write_keypair(&path, &alice(), None, false).unwrap();
    for bad in [0o644, 0o640, 0o604, 0o660] {
        fs::set_permissions(&path, fs::Permissions::from_mode(bad)).unwrap();
        let e = read_private_key(&path).unwrap_err();
        let text = e.to_string();
        let shown = path.display();
        assert!(
            text.starts_with(&format!("permissions {bad:04o} for {shown} are too open")),
            "{text}"
        );
        assert!(text.contains(&format!("chmod 600 {shown}")), "{text}");
    }
    for good in [0o600, 0o400] {
        fs::set_permissions(&path, fs::Permissions::from_mode(good)).unwrap();
        assert_eq!(read_private_key(&path).unwrap().public, key(ALICE_PUBLIC));
    }
    let e = read_private_key(&dir.path().join("missing")).unwrap_err();
    assert!(
        e.to_string().contains("create one with `longhaul keygen`"),
        "{e}"
    );
}

#[test]
fn malformed_private_keys_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("id");
    let cases: &[(&str, usize, &str)] = &[
        (
            "# comment\n\nlonghaul-x25519-private AAAA\n",
            3,
            "decodes to 3 bytes",
        ),
        (
            "# mine\nhello\n",
            2,
            "expected `longhaul-x25519-private <base64 key>`, found `hello`",
        ),
        ("longhaul-x25519-private\n", 1, "without a key"),
        (
            &format!("longhaul-x25519-private {ALICE_PRIVATE} me@host\n"),
            1,
            "comments go on lines starting with #",
        ),
        (
            &format!("longhaul-x25519-private {ALICE_PRIVATE}\nlonghaul-x25519-private {ALICE_PRIVATE}\n"),
            2,
            "a second private key",
        ),
        (
            &format!("longhaul-x25519 {ALICE_PUBLIC} me\n"),
            1,
            "this is a public key",
        ),
    ];
    for (text, line, expected) in cases {
        write(&path, text, 0o600);
        let (n, problem) = parse_error(read_private_key(&path).unwrap_err());
        assert_eq!(n, *line, "{text:?}: {problem}");
        assert!(problem.contains(expected), "{text:?}: {problem}");
    }
    write(&path, "# nothing but a comment\n", 0o600);
    let e = read_private_key(&path).unwrap_err().to_string();
    assert!(e.contains("holds no private key"), "{e}");

    fs::write(&path, b"# ok\n\xff\xfe\n").unwrap();
    let (n, problem) = parse_error(read_private_key(&path).unwrap_err());
    assert_eq!(n, 2);
    assert!(problem.contains("not text"), "{problem}");

    // A comment and a CRLF line end are fine.
    write(
        &path,
        &format!("# x\r\nlonghaul-x25519-private {ALICE_PRIVATE}\r\n"),
        0o600,
    );
    assert_eq!(read_private_key(&path).unwrap().public, key(ALICE_PUBLIC));

    let e = read_private_key(dir.path()).unwrap_err();
    assert!(matches!(e, KeyError::NotAFile { .. }), "{e:?}");
}

#[test]
fn authorized_keys_with_comments_and_blank_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authorized_keys");
    write(
        &path,
        &format!(
            "# senders allowed here\n\nlonghaul-x25519 {ALICE_PUBLIC} alice@laptop\n   \n\
             \t# bob's workstation\n  longhaul-x25519 {BOB_PUBLIC}\n"
        ),
        0o644,
    );
    let auth = AuthorizedKeys::load(&path).unwrap();
    assert_eq!(auth.entries().len(), 2);
    assert!(auth.contains(&key(ALICE_PUBLIC)) && auth.contains(&key(BOB_PUBLIC)));
    assert!(!auth.contains(&KeyPair::generate().unwrap().public));
    let a = auth.get(&key(ALICE_PUBLIC)).unwrap();
    assert_eq!((a.line, a.comment.as_deref()), (3, Some("alice@laptop")));
    assert_eq!(auth.get(&key(BOB_PUBLIC)).unwrap().line, 6);
    assert_eq!(auth.keys().len(), 2);
    assert_eq!(auth.path(), path);
}

#[test]
fn authorized_keys_errors_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authorized_keys");

    let e = AuthorizedKeys::load(&path).unwrap_err().to_string();
    assert!(
        e.contains("does not exist, so no sender is authorized"),
        "{e}"
    );
    assert!(
        e.contains("`longhaul keygen`") && e.contains("append"),
        "{e}"
    );

    write(&path, "# nobody yet\n\n", 0o644);
    let e = AuthorizedKeys::load(&path).unwrap_err().to_string();
    assert!(e.contains("lists no keys"), "{e}");

    write(
        &path,
        &format!("# ok\nlonghaul-x25519 {ALICE_PUBLIC}\nlonghaul-x25519 {ALICE_PUBLIC}x\n"),
        0o644,
    );
    let e = AuthorizedKeys::load(&path).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "{}, line 3: the key is not valid base64",
            path.display()
        )),
        "{e}"
    );

    write(&path, &format!("longhaul-x25519 {ALICE_PUBLIC}\n"), 0o666);
    let e = AuthorizedKeys::load(&path).unwrap_err().to_string();
    assert!(e.contains("writable by group or others (mode 0666)"), "{e}");
    assert!(e.contains("chmod go-w"), "{e}");
}

#[test]
fn host_names_are_normalized() {
    let cases = [
        ("data.example.org", "data.example.org"),
        ("Data.Example.ORG", "data.example.org"),
        ("data.example.org:5301", "data.example.org"),
        ("[data.example.org]:5301", "data.example.org"),
        ("data.example.org:7000", "[data.example.org]:7000"),
        ("[DATA.example.org]:7000", "[data.example.org]:7000"),
        ("192.0.2.7", "192.0.2.7"),
        ("::1", "::1"),
        ("[::1]", "::1"),
        ("[::1]:5301", "::1"),
        ("[2001:DB8::1]:7000", "[2001:db8::1]:7000"),
        ("host:notaport", "host:notaport"),
        ("[half", "[half"),
    ];
    for (typed, name) in cases {
        assert_eq!(host_name(typed), name, "{typed}");
    }
}

#[test]
fn known_hosts_check_add_and_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("known_hosts");
    let (a, b) = (key(ALICE_PUBLIC), key(BOB_PUBLIC));

    let mut known = KnownHosts::load(&path).unwrap();
    assert!(known.entries().is_empty());
    assert_eq!(known.check("data.example.org", &a), HostCheck::Unknown);
    assert_eq!(known.add("Data.Example.org", &a).unwrap(), 1);
    assert_eq!(known.add("data.example.org:7000", &b).unwrap(), 2);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        format!("data.example.org {a}\n[data.example.org]:7000 {b}\n")
    );

    // As loaded from the file, and as held in memory after `add`, alike.
    for known in [known.clone(), KnownHosts::load(&path).unwrap()] {
        assert_eq!(known.lookup("DATA.example.org:5301"), Some(a));
        assert_eq!(known.lookup("[data.example.org]:7000"), Some(b));
        assert_eq!(known.lookup("data.example.org:7001"), None);
        assert_eq!(known.check("data.example.org", &a), HostCheck::Known);
        assert_eq!(
            known.check("data.example.org", &b),
            HostCheck::Mismatch {
                expected: a,
                line: 1
            }
        );
        assert_eq!(known.check("other.example.org", &a), HostCheck::Unknown);
    }
}

#[test]
fn trust_on_first_use_then_refuse_a_changed_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("known_hosts");
    // Someone's hand-written file: a comment, several names on a line, no final newline.
    fs::write(
        &path,
        format!("# mine\nfar.example.org,192.0.2.7 longhaul-x25519 {BOB_PUBLIC} lab"),
    )
    .unwrap();
    let (a, b) = (key(ALICE_PUBLIC), key(BOB_PUBLIC));
    let mut known = KnownHosts::load(&path).unwrap();
    assert_eq!(known.check_or_learn("192.0.2.7", &b).unwrap(), Trust::Known);
    assert_eq!(
        known.check_or_learn("new.example.org", &a).unwrap(),
        Trust::Learned { line: 3 }
    );
    assert_eq!(
        known.check_or_learn("new.example.org", &a).unwrap(),
        Trust::Known
    );
    assert!(fs::read_to_string(&path)
        .unwrap()
        .ends_with(&format!(" lab\nnew.example.org {a}\n")));

    let e = known.check_or_learn("FAR.example.org", &a).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "the receiver's key changed: far.example.org presented {}, but line 2 of {} holds {}",
            a.fingerprint(),
            path.display(),
            b.fingerprint()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "remove line 2 of {} and connect again",
            path.display()
        )),
        "{text}"
    );
    // The file is unchanged by a refusal.
    assert_eq!(KnownHosts::load(&path).unwrap().entries().len(), 2);

    let e = known.add("bad host", &a).unwrap_err().to_string();
    assert!(e.contains("no spaces"), "{e}");
}

#[test]
fn malformed_known_hosts_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("known_hosts");
    let cases = [
        (format!("longhaul-x25519 {ALICE_PUBLIC}"), "names no host"),
        ("host.example".to_string(), "a host without a key"),
        (
            format!("|1|salt|hash longhaul-x25519 {ALICE_PUBLIC}"),
            "hashed names",
        ),
        (
            format!("a,,b longhaul-x25519 {ALICE_PUBLIC}"),
            "an empty host name",
        ),
        ("h ssh-ed25519 AAAA".to_string(), "is an ssh key"),
    ];
    for (bad, expected) in cases {
        fs::write(
            &path,
            format!("# x\nok longhaul-x25519 {BOB_PUBLIC}\n{bad}\n"),
        )
        .unwrap();
        let (line, problem) = parse_error(KnownHosts::load(&path).unwrap_err());
        assert_eq!(line, 3, "{bad}");
        assert!(problem.contains(expected), "{bad}: {problem}");
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

/// ssh's StrictModes: a key or trust file is not used when the directory holding it may be
/// written by group or others (whoever can write there can put another file in its place), or
/// when the file or that directory belongs to a user other than the one running longhaul (or
/// root); each error says what to chmod or chown.
#[test]
fn key_files_in_an_open_directory_or_owned_by_another_user_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let private = home.join("id_x25519");
    write_keypair(&private, &alice(), None, false).unwrap();
    let authorized = home.join("authorized_keys");
    write(
        &authorized,
        &format!("longhaul-x25519 {BOB_PUBLIC}\n"),
        0o644,
    );
    let known = home.join("known_hosts");
    write(&known, &format!("h longhaul-x25519 {BOB_PUBLIC}\n"), 0o644);
    let loads = || {
        [
            read_private_key(&private).map(|_| ()),
            AuthorizedKeys::load(&authorized).map(|_| ()),
            KnownHosts::load(&known).map(|_| ()),
        ]
    };
    for r in loads() {
        r.unwrap();
    }
    let shown = home.display().to_string();
    for open in [0o777, 0o775, 0o757, 0o1777] {
        fs::set_permissions(&home, fs::Permissions::from_mode(open)).unwrap();
        for r in loads() {
            let e = r.unwrap_err().to_string();
            assert!(
                e.starts_with(&format!(
                    "{shown} is writable by group or others (mode {open:04o})"
                )),
                "{e}"
            );
            assert!(e.contains(&format!("chmod go-w {shown}`")), "{e}");
        }
    }
    // Without known_hosts yet, the sender would write it there: refused too.
    fs::remove_file(&known).unwrap();
    assert!(KnownHosts::load(&known).is_err());
    fs::set_permissions(&home, fs::Permissions::from_mode(0o755)).unwrap();
    assert!(KnownHosts::load(&known).is_ok());
    write(&known, &format!("h longhaul-x25519 {BOB_PUBLIC}\n"), 0o644);
    for r in loads() {
        r.unwrap();
    }

    // Files owned by another user: only root can make them.
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if me != 0 {
        eprintln!("SKIPPED the ownership half: needs root (chown)");
        return;
    }
    let nobody = 65534;
    for (i, file) in [&private, &authorized, &known].into_iter().enumerate() {
        std::os::unix::fs::chown(file, Some(nobody), None).unwrap();
        let e = loads()[i].as_ref().unwrap_err().to_string();
        let shown = file.display();
        assert!(
            e.starts_with(&format!("{shown} belongs to uid {nobody}, not to uid {me}")),
            "{e}"
        );
        assert!(e.contains(&format!("chown {me} {shown}`")), "{e}");
        std::os::unix::fs::chown(file, Some(me), None).unwrap();
        loads()[i].as_ref().unwrap();
    }
    std::os::unix::fs::chown(&home, Some(nobody), None).unwrap();
    for r in loads() {
        let e = r.unwrap_err().to_string();
        assert!(e.contains(&format!("chown {me} {shown}`")), "{e}");
    }
}
