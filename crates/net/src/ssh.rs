//! The ssh launch behind `longhaul send PATH… [user@]host:DIR` ([`crate::destination`]): start
//! the receiver on the far host through ssh, then move the data over longhaul's own transport
//! on UDP. The ssh session only starts the receiver and carries one-time keys; the data never
//! goes through ssh. `longhaul probe [user@]host:` starts its probe server the same way
//! ([`Remote::ProbeServer`]): `longhaul probe --serve --count 1` with the same `--announce`,
//! `--exit-on-eof`, `--identity-ephemeral` and `--authorize-key` (a probe server is a receiver
//! that serves probes only), and measures the path to the port it announces.
//!
//! # A launch, step by step
//!
//! 1. The sender makes a one-time key pair in memory.
//! 2. It runs, as rsync runs its remote half,
//!    `ssh [user@]host longhaul recv --once --port 0 --announce --exit-on-eof
//!    --identity-ephemeral --authorize-key <the sender's public key> --ssh-user-identity -d DIR
//!    --mtu M -w W --idle-timeout T` (the transport settings both ends must agree on). The
//!    receiver makes a one-time key pair of its own, binds a UDP port the kernel chooses, and only then prints the
//!    *announce line* ([`crate::announce`]) on its standard output.
//! 3. The sender reads that line through ssh, which authenticated the host and the user and
//!    carried the line unaltered, then sends over UDP to that port, expecting the announced key.
//! 4. The receiver serves that one session and exits; its status comes back as ssh's, and the
//!    sender waits for it. On Ctrl-C or an error the sender kills ssh; the receiver sees its
//!    standard input close (`--exit-on-eof`) and stops too. Nothing is left running on either
//!    host, and the part files stay on the receiver for a resumed transfer.
//!
//! # Where the data goes
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
//!
//! # What it prints
//!
//! Unless quiet, the launch says on standard error what it starts and where the receiver
//! listens; once the receiver is up, the remote side's lines follow there as they come
//! (`remote: …`, control characters escaped). Before that they are kept for the error message
//! of a launch that fails.

use crate::announce::{Announce, AnnounceError};
use crate::destination::SshTarget;
use crate::keys::{KeyError, KeyPair, PublicKey};
use crate::NetError;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use thiserror::Error;

/// How long the remote receiver may take to exit after a transfer that ended well.
const EXIT_GRACE: Duration = Duration::from_secs(30);
/// The remote lines kept for an error message.
const TAIL_LINES: usize = 40;
/// Longer remote lines are cut: a login script's output is no reason to hold much memory.
const MAX_LINE: u64 = 16 << 10;

