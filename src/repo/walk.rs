//! A lazy topological walk of commits, newest first, shared by `log` and `blame`.
//!
//! Order: a commit comes before every parent it is walked to (topological order); among the
//! commits whose walked-to children have all been emitted, the one with the greatest
//! timestamp comes first, ties by the smaller id. This is Kahn's algorithm over the walked
//! graph with a priority queue, and the order is fully determined by the graph.
//!
//! The walk runs over the commit graph cache ([`CommitGraph`]): parents and timestamps come
//! from memory, and commit objects are read only for what callers report.
//!
//! Laziness: commits are discovered from the tips downwards, and a commit is emitted once
//! every discovered commit at least as new as it has been expanded (its parents visited).
//! When no parent is newer than its child (timestamps never decrease from parent to child),
//! no commit still unvisited can be a child of the emitted one, so the order equals that of
//! the whole graph while visiting only slightly more than what is emitted. As soon as the
//! walk sees a parent newer than its child (clock skew), it falls back to visiting the whole
//! graph first: the walk restarts ([`Step::Restart`]; callers drop what they received) in
//! full mode. A skew entirely outside the part of history a limited walk visits cannot be
//! seen; then the first commits emitted may differ from a full walk's. Equal timestamps
//! are fine (commits made in the same second), though a long run of them is visited whole.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use super::graph_cache::CommitGraph;
use super::RepoResult;
use crate::object::ObjectId;

/// A map keyed by commit graph position: positions are the walk's own numbers, not input
/// anyone chooses, so they are hashed with one multiplication instead of SipHash.
pub(crate) type PosMap<V> = HashMap<u32, V, BuildHasherDefault<PosHasher>>;

/// The hasher of [`PosMap`] (Fibonacci hashing of the key's bytes).
#[derive(Default)]
pub(crate) struct PosHasher(u64);

impl Hasher for PosHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Which parents of a commit the walk goes on to.
pub(crate) trait Follow {
    /// The parents (graph positions) of commit `pos` to walk to, without duplicates.
    fn follow(&mut self, graph: &CommitGraph, pos: u32) -> RepoResult<Vec<u32>>;
}

/// What [`TopoWalk::next`] produced.
pub(crate) enum Step {
    /// The next commit in order (its graph position).
    Commit(u32),
    /// The walk found clock skew after emitting commits and starts over in full mode:
    /// forget every commit received so far.
    Restart,
    /// Nothing is left.
    Done,
}

/// Priority: newest first, then the smaller id; carries the position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Rank(i64, Reverse<ObjectId>, Reverse<u32>);

#[derive(Default)]
struct State {
    /// Discovered children not yet emitted.
    pending: u32,
    expanded: bool,
    emitted: bool,
    follow: Vec<u32>,
}

/// The walk itself; see the module docs.
pub(crate) struct TopoWalk {
    pub(crate) graph: Arc<CommitGraph>,
    tips: Vec<u32>,
    states: PosMap<State>,
    ready: BinaryHeap<Rank>,
    frontier: BinaryHeap<Rank>,
    full: bool,
    emitted: usize,
}

impl TopoWalk {
    /// A walk from `tips` over `graph` (which holds them and their ancestry); `full` visits
    /// the whole graph before emitting anything.
    pub(crate) fn new(graph: Arc<CommitGraph>, tips: &[ObjectId], full: bool) -> Self {
        let mut w = TopoWalk {
            tips: Vec::new(),
            states: PosMap::default(),
            ready: BinaryHeap::new(),
            frontier: BinaryHeap::new(),
            full,
            emitted: 0,
            graph,
        };
        for t in tips {
            let p = w.graph.position(t).expect("tips are in the graph");
            if !w.tips.contains(&p) {
                w.tips.push(p);
            }
        }
        w.start();
        w
    }

    fn rank(&self, pos: u32) -> Rank {
        Rank(
            self.graph.timestamp(pos),
            Reverse(self.graph.id(pos)),
            Reverse(pos),
        )
    }

    fn start(&mut self) {
        self.states.clear();
        self.ready.clear();
        self.frontier.clear();
        self.emitted = 0;
        for t in self.tips.clone() {
            let rank = self.discover(t);
            self.ready.push(rank);
        }
    }

