//! Reachability: every node and value id below a root, skipping subtrees already seen.
//!
//! Histories share nearly all of their nodes, so a walk over many roots passes one set of
//! marked ids along: a child already in the set is neither loaded nor descended into, and a
//! history of many commits costs O(distinct nodes) loads, not O(commits x tree size).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use super::{NodeStore, ProllyResult};
use crate::object::ObjectId;

/// Hashes object ids by their leading bytes: ids are already uniform hashes, so rehashing
/// them (the default SipHash) only costs time in sets of millions of ids.
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut word = [0u8; 8];
        let n = bytes.len().min(8);
        word[..n].copy_from_slice(&bytes[..n]);
        self.0 =
            (self.0.rotate_left(17) ^ u64::from_le_bytes(word)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A set of object ids with the cheap [`IdHasher`].
pub type IdSet = HashSet<ObjectId, BuildHasherDefault<IdHasher>>;

/// A map keyed by object id with the cheap [`IdHasher`].
pub type IdMap<V> = HashMap<ObjectId, V, BuildHasherDefault<IdHasher>>;

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
    pub fn mark_reachable(&self, root: &ObjectId, marked: &mut IdSet) -> ProllyResult<MarkStats> {
        self.mark_reachable_with(root, marked, &mut |_| {})
    }

    /// As [`NodeStore::mark_reachable`], calling `on_value` with each value id it newly
    /// marks (a caller that must vouch for the values reads them there).
    pub fn mark_reachable_with(
        &self,
        root: &ObjectId,
        marked: &mut IdSet,
        on_value: &mut dyn FnMut(&ObjectId),
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
                        on_value(&it.id);
                    } else {
                        stack.push(it.id);
                    }
                }
            }
        }
        Ok(stats)
    }
}
