//! The announce line: how a receiver started by a program (`longhaul recv --announce`, as the
//! ssh launch in [`crate::ssh`] starts it) tells that program where it listens and with which
//! key.
//!
//! ```text
//! longhaul-recv-ready port=40123 key=hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo= via=192.0.2.7
//! ```
//!
//! One line on the receiver's standard output, printed once its socket is bound: the tag
//! [`ANNOUNCE_TAG`], then space-separated `name=value` fields. `port` (required) is the UDP port
//! it listens on; `key` is its public key in standard base64; `via` is the address the ssh
//! connection reached it on (the third field of `$SSH_CONNECTION`), present when it runs under
//! sshd. Readers ignore fields they do not know, so later versions can add some. Lines before
//! it (a login script's chatter) are ignored.

use crate::keys::PublicKey;
use std::net::IpAddr;
use std::str::FromStr;
use thiserror::Error;

/// The first word of the announce line.
pub const ANNOUNCE_TAG: &str = "longhaul-recv-ready";

/// An announce line that does not read.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum AnnounceError {
    /// A known field whose value is wrong.
    #[error("{field:?} in the announce line: {what}")]
    BadField {
        /// The field as written, `name=value`.
        field: String,
        /// What is wrong with it.
        what: String,
    },
    /// No `port` field.
    #[error("no port in the announce line {line:?}")]
    NoPort {
        /// The line.
        line: String,
    },
}

/// What the receiver announces once it listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Announce {
    /// The UDP port the receiver listens on.
    pub port: u16,
    /// The receiver's public key (`None`: security off).
    pub key: Option<PublicKey>,
    /// The address the ssh connection reached the receiver on, when sshd started it.
    pub via: Option<IpAddr>,
}

impl Announce {
    /// The receiver's announcement: `via` from `$SSH_CONNECTION` when sshd started it.
    pub fn new(port: u16, key: Option<PublicKey>) -> Announce {
        let via = std::env::var("SSH_CONNECTION")
            .ok()
            .and_then(|c| c.split_whitespace().nth(2).map(str::to_string))
            .and_then(|a| a.parse::<IpAddr>().ok())
            .map(|a| a.to_canonical());
        Announce { port, key, via }
    }

    /// The announce line, without its newline.
    pub fn line(&self) -> String {
        let mut l = format!("{ANNOUNCE_TAG} port={}", self.port);
        if let Some(k) = &self.key {
            l += &format!(" key={}", k.to_base64());
        }
        if let Some(v) = &self.via {
            l += &format!(" via={v}");
        }
        l
    }

    /// `None` for a line that is not an announcement; an error for one that is but is broken.
    pub fn parse(line: &str) -> Option<Result<Announce, AnnounceError>> {
        let mut words = line.split_whitespace();
        if words.next() != Some(ANNOUNCE_TAG) {
            return None;
        }
        let mut a = Announce {
            port: 0,
            key: None,
            via: None,
        };
        for w in words {
            let Some((name, value)) = w.split_once('=') else {
                continue;
            };
            let bad = |what: &str| {
                Err(AnnounceError::BadField {
                    field: w.to_string(),
                    what: what.to_string(),
                })
            };
            match name {
                "port" => match value.parse::<u16>() {
                    Ok(p) if p > 0 => a.port = p,
                    _ => return Some(bad("not a UDP port")),
                },
                "key" => match PublicKey::from_str(value) {
                    Ok(k) => a.key = Some(k),
                    Err(e) => return Some(bad(&e.to_string())),
                },
                "via" => match value.parse::<IpAddr>() {
                    Ok(v) => a.via = Some(v.to_canonical()),
                    Err(_) => return Some(bad("not an IP address")),
                },
                _ => {}
            }
        }
        if a.port == 0 {
            return Some(Err(AnnounceError::NoPort {
                line: line.to_string(),
            }));
        }
        Some(Ok(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeyPair;

    #[test]
    fn announce_lines_round_trip_and_tolerate_new_fields() {
        let key = KeyPair::from_private(&[7; 32]).public;
        let a = Announce {
            port: 40123,
            key: Some(key),
            via: Some("192.0.2.7".parse().unwrap()),
        };
        let line = a.line();
        assert_eq!(
            line,
            format!(
                "longhaul-recv-ready port=40123 key={} via=192.0.2.7",
                key.to_base64()
            )
        );
        assert_eq!(Announce::parse(&line), Some(Ok(a.clone())));
        let later = format!("{line} cipher=aes256gcm flag");
        assert_eq!(Announce::parse(&later), Some(Ok(a)));
        assert_eq!(
            Announce::parse("longhaul-recv-ready port=9 via=::ffff:192.0.2.7").unwrap(),
            Ok(Announce {
                port: 9,
                key: None,
                via: Some("192.0.2.7".parse().unwrap())
            })
        );
        assert_eq!(Announce::parse("Welcome to data.example.org"), None);
        assert_eq!(Announce::parse(""), None);
        for bad in [
            "longhaul-recv-ready",
            "longhaul-recv-ready port=0",
            "longhaul-recv-ready port=70000",
            "longhaul-recv-ready port=9 key=short",
            "longhaul-recv-ready port=9 via=nowhere",
        ] {
            assert!(matches!(Announce::parse(bad), Some(Err(_))), "{bad}");
        }
    }
}
