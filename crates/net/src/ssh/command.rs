//! What the launch runs on the far host: the remote command line (a receiver, or a probe
//! server, for one session, with one-time keys and the settings both ends must agree on), and
//! the launch's options.

use crate::keys::PublicKey;
use std::time::Duration;

/// What the launch starts on the far host: a receiver either way (`longhaul probe --serve`
/// is a receiver that serves probes only), for one session.
#[derive(Clone, Debug)]
pub enum Remote {
    /// `longhaul recv --once` into the target's directory (`send … [user@]host:DIR`), with the
    /// transport settings both ends must agree on.
    Receiver {
        /// The path MTU.
        mtu: u32,
        /// The receive window.
        window: u64,
        /// The connection's idle timeout.
        idle_timeout: Duration,
    },
    /// `longhaul probe --serve --count 1` (`probe [user@]host:`); the probe's connection
    /// settings are the same at both ends by definition (`longhaul_probe::run::config`).
    ProbeServer,
}

impl Remote {
    /// The remote command's subcommand and its one-session option.
    fn subcommand(&self) -> &'static [&'static str] {
        match self {
            Remote::Receiver { .. } => &["recv", "--once"],
            Remote::ProbeServer => &["probe", "--serve", "--count", "1"],
        }
    }

    /// `longhaul recv`, `longhaul probe --serve`: what runs there, for messages.
    pub(super) fn name(&self) -> &'static str {
        match self {
            Remote::Receiver { .. } => "longhaul recv",
            Remote::ProbeServer => "longhaul probe --serve",
        }
    }

    /// The ssh form of the command's argument.
    fn form(&self) -> &'static str {
        match self {
            Remote::Receiver { .. } => "[user@]host:DIR",
            Remote::ProbeServer => "[user@]host:",
        }
    }

    /// What to do by hand when the launch cannot reach the host for the data.
    pub(super) fn by_hand(&self) -> &'static str {
        match self {
            Remote::Receiver { .. } => "start `longhaul recv` there and send to HOST:PORT",
            Remote::ProbeServer => "start `longhaul probe --serve` there and probe HOST:PORT",
        }
    }
}

/// How to start the remote receiver: the ssh command, where longhaul is there, and what to
/// start.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// The ssh command with its options, split into words as a shell would, without expanding
    /// anything (`--ssh`) [default: ssh].
    pub ssh: Option<String>,
    /// Where longhaul is on the far host (`--remote-longhaul`) [default: longhaul].
    pub remote_longhaul: Option<String>,
    /// The receiver's UDP port (`--remote-port`) [default: 0, any free port].
    pub remote_port: Option<u16>,
    /// How long the receiver may take to announce itself after ssh starts
    /// (`--launch-timeout`) [default: 60 s].
    pub launch_timeout: Option<Duration>,
    /// What to start.
    pub remote: Remote,
}

impl LaunchOptions {
    /// Refuses launch settings given for `to`, an argument that names a receiver already
    /// running (`HOST[:PORT]`): they start one over ssh, which needs the ssh form.
    pub fn refuse_unless_launching(&self, to: &str) -> Result<(), String> {
        let given = [
            (self.ssh.is_some(), "--ssh"),
            (self.remote_longhaul.is_some(), "--remote-longhaul"),
            (self.remote_port.is_some(), "--remote-port"),
            (self.launch_timeout.is_some(), "--launch-timeout"),
        ];
        match given.iter().find(|(g, _)| *g) {
            Some((_, flag)) => Err(format!(
                "{flag} starts {} over ssh, which needs an argument of the form {}; {to:?} \
                 names one already running (HOST[:PORT])",
                self.remote.name(),
                self.remote.form()
            )),
            None => Ok(()),
        }
    }
}

