//! An in-memory network for tests: two one-way links between two connections, each with a rate,
//! a delay, a drop-tail queue, random loss, reordering and duplication, driven by a seeded RNG.

#![allow(dead_code)]

use longhaul_proto::{Config, Connection, Side, Time};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

#[derive(Clone, Copy, Debug)]
pub struct LinkParams {
    pub delay: Duration,
    pub rate_bps: f64,
    /// Packets the queue holds before dropping (drop-tail).
    pub queue_packets: usize,
    pub loss: f64,
    /// Probability that a packet is held back by up to `reorder_delay`.
    pub reorder: f64,
    pub reorder_delay: Duration,
    pub duplicate: f64,
    /// The largest datagram (UDP payload, bytes) a hop carries: larger ones vanish without a
    /// word, as at a narrower hop that sends no ICMP (a path MTU black hole).
    pub max_datagram: usize,
    /// From this time on, the hop carries datagrams up to this size instead (a route change).
    pub narrows: Option<(Time, usize)>,
}

impl LinkParams {
    pub fn clean(rate_bps: f64, delay: Duration) -> LinkParams {
        LinkParams {
            delay,
            rate_bps,
            queue_packets: 1000,
            loss: 0.0,
            reorder: 0.0,
            reorder_delay: Duration::ZERO,
            duplicate: 0.0,
            max_datagram: usize::MAX,
            narrows: None,
        }
    }

    pub fn hostile(rate_bps: f64, delay: Duration, loss: f64) -> LinkParams {
        LinkParams {
            loss,
            reorder: 0.05,
            reorder_delay: Duration::from_millis(5),
            duplicate: 0.02,
            ..LinkParams::clean(rate_bps, delay)
        }
    }
}

pub struct Link {
    p: LinkParams,
    rng: SmallRng,
    next_free: Time,
    seq: u64,
    arrivals: BinaryHeap<Reverse<(Time, u64, Vec<u8>)>>,
    pub sent: u64,
    pub dropped_queue: u64,
    pub dropped_random: u64,
    pub duplicated: u64,
    pub dropped_too_big: u64,
    /// The largest datagram delivered.
    pub largest_delivered: usize,
}

impl Link {
    pub fn new(p: LinkParams, seed: u64) -> Link {
        Link {
            p,
            rng: SmallRng::seed_from_u64(seed),
            next_free: Time::ZERO,
            seq: 0,
            arrivals: BinaryHeap::new(),
            sent: 0,
            dropped_queue: 0,
            dropped_random: 0,
            duplicated: 0,
            dropped_too_big: 0,
            largest_delivered: 0,
        }
    }

    fn tx_time(&self, wire_len: usize) -> Duration {
        Duration::from_secs_f64(wire_len as f64 * 8.0 / self.p.rate_bps)
    }

    pub fn send(&mut self, now: Time, bytes: &[u8], wire_len: usize) {
        self.sent += 1;
        let max = match self.p.narrows {
            Some((at, max)) if now >= at => max,
            _ => self.p.max_datagram,
        };
        if wire_len > max {
            self.dropped_too_big += 1;
            return;
        }
        let start = self.next_free.max(now);
        let backlog = start - now;
        if backlog > self.tx_time(wire_len) * self.p.queue_packets as u32 {
            self.dropped_queue += 1;
            return;
        }
        self.next_free = start + self.tx_time(wire_len);
        if self.rng.gen::<f64>() < self.p.loss {
            self.dropped_random += 1;
            return;
        }
        let mut at = self.next_free + self.p.delay;
        if self.rng.gen::<f64>() < self.p.reorder {
            at += self.p.reorder_delay.mul_f64(self.rng.gen::<f64>());
        }
        self.push(at, bytes);
        self.largest_delivered = self.largest_delivered.max(wire_len);
        if self.rng.gen::<f64>() < self.p.duplicate {
            self.duplicated += 1;
            let later = at + self.p.reorder_delay.mul_f64(self.rng.gen::<f64>());
            self.push(later, bytes);
        }
    }

    fn push(&mut self, at: Time, bytes: &[u8]) {
        self.seq += 1;
        self.arrivals.push(Reverse((at, self.seq, bytes.to_vec())));
    }

    pub fn next_arrival(&self) -> Option<Time> {
        self.arrivals.peek().map(|Reverse((t, _, _))| *t)
    }

    pub fn pop_due(&mut self, now: Time) -> Option<Vec<u8>> {
        if self.next_arrival()? <= now {
            self.arrivals.pop().map(|Reverse((_, _, b))| b)
        } else {
            None
        }
    }
}

/// What the application at each end does.
pub enum Workload<'a> {
    /// The client sends these bytes to the server (real mode).
    Bytes(&'a [u8]),
    /// The client sends this many synthetic bytes.
    Synthetic(u64),
    /// Both send these bytes to each other (real mode).
    Both(&'a [u8], &'a [u8]),
}

pub struct Outcome {
    pub client: Connection,
    pub server: Connection,
    /// Bytes the server read (real mode) / the client read (for `Both`).
    pub at_server: Vec<u8>,
    pub at_client: Vec<u8>,
    pub synthetic_read: u64,
    pub finished_at: Time,
    pub rejected: Vec<String>,
    pub ab: Link,
    pub ba: Link,
}

struct Side_<'a> {
    data: &'a [u8],
    written: usize,
    synthetic_left: u64,
}

