//! The last argument of `longhaul send`: `[user@]host:DIR` (start the receiver there through
//! ssh, [`crate::ssh`]) or `HOST[:PORT]` (a receiver already running).
//!
//! It is an ssh destination, as in scp, when it has a colon followed by a directory; otherwise
//! it is a `longhaul recv` already running:
//!
//! | argument | meaning |
//! | --- | --- |
//! | `user@host:DIR`, `host:DIR`, `host:` | ssh; `DIR` relative to the remote home, `host:` the home itself |
//! | `user@[2001:db8::7]:DIR` | ssh to an IPv6 address (brackets, as scp) |
//! | `host`, `host:5301`, `[2001:db8::7]:5301`, `2001:db8::7` | UDP to a running receiver |
//!
//! After the colon, all digits is a UDP port (`host:5301`): to name a directory made of digits
//! write `host:./2024` or `host:2024/`. A `user@` always means ssh (`user@host:5301` is the
//! directory `5301`); a bare IPv6 address without brackets is UDP. A leading `~/` in `DIR` is
//! the remote home, as the path is relative to it anyway; `~user/` is not expanded.

use std::net::Ipv6Addr;
use thiserror::Error;

/// Where the receiver runs, as the ssh form names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SshTarget {
    /// The user to log in as (`None`: ssh's default).
    pub user: Option<String>,
    /// Without brackets (ssh takes `user@2001:db8::7`).
    pub host: String,
    /// The directory on the far host, relative to the remote home unless absolute.
    pub dir: String,
}

impl SshTarget {
    /// `[user@]host`, as ssh takes it.
    pub fn login(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.host),
            None => self.host.clone(),
        }
    }
}

/// A destination that reads as neither form, and why.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct DestinationError(pub String);

/// The last argument of `send`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// `HOST[:PORT]`: a receiver already running.
    Udp,
    /// `[user@]host:DIR`: start one through ssh.
    Ssh(SshTarget),
}

impl Destination {
    /// Reads the destination by the rules in this module's documentation.
    pub fn parse(s: &str) -> Result<Destination, DestinationError> {
        macro_rules! bail {
            ($($why:tt)*) => {
                return Err(DestinationError(format!($($why)*)))
            };
        }
        let (user, rest) = match s.split_once('@') {
            None => (None, s),
            Some((u, r)) => {
                if u.is_empty() || u.starts_with('-') || u.contains([':', '/', '[', ' ']) {
                    bail!(
                        "{s:?}: not a user name before the @; the ssh form is \
                         user@host:DIR (e.g. alice@data.example.org:incoming)"
                    );
                }
                (Some(u.to_string()), r)
            }
        };
        let (host, dir) = if let Some(inner) = rest.strip_prefix('[') {
            let Some((host, after)) = inner.split_once(']') else {
                bail!("{s:?}: no ] after [: write an IPv6 address as [2001:db8::7]:DIR or [2001:db8::7]:PORT");
            };
            match after {
                "" => (host, None),
                a if a.starts_with(':') => (host, Some(&a[1..])),
                _ => bail!("{s:?}: after [{host}] comes :DIR, :PORT or nothing"),
            }
        } else if bare_ipv6(rest) {
            (rest, None)
        } else {
            match rest.split_once(':') {
                Some((h, d)) => (h, Some(d)),
                None => (rest, None),
            }
        };
        let dir = match (dir, &user) {
            (None, None) => return Ok(Destination::Udp),
            (None, Some(_)) => bail!(
                "{s:?}: the ssh form needs a directory after a colon: {s}:DIR \
                 ({s}: for the remote home directory)"
            ),
            (Some(d), None) if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => {
                return Ok(Destination::Udp);
            }
            (Some(d), _) => d,
        };
        if host.is_empty() {
            bail!("{s:?}: no host before the colon; the ssh form is [user@]host:DIR");
        }
        if host.starts_with('-') || host.contains(|c: char| c.is_whitespace() || c == '/') {
            bail!("{s:?}: {host:?} is not a host name");
        }
        if dir.chars().any(char::is_control) {
            bail!("{s:?}: the directory holds a control character (a newline, a tab …)");
        }
        // The path is relative to the remote home anyway; a quoted `~` would not expand.
        let dir = match dir {
            "" | "~" => ".",
            d => d.strip_prefix("~/").unwrap_or(d),
        };
        Ok(Destination::Ssh(SshTarget {
            user,
            host: host.to_string(),
            dir: if dir.is_empty() { "." } else { dir }.to_string(),
        }))
    }
}

/// `2001:db8::7` or `fe80::1%eth0`: an IPv6 address without brackets (so without a port).
fn bare_ipv6(s: &str) -> bool {
    let addr = s.split_once('%').map_or(s, |(a, _)| a);
    addr.parse::<Ipv6Addr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ssh(user: Option<&str>, host: &str, dir: &str) -> Destination {
        Destination::Ssh(SshTarget {
            user: user.map(str::to_string),
            host: host.into(),
            dir: dir.into(),
        })
    }

    #[test]
    fn destinations_read_as_scp_reads_them() {
        let p = |s: &str| Destination::parse(s).unwrap();
        assert_eq!(
            p("alice@data.example.org:in"),
            ssh(Some("alice"), "data.example.org", "in")
        );
        assert_eq!(p("data:/srv/in"), ssh(None, "data", "/srv/in"));
        assert_eq!(p("data:"), ssh(None, "data", "."));
        assert_eq!(p("alice@data:~"), ssh(Some("alice"), "data", "."));
        assert_eq!(p("data:~/in"), ssh(None, "data", "in"));
        assert_eq!(p("data:2024/"), ssh(None, "data", "2024/"));
        assert_eq!(p("data:./2024"), ssh(None, "data", "./2024"));
        assert_eq!(p("root@data:5301"), ssh(Some("root"), "data", "5301"));
        assert_eq!(
            p("bob@[2001:db8::7]:in"),
            ssh(Some("bob"), "2001:db8::7", "in")
        );
        assert_eq!(
            p("[2001:db8::7]:in dir"),
            ssh(None, "2001:db8::7", "in dir")
        );
        for udp in [
            "data",
            "data:5301",
            "192.0.2.7",
            "192.0.2.7:7000",
            "[2001:db8::7]:5301",
            "[2001:db8::7]",
            "2001:db8::7",
            "::1",
            "fe80::1%eth0",
        ] {
            assert_eq!(p(udp), Destination::Udp, "{udp}");
        }
    }

    #[test]
    fn bad_destinations_say_what_was_expected() {
        for (bad, says) in [
            ("alice@data", "needs a directory"),
            ("@data:in", "user name"),
            ("-oProxyCommand=x:in", "not a host name"),
            (":in", "no host"),
            ("[2001:db8::7:in", "no ]"),
            ("[::1]x", "after [::1]"),
            ("data:in\nx", "control character"),
        ] {
            let e = Destination::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
