//! The prober's end: one authenticated connection to a probe server, trains of probe
//! datagrams beside it, and the estimators fed with what both ends saw.
//!
//! The measurement runs in phases, each bounded by the time and byte limits (whatever is not
//! measured when a limit is reached is left out of the report, with a note):
//!
//! 1. pings, one at a time: the base RTT and its jitter;
//! 2. the path MTU ([`crate::mtu`]): pings padded to the sizes the search asks, with the
//!    don't-fragment bit set; the probe datagrams of the later phases fill the MTU found;
//! 3. trains of back-to-back packets: the capacity ([`crate::capacity`]);
//! 4. bursts of growing size, each after the queue has drained: the effective queue and the
//!    maximum burst size ([`crate::burst`]);
//! 5. periodic streams at the rates the SLoPS search asks: the available bandwidth
//!    ([`crate::slops`]);
//! 6. the losses of pings and of streams that did not queue, at rates well below the
//!    available bandwidth: the random loss
//!    ([`crate::loss`]); reordering over every train.
//!
//! After each train the prober asks the server for its arrivals on the connection's stream; the
//! request follows the train through the bottleneck's queue, so the answer comes once the train
//! has drained, and the next train meets an empty queue.

use crate::burst::BurstSearch;
use crate::mtu::{MtuSearch, SizeFate};
use crate::report::Report;
use crate::slops::{Search, Trend};
use crate::train::{Packet, Train};
use crate::wire::{self, Control, Header, Kind, Reply, WireError};
use crate::{capacity, loss, mtu, rtt};
use longhaul_net::send::TrustHook;
use longhaul_net::socket::{self, Clock, UdpPort};
use longhaul_net::NetError;
use longhaul_proto::{Config, Connection, Side, Time, IP_UDP_OVERHEAD};
use rand_core::{OsRng, RngCore};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Streams per fleet of the available-bandwidth search: four of five must agree
/// ([`crate::slops::AGREE`]); pathload's twelve cost more time than a 30-s probe has.
const FLEET: usize = 5;

/// The streams whose losses count as random: those at most this share of the available
/// bandwidth's lower bound.
const QUIET_SHARE: f64 = 0.8;

/// How a probe runs.
pub struct ProbeOptions {
    /// The connection's settings (security as for `send`).
    pub config: Config,
    /// Called with the server's authenticated key before anything is measured (trust on first
    /// use records it here); an error ends the probe.
    pub on_peer_key: Option<TrustHook>,
    /// Give up when the handshake has had no answer for this long.
    pub connect_timeout: Duration,
    /// The whole measurement's limit.
    pub time_limit: Duration,
    /// The most bytes of probe datagrams to send (IP packets).
    pub byte_limit: u64,
    /// A probe datagram's UDP payload, bytes (the path MTU less 28 fills it): the largest, when
    /// the path MTU is searched.
    pub datagram: usize,
    /// Search the path MTU up to `datagram`'s IP packet ([`crate::mtu`]), and fill what is
    /// found.
    pub search_mtu: bool,
    /// Pings for the RTT.
    pub pings: usize,
    /// Trains for the capacity.
    pub trains: usize,
    /// Packets per capacity train.
    pub train_len: usize,
    /// Packets per SLoPS stream.
    pub stream_len: usize,
}

impl ProbeOptions {
    /// The defaults with `config`: 30 s, 64 MB, 1472-byte datagrams, 20 pings, 12 trains of
    /// 48, streams of 100.
    pub fn new(config: Config) -> ProbeOptions {
        ProbeOptions {
            config,
            on_peer_key: None,
            connect_timeout: Duration::from_secs(5),
            time_limit: Duration::from_secs(30),
            byte_limit: 64 << 20,
            datagram: 1472,
            search_mtu: true,
            pings: 20,
            trains: 12,
            train_len: 48,
            stream_len: 100,
        }
    }
}

/// Why a probe stopped.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The socket, keys or connection failed.
    #[error(transparent)]
    Net(#[from] NetError),
    /// The server broke the probe protocol.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The options ask for something impossible.
    #[error("{0}")]
    Usage(String),
    /// The server did not answer in time.
    #[error("{0}")]
    Timeout(String),
    /// The probe server could not be started over ssh.
    #[error(transparent)]
    Launch(#[from] Box<longhaul_net::ssh::LaunchError>),
    /// The probe server started over ssh was not reached over UDP: `why` says what to check.
    #[error("{why}")]
    Unreachable {
        /// What the launch knows (a firewall may stop UDP).
        why: String,
        /// The error.
        #[source]
        error: Box<NetError>,
    },
}

/// The connection and the socket, driven together.
struct Link<'a> {
    port: UdpPort,
    conn: Connection,
    clock: Clock,
    peer: SocketAddr,
    key: [u8; 32],
    stream: Vec<u8>,
    replies: VecDeque<Reply>,
    /// Pong arrival stamps by the ping's train (0; a path-MTU probe's: its size) and number.
    pongs: HashMap<(u32, u32), Time>,
    /// An ICMP message said a datagram was too big (the connected socket's `EMSGSIZE`).
    told_too_big: bool,
    on_peer_key: Option<TrustHook>,
    stop: &'a AtomicBool,
    bytes: u64,
    /// Path-MTU probes sent (their numbers).
    mtu_probes: u32,
    inbuf: Vec<u8>,
}

