//! `longhaul recv`: receive files, directories and links into a directory, from any number of
//! senders at once.
//!
//! One socket, one thread, one [`Connection`] per sender address, and per connection one
//! session of the transfer protocol (`framing`): the sender's manifest is answered entry by
//! entry with a plan (send from the resume point, skip, refuse), then each file's bytes go to
//! its part file (`store`), are verified against the sender's digest and renamed into place
//! before the sender hears `DONE`. A session cut in the middle keeps its part files and
//! journals for the next one; a full disk stops the session with `FATAL` and keeps them too.

use crate::admission::{self, Door as Admission, Limits, Slot, Tokens};
use crate::framing::{
    Action, Entry, FramingError, Kind, Message, MessageReader, DIGEST_LEN, MAGIC,
};
use crate::path::Printable;
use crate::recv_thread::Openers;
use crate::service::{Service, ServiceSession};
use crate::socket::{self, Arrival, Clock, UdpPort};
use crate::store::{busy_reason, Incoming, Plan, Planned, Store};
use crate::NetError;
use longhaul_proto::{Config, Connection, OpenAttempt, Side, Stats, Time};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The sender identity under which unauthenticated transfers keep their part files.
const UNAUTHENTICATED: &str = "unauthenticated";

/// How soon the loop looks again at a file whose piece waits for its writer's queue: the queue
/// holds 4 MiB, 2 ms of a 2 GB/s disk, so the writer does not run dry in between, and a
/// stalled disk costs 2,000 wake-ups a second.
const DISK_RETRY: Duration = Duration::from_micros(500);
/// How soon the loop looks again for files placed, while some are being placed.
const PLACE_RETRY: Duration = Duration::from_micros(200);

/// A session of the same sender that holds a part file another one asks for is taken to be
/// gone (a killed process, a path that went down) once nothing was heard from it for this
/// long: more than twice the sender's keepalive interval. The newer session then takes its
/// part files over; before that, it waits.
pub const STALE_AFTER: Duration = Duration::from_secs(5);

/// How long a session waits for a part file another live session (or another receiver
/// process) is writing before the file is refused as busy.
pub const BUSY_WAIT: Duration = Duration::from_secs(5);

/// How often a session waiting for a busy part file sends the sender a KEEPALIVE, which keeps
/// the sender's idle timeout from ending the connection meanwhile.
const KEEPALIVE_WAITING: Duration = Duration::from_secs(1);

/// How often a session waiting for a busy part file looks again.
const BUSY_RETRY: Duration = Duration::from_millis(50);

/// How a [`Receiver`] serves.
#[derive(Clone)]
pub struct RecvOptions {
    /// The connection settings each session uses.
    pub config: Config,
    /// The directory files are received into.
    pub dir: PathBuf,
    /// Replace existing files that differ (same size and mtime are skipped regardless).
    pub overwrite: bool,
    /// Keep nothing: receive and verify each file, then drop it (`dir` is not used). For
    /// measuring a path and the transport without a disk.
    pub discard: bool,
    /// Refuse files larger than this.
    pub max_size: u64,
    /// Sessions at once, per source address, and when to demand retry tokens.
    pub limits: Limits,
    /// Use UDP segmentation offload and receive coalescing where the kernel has them.
    pub offload: bool,
    /// Keep the part files of every authenticated sender under this name instead of under the
    /// sender's key. A receiver started over ssh with a one-time key uses the ssh user's name,
    /// so a transfer started again over ssh (with another one-time key) resumes.
    pub sender_name: Option<String>,
    /// Read the socket and open sealed datagrams on a thread of their own
    /// ([`crate::recv_thread`]); `None`: where the host has the cores for it
    /// ([`crate::io_threads_by_default`]).
    pub recv_thread: Option<bool>,
    /// Another protocol served beside transfers ([`crate::service`]: `longhaul probe`'s far
    /// end), to the same keys and admission.
    pub service: Option<Arc<dyn Service>>,
    /// Serve transfers; without, a sender's session ends with FATAL at its first message (a
    /// receiver that only serves `service`).
    pub transfers: bool,
}

/// One file's outcome.
#[derive(Clone, Debug)]
pub struct FileOutcome {
    /// The file's path as the sender named it.
    pub path: String,
    /// File bytes this session wrote (excluding a resumed prefix).
    pub bytes: u64,
    /// Bytes a resumed transfer did not need to move again.
    pub resumed: u64,
    /// The stored file's digest, or why it was not stored.
    pub result: Result<String, String>,
}

