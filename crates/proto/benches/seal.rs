//! The AEAD suites' cost per datagram: sealing and opening one 1400-byte datagram (the inner
//! packet sealed in place with its 11-byte clear header as associated data, then opened), for
//! each suite (`Cipher::ALL`). The fastest one on a machine is its default
//! (`Cipher::preferred`); the numbers are in `src/secure/mod.rs` and `bench/README.md`.
//!
//! Run: `cargo bench -p longhaul-proto --bench seal`. Besides criterion's report it prints
//! datagrams per second (seal + open) and the payload rate that allows on one core.
//!
//! A second group seals 64 KiB data packets whose payloads lie in a 32 MiB buffer, as a file's
//! chunks do, two ways: the payload copied after its 29-byte header and the packet sealed in
//! place (`PacketKey::seal`), and the payload lent (`PacketKey::seal_lent`: the header in place,
//! the payload encrypted from where it lies into the datagram); it prints each one's rate.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use longhaul_proto::packet::{DATA_HEADER_LEN, SEAL_HEADER_LEN, SEAL_OVERHEAD};
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

/// Payload bytes of a large data packet (a loopback datagram's).
const LARGE: usize = 64 * 1024 - DATA_HEADER_LEN - SEAL_OVERHEAD;
/// The buffer the payloads are taken from, in turn: larger than the caches' share of one core.
const SOURCE: usize = 32 << 20;

fn seal_lent_or_copied(c: &mut Criterion) {
    let mut g = c.benchmark_group("seal_64k");
    g.throughput(Throughput::Bytes(LARGE as u64));
    let source: Vec<u8> = (0..SOURCE).map(|i| (i * 7 + i / 4093) as u8).collect();
    let chunks = SOURCE / LARGE;
    for cipher in Cipher::ALL {
        let key = PacketKey::new(cipher, &[0x42; 32]);
        let mut buf = vec![0u8; DATA_HEADER_LEN + LARGE + SEAL_OVERHEAD];
        let mut i = 0u64;
        let mut copied = |buf: &mut [u8]| {
            i += 1;
            let payload = &source[(i as usize % chunks) * LARGE..][..LARGE];
            buf[SEAL_HEADER_LEN + DATA_HEADER_LEN..][..LARGE].copy_from_slice(payload);
            black_box(key.seal(0, i, buf, DATA_HEADER_LEN + LARGE).unwrap());
        };
        let mut j = 0u64;
        let mut lent = |buf: &mut [u8]| {
            j += 1;
            let payload = &source[(j as usize % chunks) * LARGE..][..LARGE];
            black_box(key.seal_lent(0, j, buf, DATA_HEADER_LEN, payload).unwrap());
        };
        g.bench_function(format!("{}_copied", cipher.name()), |b| {
            b.iter(|| copied(&mut buf))
        });
        g.bench_function(format!("{}_lent", cipher.name()), |b| {
            b.iter(|| lent(&mut buf))
        });
        // Plain rates, for the README: each way's best of five runs of 4,000 packets.
        let rate = |step: &mut dyn FnMut(&mut [u8]), buf: &mut [u8]| {
            let best = (0..5)
                .map(|_| {
                    let start = Instant::now();
                    for _ in 0..4_000 {
                        step(buf);
                    }
                    start.elapsed().as_secs_f64()
                })
                .fold(f64::MAX, f64::min);
            4_000.0 * LARGE as f64 / best / 1e9
        };
        let (c_rate, l_rate) = (rate(&mut copied, &mut buf), rate(&mut lent, &mut buf));
        println!(
            "{:>18}: 64 KiB packets, payload copied then sealed {c_rate:.2} GB/s, lent {l_rate:.2} GB/s ({:.0} % less time)",
            cipher.name(),
            100.0 * (1.0 - c_rate / l_rate)
        );
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1))
}

criterion_group! { name = benches; config = config(); targets = seal_open, seal_lent_or_copied }
criterion_main!(benches);
