//! `longhaul send PATH… HOST`: files, directories and links to a `longhaul recv`, over one
//! connection.
//!
//! The loop, each turn: read the datagrams that arrived, let due timers act, read the
//! receiver's messages (plans, verdicts), top up the connection's send buffer (the manifest,
//! then each planned file's bytes and digest, at most `rate_limit`), send what the connection
//! has ready, then sleep until the next datagram, deadline or report. A file has arrived only
//! when the receiver says `DONE` with the digest the sender computed: acknowledged bytes are in
//! the receiver's memory, not yet on its disk.
//!
//! Resuming: the receiver's plan may offer a prefix of a file it holds from a cut transfer.
//! The sender hashes the same prefix of its own file, chunk by chunk, and starts after it only
//! if the digests agree (otherwise from zero); meanwhile it keeps the connection alive. The
//! prefix's chunk digests are also the start of the file's digest (`hashlist`), so no byte is
//! hashed twice.

use crate::feed::{read_at_full, Feed, Next, Piece};
use crate::framing::{self, Action, Kind, Message, MessageReader, CHUNK_SIZE, DIGEST_LEN, MAGIC};
use crate::hashlist::{chunk_digest, FileHasher};
use crate::manifest::{self, Item, Unsent};
use crate::mtu::PathMtu;
use crate::path::Printable;
use crate::socket::{self, Clock, SocketStats, UdpPort};
use crate::NetError;
use longhaul_proto::{CloseReason, Config, Connection, Side, Stats};
use std::collections::VecDeque;
use std::fs::File;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Prefix bytes hashed per turn of the loop while verifying a resume point.
const VERIFY_PER_TURN: u64 = 16 << 20;
/// A keepalive goes out this often while nothing else does (verifying a long prefix).
const KEEPALIVE: Duration = Duration::from_secs(2);
/// How soon to look again when the connection has room but the reading thread has no chunk
/// ready (while data is in flight, arriving ACKs wake the loop sooner).
const FEED_RETRY: Duration = Duration::from_micros(200);

/// How [`send_paths`] sends.
pub struct SendOptions {
    /// The connection settings; a `pmtu_max` is the path MTU search's cap, which the route
    /// lowers ([`crate::mtu::fit_to_route`]).
    pub config: Config,
    /// The name to store a single path under (default: its own name).
    pub name: Option<String>,
    /// Follow symbolic links inside directories (default: send them as links).
    pub follow_links: bool,
    /// Resume from what the receiver kept of a cut transfer (default); `false` starts over.
    pub resume: bool,
    /// Cap on the rate of file bytes, bits per second.
    pub rate_limit: Option<u64>,
    /// How often `progress` is called.
    pub interval: Duration,
    /// Give up when the handshake has had no answer for this long.
    pub connect_timeout: Duration,
    /// Use UDP segmentation offload where the kernel has it (see [`crate::socket`]).
    pub offload: bool,
    /// Seal and send datagrams on a thread of their own ([`crate::send_thread`]); `None`:
    /// where the host has the cores for it ([`crate::io_threads_by_default`]).
    pub send_thread: Option<bool>,
    /// Called once with the receiver's authenticated key when the handshake completes, before
    /// any file byte is sent (trust on first use records it here); an error ends the transfer.
    pub on_peer_key: Option<TrustHook>,
}

/// See [`SendOptions::on_peer_key`].
pub type TrustHook = Box<dyn FnMut(&[u8; 32]) -> Result<(), String>>;

/// One report interval.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Since the connection started.
    pub elapsed: Duration,
    /// File bytes to move in this session (what the receiver did not already hold).
    pub total: u64,
    /// Of those, acknowledged by the receiver.
    pub done: u64,
    /// Files verified and stored by the receiver.
    pub files_done: usize,
    /// Files to send.
    pub files_total: usize,
    /// The file being sent now.
    pub current: Option<String>,
    /// The connection's counters and estimates (cwnd, RTT, losses).
    pub stats: Stats,
    /// The socket's counters.
    pub socket: SocketStats,
}