/// What happened in one session (one sender's connection).
#[derive(Clone, Debug)]
pub struct Received {
    /// The sender's address.
    pub peer: SocketAddr,
    /// From the session's first datagram to its end.
    pub duration: Duration,
    /// Each file the sender sent, with its outcome.
    pub files: Vec<FileOutcome>,
    /// Entries skipped (already there, directories, links), with the reason.
    pub skipped: Vec<(String, String)>,
    /// Entries refused, with the reason.
    pub refused: Vec<(String, String)>,
    /// Why the session ended early, if it did.
    pub error: Option<String>,
    /// The sender spoke the transfer protocol, of this version or another (a stray handshake
    /// is not a transfer).
    pub genuine: bool,
    /// The sender's authenticated public key (`None` when security is off).
    pub sender_key: Option<[u8; 32]>,
    /// The connection's counters at the end (datagrams rejected, authentication failures…).
    pub stats: Stats,
    /// Datagrams from addresses without a session that opened none (not a handshake, or one
    /// that did not decode), counted by the receiver since the previous transfer's report
    /// (reported with transfers only: `genuine`).
    pub without_session: u64,
    /// A session of [`RecvOptions::service`], not a transfer: what it did
    /// ([`ServiceSession::summary`]).
    pub service: Option<String>,
}

