//! Searches over any Stateright [`Model`](stateright::Model) that
//! Stateright does not do itself: the safety search with sleep sets
//! ([`bfs`]) and its distributed form ([`dataflow`]), the reachable graph
//! stored compactly ([`graph`]) with shortest paths to a bad state,
//! fair cycles for liveness under weak fairness ([`fair_cycle`]), and the
//! longest stretch a condition lasts ([`longest`]).
//! Nothing here knows the rebalance model.
//!
//! What the engines share is a toolbox of its own: fingerprints
//! ([`fingerprint`](mod@fingerprint)), the budget and the stop reason
//! ([`budget`]), paths replayed ([`path`]) and in the
//! Explorer's format ([`explorer_path`]).

pub mod bfs;
pub mod budget;
pub mod dataflow;
pub mod explorer_path;
pub mod fair_cycle;
pub mod fingerprint;
pub mod graph;
pub mod intern;
mod level;
pub mod longest;
pub mod packed;
mod pages;
mod parents;
pub mod path;
mod scc;
pub mod visited;

pub use budget::{Cutoff, Limits};
pub use explorer_path::{encode_path, explorer_indices};
pub use fair_cycle::{find_fair_cycle_missing, Lasso};
pub use fingerprint::{collision_probability, fingerprint};
pub use graph::{shortest_path_to_bad, Classify, Graph, Predicate, StateId, STRONG};
pub use packed::Packing;
pub use path::{indices_of, path_of, replay};

/// A scoped thread's result, or its panic passed on: the search's threads
/// panic only where the model or the search has a bug.
fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
}