/// What happened to one entry.
#[derive(Clone, Debug)]
pub struct FileReport {
    /// The path as the receiver names it.
    pub path: String,
    /// The file's size, bytes (0 for a directory or link).
    pub size: u64,
    /// Bytes moved in this session.
    pub sent: u64,
    /// Bytes the receiver already held from a cut transfer (verified, not moved again).
    pub resumed: u64,
    /// Of the bytes sent, those read from the disk around the page cache, which did not hold
    /// them (`feed`).
    pub read_direct: u64,
    /// What became of it.
    pub outcome: Outcome,
}

/// What became of one entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Stored and verified; the file's digest (`hashlist`: BLAKE3 over its 1 MiB chunks'
    /// BLAKE3 digests) in hex.
    Stored(String),
    /// Not sent, and nothing wrong (already there; a directory or link now in place).
    Skipped(String),
    /// Refused by the receiver's plan, or failed.
    Failed(String),
}

/// What a session measured.
#[derive(Clone, Debug)]
pub struct SendReport {
    /// The receiver's address.
    pub peer: SocketAddr,
    /// Each entry of the manifest, in order.
    pub files: Vec<FileReport>,
    /// From the first handshake packet to the receiver's last verdict.
    pub duration: Duration,
    /// The connection's counters at the end.
    pub stats: Stats,
    /// The socket's counters at the end.
    pub socket: SocketStats,
    /// Whether GSO and GRO were in use on the sender's socket.
    pub offloads: (bool, bool),
    /// Whether a sending thread sealed and sent the datagrams.
    pub send_thread: bool,
    /// The receiver's authenticated key (`None`: security off).
    pub peer_key: Option<[u8; 32]>,
    /// The AEAD suite the handshake settled on (`None`: security off).
    pub cipher: Option<String>,
    /// The size of the datagrams, and how it was settled.
    pub path_mtu: PathMtu,
}

impl SendReport {
    /// File bytes moved in this session.
    pub fn bytes_sent(&self) -> u64 {
        self.files.iter().map(|f| f.sent).sum()
    }
    /// Bytes the receiver already held from a cut transfer, over all files.
    pub fn bytes_resumed(&self) -> u64 {
        self.files.iter().map(|f| f.resumed).sum()
    }
    /// Entries that were refused or failed.
    pub fn failed(&self) -> usize {
        self.files
            .iter()
            .filter(|f| matches!(f.outcome, Outcome::Failed(_)))
            .count()
    }
    /// File bytes per second moved, handshake and final round trip included.
    pub fn goodput_bps(&self) -> f64 {
        self.bytes_sent() as f64 * 8.0 / self.duration.as_secs_f64().max(1e-9)
    }
}

/// A file the plan asked for.
struct Job {
    id: u32,
    source: PathBuf,
    size: u64,
    offered: u64,
    prefix: [u8; DIGEST_LEN],
}

/// The file whose bytes are going out.
struct Current {
    id: u32,
    file: File,
    size: u64,
    /// Bytes of the file read so far (prefix included).
    read: u64,
    /// The file's digest so far: the prefix's chunks while verifying.
    hasher: FileHasher,
    /// Resume verification: the chunks offered and the receiver's digest of them.
    verifying: Option<(u64, [u8; DIGEST_LEN])>,
    short: bool,
    /// The file as it was when opened: a different stamp at the end means it changed while
    /// read, and what was sent may mix two versions.
    opened: Option<Stamp>,
    /// After verification: the rest of the file, read and hashed on its own thread.
    feed: Option<Feed>,
}

/// What tells that a file changed: its size, modification time and status-change time (a
/// write moves the first two, most metadata changes the third), as rsync and tar compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(file: &File) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let m = file.metadata().ok()?;
        Some(Stamp {
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }
}

