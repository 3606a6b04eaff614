//! `longhaul perf client HOST`: one control connection, `-P` data connections, one writer thread
//! per stream, and the calling thread as reporter.
//!
//! **What is counted.** Writers count the bytes the kernel accepted (`write` returned). Each report
//! interval takes the difference of those counters and a `TCP_INFO` sample of every stream. When
//! the duration is up the writers stop, the client shuts its data connections down and waits for
//! the server's `Result`, which comes only after the server has read every stream to EOF — so every
//! counted byte has been delivered. The last interval ends at that moment (it includes the drain of
//! the send buffers), and the intervals' bytes add up to the total by construction. The server's
//! byte counts must equal the client's, stream by stream, or the test fails.

use super::protocol::{self, Message, TestParams};
use super::socket::{self, BufferSize};
use super::tcp_info::{tcp_stats, TcpStats};
use socket2::{Domain, Protocol, Socket, Type};
use std::io::Write;
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The server's host name or address.
    pub host: String,
    /// The server's control port.
    pub port: u16,
    /// Parallel data connections (`-P`).
    pub streams: u32,
    /// How long the writers write (`-t`).
    pub duration: Duration,
    /// How often a report interval closes (`-i`).
    pub interval: Duration,
    /// Congestion control for the data connections (`-C`; `None`: the host default).
    pub cc: Option<String>,
    /// Socket buffer to request on both ends of each data connection (`-w`), bytes; `None` leaves
    /// the kernel's autotuning on.
    pub window: Option<u64>,
    /// Bytes per write call (`-l`), 1 B to 64 MiB.
    pub write_len: u32,
    /// How long to wait for each connection, and for the server's first answer.
    pub connect_timeout: Duration,
}

/// Why a test could not be run.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The host name did not resolve.
    #[error("cannot resolve `{host}`: {error}")]
    Resolve {
        /// The host as given.
        host: String,
        /// The resolver's error.
        error: std::io::Error,
    },
    /// Nothing listens on the server's port.
    #[error("connection refused by {addr}: is `longhaul perf server` running on {host}:{port}?")]
    Refused {
        /// The address tried.
        addr: SocketAddr,
        /// The host as given.
        host: String,
        /// The port as given.
        port: u16,
    },
    /// A connection could not be made or set up.
    #[error("connecting to {addr}: {error}")]
    Connect {
        /// The address tried.
        addr: SocketAddr,
        /// The socket error.
        error: std::io::Error,
    },
    /// The congestion control cannot be used on this host.
    #[error(transparent)]
    Congestion(#[from] socket::CongestionError),
    /// The server answered with an error.
    #[error("the server refused the test: {0}")]
    Server(String),
    /// The control connection failed or carried something unexpected.
    #[error("control connection: {0}")]
    Protocol(String),
    /// The peer answered, or stayed silent, as no longhaul perf server does.
    #[error("{0}")]
    ForeignPeer(String),
    /// A data connection failed.
    #[error("stream {stream}: {error}")]
    Stream {
        /// The stream's index, from 0.
        stream: u32,
        /// The socket error.
        error: std::io::Error,
    },
    /// The server received other byte counts than the client wrote.
    #[error("stream {stream}: client wrote {sent} bytes, server received {received}")]
    Mismatch {
        /// The stream's index, from 0.
        stream: u32,
        /// Bytes the client wrote.
        sent: u64,
        /// Bytes the server reported.
        received: u64,
    },
    /// The options are out of range (write size, interval, streams, duration, window,
    /// congestion-control name).
    #[error("invalid options: {0}")]
    Invalid(String),
}

/// One stream's numbers over one report interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamSample {
    /// Bytes the kernel accepted from the writer in this interval.
    pub bytes: u64,
    /// Retransmitted segments in this interval.
    pub retransmits: u64,
    /// `TCP_INFO` at the end of the interval.
    pub tcp: TcpStats,
}

