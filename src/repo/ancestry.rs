//! Ancestry, answered on the commit graph: whether one commit reaches another, every commit
//! reachable from some tips, best common ancestors (merge bases), and a history in
//! topological order.
//!
//! The commit graph ([`CommitGraph`]) already is the graph these questions need: commits
//! numbered in topological order (every parent at a smaller position than its children),
//! parents as positions, and generation numbers. So each answer is a walk over positions
//! with a membership table, a topological order is ascending positions, and no other graph
//! structure is built.

use std::collections::HashSet;

use super::graph_cache::CommitGraph;
use super::{Repo, RepoResult};
use crate::object::ObjectId;

/// The positions of `ids` in `graph`, which must have been extended to them.
/// A commit as [`Repo::past_shared`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReachedCommit {
    /// The commit's id.
    pub id: ObjectId,
    /// Its parents.
    pub parents: Vec<ObjectId>,
    /// Its time (unix seconds).
    pub time: i64,
}

pub(super) fn positions(graph: &CommitGraph, ids: &[ObjectId]) -> Vec<u32> {
    ids.iter()
        .map(|id| graph.position(id).expect("extended"))
        .collect()
}

/// Whether commit `target` is reachable from commit `from` (both positions in `graph`).
/// Generation numbers cut the search: no commit of a generation at most `target`'s, other
/// than `target`, can lead to it.
pub(super) fn reaches(graph: &CommitGraph, from: u32, target: u32) -> bool {
    let floor = graph.generation(target);
    let mut seen = HashSet::new();
    let mut stack = vec![from];
    while let Some(pos) = stack.pop() {
        if pos == target {
            return true;
        }
        if graph.generation(pos) <= floor {
            continue;
        }
        for p in graph.parents(pos) {
            if seen.insert(p) {
                stack.push(p);
            }
        }
    }
    false
}

/// The ancestors of `tips` (themselves included) as a membership table over `graph`.
pub(super) fn ancestors(graph: &CommitGraph, tips: &[u32]) -> Vec<bool> {
    let mut seen = vec![false; graph.len()];
    let mut stack: Vec<u32> = Vec::new();
    for &t in tips {
        if !seen[t as usize] {
            seen[t as usize] = true;
            stack.push(t);
        }
    }
    while let Some(pos) = stack.pop() {
        for p in graph.parents(pos) {
            if !seen[p as usize] {
                seen[p as usize] = true;
                stack.push(p);
            }
        }
    }
    seen
}

/// The best common ancestors of commits `a` and `b` (positions in `graph`), ordered as
/// [`Repo::merge_bases`] says.
pub(super) fn best_common(graph: &CommitGraph, a: u32, b: u32) -> Vec<ObjectId> {
    let (of_a, of_b) = (ancestors(graph, &[a]), ancestors(graph, &[b]));
    // Common ancestors are closed under "parent of", so a common ancestor is an ancestor of
    // another one exactly when one of its children is common too.
    let common: Vec<u32> = (0..graph.len() as u32)
        .filter(|&i| of_a[i as usize] && of_b[i as usize])
        .collect();
    let mut below = vec![false; graph.len()];
    for &c in &common {
        for p in graph.parents(c) {
            below[p as usize] = true;
        }
    }
    let mut best: Vec<(ObjectId, i64)> = common
        .iter()
        .filter(|&&c| !below[c as usize])
        .map(|&c| (graph.id(c), graph.timestamp(c)))
        .collect();
    best.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    best.into_iter().map(|(id, _)| id).collect()
}

impl Repo {
    /// Every best common ancestor of commits `a` and `b`: the common ancestors (a commit
    /// counts as its own ancestor) that are not ancestors of another common ancestor. Sorted
    /// by timestamp, newest first, ties by ascending id. Empty for unrelated histories.
    pub fn merge_bases(&self, a: &ObjectId, b: &ObjectId) -> RepoResult<Vec<ObjectId>> {
        let g = self.commit_graph(&[*a, *b], false)?;
        let p = positions(&g, &[*a, *b]);
        Ok(best_common(&g, p[0], p[1]))
    }

    /// A best common ancestor of `a` and `b` (see [`Repo::merge_bases`]); when there are
    /// several (criss-cross histories), the newest by commit timestamp, ties broken by the
    /// smallest id, so the choice is deterministic. `None` for unrelated histories.
    pub fn merge_base(&self, a: &ObjectId, b: &ObjectId) -> RepoResult<Option<ObjectId>> {
        Ok(self.merge_bases(a, b)?.into_iter().next())
    }

    /// Whether `ancestor` is reachable from `descendant` through parent links (a commit is
    /// its own ancestor).
    pub fn is_ancestor(&self, ancestor: &ObjectId, descendant: &ObjectId) -> RepoResult<bool> {
        if ancestor == descendant {
            return Ok(true);
        }
        let g = self.commit_graph(&[*descendant], false)?;
        let Some(target) = g.position(ancestor) else {
            return Ok(false);
        };
        let start = g.position(descendant).expect("extended");
        Ok(reaches(&g, start, target))
    }

    /// Every commit reachable from `tips` (the tips included).
    pub fn reachable(&self, tips: &[ObjectId]) -> RepoResult<HashSet<ObjectId>> {
        Ok(self.history_in_order(tips)?.into_iter().collect())
    }

    /// How many commits are reachable from `tips` (the tips included).
    pub fn count_reachable(&self, tips: &[ObjectId]) -> RepoResult<u64> {
        let graph = self.commit_graph(tips, false)?;
        let seen = ancestors(&graph, &positions(&graph, tips));
        Ok(seen.iter().filter(|&&s| s).count() as u64)
    }

    /// The history `tips` share and what follows it: the time (unix seconds) of the newest
    /// commit every tip reaches (none when they share nothing), and the commits some tip
    /// reaches and another does not, parents before children.
    pub fn past_shared(&self, tips: &[ObjectId]) -> RepoResult<(Option<i64>, Vec<ReachedCommit>)> {
        let graph = self.commit_graph(tips, false)?;
        let reach: Vec<Vec<bool>> = tips
            .iter()
            .map(|t| ancestors(&graph, &positions(&graph, std::slice::from_ref(t))))
            .collect();
        let (mut shared, mut past) = (None, Vec::new());
        for p in 0..graph.len() {
            let by = reach.iter().filter(|r| r[p]).count();
            let pos = p as u32;
            if by == tips.len() {
                shared = shared.max(Some(graph.timestamp(pos)));
            } else if by > 0 {
                past.push(ReachedCommit {
                    id: graph.id(pos),
                    parents: graph.parents(pos).map(|q| graph.id(q)).collect(),
                    time: graph.timestamp(pos),
                });
            }
        }
        Ok((shared, past))
    }

    /// Every commit reachable from `tips` (the tips included) in topological order: every
    /// parent before its children.
    pub(super) fn history_in_order(&self, tips: &[ObjectId]) -> RepoResult<Vec<ObjectId>> {
        let graph = self.commit_graph(tips, false)?;
        let seen = ancestors(&graph, &positions(&graph, tips));
        Ok((0..graph.len() as u32)
            .filter(|&p| seen[p as usize])
            .map(|p| graph.id(p))
            .collect())
    }
}