fn refused(e: std::io::Error, peer: SocketAddr) -> NetError {
    if e.kind() == std::io::ErrorKind::ConnectionRefused {
        NetError::PortClosed(peer)
    } else {
        NetError::Socket(e)
    }
}

impl Link<'_> {
    /// One turn: read, act on timers and the stream, and send.
    fn turn(&mut self) -> Result<(), ProbeError> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(NetError::Interrupted.into());
        }
        let (conn, pongs, key) = (&mut self.conn, &mut self.pongs, &self.key);
        let received = self.port.receive(&mut self.inbuf, &self.clock, |_, d, at| {
            if wire::is_probe(d) {
                if let Some(h) = wire::decode(d, key).filter(|h| h.kind == Kind::Pong) {
                    pongs.entry((h.train, h.seq)).or_insert(at.stamped);
                }
            } else {
                let _ = conn.handle_packet_at(at.now, at.stamped, d, false);
            }
        });
        match received {
            // A router's ICMP "fragmentation needed" for a path-MTU probe: the search hears
            // of it (`kernel_path_mtu`); nothing else is wrong.
            Err(e) if socket::is_too_big(&e) => self.told_too_big = true,
            r => r.map_err(|e| refused(e, self.peer))?,
        }
        let now = self.clock.now();
        if self.conn.poll_timeout().is_some_and(|t| t <= now) {
            self.conn.handle_timeout(now);
        }
        if let (Some(k), Some(hook)) = (self.conn.peer_key(), self.on_peer_key.as_mut()) {
            hook(&k).map_err(NetError::Trust)?;
            self.on_peer_key = None;
        }
        wire::read_stream(&mut self.conn, &mut self.stream);
        while let Some(r) = Reply::decode(&mut self.stream)? {
            self.replies.push_back(r);
        }
        if self.conn.is_closed() {
            return Err(NetError::Closed(format!(
                "the server closed the connection ({:?})",
                self.conn.close_reason()
            ))
            .into());
        }
        self.port
            .flush(None, &mut self.conn, self.clock.now())
            .map_err(|e| refused(e, self.peer))?;
        Ok(())
    }

    /// Turns until `done` or `until`; whether `done` held.
    fn pump(
        &mut self,
        until: Instant,
        mut done: impl FnMut(&mut Self) -> bool,
    ) -> Result<bool, ProbeError> {
        loop {
            self.turn()?;
            if done(self) {
                return Ok(true);
            }
            if Instant::now() >= until {
                return Ok(false);
            }
            let deadline = self.conn.poll_timeout().map(|t| self.clock.instant(t));
            self.port
                .wait(socket::earliest(deadline, Some(until)))
                .map_err(NetError::Socket)?;
        }
    }

    fn write(&mut self, m: Control) {
        let mut out = Vec::new();
        m.encode(&mut out);
        let n = self.conn.write(&out);
        debug_assert_eq!(n, out.len(), "a control message fits the send buffer");
    }

    /// Sends probe datagram `h` now; when it left, seconds on this end's clock.
    fn send(&mut self, d: &[u8]) -> Result<f64, ProbeError> {
        loop {
            let t = self.clock.now();
            match self.port.socket().send(d) {
                Ok(_) => {
                    self.bytes += (d.len() + IP_UDP_OVERHEAD) as u64;
                    return Ok(t.as_secs_f64());
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::hint::spin_loop(),
                Err(e) => return Err(refused(e, self.peer).into()),
            }
        }
    }

    /// One round of the path-MTU search: `copies` probes of each of `sizes` (IP bytes), the
    /// sizes interleaved and 1 ms apart (so that no queue on the path overflows), then the
    /// pongs awaited for twice the RTT, and at least 200 ms more than it.
    fn mtu_round(
        &mut self,
        sizes: &[u32],
        copies: usize,
        overhead: usize,
        rtt: f64,
        end: Instant,
    ) -> Result<Vec<(u32, SizeFate)>, ProbeError> {
        let mut too_big = Vec::new();
        let mut sent: Vec<(u32, u32)> = Vec::new();
        for _ in 0..copies {
            for &size in sizes {
                if too_big.contains(&size) {
                    continue;
                }
                let seq = self.mtu_probes;
                self.mtu_probes += 1;
                let mut d = vec![0u8; (size as usize).saturating_sub(overhead)];
                if d.len() < wire::MIN_DATAGRAM {
                    too_big.push(size);
                    continue;
                }
                let h = Header {
                    kind: Kind::Ping,
                    train: size,
                    seq,
                };
                wire::encode(h, &self.key, &mut d);
                match self.port.socket().send(&d) {
                    Ok(_) => {
                        self.bytes += (d.len() + IP_UDP_OVERHEAD) as u64;
                        sent.push((size, seq));
                    }
                    Err(e) if socket::is_too_big(&e) => too_big.push(size),
                    // A full socket buffer loses this copy; the others count.
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(refused(e, self.peer).into()),
                }
                self.pump(Instant::now() + Duration::from_millis(1), |_| false)?;
            }
        }
        let wait = Duration::from_secs_f64((2.0 * rtt).max(rtt + 0.2));
        let until = (Instant::now() + wait).min(end.max(Instant::now()));
        let arrived = |l: &Self, size: u32| {
            sent.iter()
                .any(|&(s, seq)| s == size && l.pongs.contains_key(&(size, seq)))
        };
        self.pump(until, |l| {
            sizes.iter().all(|&s| too_big.contains(&s) || arrived(l, s))
        })?;
        Ok(sizes
            .iter()
            .map(|&s| {
                let o = if too_big.contains(&s) {
                    SizeFate::Refused
                } else if arrived(self, s) {
                    SizeFate::Arrived
                } else {
                    SizeFate::Lost
                };
                (s, o)
            })
            .collect())
    }

    /// Sends train `train` of `n` datagrams of `size` bytes, `gap` apart (zero: back to
    /// back); the send times.
    fn send_train(
        &mut self,
        train: u32,
        n: usize,
        size: usize,
        gap: Duration,
    ) -> Result<Vec<f64>, ProbeError> {
        let datagrams: Vec<Vec<u8>> = (0..n as u32)
            .map(|seq| {
                let mut d = vec![0u8; size];
                wire::encode(
                    Header {
                        kind: Kind::Train,
                        train,
                        seq,
                    },
                    &self.key,
                    &mut d,
                );
                d
            })
            .collect();
        let start = Instant::now();
        let mut sent = Vec::with_capacity(n);
        for (i, d) in datagrams.iter().enumerate() {
            let at = start + gap * i as u32;
            while let Some(left) = at
                .checked_duration_since(Instant::now())
                .filter(|l| !l.is_zero())
            {
                if left > Duration::from_millis(2) {
                    std::thread::sleep(left - Duration::from_millis(1));
                } else {
                    std::hint::spin_loop();
                }
            }
            sent.push(self.send(d)?);
        }
        Ok(sent)
    }

    /// Asks for the arrivals of `train` (sent at `sent`, datagrams of `size`) and waits for
    /// them; the train as both ends saw it.
    fn arrivals(&mut self, train: u32, sent: &[f64], size: usize) -> Result<Train, ProbeError> {
        self.write(Control::Report { train });
        let until = Instant::now() + Duration::from_secs(10);
        let mut got = None;
        self.pump(until, |l| {
            while let Some(r) = l.replies.pop_front() {
                if let Reply::Arrivals { train: t, arrivals } = r {
                    if t == train {
                        got = Some(arrivals);
                    }
                }
            }
            got.is_some()
        })?;
        let arrivals = got.ok_or_else(|| {
            ProbeError::Timeout(format!(
                "the server did not report train {train} within 10 s"
            ))
        })?;
        let mut at: HashMap<u32, f64> = HashMap::new();
        for (seq, ns) in arrivals {
            at.entry(seq).or_insert(ns as f64 * 1e-9);
        }
        Ok(Train::new(
            sent.iter()
                .enumerate()
                .map(|(i, &s)| Packet {
                    bytes: (size + IP_UDP_OVERHEAD) as u32,
                    sent: s,
                    received: at.get(&(i as u32)).copied(),
                })
                .collect(),
        ))
    }
}

