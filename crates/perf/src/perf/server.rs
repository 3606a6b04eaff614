//! `longhaul perf server`: accepts tests until stopped; no client can take it down.
//!
//! Each connection gets its own thread, which first reads one frame within the idle timeout:
//! a `Test` makes it the control connection of a new test, a `Data` attaches it to a test
//! by cookie, anything else — garbage, an old version, a silent peer — is logged with its reason
//! and that connection alone is closed. Data connections are read until EOF, with the idle timeout
//! on every read, so a client that vanishes mid-test frees its test.
//!
//! Resources are bounded: at most [`ServerConfig::max_connections`] connections at once (the rest
//! are closed on accept, with a log line), [`protocol::MAX_STREAMS`] streams per test, one
//! 128 KiB read buffer per data connection.

use super::protocol::{self, FrameError, Message, TestParams};
use super::socket;
use socket2::SockRef;
use std::collections::HashMap;
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// A peer that sends nothing for this long is closed.
    pub idle_timeout: Duration,
    /// Most connections (control and data) open at once; one more is closed on accept, with a log
    /// line.
    pub max_connections: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            idle_timeout: Duration::from_secs(10),
            max_connections: 256,
        }
    }
}

/// What the server logs.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerEvent {
    /// The server is listening on this address.
    Listening(SocketAddr),
    /// A test was accepted.
    TestStarted {
        /// The client's control connection address.
        peer: SocketAddr,
        /// What it asked for.
        params: TestParams,
    },
    /// A test finished and its result was sent.
    TestDone {
        /// The client's control connection address.
        peer: SocketAddr,
        /// Bytes received over all streams.
        bytes: u64,
        /// Seconds from `Start` to the last stream's EOF.
        elapsed_s: f64,
    },
    /// A peer was closed; the reason says why.
    Rejected {
        /// The peer's address.
        peer: SocketAddr,
        /// Why it was closed.
        reason: String,
    },
    /// A test ended without a result.
    TestFailed {
        /// The client's control connection address.
        peer: SocketAddr,
        /// Why the test failed.
        reason: String,
    },
}

impl std::fmt::Display for ServerEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerEvent::Listening(a) => write!(f, "Server listening on {a}"),
            ServerEvent::TestStarted { peer, params } => {
                write!(
                f,
                "Accepted test from {peer}: {} stream(s), {:.1} s, cc {}, window {}, write {} B",
                params.streams,
                params.duration_ms as f64 / 1e3,
                params.cc.as_deref().unwrap_or("default"),
                params.window.map_or("default".to_string(), |w| format!("{w} B")),
                params.write_len
            )
            }
            ServerEvent::TestDone {
                peer,
                bytes,
                elapsed_s,
            } => write!(
                f,
                "Test from {peer} done: received {bytes} bytes in {elapsed_s:.2} s = {}",
                longhaul_metrics::units::format_rate(*bytes as f64 * 8.0 / elapsed_s.max(1e-9))
            ),
            ServerEvent::Rejected { peer, reason } => write!(f, "Rejected {peer}: {reason}"),
            ServerEvent::TestFailed { peer, reason } => {
                write!(f, "Test from {peer} failed: {reason}")
            }
        }
    }
}

impl ServerEvent {
    /// The event as the server's log prints it at `now`: the UTC time of day to the
    /// millisecond, then the event (`13:04:05.678Z Server listening on [::]:5201`).
    pub fn log_line(&self, now: SystemTime) -> String {
        let ms = now
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() % 86_400_000)
            .unwrap_or(0);
        let (h, m, s, f) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
        format!("{h:02}:{m:02}:{s:02}.{f:03}Z {self}")
    }
}

type Log = Arc<dyn Fn(ServerEvent) + Send + Sync>;

/// A data connection on its way to its test.
struct Attached {
    stream: u32,
    conn: TcpStream,
}

struct Shared {
    config: ServerConfig,
    log: Log,
    open_tests: Mutex<HashMap<u64, mpsc::Sender<Attached>>>,
    connections: AtomicUsize,
    next_cookie: Mutex<u64>,
}

/// A bound server.
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
}