/// Send `paths` to the receiver at `peer`; `progress` is called every `options.interval` and
/// `stop` (Ctrl-C) closes the connection and returns [`NetError::Interrupted`].
pub fn send_paths(
    paths: &[PathBuf],
    peer: SocketAddr,
    options: SendOptions,
    stop: &AtomicBool,
    mut progress: impl FnMut(&Progress),
) -> Result<SendReport, NetError> {
    let manifest = manifest::collect(paths, options.name.as_deref(), options.follow_links)?;
    let local: SocketAddr = if peer.is_ipv6() {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    };
    let max_datagram = options.config.max_datagram_size();
    let mut port = UdpPort::bind(local, max_datagram, options.offload).map_err(NetError::Socket)?;
    // Connected: datagrams from anyone else are filtered out, and a closed port is reported.
    port.socket().connect(peer).map_err(NetError::Socket)?;
    let mut config = options.config.clone();
    let route = crate::mtu::fit_to_route(port.socket(), &mut config);
    let send_thread = options
        .send_thread
        .unwrap_or_else(crate::io_threads_by_default);
    if send_thread {
        port.start_send_thread().map_err(NetError::Socket)?;
    }
    let clock = Clock::start();
    let conn = Connection::new(config, Side::Client, clock.now())?;
    let mut s = Sender::new(conn, manifest.items, manifest.unsent, &options);
    let mut on_peer_key = options.on_peer_key;
    let mut inbuf = vec![0u8; 65_536];
    let mut next_report = Instant::now() + options.interval;
    let started = Instant::now();
    let mut established_once = false;

    loop {
        if stop.load(Ordering::Relaxed) {
            port.close(None, &mut s.conn, clock.now());
            return Err(NetError::Interrupted);
        }
        let mut recv_err = None;
        port.receive(&mut inbuf, &clock, |_, d, at| {
            // Each datagram at its own arrival time (see `socket`): RTT samples are the
            // controller's congestion signal. A datagram the connection rejects is counted in
            // its stats; the transfer goes on.
            let _ = s.conn.handle_packet_at(at.now, at.stamped, d, false);
        })
        .unwrap_or_else(|e| recv_err = Some(e));
        if let Some(e) = recv_err {
            return Err(refused_or(e, peer));
        }
        // A connection that closed is no longer established: whether it ever was decides
        // between "no answer" and "stopped answering".
        established_once |= s.conn.is_established();
        let now = clock.now();
        if s.conn.poll_timeout().is_some_and(|t| t <= now) {
            s.conn.handle_timeout(now);
        }
        if let (Some(key), Some(hook)) = (s.conn.peer_key(), on_peer_key.as_mut()) {
            if let Err(why) = hook(&key) {
                port.close(None, &mut s.conn, clock.now());
                return Err(NetError::Trust(why));
            }
            on_peer_key = None;
        }
        if let Err(e) = s.read_messages() {
            port.close(None, &mut s.conn, clock.now());
            return Err(e);
        }
        if s.bye {
            let stats = s.conn.stats();
            port.close(None, &mut s.conn, clock.now());
            return Ok(SendReport {
                peer,
                files: s.reports,
                duration: started.elapsed(),
                stats,
                socket: port.stats,
                offloads: port.offloads(),
                send_thread,
                peer_key: s.conn.peer_key(),
                cipher: s.conn.cipher().map(|c| c.name().to_string()),
                path_mtu: PathMtu::new(&stats, s.conn.config().base_mtu(), route),
            });
        }
        // No file byte before the hook has accepted the receiver's key.
        let wake = match if on_peer_key.is_some() && s.conn.is_secure() {
            Ok(None)
        } else {
            s.top_up()
        } {
            Ok(w) => w,
            Err(e) => {
                port.close(None, &mut s.conn, clock.now());
                return Err(e);
            }
        };
        if s.conn.is_closed() {
            return Err(closed_error(
                s.conn.close_reason(),
                established_once,
                s.progress_bytes(),
                started.elapsed(),
            ));
        }
        if !established_once && started.elapsed() > options.connect_timeout {
            return Err(NetError::NoAnswer(peer, options.connect_timeout));
        }
        let now = clock.now();
        port.flush(None, &mut s.conn, now)
            .map_err(|e| refused_or(e, peer))?;

        if Instant::now() >= next_report {
            progress(&s.progress(started.elapsed(), port.stats));
            next_report += options.interval;
        }
        let deadline = s.conn.poll_timeout().map(|t| clock.instant(t));
        let wake = socket::earliest(wake, Some(next_report));
        port.wait(socket::earliest(deadline, wake))
            .map_err(NetError::Socket)?;
    }
}

