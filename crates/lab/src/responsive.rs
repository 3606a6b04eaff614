//! Responsive cross traffic on real hosts: each responsive `[[cross_traffic]]` entry's transfers
//! (web transfers, or an on/off source's on periods) are kernel TCP connections from namespace a
//! to a receiver of the entry's own in namespace b, across the emulated bottleneck, in the data
//! direction as the flows go.
//!
//! The schedule is the simulator's: `LabCross::schedule` draws each transfer's start and size
//! from the same `longhaul_path::cross` source and seed (`longhaul_sim::engine::cross_seed`), and
//! a scheduler thread per entry begins each transfer at the experiment's time 0 plus its start,
//! on a thread of its own, so transfers overlap freely: one still running when the next begins
//! runs beside it. Each socket selects the entry's congestion control (`TCP_CONGESTION`, before
//! connecting, as perf's clients do). A transfer writes its bytes, closes its sending side and
//! is complete when the receiver, having read everything, closes too.
//!
//! At the run's end (time 0 + the duration; no transfer begins at or after the entry's `stop`)
//! every transfer still running counts the bytes its receiver had acknowledged
//! (`tcpi_bytes_acked`), as the simulator counts what a transfer still running at its end had
//! delivered, and is reset (`SO_LINGER` 0: its unsent data is discarded, nothing more reaches
//! the bottleneck). Blocked calls are woken by shutting their sockets down, then every thread is
//! joined: senders, receivers, schedulers. Dropping a [`ResponsiveTraffic`] (an error, an
//! interruption) does the same at once.
//!
//! Threads inherit the network namespace and CPU affinity of the thread that spawns them, so the
//! transfer threads, spawned by a scheduler in namespace a, open their sockets there.

use crate::error::LabError;
use crate::plan::LabCross;
use longhaul_emu::sys::netns;
use longhaul_perf::perf::socket::set_congestion;
use longhaul_perf::perf::tcp_info::tcp_stats;
use socket2::{Domain, Protocol, Socket, Type};
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What one responsive entry's transfers did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrossRun {
    /// Transfers begun.
    pub transfers: u64,
    /// Transfers whose receiver got every byte before the run's end.
    pub completed: u64,
    /// Payload bytes delivered: all of each completed transfer's, and what the receiver had
    /// acknowledged of each one still running at the end.
    pub bytes_delivered: u64,
    /// The name the transfers' sockets selected (`lab<pid>_<k>` for eBPF ones).
    pub registered_cc: String,
}

/// What every transfer writes (the receiver discards it).
static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];
/// How long a blocked read or write waits before looking whether the run has ended (the end
/// also wakes it at once by shutting its socket down).
const WAKE: Duration = Duration::from_secs(1);
/// How often a receiver looks whether it must stop while no connection arrives.
const ACCEPT_POLL_MS: i32 = 50;
/// Stack of this module's threads.
const STACK: usize = 256 * 1024;
/// Prefix of this module's threads' names (`/proc/self/task/*/comm`: `lhx-send`, `lhx-recv`,
/// `lhx-sched`, `lhx-accept`), so that a test can see that none is left after a run.
pub const THREAD_PREFIX: &str = "lhx-";

fn spawn<T: Send + 'static>(
    role: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<JoinHandle<T>> {
    std::thread::Builder::new()
        .name(format!("{THREAD_PREFIX}{role}"))
        .stack_size(STACK)
        .spawn(f)
}

/// A flag that can be waited on until a deadline.
#[derive(Default)]
struct Stop {
    set: Mutex<bool>,
    changed: Condvar,
}

impl Stop {
    fn set(&self) {
        *lock(&self.set) = true;
        self.changed.notify_all();
    }

    fn is_set(&self) -> bool {
        *lock(&self.set)
    }