    fn discover(&mut self, pos: u32) -> Rank {
        let rank = self.rank(pos);
        self.states.insert(pos, State::default());
        self.frontier.push(rank);
        rank
    }

    /// Visits the parents of `pos` that `f` follows; true when the walk's assumptions broke
    /// (a parent newer than its child, or already emitted).
    fn expand(&mut self, pos: u32, f: &mut dyn Follow) -> RepoResult<bool> {
        let follow = f.follow(&self.graph, pos)?;
        let ts = self.graph.timestamp(pos);
        let mut trouble = false;
        for &p in &follow {
            if !self.states.contains_key(&p) {
                self.discover(p);
            }
            let s = self.states.get_mut(&p).expect("just discovered");
            trouble |= s.emitted || self.graph.timestamp(p) > ts;
            s.pending += 1;
        }
        let s = self.states.get_mut(&pos).expect("known");
        s.expanded = true;
        s.follow = follow;
        Ok(trouble && !self.full)
    }

    /// The parents the walk followed from an expanded commit.
    pub(crate) fn followed(&self, pos: u32) -> &[u32] {
        self.states.get(&pos).map_or(&[], |s| &s.follow)
    }

    /// The next commit in order.
    pub(crate) fn next(&mut self, f: &mut dyn Follow) -> RepoResult<Step> {
        loop {
            let Some(rank) = self.ready.pop() else {
                return Ok(Step::Done);
            };
            let pos = rank.2 .0;
            let s = &self.states[&pos];
            if s.emitted || s.pending > 0 {
                continue; // stale entry
            }
            let mut trouble = false;
            while let Some(&top) = self.frontier.peek() {
                if !self.full && top.0 < rank.0 {
                    break;
                }
                self.frontier.pop();
                let x = top.2 .0;
                if !self.states[&x].expanded {
                    trouble |= self.expand(x, f)?;
                }
            }
            if trouble {
                self.full = true;
                if self.emitted > 0 {
                    self.start();
                    return Ok(Step::Restart);
                }
                self.ready.push(rank);
                continue;
            }
            if self.states[&pos].pending > 0 {
                continue; // a child turned up; re-queued when that child is emitted
            }
            let s = self.states.get_mut(&pos).expect("known");
            s.emitted = true;
            let follow = std::mem::take(&mut s.follow);
            for &p in &follow {
                let ps = self.states.get_mut(&p).expect("discovered");
                ps.pending -= 1;
                if ps.pending == 0 {
                    let r = self.rank(p);
                    self.ready.push(r);
                }
            }
            self.states.get_mut(&pos).expect("known").follow = follow;
            self.emitted += 1;
            return Ok(Step::Commit(pos));
        }
    }
}

impl TopoWalk {
    /// Runs the walk to its end, or until `limit` items are kept: `keep` makes an item of
    /// each commit emitted (graph position), given the follower and what it saw, or skips it
    /// (`None`). A restart drops the items kept so far, so the result is in the walk's
    /// final order.
    pub(crate) fn collect<F: Follow, T>(
        &mut self,
        follow: &mut F,
        limit: Option<usize>,
        mut keep: impl FnMut(&F, u32) -> RepoResult<Option<T>>,
    ) -> RepoResult<Vec<T>> {
        let mut out = Vec::new();
        if limit == Some(0) {
            return Ok(out);
        }
        loop {
            match self.next(follow)? {
                Step::Done => return Ok(out),
                Step::Restart => out.clear(),
                Step::Commit(pos) => {
                    if let Some(item) = keep(follow, pos)? {
                        out.push(item);
                        if limit == Some(out.len()) {
                            return Ok(out);
                        }
                    }
                }
            }
        }
    }
}

/// Follows every parent except those in an excluded set.
pub(crate) struct AllParents<'a> {
    pub(crate) excluded: &'a std::collections::HashSet<ObjectId>,
}

impl Follow for AllParents<'_> {
    fn follow(&mut self, graph: &CommitGraph, pos: u32) -> RepoResult<Vec<u32>> {
        Ok(dedup(
            graph
                .parents(pos)
                .filter(|p| !self.excluded.contains(&graph.id(*p))),
        ))
    }
}

/// The items in first-seen order without repeats.
pub(crate) fn dedup<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for x in items {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}
