//! `longhaul recv`: receive files into a directory, from any number of senders at once.
//!
//! One socket, one thread, one [`Connection`] per sender address. A transfer is written to a
//! hidden part file beside its destination (`.NAME.longhaul-part`), hashed as it is written,
//! and renamed to `NAME` only after the sender's SHA-256 matched and the data reached the disk
//! (`fsync`); a failed or abandoned transfer removes its part file, and an existing file is
//! never replaced unless the receiver was started with `overwrite`. So a crash, a cut
//! connection or a corrupt transfer never leaves a truncated file under the real name.

use crate::framing::{self, HeaderParser, Status, DIGEST_LEN};
use crate::socket::{self, Clock, UdpPort};
use crate::NetError;
use longhaul_proto::{Config, Connection, Side, Time};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Clone)]
pub struct RecvOptions {
    pub config: Config,
    pub dir: PathBuf,
    /// Replace an existing file of the same name.
    pub overwrite: bool,
    /// Refuse files larger than this.
    pub max_size: u64,
    /// Senders served at once; datagrams from more are ignored.
    pub max_sessions: usize,
    /// Use UDP segmentation offload and receive coalescing where the kernel has them.
    pub offload: bool,
}

/// What happened to one transfer.
#[derive(Clone, Debug)]
pub struct Received {
    pub peer: SocketAddr,
    pub name: Option<String>,
    /// File bytes written (all of them on success).
    pub bytes: u64,
    pub duration: Duration,
    /// The stored file's path and digest, or why there is none.
    pub result: Result<(PathBuf, String), String>,
}

enum Phase {
    Header(HeaderParser),
    Body,
    /// Refused or failed: the status is sent, the rest of the stream is discarded.
    Discard,
    /// Stored and the `OK` sent.
    Done,
}

struct Session {
    conn: Connection,
    phase: Phase,
    started: Instant,
    name: Option<String>,
    size: u64,
    written: u64,
    trailer: Vec<u8>,
    hasher: Sha256,
    file: Option<BufWriter<File>>,
    part: Option<PathBuf>,
    dest: Option<PathBuf>,
    result: Option<Result<(PathBuf, String), String>>,
}

impl Session {
    fn fail(&mut self, why: String) {
        self.file = None;
        if let Some(p) = self.part.take() {
            let _ = std::fs::remove_file(p);
        }
        self.conn.write(&Status::Err(why.clone()).encode());
        self.conn.finish();
        self.phase = Phase::Discard;
        self.result = Some(Err(why));
    }

    /// Move received bytes along: header, body to disk, digest, verdict.
    fn advance(&mut self, opts: &RecvOptions, buf: &mut [u8]) {
        loop {
            let n = self.conn.read(buf);
            if n == 0 {
                break;
            }
            let mut input = &buf[..n];
            while !input.is_empty() {
                match &mut self.phase {
                    Phase::Header(p) => match p.feed(input) {
                        Ok(Some((h, used))) => {
                            input = &input[used..];
                            self.begin(opts, h.name, h.size);
                        }
                        Ok(None) => input = &[],
                        Err(e) => {
                            self.fail(e.to_string());
                            input = &[];
                        }
                    },
                    Phase::Body => {
                        let body = (self.size - self.written).min(input.len() as u64) as usize;
                        if body > 0 {
                            let w = self.file.as_mut().expect("open in Body");
                            if let Err(e) = w.write_all(&input[..body]) {
                                let dest = self.dest.clone().unwrap_or_default();
                                self.fail(format!("cannot write {}: {e}", dest.display()));
                                input = &[];
                                continue;
                            }
                            self.hasher.update(&input[..body]);
                            self.written += body as u64;
                            input = &input[body..];
                        }
                        let t = (DIGEST_LEN - self.trailer.len()).min(input.len());
                        self.trailer.extend_from_slice(&input[..t]);
                        input = &input[t..];
                        if !input.is_empty() {
                            self.fail("the sender sent bytes after the file's digest".into());
                            input = &[];
                        }
                    }
                    Phase::Discard | Phase::Done => input = &[],
                }
            }
        }
        if self.conn.is_recv_finished() {
            match self.phase {
                Phase::Body if self.trailer.len() == DIGEST_LEN => self.complete(opts),
                Phase::Body | Phase::Header(_) => self.fail(format!(
                    "the stream ended after {} of {} bytes",
                    self.written, self.size
                )),
                _ => {}
            }
        }
    }

