//! The model checker's speed on fixed configurations: the figures of
//! `docs/performance.md` ("Model checking"), reproduced with one command.
//!
//! `cargo bench -p rocketmq-rebalance-model --bench check`
//!
//! Each benchmark is one complete check; its throughput is in unique
//! states, so criterion's "elem/s" is the unique-states rate that
//! `rebalance check` prints, comparable with Stateright's `2pc` example.
// criterion's macros define undocumented public functions.
#![allow(missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rocketmq_rebalance::strategy_from_name;
use rocketmq_rebalance_model::{
    check,
    configuration::{Config, LockTiming, NetworkKind, ProtocolOptions, Scenario, Sizes},
    CheckOptions,
};

/// A configuration worth timing, with its name in the report.
struct Case {
    name: &'static str,
    cfg: fn() -> Config,
    liveness: bool,
}

fn config(scenario: Scenario, sizes: Sizes, protocol: ProtocolOptions) -> Config {
    let avg = Arc::from(strategy_from_name("AVG").expect("AVG exists"));
    Config::new(scenario, sizes, NetworkKind::Ordered, avg)
        .and_then(|cfg| cfg.with_protocol(protocol))
        .expect("a valid configuration")
}

const CASES: &[Case] = &[
    Case {
        name: "default",
        cfg: || {
            config(
                Scenario::Healthy,
                Sizes::default(),
                ProtocolOptions::default(),
            )
        },
        liveness: false,
    },
    Case {
        name: "topics-2",
        cfg: || {
            let sizes = Sizes {
                topics: 2,
                ..Sizes::default()
            };
            config(Scenario::Healthy, sizes, ProtocolOptions::default())
        },
        liveness: false,
    },
    Case {
        name: "messages-1",
        cfg: || {
            let sizes = Scenario::Healthy.layered_sizes(1, false);
            config(Scenario::Healthy, sizes, ProtocolOptions::default())
        },
        liveness: false,
    },
    Case {
        name: "orderly",
        cfg: || {
            let protocol = ProtocolOptions {
                orderly: Some(LockTiming::default()),
                ..ProtocolOptions::default()
            };
            config(
                Scenario::Healthy,
                Scenario::Healthy.layered_sizes(1, true),
                protocol,
            )
        },
        liveness: false,
    },
    Case {
        name: "default-liveness",
        cfg: || {
            config(
                Scenario::Healthy,
                Sizes::default(),
                ProtocolOptions::default(),
            )
        },
        liveness: true,
    },
];

fn checks(c: &mut Criterion) {
    let mut group = c.benchmark_group("check");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    for case in CASES {
        let options = CheckOptions {
            threads,
            liveness: case.liveness,
            ..CheckOptions::default()
        };
        let states = check((case.cfg)(), &options, |_| {}).unique_states;
        group.throughput(Throughput::Elements(states as u64));
        group.bench_function(BenchmarkId::new(case.name, states), |b| {
            b.iter(|| {
                let report = check((case.cfg)(), &options, |_| {});
                assert!(report.complete());
                report.unique_states
            })
        });
    }
    group.finish();
}

criterion_group!(benches, checks);
criterion_main!(benches);
