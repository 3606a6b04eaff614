//! `longhaul send PATH… [user@]host:DIR`: start the receiver on the far host through ssh, then
//! move the data over longhaul's own transport on UDP. The ssh session only starts the receiver
//! and carries one-time keys; the data never goes through ssh.
//!
//! # A launch, step by step
//!
//! 1. The sender makes a one-time key pair in memory.
//! 2. It runs, as rsync runs its remote half,
//!    `ssh [user@]host longhaul recv --once --port 0 --announce --exit-on-eof
//!    --identity-ephemeral --authorize-key <the sender's public key> --ssh-user-identity -d DIR
//!    --mtu M -w W --idle-timeout T` (the transport settings both ends must agree on). The receiver makes a
//!    one-time key pair of its own, binds a UDP port the kernel chooses, and only then prints the
//!    *announce line* on its standard output.
//! 3. The sender reads that line through ssh, which authenticated the host and the user and
//!    carried the line unaltered, then sends over UDP to that port, expecting the announced key.
//! 4. The receiver serves that one session and exits; its status comes back as ssh's, and the
//!    sender waits for it. On Ctrl-C or an error the sender kills ssh; the receiver sees its
//!    standard input close (`--exit-on-eof`) and stops too. Nothing is left running on either
//!    host, and the part files stay on the receiver for a resumed transfer.
//!
//! # The announce line
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
//!
//! # The destination: `[user@]host:DIR` or `HOST[:PORT]`
//!
//! The last argument of `send` names the receiver. It is an ssh destination, as in scp, when it
//! has a colon followed by a directory; otherwise it is a `longhaul recv` already running:
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

use crate::cmd::transfer::TransportArgs;
use crate::units::parse_duration;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use longhaul_net::keys::{KeyPair, PublicKey};
use longhaul_net::NetError;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::net::{IpAddr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The first word of the announce line.
pub const ANNOUNCE_TAG: &str = "longhaul-recv-ready";

/// How long the remote receiver may take to exit after a transfer that ended well.
const EXIT_GRACE: Duration = Duration::from_secs(30);
/// The remote lines kept for an error message.
const TAIL_LINES: usize = 40;
/// Longer remote lines are cut: a login script's output is no reason to hold much memory.
const MAX_LINE: u64 = 16 << 10;

/// `send`'s options for the `[user@]host:DIR` form.
#[derive(Args, Clone, Default)]
pub struct SshArgs {
    /// The ssh command for the `[user@]host:DIR` form, with its options, as rsync's `-e`: e.g.
    /// `--ssh 'ssh -p 2222 -i /keys/lab'`; split into words as a shell would, without
    /// expanding anything [default: ssh].
    #[arg(long, value_name = "COMMAND")]
    pub ssh: Option<String>,
    /// Where longhaul is on the far host, when not on the PATH of a non-interactive ssh session
    /// (which often lacks ~/.cargo/bin and /usr/local/bin) [default: longhaul].
    #[arg(long, value_name = "PATH")]
    pub remote_longhaul: Option<String>,
    /// UDP port for the remote receiver, when a firewall leaves only some open [default: 0,
    /// any free port].
    #[arg(long, value_name = "PORT")]
    pub remote_port: Option<u16>,
    /// Give up when the remote receiver has not announced its port this long after ssh starts
    /// (ssh's login, a password typed, the receiver's start) [default: 60s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub launch_timeout: Option<Duration>,
}

impl SshArgs {
    /// The options make sense only with an ssh destination.
    pub fn check_unused(&self, to: &str) -> Result<()> {
        let given = [
            (self.ssh.is_some(), "--ssh"),
            (self.remote_longhaul.is_some(), "--remote-longhaul"),
            (self.remote_port.is_some(), "--remote-port"),
            (self.launch_timeout.is_some(), "--launch-timeout"),
        ];
        if let Some((_, flag)) = given.iter().find(|(g, _)| *g) {
            bail!(
                "{flag} starts the receiver over ssh, which needs a destination of the form \
                 [user@]host:DIR; {to:?} names a receiver already running (HOST[:PORT])"
            );
        }
        Ok(())
    }
}

/// `recv`'s options for being started by a program (the ssh launch) rather than a person.
#[derive(Args, Clone)]
pub struct LaunchedArgs {
    /// Serve one transfer, then exit: with status 0 only if it succeeded.
    #[arg(long, conflicts_with = "count")]
    pub once: bool,
    /// Print `longhaul-recv-ready port=N key=… [via=…]` on standard output once listening (for
    /// the program that started the receiver; `--port 0` lets the kernel choose the port).
    #[arg(long)]
    pub announce: bool,
    /// Stop when standard input closes: the ssh session that started the receiver ended.
    #[arg(long)]
    pub exit_on_eof: bool,
    /// Keep the part files of the sender given with --authorize-key under the user this
    /// receiver runs as (the ssh user that started it), not under that one-time key, so that
    /// the same transfer started again over ssh, with another one-time key, resumes.
    #[arg(long)]
    pub ssh_user_identity: bool,
}

// ---------------------------------------------------------------------------------------------
// The destination
// ---------------------------------------------------------------------------------------------

/// Where the receiver runs, as the ssh form names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SshTarget {
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
    pub fn parse(s: &str) -> Result<Destination> {
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

// ---------------------------------------------------------------------------------------------
// The announce line
// ---------------------------------------------------------------------------------------------

/// What the receiver announces once it listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Announce {
    pub port: u16,
    pub key: Option<PublicKey>,
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
    pub fn parse(line: &str) -> Option<Result<Announce, String>> {
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
            let bad = |what: &str| Err(format!("{w:?} in the announce line: {what}"));
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
            return Some(Err(format!("no port in the announce line {line:?}")));
        }
        Some(Ok(a))
    }
}