/// One report interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    /// Interval start, seconds since the test's start.
    pub start_s: f64,
    /// Interval end, seconds since the test's start.
    pub end_s: f64,
    /// One sample per stream, in stream order.
    pub streams: Vec<StreamSample>,
}

impl Interval {
    /// Bytes of all streams in this interval.
    pub fn bytes(&self) -> u64 {
        self.streams.iter().map(|s| s.bytes).sum()
    }
    /// Retransmitted segments of all streams in this interval.
    pub fn retransmits(&self) -> u64 {
        self.streams.iter().map(|s| s.retransmits).sum()
    }
}

/// What one stream looked like once connected.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamSetup {
    /// The connection's local address.
    pub local: SocketAddr,
    /// The server's address.
    pub remote: SocketAddr,
    /// The congestion control the socket uses, as the kernel reports it.
    pub cc: String,
    /// The send buffer requested and granted.
    pub send_buffer: BufferSize,
}

/// A finished test.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfRun {
    /// The server's host as given.
    pub config_host: String,
    /// The server's control port.
    pub port: u16,
    /// The test as the client asked the server for it.
    pub params: TestParams,
    /// Each stream's setup, in stream order.
    pub streams: Vec<StreamSetup>,
    /// The report intervals, in order; their bytes add up to `bytes`.
    pub intervals: Vec<Interval>,
    /// Bytes each stream wrote (= what the server received).
    pub bytes: Vec<u64>,
    /// Seconds from Start to the server's confirmation that everything arrived.
    pub duration_s: f64,
    /// Seconds the writers wrote (the requested duration, as measured).
    pub send_s: f64,
    /// The server's time from Start to the last EOF.
    pub server_elapsed_s: f64,
    /// `TCP_INFO` of each stream after the drain.
    pub final_tcp: Vec<TcpStats>,
    /// Smoothed RTT of each stream every [`RTT_SAMPLE_PERIOD`] while sending, ms.
    pub rtt_samples_ms: Vec<Vec<f64>>,
}

/// How often the reporter samples each stream's RTT for the queueing-delay statistics.
pub const RTT_SAMPLE_PERIOD: Duration = Duration::from_millis(100);
/// At most this many RTT samples per stream (a day at 10 per second, under 7 MB).
pub const MAX_RTT_SAMPLES: usize = 864_000;

impl PerfRun {
    /// Bytes of all streams.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().sum()
    }
}

/// Called with the streams once connected, then with each interval as it completes.
pub trait Progress {
    /// The streams are connected and the test is about to start.
    fn connected(&mut self, _run: &ClientConfig, _streams: &[StreamSetup]) {}
    /// A report interval has closed.
    fn interval(&mut self, _i: &Interval) {}
}

/// No progress output (`-J`, tests).
pub struct Quiet;
impl Progress for Quiet {}

fn connect(addr: SocketAddr, cfg: &ClientConfig, data: bool) -> Result<Socket, ClientError> {
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP)).map_err(
        |source| ClientError::Connect {
            addr,
            error: source,
        },
    )?;
    if data {
        // Before connect, so the SYN advertises a window scale for the requested buffer.
        if let Some(cc) = &cfg.cc {
            socket::set_congestion(&sock, cc)?;
        }
        if cfg.window.is_some() {
            socket::set_send_buffer(&sock, cfg.window).map_err(|source| ClientError::Connect {
                addr,
                error: source,
            })?;
            socket::set_recv_buffer(&sock, cfg.window).map_err(|source| ClientError::Connect {
                addr,
                error: source,
            })?;
        }
    }
    sock.connect_timeout(&addr.into(), cfg.connect_timeout)
        .map_err(|source| {
            if source.kind() == std::io::ErrorKind::ConnectionRefused {
                ClientError::Refused {
                    addr,
                    host: cfg.host.clone(),
                    port: cfg.port,
                }
            } else {
                ClientError::Connect {
                    addr,
                    error: source,
                }
            }
        })?;
    let _ = sock.set_tcp_nodelay(!data);
    Ok(sock)
}

