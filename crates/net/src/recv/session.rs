//! One sender's session of the transfer protocol (or one client's of the service served
//! beside it): the manifest answered entry by entry with a plan, each file's bytes to its part
//! file and its verdict back, a part file another session holds waited for, and what the
//! session reports.

use super::{FileOutcome, Received, RecvOptions, BUSY_WAIT};
use crate::framing::{
    Action, Entry, FramingError, Kind, Message, MessageReader, DIGEST_LEN, MAGIC,
};
use crate::part::{Backlog, Landing};
use crate::path::Printable;
use crate::service::ServiceSession;
use crate::socket::Arrival;
use crate::store::{busy_reason, Incoming, Plan, Planned, Store};
use longhaul_proto::{Connection, OpenedDatagram, PacketError, Stats};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The sender identity under which unauthenticated transfers keep their part files.
const UNAUTHENTICATED: &str = "unauthenticated";

/// How often a session waiting for a busy part file sends the sender a KEEPALIVE, which keeps
/// the sender's idle timeout from ending the connection meanwhile.
const KEEPALIVE_WAITING: Duration = Duration::from_secs(1);

pub(super) enum Phase {
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
pub(super) struct Conflict {
    id: u32,
    entry: Entry,
    since: Instant,
    /// When the last KEEPALIVE went to the sender, which hears nothing else meanwhile.
    kept_alive: Instant,
    /// The session of this receiver that writes the part file (`None`: another process).
    pub(super) holder: Option<SocketAddr>,
}

struct Body {
    inc: Incoming,
    digest: Vec<u8>,
}

/// Whose a session is: undecided until the peer's first stream bytes, when a service is served.
pub(super) enum Whose {
    /// The bytes read so far, too few for the service to tell.
    Undecided(Vec<u8>),
    /// A sender's.
    Transfer,
    /// A client of the service.
    Service(Box<dyn ServiceSession>),
}

pub(super) struct Session {
    pub(super) conn: Connection,
    pub(super) whose: Whose,
    pub(super) sender: String,
    pub(super) started: Instant,
    reader: MessageReader,
    /// Bytes for the peer not yet accepted by the connection.
    pub(super) out: Vec<u8>,
    pub(super) phase: Phase,
    resume: bool,
    entries: Vec<Entry>,
    planned: HashMap<u32, Planned>,
    body: Option<Body>,
    /// The entry whose body is being received.
    current_id: u32,
    pub(super) report: Received,
    /// Files whose outcome was reported to the caller.
    pub(super) reported: usize,
    /// When a datagram from the peer last authenticated (or decoded, without security).
    pub(super) last_heard: Instant,
    /// An entry waits for its part file (see [`Conflict`]); nothing more is read meanwhile.
    pub(super) conflict: Option<Conflict>,
    /// The epoch of the keys last given to the receiving thread (`Connection::opener_epoch`).
    pub(super) published_epoch: Option<u64>,
    /// Tells this session's files from an earlier one's of the same peer address (see
    /// [`crate::store::PlaceTag`]).
    pub(super) serial: u64,
    /// Files being placed (`Store::placed` has their verdicts): path, bytes and resumed bytes.
    placing: HashMap<u32, (String, u64, u64)>,
    /// Files ended in the stream whose last bytes their disk has not written yet (a placing
    /// thread waits for them): they still count against the receive window.
    draining: Vec<Arc<Backlog>>,
    /// END arrived: BYE goes once every file has its verdict.
    ending: bool,
}

/// Sessions started, for [`Session::serial`].
static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Session {
    /// The handshake is done: the connection says so, or the peer already spoke the transfer
    /// protocol (a server whose FINISH was lost learns of the handshake from the data).
    pub(super) fn past_handshake(&self) -> bool {
        self.conn.is_established() || self.report.genuine
    }

    /// Why a session that did not finish its transfer ended, as the connection tells. A
    /// sender refused for its key is named by the key, which the connection learnt.
    pub(super) fn end_reason(&mut self) -> String {
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
    pub(super) fn new(conn: Connection, peer: SocketAddr, undecided: bool) -> Session {
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
                in_place: 0,
                service: None,
            },
            reported: 0,
            last_heard: Instant::now(),
            conflict: None,
            published_epoch: None,
            serial: SESSIONS.fetch_add(1, Ordering::Relaxed),
            placing: HashMap::new(),
            draining: Vec::new(),
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
    pub(super) fn suspend_all(&mut self, store: &mut Store) {
        if let Some(b) = self.body.take() {
            b.inc.suspend(store);
        }
        for (_, p) in self.planned.drain() {
            store.release(p.key());
        }
    }

    /// Whether this is a session of the service.
    pub(super) fn is_service(&self) -> bool {
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
    pub(super) fn advance(&mut self, opts: &RecvOptions, store: &mut Store, buf: &mut [u8]) {
        if !self.decide(opts, store, buf) {
            self.advance_service(buf);
            return;
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
        if matches!(self.phase, Phase::Over) && self.out.is_empty() {
            self.conn.finish();
        }
        if self.conn.is_recv_finished() && !matches!(self.phase, Phase::Over) {
            let why = "the sender ended the stream in the middle of the transfer".to_string();
            self.fatal(store, why);
        }
    }

    /// How many of the stream's next bytes the file being received takes straight from their
    /// packets now: in a file's body with everything that arrived read, what its piece takes;
    /// else 0 (the bytes go through the connection's buffer and `advance`).
    fn take_room(&mut self, store: &mut Store) -> usize {
        if !self.may_take() {
            return 0;
        }
        let b = self.body.as_mut().expect("checked by may_take");
        match b.inc.room() {
            Ok(n) => n,
            Err(e) => {
                self.fatal(store, e.0);
                0
            }
        }
    }

    /// In a file's body, with nothing of the stream buffered here or in the connection: the
    /// file's next bytes may be taken straight from their packets.
    fn may_take(&self) -> bool {
        self.in_files()
            && self.body.is_some()
            && self.reader.buffered() == 0
            && self.conn.readable() == 0
    }

    /// Receiving files, with no part file waiting for another session.
    fn in_files(&self) -> bool {
        matches!(self.phase, Phase::Files) && self.conflict.is_none()
    }

    /// A datagram for this session's connection (opened in place when sealed): the file bytes
    /// it continues the stream with go straight into the piece being filled (one copy).
    pub(super) fn datagram(
        &mut self,
        store: &mut Store,
        at: Arrival,
        d: &mut [u8],
    ) -> Result<(), PacketError> {
        let room = self.take_room(store);
        let taken = self
            .conn
            .handle_datagram(at.now, at.stamped, d, false, room)?;
        self.take(store, &d[taken]);
        self.catch_up(store);
        Ok(())
    }

    /// A datagram the receiving thread opened, as [`Session::datagram`].
    pub(super) fn opened(
        &mut self,
        store: &mut Store,
        at: Arrival,
        o: OpenedDatagram,
        d: &[u8],
    ) -> Result<(), PacketError> {
        let room = self.take_room(store);
        let taken = self
            .conn
            .handle_opened(at.now, at.stamped, o, d, false, room)?;
        self.take(store, &d[taken]);
        self.catch_up(store);
        Ok(())
    }

    /// File bytes a packet brought past the piece's room (it filled, and the rest of the
    /// payload went to the connection's buffer) are read into the next piece at once: while
    /// any are left unread no packet's bytes can be taken (`take_room`), and the rest of the
    /// turn's would go through the buffer too.
    fn catch_up(&mut self, store: &mut Store) {
        if self.conn.readable() > 0 && self.in_files() {
            let _ = self.read_file_bytes(store);
        }
    }

    fn take(&mut self, store: &mut Store, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let b = self.body.as_mut().expect("bytes are taken only in a body");
        if let Err(e) = b.inc.take(bytes) {
            self.fatal(store, e.0);
        }
    }

    /// The piece the file's next bytes go into, taken out to receive the next datagram into,
    /// so that a data packet's payload lies where those bytes go ([`Incoming::land`]); `None`
    /// when it takes nothing now (see `take_room`).
    pub(super) fn land(&mut self, store: &mut Store) -> Option<Landing> {
        if !self.may_take() {
            return None;
        }
        let prefix = self.conn.data_prefix();
        let b = self.body.as_mut()?;
        // `Incoming::land` asks the piece's room itself.
        match b.inc.land(prefix) {
            Ok(landing) => landing,
            Err(e) => {
                self.fatal(store, e.0);
                None
            }
        }
    }

    /// The datagram received into `landing` (its first `n` bytes), handled; the piece goes
    /// back with the payload bytes the connection took, where they lie.
    pub(super) fn landed(
        &mut self,
        store: &mut Store,
        at: Arrival,
        mut landing: Landing,
        n: usize,
    ) -> Result<(), PacketError> {
        let room = landing.room();
        let result =
            self.conn
                .handle_datagram(at.now, at.stamped, &mut landing.area()[..n], false, room);
        let taken = result.as_ref().map_or(0..0, Range::clone);
        self.give_back(store, landing, taken);
        self.catch_up(store);
        result.map(|_| ())
    }

    /// The piece back from [`Session::land`], with `taken` of its landing's area appended.
    pub(super) fn give_back(&mut self, store: &mut Store, landing: Landing, taken: Range<usize>) {
        let b = self.body.as_mut().expect("landed only in a body");
        match b.inc.landed(landing, taken) {
            Ok(n) => self.report.in_place += n as u64,
            Err(e) => self.fatal(store, e.0),
        }
    }

    /// Count the files' bytes queued for their disk against the receive window (see `part`):
    /// the current file's, and those of files ended in the stream but not yet on the disk.
    /// Returns them (as they are written, the window opens).
    pub(super) fn hold_unwritten(&mut self) -> u64 {
        let mut held = self.body.as_ref().map_or(0, |b| b.inc.unwritten());
        self.draining.retain(|b| {
            let n = b.unwritten();
            held += n;
            n > 0
        });
        self.conn.set_held(held);
        held
    }

    /// A file's piece waits for room in its writer's queue: the stream is left unread (the
    /// receive window closes) until the disk catches up.
    pub(super) fn waiting_for_disk(&self) -> bool {
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
            self.draining.extend(inc.backlog());
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
    pub(super) fn placed(
        &mut self,
        store: &mut Store,
        id: u32,
        result: Result<[u8; DIGEST_LEN], String>,
    ) {
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
    pub(super) fn retry_conflict(&mut self, store: &mut Store) -> bool {
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
                match planned.begin(from_chunk, opts.config.recv_window) {
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
