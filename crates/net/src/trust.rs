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
//!
//! [`connecting_end`] and [`listening_end`] put an end's own key pair and these together as
//! `send`, `recv` and `probe` take them from their flags.

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

/// Printed whenever a transfer's security is off (`--insecure`).
pub const INSECURE_WARNING: &str = "WARNING: --insecure: no authentication, no encryption. \
    Anyone who can reach the receiver may store files in its directory, and anyone on the path \
    may read, alter or forge the transfer.";

/// The security of an end that connects (a sender, a prober) toward `host`: none when
/// `insecure`, else its key pair ([`own_key_pair`], named `role` when it has none) and
/// [`sender_security`].
pub fn connecting_end(
    insecure: bool,
    identity: Option<&Path>,
    role: &str,
    peer_key: Option<PublicKey>,
    known_hosts: Option<&Path>,
    host: &str,
    on_first_contact: impl Fn(&FirstContact) + 'static,
) -> Result<(Security, Option<TrustHook>), KeyError> {
    if insecure {
        return Ok((Security::Off, None));
    }
    let pair = own_key_pair(identity, role)?;
    sender_security(&pair, peer_key, known_hosts, host, on_first_contact)
}

/// Where an end that listens (a receiver, a probe server) takes its key pair from.
#[derive(Clone, Copy, Debug)]
pub enum Identity<'a> {
    /// A file, or the default one when `None` ([`own_key_pair`]).
    File(Option<&'a Path>),
    /// A one-time key pair made in memory.
    Ephemeral,
}

/// The security of an end that listens: none when `insecure`, else its key pair and the keys
/// [`receiver_security`] accepts. Returns its public key (`None` when insecure) and says what
/// it accepts in one line: `{role} key FINGERPRINT (KEY); N {peers} key(s) authorized`.
pub fn listening_end(
    insecure: bool,
    identity: Identity<'_>,
    (role, peers): (&str, &str),
    authorize: &[PublicKey],
    authorized_keys: Option<&Path>,
    say: &mut dyn FnMut(&str),
) -> Result<(Security, Option<PublicKey>), KeyError> {
    if insecure {
        return Ok((Security::Off, None));
    }
    let pair = match identity {
        Identity::File(path) => own_key_pair(path, role)?,
        Identity::Ephemeral => KeyPair::generate()?,
    };
    let (security, allowed) = receiver_security(&pair, authorize, authorized_keys)?;
    say(&format!(
        "{role} key {} ({}); {allowed} {peers} key(s) authorized",
        pair.public.fingerprint(),
        pair.public
    ));
    Ok((security, Some(pair.public)))
}

/// The name a receiver started over ssh keeps the one authorized (one-time) sender key's part
/// files under: the user it runs as, whom ssh authenticated (`--ssh-user-identity`). Needs
/// exactly one key in `authorize` and no `authorized_keys` file.
pub fn ssh_user_name(
    authorize: &[PublicKey],
    authorized_keys: Option<&Path>,
) -> Result<String, String> {
    if authorize.len() != 1 || authorized_keys.is_some() {
        return Err(
            "--ssh-user-identity names the one sender key given with --authorize-key \
                    after the ssh user; give exactly one --authorize-key and no \
                    --authorized-keys"
                .into(),
        );
    }
    // SAFETY: getuid cannot fail and touches no memory.
    let uid = unsafe { libc::getuid() };
    Ok(format!("ssh-user uid={uid}"))
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

    #[test]
    fn the_ends_put_together_from_their_flags() {
        let missing = Path::new("/nonexistent/longhaul-id");
        let (s, hook) =
            connecting_end(true, Some(missing), "prober", None, None, "h", |_| {}).unwrap();
        assert!(matches!(s, Security::Off) && hook.is_none());
        let e = connecting_end(false, Some(missing), "prober", None, None, "h", |_| {});
        assert!(e.err().unwrap().to_string().contains("prober"));

        let mut said = Vec::new();
        let theirs = KeyPair::from_private(&[2; 32]).public;
        let roles = ("probe server", "prober");
        let (s, own) = listening_end(true, Identity::Ephemeral, roles, &[], None, &mut |l| {
            said.push(l.to_string())
        })
        .unwrap();
        assert!(matches!(s, Security::Off) && own.is_none() && said.is_empty());
        let (s, own) = listening_end(
            false,
            Identity::Ephemeral,
            roles,
            &[theirs],
            None,
            &mut |l| said.push(l.to_string()),
        )
        .unwrap();
        assert!(matches!(peer(&s), PeerPolicy::AllowList(k) if k.len() == 1));
        let own = own.unwrap();
        let line = format!(
            "probe server key {} ({own}); 1 prober key(s) authorized",
            own.fingerprint()
        );
        assert_eq!(said, [line]);
    }

    #[test]
    fn the_ssh_user_names_exactly_one_authorized_key() {
        let k = KeyPair::from_private(&[2; 32]).public;
        assert!(ssh_user_name(&[k], None)
            .unwrap()
            .starts_with("ssh-user uid="));
        assert!(ssh_user_name(&[], None).is_err());
        assert!(ssh_user_name(&[k, k], None).is_err());
        assert!(ssh_user_name(&[k], Some(Path::new("a"))).is_err());
    }
}
