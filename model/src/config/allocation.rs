//! The bridge to the allocation crate: what a consumer's rebalance of one
//! topic gets, through the very code production runs, memoised.

use std::collections::HashMap;
use std::sync::RwLock;

use rocketmq_rebalance::{rebalance_allocate_in, MessageQueue, SortOrder};

use super::bits::{listed, members_of, ConsumerSet, QueueSet};
use super::{Config, Route, Variant};

/// Allocation memo key: route, topic, members, members listed twice,
/// consumer.
type AllocKey = (Route, u8, ConsumerSet, ConsumerSet, u8);

/// Allocation results by key. The model is deterministic, so memoising the
/// strategy's answers changes nothing but speed.
#[derive(Default)]
pub struct Memo(RwLock<HashMap<AllocKey, Option<QueueSet>>>);

impl Config {
    /// What `consumer` gets of `topic` when `route` is cached and the
    /// broker listed `members`, those of `twice` twice (one entry a
    /// channel): RocketMQ's `rebalanceByTopic` through
    /// [`rebalance_allocate_in`], both lists sorted in the order of the
    /// consumer's client and allocated by its strategy (by default the
    /// Java client's order and the group's strategy). `None` when the
    /// strategy fails (RocketMQ then logs and keeps what it has).
    pub fn allocate(
        &self,
        route: Route,
        topic: usize,
        members: ConsumerSet,
        twice: ConsumerSet,
        consumer: usize,
    ) -> Option<QueueSet> {
        // The Go client reads the broker's "no consumer for this group" as
        // an empty list, and allocates nothing from it; Java's call fails.
        if members == 0 && self.has(Variant::GoEmptyListReleasesAll) {
            return Some(0);
        }
        if self.pops() {
            return self.allocate_for_pop(route, topic, members, twice, consumer);
        }
        self.allocate_by_strategy(route, topic, members, twice, consumer)
    }

    /// The strategy's share for `consumer`, through the crate, memoised.
    fn allocate_by_strategy(
        &self,
        route: Route,
        topic: usize,
        members: ConsumerSet,
        twice: ConsumerSet,
        consumer: usize,
    ) -> Option<QueueSet> {
        let key = (route, topic as u8, members, twice, consumer as u8);
        if let Some(hit) = self.memo.0.read().ok().and_then(|m| m.get(&key).copied()) {
            return hit;
        }
        let indices: Vec<usize> = members_of(self.route_queues(route, topic)).collect();
        let mqs: Vec<MessageQueue> = indices.iter().map(|&i| self.queues[i].mq.clone()).collect();
        let cids: Vec<String> = listed(members, twice)
            .map(|c| self.consumers[c].client_id.clone())
            .collect();
        let client = &self.clients[consumer];
        let order = if self.has(Variant::ClientsSortAsJava) {
            SortOrder::Java
        } else {
            client.order()
        };
        let result = rebalance_allocate_in(
            order,
            client.strategy.as_ref(),
            &self.group,
            &self.consumers[consumer].client_id,
            &mqs,
            &cids,
        )
        .ok()
        .map(|allocated| {
            allocated
                .iter()
                .filter_map(|mq| mqs.iter().position(|m| m == mq))
                .fold(0, |set, pos| set | 1 << indices[pos])
        });
        if let Ok(mut memo) = self.memo.0.write() {
            memo.insert(key, result);
        }
        result
    }

    /// `QueryAssignmentProcessor.allocate4Pop`: nothing when the broker
    /// has no member of the group. With `popShareQueueNum` at its default
    /// (-1), or at least the members but one, every queue of the route (as
    /// queue -1 of each broker) to every member. Otherwise each member's
    /// own share by the strategy, and the shares of the next
    /// `popShareQueueNum` members of the sorted list after the first entry
    /// of its client id (`cidAll.indexOf`); with more members than queues,
    /// the one queue at its index.
    fn allocate_for_pop(
        &self,
        route: Route,
        topic: usize,
        members: ConsumerSet,
        twice: ConsumerSet,
        consumer: usize,
    ) -> Option<QueueSet> {
        if members == 0 {
            return None;
        }
        let all = self.route_queues(route, topic);
        let share = usize::from(self.protocol.pop_share);
        // The common case, every queue, allocates nothing.
        if share == 0 || share + 1 >= listed(members, twice).count() {
            return Some(all);
        }
        let mut cids: Vec<usize> = listed(members, twice).collect();
        // The broker sorts the ids as Java does.
        let id = |c: usize| self.consumers[c].client_id.as_str();
        cids.sort_by(|&a, &b| SortOrder::Java.compare_ids(id(a), id(b)));
        let index = cids.iter().position(|&c| id(c) == id(consumer))?;
        let queues: Vec<usize> = members_of(all).collect();
        if cids.len() > queues.len() {
            return Some(1 << queues[index % queues.len()]);
        }
        (0..=share).try_fold(0, |set, i| {
            let neighbour = cids[(index + i) % cids.len()];
            let own = self.allocate_by_strategy(route, topic, members, twice, neighbour)?;
            Some(set | own)
        })
    }
}
