//! Where a launch's data goes.
//!
//! To the address ssh connected to, so the data follows the path the login took. ssh may not
//! connect to the host as typed (an alias in `~/.ssh/config` with `HostName`, several addresses
//! of which only one answered), so the sender asks ssh how it reads the host (`ssh -G`, which
//! applies the same configuration and options) and resolves that name as ssh does. Of those
//! addresses it takes the one the receiver reports as `via`; if none matches (the far host is
//! behind NAT and sees its private address) the first, which ssh tried first; if the name does
//! not resolve here (a name known only behind a `ProxyJump`) `via` itself. UDP must reach that
//! address at the announced port: a firewall that lets only ssh through stops the transfer at
//! the handshake, with a message saying so; `--remote-port` fixes the port to one left open.

use crate::destination::SshTarget;
use std::net::{IpAddr, ToSocketAddrs};
use std::process::{Command, Stdio};

/// The addresses ssh connects to for `target`, in its order: the host name after ssh's
/// configuration (`ssh -G`), or the host as typed when that fails (not OpenSSH), resolved here.
pub(super) fn ssh_addresses(ssh: &[String], target: &SshTarget) -> Vec<IpAddr> {
    let (name, family) = Command::new(&ssh[0])
        .args(&ssh[1..])
        .arg("-G")
        .arg(target.login())
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| ssh_config(&String::from_utf8_lossy(&o.stdout)))
        .unwrap_or_default();
    let name = name.unwrap_or_else(|| target.host.clone());
    let mut out: Vec<IpAddr> = (name.as_str(), 0)
        .to_socket_addrs()
        .map(|a| a.map(|a| a.ip().to_canonical()).collect())
        .unwrap_or_default();
    match family.as_deref() {
        Some("inet") => out.retain(IpAddr::is_ipv4),
        Some("inet6") => out.retain(IpAddr::is_ipv6),
        _ => {}
    }
    out.dedup();
    out
}

/// `hostname` and `addressfamily` from `ssh -G`'s output.
fn ssh_config(text: &str) -> (Option<String>, Option<String>) {
    let mut host = None;
    let mut family = None;
    for l in text.lines() {
        match l.split_once(' ') {
            Some(("hostname", v)) => host = Some(v.trim().to_string()),
            Some(("addressfamily", v)) => family = Some(v.trim().to_string()),
            _ => {}
        }
    }
    (host, family)
}

/// The address the data goes to (see the module's documentation).
pub(super) fn choose_address(resolved: &[IpAddr], via: Option<IpAddr>) -> Option<IpAddr> {
    match via {
        Some(v) if resolved.contains(&v) => Some(v),
        _ => resolved.first().copied().or(via),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_goes_where_ssh_went() {
        let a: IpAddr = "192.0.2.7".parse().unwrap();
        let b: IpAddr = "2001:db8::7".parse().unwrap();
        let private: IpAddr = "10.0.0.7".parse().unwrap();
        // ssh fell back to the second address: the receiver saw it.
        assert_eq!(choose_address(&[b, a], Some(a)), Some(a));
        // Behind NAT the receiver sees its private address: the name's first address.
        assert_eq!(choose_address(&[a, b], Some(private)), Some(a));
        // A name that resolves only behind a jump host.
        assert_eq!(choose_address(&[], Some(private)), Some(private));
        assert_eq!(choose_address(&[], None), None);
        let (h, f) = ssh_config("user root\nhostname 192.0.2.7\nport 22\naddressfamily inet\n");
        assert_eq!(h.as_deref(), Some("192.0.2.7"));
        assert_eq!(f.as_deref(), Some("inet"));
    }
}