fn expect(ctrl: &mut TcpStream, what: &str) -> Result<Message, ClientError> {
    match protocol::read_message(ctrl) {
        Ok(Message::Error { message }) => Err(ClientError::Server(message)),
        Ok(m) => Ok(m),
        Err(e) => Err(ClientError::Protocol(format!("waiting for {what}: {e}"))),
    }
}

/// Where the protocol's difference from iperf3 is documented, for error messages.
const PROTOCOL_DOC: &str = "crates/perf/src/perf/protocol.rs";

/// A longhaul server answers a `Test` at once with a frame starting with the magic. Anything
/// else is told within the connect timeout instead of after the test's read timeout: an iperf3
/// server answers the 37-byte cookie it reads from our frame with one state byte
/// (`PARAM_EXCHANGE` = 9, or `ACCESS_DENIED` = −2 when busy) and then waits.
fn identify_server(ctrl: &TcpStream, cfg: &ClientConfig) -> Result<(), ClientError> {
    let target = format!("{}:{}", cfg.host, cfg.port);
    ctrl.set_read_timeout(Some(cfg.connect_timeout.max(Duration::from_millis(100))))
        .map_err(|e| ClientError::Protocol(e.to_string()))?;
    let mut first = [0u8; 1];
    let peeked = ctrl.peek(&mut first);
    // Restore the test's generous timeout for everything after the first byte.
    ctrl.set_read_timeout(Some(cfg.duration + Duration::from_secs(60)))
        .map_err(|e| ClientError::Protocol(e.to_string()))?;
    match peeked {
        Ok(1) if first[0] == protocol::MAGIC[0] => Ok(()),
        Ok(1) if first[0] == 9 || first[0] == 0xFE => Err(ClientError::ForeignPeer(format!(
            "{target} is an iperf3 server; longhaul perf is iperf-like but speaks its own \
             protocol ({PROTOCOL_DOC}): run `longhaul perf server` there, or use iperf3 as the client"
        ))),
        Ok(1) => Err(ClientError::ForeignPeer(format!(
            "{target} is not a longhaul perf server (it answered with byte {:#04x}); run \
             `longhaul perf server` there ({PROTOCOL_DOC})",
            first[0]
        ))),
        // Closed without a word.
        Ok(_) => Err(ClientError::ForeignPeer(format!(
            "{target} closed the connection without answering: is it `longhaul perf server`? \
             ({PROTOCOL_DOC})"
        ))),
        Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
            Err(ClientError::ForeignPeer(format!(
                "{target} accepted the connection but did not answer within {:?}: it is not a \
                 longhaul perf server, or it is overloaded ({PROTOCOL_DOC})",
                cfg.connect_timeout
            )))
        }
        Err(e) => Err(ClientError::Protocol(format!("waiting for the server's answer: {e}"))),
    }
}

