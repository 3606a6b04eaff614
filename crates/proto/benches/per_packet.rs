//! Per-packet cost of the transport: one data packet from the sender's `poll_transmit` through
//! the receiver's `handle_packet`, plus the receiver's ACKs (one per two packets) through the
//! sender's `handle_packet`, and the application's write/read. The two connections are joined
//! by an ideal zero-delay path; virtual time advances 1 µs per packet.
//!
//! `real_reno_sealed` is `real_reno` with security on (every datagram sealed and opened with
//! this machine's preferred cipher): the difference is what the encryption costs per packet.
//!
//! Baseline in the same run: encoding and decoding one data header (the least any transport
//! must do per packet). Report the transport as ns/packet and as a multiple of that baseline.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use longhaul_cc::CcSpec;
use longhaul_proto::packet::{self, DataHeader};
use longhaul_proto::{Config, Connection, Identity, PacketKind, PeerPolicy, Security, Side, Time};
use std::hint::black_box;
use std::time::{Duration, Instant};

struct Pair {
    client: Connection,
    server: Connection,
    now: Time,
    buf: Vec<u8>,
    ack: Vec<u8>,
    synthetic: bool,
    payload: Vec<u8>,
    sink: Vec<u8>,
    sent: u64,
}

impl Pair {
    fn new(algorithm: &str, synthetic: bool, secure: bool) -> Pair {
        let security = if secure {
            Security::noise(Identity::from_private([7; 32]), PeerPolicy::Any)
        } else {
            Security::Off
        };
        let cfg = Config {
            synthetic,
            security,
            recv_window: 1 << 30,
            send_buffer: 1 << 26,
            ..Config::new(CcSpec::default_for(algorithm).unwrap())
        };
        let now = Time::from_millis(1);
        let mut client = Connection::new(cfg.clone(), Side::Client, now).unwrap();
        let mut server = Connection::new(cfg, Side::Server, now).unwrap();
        let mut buf = vec![0u8; 65_536];
        let t = client.poll_transmit(now, &mut buf).unwrap();
        server.handle_packet(now, &buf[..t.len]).unwrap();
        let t = server.poll_transmit(now, &mut buf).unwrap();
        client
            .handle_packet(now + Duration::from_micros(1), &buf[..t.len])
            .unwrap();
        if secure {
            // FINISH.
            let t = client.poll_transmit(now, &mut buf).unwrap();
            server.handle_packet(now, &buf[..t.len]).unwrap();
        }
        Pair {
            client,
            server,
            now: now + Duration::from_micros(1),
            buf,
            ack: vec![0u8; 65_536],
            synthetic,
            payload: vec![0xa5; 1 << 20],
            sink: vec![0u8; 1 << 20],
            sent: 0,
        }
    }

    /// Move one data packet (dropping it if `drop`), and everything it causes.
    fn step(&mut self, drop: bool) {
        if self.client.send_buffered() < 1 << 25 {
            if self.synthetic {
                self.client.write_synthetic(1 << 25);
            } else {
                self.client.write(&self.payload);
            }
        }
        loop {
            match self.client.poll_transmit(self.now, &mut self.buf) {
                Some(t) if t.kind == PacketKind::Data => {
                    if !drop {
                        let _ = self.server.handle_packet(self.now, &self.buf[..t.len]);
                    }
                    break;
                }
                Some(_) => continue,
                None => {
                    let next = self.client.poll_timeout().unwrap_or(self.now);
                    self.now = next.max(self.now + Duration::from_nanos(100));
                    self.client.handle_timeout(self.now);
                    self.server.handle_timeout(self.now);
                    self.deliver_acks();
                }
            }
        }
        self.deliver_acks();
        if self.synthetic {
            black_box(self.server.read_synthetic());
        } else {
            while self.server.read(&mut self.sink) > 0 {}
        }
        self.sent += 1;
        self.now += Duration::from_micros(1);
    }

    fn deliver_acks(&mut self) {
        while let Some(t) = self.server.poll_transmit(self.now, &mut self.ack) {
            let _ = self.client.handle_packet(self.now, &self.ack[..t.len]);
        }
    }
}

fn per_packet(c: &mut Criterion) {
    let mut g = c.benchmark_group("per_packet");
    g.throughput(Throughput::Elements(1));

    let header = DataHeader {
        packet_number: 123_456,
        timestamp_us: 987_654,
        offset: 1 << 30,
        len: 1448,
        fin: false,
        synthetic: true,
    };
    let mut buf = [0u8; 64];
    g.bench_function("baseline_codec_roundtrip", |b| {
        b.iter(|| {
            let n = packet::encode_data_header(black_box(&header), &mut buf).unwrap();
            black_box(packet::decode(&buf[..n]).unwrap());
        })
    });

    for (name, algorithm, synthetic, secure, loss_every) in [
        ("synthetic_reno", "reno", true, false, 0u64),
        ("synthetic_reno_1pct_loss", "reno", true, false, 100),
        ("synthetic_bbr", "bbr", true, false, 0),
        ("real_reno", "reno", false, false, 0),
        ("real_reno_sealed", "reno", false, true, 0),
    ] {
        g.bench_function(name, |b| {
            let mut p = Pair::new(algorithm, synthetic, secure);
            let drop = |sent: u64| loss_every > 0 && sent % loss_every == 7;
            // Warm up: grow the rings and open the window.
            for _ in 0..20_000 {
                p.step(drop(p.sent));
            }
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    p.step(drop(p.sent));
                }
                start.elapsed()
            })
        });
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1))
}

criterion_group! { name = benches; config = config(); targets = per_packet }
criterion_main!(benches);
