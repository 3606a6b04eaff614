//! The probe server (`longhaul probe --serve`): admits provers as `longhaul recv` admits
//! senders (the Noise handshake, the same keys and trust, retry tokens and per-source limits of
//! [`longhaul_net::admission`]), stamps the arrival of their authenticated train datagrams,
//! echoes their pings, and reports each train's arrivals when asked ([`crate::wire`]).
//!
//! The socket runs without receive coalescing (GRO), so each datagram keeps its own kernel
//! stamp: a coalesced batch would carry one stamp for many packets and hide their dispersion.

use crate::wire::{self, Control, Header, Kind, Reply, MAX_TRAIN};
use longhaul_net::admission::{self, Door, Limits, Slot, Tokens};
use longhaul_net::socket::{self, Clock, UdpPort};
use longhaul_net::NetError;
use longhaul_proto::{Config, Connection, Side};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The most arrivals a session holds unreported.
pub const MAX_HELD: usize = 1 << 20;

/// One prober.
struct Session {
    conn: Connection,
    key: Option<[u8; 32]>,
    stream: Vec<u8>,
    arrivals: HashMap<u32, Vec<(u32, u64)>>,
    held: usize,
    last_heard: Instant,
    trains: u32,
    error: Option<String>,
}

/// How a session ended.
#[derive(Clone, Debug)]
pub struct SessionEnd {
    /// The prober's address.
    pub peer: SocketAddr,
    /// Its authenticated key, if it got that far.
    pub key: Option<[u8; 32]>,
    /// Trains it asked for.
    pub trains: u32,
    /// What went wrong, if anything.
    pub error: Option<String>,
}

/// A bound probe server.
pub struct Server {
    port: UdpPort,
    clock: Clock,
    config: Config,
    limits: Limits,
    tokens: Tokens,
    sessions: HashMap<SocketAddr, Session>,
}