// ---------------------------------------------------------------------------------------------
// The remote command
// ---------------------------------------------------------------------------------------------

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
    fn name(&self) -> &'static str {
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
    fn by_hand(&self) -> &'static str {
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
fn remote_command(
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

// ---------------------------------------------------------------------------------------------
// The launch
// ---------------------------------------------------------------------------------------------

/// Why the remote receiver could not be started, or did not end well; each message says what
/// to check.
#[derive(Debug, Error)]
pub enum LaunchError {
    /// The ssh command does not split into words.
    #[error("--ssh {command:?}: not a command (unbalanced quotes?)")]
    SshCommand {
        /// The command as given.
        command: String,
    },
    /// No one-time key pair.
    #[error("making the session's one-time key pair")]
    KeyPair(#[source] KeyError),
    /// The ssh program is not there.
    #[error(
        "cannot run {program:?}: not found; install an OpenSSH client, or name the ssh \
         program with --ssh"
    )]
    SshNotFound {
        /// The ssh program.
        program: String,
    },
    /// The ssh program does not start.
    #[error("cannot run {program:?}: {error}")]
    SshSpawn {
        /// The ssh program.
        program: String,
        /// Why.
        error: std::io::Error,
    },
    /// Waiting for ssh failed.
    #[error("waiting for ssh")]
    Wait(#[source] std::io::Error),
    /// The announce line does not read.
    #[error(
        "{label}: {why}; is the remote longhaul ({longhaul}) the same version as this \
         one?{remote}"
    )]
    BadAnnounce {
        /// `longhaul recv on [user@]host`.
        label: String,
        /// What is wrong with the line.
        why: AnnounceError,
        /// Where longhaul is on the far host.
        longhaul: String,
        /// The remote side's last lines.
        remote: String,
    },
    /// The receiver announced itself, then ended before its session.
    #[error(
        "{label} announced port {port} and then ended ({status}) before its session began{remote}"
    )]
    EndedAfterAnnounce {
        /// `longhaul recv on [user@]host`.
        label: String,
        /// The announced port.
        port: u16,
        /// ssh's exit status.
        status: ExitStatus,
        /// The remote side's last lines.
        remote: String,
    },
    /// ssh could not log in.
    #[error(
        "ssh could not log in to {host} (authentication failed): check that \
         `{ssh} {host} true` works with the same options (--ssh){said}"
    )]
    AuthenticationFailed {
        /// `[user@]host`.
        host: String,
        /// The ssh program.
        ssh: String,
        /// The remote side's last lines.
        said: String,
    },
    /// ssh failed otherwise (status 255).
    #[error(
        "ssh to {host} failed (status 255: no connection, or it broke): check that \
         `{ssh} {host} true` works with the same options (--ssh){said}"
    )]
    SshFailed {
        /// `[user@]host`.
        host: String,
        /// The ssh program.
        ssh: String,
        /// The remote side's last lines.
        said: String,
    },
    /// longhaul is not on the far host's PATH (status 127).
    #[error(
        "{longhaul:?} was not found on {host}: install longhaul there, or name its path \
         with --remote-longhaul (a non-interactive ssh session's PATH often lacks \
         ~/.cargo/bin and /usr/local/bin){said}"
    )]
    RemoteNotFound {
        /// Where longhaul was looked for.
        longhaul: String,
        /// `[user@]host`.
        host: String,
        /// The remote side's last lines.
        said: String,
    },
    /// longhaul on the far host does not run (status 126).
    #[error(
        "{longhaul:?} on {host} cannot be run (not executable, or built for another \
         system){said}"
    )]
    RemoteCannotRun {
        /// Where longhaul is.
        longhaul: String,
        /// `[user@]host`.
        host: String,
        /// The remote side's last lines.
        said: String,
    },
    /// longhaul on the far host does not know the launch's options.
    #[error(
        "the longhaul on {host} ({longhaul}) does not know the options of the ssh \
         launch: it is older than this one; install the same version on both hosts{said}"
    )]
    RemoteTooOld {
        /// `[user@]host`.
        host: String,
        /// Where longhaul is.
        longhaul: String,
        /// The remote side's last lines.
        said: String,
    },
    /// The receiver ended before it listened, for another reason.
    #[error("the {label} ended ({status}) before it listened{said}")]
    EndedEarly {
        /// `longhaul recv on [user@]host`.
        label: String,
        /// ssh's exit status.
        status: ExitStatus,
        /// The remote side's last lines.
        said: String,
    },
    /// Stopped (Ctrl-C) during the launch.
    #[error("interrupted while starting the {label}")]
    Interrupted {
        /// `longhaul recv on [user@]host`.
        label: String,
    },
    /// No announce line in time.
    #[error(
        "{label} did not announce its port within {timeout:?} (ssh is still running; a \
         password prompt or a slow login needs a longer --launch-timeout){remote}"
    )]
    Timeout {
        /// `longhaul recv on [user@]host`.
        label: String,
        /// The launch timeout.
        timeout: Duration,
        /// The remote side's last lines.
        remote: String,
    },
    /// The host has no address here for the data.
    #[error(
        "cannot resolve {host} to an address for the data (ssh reached it, perhaps through a \
         proxy that is not used for UDP); {by_hand}"
    )]
    Unresolved {
        /// The host as given.
        host: String,
        /// What to do by hand instead.
        by_hand: &'static str,
    },
    /// After its session, the receiver ended with an error.
    #[error("the {label} ended with {status}; its messages are above (remote: …)")]
    Failed {
        /// `longhaul recv on [user@]host`.
        label: String,
        /// ssh's exit status.
        status: ExitStatus,
    },
    /// After its session, the receiver did not exit and was stopped.
    #[error(
        "the {label} did not exit within {:?} after its session; stopped it",
        EXIT_GRACE
    )]
    NoExit {
        /// `longhaul recv on [user@]host`.
        label: String,
    },
}

