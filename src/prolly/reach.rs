//! Reachability: every node and value id below a root, skipping subtrees already seen.
//!
//! Histories share nearly all of their nodes, so a walk over many roots passes one set of
//! marked ids along: a child already in the set is neither loaded nor descended into, and a
//! history of many commits costs O(distinct nodes) loads, not O(commits x tree size).

use std::collections::HashSet;

use super::{NodeStore, ProllyResult};
use crate::object::ObjectId;

/// What one [`NodeStore::mark_reachable`] call added to the marked set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MarkStats {
    /// Tree nodes newly marked (loaded and descended into).
    pub nodes: u64,
    /// Value ids newly marked (not loaded).
    pub values: u64,
}

impl NodeStore {
    /// Adds `root` and every node and value id below it to `marked`, descending only into
    /// nodes not yet in `marked` (a marked node's subtree is assumed marked too, which holds
    /// when `marked` only ever grows through this method). Value ids are recorded without
    /// being read. Any node that cannot be loaded (missing, corrupt) is an error, so a caller
    /// that deletes what is not marked never acts on an incomplete walk.
    pub fn mark_reachable(
        &self,
        root: &ObjectId,
        marked: &mut HashSet<ObjectId>,
    ) -> ProllyResult<MarkStats> {
        let mut stats = MarkStats::default();
        if !marked.insert(*root) {
            return Ok(stats);
        }
        let mut stack = vec![*root];
        while let Some(id) = stack.pop() {
            let node = self.load(&id)?;
            stats.nodes += 1;
            for it in &node.items {
                if marked.insert(it.id) {
                    if node.level == 0 {
                        stats.values += 1;
                    } else {
                        stack.push(it.id);
                    }
                }
            }
        }
        Ok(stats)
    }
}