struct Sender {
    conn: Connection,
    items: Vec<Item>,
    reports: Vec<FileReport>,
    reader: MessageReader,
    /// Bytes for the stream not yet accepted by the connection: `out[at..]`, then `piece`.
    out: Vec<u8>,
    at: usize,
    /// File bytes the feed read, handed to the connection whole (not copied) once it has room.
    piece: Option<Vec<u8>>,
    /// Stream bytes handed to the connection, and how many of them were file bytes.
    stream_written: u64,
    file_written: u64,
    resume: bool,
    rate_limit: Option<u64>,
    /// When the first file byte went out (the rate limit counts from there).
    data_started: Option<Instant>,
    jobs: VecDeque<Job>,
    current: Option<Current>,
    /// One chunk of a resume prefix being verified (reused, not allocated per chunk).
    verify_buf: Vec<u8>,
    plans_done: bool,
    end_sent: bool,
    bye: bool,
    last_write: Instant,
    files_total: usize,
    files_done: usize,
    total_to_send: u64,
    /// Files whose digest this end voided, and why: the receiver refuses them, and the report
    /// gives this reason rather than the receiver's digest mismatch.
    voided: std::collections::HashMap<u32, String>,
}

impl Sender {
    /// `items` are sent (entry `id` is `items[id]`, reported at `reports[id]`); `unsent` are
    /// reported after them, failed.
    fn new(
        conn: Connection,
        items: Vec<Item>,
        unsent: Vec<Unsent>,
        options: &SendOptions,
    ) -> Sender {
        let mut out = MAGIC.to_vec();
        Message::Hello {
            resume: options.resume,
            entries: items.len() as u64,
        }
        .encode(&mut out);
        for it in &items {
            Message::Entry(it.entry.clone()).encode(&mut out);
        }
        Message::ManifestEnd.encode(&mut out);
        let reports = items
            .iter()
            .map(|it| FileReport {
                path: it.entry.path.clone(),
                size: it.entry.size(),
                sent: 0,
                resumed: 0,
                read_direct: 0,
                outcome: Outcome::Failed("no plan from the receiver".into()),
            })
            .chain(unsent.into_iter().map(|u| FileReport {
                path: u.path,
                size: 0,
                sent: 0,
                resumed: 0,
                read_direct: 0,
                outcome: Outcome::Failed(u.why),
            }))
            .collect();
        Sender {
            conn,
            items,
            reports,
            reader: MessageReader::default(),
            out,
            at: 0,
            piece: None,
            stream_written: 0,
            file_written: 0,
            resume: options.resume,
            rate_limit: options.rate_limit,
            data_started: None,
            jobs: VecDeque::new(),
            current: None,
            verify_buf: Vec::new(),
            plans_done: false,
            end_sent: false,
            bye: false,
            last_write: Instant::now(),
            files_total: 0,
            files_done: 0,
            voided: Default::default(),
            total_to_send: 0,
        }
    }

    /// The receiver's plans and verdicts.
    fn read_messages(&mut self) -> Result<(), NetError> {
        let mut piece = [0u8; 4096];
        loop {
            let n = self.conn.read(&mut piece);
            if n == 0 {
                break;
            }
            self.reader.push(&piece[..n]);
        }
        while let Some(m) = self.reader.next_message()? {
            match m {
                Message::Plan { id, action } => {
                    let Some(it) = self.items.get(id as usize) else {
                        return Err(protocol(format!(
                            "a plan for entry {id}, which was never sent"
                        )));
                    };
                    let r = &mut self.reports[id as usize];
                    match action {
                        Action::Send { from_chunk, prefix } => {
                            let Kind::File { size } = it.entry.kind else {
                                return Err(protocol(format!(
                                    "a request for the bytes of non-file entry {id}"
                                )));
                            };
                            r.outcome = Outcome::Failed("no verdict from the receiver".into());
                            self.files_total += 1;
                            self.total_to_send += size;
                            self.jobs.push_back(Job {
                                id,
                                source: it.source.clone(),
                                size,
                                offered: if self.resume { from_chunk } else { 0 },
                                prefix,
                            });
                        }
                        Action::Skip(why) => r.outcome = Outcome::Skipped(why),
                        Action::Refuse(why) => {
                            r.outcome = Outcome::Failed(format!("refused: {why}"))
                        }
                    }
                }
                Message::PlanEnd => self.plans_done = true,
                Message::Done { id, result } => {
                    let Some(r) = self.reports.get_mut(id as usize) else {
                        return Err(protocol(format!(
                            "a verdict for entry {id}, which was never sent"
                        )));
                    };
                    self.files_done += 1;
                    r.outcome = match (result, self.voided.remove(&id)) {
                        (Ok(theirs), _) => Outcome::Stored(framing::hex(&theirs)),
                        (Err(_), Some(why)) | (Err(why), None) => Outcome::Failed(why),
                    };
                }
                Message::Fatal(why) => return Err(NetError::Refused(why)),
                Message::Bye => self.bye = true,
                // The receiver waits for a part file another session of this key writes.
                Message::Keepalive => {}
                m => {
                    return Err(protocol(format!(
                        "unexpected message from the receiver: {m:?}"
                    )))
                }
            }
        }
        Ok(())
    }

