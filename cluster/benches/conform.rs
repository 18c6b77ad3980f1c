//! Trace validation's speed on recorded real runs: a trace of three
//! consumers (a few thousand events) read, translated and decided.
//!
//! `cargo bench -p rocketmq-rebalance-cluster --bench conform`
// criterion's macros define undocumented public functions.
#![allow(missing_docs)]

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rocketmq_rebalance::strategy_from_name;
use rocketmq_rebalance_cluster::trace;
use rocketmq_rebalance_cluster::translate::validate;
use rocketmq_rebalance_model::{Bounds, Config, NetworkKind, Scenario, Sizes, Verdict};

fn text(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/traces")
        .join(name);
    std::fs::read_to_string(path).expect("a recorded trace")
}

fn config(scenario: Scenario, sizes: Sizes) -> Config {
    let avg = strategy_from_name("AVG").expect("AVG exists");
    Config::new(scenario, sizes, NetworkKind::Ordered, avg.into()).expect("valid")
}

/// A recorded run: its name, its trace file, and the model at its sizes.
type Run = (&'static str, &'static str, fn() -> Config);

fn conform(c: &mut Criterion) {
    let runs: [Run; 2] = [
        ("healthy", "healthy.ndjson", || {
            config(Scenario::Healthy, Scenario::Healthy.default_sizes())
        }),
        ("kill-under-load", "harms-kill.ndjson", || {
            let sizes = Sizes {
                consumers: 3,
                joins: Some(0),
                kills: 1,
                queues: 3,
                ..Sizes::default()
            };
            config(Scenario::Healthy, sizes)
        }),
    ];
    let mut group = c.benchmark_group("conform");
    group.sample_size(10);
    for (name, file, cfg) in runs {
        let text = text(file);
        group.throughput(Throughput::Elements(text.lines().count() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                let events = trace::parse(&text).expect("parses");
                let v = validate(&events, cfg(), Bounds::default()).expect("validates");
                assert_eq!(v.conformance.verdict, Verdict::Conforms);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, conform);
criterion_main!(benches);