/// Prints the announce line for the program that started the receiver.
pub fn announce(port: u16, key: Option<PublicKey>) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", Announce::new(port, key).line())
        .and_then(|_| out.flush())
        .context("writing the announce line to standard output")
}

/// Sets `stop` when standard input reaches its end (or fails): the session that started the
/// receiver is gone, so nobody waits for what it would do.
pub fn stop_on_eof(stop: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let mut input = std::io::stdin().lock();
        loop {
            match input.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
}

// ---------------------------------------------------------------------------------------------
// The remote command
// ---------------------------------------------------------------------------------------------

/// A word for the remote login shell (sh, bash, zsh, fish, csh alike): as it is when made of
/// harmless characters, else in single quotes.
fn shell_word(w: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:+,@%".contains(c);
    if !w.is_empty() && w.chars().all(plain) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// The command line ssh runs on the far host.
fn remote_command(
    longhaul: &str,
    dir: &str,
    port: u16,
    authorize: &PublicKey,
    t: &TransportArgs,
) -> String {
    let words = [
        longhaul.to_string(),
        "recv".into(),
        "--once".into(),
        "--announce".into(),
        "--exit-on-eof".into(),
        "--port".into(),
        port.to_string(),
        "--identity-ephemeral".into(),
        "--authorize-key".into(),
        authorize.to_base64(),
        "--ssh-user-identity".into(),
        "--mtu".into(),
        t.mtu.to_string(),
        "--window".into(),
        t.window.to_string(),
        "--idle-timeout".into(),
        format!("{}ms", t.idle_timeout.as_millis()),
        "--dir".into(),
        dir.to_string(),
    ];
    words
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

// ---------------------------------------------------------------------------------------------
// The launch
// ---------------------------------------------------------------------------------------------

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
    opts: &SshArgs,
    transport: &TransportArgs,
    stop: &AtomicBool,
    quiet: bool,
) -> Result<Launched> {
    let ssh_cmd = opts.ssh.as_deref().unwrap_or("ssh");
    let ssh = shlex::split(ssh_cmd)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| anyhow!("--ssh {ssh_cmd:?}: not a command (unbalanced quotes?)"))?;
    let longhaul = opts.remote_longhaul.as_deref().unwrap_or("longhaul");
    let timeout = opts.launch_timeout.unwrap_or(Duration::from_secs(60));
    let login = target.login();
    let label = format!("longhaul recv on {login}");
    let identity = KeyPair::generate().context("making the session's one-time key pair")?;
    let command = remote_command(
        longhaul,
        &target.dir,
        opts.remote_port.unwrap_or(0),
        &identity.public,
        transport,
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
            std::io::ErrorKind::NotFound => anyhow!(
                "cannot run {:?}: not found; install an OpenSSH client, or name the ssh \
                 program with --ssh",
                ssh[0]
            ),
            _ => anyhow!("cannot run {:?}: {e}", ssh[0]),
        })?;
    let stdin = child.stdin.take();
    let tail: Shared = Arc::default();
    let (tx, rx) = mpsc::channel::<Result<Announce, String>>();
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
            Ok(Err(why)) => bail!(
                "{}: {why}; is the remote longhaul ({longhaul}) the same version as this one?{}",
                launched.label,
                launched.remote_text()
            ),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {}
        }
        if let Some(st) = launched.child.try_wait().context("waiting for ssh")? {
            launched.reaped = true;
            // Let the readers take the last lines (and a late announce) first.
            launched.drain_stderr();
            if let Ok(Ok(a)) = rx.try_recv() {
                bail!(
                    "{} announced port {} and then ended ({st}) before the transfer began{}",
                    launched.label,
                    a.port,
                    launched.remote_text()
                );
            }
            return Err(launched.failure(st, &ssh[0], longhaul));
        }
        if stop.load(Ordering::Relaxed) {
            bail!("interrupted while starting the {}", launched.label);
        }
        if started.elapsed() > timeout {
            bail!(
                "{} did not announce its port within {timeout:?} (ssh is still running; a \
                 password prompt or a slow login needs a longer --launch-timeout){}",
                launched.label,
                launched.remote_text()
            );
        }
    };
    let ip = choose_address(&addrs, announce.via).ok_or_else(|| {
        anyhow!(
            "cannot resolve {} to an address for the data (ssh reached it, perhaps through a \
             proxy that is not used for UDP); start `longhaul recv` there and send to HOST:PORT",
            target.host
        )
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
    fn failure(&self, st: ExitStatus, ssh: &str, longhaul: &str) -> anyhow::Error {
        let text = tail_text(&self.tail);
        let said = self.remote_text();
        let host = &self.login;
        match st.code() {
            Some(255) if text.contains("Permission denied") => anyhow!(
                "ssh could not log in to {host} (authentication failed): check that \
                 `{ssh} {host} true` works with the same options (--ssh){said}"
            ),
            Some(255) => anyhow!(
                "ssh to {host} failed (status 255: no connection, or it broke): check that \
                 `{ssh} {host} true` works with the same options (--ssh){said}"
            ),
            Some(127) => anyhow!(
                "{longhaul:?} was not found on {host}: install longhaul there, or name its path \
                 with --remote-longhaul (a non-interactive ssh session's PATH often lacks \
                 ~/.cargo/bin and /usr/local/bin){said}"
            ),
            Some(126) => anyhow!(
                "{longhaul:?} on {host} cannot be run (not executable, or built for another \
                 system){said}"
            ),
            Some(2) if text.contains("unexpected argument") => anyhow!(
                "the longhaul on {host} ({longhaul}) does not know the options of the ssh \
                 launch: it is older than this one; install the same version on both hosts{said}"
            ),
            _ => anyhow!("the {} ended ({st}) before it listened{said}", self.label),
        }
    }

    /// After the transfer: the receiver serves one session, so it exits by itself; waits for
    /// it, and for ssh, and reports the remote status. The stop flag shortens the wait.
    pub fn finish(mut self, stop: &AtomicBool) -> Result<()> {
        let st = self.wait_exit(EXIT_GRACE, stop)?;
        self.drain_stderr();
        match st {
            Some(st) if st.success() => Ok(()),
            Some(st) => Err(anyhow!(
                "the {} ended with {st}; its messages are above (remote: …)",
                self.label
            )),
            None => Err(anyhow!(
                "the {} did not exit within {EXIT_GRACE:?} after the transfer; stopped it",
                self.label
            )),
        }
    }

    /// Waits up to `limit` for ssh to exit; then closes the receiver's standard input and waits
    /// a little more; then kills ssh. `None` when it had to be stopped.
    fn wait_exit(&mut self, limit: Duration, stop: &AtomicBool) -> Result<Option<ExitStatus>> {
        let t = Instant::now();
        while t.elapsed() < limit && !stop.load(Ordering::Relaxed) {
            if let Some(st) = self.child.try_wait().context("waiting for ssh")? {
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

    /// A send error, with what the launch knows about it.
    pub fn explain(&self, e: NetError) -> anyhow::Error {
        match e {
            NetError::NoAnswer(..) | NetError::PortClosed(_) => anyhow!(e).context(format!(
                "the {} was started and listens on UDP port {}, but longhaul's datagrams did \
                 not get through to {}: a firewall that lets ssh through may stop UDP; open \
                 that port, or choose an open one with --remote-port",
                self.label,
                self.addr.port(),
                self.addr
            )),
            e => anyhow!(e),
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

    #[test]
    fn the_remote_command_survives_the_remote_shell() {
        let t = TransportArgs {
            cc: "fast".into(),
            mtu: 9000,
            window: 64 << 20,
            idle_timeout: Duration::from_secs(30),
            no_offload: false,
            insecure: false,
            identity: None,
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
        assert_eq!(shell_word("$(reboot)"), "'$(reboot)'");
        assert_eq!(shell_word(""), "''");
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
