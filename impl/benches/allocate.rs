//! The figures of `docs/performance.md`: every consumer of a group allocating
//! on the same sorted lists, the way the Java figures were measured, and the
//! whole-group call.
//!
//! `cargo bench -p rocketmq-rebalance --bench allocate`
// criterion's macros define undocumented public functions.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rocketmq_rebalance::strategy::{Averagely, AveragelyByCircle, ConsistentHash};
use rocketmq_rebalance::workload::{bench_queues, client_ids};
use rocketmq_rebalance::AllocateStrategy;

/// (strategy, queues, consumers) at the sizes of the Java measurements.
fn cases() -> Vec<(Box<dyn AllocateStrategy>, usize, usize)> {
    vec![
        (Box::new(Averagely), 100_000, 10_000),
        (Box::new(AveragelyByCircle), 100_000, 10_000),
        (Box::new(ConsistentHash::new(10)), 10_000, 1_000),
        (Box::new(ConsistentHash::new(10)), 100_000, 10_000),
    ]
}

fn whole_group(c: &mut Criterion) {
    let mut group = c.benchmark_group("whole_group");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    for (strategy, q, n) in cases() {
        let queues = bench_queues(q);
        let consumers = client_ids(n);
        group.bench_function(BenchmarkId::new(strategy.name(), format!("{q}x{n}")), |b| {
            b.iter(|| black_box(strategy.allocate_group("group", &queues, &consumers)))
        });
    }
    group.finish();
}

fn every_consumer(c: &mut Criterion) {
    let mut group = c.benchmark_group("every_consumer_once");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    for (strategy, q, n) in cases().into_iter().take(3) {
        let queues = bench_queues(q);
        let consumers = client_ids(n);
        group.bench_function(BenchmarkId::new(strategy.name(), format!("{q}x{n}")), |b| {
            b.iter(|| {
                for current in &consumers {
                    black_box(
                        strategy
                            .allocate("group", current, &queues, &consumers)
                            .ok(),
                    );
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, whole_group, every_consumer);
criterion_main!(benches);