    /// Fill the connection's send buffer. Returns when to wake for the rate limit, if it is
    /// what holds data back.
    fn top_up(&mut self) -> Result<Option<Instant>, NetError> {
        let mut budget = VERIFY_PER_TURN;
        loop {
            if self.at < self.out.len() {
                let n = self.conn.write(&self.out[self.at..]);
                self.at += n;
                self.stream_written += n as u64;
                if n > 0 {
                    self.last_write = Instant::now();
                }
                if self.at < self.out.len() {
                    return Ok(None);
                }
            }
            self.out.clear();
            self.at = 0;
            if let Some(piece) = self.piece.take() {
                match self.conn.write_owned(piece) {
                    Ok(n) => {
                        self.stream_written += n as u64;
                        self.last_write = Instant::now();
                    }
                    Err(piece) => {
                        self.piece = Some(piece);
                        return Ok(None);
                    }
                }
            }
            if self.current.is_none() {
                match self.jobs.pop_front() {
                    Some(job) => {
                        // (A file that cannot be opened fails alone; the next job starts.)
                        self.start(job);
                        continue;
                    }
                    None if self.plans_done && !self.end_sent => {
                        Message::End.encode(&mut self.out);
                        self.end_sent = true;
                        continue;
                    }
                    None => return Ok(None),
                }
            }
            let cur = self.current.as_mut().expect("started");
            if let Some((offered, prefix)) = &mut cur.verifying {
                // Hash the offered prefix, a bounded amount per turn.
                if budget == 0 {
                    if self.last_write.elapsed() >= KEEPALIVE {
                        // Keep the connection (and the receiver's idle timer) alive.
                        Message::Keepalive.encode(&mut self.out);
                        continue;
                    }
                    return Ok(Some(Instant::now()));
                }
                if cur.hasher.chunks() < *offered {
                    let n = CHUNK_SIZE.min(cur.size - cur.read) as usize;
                    let buf = &mut self.verify_buf;
                    buf.resize(n, 0);
                    let got = match read_at_full(&cur.file, cur.read, buf) {
                        Ok(got) => got,
                        Err(e) => {
                            // Nothing of the file has gone yet: it fails alone.
                            let (id, size) = (cur.id, cur.size);
                            self.current = None;
                            self.unreadable(id, size, e);
                            continue;
                        }
                    };
                    if got < n {
                        cur.short = true;
                    }
                    cur.hasher.push_chunk(&chunk_digest(&buf[..]));
                    cur.read += n as u64;
                    budget = budget.saturating_sub(n as u64);
                    continue;
                }
                let agree = cur.hasher.digest() == *prefix;
                let from = if agree { *offered } else { 0 };
                if !agree {
                    // The file changed since the cut transfer: start over.
                    cur.hasher = FileHasher::new();
                    cur.read = 0;
                }
                let resumed = from * CHUNK_SIZE;
                let r = &mut self.reports[cur.id as usize];
                r.resumed = resumed.min(cur.size);
                self.total_to_send -= r.resumed;
                cur.verifying = None;
                Message::File {
                    id: cur.id,
                    from_chunk: from,
                }
                .encode(&mut self.out);
                continue;
            }
            if cur.feed.is_none() {
                let left = cur.size - cur.read;
                let file = cur
                    .file
                    .try_clone()
                    .and_then(|f| Feed::start(f, cur.hasher.clone(), cur.read, left))
                    .map_err(|e| file_err(&self.items[cur.id as usize], e))?;
                cur.feed = Some(file);
            }
            let feed = cur.feed.as_mut().expect("started");
            if cur.read < cur.size {
                if let Some(wait) = rate_wait(self.rate_limit, self.data_started, self.file_written)
                {
                    return Ok(Some(wait));
                }
            }
            // Buffers the connection is done with go back to be filled again, before the
            // reading threads need them.
            while let Some(spent) = self.conn.take_spent() {
                feed.recycle(spent);
            }
            let mut digest = match feed.poll() {
                Next::Empty => return Ok(Some(Instant::now() + FEED_RETRY)),
                Next::Piece(Piece::Failed(e)) => {
                    return Err(file_err(&self.items[cur.id as usize], e))
                }
                Next::Piece(Piece::Bytes(buf)) => {
                    if feed.is_short() {
                        // The file shrank under the reader: its bytes are on their way, so
                        // the session stops now rather than after the announced size in
                        // zeros (as a read error does).
                        let now = cur.file.metadata().map_or(0, |m| m.len());
                        let why = format!(
                            "shrank to {now} bytes (from {}) while being sent; the send stops \
                             here and the file is not stored (what arrived of the others is \
                             kept): send it again once it is settled",
                            cur.size
                        );
                        let item = &self.items[cur.id as usize];
                        return Err(file_err(item, std::io::Error::other(why)));
                    }
                    let n = buf.len() as u64;
                    self.piece = Some(buf);
                    cur.read += n;
                    self.file_written += n;
                    self.reports[cur.id as usize].sent += n;
                    continue;
                }
                Next::Piece(Piece::End {
                    digest,
                    short,
                    direct,
                }) => {
                    cur.short |= short;
                    self.reports[cur.id as usize].read_direct += direct;
                    digest
                }
            };
            let changed = cur.opened.is_some_and(|o| Stamp::of(&cur.file) != Some(o));
            if cur.short || changed {
                // A digest no data has: the receiver refuses the file and keeps nothing of it.
                digest = [0; DIGEST_LEN];
                let path = &self.reports[cur.id as usize].path;
                let why = format!(
                    "{} {} while being sent; not stored (send it again once it is settled)",
                    Printable::from(path.as_str()),
                    if cur.short { "shrank" } else { "changed" }
                );
                eprintln!("longhaul: {why}");
                self.voided.insert(cur.id, why);
            }
            self.out.extend_from_slice(&digest);
            self.current = None;
        }
    }

