//! History listing.

use std::collections::HashSet;

use super::filter::KeyFilter;
use super::graph_cache::{Changed, CommitGraph, FilterKey};
use super::walk::{AllParents, TopoWalk};
use super::{Commit, Repo, RepoResult};
use crate::object::ObjectId;

/// Whether [`Repo::log_where`] lists a commit, asked by its id before it is read.
pub type KeepCommit<'a> = dyn Fn(&ObjectId) -> RepoResult<bool> + 'a;

impl Repo {
    /// The commits reachable from `include` and not from `exclude`, newest first.
    ///
    /// Order: topological (a commit before its parents); among commits whose children have
    /// all been listed, the newest timestamp first, ties by the smaller id (see the walk
    /// notes below for clock skew).
    ///
    /// With a `filter` (even one matching every key, which hides commits that change
    /// nothing), only commits that change a matching key are listed: a commit with
    /// one parent when its tree differs from the parent's in a matching key; a first commit
    /// when its tree holds a matching key; a merge only when it differs in matching keys from
    /// **every** parent (as git's default history simplification hides a merge that equals
    /// one of its parents). Unlike git, the walk still goes through every parent of such a
    /// merge, so side-branch commits that changed matching keys are listed even when the
    /// merge dropped their change.
    ///
    /// With a `limit` and no `exclude`, the walk reads about as many commits as it lists
    /// (plus the ones a filter skips); `exclude` makes it read every ancestor of the excluded
    /// commits first. The limited walk assumes parents are not newer than their children in
    /// the part of history it has not read; any skew it sees makes it read the whole
    /// history, so the result is then exact.
    pub fn log(
        &self,
        include: &[ObjectId],
        exclude: &[ObjectId],
        filter: Option<&KeyFilter>,
        limit: Option<usize>,
    ) -> RepoResult<Vec<(ObjectId, Commit)>> {
        self.log_where(include, exclude, filter, limit, (None, None), None)
    }

    /// [`Repo::log`] listing only the commits made in `window` (unix seconds, both ends
    /// included, checked on the commit graph before a commit is read) whose id `keep`
    /// accepts (asked before the commit is read, so a caller that knows the answer spares
    /// the read); the limit counts the commits listed, so the walk goes on past the ones it
    /// drops.
    pub fn log_where(
        &self,
        include: &[ObjectId],
        exclude: &[ObjectId],
        filter: Option<&KeyFilter>,
        limit: Option<usize>,
        window: (Option<i64>, Option<i64>),
        keep: Option<&KeepCommit<'_>>,
    ) -> RepoResult<Vec<(ObjectId, Commit)>> {
        if limit == Some(0) {
            return Ok(Vec::new());
        }
        if let (Some(n), [tip], [], None, None, (None, None)) =
            (limit, include, exclude, filter, keep, window)
        {
            if let Some(line) = self.single_parent_line(tip, n)? {
                return Ok(line);
            }
        }
        let excluded = if exclude.is_empty() {
            HashSet::new()
        } else {
            self.reachable(exclude)?
        };
        let tips: Vec<ObjectId> = include
            .iter()
            .filter(|t| !excluded.contains(t))
            .copied()
            .collect();
        // A filter that names leading segments or a namespace is first tried against the
        // commits' change filters (computed for the whole history on first use, as blame
        // does); only commits they cannot rule out have their trees compared.
        let probes = filter.and_then(KeyFilter::probes);
        let graph = self.commit_graph(&tips, probes.is_some())?;
        let mut walk = TopoWalk::new(graph.clone(), &tips, limit.is_none());
        let mut follow = AllParents {
            excluded: &excluded,
        };
        walk.collect(&mut follow, limit, |_, pos| {
            let t = graph.timestamp(pos);
            if window.0.is_some_and(|s| t < s) || window.1.is_some_and(|u| t > u) {
                return Ok(None);
            }
            if probes.as_deref().is_some_and(|p| ruled_out(&graph, pos, p)) {
                return Ok(None);
            }
            if !self.changes_filtered(&graph, pos, filter)? {
                return Ok(None);
            }
            let id = graph.id(pos);
            if let Some(k) = keep {
                if !k(&id)? {
                    return Ok(None);
                }
            }
            Ok(Some((id, self.read_commit(&id)?)))
        })
    }

    /// The first `n` commits from `tip` when they form a line of single-parent commits
    /// (ending at most at a first commit): then they are the whole answer of an unfiltered
    /// log, in the only order a line allows, read without the commit graph. `None` when a
    /// merge comes first.
    fn single_parent_line(
        &self,
        tip: &ObjectId,
        n: usize,
    ) -> RepoResult<Option<Vec<(ObjectId, Commit)>>> {
        let mut out = Vec::with_capacity(n.min(256));
        let mut next = Some(*tip);
        while let Some(id) = next.filter(|_| out.len() < n) {
            let c = self.read_commit(&id)?;
            next = match c.parents.as_slice() {
                [] => None,
                [p] => Some(*p),
                _ => return Ok(None),
            };
            out.push((id, c));
        }
        Ok(Some(out))
    }

    /// Whether commit `c` passes `filter` (see [`Repo::log`]).
    fn changes_filtered(
        &self,
        graph: &CommitGraph,
        pos: u32,
        filter: Option<&KeyFilter>,
    ) -> RepoResult<bool> {
        let Some(f) = filter else {
            return Ok(true);
        };
        let root = graph.root(pos);
        if graph.parent_count(pos) == 0 {
            return self.holds_any(&root, Some(f));
        }
        for p in graph.parents(pos) {
            if !self.differs(&graph.root(p), &root, Some(f))? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Whether commit `pos`'s change filters show it changes no key with any of the `probes`
/// entries, against some parent (a merge is listed only when it differs from every parent)
/// or, for a first commit, holds none.
fn ruled_out(graph: &CommitGraph, pos: u32, probes: &[FilterKey]) -> bool {
    (0..graph.parent_count(pos).max(1)).any(|i| {
        probes
            .iter()
            .all(|&k| graph.changed(pos, i, k) == Changed::No)
    })
}