    fn begin(&mut self, opts: &RecvOptions, name: String, size: u64) {
        self.name = Some(name.clone());
        self.size = size;
        if size > opts.max_size {
            return self.fail(format!(
                "{name} is {size} bytes; this receiver takes at most {}",
                opts.max_size
            ));
        }
        let dest = opts.dir.join(&name);
        if dest.exists() && !opts.overwrite {
            return self.fail(format!(
                "{name} exists on the receiver (start it with --overwrite to replace files)"
            ));
        }
        let part = opts.dir.join(format!(".{name}.longhaul-part"));
        // create_new: two senders of one name do not write into each other's part file.
        match OpenOptions::new().write(true).create_new(true).open(&part) {
            Ok(f) => {
                self.file = Some(BufWriter::with_capacity(1 << 20, f));
                self.part = Some(part);
                self.dest = Some(dest);
                self.phase = Phase::Body;
            }
            Err(e) => self.fail(format!("cannot create {}: {e}", part.display())),
        }
    }

    fn complete(&mut self, opts: &RecvOptions) {
        let ours: [u8; DIGEST_LEN] = self.hasher.clone().finalize().into();
        if ours[..] != self.trailer[..] {
            return self.fail(format!(
                "SHA-256 mismatch: received data hashes to {}, the sender's file to {}",
                framing::hex(&ours),
                framing::hex(&self.trailer)
            ));
        }
        let w = self.file.take().expect("open in Body");
        let synced = w
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all());
        let (part, dest) = (
            self.part.clone().expect("set"),
            self.dest.clone().expect("set"),
        );
        if let Err(e) = synced {
            return self.fail(format!("cannot write {}: {e}", part.display()));
        }
        if dest.exists() && !opts.overwrite {
            return self.fail(format!(
                "{} appeared on the receiver during the transfer",
                dest.display()
            ));
        }
        if let Err(e) = std::fs::rename(&part, &dest) {
            return self.fail(format!("cannot rename to {}: {e}", dest.display()));
        }
        self.part = None;
        let hex = framing::hex(&ours);
        self.conn.write(&Status::Ok(hex.clone()).encode());
        self.conn.finish();
        self.phase = Phase::Done;
        self.result = Some(Ok((dest, hex)));
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // An abandoned transfer leaves nothing behind.
        self.file = None;
        if let Some(p) = self.part.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

pub struct Receiver {
    port: UdpPort,
    local: SocketAddr,
    options: RecvOptions,
    sessions: HashMap<SocketAddr, Session>,
    clock: Clock,
}

impl Receiver {
    pub fn bind(addr: SocketAddr, options: RecvOptions) -> Result<Receiver, NetError> {
        if !options.dir.is_dir() {
            return Err(NetError::NotADirectory(options.dir.display().to_string()));
        }
        options.config.validate()?;
        let max_datagram = options.config.max_datagram_size();
        let port = UdpPort::bind(addr, max_datagram, options.offload).map_err(NetError::Socket)?;
        let local = port.socket().local_addr().map_err(NetError::Socket)?;
        Ok(Receiver {
            port,
            local,
            options,
            sessions: HashMap::new(),
            clock: Clock::start(),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The socket's receive buffer as granted: datagrams beyond it while the loop is busy
    /// (writing to disk) are dropped, and the sender sees loss.
    pub fn recv_buffer(&self) -> usize {
        self.port.recv_buffer
    }

    /// Whether GSO and GRO are in use.
    pub fn offloads(&self) -> (bool, bool) {
        self.port.offloads()
    }

    pub fn dir(&self) -> &Path {
        &self.options.dir
    }

    /// Serve until `stop` is set, or after `limit` transfers have ended; `done` hears of each.
    pub fn serve(
        &mut self,
        stop: &AtomicBool,
        limit: Option<usize>,
        mut done: impl FnMut(&Received),
    ) -> Result<usize, NetError> {
        let mut inbuf = vec![0u8; 65_536];
        let mut app = vec![0u8; 1 << 20];
        let mut ended = 0;
        while !stop.load(Ordering::Relaxed) && limit.is_none_or(|l| ended < l) {
            self.receive(&mut inbuf)?;
            let now = self.clock.now();
            let mut deadline: Option<Time> = None;
            let mut closed = Vec::new();
            for (peer, s) in self.sessions.iter_mut() {
                if s.conn.poll_timeout().is_some_and(|t| t <= now) {
                    s.conn.handle_timeout(now);
                }
                s.advance(&self.options, &mut app);
                // Unconnected socket: a full buffer is a local drop, other errors are the
                // peer's (an ICMP error for one sender must not stop the others).
                let _ = self.port.flush(Some(*peer), &mut s.conn, now);
                // The sender closes after reading the verdict; a vanished one times out.
                let verdict_delivered =
                    matches!(s.phase, Phase::Done | Phase::Discard) && s.conn.is_send_complete();
                if s.conn.is_closed() || verdict_delivered {
                    closed.push(*peer);
                }
                deadline = match (deadline, s.conn.poll_timeout()) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
            for peer in closed {
                let mut s = self.sessions.remove(&peer).expect("listed");
                let result = s.result.take().unwrap_or_else(|| {
                    Err(match s.conn.close_reason() {
                        Some(r) if r.by_peer => "the sender closed the connection".to_string(),
                        _ => "the sender stopped answering".to_string(),
                    })
                });
                ended += 1;
                done(&Received {
                    peer,
                    name: s.name.clone(),
                    bytes: s.written,
                    duration: s.started.elapsed(),
                    result,
                });
            }
            let deadline = deadline.map(|t| self.clock.instant(t));
            // Wake at least every 100 ms to look at `stop`.
            let tick = Instant::now() + Duration::from_millis(100);
            self.port
                .wait(socket::earliest(deadline, Some(tick)))
                .map_err(NetError::Socket)?;
        }
        Ok(ended)
    }

    fn receive(&mut self, inbuf: &mut [u8]) -> Result<(), NetError> {
        let (sessions, options, clock) = (&mut self.sessions, &self.options, &self.clock);
        let result = self.port.receive(inbuf, clock, |from, d, now| {
            // `now` is the datagram's own arrival time (see `socket`): ACK delays count from it.
            if let Some(s) = sessions.get_mut(&from) {
                let _ = s.conn.handle_packet(now, d);
                return;
            }
            if sessions.len() >= options.max_sessions {
                return;
            }
            let Ok(mut conn) = Connection::new(options.config.clone(), Side::Server, now) else {
                return;
            };
            // Only a valid handshake opens a session: stray datagrams cost no state.
            if conn.handle_packet(now, d).is_err() || conn.is_closed() {
                return;
            }
            sessions.insert(
                from,
                Session {
                    conn,
                    phase: Phase::Header(HeaderParser::default()),
                    started: Instant::now(),
                    name: None,
                    size: 0,
                    written: 0,
                    trailer: Vec::with_capacity(DIGEST_LEN),
                    hasher: Sha256::new(),
                    file: None,
                    part: None,
                    dest: None,
                    result: None,
                },
            );
        });
        match result {
            Ok(()) => Ok(()),
            // An ICMP error for an unconnected socket names no peer we could act on.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Ok(()),
            Err(e) => Err(NetError::Socket(e)),
        }
    }
}