impl Server {
    /// Bind `port` on `ip`, or without one on every IPv6 and IPv4 address (`[::]`), falling
    /// back to IPv4's (`0.0.0.0`) on a kernel without IPv6. The error names the address.
    pub fn bind_port(
        ip: Option<IpAddr>,
        port: u16,
        config: ServerConfig,
        log: Log,
    ) -> std::io::Result<Server> {
        let named = |addr: SocketAddr| {
            move |e: std::io::Error| {
                std::io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}"))
            }
        };
        let addr = SocketAddr::new(ip.unwrap_or(Ipv6Addr::UNSPECIFIED.into()), port);
        match Server::bind(addr, config.clone(), log.clone()) {
            Err(e) if ip.is_none() && e.raw_os_error() == Some(libc::EAFNOSUPPORT) => {
                let any4 = SocketAddr::from((Ipv4Addr::UNSPECIFIED, port));
                Server::bind(any4, config, log).map_err(named(any4))
            }
            r => r.map_err(named(addr)),
        }
    }

    /// Bind to `addr` (port 0 picks a free port).
    pub fn bind(addr: SocketAddr, config: ServerConfig, log: Log) -> std::io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        // A cookie only has to tell concurrent tests apart; seed it from the clock so that a
        // restarted server does not reuse the previous run's cookies.
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        Ok(Server {
            listener,
            shared: Arc::new(Shared {
                config,
                log,
                open_tests: Mutex::new(HashMap::new()),
                connections: AtomicUsize::new(0),
                next_cookie: Mutex::new(seed | 1),
            }),
        })
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serve until `stop` is set (checked after each accepted connection). Errors of single
    /// connections are logged, never returned.
    pub fn serve(&self, stop: &AtomicBool) -> std::io::Result<()> {
        (self.shared.log)(ServerEvent::Listening(self.local_addr()?));
        for conn in self.listener.incoming() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let conn = match conn {
                Ok(c) => c,
                // Transient accept errors (EMFILE, ECONNABORTED): pause briefly, keep serving.
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            let peer = conn
                .peer_addr()
                .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
            let shared = Arc::clone(&self.shared);
            if shared.connections.fetch_add(1, Ordering::SeqCst) >= shared.config.max_connections {
                shared.connections.fetch_sub(1, Ordering::SeqCst);
                (shared.log)(ServerEvent::Rejected {
                    peer,
                    reason: format!("{} connections open already", shared.config.max_connections),
                });
                continue;
            }
            std::thread::spawn(move || {
                handle(&shared, conn, peer);
                shared.connections.fetch_sub(1, Ordering::SeqCst);
            });
        }
        Ok(())
    }
}

fn handle(shared: &Arc<Shared>, mut conn: TcpStream, peer: SocketAddr) {
    let idle = shared.config.idle_timeout;
    let _ = conn.set_read_timeout(Some(idle));
    let _ = conn.set_write_timeout(Some(idle));
    let reject = |reason: String| (shared.log)(ServerEvent::Rejected { peer, reason });
    match protocol::read_message(&mut conn) {
        Ok(Message::Test(params)) => {
            if let Some(p) = params.problem() {
                let _ = protocol::write_message(&mut conn, &Message::Error { message: p.clone() });
                return reject(p);
            }
            if let Err(reason) = run_test(shared, conn, peer, params) {
                (shared.log)(ServerEvent::TestFailed { peer, reason });
            }
        }
        Ok(Message::Data { cookie, stream }) => {
            let tx = shared
                .open_tests
                .lock()
                .map(|s| s.get(&cookie).cloned())
                .ok()
                .flatten();
            match tx {
                Some(tx) => {
                    let _ = tx.send(Attached { stream, conn });
                }
                None => reject(format!("data connection for unknown test {cookie:#x}")),
            }
        }
        Ok(other) => reject(format!("unexpected first message {other:?}")),
        Err(FrameError::Version(v)) => {
            let message = format!(
                "server speaks protocol version {}, client {v}",
                protocol::VERSION
            );
            let _ = protocol::write_message(
                &mut conn,
                &Message::Error {
                    message: message.clone(),
                },
            );
            reject(message)
        }
        Err(FrameError::Idle) => reject(format!(
            "idle for {:.1} s before saying anything",
            idle.as_secs_f64()
        )),
        Err(e) => reject(e.to_string()),
    }
}

