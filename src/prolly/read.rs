//! Reads: point gets, ordered scans, counts and prefix histograms.

use std::sync::Arc;

use super::node::Node;
use super::{NodeStore, ProllyResult};
use crate::object::ObjectId;

/// A half-open key range `[lo, hi)`; `None` bounds are open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyRange {
    /// Inclusive lower bound.
    pub lo: Option<Vec<u8>>,
    /// Exclusive upper bound.
    pub hi: Option<Vec<u8>>,
}

impl KeyRange {
    /// Every key.
    pub fn all() -> Self {
        KeyRange::default()
    }

    /// `[lo, hi)`.
    pub fn new(lo: Vec<u8>, hi: Vec<u8>) -> Self {
        KeyRange {
            lo: Some(lo),
            hi: Some(hi),
        }
    }

    /// Whether `key` is inside.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.lo.as_deref().is_none_or(|lo| key >= lo)
            && self.hi.as_deref().is_none_or(|hi| key < hi)
    }

    /// Whether `[first, last]` lies wholly inside.
    fn covers(&self, first: &[u8], last: &[u8]) -> bool {
        self.lo.as_deref().is_none_or(|lo| first >= lo)
            && self.hi.as_deref().is_none_or(|hi| last < hi)
    }

    /// Whether `[first, last]` meets the range at all.
    fn meets(&self, first: &[u8], last: &[u8]) -> bool {
        self.lo.as_deref().is_none_or(|lo| last >= lo)
            && self.hi.as_deref().is_none_or(|hi| first < hi)
    }
}

/// The range of all keys that start with `prefix`.
pub fn prefix_range(prefix: &[u8]) -> KeyRange {
    let mut hi = prefix.to_vec();
    while let Some(&last) = hi.last() {
        if last == 0xff {
            hi.pop();
        } else {
            *hi.last_mut().expect("non-empty") += 1;
            return KeyRange {
                lo: Some(prefix.to_vec()),
                hi: Some(hi),
            };
        }
    }
    KeyRange {
        lo: Some(prefix.to_vec()),
        hi: None,
    }
}

impl NodeStore {
    fn root(&self, root: &ObjectId) -> ProllyResult<Arc<Node>> {
        let n = self.load(root)?;
        if n.level > 0 && n.items.len() < 2 {
            return Err(super::corrupt(
                root,
                "internal root with fewer than two children",
            ));
        }
        Ok(n)
    }

    /// The value id stored at `key`, if any.
    pub fn get(&self, root: &ObjectId, key: &[u8]) -> ProllyResult<Option<ObjectId>> {
        let mut node = self.root(root)?;
        loop {
            if node.items.is_empty() {
                return Ok(None);
            }
            if node.level == 0 {
                return Ok(node
                    .items
                    .binary_search_by(|it| it.key[..].cmp(key))
                    .ok()
                    .map(|i| node.items[i].id));
            }
            let it = &node.items[node.child_for(key)];
            if key < &it.key[..] || key > it.last_key() {
                return Ok(None);
            }
            node = self.load_at(&it.id, node.level - 1)?;
        }
    }

    /// Number of keys in the tree: O(1), read from the root.
    pub fn count(&self, root: &ObjectId) -> ProllyResult<u64> {
        Ok(self.root(root)?.count())
    }

    /// Number of keys in `range`: O(height) node reads.
    pub fn count_range(&self, root: &ObjectId, range: &KeyRange) -> ProllyResult<u64> {
        let node = self.root(root)?;
        self.count_in(&node, range)
    }

    fn count_in(&self, node: &Node, range: &KeyRange) -> ProllyResult<u64> {
        let mut total = 0;
        for it in &node.items {
            if !range.meets(&it.key, it.last_key()) {
                continue;
            }
            if range.covers(&it.key, it.last_key()) {
                total += it.count;
            } else if node.level > 0 {
                total += self.count_in(&*self.load_at(&it.id, node.level - 1)?, range)?;
            }
        }
        Ok(total)
    }

    /// Visits `(key, value id)` in ascending key order within `range`; stops when `f`
    /// returns false.
    pub fn scan(
        &self,
        root: &ObjectId,
        range: &KeyRange,
        f: &mut dyn FnMut(&[u8], &ObjectId) -> bool,
    ) -> ProllyResult<()> {
        let node = self.root(root)?;
        self.scan_in(&node, range, f).map(drop)
    }

    fn scan_in(
        &self,
        node: &Node,
        range: &KeyRange,
        f: &mut dyn FnMut(&[u8], &ObjectId) -> bool,
    ) -> ProllyResult<bool> {
        let start = match &range.lo {
            Some(lo) => node.child_for(lo),
            None => 0,
        };
        for it in &node.items[start.min(node.items.len())..] {
            if let Some(hi) = &range.hi {
                if it.key[..] >= hi[..] {
                    return Ok(false);
                }
            }
            if node.level == 0 {
                if range.contains(&it.key) && !f(&it.key, &it.id) {
                    return Ok(false);
                }
            } else if range.meets(&it.key, it.last_key())
                && !self.scan_in(&*self.load_at(&it.id, node.level - 1)?, range, f)?
            {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Every `(key, value id)` in `range`, in order.
    pub fn collect(
        &self,
        root: &ObjectId,
        range: &KeyRange,
    ) -> ProllyResult<Vec<(Vec<u8>, ObjectId)>> {
        let mut out = Vec::new();
        self.scan(root, range, &mut |k, v| {
            out.push((k.to_vec(), *v));
            true
        })?;
        Ok(out)
    }

    /// Counts keys in `range` by group, where `group(key)` is a prefix of the key that is
    /// monotone in key order (such as [`crate::key::group_prefix`]). A child whose first and
    /// last keys fall in the same group adds its count without being opened, so the cost is
    /// O(groups x height) node reads. Groups come out in ascending order.
    pub fn histogram(
        &self,
        root: &ObjectId,
        range: &KeyRange,
        group: &dyn Fn(&[u8]) -> &[u8],
    ) -> ProllyResult<Vec<(Vec<u8>, u64)>> {
        let node = self.root(root)?;
        let mut out: Vec<(Vec<u8>, u64)> = Vec::new();
        self.histogram_in(&node, range, group, &mut out)?;
        Ok(out)
    }

    fn histogram_in(
        &self,
        node: &Node,
        range: &KeyRange,
        group: &dyn Fn(&[u8]) -> &[u8],
        out: &mut Vec<(Vec<u8>, u64)>,
    ) -> ProllyResult<()> {
        let start = match &range.lo {
            Some(lo) => node.child_for(lo),
            None => 0,
        };
        for it in &node.items[start.min(node.items.len())..] {
            if !range.meets(&it.key, it.last_key()) {
                if range.hi.as_deref().is_some_and(|hi| &it.key[..] >= hi) {
                    break;
                }
                continue;
            }
            let g = group(&it.key);
            if range.covers(&it.key, it.last_key()) && g == group(it.last_key()) {
                match out.last_mut() {
                    Some((last, n)) if last[..] == *g => *n += it.count,
                    _ => out.push((g.to_vec(), it.count)),
                }
            } else if node.level > 0 {
                self.histogram_in(&*self.load_at(&it.id, node.level - 1)?, range, group, out)?;
            }
        }
        Ok(())
    }
}
