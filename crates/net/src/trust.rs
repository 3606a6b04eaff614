//! Whom each end trusts, ssh's way, put together from [`crate::keys`]' files into the
//! handshake's [`Security`].
//!
//! - The sender ([`sender_security`]) expects a key it is given (`--peer-key`), else the one
//!   its `known_hosts` file holds for the host as the user named it, else it trusts on first
//!   use: the handshake accepts any receiver key, and a [`TrustHook`] records it in
//!   `known_hosts` once the handshake completes, before any file byte leaves. A host whose key
//!   changed is refused by that hook ([`KnownHosts::check_or_learn`]).
//! - The receiver ([`receiver_security`]) accepts the sender keys it is given
//!   (`--authorize-key`) and, when given none or told to, those of its `authorized_keys` file.
//! - A sender that started its receiver over ssh ([`launched_security`]) expects exactly the
//!   one-time key the receiver announced on the ssh channel.

use crate::keys::{self, AuthorizedKeys, KeyError, KeyPair, KnownHosts, PublicKey, Trust};
use crate::send::TrustHook;
use longhaul_proto::secure::{PeerPolicy, Security};
use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A receiver trusted on first use: its key was added to `known_hosts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirstContact {
    /// The host as `known_hosts` names it ([`keys::host_name`]).
    pub host: String,
    /// The key now trusted.
    pub key: PublicKey,
    /// The line of `known_hosts` that holds it.
    pub line: usize,
    /// The `known_hosts` file.
    pub path: PathBuf,
}

impl fmt::Display for FirstContact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "first contact with {}: its key {} is now trusted (line {} of {})",
            self.host,
            self.key.fingerprint(),
            self.line,
            self.path.display()
        )
    }
}

/// This end's key pair: the file `identity`, or the default one `longhaul keygen` writes
/// ([`keys::default_private_key`]); `role` (`sender`, `receiver`) names the end when it has none.
pub fn own_key_pair(identity: Option<&Path>, role: &str) -> Result<KeyPair, KeyError> {
    let path = match identity {
        Some(p) => p.to_path_buf(),
        None => keys::default_private_key()?,
    };
    if !path.exists() {
        return Err(KeyError::NoKeyPair {
            role: role.to_string(),
            path,
        });
    }
    keys::read_private_key(&path)
}

/// The sender's security toward `host` (as the user named it): with `pair`, expecting
/// `peer_key` if given, else the host's key in `known_hosts` (the default file when `None`),
/// else any key, recorded on first use by the returned hook, which calls `on_first_contact`
/// once it has.
pub fn sender_security(
    pair: &KeyPair,
    peer_key: Option<PublicKey>,
    known_hosts: Option<&Path>,
    host: &str,
    on_first_contact: impl Fn(&FirstContact) + 'static,
) -> Result<(Security, Option<TrustHook>), KeyError> {
    if let Some(k) = peer_key {
        return Ok((
            Security::noise(pair.identity(), PeerPolicy::Exactly(k.0)),
            None,
        ));
    }
    let path = match known_hosts {
        Some(p) => p.to_path_buf(),
        None => keys::default_known_hosts()?,
    };
    let mut known = KnownHosts::load(&path)?;
    if let Some(k) = known.lookup(host) {
        return Ok((
            Security::noise(pair.identity(), PeerPolicy::Exactly(k.0)),
            None,
        ));
    }
    let host = host.to_string();
    let hook: TrustHook = Box::new(move |key: &[u8; 32]| {
        let key = PublicKey(*key);
        match known.check_or_learn(&host, &key) {
            Ok(Trust::Learned { line }) => {
                on_first_contact(&FirstContact {
                    host: keys::host_name(&host),
                    key,
                    line,
                    path: known.path().to_path_buf(),
                });
                Ok(())
            }
            Ok(Trust::Known) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    });
    Ok((
        Security::noise(pair.identity(), PeerPolicy::Any),
        Some(hook),
    ))
}

/// The security of a sender that started its receiver over ssh: its one-time `pair`, and only
/// the receiver's announced one-time `key`.
pub fn launched_security(pair: &KeyPair, key: PublicKey) -> Security {
    Security::noise(pair.identity(), PeerPolicy::Exactly(key.0))
}

/// The receiver's security with `pair`: the sender keys in `authorize`, and, when `authorize`
/// is empty or `authorized_keys` is given, those of that file (the default one when `None`).
/// Also returns how many sender keys it accepts.
pub fn receiver_security(
    pair: &KeyPair,
    authorize: &[PublicKey],
    authorized_keys: Option<&Path>,
) -> Result<(Security, usize), KeyError> {
    let mut allowed: HashSet<[u8; 32]> = authorize.iter().map(|k| k.0).collect();
    if authorize.is_empty() || authorized_keys.is_some() {
        let path = match authorized_keys {
            Some(p) => p.to_path_buf(),
            None => keys::default_authorized_keys()?,
        };
        allowed.extend(AuthorizedKeys::load(&path)?.keys().into_iter().map(|k| k.0));
    }
    let n = allowed.len();
    Ok((
        Security::noise(pair.identity(), PeerPolicy::AllowList(Arc::new(allowed))),
        n,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    fn peer(s: &Security) -> &PeerPolicy {
        match s {
            Security::Noise { peer, .. } => peer,
            _ => panic!("not Noise"),
        }
    }

    #[test]
    fn a_sender_trusts_the_given_key_then_known_hosts_then_first_use() {
        let dir = tempfile::tempdir().unwrap();
        let known = dir.path().join("known_hosts");
        std::fs::write(&known, "").unwrap();
        let pair = KeyPair::from_private(&[1; 32]);
        let theirs = KeyPair::from_private(&[2; 32]).public;

        let (s, hook) = sender_security(&pair, Some(theirs), Some(&known), "data", |_| {}).unwrap();
        assert!(matches!(peer(&s), PeerPolicy::Exactly(k) if *k == theirs.0));
        assert!(hook.is_none());

        let seen = Rc::new(RefCell::new(Vec::new()));
        let s2 = seen.clone();
        let (s, hook) = sender_security(&pair, None, Some(&known), "Data", move |c| {
            s2.borrow_mut().push(c.to_string())
        })
        .unwrap();
        assert!(matches!(peer(&s), PeerPolicy::Any));
        let mut hook = hook.unwrap();
        hook(&theirs.0).unwrap();
        assert_eq!(
            *seen.borrow(),
            [format!(
                "first contact with data: its key {} is now trusted (line 1 of {})",
                theirs.fingerprint(),
                known.display()
            )]
        );

        let (s, hook) = sender_security(&pair, None, Some(&known), "data", |_| {}).unwrap();
        assert!(matches!(peer(&s), PeerPolicy::Exactly(k) if *k == theirs.0));
        assert!(hook.is_none());
    }
}
