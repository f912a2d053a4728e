//! A lazy topological walk of commits, newest first, shared by `log` and `blame`.
//!
//! Order: a commit comes before every parent it is walked to (topological order); among the
//! commits whose walked-to children have all been emitted, the one with the greatest
//! timestamp comes first, ties by the smaller id. This is Kahn's algorithm over the walked
//! graph with a priority queue, and the order is fully determined by the graph.
//!
//! Laziness: commits are discovered from the tips downwards, and a commit is emitted once
//! every discovered commit at least as new as it has been expanded (its parents read). When
//! no parent is newer than its child (timestamps never decrease from parent to child), no
//! commit still unread can be a child of the emitted one, so the order equals that of the
//! whole graph while reading only slightly more than what is emitted. As soon as the walk
//! sees a parent newer than its child (clock skew), it falls back to reading the whole
//! graph first: the walk restarts ([`Step::Restart`]; callers drop what they received) in
//! full mode. A skew entirely outside the part of history a limited walk reads cannot be
//! seen; then the first commits emitted may differ from a full walk's. Equal timestamps
//! are fine (commits made in the same second), though a long run of them is read whole.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::rc::Rc;

use super::{Commit, Repo, RepoResult};
use crate::object::ObjectId;

/// Commits read during one walk, each read (and hash-checked) once.
pub(crate) struct CommitCache<'r> {
    repo: &'r Repo,
    map: HashMap<ObjectId, Rc<Commit>>,
}

impl<'r> CommitCache<'r> {
    pub(crate) fn new(repo: &'r Repo) -> Self {
        CommitCache {
            repo,
            map: HashMap::new(),
        }
    }

    /// The repository.
    pub(crate) fn repo(&self) -> &'r Repo {
        self.repo
    }

    /// A commit, read on first use.
    pub(crate) fn get(&mut self, id: &ObjectId) -> RepoResult<Rc<Commit>> {
        if let Some(c) = self.map.get(id) {
            return Ok(c.clone());
        }
        let c = Rc::new(self.repo.read_commit(id)?);
        self.map.insert(*id, c.clone());
        Ok(c)
    }
}

/// Which parents of a commit the walk goes on to.
pub(crate) trait Follow {
    /// The parents of commit `id` (`c`) to walk to, without duplicates.
    fn follow(
        &mut self,
        commits: &mut CommitCache<'_>,
        id: &ObjectId,
        c: &Commit,
    ) -> RepoResult<Vec<ObjectId>>;
}

/// What [`TopoWalk::next`] produced.
pub(crate) enum Step {
    /// The next commit in order.
    Commit(ObjectId, Rc<Commit>),
    /// The walk found clock skew after emitting commits and starts over in full mode:
    /// forget every commit received so far.
    Restart,
    /// Nothing is left.
    Done,
}

/// Priority: newest first, then the smaller id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Rank(i64, Reverse<ObjectId>);

struct State {
    commit: Rc<Commit>,
    /// Discovered children not yet emitted.
    pending: u32,
    expanded: bool,
    emitted: bool,
    follow: Vec<ObjectId>,
}

/// The walk itself; see the module docs.
pub(crate) struct TopoWalk<'r> {
    pub(crate) commits: CommitCache<'r>,
    tips: Vec<ObjectId>,
    states: HashMap<ObjectId, State>,
    ready: BinaryHeap<Rank>,
    frontier: BinaryHeap<Rank>,
    full: bool,
    emitted: usize,
}

impl<'r> TopoWalk<'r> {
    /// A walk from `tips`; `full` reads the whole graph before emitting anything.
    pub(crate) fn new(repo: &'r Repo, tips: &[ObjectId], full: bool) -> RepoResult<Self> {
        let mut w = TopoWalk {
            commits: CommitCache::new(repo),
            tips: Vec::new(),
            states: HashMap::new(),
            ready: BinaryHeap::new(),
            frontier: BinaryHeap::new(),
            full,
            emitted: 0,
        };
        for t in tips {
            if !w.tips.contains(t) {
                w.tips.push(*t);
            }
        }
        w.start()?;
        Ok(w)
    }

    fn start(&mut self) -> RepoResult<()> {
        self.states.clear();
        self.ready.clear();
        self.frontier.clear();
        self.emitted = 0;
        for t in self.tips.clone() {
            let rank = self.discover(&t)?;
            self.ready.push(rank);
        }
        Ok(())
    }