/// What the remote side said on its standard error: the last lines, kept for an error message,
/// and printed as they come (`remote: …`) once the receiver is up.
#[derive(Default)]
struct Tail {
    lines: VecDeque<String>,
    live: bool,
    closed: bool,
}

type Shared = Arc<Mutex<Tail>>;

fn tail_push(t: &Shared, line: String) {
    let mut t = t.lock().unwrap_or_else(|e| e.into_inner());
    if t.live {
        eprintln!("remote: {line}");
    }
    t.lines.push_back(line);
    if t.lines.len() > TAIL_LINES {
        t.lines.pop_front();
    }
}

fn tail_text(t: &Shared) -> String {
    let t = t.lock().unwrap_or_else(|e| e.into_inner());
    t.lines.iter().map(|l| format!("\n  remote: {l}")).collect()
}

/// Control characters of a remote line escaped: what the far side prints cannot move this
/// terminal's cursor or forge a line.
fn printable(line: &[u8]) -> String {
    String::from_utf8_lossy(line)
        .trim_end_matches(['\n', '\r'])
        .chars()
        .flat_map(|c| {
            let esc: Vec<char> = if c.is_control() && c != '\t' {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            esc
        })
        .collect()
}

/// Calls `each` with every line of `r` (each cut at [`MAX_LINE`] bytes) until its end.
fn for_lines(r: impl Read, mut each: impl FnMut(&[u8])) {
    let mut r = BufReader::new(r);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut r).take(MAX_LINE).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => each(&line),
        }
        // A line cut at the limit: drop the rest of it.
        if !line.ends_with(b"\n") && line.len() as u64 == MAX_LINE {
            let mut rest = Vec::new();
            if r.read_until(b'\n', &mut rest).unwrap_or(0) == 0 {
                return;
            }
        }
    }
}

/// The remote receiver, started over ssh and announced.
pub struct Launched {
    child: Child,
    /// Held open: the receiver stops (`--exit-on-eof`) when it closes.
    stdin: Option<ChildStdin>,
    reaped: bool,
    tail: Shared,
    /// `[user@]host`, as given to ssh.
    login: String,
    /// `longhaul recv on [user@]host`, for messages.
    label: String,
    /// Where the data goes: the host's address ssh reached, at the announced port.
    pub addr: SocketAddr,
    /// The receiver's one-time public key, to expect in the handshake.
    pub peer_key: Option<PublicKey>,
    /// The sender's one-time key pair, the only one the receiver accepts (the handshake's
    /// static key).
    pub identity: KeyPair,
}