fn feed(c: &mut Connection, s: &mut Side_<'_>, synthetic: bool) {
    if synthetic {
        if s.synthetic_left > 0 {
            s.synthetic_left -= c.write_synthetic(s.synthetic_left);
            if s.synthetic_left == 0 {
                c.finish();
            }
        }
    } else if s.written < s.data.len() || (s.data.is_empty() && s.written == 0) {
        s.written += c.write(&s.data[s.written..]);
        if s.written == s.data.len() {
            c.finish();
            s.written = usize::MAX;
        }
    }
}

fn drain(c: &mut Connection, out: &mut Vec<u8>, synthetic: bool, count: &mut u64) {
    if synthetic {
        *count += c.read_synthetic();
        return;
    }
    read_all(c, out);
}

/// Append every stream byte `c` has ready to `out`.
pub fn read_all(c: &mut Connection, out: &mut Vec<u8>) {
    let mut buf = [0u8; 65536];
    loop {
        let n = c.read(&mut buf);
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// The earliest of the two links' next arrivals and the two connections' timers.
pub fn next_event(ab: &Link, ba: &Link, c: &Connection, s: &Connection) -> Option<Time> {
    [
        ab.next_arrival(),
        ba.next_arrival(),
        c.poll_timeout(),
        s.poll_timeout(),
    ]
    .into_iter()
    .flatten()
    .min()
}

/// Run a transfer until both streams are complete, or panic at `limit` (virtual time).
pub fn run(
    client_cfg: Config,
    server_cfg: Config,
    ab: LinkParams,
    ba: LinkParams,
    work: Workload<'_>,
    seed: u64,
    limit: Time,
) -> Outcome {
    run_observed(client_cfg, server_cfg, ab, ba, work, seed, limit, |_, _| {})
}

/// [`run`], showing the client to `observe` before and after each datagram it takes in.
#[allow(clippy::too_many_arguments)]
pub fn run_observed(
    client_cfg: Config,
    server_cfg: Config,
    ab: LinkParams,
    ba: LinkParams,
    work: Workload<'_>,
    seed: u64,
    limit: Time,
    mut observe: impl FnMut(&Connection, bool),
) -> Outcome {
    let synthetic = client_cfg.synthetic;
    let mut now = Time::ZERO;
    let mut client = Connection::new(client_cfg, Side::Client, now).expect("client config");
    let mut server = Connection::new(server_cfg, Side::Server, now).expect("server config");
    let mut ab = Link::new(ab, seed);
    let mut ba = Link::new(ba, seed ^ 0x9e37_79b9_7f4a_7c15);
    let (cdata, sdata, syn) = match work {
        Workload::Bytes(b) => (b, &[][..], 0),
        Workload::Synthetic(n) => (&[][..], &[][..], n),
        Workload::Both(a, b) => (a, b, 0),
    };
    let mut cside = Side_ {
        data: cdata,
        written: 0,
        synthetic_left: syn,
    };
    let mut sside = Side_ {
        data: sdata,
        written: 0,
        synthetic_left: 0,
    };
    let mut at_server = Vec::new();
    let mut at_client = Vec::new();
    let mut synthetic_read = 0u64;
    let mut ignored = 0u64;
    let mut rejected = Vec::new();
    let mut buf = vec![0u8; 65536];
    loop {
        feed(&mut client, &mut cside, synthetic);
        if !synthetic {
            feed(&mut server, &mut sside, synthetic);
        } else if sside.written == 0 {
            server.finish();
            sside.written = usize::MAX;
        }
        drain(&mut server, &mut at_server, synthetic, &mut synthetic_read);
        drain(&mut client, &mut at_client, synthetic, &mut ignored);
        while let Some(t) = client.poll_transmit(now, &mut buf) {
            ab.send(now, &buf[..t.len], t.wire_len);
        }
        while let Some(t) = server.poll_transmit(now, &mut buf) {
            ba.send(now, &buf[..t.len], t.wire_len);
        }
        if client.is_send_complete()
            && server.is_send_complete()
            && client.is_recv_finished()
            && server.is_recv_finished()
        {
            break;
        }
        assert!(
            !client.is_closed() && !server.is_closed(),
            "connection closed early: client {:?} server {:?}",
            client.close_reason(),
            server.close_reason()
        );
        let next = next_event(&ab, &ba, &client, &server)
            .expect("nothing scheduled: the transfer is stuck");
        now = now.max(next);
        assert!(
            now <= limit,
            "transfer not done by {limit}: server has {} bytes, client stats {:?}",
            at_server.len() as u64 + synthetic_read,
            client.stats()
        );
        while let Some(p) = ab.pop_due(now) {
            if let Err(e) = server.handle_packet(now, &p) {
                rejected.push(format!("server: {e}"));
            }
        }
        while let Some(p) = ba.pop_due(now) {
            observe(&client, false);
            if let Err(e) = client.handle_packet(now, &p) {
                rejected.push(format!("client: {e}"));
            }
            observe(&client, true);
        }
        if client.poll_timeout().is_some_and(|t| t <= now) {
            client.handle_timeout(now);
        }
        if server.poll_timeout().is_some_and(|t| t <= now) {
            server.handle_timeout(now);
        }
    }
    Outcome {
        client,
        server,
        at_server,
        at_client,
        synthetic_read,
        finished_at: now,
        rejected,
        ab,
        ba,
    }
}

/// Deterministic pseudo-random bytes.
pub fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut v = vec![0u8; n];
    rng.fill(&mut v[..]);
    v
}