    fn discover(&mut self, id: &ObjectId) -> RepoResult<Rank> {
        let commit = self.commits.get(id)?;
        let rank = Rank(commit.timestamp, Reverse(*id));
        self.states.insert(
            *id,
            State {
                commit,
                pending: 0,
                expanded: false,
                emitted: false,
                follow: Vec::new(),
            },
        );
        self.frontier.push(rank);
        Ok(rank)
    }

    /// Reads the parents of `id` that `f` follows; true when the walk's assumptions broke
    /// (a parent newer than its child, or already emitted).
    fn expand(&mut self, id: &ObjectId, f: &mut dyn Follow) -> RepoResult<bool> {
        let commit = self.states[id].commit.clone();
        let follow = f.follow(&mut self.commits, id, &commit)?;
        let mut trouble = false;
        for p in &follow {
            if !self.states.contains_key(p) {
                self.discover(p)?;
            }
            let s = self.states.get_mut(p).expect("just discovered");
            trouble |= s.emitted || s.commit.timestamp > commit.timestamp;
            s.pending += 1;
        }
        let s = self.states.get_mut(id).expect("known");
        s.expanded = true;
        s.follow = follow;
        Ok(trouble && !self.full)
    }

    /// The parents the walk followed from an expanded commit.
    pub(crate) fn followed(&self, id: &ObjectId) -> &[ObjectId] {
        self.states.get(id).map_or(&[], |s| &s.follow)
    }

    /// The next commit in order.
    pub(crate) fn next(&mut self, f: &mut dyn Follow) -> RepoResult<Step> {
        loop {
            let Some(rank) = self.ready.pop() else {
                return Ok(Step::Done);
            };
            let id = rank.1 .0;
            let s = &self.states[&id];
            if s.emitted || s.pending > 0 {
                continue; // stale entry
            }
            let mut trouble = false;
            while let Some(&top) = self.frontier.peek() {
                if !self.full && top.0 < rank.0 {
                    break;
                }
                self.frontier.pop();
                let x = top.1 .0;
                if !self.states[&x].expanded {
                    trouble |= self.expand(&x, f)?;
                }
            }
            if trouble {
                self.full = true;
                if self.emitted > 0 {
                    self.start()?;
                    return Ok(Step::Restart);
                }
                self.ready.push(rank);
                continue;
            }
            if self.states[&id].pending > 0 {
                continue; // a child turned up; re-queued when that child is emitted
            }
            let s = self.states.get_mut(&id).expect("known");
            s.emitted = true;
            let commit = s.commit.clone();
            let follow = std::mem::take(&mut s.follow);
            for p in &follow {
                let ps = self.states.get_mut(p).expect("discovered");
                ps.pending -= 1;
                if ps.pending == 0 {
                    self.ready.push(Rank(ps.commit.timestamp, Reverse(*p)));
                }
            }
            self.states.get_mut(&id).expect("known").follow = follow;
            self.emitted += 1;
            return Ok(Step::Commit(id, commit));
        }
    }
}

/// Follows every parent except those in an excluded set.
pub(crate) struct AllParents<'a> {
    pub(crate) excluded: &'a std::collections::HashSet<ObjectId>,
}

impl Follow for AllParents<'_> {
    fn follow(
        &mut self,
        _commits: &mut CommitCache<'_>,
        _id: &ObjectId,
        c: &Commit,
    ) -> RepoResult<Vec<ObjectId>> {
        Ok(dedup(
            c.parents
                .iter()
                .filter(|p| !self.excluded.contains(p))
                .copied(),
        ))
    }
}

/// The ids in first-seen order without repeats.
pub(crate) fn dedup(ids: impl Iterator<Item = ObjectId>) -> Vec<ObjectId> {
    let mut out: Vec<ObjectId> = Vec::new();
    for id in ids {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

impl Repo {
    /// Every commit reachable from `tips` (the tips included).
    pub fn reachable(&self, tips: &[ObjectId]) -> RepoResult<std::collections::HashSet<ObjectId>> {
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<ObjectId> = Vec::new();
        for t in tips {
            if seen.insert(*t) {
                stack.push(*t);
            }
        }
        while let Some(id) = stack.pop() {
            for p in self.read_commit(&id)?.parents {
                if seen.insert(p) {
                    stack.push(p);
                }
            }
        }
        Ok(seen)
    }
}
