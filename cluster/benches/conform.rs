//! Trace validation's speed on recorded real runs: a trace of three
//! consumers (a few thousand events) read, translated and decided.
//!
//! `cargo bench -p rocketmq-rebalance-cluster --bench conform`
// criterion's macros define undocumented public functions.
#![allow(missing_docs)]

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rocketmq_rebalance_cluster::pipeline::{Plan, Source};
use rocketmq_rebalance_cluster::trace;
use rocketmq_rebalance_cluster::translate::{trace_end, validate, Start};
use rocketmq_rebalance_flags::ModelArgs;
use rocketmq_rebalance_model::{
    configuration::Config,
    validation::{Bounds, Verdict},
};

fn text(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/traces")
        .join(name);
    std::fs::read_to_string(path).expect("a recorded trace")
}

/// The model the script of `source` validates its trace against.
fn model_of(source: &Source) -> Config {
    let plan = Plan::load(source, false).expect("a script");
    ModelArgs::config_from(plan.script.conform_flags()).expect("valid flags")
}

fn conform(c: &mut Criterion) {
    // A recorded run: its name, its trace file, and its script.
    let runs = [
        (
            "healthy",
            "healthy.ndjson",
            Source::Scenario {
                name: "healthy".into(),
                orderly: false,
            },
        ),
        (
            "kill-under-load",
            "harms-kill.ndjson",
            Source::Harms("kill".into()),
        ),
    ];
    let mut group = c.benchmark_group("conform");
    group.sample_size(10);
    for (name, file, source) in runs {
        let text = text(file);
        group.throughput(Throughput::Elements(text.lines().count() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                let events = trace::parse(&text).expect("parses");
                let end = trace_end(&events);
                let v = validate(
                    &events,
                    model_of(&source),
                    Bounds::default(),
                    Start::Cold,
                    end,
                )
                .expect("validates");
                assert_eq!(v.conformance.verdict, Verdict::Conforms);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, conform);
criterion_main!(benches);