/// Runs ssh to start the receiver and waits for its announce line. Prints what it does unless
/// `quiet`.
pub fn launch(
    target: &SshTarget,
    opts: &LaunchOptions,
    stop: &AtomicBool,
    quiet: bool,
) -> Result<Launched, LaunchError> {
    let ssh_cmd = opts.ssh.as_deref().unwrap_or("ssh");
    let ssh = shlex::split(ssh_cmd)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| LaunchError::SshCommand {
            command: ssh_cmd.to_string(),
        })?;
    let longhaul = opts.remote_longhaul.as_deref().unwrap_or("longhaul");
    let timeout = opts.launch_timeout.unwrap_or(Duration::from_secs(60));
    let login = target.login();
    let label = format!("{} on {login}", opts.remote.name());
    let identity = KeyPair::generate().map_err(LaunchError::KeyPair)?;
    let command = remote_command(
        longhaul,
        &target.dir,
        opts.remote_port.unwrap_or(0),
        &identity.public,
        &opts.remote,
    );
    // Before ssh itself starts: `ssh -G` only reads the configuration.
    let addrs = ssh_addresses(&ssh, target);
    if !quiet {
        eprintln!(
            "starting {label} through {} (this end's one-time key {})",
            ssh.join(" "),
            identity.public.fingerprint()
        );
    }
    let mut child = Command::new(&ssh[0])
        .args(&ssh[1..])
        .arg(&login)
        .arg(&command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => LaunchError::SshNotFound {
                program: ssh[0].clone(),
            },
            _ => LaunchError::SshSpawn {
                program: ssh[0].clone(),
                error: e,
            },
        })?;
    let stdin = child.stdin.take();
    let tail: Shared = Arc::default();
    let (tx, rx) = mpsc::channel::<Result<Announce, AnnounceError>>();
    let out = child.stdout.take().expect("piped");
    let t = tail.clone();
    std::thread::spawn(move || {
        let mut announced = false;
        for_lines(out, |l| {
            let line = printable(l);
            match Announce::parse(&line) {
                Some(a) if !announced => {
                    announced = a.is_ok();
                    let _ = tx.send(a);
                }
                // Anything else on stdout (a login script's output) is shown like stderr.
                _ => tail_push(&t, line),
            }
        });
    });
    let err = child.stderr.take().expect("piped");
    let t = tail.clone();
    std::thread::spawn(move || {
        for_lines(err, |l| tail_push(&t, printable(l)));
        t.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
    });

    let mut launched = Launched {
        child,
        stdin,
        reaped: false,
        tail,
        login,
        label,
        addr: SocketAddr::from(([0, 0, 0, 0], 0)),
        peer_key: None,
        identity,
    };
    let started = Instant::now();
    let announce = loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Ok(a)) => break a,
            Ok(Err(why)) => {
                return Err(LaunchError::BadAnnounce {
                    label: launched.label.clone(),
                    why,
                    longhaul: longhaul.to_string(),
                    remote: launched.remote_text(),
                })
            }
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {}
        }
        if let Some(st) = launched.child.try_wait().map_err(LaunchError::Wait)? {
            launched.reaped = true;
            // Let the readers take the last lines (and a late announce) first.
            launched.drain_stderr();
            if let Ok(Ok(a)) = rx.try_recv() {
                return Err(LaunchError::EndedAfterAnnounce {
                    label: launched.label.clone(),
                    port: a.port,
                    status: st,
                    remote: launched.remote_text(),
                });
            }
            return Err(launched.failure(st, &ssh[0], longhaul));
        }
        if stop.load(Ordering::Relaxed) {
            return Err(LaunchError::Interrupted {
                label: launched.label.clone(),
            });
        }
        if started.elapsed() > timeout {
            return Err(LaunchError::Timeout {
                label: launched.label.clone(),
                timeout,
                remote: launched.remote_text(),
            });
        }
    };
    let ip = choose_address(&addrs, announce.via).ok_or_else(|| LaunchError::Unresolved {
        host: target.host.clone(),
        by_hand: opts.remote.by_hand(),
    })?;
    launched.addr = SocketAddr::new(ip, announce.port);
    launched.peer_key = announce.key;
    if !quiet {
        eprintln!(
            "{} listens on UDP {}{}",
            launched.label,
            launched.addr,
            announce
                .key
                .map(|k| format!(", key {}", k.fingerprint()))
                .unwrap_or_default()
        );
    }
    // From now on the remote lines are shown as they come, those so far first.
    let mut t = launched.tail.lock().unwrap_or_else(|e| e.into_inner());
    for l in &t.lines {
        eprintln!("remote: {l}");
    }
    t.live = true;
    drop(t);
    Ok(launched)
}

impl Launched {
    /// The session's security: its one-time key pair, expecting only the key the remote
    /// receiver announced on the ssh channel (which ssh authenticated).
    pub fn security(&self) -> Result<longhaul_proto::secure::Security, String> {
        let key = self
            .peer_key
            .ok_or("the remote longhaul announced no key: it is an older version; update it")?;
        Ok(crate::trust::launched_security(&self.identity, key))
    }

    /// The remote side's last lines, for an error message.
    fn remote_text(&self) -> String {
        let t = tail_text(&self.tail);
        if t.is_empty() {
            " (nothing on its standard error)".into()
        } else {
            format!("; it said:{t}")
        }
    }