/// The command line ssh runs on the far host.
pub(super) fn remote_command(
    longhaul: &str,
    dir: &str,
    port: u16,
    authorize: &PublicKey,
    r: &Remote,
) -> String {
    let mut words: Vec<String> = vec![longhaul.to_string()];
    words.extend(r.subcommand().iter().map(|w| w.to_string()));
    words.extend([
        "--announce".into(),
        "--exit-on-eof".into(),
        "--port".into(),
        port.to_string(),
        "--identity-ephemeral".into(),
        "--authorize-key".into(),
        authorize.to_base64(),
    ]);
    if let Remote::Receiver {
        mtu,
        window,
        idle_timeout,
    } = r
    {
        words.extend([
            "--ssh-user-identity".into(),
            "--mtu".into(),
            mtu.to_string(),
            "--window".into(),
            window.to_string(),
            "--idle-timeout".into(),
            format!("{}ms", idle_timeout.as_millis()),
            "--dir".into(),
            dir.to_string(),
        ]);
    }
    words
        .iter()
        .map(|w| longhaul_output::shell::word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeyPair;

    #[test]
    fn launch_settings_are_refused_for_a_running_receiver() {
        let mut o = LaunchOptions {
            ssh: None,
            remote_longhaul: None,
            remote_port: None,
            launch_timeout: None,
            remote: Remote::Receiver {
                mtu: 1500,
                window: 64 << 20,
                idle_timeout: Duration::from_secs(30),
            },
        };
        assert!(o.refuse_unless_launching("host").is_ok());
        o.remote_port = Some(9);
        let e = o.refuse_unless_launching("host:5301").unwrap_err();
        assert!(
            e.starts_with("--remote-port starts longhaul recv over ssh"),
            "{e}"
        );
        assert!(e.contains("of the form [user@]host:DIR;"), "{e}");
        assert!(e.contains("\"host:5301\" names one already running"), "{e}");
        o.remote = Remote::ProbeServer;
        let e = o.refuse_unless_launching("host").unwrap_err();
        assert!(e.contains("longhaul probe --serve over ssh"), "{e}");
        assert!(e.contains("of the form [user@]host:;"), "{e}");
    }

    #[test]
    fn the_remote_command_survives_the_remote_shell() {
        let t = Remote::Receiver {
            mtu: 9000,
            window: 64 << 20,
            idle_timeout: Duration::from_secs(30),
        };
        let key = KeyPair::from_private(&[7; 32]).public;
        let c = remote_command("/opt/long haul/longhaul", "it's here", 0, &key, &t);
        let words = shlex::split(&c).unwrap();
        assert_eq!(words[0], "/opt/long haul/longhaul");
        assert_eq!(words.last().unwrap(), "it's here");
        let at = |flag: &str| &words[words.iter().position(|w| w == flag).unwrap() + 1];
        assert_eq!(at("--authorize-key"), &key.to_base64());
        assert_eq!(at("--mtu"), "9000");
        assert_eq!(at("--window"), &(64u64 << 20).to_string());
        assert_eq!(at("--idle-timeout"), "30000ms");
        assert_eq!(at("--port"), "0");
        for flag in [
            "--once",
            "--announce",
            "--exit-on-eof",
            "--identity-ephemeral",
            "--ssh-user-identity",
        ] {
            assert!(words.iter().any(|w| w == flag), "{flag}: {c}");
        }
    }

    #[test]
    fn the_probe_server_is_started_for_one_probe_with_the_receivers_launch_flags() {
        let key = KeyPair::from_private(&[7; 32]).public;
        let c = remote_command("longhaul", ".", 0, &key, &Remote::ProbeServer);
        let words = shlex::split(&c).unwrap();
        assert_eq!(words[..5], ["longhaul", "probe", "--serve", "--count", "1"]);
        let at = |flag: &str| &words[words.iter().position(|w| w == flag).unwrap() + 1];
        assert_eq!(at("--authorize-key"), &key.to_base64());
        assert_eq!(at("--port"), "0");
        for flag in ["--announce", "--exit-on-eof", "--identity-ephemeral"] {
            assert!(words.iter().any(|w| w == flag), "{flag}: {c}");
        }
        // Nothing of a transfer: no directory, and the probe's own connection settings.
        for flag in ["--dir", "--mtu", "--once", "--ssh-user-identity"] {
            assert!(!words.iter().any(|w| w == flag), "{flag}: {c}");
        }
    }
}