/// Events reported while serving.
pub enum Event<'a> {
    /// A file's outcome is known: the sender's address and the outcome.
    File(SocketAddr, &'a FileOutcome),
    /// A session ended.
    Session(&'a Received),
}

enum Phase {
    /// Waiting for HELLO.
    Hello,
    /// Receiving the manifest (`announced` entries).
    Manifest { announced: u64 },
    /// Between files, or inside one.
    Files,
    /// BYE sent, or FATAL sent: nothing more is read.
    Over,
}

/// An entry whose part file another session is writing: the session stops reading until the
/// part file is free, its holder is found gone, or [`BUSY_WAIT`] has passed.
struct Conflict {
    id: u32,
    entry: Entry,
    since: Instant,
    /// When the last KEEPALIVE went to the sender, which hears nothing else meanwhile.
    kept_alive: Instant,
    /// The session of this receiver that writes the part file (`None`: another process).
    holder: Option<SocketAddr>,
}

struct Body {
    inc: Incoming,
    digest: Vec<u8>,
}

/// Whose a session is: undecided until the peer's first stream bytes, when a service is served.
enum Whose {
    /// The bytes read so far, too few for the service to tell.
    Undecided(Vec<u8>),
    /// A sender's.
    Transfer,
    /// A client of the service.
    Service(Box<dyn ServiceSession>),
}

struct Session {
    conn: Connection,
    whose: Whose,
    sender: String,
    started: Instant,
    reader: MessageReader,
    /// Bytes for the peer not yet accepted by the connection.
    out: Vec<u8>,
    phase: Phase,
    resume: bool,
    entries: Vec<Entry>,
    planned: HashMap<u32, Planned>,
    body: Option<Body>,
    /// The entry whose body is being received.
    current_id: u32,
    report: Received,
    /// Files whose outcome was reported to the caller.
    reported: usize,
    /// When a datagram from the peer last authenticated (or decoded, without security).
    last_heard: Instant,
    /// An entry waits for its part file (see [`Conflict`]); nothing more is read meanwhile.
    conflict: Option<Conflict>,
    /// The epoch of the keys last given to the receiving thread (`Connection::opener_epoch`).
    published_epoch: Option<u64>,
    /// Tells this session's files from an earlier one's of the same peer address (see
    /// [`crate::store::PlaceTag`]).
    serial: u64,
    /// Files being placed (`Store::placed` has their verdicts): path, bytes and resumed bytes.
    placing: HashMap<u32, (String, u64, u64)>,
    /// END arrived: BYE goes once every file has its verdict.
    ending: bool,
}

/// Sessions started, for [`Session::serial`].
static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Session {
    /// The handshake is done: the connection says so, or the peer already spoke the transfer
    /// protocol (a server whose FINISH was lost learns of the handshake from the data).
    fn past_handshake(&self) -> bool {
        self.conn.is_established() || self.report.genuine
    }

    /// Why a session that did not finish its transfer ended, as the connection tells. A
    /// sender refused for its key is named by the key, which the connection learnt.
    fn end_reason(&mut self) -> String {
        use longhaul_proto::CloseCode;
        match self.conn.close_reason() {
            Some(r) if r.by_peer => "the sender closed the connection".to_string(),
            Some(r) if r.code == CloseCode::Unauthorized => {
                self.report.sender_key = self.conn.peer_key();
                format!(
                    "refused: the sender's key {} is not authorized here (to accept it, add \
                     the line `longhaul keygen --show` prints on the sender to authorized_keys)",
                    self.report.sender_key.map_or_else(
                        || "(unknown)".to_string(),
                        |k| crate::keys::PublicKey(k).fingerprint()
                    )
                )
            }
            _ => "the sender stopped answering".to_string(),
        }
    }

    /// A session of `conn` from `peer`; `undecided` when a service is served, which the
    /// peer's first bytes may turn out to be for (the magic waits until they say otherwise).
    fn new(conn: Connection, peer: SocketAddr, undecided: bool) -> Session {
        let mut out = if undecided {
            Vec::new()
        } else {
            MAGIC.to_vec()
        };
        out.reserve(4096);
        Session {
            conn,
            whose: if undecided {
                Whose::Undecided(Vec::new())
            } else {
                Whose::Transfer
            },
            sender: UNAUTHENTICATED.to_string(),
            started: Instant::now(),
            reader: MessageReader::default(),
            out,
            phase: Phase::Hello,
            resume: true,
            entries: Vec::new(),
            planned: HashMap::new(),
            body: None,
            current_id: 0,
            report: Received {
                peer,
                duration: Duration::ZERO,
                files: Vec::new(),
                skipped: Vec::new(),
                refused: Vec::new(),
                error: None,
                genuine: false,
                sender_key: None,
                stats: Stats::default(),
                without_session: 0,
                service: None,
            },
            reported: 0,
            last_heard: Instant::now(),
            conflict: None,
            published_epoch: None,
            serial: SESSIONS.fetch_add(1, Ordering::Relaxed),
            placing: HashMap::new(),
            ending: false,
        }
    }

    fn send(&mut self, m: Message) {
        m.encode(&mut self.out);
    }

    fn flush_out(&mut self) {
        if !self.out.is_empty() {
            let n = self.conn.write(&self.out);
            self.out.drain(..n);
        }
    }

    /// Stop the session: tell the sender why, keep what is journaled.
    fn fatal(&mut self, store: &mut Store, why: String) {
        if matches!(self.phase, Phase::Over) {
            return;
        }
        self.suspend_all(store);
        self.send(Message::Fatal(why.clone()));
        self.report.error = Some(why);
        self.phase = Phase::Over;
    }

    /// Release every part file this session holds, journaling what reached the disk.
    fn suspend_all(&mut self, store: &mut Store) {
        if let Some(b) = self.body.as_mut() {
            // What the lent piece took is the file's too. (A disk error here is the
            // suspension's to report: the piece is kept either way.)
            let _ = b.inc.take_back(&mut self.conn);
        }
        if let Some(b) = self.body.take() {
            b.inc.suspend(store);
        }
        for (_, p) in self.planned.drain() {
            store.release(p.key());
        }
    }

    /// Whether this is a session of the service.
    fn is_service(&self) -> bool {
        matches!(self.whose, Whose::Service(_))
    }

    /// Until the peer's first bytes say whose the session is, reads them; then hands them to
    /// the service, or starts the transfer with them. Returns whether the transfer goes on.
    fn decide(&mut self, opts: &RecvOptions, store: &mut Store, buf: &mut [u8]) -> bool {
        let Whose::Undecided(first) = &mut self.whose else {
            return matches!(self.whose, Whose::Transfer);
        };
        loop {
            let n = self.conn.read(buf);
            if n == 0 {
                break;
            }
            first.extend_from_slice(&buf[..n]);
        }
        let service = opts.service.as_ref();
        let claimed = match service {
            _ if first.is_empty() => return false,
            Some(s) => match s.claims(first) {
                None => return false,
                Some(c) => c,
            },
            None => false,
        };
        let first = std::mem::take(first);
        if claimed {
            let mut session = service.expect("claimed by it").session();
            self.report.sender_key = self.conn.peer_key();
            if let Err(e) = session.advance(&first, &mut self.conn) {
                self.report.error = Some(e);
                self.conn.close();
            }
            self.whose = Whose::Service(session);
            return false;
        }
        self.whose = Whose::Transfer;
        self.out.splice(0..0, MAGIC.iter().copied());
        if !opts.transfers {
            self.fatal(store, "this end serves probes only, not transfers".into());
            return true;
        }
        self.feed(opts, store, &first);
        true
    }

    /// A service session's turn: what arrived on the stream goes to it.
    fn advance_service(&mut self, buf: &mut [u8]) {
        let Whose::Service(session) = &mut self.whose else {
            return;
        };
        loop {
            let n = self.conn.read(buf);
            if n == 0 {
                return;
            }
            if let Err(e) = session.advance(&buf[..n], &mut self.conn) {
                self.report.error = Some(e);
                self.conn.close();
                return;
            }
        }
    }

    /// Move received bytes along: messages, file bodies, verdicts.
    fn advance(&mut self, opts: &RecvOptions, store: &mut Store, buf: &mut [u8]) {
        if !self.decide(opts, store, buf) {
            self.advance_service(buf);
            return;
        }
        // The piece lent to the connection comes back with what it took since the last turn.
        if let Some(b) = self.body.as_mut() {
            if let Err(e) = b.inc.take_back(&mut self.conn) {
                self.fatal(store, e.0);
            }
        }
        // Messages left buffered when the session paused for a busy part file.
        self.feed(opts, store, &[]);
        loop {
            if self.conflict.is_some() {
                return;
            }
            self.flush_out();
            if matches!(self.phase, Phase::Over) {
                // Drain and drop whatever still arrives.
                while self.conn.read(buf) > 0 {}
                break;
            }
            if let Some(n) = self.read_file_bytes(store) {
                if n == 0 && !matches!(self.phase, Phase::Over) {
                    break;
                }
                continue;
            }
            let n = self.conn.read(buf);
            if n == 0 {
                break;
            }
            self.feed(opts, store, &buf[..n]);
        }
        self.flush_out();
        self.lend_piece(store);
        if matches!(self.phase, Phase::Over) && self.out.is_empty() {
            self.conn.finish();
        }
        if self.conn.is_recv_finished() && !matches!(self.phase, Phase::Over) {
            let why = "the sender ended the stream in the middle of the transfer".to_string();
            self.fatal(store, why);
        }
    }

    /// In a file's body with everything that arrived read: lend the piece being filled to
    /// the connection, so that the file's next bytes go into it straight from their packets
    /// (taken back at the start of the next turn).
    fn lend_piece(&mut self, store: &mut Store) {
        if !matches!(self.phase, Phase::Files) || self.conflict.is_some() {
            return;
        }
        let Some(b) = self.body.as_mut() else {
            return;
        };
        if self.reader.buffered() > 0 || self.conn.readable() > 0 {
            return;
        }
        if let Err(e) = b.inc.lend(&mut self.conn) {
            self.fatal(store, e.0);
        }
    }

    /// A file's piece waits for room in its writer's queue: the stream is left unread (the
    /// receive window closes) until the disk catches up.
    fn waiting_for_disk(&self) -> bool {
        self.body.as_ref().is_some_and(|b| b.inc.waiting_for_disk())
    }

    /// In a file's body, with nothing of the stream buffered here: read its bytes from the
    /// connection straight into the piece the writer takes next (one copy fewer than through
    /// `buf`; the copies were the largest user-space cost of a fast transfer, bench/README.md).
    /// `None` when the next bytes are not file bytes (a message, or the digest after them).
    fn read_file_bytes(&mut self, store: &mut Store) -> Option<usize> {
        let b = self.body.as_mut()?;
        if self.reader.buffered() > 0 || b.inc.remaining() == 0 {
            return None;
        }
        let conn = &mut self.conn;
        match b.inc.write_with(usize::MAX, |spare| conn.read(spare)) {
            Ok(n) => Some(n),
            Err(e) => {
                // The phase is now over: the caller drains what else arrives.
                self.fatal(store, e.0);
                Some(0)
            }
        }
    }

    fn feed(&mut self, opts: &RecvOptions, store: &mut Store, mut input: &[u8]) {
        loop {
            if matches!(self.phase, Phase::Over) || self.conflict.is_some() {
                if !input.is_empty() {
                    self.reader.push(input);
                }
                return;
            }
            if self.body.is_some() {
                if self.reader.buffered() > 0 {
                    let raw = self.reader.take_raw(self.body_need());
                    self.body_bytes(store, &raw);
                    continue;
                }
                if input.is_empty() {
                    return;
                }
                let n = self.body_need().min(input.len());
                self.body_bytes(store, &input[..n]);
                input = &input[n..];
                continue;
            }
            if !input.is_empty() {
                self.reader.push(input);
                input = &[];
            }
            match self.reader.next_message() {
                Ok(Some(m)) => self.handle(opts, store, m),
                Ok(None) => return,
                Err(e) => {
                    // A sender of another protocol version is a transfer that was meant: it
                    // counts for `recv -n` like one that spoke this version.
                    self.report.genuine |= matches!(e, FramingError::Version(_));
                    return self.fatal(store, format!("bad message from the sender: {e}"));
                }
            }
        }
    }

    fn body_need(&self) -> usize {
        let b = self.body.as_ref().expect("in a body");
        let data = b.inc.remaining().min(usize::MAX as u64) as usize;
        data.saturating_add(DIGEST_LEN - b.digest.len())
    }

    fn body_bytes(&mut self, store: &mut Store, mut data: &[u8]) {
        let b = self.body.as_mut().expect("in a body");
        let n = (b.inc.remaining() as usize).min(data.len());
        if n > 0 {
            if let Err(e) = b.inc.write(&data[..n]) {
                return self.fatal(store, e.0);
            }
            data = &data[n..];
        }
        let t = (DIGEST_LEN - b.digest.len()).min(data.len());
        b.digest.extend_from_slice(&data[..t]);
        if b.inc.remaining() == 0 && b.digest.len() == DIGEST_LEN {
            let Body { inc, digest } = self.body.take().expect("in a body");
            let theirs: [u8; DIGEST_LEN] = digest.try_into().expect("32");
            let (path, bytes, resumed) = (
                inc.entry.path.clone(),
                inc.written - inc.resumed,
                inc.resumed,
            );
            let (id, tag) = (
                self.current_id,
                (self.report.peer, self.serial, self.current_id),
            );
            match inc.finish_queued(store, &theirs, tag) {
                Some(result) => self.verdict(id, path, bytes, resumed, result),
                None => {
                    self.placing.insert(id, (path, bytes, resumed));
                }
            }
        }
    }

    /// Entry `id`'s verdict: to the sender (unless the session is over) and the report.
    fn verdict(
        &mut self,
        id: u32,
        path: String,
        bytes: u64,
        resumed: u64,
        result: Result<[u8; DIGEST_LEN], String>,
    ) {
        if !matches!(self.phase, Phase::Over) {
            self.send(Message::Done {
                id,
                result: result.clone(),
            });
        }
        self.report.files.push(FileOutcome {
            path,
            bytes,
            resumed,
            result: result.map(|d| crate::framing::hex(&d)),
        });
    }

    /// The placing threads' verdict on entry `id` (see [`Store::placed`]).
    fn placed(&mut self, store: &mut Store, id: u32, result: Result<[u8; DIGEST_LEN], String>) {
        if let Some((path, bytes, resumed)) = self.placing.remove(&id) {
            self.verdict(id, path, bytes, resumed, result);
        }
        self.try_end(store);
    }

    /// END arrived and every file has its verdict: directories get their modes, BYE goes.
    fn try_end(&mut self, store: &mut Store) {
        if !self.ending || !self.placing.is_empty() || matches!(self.phase, Phase::Over) {
            return;
        }
        self.suspend_all(store);
        // Directories last, deepest first: their modes may forbid writing into them.
        for e in self.entries.iter().rev() {
            if matches!(e.kind, Kind::Dir) {
                store.finish_dir(e);
            }
        }
        self.send(Message::Bye);
        self.phase = Phase::Over;
    }

    /// The plan for entry `id` is made: tell the sender, keep the part file.
    fn planned_entry(&mut self, id: u32, e: Entry, action: Action, planned: Option<Box<Planned>>) {
        match &action {
            Action::Skip(why) => self.report.skipped.push((e.path.clone(), why.clone())),
            Action::Refuse(why) => self.report.refused.push((e.path.clone(), why.clone())),
            Action::Send { .. } => {}
        }
        if let Some(p) = planned {
            self.planned.insert(id, *p);
        }
        self.entries.push(e);
        self.send(Message::Plan { id, action });
    }

    /// Plan the entry that waits for its part file again: it is free, or (after
    /// [`BUSY_WAIT`]) refused as busy. Returns whether the session goes on.
    fn retry_conflict(&mut self, store: &mut Store) -> bool {
        let Some(c) = self.conflict.take() else {
            return true;
        };
        match store.plan_for(&c.entry, &self.sender, self.resume, self.report.peer) {
            Plan::Ready(action, planned) => self.planned_entry(c.id, c.entry, action, planned),
            Plan::Busy(_) if c.since.elapsed() >= BUSY_WAIT => {
                let why = busy_reason(&c.entry.path);
                self.planned_entry(c.id, c.entry, Action::Refuse(why), None)
            }
            Plan::Busy(holder) => {
                let mut c = Conflict { holder, ..c };
                if c.kept_alive.elapsed() >= KEEPALIVE_WAITING {
                    self.send(Message::Keepalive);
                    self.flush_out();
                    c.kept_alive = Instant::now();
                }
                self.conflict = Some(c);
                return false;
            }
        }
        true
    }

    fn handle(&mut self, opts: &RecvOptions, store: &mut Store, m: Message) {
        match (&self.phase, m) {
            (Phase::Hello, Message::Hello { resume, entries }) => {
                self.resume = resume;
                self.report.genuine = true;
                self.phase = Phase::Manifest { announced: entries };
                if let Some(key) = self.conn.peer_key() {
                    // Part files belong to the sender's identity (its key, or the name the
                    // receiver was given for it), so a sender that reconnects from another
                    // address, or over ssh with another one-time key, resumes them.
                    self.sender = match &opts.sender_name {
                        Some(name) => format!("name:{name}"),
                        None => longhaul_proto::secure::hex(&key),
                    };
                    self.report.sender_key = Some(key);
                }
            }
            (Phase::Manifest { announced }, Message::Entry(e)) => {
                let id = self.entries.len() as u32;
                if id as u64 >= *announced {
                    return self.fatal(
                        store,
                        format!("the sender announced {announced} entries and sent more"),
                    );
                }
                if e.size() > opts.max_size {
                    let why = format!(
                        "{} is {} bytes; this receiver takes at most {}",
                        Printable::from(e.path.as_str()),
                        e.size(),
                        opts.max_size
                    );
                    self.planned_entry(id, e, Action::Refuse(why), None);
                } else {
                    match store.plan_for(&e, &self.sender, self.resume, self.report.peer) {
                        Plan::Ready(action, planned) => self.planned_entry(id, e, action, planned),
                        Plan::Busy(holder) => {
                            self.conflict = Some(Conflict {
                                id,
                                entry: e,
                                since: Instant::now(),
                                kept_alive: Instant::now(),
                                holder,
                            })
                        }
                    }
                }
            }
            (Phase::Manifest { announced }, Message::ManifestEnd) => {
                if self.entries.len() as u64 != *announced {
                    let why = format!(
                        "the sender announced {announced} entries and sent {}",
                        self.entries.len()
                    );
                    return self.fatal(store, why);
                }
                self.send(Message::PlanEnd);
                self.phase = Phase::Files;
            }
            (Phase::Files, Message::File { id, from_chunk }) => {
                let Some(planned) = self.planned.remove(&id) else {
                    return self.fatal(
                        store,
                        format!("the sender sent entry {id}, which the plan did not ask for"),
                    );
                };
                let key = planned.key().to_string();
                match planned.begin(from_chunk) {
                    Ok(inc) => {
                        self.current_id = id;
                        self.body = Some(Body {
                            inc,
                            digest: Vec::with_capacity(DIGEST_LEN),
                        });
                    }
                    Err(e) => {
                        store.release(&key);
                        self.fatal(store, e.0)
                    }
                }
            }
            (_, Message::Keepalive) => {}
            (Phase::Files, Message::End) if !self.ending => {
                self.ending = true;
                self.try_end(store);
            }
            (_, m) => {
                let why = format!("unexpected message from the sender: {m:?}");
                self.fatal(store, why)
            }
        }
    }
}

/// A receiver: one UDP socket that serves any number of senders into one directory.
pub struct Receiver {
    port: UdpPort,
    local: SocketAddr,
    options: RecvOptions,
    store: Store,
    sessions: HashMap<SocketAddr, Session>,
    tokens: Tokens,
    clock: Clock,
    /// Datagrams without a session since the last session's report.
    without_session: u64,
    /// Receive coalescing is off while a service session is served.
    uncoalesced: bool,
}

impl Receiver {
    /// Binds `port` on `ip`, or without one on every IPv6 and IPv4 address (IPv4 alone on a
    /// host without IPv6), and opens the receiving directory.
    pub fn bind_port(
        ip: Option<std::net::IpAddr>,
        port: u16,
        options: RecvOptions,
    ) -> Result<Receiver, NetError> {
        let any6 = SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, port));
        let any4 = SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, port));
        match ip {
            Some(ip) => Receiver::bind(SocketAddr::new(ip, port), options),
            None => {
                Receiver::bind(any6, options.clone()).or_else(|_| Receiver::bind(any4, options))
            }
        }
    }

    /// Binds `addr` and opens the receiving directory (its staging directory is created if
    /// missing).
    pub fn bind(addr: SocketAddr, options: RecvOptions) -> Result<Receiver, NetError> {
        if !options.discard && !options.dir.is_dir() {
            return Err(NetError::NotADirectory(options.dir.display().to_string()));
        }
        options.config.validate()?;
        let store = if options.discard {
            Store::discarding()
        } else {
            Store::open(&options.dir, options.overwrite)
                .map_err(|e| NetError::File(options.dir.display().to_string(), e))?
        };
        let max_datagram = options.config.max_datagram_size();
        let mut port =
            UdpPort::bind(addr, max_datagram, options.offload).map_err(NetError::Socket)?;
        if options
            .recv_thread
            .unwrap_or_else(crate::io_threads_by_default)
        {
            port.start_recv_thread().map_err(NetError::Socket)?;
        }
        let local = port.socket().local_addr().map_err(NetError::Socket)?;
        Ok(Receiver {
            port,
            local,
            options,
            store,
            sessions: HashMap::new(),
            tokens: Tokens::new(),
            clock: Clock::start(),
            without_session: 0,
            uncoalesced: false,
        })
    }

    /// The address the socket is bound to.
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

    /// Whether a receiving thread reads the socket and opens datagrams.
    pub fn has_recv_thread(&self) -> bool {
        self.port.openers().is_some()
    }

    /// The receiving directory (`/dev/null` when discarding).
    pub fn dir(&self) -> &Path {
        self.store.root()
    }

    /// Serve until `stop` is set, or after `limit` genuine sessions (senders that spoke the
    /// transfer protocol) have ended; `event` hears of each file and each session.
    pub fn serve(
        &mut self,
        stop: &AtomicBool,
        limit: Option<usize>,
        mut event: impl FnMut(Event),
    ) -> Result<usize, NetError> {
        let mut inbuf = vec![0u8; 65_536];
        let mut app = vec![0u8; 1 << 20];
        let mut ended = 0;
        let openers = self.port.openers().cloned();
        while !stop.load(Ordering::Relaxed) && limit.is_none_or(|l| ended < l) {
            let more = self.receive(&mut inbuf)?;
            let now = self.clock.now();
            // The receiving thread has more read: take it after this turn, without sleeping.
            let mut deadline: Option<Time> = more.then_some(now);
            for ((peer, serial, id), result) in self.store.placed() {
                if let Some(s) = self.sessions.get_mut(&peer).filter(|s| s.serial == serial) {
                    s.placed(&mut self.store, id, result);
                }
            }
            // Nothing tells this thread when a file is placed: look again soon.
            if self.store.placing() > 0 {
                deadline = Some(deadline.map_or(now + PLACE_RETRY, |d| d.min(now + PLACE_RETRY)));
            }
            let mut closed = Vec::new();
            let mut waiting = Vec::new();
            for (peer, s) in self.sessions.iter_mut() {
                if s.conn.poll_timeout().is_some_and(|t| t <= now) {
                    s.conn.handle_timeout(now);
                }
                s.advance(&self.options, &mut self.store, &mut app);
                // A service's client may time datagrams (a probe's trains): while one is
                // served, each datagram is read with its own arrival stamp, none coalesced.
                if s.is_service() && !self.uncoalesced {
                    self.port.set_receive_coalescing(false);
                    self.uncoalesced = true;
                }
                // The receiving thread opens with the keys of the moment.
                if let Some(table) = &openers {
                    let epoch = s.conn.opener_epoch();
                    if epoch != s.published_epoch {
                        if let Some(o) = s.conn.opener() {
                            table.publish(*peer, o);
                        }
                        s.published_epoch = epoch;
                    }
                }
                if let Some(c) = &s.conflict {
                    waiting.push((*peer, s.sender.clone(), c.holder));
                }
                for f in &s.report.files[s.reported..] {
                    event(Event::File(*peer, f));
                }
                s.reported = s.report.files.len();
                // Unconnected socket: a full buffer is a local drop, other errors are the
                // peer's (an ICMP error for one sender must not stop the others).
                let _ = self.port.flush(Some(*peer), &mut s.conn, now);
                // The sender closes after reading BYE or FATAL; a vanished one times out.
                let over =
                    matches!(s.phase, Phase::Over) && s.out.is_empty() && s.conn.is_send_complete();
                // A handshake abandoned half-way holds a slot until it expires.
                let abandoned = !s.past_handshake()
                    && s.last_heard.elapsed() > self.options.limits.handshake_timeout;
                if abandoned && s.report.error.is_none() {
                    s.report.error = Some(format!(
                        "the handshake did not finish within {} s",
                        self.options.limits.handshake_timeout.as_secs_f64()
                    ));
                }
                if s.conn.is_closed() || over || abandoned {
                    closed.push(*peer);
                }
                // Nothing tells this thread when the writer takes a piece: look again soon.
                let disk = s.waiting_for_disk().then(|| now + DISK_RETRY);
                deadline = [deadline, s.conn.poll_timeout(), disk]
                    .into_iter()
                    .flatten()
                    .min();
            }
            // A session of the same sender that holds a part file another one asks for, and
            // that has been silent for STALE_AFTER, is from a process that died or a path that
            // went down: the newer session takes its part files over. A live one keeps them.
            for (peer, sender, holder) in &waiting {
                let Some(other) = holder.filter(|h| h != peer && !closed.contains(h)) else {
                    continue;
                };
                if let Some(s) = self.sessions.get_mut(&other) {
                    let silent = s.last_heard.elapsed();
                    if s.sender == *sender && silent >= STALE_AFTER {
                        s.report.error = Some(format!(
                            "replaced by a newer session of the same sender, from {peer}, \
                             which asked for a file this one held (nothing was heard from this \
                             one for {:.0} s)",
                            silent.as_secs_f64()
                        ));
                        s.conn.close();
                        let _ = self.port.flush(Some(other), &mut s.conn, now);
                        closed.push(other);
                    }
                }
            }
            for peer in closed {
                let mut s = self.sessions.remove(&peer).expect("listed");
                if let Some(table) = &openers {
                    table.remove(&peer);
                }
                s.suspend_all(&mut self.store);
                if let Whose::Service(g) = &s.whose {
                    s.report.service = Some(g.summary());
                    // A client of the service ends by closing the connection.
                    let by_peer = s.conn.close_reason().is_some_and(|r| r.by_peer);
                    if !by_peer && s.report.error.is_none() {
                        s.report.error = Some(s.end_reason());
                    }
                } else if !matches!(s.phase, Phase::Over) && s.report.error.is_none() {
                    s.report.error = Some(s.end_reason());
                }
                s.report.duration = s.started.elapsed();
                s.report.stats = s.conn.stats();
                if s.report.genuine {
                    s.report.without_session = std::mem::take(&mut self.without_session);
                }
                // What the receiver serves: transfers, or else the service's sessions.
                let served = if self.options.transfers {
                    s.report.genuine
                } else {
                    s.report.service.is_some()
                };
                if served {
                    ended += 1;
                }
                event(Event::Session(&s.report));
            }
            if self.uncoalesced && !self.sessions.values().any(Session::is_service) {
                self.port.set_receive_coalescing(true);
                self.uncoalesced = false;
            }
            for (peer, _, _) in waiting {
                if let Some(s) = self.sessions.get_mut(&peer) {
                    // Go on at once with what the session already holds, or look again soon.
                    let next = if s.retry_conflict(&mut self.store) {
                        now
                    } else {
                        now + BUSY_RETRY
                    };
                    deadline = Some(deadline.map_or(next, |d| d.min(next)));
                }
            }
            let deadline = deadline.map(|t| self.clock.instant(t));
            // Wake at least every 100 ms to look at `stop`.
            let tick = Instant::now() + Duration::from_millis(100);
            self.port
                .wait(socket::earliest(deadline, Some(tick)))
                .map_err(NetError::Socket)?;
        }
        for (peer, mut s) in self.sessions.drain() {
            s.suspend_all(&mut self.store);
            if let Some(table) = &openers {
                table.remove(&peer);
            }
        }
        Ok(ended)
    }

    /// Read what arrived (or take what the receiving thread read) and hand it to the
    /// sessions; returns whether the receiving thread may have more waiting.
    fn receive(&mut self, inbuf: &mut [u8]) -> Result<bool, NetError> {
        let mut door = Door {
            sessions: &mut self.sessions,
            options: &self.options,
            tokens: &self.tokens,
            store: &mut self.store,
            secure: self.options.config.security.is_on(),
            replies: Vec::new(),
            openers: self.port.openers().cloned(),
            without_session: &mut self.without_session,
        };
        let clock = &self.clock;
        let mut more = false;
        let result = if self.port.openers().is_some() {
            self.port
                .receive_batch(clock, |from, d, at, attempt| match attempt {
                    OpenAttempt::Pass => door.datagram(from, d, at),
                    OpenAttempt::Opened(o) => {
                        if let Some(s) = door.sessions.get_mut(&from) {
                            if s.conn
                                .handle_opened(at.now, at.stamped, o, d, false)
                                .is_ok()
                            {
                                s.last_heard = Instant::now();
                            }
                        }
                    }
                    OpenAttempt::Failed => {
                        if let Some(s) = door.sessions.get_mut(&from) {
                            s.conn.handle_open_failed();
                        }
                    }
                })
                .map(|taken| more = taken)
        } else {
            self.port
                .receive(inbuf, clock, |from, d, at| door.datagram(from, d, at))
        };
        let replies = std::mem::take(&mut door.replies);
        for (to, reply) in replies {
            let _ = self.port.socket().send_to(&reply, to);
        }
        match result {
            Ok(()) => Ok(more),
            // An ICMP error for an unconnected socket names no peer we could act on.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Ok(false),
            Err(e) => Err(NetError::Socket(e)),
        }
    }
}