    /// Waits a moment for the stderr reader to reach the end of the pipe.
    fn drain_stderr(&self) {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(2) {
            if self.tail.lock().unwrap_or_else(|e| e.into_inner()).closed {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Why ssh ended before the receiver announced itself, with what to do.
    fn failure(&self, st: ExitStatus, ssh: &str, longhaul: &str) -> LaunchError {
        let text = tail_text(&self.tail);
        let said = self.remote_text();
        let host = self.login.clone();
        let (ssh, longhaul) = (ssh.to_string(), longhaul.to_string());
        match st.code() {
            Some(255) if text.contains("Permission denied") => {
                LaunchError::AuthenticationFailed { host, ssh, said }
            }
            Some(255) => LaunchError::SshFailed { host, ssh, said },
            Some(127) => LaunchError::RemoteNotFound {
                longhaul,
                host,
                said,
            },
            Some(126) => LaunchError::RemoteCannotRun {
                longhaul,
                host,
                said,
            },
            Some(2)
                if text.contains("unexpected argument")
                    || text.contains("unrecognized subcommand") =>
            {
                LaunchError::RemoteTooOld {
                    host,
                    longhaul,
                    said,
                }
            }
            _ => LaunchError::EndedEarly {
                label: self.label.clone(),
                status: st,
                said,
            },
        }
    }

    /// After the transfer: the receiver serves one session, so it exits by itself; waits for
    /// it, and for ssh, and reports the remote status. The stop flag shortens the wait.
    pub fn finish(mut self, stop: &AtomicBool) -> Result<(), LaunchError> {
        let st = self.wait_exit(EXIT_GRACE, stop)?;
        self.drain_stderr();
        match st {
            Some(st) if st.success() => Ok(()),
            Some(status) => Err(LaunchError::Failed {
                label: self.label.clone(),
                status,
            }),
            None => Err(LaunchError::NoExit {
                label: self.label.clone(),
            }),
        }
    }

    /// Waits up to `limit` for ssh to exit; then closes the receiver's standard input and waits
    /// a little more; then kills ssh. `None` when it had to be stopped.
    fn wait_exit(
        &mut self,
        limit: Duration,
        stop: &AtomicBool,
    ) -> Result<Option<ExitStatus>, LaunchError> {
        let t = Instant::now();
        while t.elapsed() < limit && !stop.load(Ordering::Relaxed) {
            if let Some(st) = self.child.try_wait().map_err(LaunchError::Wait)? {
                self.reaped = true;
                return Ok(Some(st));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stop();
        Ok(None)
    }

    /// Ends the launch now: the receiver's standard input closes, so it stops; ssh is killed
    /// and reaped.
    fn stop(&mut self) {
        self.stdin.take();
        if self.reaped {
            return;
        }
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(2) {
            if let Ok(Some(_)) = self.child.try_wait() {
                self.reaped = true;
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.reaped = true;
    }

    /// What the launch knows about a send error: for datagrams that did not get through, that
    /// a firewall may stop UDP (`None` for other errors).
    pub fn explain(&self, e: &NetError) -> Option<String> {
        match e {
            NetError::NoAnswer(..) | NetError::PortClosed(_) => Some(format!(
                "the {} was started and listens on UDP port {}, but longhaul's datagrams did \
                 not get through to {}: a firewall that lets ssh through may stop UDP; open \
                 that port, or choose an open one with --remote-port",
                self.label,
                self.addr.port(),
                self.addr
            )),
            _ => None,
        }
    }
}

/// On any early return (an error, Ctrl-C): nothing is left running.
impl Drop for Launched {
    fn drop(&mut self) {
        if !self.reaped {
            self.stdin.take();
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The addresses ssh connects to for `target`, in its order: the host name after ssh's
/// configuration (`ssh -G`), or the host as typed when that fails (not OpenSSH), resolved here.
fn ssh_addresses(ssh: &[String], target: &SshTarget) -> Vec<IpAddr> {
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
fn choose_address(resolved: &[IpAddr], via: Option<IpAddr>) -> Option<IpAddr> {
    match via {
        Some(v) if resolved.contains(&v) => Some(v),
        _ => resolved.first().copied().or(via),
    }
}

/// A receiver started over ssh (`recv --exit-on-eof`): sets `stop` when standard input
/// closes, which is when the ssh session that started it ends.
pub fn stop_on_eof(stop: std::sync::Arc<std::sync::atomic::AtomicBool>) {
    use std::io::Read;
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let mut input = std::io::stdin().lock();
        loop {
            match input.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn remote_lines_cannot_drive_the_terminal() {
        assert_eq!(printable(b"ok\x1b[2J\r\n"), "ok\\u{1b}[2J");
        assert_eq!(printable(b"a\tb\n"), "a\tb");
        let mut lines = Vec::new();
        let long = vec![b'x'; MAX_LINE as usize + 10];
        let mut input = long.clone();
        input.extend_from_slice(b"\nnext\n");
        for_lines(&input[..], |l| lines.push(l.len()));
        assert_eq!(lines, vec![MAX_LINE as usize, 5]);
    }
}
