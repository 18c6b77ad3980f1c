//! One exhaustive run split into `N` shards whose union is the whole
//! reachable space, for runs too large for one machine (a CI matrix runs
//! the shards side by side).
//!
//! A breadth-first prefix of the state graph is explored first, to the
//! first depth `k` whose level holds enough states to share out; every
//! state of the prefix (depth at most `k`) is given to the shard its
//! fingerprint names. A shard explores exhaustively from its own prefix
//! states and stops at any prefix state that is another shard's.
//!
//! Why the union is everything: a reachable state of depth at most `k` is a
//! prefix state, so its own shard starts there. A state `s` of depth over
//! `k` has a shortest path from an initial state; its state at depth `k`,
//! `f`, belongs to some shard, and every later state of that path is deeper
//! than `k` (depths grow by one along a shortest path), so none is a prefix
//! state and none stops that shard: it reaches `s` from `f`. Shards may
//! overlap below the prefix; they never miss a state. Fair cycles may
//! cross shards, so liveness is not checked by shards.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::Hash;
use std::str::FromStr;

use stateright::Model;

use super::graph::fingerprint;

/// Shard `index` of `count` (0-based): `--shard I/N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Shard {
    /// Which shard, from 0.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

/// A shard that is not `I/N` with `I < N`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadShard(pub String);

impl fmt::Display for BadShard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad shard '{}': expected I/N with 0 <= I < N, e.g. 0/4",
            self.0
        )
    }
}

impl std::error::Error for BadShard {}

impl FromStr for Shard {
    type Err = BadShard;

    fn from_str(text: &str) -> Result<Self, BadShard> {
        let bad = || BadShard(text.to_string());
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = index.trim().parse().map_err(|_| bad())?;
        let count: usize = count.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The prefix level must hold this many states per shard before it is
/// shared out, so that shards get similar parts.
const ROOTS_PER_SHARD: usize = 64;

/// The deepest prefix explored: past it, the level reached is shared out
/// whatever its size.
const MAX_PREFIX_DEPTH: usize = 64;

/// Where one shard starts and where it stops.
#[derive(Clone, Debug)]
pub struct ShardRoots<S> {
    /// Depth of the prefix.
    pub depth: usize,
    /// States of the prefix, all shards together.
    pub prefix_states: usize,
    /// Its prefix states: where it starts.
    pub roots: Vec<S>,
    /// For each root, the Explorer path (initial state index, then action
    /// indices) from an initial state of the whole model.
    paths: Vec<Vec<u32>>,
    /// Fingerprints of the other shards' prefix states: where it stops.
    others: HashSet<u64>,
}

impl<S> ShardRoots<S> {
    /// Whether this shard explores `state` (it stops at the other shards'
    /// prefix states).
    pub fn owns(&self, state: &S) -> bool
    where
        S: Hash,
    {
        self.others.is_empty() || !self.others.contains(&fingerprint(state))
    }

    /// An Explorer path of the shard (its root's index, then action
    /// indices) as a path of the whole model.
    pub fn whole_path(&self, indices: &[u32]) -> Option<Vec<u32>> {
        let (&root, rest) = indices.split_first()?;
        let mut path = self.paths.get(root as usize)?.clone();
        path.extend_from_slice(rest);
        Some(path)
    }
}

/// The roots of `shard` in `model`: a breadth-first prefix, shared out by
/// fingerprint.
pub fn shard_roots<M>(model: &M, shard: Shard) -> ShardRoots<M::State>
where
    M: Model,
    M::State: Clone + Hash,
{
    // Every prefix state once, with its path from an initial state.
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let mut states: Vec<(M::State, Vec<u32>)> = Vec::new();
    let mut level: Vec<usize> = Vec::new();
    for (i, init) in model.init_states().into_iter().enumerate() {
        if seen.insert(fingerprint(&init), states.len()).is_none() {
            level.push(states.len());
            states.push((init, vec![i as u32]));
        }
    }
    let mut depth = 0;
    let mut actions = Vec::new();
    while level.len() < ROOTS_PER_SHARD * shard.count && depth < MAX_PREFIX_DEPTH {
        let mut next_level = Vec::new();
        for &at in &level {
            let (state, path) = states[at].clone();
            actions.clear();
            model.actions(&state, &mut actions);
            for (index, action) in actions.drain(..).enumerate() {
                let Some(next) = model.next_state(&state, action) else {
                    continue;
                };
                let print = fingerprint(&next);
                if seen.contains_key(&print) {
                    continue;
                }
                seen.insert(print, states.len());
                next_level.push(states.len());
                let mut next_path = path.clone();
                next_path.push(index as u32);
                states.push((next, next_path));
            }
        }
        if next_level.is_empty() {
            break;
        }
        level = next_level;
        depth += 1;
    }
    let prefix_states = states.len();
    let mut roots = Vec::new();
    let mut paths = Vec::new();
    let mut others = HashSet::new();
    for (state, path) in states {
        let print = fingerprint(&state);
        if print % shard.count as u64 == shard.index as u64 {
            roots.push(state);
            paths.push(path);
        } else {
            others.insert(print);
        }
    }
    ShardRoots {
        depth,
        prefix_states,
        roots,
        paths,
        others,
    }
}
