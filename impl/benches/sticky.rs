//! The `STICKY` figures of `docs/performance.md`: the whole group at once,
//! and one consumer's call (which computes the whole group too).
//!
//! `cargo bench -p rocketmq-rebalance --bench sticky`
//!
//! The target is the ConsistentHash one: 100,000 queues and 10,000
//! consumers in under 100 ms.
// criterion's macros define undocumented public functions.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rocketmq_rebalance::strategy::Sticky;
use rocketmq_rebalance::workload::{bench_queues, client_ids};
use rocketmq_rebalance::AllocateStrategy;

/// (queues, consumers): the target size and two smaller ones.
const SIZES: &[(usize, usize)] = &[(1_000, 100), (10_000, 1_000), (100_000, 10_000)];

fn whole_group(c: &mut Criterion) {
    let mut group = c.benchmark_group("sticky_whole_group");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    let sticky = Sticky::new();
    for &(q, n) in SIZES {
        let queues = bench_queues(q);
        let consumers = client_ids(n);
        group.bench_function(BenchmarkId::new("STICKY", format!("{q}x{n}")), |b| {
            b.iter(|| black_box(sticky.allocate_group("group", &queues, &consumers)))
        });
    }
    group.finish();
}

fn one_consumer(c: &mut Criterion) {
    let mut group = c.benchmark_group("sticky_one_consumer");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    let sticky = Sticky::new();
    let (q, n) = (100_000, 10_000);
    let queues = bench_queues(q);
    let consumers = client_ids(n);
    let me = consumers[n / 2].clone();
    group.bench_function(BenchmarkId::new("STICKY", format!("{q}x{n}")), |b| {
        b.iter(|| black_box(sticky.allocate("group", &me, &queues, &consumers)))
    });
    group.finish();
}

criterion_group!(benches, whole_group, one_consumer);
criterion_main!(benches);
