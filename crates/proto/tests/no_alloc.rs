//! Steady state allocates nothing: after a warm-up that grows the rings, moving data packets,
//! ACKs, losses and retransmissions through a connection pair performs zero heap allocations.
//! Counted with a wrapping global allocator; this file holds one test so no other test's
//! allocations interfere.

use longhaul_cc::{algorithms, CcSpec};
use longhaul_proto::packet::DataHeader;
use longhaul_proto::{
    Cipher, Config, Connection, Identity, KeyLimits, PacketKind, PeerPolicy, Security, Side, Time,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Datagrams each direction of the path holds.
const CAPACITY: usize = 400;

/// Move `n` data packets over a 1 ms path (a FIFO per direction, fixed capacity), dropping
/// every `loss_every`-th.
struct Path {
    client: Connection,
    server: Connection,
    now: Time,
    /// Datagrams in flight: (arrival, length, bytes) in fixed slots.
    to_server: Vec<(Time, usize, [u8; 1600])>,
    /// Data headers carried as structs (`poll_transmit_header`), when `carry` is set:
    /// (arrival, header), a FIFO of fixed capacity (one delay, so arrivals are in order).
    carried: VecDeque<(Time, DataHeader)>,
    carry: bool,
    to_client: Vec<(Time, usize, [u8; 1600])>,
    buf: [u8; 1600],
    sink: Vec<u8>,
    payload: Vec<u8>,
    count: u64,
}

impl Path {
    fn run(&mut self, n: u64, loss_every: u64, synthetic: bool) {
        let delay = Duration::from_micros(500);
        let target = self.count + n;
        while self.count < target {
            if self.client.send_buffered() < 1 << 20 {
                if synthetic {
                    self.client.write_synthetic(1 << 20);
                } else {
                    self.client.write(&self.payload);
                }
            }
            loop {
                let (t, header) = if self.carry {
                    match self.client.poll_transmit_header(self.now, &mut self.buf) {
                        Some(x) => x,
                        None => break,
                    }
                } else {
                    match self.client.poll_transmit(self.now, &mut self.buf) {
                        Some(t) => (t, None),
                        None => break,
                    }
                };
                if t.kind == PacketKind::Data {
                    self.count += 1;
                    if loss_every > 0 && self.count % loss_every == 0 {
                        continue;
                    }
                }
                if let Some(h) = header {
                    assert!(self.carried.len() < CAPACITY, "path full");
                    self.carried.push_back((self.now + delay, h));
                    continue;
                }
                let slot = self
                    .to_server
                    .iter_mut()
                    .find(|s| s.1 == 0)
                    .expect("path full");
                *slot = (self.now + delay, t.len, [0; 1600]);
                slot.2[..t.len].copy_from_slice(&self.buf[..t.len]);
            }
            while let Some(t) = self.server.poll_transmit(self.now, &mut self.buf) {
                let slot = self
                    .to_client
                    .iter_mut()
                    .find(|s| s.1 == 0)
                    .expect("path full");
                *slot = (self.now + delay, t.len, [0; 1600]);
                slot.2[..t.len].copy_from_slice(&self.buf[..t.len]);
            }
            if synthetic {
                self.server.read_synthetic();
            } else {
                while self.server.read(&mut self.sink) > 0 {}
            }
            // Advance to the next event.
            let next = self
                .to_server
                .iter()
                .chain(self.to_client.iter())
                .filter(|s| s.1 > 0)
                .map(|s| s.0)
                .chain(self.carried.front().map(|s| s.0))
                .chain(self.client.poll_timeout())
                .chain(self.server.poll_timeout())
                .min()
                .expect("stuck");
            self.now = self.now.max(next);
            // Deliver in arrival order (slots are few; a linear scan per delivery is fine).
            // Carried headers: deliver the due ones, before the encoded packets due at the same
            // time.
            while self.carried.front().is_some_and(|s| s.0 <= self.now) {
                let (_, h) = self.carried.pop_front().expect("due");
                self.server.handle_data_header(self.now, &h, false).unwrap();
            }
            loop {
                let due = self
                    .to_server
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.1 > 0 && s.0 <= self.now)
                    .min_by_key(|(_, s)| s.0)
                    .map(|(i, _)| i);
                let Some(i) = due else { break };
                let (_, len, bytes) = self.to_server[i];
                self.to_server[i].1 = 0;
                self.server.handle_packet(self.now, &bytes[..len]).unwrap();
            }
            loop {
                let due = self
                    .to_client
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.1 > 0 && s.0 <= self.now)
                    .min_by_key(|(_, s)| s.0)
                    .map(|(i, _)| i);
                let Some(i) = due else { break };
                let (_, len, bytes) = self.to_client[i];
                self.to_client[i].1 = 0;
                self.client.handle_packet(self.now, &bytes[..len]).unwrap();
            }
            self.client.handle_timeout(self.now);
            self.server.handle_timeout(self.now);
        }
    }
}

