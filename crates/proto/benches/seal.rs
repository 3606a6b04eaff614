//! The AEAD suites' cost per datagram: sealing and opening one 1400-byte datagram (the inner
//! packet sealed in place with its 11-byte clear header as associated data, then opened), for
//! ChaCha20-Poly1305 and AES-256-GCM. The faster one on a machine is its default
//! (`Cipher::preferred`); the numbers are in `src/secure/mod.rs` and `bench/README.md`.
//!
//! Run: `cargo bench -p longhaul-proto --bench seal`. Besides criterion's report it prints
//! datagrams per second (seal + open) and the payload rate that allows on one core.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use longhaul_proto::packet::{SEAL_HEADER_LEN, SEAL_OVERHEAD};
use longhaul_proto::secure::seal::PacketKey;
use longhaul_proto::Cipher;
use std::hint::black_box;
use std::time::{Duration, Instant};

const PAYLOAD: usize = 1400;

fn seal_open(c: &mut Criterion) {
    let mut g = c.benchmark_group("seal_open_1400");
    g.throughput(Throughput::Bytes(PAYLOAD as u64));
    for cipher in Cipher::ALL {
        let key = PacketKey::new(cipher, &[0x42; 32]);
        let mut buf = vec![0xa5u8; PAYLOAD + SEAL_OVERHEAD];
        let mut seal_number = 0u64;
        let mut step = |buf: &mut [u8]| {
            seal_number += 1;
            let n = key.seal(0, seal_number, buf, PAYLOAD).unwrap();
            let m = key.open(seal_number, &mut buf[..n]).unwrap();
            black_box(m);
        };
        g.bench_function(cipher.name(), |b| b.iter(|| step(&mut buf)));
        // A plain rate, for the README.
        let n = 200_000u32;
        let start = Instant::now();
        for _ in 0..n {
            step(&mut buf);
        }
        let per_s = n as f64 / start.elapsed().as_secs_f64();
        println!(
            "{:>18}: {:.2} M datagrams/s sealed and opened ({:.1} Gb/s of payload, one core)",
            cipher.name(),
            per_s / 1e6,
            per_s * PAYLOAD as f64 * 8.0 / 1e9
        );
    }
    let _ = SEAL_HEADER_LEN;
    println!("preferred on this machine: {}", Cipher::preferred());
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1))
}

criterion_group! { name = benches; config = config(); targets = seal_open }
criterion_main!(benches);