/// Where a datagram not already opened goes: to its session, or, for an INIT (a plain
/// handshake without security), through admission to a new one.
struct Door<'a> {
    sessions: &'a mut HashMap<SocketAddr, Session>,
    options: &'a RecvOptions,
    tokens: &'a Tokens,
    store: &'a mut Store,
    secure: bool,
    /// Datagrams to send once the reading is done: RETRYs, and the service's answers.
    replies: Vec<(SocketAddr, Vec<u8>)>,
    /// The receiving thread's table of keys, which must forget an evicted session.
    openers: Option<Arc<Openers>>,
    /// Datagrams without a session that opened none (see [`Received::without_session`]).
    without_session: &'a mut u64,
}

impl Door<'_> {
    fn datagram(&mut self, from: SocketAddr, d: &[u8], at: Arrival) {
        let (sessions, options, tokens, secure) =
            (&mut *self.sessions, self.options, self.tokens, self.secure);
        // The service's own datagrams go to its sessions, never to a connection.
        if options.service.as_ref().is_some_and(|s| s.owns(d)) {
            if let Some(Whose::Service(g)) = sessions.get_mut(&from).map(|s| &mut s.whose) {
                if let Some(reply) = g.datagram(d, at.stamped) {
                    self.replies.push((from, reply));
                }
            }
            return;
        }
        // ACK delays count from the datagram's own arrival (see `socket`).
        let now = at.now;
        if let Some(s) = sessions.get_mut(&from) {
            if s.conn.handle_packet_at(now, at.stamped, d, false).is_ok() {
                s.last_heard = Instant::now();
            }
            return;
        }
        // Only an INIT (or, without security, a plain handshake) may open a session.
        let slots: Vec<Slot> = sessions
            .iter()
            .map(|(p, s)| Slot {
                peer: *p,
                established: s.past_handshake(),
                idle: s.last_heard.elapsed(),
            })
            .collect();
        match admission::at_the_door(&options.limits, tokens, &slots, from, d, secure) {
            Admission::NotAnInit => *self.without_session += 1,
            Admission::Drop => {}
            Admission::Retry(retry) => self.replies.push((from, retry)),
            Admission::Admit { evict } => {
                let Ok(mut conn) = Connection::new(options.config.clone(), Side::Server, now)
                else {
                    return;
                };
                // Only a valid handshake opens a session: stray datagrams cost no state.
                if conn.handle_packet_at(now, at.stamped, d, false).is_err() || conn.is_closed() {
                    *self.without_session += 1;
                    return;
                }
                if let Some((peer, mut old)) = evict.and_then(|p| sessions.remove_entry(&p)) {
                    old.suspend_all(self.store);
                    if let Some(o) = &self.openers {
                        o.remove(&peer);
                    }
                }
                let undecided = options.service.is_some();
                sessions.insert(from, Session::new(conn, from, undecided));
            }
        }
    }
}