fn path(algorithm: &str, synthetic: bool, carry: bool, secure: bool) -> Path {
    let security = if secure {
        // Keys change every 4000 datagrams, so key updates happen in the measured stretch too.
        Security::Noise {
            local: Identity::from_private([3; 32]),
            peer: PeerPolicy::Any,
            cipher: Cipher::preferred(),
            key_limits: Some(KeyLimits {
                packets_per_key: 4000,
                failed_opens: 1 << 30,
            }),
        }
    } else {
        Security::Off
    };
    let cfg = Config {
        security,
        synthetic,
        recv_window: 8 << 20,
        send_buffer: 4 << 20,
        setup: longhaul_cc::Setup {
            // Keep the window within the fixed path capacity.
            max_cwnd: 200.0,
            ..Default::default()
        },
        ..Config::new(CcSpec::default_for(algorithm).unwrap())
    };
    let now = Time::from_millis(1);
    Path {
        client: Connection::new(cfg.clone(), Side::Client, now).unwrap(),
        server: Connection::new(cfg, Side::Server, now).unwrap(),
        now,
        to_server: vec![(Time::ZERO, 0, [0; 1600]); CAPACITY],
        carried: VecDeque::with_capacity(CAPACITY),
        carry,
        to_client: vec![(Time::ZERO, 0, [0; 1600]); CAPACITY],
        buf: [0; 1600],
        sink: vec![0; 1 << 16],
        payload: vec![0x5a; 1 << 16],
        count: 0,
    }
}

#[test]
fn steady_state_moves_packets_without_allocating() {
    for a in algorithms() {
        for (synthetic, carry, secure) in [
            (true, false, false),
            (true, true, false),
            (false, false, false),
            (false, false, true),
            (true, true, true),
        ] {
            let mut p = path(a.name, synthetic, carry, secure);
            // Warm up, with losses, so every ring and queue reaches its working size.
            p.run(30_000, 50, synthetic);
            let before = ALLOCATIONS.load(Ordering::Relaxed);
            p.run(10_000, 50, synthetic);
            let allocated = ALLOCATIONS.load(Ordering::Relaxed) - before;
            let s = p.client.stats();
            assert!(
                s.packets_lost > 0 && s.packets_retransmitted > 0,
                "{}",
                a.name
            );
            if secure {
                assert!(p.client.is_secure() && p.server.is_established());
                assert!(s.key_updates >= 5 && p.server.stats().peer_key_updates >= 5);
            }
            assert_eq!(
                allocated,
                0,
                "{} ({}{}): {allocated} allocations for 10 000 packets",
                a.name,
                match (synthetic, carry) {
                    (true, true) => "synthetic, headers carried",
                    (true, false) => "synthetic",
                    _ => "real",
                },
                if secure { ", sealed" } else { "" }
            );
        }
    }
}