/// Measures the path to the probe server at `peer`; `stop` (Ctrl-C) ends it with
/// [`NetError::Interrupted`].
pub fn probe(
    peer: SocketAddr,
    options: ProbeOptions,
    stop: &AtomicBool,
) -> Result<Report, ProbeError> {
    if options.datagram < wire::MIN_DATAGRAM || options.datagram > 65_507 {
        return Err(ProbeError::Usage(format!(
            "a probe datagram has {} to 65507 bytes, not {}",
            wire::MIN_DATAGRAM,
            options.datagram
        )));
    }
    let started = Instant::now();
    let end = started + options.time_limit;
    let local: SocketAddr = if peer.is_ipv6() {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    };
    let port = UdpPort::bind(local, options.config.max_datagram_size(), false)
        .map_err(NetError::Socket)?;
    port.socket().connect(peer).map_err(NetError::Socket)?;
    if options.search_mtu {
        socket::set_probe_path_mtu(port.socket()).map_err(NetError::Socket)?;
    }
    let clock = Clock::start();
    let conn = Connection::new(options.config.clone(), Side::Client, clock.now())
        .map_err(NetError::Config)?;
    let mut key = [0u8; 32];
    OsRng.fill_bytes(&mut key);
    let mut link = Link {
        port,
        conn,
        clock,
        peer,
        key,
        stream: Vec::new(),
        replies: VecDeque::new(),
        pongs: HashMap::new(),
        told_too_big: false,
        on_peer_key: options.on_peer_key,
        stop,
        bytes: 0,
        mtu_probes: 0,
        inbuf: vec![0u8; 65_536],
    };
    let connected = link.pump(started + options.connect_timeout, |l| {
        l.conn.is_established() && (l.on_peer_key.is_none() || !l.conn.is_secure())
    })?;
    if !connected {
        return Err(NetError::NoAnswer(peer, options.connect_timeout).into());
    }
    link.write(Control::Hello { key });
    let ready = link.pump(Instant::now() + Duration::from_secs(10), |l| {
        l.replies.pop_front().is_some_and(|r| r == Reply::Ready)
    })?;
    if !ready {
        return Err(ProbeError::Timeout(
            "the server did not take the probe's key within 10 s".into(),
        ));
    }
    let mut size = options.datagram;
    let mut report = Report::new(peer, size);
    let mut notes = Vec::new();
    let budget = |l: &Link, more: u64| Instant::now() < end && l.bytes + more <= options.byte_limit;

    // 1. Pings, one at a time.
    let mut rtts = Vec::new();
    let mut ping_sent = 0u64;
    for seq in 0..options.pings as u32 {
        if !budget(&link, (wire::MIN_DATAGRAM + IP_UDP_OVERHEAD) as u64) {
            break;
        }
        let mut d = vec![0u8; wire::MIN_DATAGRAM];
        wire::encode(
            Header {
                kind: Kind::Ping,
                train: 0,
                seq,
            },
            &key,
            &mut d,
        );
        let sent = link.clock.now();
        link.send(&d)?;
        ping_sent += 1;
        let until = (Instant::now() + Duration::from_secs(1)).min(end);
        if link.pump(until, |l| l.pongs.contains_key(&(0, seq)))? {
            rtts.push(link.pongs[&(0, seq)].saturating_since(sent).as_secs_f64());
        }
    }
    if let Some((base, jitter)) = rtt::rtt(&rtts) {
        report.rtt = Some(base);
        report.jitter = Some(jitter);
    }
    let rtt = report.rtt.as_ref().map_or(0.1, |e| e.value);

    // 2. The path MTU, from the base up to the largest datagram's packet.
    if options.search_mtu {
        let overhead = ip_overhead(peer);
        let ping_loss = loss::wilson(ping_sent - rtts.len() as u64, ping_sent, loss::Z95).1;
        let max = (options.datagram + overhead) as u32;
        let mut search = MtuSearch::new(mtu::BASE, max, mtu::copies(ping_loss), 6);
        while let Some(sizes) = search.next_round() {
            let cost = sizes.iter().map(|&s| u64::from(s)).sum::<u64>() * search.copies() as u64;
            if !budget(&link, cost) {
                notes.push("the time or byte limit ended the path MTU search".to_string());
                break;
            }
            let round = link.mtu_round(&sizes, search.copies(), overhead, rtt, end)?;
            search.record(&round);
            if std::mem::take(&mut link.told_too_big) {
                if let Ok(m) = socket::kernel_path_mtu(link.port.socket()) {
                    search.too_big_reported(m);
                }
            }
        }
        report.path_mtu = search.estimate();
        match &report.path_mtu {
            Some(m) => size = size.min(m.value as usize - overhead),
            None => notes.push(format!(
                "no path MTU probe of {} bytes arrived: the probe goes on in {}-byte datagrams",
                mtu::BASE,
                size
            )),
        }
        report.datagram = size;
    }
    let wire_bytes = (size + IP_UDP_OVERHEAD) as u64;
    let pause = |l: &mut Link| {
        l.pump(Instant::now() + Duration::from_secs_f64(rtt / 2.0), |_| {
            false
        })
    };
    let mut next_train = 1u32;
    let mut all: Vec<Train> = Vec::new();

    // 3. Back-to-back trains: the capacity.
    let mut trains = Vec::new();
    for _ in 0..options.trains {
        if !budget(&link, wire_bytes * options.train_len as u64) {
            break;
        }
        let sent = link.send_train(next_train, options.train_len, size, Duration::ZERO)?;
        trains.push(link.arrivals(next_train, &sent, size)?);
        next_train += 1;
        pause(&mut link)?;
    }
    report.capacity = capacity::by_trains(&trains);
    report.capacity_pairs = capacity::by_pairs(&trains);
    all.extend(trains);
    let Some(cap) = report.capacity.clone() else {
        report.loss = loss::random_loss([&ping_train(ping_sent, &link.pongs)]);
        notes.push("no train was spread by the path: the capacity is more than this host sends back to back".to_string());
        link.port.close(None, &mut link.conn, link.clock.now());
        report.finish(link.bytes, started.elapsed(), notes, &all);
        return Ok(report);
    };

    // 4. Bursts of growing size: the effective queue and the MBS.
    let most = ((options.byte_limit.saturating_sub(link.bytes)) / 3 / wire_bytes).max(2) as usize;
    let mut bursts = BurstSearch::new(8, 1.5, most.min(wire::MAX_TRAIN as usize));
    while let Some(n) = bursts.next_size() {
        if !budget(&link, wire_bytes * n as u64) {
            notes.push("the time or byte limit ended the burst search".to_string());
            break;
        }
        let sent = link.send_train(next_train, n, size, Duration::ZERO)?;
        let t = link.arrivals(next_train, &sent, size)?;
        next_train += 1;
        bursts.record(&t);
        all.push(t);
        pause(&mut link)?;
    }
    report.queue = bursts.queue(&cap, wire_bytes as u32);
    report.mbs = bursts.mbs();
    report.burst_stop = bursts.stopped();

    // 5. SLoPS streams: the available bandwidth.
    let mut search = Search::new(cap.value, 0.04 * cap.value, FLEET, 10);
    let mut quiet = Vec::new();
    while let Some(rate) = search.next_rate() {
        let bytes = wire_bytes * options.stream_len as u64;
        if !budget(&link, bytes) {
            notes.push("the time or byte limit ended the available-bandwidth search".to_string());
            break;
        }
        let gap = Duration::from_secs_f64(wire_bytes as f64 * 8.0 / rate);
        let sent = link.send_train(next_train, options.stream_len, size, gap)?;
        let t = link.arrivals(next_train, &sent, size)?;
        next_train += 1;
        search.record(&t);
        if let Some(s) = search
            .streams()
            .last()
            .filter(|s| s.test.trend == Trend::NotIncreasing)
        {
            quiet.push((s.rate, t.clone()));
        }
        all.push(t);
        pause(&mut link)?;
    }
    report.available = search.estimate();

    // 6. Random loss: pings and streams that did not queue, well below the available
    //    bandwidth (a stream just under it still queues a little, which a small buffer
    //    overflows).
    let calm = report
        .available
        .as_ref()
        .map_or(0.0, |a| QUIET_SHARE * a.low);
    let mut quiet: Vec<Train> = quiet
        .into_iter()
        .filter(|(rate, _)| *rate <= calm)
        .map(|(_, t)| t)
        .collect();
    quiet.push(ping_train(ping_sent, &link.pongs));
    report.loss = loss::random_loss(&quiet);
    link.port.close(None, &mut link.conn, link.clock.now());
    report.finish(link.bytes, started.elapsed(), notes, &all);
    Ok(report)
}

/// Bytes of IP and UDP header before a datagram to `peer`: 28 over IPv4, 48 over IPv6.
pub fn ip_overhead(peer: SocketAddr) -> usize {
    if peer.is_ipv6() {
        48
    } else {
        IP_UDP_OVERHEAD
    }
}

/// The pings as a train, for the loss count: which of the `sent` were answered.
fn ping_train(sent: u64, pongs: &HashMap<(u32, u32), Time>) -> Train {
    Train::new(
        (0..sent)
            .map(|i| Packet {
                bytes: wire::MIN_DATAGRAM as u32,
                sent: 0.0,
                received: pongs.contains_key(&(0, i as u32)).then_some(0.0),
            })
            .collect(),
    )
}
