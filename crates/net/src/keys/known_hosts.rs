//! `known_hosts`: the receivers' keys a sender has seen, hosts named as ssh names them, and trust
//! on first use.

use super::error::io_error;
use super::files::create_parent;
use super::strict::{check_directory, check_strict};
use super::text::{lines, parse_public, read_text, shown, split_word};
use super::{KeyError, PublicKey, HOST_FORMAT, KEY_TYPE, MAX_FILE};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// How a host is named in `known_hosts`: lowercase, without the default port, `[host]:port`
/// with another one. Takes what the user typed: `host`, `host:port`, `[host]:port`, `[v6]`, or a
/// bare IPv6 address. (Anything else is kept as it is, lowercased.)
pub fn host_name(spec: &str) -> String {
    let s = spec.trim().to_lowercase();
    let (host, port) = if let Some(inner) = s.strip_prefix('[') {
        match inner.split_once(']') {
            Some((h, "")) => (h.to_string(), None),
            Some((h, rest)) => match rest.strip_prefix(':').and_then(|p| p.parse::<u16>().ok()) {
                Some(p) => (h.to_string(), Some(p)),
                None => return s,
            },
            None => return s,
        }
    } else if let Some((h, p)) = s.split_once(':').filter(|(_, p)| !p.contains(':')) {
        match p.parse::<u16>() {
            Ok(p) => (h.to_string(), Some(p)),
            Err(_) => return s,
        }
    } else {
        return s;
    };
    match port {
        Some(p) if p != crate::DEFAULT_PORT => format!("[{host}]:{p}"),
        _ => host,
    }
}

/// One line of `known_hosts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownHost {
    /// The names, as [`host_name`] makes them.
    pub hosts: Vec<String>,
    /// The host's key.
    pub key: PublicKey,
    /// The entry's 1-based line in the file.
    pub line: usize,
}

/// What `known_hosts` says of a host and the key it presented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostCheck {
    /// The file holds this key for the host.
    Known,
    /// The file says nothing of the host.
    Unknown,
    /// The file holds another key for the host, on `line`.
    Mismatch {
        /// The key the file holds for the host.
        expected: PublicKey,
        /// The 1-based line that holds it.
        line: usize,
    },
}

/// What [`KnownHosts::check_or_learn`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// The host's key was in the file already.
    Known,
    /// First contact: the key was added to the file, on `line`.
    Learned {
        /// The 1-based line the key was written on.
        line: usize,
    },
}

/// The receivers' keys a sender has seen.
#[derive(Clone, Debug)]
pub struct KnownHosts {
    path: PathBuf,
    entries: Vec<KnownHost>,
}

impl KnownHosts {
    /// Reads `path`; a missing file knows no host.
    pub fn load(path: &Path) -> Result<KnownHosts, KeyError> {
        let mut known = KnownHosts {
            path: path.into(),
            entries: Vec::new(),
        };
        let file = match File::open(path) {
            // `add` would create it there.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                check_directory(path)?;
                return Ok(known);
            }
            r => r.map_err(io_error(path))?,
        };
        check_strict(path, &file.metadata().map_err(io_error(path))?)?;
        let text = read_text(path, file)?;
        for (line, content) in lines(&text) {
            let entry = parse_known_host(content, line).map_err(|problem| KeyError::Parse {
                path: path.into(),
                line,
                problem,
            })?;
            known.entries.push(entry);
        }
        Ok(known)
    }

    /// The file the entries were read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry, in file order.
    pub fn entries(&self) -> &[KnownHost] {
        &self.entries
    }

    /// The key recorded for `host` (as the user typed it; see [`host_name`]).
    pub fn lookup(&self, host: &str) -> Option<PublicKey> {
        self.entries_for(&host_name(host)).next().map(|e| e.key)
    }

    /// What the file says of `host` (as the user typed it) presenting `key`; a host listed with
    /// several keys is known if any of them matches.
    pub fn check(&self, host: &str, key: &PublicKey) -> HostCheck {
        let name = host_name(host);
        if self.entries_for(&name).any(|e| e.key == *key) {
            return HostCheck::Known;
        }
        let first = self.entries_for(&name).next().map(|e| (e.key, e.line));
        match first {
            Some((expected, line)) => HostCheck::Mismatch { expected, line },
            None => HostCheck::Unknown,
        }
    }

    /// Appends `host key` to the file (created, with its directory, if missing), flushed to disk
    /// before it returns; the line number it got.
    pub fn add(&mut self, host: &str, key: &PublicKey) -> Result<usize, KeyError> {
        let name = host_name(host);
        if name.is_empty()
            || name
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || c == ',' || c == '#')
        {
            return Err(KeyError::BadText(format!(
                "{} cannot be recorded in {}: a host name has no spaces, commas, `#` or \
                 control characters",
                shown(host),
                self.path.display()
            )));
        }
        let path = self.path.clone();
        create_parent(&path)?;
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o644)
            .open(&path)
            .map_err(io_error(&path))?;
        // What is there now (another sender may have added a line since `load`): its line
        // count, and whether its last line lacks a newline.
        let mut existing = Vec::new();
        (&mut file)
            .take(MAX_FILE)
            .read_to_end(&mut existing)
            .map_err(io_error(&path))?;
        let mut record = String::new();
        let mut line = existing.iter().filter(|&&b| b == b'\n').count() + 1;
        if existing.last().is_some_and(|&b| b != b'\n') {
            record.push('\n');
            line += 1;
        }
        record.push_str(&format!("{name} {key}\n"));
        // One write on an O_APPEND file: concurrent appenders do not interleave within it.
        file.write_all(record.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(io_error(&path))?;
        self.entries.push(KnownHost {
            hosts: vec![name],
            key: *key,
            line,
        });
        Ok(line)
    }

    /// Trust on first use: a known key passes, an unknown host's key is added to the file, and
    /// another key than the recorded one is [`KeyError::HostKeyChanged`].
    pub fn check_or_learn(&mut self, host: &str, key: &PublicKey) -> Result<Trust, KeyError> {
        match self.check(host, key) {
            HostCheck::Known => Ok(Trust::Known),
            HostCheck::Unknown => Ok(Trust::Learned {
                line: self.add(host, key)?,
            }),
            HostCheck::Mismatch { expected, line } => Err(KeyError::HostKeyChanged {
                host: host_name(host),
                path: self.path.clone(),
                line,
                expected,
                got: *key,
            }),
        }
    }

    fn entries_for<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a KnownHost> + 'a {
        self.entries
            .iter()
            .filter(move |e| e.hosts.iter().any(|h| h == name))
    }
}

pub(super) fn parse_known_host(content: &str, line: usize) -> Result<KnownHost, String> {
    let (hosts, rest) = split_word(content);
    if hosts == KEY_TYPE {
        return Err(format!("the line names no host: expected {HOST_FORMAT}"));
    }
    if hosts.starts_with('|') || hosts.starts_with('@') {
        return Err(format!(
            "hashed names and `@` markers are not supported: expected {HOST_FORMAT}"
        ));
    }
    let (key, _comment) = parse_public(rest).map_err(|p| {
        if rest.is_empty() {
            format!("a host without a key: expected {HOST_FORMAT}")
        } else {
            p
        }
    })?;
    let hosts: Vec<String> = hosts.split(',').map(host_name).collect();
    if hosts.iter().any(String::is_empty) {
        return Err(format!("an empty host name: expected {HOST_FORMAT}"));
    }
    Ok(KnownHost { hosts, key, line })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::tests::*;
    use std::fs;

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
}
