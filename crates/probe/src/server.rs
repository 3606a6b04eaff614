//! The probe server's side of a probe, as a service of a receiver
//! ([`longhaul_net::service`]): `longhaul recv` serves probes beside transfers with it, and
//! `longhaul probe --serve` ([`Server`]) is a receiver that serves probes only. Either admits
//! provers as it admits senders (the Noise handshake, the same keys and trust, retry tokens
//! and per-source limits of [`longhaul_net::admission`]); a session stamps the arrival of its
//! prober's authenticated train datagrams, echoes its pings, and reports each train's
//! arrivals when asked ([`crate::wire`]).
//!
//! While a probe is served the socket reads without receive coalescing (GRO), so each
//! datagram keeps its own kernel stamp: a coalesced batch would carry one stamp for many
//! packets and hide their dispersion.

use crate::wire::{self, Control, Header, Kind, Reply, MAX_TRAIN};
use longhaul_net::admission::Limits;
use longhaul_net::recv::{Event, Receiver, RecvOptions};
use longhaul_net::service::{Service, ServiceSession};
use longhaul_net::NetError;
use longhaul_proto::{Config, Connection, Time};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The most arrivals a session holds unreported.
pub const MAX_HELD: usize = 1 << 20;

/// One prober's session.
#[derive(Default)]
struct Session {
    key: Option<[u8; 32]>,
    stream: Vec<u8>,
    arrivals: HashMap<u32, Vec<(u32, u64)>>,
    held: usize,
    trains: u32,
}

/// The probe service: a session for each connection whose stream opens with
/// [`Control::Hello`], and the probe datagrams ([`wire::is_probe`]) of its prober.
pub struct Probes;

/// The probe service, for [`RecvOptions::service`].
pub fn service() -> Arc<dyn Service> {
    Arc::new(Probes)
}

impl Service for Probes {
    fn claims(&self, first: &[u8]) -> Option<bool> {
        first.first().map(|&op| op == Control::HELLO)
    }

    fn owns(&self, d: &[u8]) -> bool {
        wire::is_probe(d)
    }

    fn session(&self) -> Box<dyn ServiceSession> {
        Box::<Session>::default()
    }
}

impl ServiceSession for Session {
    /// Acts on the prober's messages.
    fn advance(&mut self, input: &[u8], conn: &mut Connection) -> Result<(), String> {
        self.stream.extend_from_slice(input);
        while let Some(m) = Control::decode(&mut self.stream).map_err(|e| e.to_string())? {
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
            if conn.write(&out) < out.len() {
                return Err("the prober does not read its answers".into());
            }
        }
        Ok(())
    }

    /// A train datagram's arrival is kept; a ping is answered with its pong.
    fn datagram(&mut self, d: &[u8], stamped: Time) -> Option<Vec<u8>> {
        let key = self.key.as_ref()?;
        let h = wire::decode(d, key)?;
        match h.kind {
            Kind::Train if h.seq < MAX_TRAIN && self.held < MAX_HELD => {
                self.arrivals
                    .entry(h.train)
                    .or_default()
                    .push((h.seq, stamped.as_nanos()));
                self.held += 1;
                None
            }
            Kind::Ping => {
                let mut pong = vec![0u8; wire::MIN_DATAGRAM];
                let h = Header {
                    kind: Kind::Pong,
                    ..h
                };
                wire::encode(h, key, &mut pong);
                Some(pong)
            }
            _ => None,
        }
    }

    fn summary(&self) -> String {
        format!("a probe of {} trains", self.trains)
    }
}

/// How a session ended.
#[derive(Clone, Debug)]
pub struct SessionEnd {
    /// The prober's address.
    pub peer: SocketAddr,
    /// Its authenticated key, if it got that far.
    pub key: Option<[u8; 32]>,
    /// What the session did (`a probe of 12 trains`); `None` for a session that never asked for a probe.
    pub served: Option<String>,
    /// What went wrong, if anything.
    pub error: Option<String>,
}

/// A bound probe server: a receiver that serves probes only.
pub struct Server {
    receiver: Receiver,
}

impl Server {
    /// Binds to `addr` with connection settings `config` and admission `limits`.
    pub fn bind(addr: SocketAddr, config: Config, limits: Limits) -> Result<Server, NetError> {
        Ok(Server {
            receiver: Receiver::bind(addr, Server::options(config, limits))?,
        })
    }

    /// Binds to `port` on `ip`, or on every address as `longhaul recv` does
    /// ([`Receiver::bind_port`]).
    pub fn bind_port(
        ip: Option<IpAddr>,
        port: u16,
        config: Config,
        limits: Limits,
    ) -> Result<Server, NetError> {
        Ok(Server {
            receiver: Receiver::bind_port(ip, port, Server::options(config, limits))?,
        })
    }

    /// A receiver's options for serving probes only.
    fn options(config: Config, limits: Limits) -> RecvOptions {
        RecvOptions {
            config,
            dir: std::path::PathBuf::new(),
            overwrite: false,
            discard: true,
            max_size: 0,
            limits,
            offload: false,
            sender_name: None,
            recv_thread: Some(false),
            service: Some(service()),
            transfers: false,
        }
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.receiver.local_addr()
    }

    /// Serves until `stop`, or after `limit` probes have ended; `event` hears of each end.
    pub fn serve(
        &mut self,
        stop: &AtomicBool,
        limit: Option<usize>,
        mut event: impl FnMut(&SessionEnd),
    ) -> Result<usize, NetError> {
        self.receiver.serve(stop, limit, |e| {
            if let Event::Session(r) = e {
                event(&SessionEnd {
                    peer: r.peer,
                    key: r.sender_key,
                    served: r.service.clone(),
                    error: r.error.clone(),
                });
            }
        })
    }
}