    /// Waits until `deadline` or until set; whether it was set.
    fn wait_until(&self, deadline: Instant) -> bool {
        let mut set = lock(&self.set);
        loop {
            if *set {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            set = self
                .changed
                .wait_timeout(set, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The running transfers of one entry and what the finished ones delivered.
#[derive(Default)]
struct Senders {
    /// Set at the run's end: the transfers still running have been counted and reset.
    ended: bool,
    /// Each running transfer's socket (a second descriptor of it) and size, by number.
    open: HashMap<u64, (Socket, u64)>,
    completed: u64,
    delivered: u64,
}

/// One entry's state, shared by its scheduler, transfers and receiver.
#[derive(Default)]
struct Entry {
    senders: Mutex<Senders>,
    /// Each open receiving connection (a second descriptor of it), by number.
    receiving: Mutex<HashMap<u64, TcpStream>>,
    /// The first thing that went wrong.
    error: Mutex<Option<String>>,
}

impl Entry {
    fn fail(&self, message: String) {
        lock(&self.error).get_or_insert(message);
    }

    fn ended(&self) -> bool {
        lock(&self.senders).ended
    }

    /// Counts every running transfer's acknowledged bytes and resets it.
    fn end(&self) {
        let mut s = lock(&self.senders);
        s.ended = true;
        for (_, (sock, bytes)) in std::mem::take(&mut s.open) {
            let acked = tcp_stats(&sock).map_or(0, |t| t.bytes_acked);
            s.delivered += acked.min(bytes);
            let _ = sock.set_linger(Some(Duration::ZERO));
            let _ = sock.shutdown(Shutdown::Both);
        }
    }
}

/// Every responsive entry's receiver, scheduler and transfers.
pub struct ResponsiveTraffic {
    entries: Vec<(LabCross, Arc<Entry>)>,
    /// Ends the schedules at once (an interruption).
    senders_stop: Arc<Stop>,
    /// Stops the receivers once the senders are done.
    receivers_stop: Arc<Stop>,
    receivers: Vec<JoinHandle<()>>,
    /// Each entry's scheduler (none if it could not start); it returns the transfers it began.
    schedulers: Vec<Option<JoinHandle<u64>>>,
    registered: Vec<String>,
}

impl ResponsiveTraffic {
    /// Binds each entry's receiver on `addr_b` in namespace `ns_b` and starts accepting;
    /// `confine` pins a thread to the hosts' CPUs.
    pub fn listen(
        entries: &[LabCross],
        ns_b: &str,
        addr_b: IpAddr,
        confine: impl Fn() + Clone + Send + 'static,
    ) -> Result<ResponsiveTraffic, LabError> {
        let mut me = ResponsiveTraffic {
            entries: Vec::new(),
            senders_stop: Arc::default(),
            receivers_stop: Arc::default(),
            receivers: Vec::new(),
            schedulers: Vec::new(),
            registered: Vec::new(),
        };
        for c in entries {
            let entry = Arc::new(Entry::default());
            let addr = SocketAddr::new(addr_b, c.port);
            let (tx, rx) = mpsc::channel();
            let (ns, stop, e) = (ns_b.to_string(), me.receivers_stop.clone(), entry.clone());
            let confine = confine.clone();
            let accepting = spawn("accept", move || {
                confine();
                let bound = netns::enter(&ns)
                    .map_err(|e| e.to_string())
                    .and_then(|_| TcpListener::bind(addr).map_err(|e| format!("{addr}: {e}")))
                    .and_then(|l| {
                        l.set_nonblocking(true).map_err(|e| e.to_string())?;
                        Ok(l)
                    });
                match bound {
                    Ok(l) => {
                        let _ = tx.send(Ok(()));
                        receive(l, &e, &stop);
                    }
                    Err(m) => {
                        let _ = tx.send(Err(m));
                    }
                }
            });
            accepting
                .map_err(|e| e.to_string())
                .and_then(|h| {
                    me.receivers.push(h);
                    rx.recv().map_err(|e| e.to_string())
                })
                .and_then(|r| r)
                .map_err(|message| LabError::Setup {
                    what: format!("the receiver of cross_traffic[{}]", c.index),
                    message,
                })?;
            me.entries.push((c.clone(), entry));
        }
        Ok(me)
    }

    /// Starts each entry's schedule from namespace `ns_a`: its transfers begin at `epoch` plus
    /// their start times, and all end at `epoch + duration`. `registered[k]` is the congestion
    /// control entry k's sockets select.
    pub fn start(
        &mut self,
        ns_a: &str,
        addr_b: IpAddr,
        epoch: Instant,
        duration: Duration,
        registered: &[String],
        confine: impl Fn() + Clone + Send + 'static,
    ) {
        self.registered = registered.to_vec();
        let end = epoch + duration;
        for (k, (c, entry)) in self.entries.iter().enumerate() {
            let (c, stop) = (c.clone(), self.senders_stop.clone());
            let (ns, cc) = (ns_a.to_string(), registered[k].clone());
            let confine = confine.clone();
            let shared = entry.clone();
            let scheduling = spawn("sched", move || {
                confine();
                if let Err(e) = netns::enter(&ns) {
                    shared.fail(e.to_string());
                    return 0;
                }
                let to = SocketAddr::new(addr_b, c.port);
                schedule(&c, &shared, &stop, to, &cc, epoch, end)
            });
            if let Err(e) = &scheduling {
                entry.fail(format!("starting its schedule: {e}"));
            }
            self.schedulers.push(scheduling.ok());
        }
    }

    /// Whether every schedule has reached its end (it ends at the run's end).
    pub fn is_finished(&self) -> bool {
        self.schedulers.iter().flatten().all(|t| t.is_finished())
    }

    /// Waits for every schedule's end, stops the receivers and returns what each entry's
    /// transfers did, in entry order; or the first thing that went wrong.
    pub fn finish(mut self) -> Result<Vec<CrossRun>, LabError> {
        let begun = self.join();
        let mut runs = Vec::new();
        for (k, (c, entry)) in self.entries.iter().enumerate() {
            if let Some(message) = lock(&entry.error).take() {
                return Err(LabError::Setup {
                    what: format!("responsive cross traffic cross_traffic[{}]", c.index),
                    message,
                });
            }
            let s = lock(&entry.senders);
            runs.push(CrossRun {
                transfers: begun.get(k).copied().unwrap_or(0),
                completed: s.completed,
                bytes_delivered: s.delivered,
                registered_cc: self.registered.get(k).cloned().unwrap_or_default(),
            });
        }
        Ok(runs)
    }

    /// Waits for the schedules (each ends at the run's end, or at once when `senders_stop` is
    /// set), then stops the receivers; joins every thread. Returns the transfers each entry's
    /// scheduler began.
    fn join(&mut self) -> Vec<u64> {
        let begun = self
            .schedulers
            .drain(..)
            .map(|t| t.map_or(0, |t| t.join().unwrap_or(0)))
            .collect();
        self.receivers_stop.set();
        for t in self.receivers.drain(..) {
            let _ = t.join();
        }
        begun
    }
}

impl Drop for ResponsiveTraffic {
    /// Cut short (an error or an interruption): every transfer ends now.
    fn drop(&mut self) {
        self.senders_stop.set();
        self.join();
    }
}

/// One entry's schedule: begins each transfer at its time until the entry's stop, then waits
/// for the run's `end` (or `stop`) and ends the transfers still running. Returns the number
/// begun.
fn schedule(
    c: &LabCross,
    entry: &Arc<Entry>,
    stop: &Stop,
    to: SocketAddr,
    cc: &str,
    epoch: Instant,
    end: Instant,
) -> u64 {
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    let mut begun = 0u64;
    for t in c.schedule() {
        let at = epoch + Duration::from_nanos(t.at_ns);
        if at >= end || stop.wait_until(at) {
            break;
        }
        begun += 1;
        let (shared, cc, n) = (entry.clone(), cc.to_string(), begun);
        let spawned = spawn("send", move || {
            if let Err(e) = transfer(&shared, n, t.bytes, to, &cc) {
                shared.fail(format!("transfer {n} ({} B): {e}", t.bytes));
            }
        });
        match spawned {
            Ok(h) => threads.push(h),
            Err(e) => {
                entry.fail(format!("starting transfer {n}: {e}"));
                break;
            }
        }
        // Join the finished ones as it goes: a long run begins many.
        let (done, running): (Vec<_>, Vec<_>) = threads.into_iter().partition(|h| h.is_finished());
        done.into_iter().for_each(|h| {
            let _ = h.join();
        });
        threads = running;
    }
    stop.wait_until(end);
    entry.end();
    for h in threads {
        let _ = h.join();
    }
    begun
}

/// One transfer: connect, write `bytes`, close the sending side, wait for the receiver to close.
/// An error after the run's end is not one (the end resets the connection).
fn transfer(entry: &Entry, n: u64, bytes: u64, to: SocketAddr, cc: &str) -> Result<(), String> {
    let sock = Socket::new(Domain::for_address(to), Type::STREAM, Some(Protocol::TCP))
        .map_err(|e| e.to_string())?;
    set_congestion(&sock, cc).map_err(|e| e.to_string())?;
    {
        let mut s = lock(&entry.senders);
        if s.ended {
            return Ok(());
        }
        let second = sock.try_clone().map_err(|e| e.to_string())?;
        s.open.insert(n, (second, bytes));
    }
    let sent = send(entry, sock, bytes, to);
    let mut s = lock(&entry.senders);
    if s.ended {
        // The end counted it (and reset it).
        return Ok(());
    }
    s.open.remove(&n);
    sent.map_err(|e| e.to_string())?;
    s.completed += 1;
    s.delivered += bytes;
    Ok(())
}

fn send(entry: &Entry, sock: Socket, bytes: u64, to: SocketAddr) -> std::io::Result<()> {
    sock.connect(&to.into())?;
    let mut stream: TcpStream = sock.into();
    stream.set_write_timeout(Some(WAKE))?;
    stream.set_read_timeout(Some(WAKE))?;
    let waiting = |e: &std::io::Error| {
        matches!(
            e.kind(),
            ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
        )
    };
    let ended = || std::io::Error::new(ErrorKind::ConnectionAborted, "the run ended");
    let mut left = bytes;
    while left > 0 {
        let chunk = left.min(ZEROS.len() as u64) as usize;
        match stream.write(&ZEROS[..chunk]) {
            Ok(k) => left -= k as u64,
            Err(e) if waiting(&e) && !entry.ended() => {}
            Err(e) if waiting(&e) => return Err(ended()),
            Err(e) => return Err(e),
        }
    }
    stream.shutdown(Shutdown::Write)?;
    let mut buf = [0u8; 64];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if waiting(&e) && !entry.ended() => {}
            Err(e) if waiting(&e) => return Err(ended()),
            Err(e) => return Err(e),
        }
    }
}

/// An entry's receiver: accepts each transfer and reads it on a thread of its own until the
/// sender closes; when `stop` is set, shuts every open connection down and joins its thread.
fn receive(listener: TcpListener, entry: &Arc<Entry>, stop: &Stop) {
    let mut readers: Vec<JoinHandle<()>> = Vec::new();
    let mut count = 0u64;
    while !stop.is_set() {
        let mut pfd = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the listener's open descriptor.
        if unsafe { libc::poll(&mut pfd, 1, ACCEPT_POLL_MS) } <= 0 {
            continue;
        }
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                continue
            }
            Err(e) => {
                entry.fail(format!("accepting: {e}"));
                break;
            }
        };
        count += 1;
        let n = count;
        let second = stream
            .set_nonblocking(false)
            .and_then(|_| stream.try_clone());
        match second {
            Ok(s) => {
                lock(&entry.receiving).insert(n, s);
            }
            Err(e) => {
                entry.fail(format!("accepting: {e}"));
                break;
            }
        }
        let e = entry.clone();
        let spawned = spawn("recv", move || {
            read_all(stream);
            lock(&e.receiving).remove(&n);
        });
        match spawned {
            Ok(h) => readers.push(h),
            Err(err) => {
                lock(&entry.receiving).remove(&n);
                entry.fail(format!("reading transfer {n}: {err}"));
                break;
            }
        }
        let (done, open): (Vec<_>, Vec<_>) = readers.into_iter().partition(|h| h.is_finished());
        done.into_iter().for_each(|h| {
            let _ = h.join();
        });
        readers = open;
    }
    for (_, s) in lock(&entry.receiving).drain() {
        let _ = s.shutdown(Shutdown::Both);
    }
    for h in readers {
        let _ = h.join();
    }
}

/// Reads until the sender closes (or the connection is reset or shut down), then closes.
fn read_all(mut stream: TcpStream) {
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}
