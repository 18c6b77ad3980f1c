//! Searches over any Stateright [`Model`](stateright::Model) that Stateright
//! does not do itself: the safety search with sleep sets ([`bfs`]), the
//! reachable graph stored compactly ([`graph`]),
//! shortest paths to a bad state, and fair cycles for liveness under weak
//! fairness ([`fair_cycle`]).
//! Nothing here knows the rebalance model.

pub mod bfs;
pub mod dataflow;
pub mod fair_cycle;
pub mod graph;
mod pages;

pub use fair_cycle::{find_fair_cycle_missing, Lasso};
pub use graph::{
    encode_path, explorer_indices, fingerprint, indices_of, path_of, replay, shortest_path_to_bad,
    Classify, Cutoff, Graph, Limits, Predicate, StateId, STRONG,
};
