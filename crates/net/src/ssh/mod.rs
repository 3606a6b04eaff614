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
//! To the address ssh connected to, so the data follows the path the login took (`address`).
//!
//! # What it prints
//!
//! Unless quiet, the launch says on standard error what it starts and where the receiver
//! listens; once the receiver is up, the remote side's lines follow there as they come
//! (`remote: …`, control characters escaped). Before that they are kept for the error message
//! of a launch that fails.
//!
//! Its parts: `command` (what ssh runs on the far host), `error` (why a launch fails, with what
//! to check), `tail` (the remote side's lines), `address` (where the data goes). Here: the
//! launch itself and the [`Launched`] receiver until it exits.

mod address;
mod command;
mod error;
mod tail;

pub use command::{LaunchOptions, Remote};
pub use error::LaunchError;

use crate::announce::{Announce, AnnounceError};
use crate::destination::SshTarget;
use crate::keys::{KeyPair, PublicKey};
use crate::NetError;
use address::{choose_address, ssh_addresses};
use command::remote_command;
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tail::{for_lines, printable, tail_push, tail_text, Shared};

/// How long the remote receiver may take to exit after a transfer that ended well.
const EXIT_GRACE: Duration = Duration::from_secs(30);

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
    /// it, and for ssh, and reports the remote status. Setting the flag it is given shortens
    /// the wait.
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
