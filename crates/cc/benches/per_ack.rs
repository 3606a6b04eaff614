//! Per-ACK cost of every algorithm and preset.
//!
//! Each controller replays the events of its own recorded "equilibrium" and
//! "slow_start_and_avoidance" sequences (the shared test vectors' recipes), so the work per
//! event is what the algorithm really does on a path. Reno is the baseline: compare the
//! others' ns/event against it in the same run.

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use longhaul_cc::vectors;

fn per_ack(c: &mut Criterion) {
    let mut group = c.benchmark_group("per_event");
    for (name, spec) in vectors::vector_specs() {
        let file = vectors::generate(&spec).expect("vectors");
        let events: Vec<_> = file
            .sequences
            .iter()
            .flat_map(|s| s.steps.iter().map(|st| st.event))
            .collect();
        group.throughput(Throughput::Elements(events.len() as u64));
        group.bench_function(&name, |b| {
            b.iter_batched(
                || spec.build(&file.setup).expect("build"),
                |mut cc| {
                    for ev in &events {
                        ev.apply(cc.as_mut());
                    }
                    black_box(cc.cwnd())
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, per_ack);
criterion_main!(benches);