/// Run one test against a server.
pub fn run_client(cfg: &ClientConfig, progress: &mut dyn Progress) -> Result<PerfRun, ClientError> {
    if cfg.write_len == 0 || cfg.write_len > 64 << 20 {
        return Err(ClientError::Invalid(format!(
            "write size {} B (1 B..64 MiB)",
            cfg.write_len
        )));
    }
    if cfg.interval.is_zero() {
        return Err(ClientError::Invalid(
            "report interval must be positive".into(),
        ));
    }
    let params = TestParams {
        streams: cfg.streams,
        duration_ms: cfg.duration.as_millis() as u64,
        cc: cfg.cc.clone(),
        window: cfg.window,
        write_len: cfg.write_len,
    };
    if let Some(p) = params.problem() {
        return Err(ClientError::Invalid(p));
    }
    let addr = (cfg.host.as_str(), cfg.port)
        .to_socket_addrs()
        .and_then(|mut a| a.next().ok_or_else(|| std::io::Error::other("no address")))
        .map_err(|source| ClientError::Resolve {
            host: cfg.host.clone(),
            error: source,
        })?;

    if let Some(cc) = &cfg.cc {
        // Fail before the server sets up a test if this kernel lacks the algorithm.
        let probe = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
            .map_err(|source| ClientError::Connect {
                addr,
                error: source,
            })?;
        socket::set_congestion(&probe, cc)?;
    }
    let mut ctrl: TcpStream = connect(addr, cfg, false)?.into();
    // Generous: the server may wait up to its idle timeout for slow data connections.
    ctrl.set_read_timeout(Some(cfg.duration + Duration::from_secs(60)))
        .map_err(|e| ClientError::Protocol(e.to_string()))?;
    protocol::write_message(&mut ctrl, &Message::Test(params.clone()))
        .map_err(|e| ClientError::Protocol(e.to_string()))?;
    identify_server(&ctrl, cfg)?;
    let cookie = match expect(&mut ctrl, "the server's answer")? {
        Message::Accept { cookie } => cookie,
        m => return Err(ClientError::Protocol(format!("expected Accept, got {m:?}"))),
    };

    let mut conns = Vec::new();
    let mut setups = Vec::new();
    for stream in 0..cfg.streams {
        let sock = connect(addr, cfg, true)?;
        let send_buffer = socket::set_send_buffer(&sock, None).map(|g| BufferSize {
            requested: cfg.window,
            granted: g.granted,
        });
        let setup = StreamSetup {
            local: sock
                .local_addr()
                .ok()
                .and_then(|a| a.as_socket())
                .unwrap_or(addr),
            remote: addr,
            cc: socket::congestion(&sock).unwrap_or_else(|_| "?".into()),
            send_buffer: send_buffer.map_err(|source| ClientError::Stream {
                stream,
                error: source,
            })?,
        };
        let mut c: TcpStream = sock.into();
        protocol::write_message(&mut c, &Message::Data { cookie, stream }).map_err(|source| {
            ClientError::Stream {
                stream,
                error: source,
            }
        })?;
        // Writers wake at least this often to see whether the run is over.
        c.set_write_timeout(Some(Duration::from_millis(200)))
            .map_err(|source| ClientError::Stream {
                stream,
                error: source,
            })?;
        conns.push(Arc::new(c));
        setups.push(setup);
    }
    match expect(&mut ctrl, "the start signal")? {
        Message::Start => {}
        m => return Err(ClientError::Protocol(format!("expected Start, got {m:?}"))),
    }
    progress.connected(cfg, &setups);

    let stop = Arc::new(AtomicBool::new(false));
    let counters: Vec<Arc<AtomicU64>> = (0..cfg.streams)
        .map(|_| Arc::new(AtomicU64::new(0)))
        .collect();
    let start = Instant::now();
    let writers: Vec<_> = conns
        .iter()
        .zip(&counters)
        .map(|(c, n)| {
            let (c, n, stop, len) = (
                Arc::clone(c),
                Arc::clone(n),
                Arc::clone(&stop),
                cfg.write_len as usize,
            );
            std::thread::spawn(move || write_until(&c, &n, &stop, len))
        })
        .collect();

    let mut intervals = Vec::new();
    let mut last_bytes = vec![0u64; conns.len()];
    let mut last_retrans = vec![0u64; conns.len()];
    let mut last_t = 0.0;
    let sample = |last_bytes: &mut Vec<u64>,
                  last_retrans: &mut Vec<u64>,
                  start_s: f64,
                  end_s: f64|
     -> Interval {
        let streams = conns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let now = counters[i].load(Ordering::Acquire);
                let tcp = tcp_stats(c.as_ref()).unwrap_or_default();
                let retrans = (tcp.total_retrans as u64).max(last_retrans[i]);
                let s = StreamSample {
                    bytes: now - last_bytes[i],
                    retransmits: retrans - last_retrans[i],
                    tcp,
                };
                last_bytes[i] = now;
                last_retrans[i] = retrans;
                s
            })
            .collect();
        Interval {
            start_s,
            end_s,
            streams,
        }
    };
    // RTT is sampled more often than the report interval, so the queueing-delay percentiles rest
    // on more than one sample per interval (10 per second, capped per stream).
    let sample_every = RTT_SAMPLE_PERIOD.min(cfg.interval);
    let mut rtt_samples_ms: Vec<Vec<f64>> = vec![Vec::new(); conns.len()];
    let mut next_rtt = start + sample_every;
    let end_at = start + cfg.duration;
    let mut k = 1u32;
    loop {
        if writers.iter().any(|w| w.is_finished()) {
            break; // a writer failed: its error is reported below
        }
        let now = Instant::now();
        if now >= end_at {
            break;
        }
        let tick_at = start + cfg.interval * k;
        std::thread::sleep(tick_at.min(next_rtt).min(end_at) - now);
        let now = Instant::now();
        if now >= next_rtt {
            for (c, samples) in conns.iter().zip(&mut rtt_samples_ms) {
                if let Ok(t) = tcp_stats(c.as_ref()) {
                    if t.rtt_us > 0 && samples.len() < MAX_RTT_SAMPLES {
                        samples.push(t.rtt_us as f64 / 1e3);
                    }
                }
            }
            next_rtt += sample_every;
        }
        if now >= tick_at && tick_at < end_at {
            let t = start.elapsed().as_secs_f64();
            let i = sample(&mut last_bytes, &mut last_retrans, last_t, t);
            progress.interval(&i);
            intervals.push(i);
            last_t = t;
            k += 1;
        }
    }
    stop.store(true, Ordering::Release);
    let send_s = start.elapsed().as_secs_f64();
    for (stream, w) in writers.into_iter().enumerate() {
        let stream = stream as u32;
        match w.join() {
            Ok(Ok(())) => {}
            Ok(Err(source)) => {
                return Err(ClientError::Stream {
                    stream,
                    error: source,
                })
            }
            Err(_) => {
                return Err(ClientError::Protocol(format!(
                    "stream {stream}: writer panicked"
                )))
            }
        }
    }
    for c in &conns {
        let _ = c.shutdown(Shutdown::Write);
    }
    let (received, server_elapsed_s) = match expect(&mut ctrl, "the server's result")? {
        Message::Result { bytes, elapsed_s } => (bytes, elapsed_s),
        m => return Err(ClientError::Protocol(format!("expected Result, got {m:?}"))),
    };
    let end = start.elapsed().as_secs_f64();
    let last = sample(&mut last_bytes, &mut last_retrans, last_t, end);
    progress.interval(&last);
    intervals.push(last);

    let bytes: Vec<u64> = counters.iter().map(|c| c.load(Ordering::Acquire)).collect();
    if received.len() != bytes.len() {
        return Err(ClientError::Protocol(format!(
            "server reported {} streams, client ran {}",
            received.len(),
            bytes.len()
        )));
    }
    for (i, (&sent, &got)) in bytes.iter().zip(&received).enumerate() {
        if sent != got {
            return Err(ClientError::Mismatch {
                stream: i as u32,
                sent,
                received: got,
            });
        }
    }
    let final_tcp = intervals
        .last()
        .map(|i| i.streams.iter().map(|s| s.tcp).collect())
        .unwrap_or_default();
    Ok(PerfRun {
        config_host: cfg.host.clone(),
        port: cfg.port,
        params,
        streams: setups,
        intervals,
        bytes,
        duration_s: end,
        send_s,
        server_elapsed_s,
        final_tcp,
        rtt_samples_ms,
    })
}

fn write_until(
    c: &TcpStream,
    counter: &AtomicU64,
    stop: &AtomicBool,
    len: usize,
) -> std::io::Result<()> {
    // Bytes vary within the buffer so compression anywhere on the path cannot inflate the rate.
    let buf: Vec<u8> = (0..len)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let mut w = c;
    while !stop.load(Ordering::Acquire) {
        match w.write(&buf) {
            Ok(n) => {
                counter.fetch_add(n as u64, Ordering::Release);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