impl Server {
    /// Binds to `addr` with connection settings `config` and admission `limits`.
    pub fn bind(addr: SocketAddr, config: Config, limits: Limits) -> Result<Server, NetError> {
        let port =
            UdpPort::bind(addr, config.max_datagram_size(), false).map_err(NetError::Socket)?;
        Ok(Server {
            port,
            clock: Clock::start(),
            config,
            limits,
            tokens: Tokens::new(),
            sessions: HashMap::new(),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.port
            .socket()
            .local_addr()
            .expect("a bound socket has an address")
    }

    /// Serves until `stop`, or after `limit` sessions have ended; `event` hears of each end.
    pub fn serve(
        &mut self,
        stop: &AtomicBool,
        limit: Option<usize>,
        mut event: impl FnMut(&SessionEnd),
    ) -> Result<usize, NetError> {
        let mut inbuf = vec![0u8; 65_536];
        let mut ended = 0;
        while !stop.load(Ordering::Relaxed) && limit.is_none_or(|l| ended < l) {
            self.receive(&mut inbuf)?;
            let now = self.clock.now();
            let mut deadline = None;
            let mut closed = Vec::new();
            for (peer, s) in self.sessions.iter_mut() {
                if s.conn.poll_timeout().is_some_and(|t| t <= now) {
                    s.conn.handle_timeout(now);
                }
                if let Err(e) = s.advance() {
                    s.error = Some(e.to_string());
                    s.conn.close();
                }
                let _ = self.port.flush(Some(*peer), &mut s.conn, now);
                let abandoned = !s.conn.is_established()
                    && s.last_heard.elapsed() > self.limits.handshake_timeout;
                if s.conn.is_closed() || abandoned {
                    closed.push(*peer);
                }
                deadline = [deadline, s.conn.poll_timeout()]
                    .into_iter()
                    .flatten()
                    .min();
            }
            for peer in closed {
                let s = self.sessions.remove(&peer).expect("listed");
                if s.key.is_some() {
                    ended += 1;
                }
                event(&SessionEnd {
                    peer,
                    key: s.conn.peer_key(),
                    trains: s.trains,
                    error: s.error,
                });
            }
            let tick = Instant::now() + Duration::from_millis(100);
            let deadline = deadline.map(|t| self.clock.instant(t));
            self.port
                .wait(socket::earliest(deadline, Some(tick)))
                .map_err(NetError::Socket)?;
        }
        Ok(ended)
    }

    /// Reads what arrived: probe datagrams to their session, the rest to its connection or
    /// through admission to a new one.
    fn receive(&mut self, inbuf: &mut [u8]) -> Result<(), NetError> {
        let mut out: Vec<(SocketAddr, Vec<u8>)> = Vec::new();
        let (sessions, config, limits, tokens) =
            (&mut self.sessions, &self.config, &self.limits, &self.tokens);
        let secure = config.security.is_on();
        let result = self.port.receive(inbuf, &self.clock, |from, d, at| {
            if wire::is_probe(d) {
                let Some(s) = sessions.get_mut(&from) else {
                    return;
                };
                let Some(h) = s.key.as_ref().and_then(|k| wire::decode(d, k)) else {
                    return;
                };
                match h.kind {
                    Kind::Train if h.seq < MAX_TRAIN && s.held < MAX_HELD => {
                        s.arrivals
                            .entry(h.train)
                            .or_default()
                            .push((h.seq, at.stamped.as_nanos()));
                        s.held += 1;
                    }
                    Kind::Ping => {
                        let mut pong = vec![0u8; wire::MIN_DATAGRAM];
                        let key = s.key.as_ref().expect("decoded with it");
                        wire::encode(
                            Header {
                                kind: Kind::Pong,
                                ..h
                            },
                            key,
                            &mut pong,
                        );
                        out.push((from, pong));
                    }
                    _ => {}
                }
                return;
            }
            if let Some(s) = sessions.get_mut(&from) {
                if s.conn
                    .handle_packet_at(at.now, at.stamped, d, false)
                    .is_ok()
                {
                    s.last_heard = Instant::now();
                }
                return;
            }
            let slots: Vec<Slot> = sessions
                .iter()
                .map(|(p, s)| Slot {
                    peer: *p,
                    established: s.conn.is_established(),
                    idle: s.last_heard.elapsed(),
                })
                .collect();
            match admission::at_the_door(limits, tokens, &slots, from, d, secure) {
                Door::NotAnInit | Door::Drop => {}
                Door::Retry(retry) => out.push((from, retry)),
                Door::Admit { evict } => {
                    let Ok(mut conn) = Connection::new(config.clone(), Side::Server, at.now) else {
                        return;
                    };
                    if conn.handle_packet_at(at.now, at.stamped, d, false).is_err()
                        || conn.is_closed()
                    {
                        return;
                    }
                    if let Some(p) = evict {
                        sessions.remove(&p);
                    }
                    sessions.insert(from, Session::new(conn));
                }
            }
        });
        for (to, d) in out {
            let _ = self.port.socket().send_to(&d, to);
        }
        match result {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Ok(()),
            Err(e) => Err(NetError::Socket(e)),
        }
    }
}

impl Session {
    fn new(conn: Connection) -> Session {
        Session {
            conn,
            key: None,
            stream: Vec::new(),
            arrivals: HashMap::new(),
            held: 0,
            last_heard: Instant::now(),
            trains: 0,
            error: None,
        }
    }

    /// Acts on the prober's messages.
    fn advance(&mut self) -> Result<(), wire::WireError> {
        wire::read_stream(&mut self.conn, &mut self.stream);
        while let Some(m) = Control::decode(&mut self.stream)? {
            let mut out = Vec::new();
            match m {
                Control::Hello { key } => {
                    self.key = Some(key);
                    Reply::Ready.encode(&mut out);
                }
                Control::Report { train } => {
                    let arrivals = self.arrivals.remove(&train).unwrap_or_default();
                    self.held -= arrivals.len();
                    self.trains += 1;
                    Reply::Arrivals { train, arrivals }.encode(&mut out);
                }
            }
            if self.conn.write(&out) < out.len() {
                return Err(wire::WireError(
                    "the prober does not read its answers".into(),
                ));
            }
        }
        Ok(())
    }
}