    fn start(&mut self, job: Job) {
        let file = match File::open(&job.source) {
            Ok(f) => f,
            Err(e) => return self.unreadable(job.id, job.size, e),
        };
        let opened = Stamp::of(&file);
        if let Some(now) = opened.map(|o| o.size).filter(|&n| n < job.size) {
            // Shorter than listed: it fails alone, before any of its bytes go.
            let source = &self.items[job.id as usize].source;
            self.reports[job.id as usize].outcome = Outcome::Failed(format!(
                "{} shrank from {} to {now} bytes since it was listed; not sent (send it again \
                 once it is settled)",
                Printable::from(source.to_string_lossy().as_ref()),
                job.size
            ));
            self.total_to_send -= job.size;
            self.files_done += 1;
            return;
        }
        let offered = job.offered.min(job.size.div_ceil(CHUNK_SIZE));
        if self.data_started.is_none() {
            self.data_started = Some(Instant::now());
        }
        self.current = Some(Current {
            id: job.id,
            file,
            size: job.size,
            read: 0,
            hasher: FileHasher::new(),
            verifying: Some((offered, job.prefix)),
            short: false,
            opened,
            feed: None,
        });
    }

    /// A file the plan asked for that this end cannot read, before any of its bytes went: it
    /// fails alone, with the reason. The receiver, which never hears FILE for it, releases
    /// what it planned for it at END and keeps nothing.
    fn unreadable(&mut self, id: u32, size: u64, e: std::io::Error) {
        let source = &self.items[id as usize].source;
        self.reports[id as usize].outcome = Outcome::Failed(format!(
            "cannot read {}: {e}; not sent",
            Printable::from(source.to_string_lossy().as_ref())
        ));
        self.total_to_send -= size;
        self.files_done += 1;
    }

