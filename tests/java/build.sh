#!/usr/bin/env bash
# Compiles the RocketMQ Java client's allocation strategies, unchanged, from a
# RocketMQ source checkout, together with this folder's stand-ins and harness.
#
#   tests/java/build.sh ROCKETMQ_CHECKOUT [CLASS_DIR]
#
# CLASS_DIR defaults to target/java-harness. Needs a JDK (11 or newer).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 ROCKETMQ_CHECKOUT [CLASS_DIR]" >&2
    exit 2
fi
rocketmq=$1
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "${2:-$here/../../target/java-harness}")
command -v javac >/dev/null || { echo "javac not found: install a JDK (Debian: openjdk-17-jdk-headless)" >&2; exit 2; }

client=$rocketmq/client/src/main/java/org/apache/rocketmq/client/consumer
common=$rocketmq/common/src/main/java/org/apache/rocketmq/common
upstream=(
    "$client/AllocateMessageQueueStrategy.java"
    "$client/rebalance/AbstractAllocateMessageQueueStrategy.java"
    "$client/rebalance/AllocateMessageQueueAveragely.java"
    "$client/rebalance/AllocateMessageQueueAveragelyByCircle.java"
    "$client/rebalance/AllocateMessageQueueConsistentHash.java"
    "$client/rebalance/AllocateMessageQueueByMachineRoom.java"
    "$client/rebalance/AllocateMachineRoomNearby.java"
    "$common/message/MessageQueue.java"
    "$common/consistenthash/ConsistentHashRouter.java"
    "$common/consistenthash/HashFunction.java"
    "$common/consistenthash/Node.java"
    "$common/consistenthash/VirtualNode.java"
)
for f in "${upstream[@]}"; do
    [[ -f $f ]] || { echo "not a RocketMQ checkout: missing $f" >&2; exit 2; }
done

mkdir -p "$out"
javac -nowarn -encoding UTF-8 -d "$out" "${upstream[@]}" \
    $(find "$here/stubs" -name '*.java') "$here/Runner.java" "$here/Bench.java"
echo "compiled into $out (RocketMQ $(git -C "$rocketmq" rev-parse --short HEAD 2>/dev/null || echo 'checkout'))"
