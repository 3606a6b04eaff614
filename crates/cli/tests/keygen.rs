//! `longhaul keygen`: the files it writes under `$LONGHAUL_HOME`, their modes, what it prints,
//! and its refusals.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

fn keygen(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_longhaul"))
        .arg("keygen")
        .args(args)
        .env("LONGHAUL_HOME", home)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn writes_the_pair_then_refuses_to_overwrite_it() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("lh");
    let out = keygen(&home, &["-C", "alice@lab"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let private = home.join("id_x25519");
    let public = home.join("id_x25519.pub");
    assert_eq!(mode(&home), 0o700);
    assert_eq!(mode(&private), 0o600);
    assert_eq!(mode(&public), 0o644);
    let line = fs::read_to_string(&public).unwrap();
    let line = line.trim_end();
    assert!(
        line.starts_with("longhaul-x25519 ") && line.ends_with(" alice@lab"),
        "{line}"
    );
    assert!(stdout.contains(line), "{stdout}");
    assert!(stdout.contains("fingerprint SHA256:"), "{stdout}");
    let authorized = home.join("authorized_keys");
    assert!(
        stdout.contains(&authorized.display().to_string()),
        "{stdout}"
    );
    let private_text = fs::read_to_string(&private).unwrap();
    assert!(private_text.contains("\nlonghaul-x25519-private "));

    // --show prints the same line on stdout, alone, so it can be piped into a peer's file.
    let out = keygen(&home, &["--show"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{line}\n"));
    assert!(text(&out.stderr).starts_with("fingerprint SHA256:"));

    // A second run keeps the pair.
    let out = keygen(&home, &[]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("already exists") && stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(fs::read_to_string(&private).unwrap(), private_text);

    // --force replaces it.
    let out = keygen(&home, &["--force", "-C", "new"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_ne!(fs::read_to_string(&private).unwrap(), private_text);
    assert_eq!(mode(&private), 0o600);
    assert!(fs::read_to_string(&public).unwrap().ends_with(" new\n"));
}

#[test]
fn show_refuses_a_private_key_others_can_read() {
    let tmp = tempfile::tempdir().unwrap();
    let key = tmp.path().join("keys").join("host_key");
    let f = key.to_str().unwrap();
    let out = keygen(tmp.path(), &["-f", f]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(tmp.path().join("keys/host_key.pub").exists());

    fs::set_permissions(&key, fs::Permissions::from_mode(0o644)).unwrap();
    let out = keygen(tmp.path(), &["--show", "-f", f]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(&format!("permissions 0644 for {f} are too open")),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("chmod 600 {f}")), "{stderr}");
}

#[test]
fn show_without_a_key_says_how_to_make_one() {
    let tmp = tempfile::tempdir().unwrap();
    let out = keygen(tmp.path(), &["--show"]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("no private key at") && stderr.contains("longhaul keygen"),
        "{stderr}"
    );
}

#[test]
fn refuses_a_comment_with_a_newline() {
    let tmp = tempfile::tempdir().unwrap();
    let out = keygen(tmp.path(), &["-C", "a\nb"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("control character"));
    assert!(!tmp.path().join("id_x25519").exists());
}

/// A directory anyone may write (0777) is refused before any key is written, as ssh's
/// StrictModes refuses one, with the command that fixes it; after that command keygen succeeds.
#[test]
fn refuses_a_directory_others_can_write() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("lh");
    fs::create_dir(&home).unwrap();
    fs::set_permissions(&home, fs::Permissions::from_mode(0o777)).unwrap();
    let out = keygen(&home, &[]);
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("writable by group or others"), "{err}");
    assert!(err.contains("mode 0777"), "{err}");
    assert!(err.contains("chmod go-w"), "{err}");
    assert_eq!(fs::read_dir(&home).unwrap().count(), 0, "a key was written");
    fs::set_permissions(&home, fs::Permissions::from_mode(0o755)).unwrap();
    let out = keygen(&home, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(mode(&home.join("id_x25519")), 0o600);
}