/// Run one test on its control connection; `Err` carries the reason it failed.
fn run_test(
    shared: &Arc<Shared>,
    mut ctrl: TcpStream,
    peer: SocketAddr,
    params: TestParams,
) -> Result<(), String> {
    let idle = shared.config.idle_timeout;
    let cookie = {
        let mut c = shared
            .next_cookie
            .lock()
            .map_err(|_| "internal lock poisoned")?;
        // xorshift64: distinct, non-sequential cookies.
        *c ^= *c << 13;
        *c ^= *c >> 7;
        *c ^= *c << 17;
        *c
    };
    let (tx, rx) = mpsc::channel();
    shared
        .open_tests
        .lock()
        .map_err(|_| "internal lock poisoned")?
        .insert(cookie, tx);
    let result = (|| {
        protocol::write_message(&mut ctrl, &Message::Accept { cookie })
            .map_err(|e| e.to_string())?;
        (shared.log)(ServerEvent::TestStarted {
            peer,
            params: params.clone(),
        });
        let n = params.streams as usize;
        let mut conns: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
        let deadline = Instant::now() + idle;
        for _ in 0..n {
            let left = deadline.saturating_duration_since(Instant::now());
            let a = rx.recv_timeout(left).map_err(|_| {
                format!(
                    "not all {n} data connections arrived within {:.1} s",
                    idle.as_secs_f64()
                )
            })?;
            let slot = conns
                .get_mut(a.stream as usize)
                .ok_or_else(|| format!("data connection for stream {} of {n}", a.stream))?;
            if slot.is_some() {
                return Err(format!("stream {} attached twice", a.stream));
            }
            *slot = Some(a.conn);
        }
        let conns: Vec<TcpStream> = conns.into_iter().flatten().collect();
        for c in &conns {
            let s = SockRef::from(c);
            if let Some(cc) = &params.cc {
                // The receiver's congestion control only governs its (empty) send direction;
                // failing to set it must not fail the test.
                let _ = socket::set_congestion(&s, cc);
            }
            let _ = socket::set_recv_buffer(&s, params.window);
            let _ = c.set_read_timeout(Some(idle));
        }
        protocol::write_message(&mut ctrl, &Message::Start).map_err(|e| e.to_string())?;
        let start = Instant::now();
        // A client may not send past its declared duration by more than the time its send buffers
        // take to drain; past this deadline its streams are closed.
        let deadline = start + Duration::from_millis(params.duration_ms) + 2 * idle + DRAIN_GRACE;
        let readers: Vec<_> = conns
            .into_iter()
            .map(|c| std::thread::spawn(move || drain(c, idle, deadline)))
            .collect();
        let mut bytes = Vec::with_capacity(n);
        for (i, r) in readers.into_iter().enumerate() {
            match r.join() {
                Ok(Ok(b)) => bytes.push(b),
                Ok(Err(e)) => return Err(format!("stream {i}: {e}")),
                Err(_) => return Err(format!("stream {i}: reader thread panicked")),
            }
        }
        let elapsed_s = start.elapsed().as_secs_f64();
        protocol::write_message(
            &mut ctrl,
            &Message::Result {
                bytes: bytes.clone(),
                elapsed_s,
            },
        )
        .map_err(|e| format!("sending the result: {e}"))?;
        (shared.log)(ServerEvent::TestDone {
            peer,
            bytes: bytes.iter().sum(),
            elapsed_s,
        });
        Ok(())
    })();
    if let Ok(mut s) = shared.open_tests.lock() {
        s.remove(&cookie);
    }
    if let Err(reason) = &result {
        let _ = protocol::write_message(
            &mut ctrl,
            &Message::Error {
                message: reason.clone(),
            },
        );
    }
    result
}

/// Extra time after a test's duration (and twice the idle timeout) for send buffers to drain.
pub const DRAIN_GRACE: Duration = Duration::from_secs(30);

/// Read a data connection until EOF. A silent peer (no byte for `idle`) and a peer still sending
/// at `deadline` are errors.
fn drain(mut c: TcpStream, idle: Duration, deadline: Instant) -> Result<u64, String> {
    let mut buf = vec![0u8; 128 * 1024];
    let mut total = 0u64;
    let past = |total: u64| format!("still sending past the declared duration after {total} bytes");
    let mut timeout = idle;
    let _ = c.set_read_timeout(Some(timeout));
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(past(total));
        }
        // Shorten the timeout only near the deadline: one setsockopt, not one per read.
        if left < timeout {
            timeout = left.max(Duration::from_millis(1));
            let _ = c.set_read_timeout(Some(timeout));
        }
        match c.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => total += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if Instant::now() >= deadline {
                    return Err(past(total));
                }
                return Err(format!("idle timeout after {total} bytes"));
            }
            Err(e) => return Err(format!("{e} after {total} bytes")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_carry_the_utc_time_of_day() {
        let addr: SocketAddr = "127.0.0.1:5201".parse().unwrap();
        // 2001-09-09 01:46:40.123 UTC.
        let now = UNIX_EPOCH + Duration::from_millis(1_000_000_000_123);
        assert_eq!(
            ServerEvent::Listening(addr).log_line(now),
            "01:46:40.123Z Server listening on 127.0.0.1:5201"
        );
    }

    #[test]
    fn a_taken_port_is_named_in_the_error() {
        let log: Log = Arc::new(|_| {});
        let s = Server::bind_port(Some([127, 0, 0, 1].into()), 0, ServerConfig::default(), log)
            .unwrap();
        let port = s.listener.local_addr().unwrap().port();
        let log: Log = Arc::new(|_| {});
        let e = Server::bind_port(
            Some([127, 0, 0, 1].into()),
            port,
            ServerConfig::default(),
            log,
        )
        .err()
        .unwrap();
        assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse);
        assert!(
            e.to_string()
                .starts_with(&format!("cannot listen on 127.0.0.1:{port}: ")),
            "{e}"
        );
    }
}