    /// File bytes the receiver has acknowledged (stream bytes acknowledged, less the control
    /// bytes among them; approximate by at most a message).
    fn progress_bytes(&self) -> u64 {
        let acked = self.conn.stats().bytes_acked;
        let unacked = self.stream_written.saturating_sub(acked);
        self.file_written.saturating_sub(unacked)
    }

    fn progress(&self, elapsed: Duration, socket: SocketStats) -> Progress {
        Progress {
            elapsed,
            total: self.total_to_send,
            done: self.progress_bytes(),
            files_done: self.files_done,
            files_total: self.files_total,
            current: self
                .current
                .as_ref()
                .map(|c| self.reports[c.id as usize].path.clone()),
            stats: self.conn.stats(),
            socket,
        }
    }
}

/// With a rate limit (bits per second), when the next file bytes may go (`None`: now).
fn rate_wait(limit: Option<u64>, since: Option<Instant>, written: u64) -> Option<Instant> {
    let rate = limit? as f64 / 8.0;
    let t0 = since?;
    // A small burst allowance (10 ms at the rate, at least one chunk, what the feed hands over
    // at a time) keeps the limit from costing throughput at its own level.
    let chunk = CHUNK_SIZE as f64;
    let allowed = rate * t0.elapsed().as_secs_f64() + (rate * 0.01).max(chunk);
    let excess = written as f64 + chunk - allowed;
    if excess <= 0.0 {
        None
    } else {
        Some(Instant::now() + Duration::from_secs_f64(excess / rate))
    }
}

fn file_err(item: &Item, e: std::io::Error) -> NetError {
    NetError::File(item.source.display().to_string(), e)
}

fn protocol(why: String) -> NetError {
    NetError::Closed(format!("the receiver broke the protocol: {why}"))
}

fn refused_or(e: std::io::Error, peer: SocketAddr) -> NetError {
    if e.kind() == std::io::ErrorKind::ConnectionRefused {
        NetError::PortClosed(peer)
    } else {
        NetError::Socket(e)
    }
}

fn closed_error(
    reason: Option<CloseReason>,
    established: bool,
    bytes: u64,
    after: Duration,
) -> NetError {
    use longhaul_proto::CloseCode;
    NetError::Closed(match reason {
        Some(r) if r.code == CloseCode::PeerKeyMismatch => "the receiver presented a key other \
            than the one expected (--peer-key, or its known_hosts line): it may be an impostor, \
            and nothing was sent. If its key changed on purpose, remove its line from \
            known_hosts"
            .to_string(),
        Some(r) if r.code == CloseCode::Unauthorized => "the receiver does not authorize this \
            sender's key: add the line `longhaul keygen --show` prints here to the receiver's \
            ~/.longhaul/authorized_keys"
            .to_string(),
        Some(r) if r.code == CloseCode::HandshakeFailed => "the secure handshake failed: are \
            both ends started alike (one with --insecure, the other not), and of one version?"
            .to_string(),
        Some(r) if r.by_peer && r.code == CloseCode::TimedOut => format!(
            "the receiver stopped hearing from this sender mid-transfer and closed the \
             connection, after {bytes} file bytes were acknowledged in {:.1} s (is the path \
             down in one direction?); run the same command again to resume",
            after.as_secs_f64()
        ),
        Some(r) if r.by_peer => format!("the receiver closed the connection ({:?})", r.code),
        Some(r) if !established => format!("no handshake answer ({:?})", r.code),
        Some(r) => format!(
            "the receiver stopped answering mid-transfer, after {bytes} file bytes were \
             acknowledged in {:.1} s ({:?}); run the same command again to resume",
            after.as_secs_f64(),
            r.code
        ),
        None => "the connection closed".to_string(),
    })
}
