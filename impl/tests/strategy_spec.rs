//! `StrategySpec` as the programs use it: its text, and what it says about
//! strategies that need configuring.

use rocketmq_rebalance::strategy::StrategySpec;
use rocketmq_rebalance::MessageQueue;

#[test]
fn a_spec_displays_and_serialises_as_its_name() {
    let nearby: StrategySpec = "MACHINE_ROOM_NEARBY-STICKY-3".parse().unwrap();
    assert_eq!(nearby.to_string(), "MACHINE_ROOM_NEARBY-STICKY-3");
    assert_eq!(
        serde_json::to_string(&nearby).unwrap(),
        "\"MACHINE_ROOM_NEARBY-STICKY-3\""
    );
    let ring = StrategySpec::ConsistentHash { virtual_nodes: 3 };
    assert_eq!(format!("{ring}"), "CONSISTENT_HASH");
}

#[test]
fn only_strategies_that_ignore_or_need_a_setup_say_so() {
    let config = StrategySpec::ByConfig {
        queues: vec![MessageQueue::new("T", "broker-a", 0)],
    };
    assert_eq!(
        config.configuration_needed(),
        Some("allocates a configured queue list, whatever the topic's queues and the group are")
    );
    let no_rooms = StrategySpec::ByMachineRoom {
        consumer_rooms: vec![],
    };
    assert_eq!(
        no_rooms.configuration_needed(),
        Some("needs the consumers' machine rooms; with none configured nobody gets anything")
    );
    let rooms = StrategySpec::ByMachineRoom {
        consumer_rooms: vec!["hz".into()],
    };
    assert_eq!(rooms.configuration_needed(), None);
    let nearby: StrategySpec = "MACHINE_ROOM_NEARBY".parse().unwrap();
    assert_eq!(
        nearby.configuration_needed(),
        Some("needs machine rooms in broker names and client ids; without them it is its inner strategy")
    );
    for name in [
        "AVG",
        "AVG_BY_CIRCLE",
        "CONSISTENT_HASH",
        "STICKY",
        "STICKY-2",
    ] {
        let spec: StrategySpec = name.parse().unwrap();
        assert_eq!(spec.configuration_needed(), None, "{name}");
    }
}
