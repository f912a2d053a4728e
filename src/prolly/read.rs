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
    pub(crate) fn covers(&self, first: &[u8], last: &[u8]) -> bool {
        self.lo.as_deref().is_none_or(|lo| first >= lo)
            && self.hi.as_deref().is_none_or(|hi| last < hi)
    }

    /// Whether `[first, last]` meets the range at all.
    pub(crate) fn meets(&self, first: &[u8], last: &[u8]) -> bool {
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
                return Ok(node.leaf_value(key));
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
        let mut out: Vec<(Vec<u8>, u64)> = Vec::new();
        self.histogram_each(root, range, group, &mut |g, n| out.push((g.to_vec(), n)))?;
        Ok(out)
    }

    /// [`NodeStore::histogram`], each group passed to `f` with its count, in ascending
    /// order, as soon as it is complete: a caller that keeps the groups in a shape of its own
    /// (a depth-3 summary is one group per key) builds it without a copy of each group first.
    pub fn histogram_each(
        &self,
        root: &ObjectId,
        range: &KeyRange,
        group: &dyn Fn(&[u8]) -> &[u8],
        f: &mut dyn FnMut(&[u8], u64),
    ) -> ProllyResult<()> {
        let node = self.root(root)?;
        let mut acc = Groups {
            current: Vec::new(),
            count: None,
            f,
        };
        self.histogram_in(&node, range, group, &mut acc)?;
        acc.finish();
        Ok(())
    }

    fn histogram_in(
        &self,
        node: &Node,
        range: &KeyRange,
        group: &dyn Fn(&[u8]) -> &[u8],
        out: &mut Groups<'_>,
    ) -> ProllyResult<()> {
        let items = &node.items[..];
        let start = match &range.lo {
            Some(lo) => node.child_for(lo).min(items.len()),
            None => 0,
        };
        // Items from `end` on start at or after the range's end.
        let end = match &range.hi {
            Some(hi) => start + items[start..].partition_point(|it| it.key[..] < hi[..]),
            None => items.len(),
        };
        if node.level == 0 {
            // Entries are single keys in order, and those from the first at or after the
            // range's start up to `end` are exactly the ones in the range: each joins the
            // group of the one before or starts the next.
            let first = match &range.lo {
                Some(lo) => start + items[start..end].partition_point(|it| it.key[..] < lo[..]),
                None => start,
            };
            for it in &items[first..end] {
                out.add(group(&it.key), it.count);
            }
            return Ok(());
        }
        let mut i = start;
        while i < end {
            let it = &items[i];
            if !range.covers(&it.key, it.last_key()) {
                // Only the first and last items of the range can be partly outside it.
                if node.level > 0 && range.meets(&it.key, it.last_key()) {
                    let child = self.load_at(&it.id, node.level - 1)?;
                    self.histogram_in(&child, range, group, out)?;
                }
                i += 1;
                continue;
            }
            // The run of items whose first key is in the group of this one (groups are
            // monotone in key order, so it is contiguous; found by binary search). Every item
            // of the run but the last ends before the next one's first key, so lies wholly in
            // the group (and in the range); only the last may reach past it.
            let g = group(&it.key);
            let run_end = i + 1 + items[i + 1..end].partition_point(|x| group(&x.key) == g);
            let whole: u64 = items[i..run_end - 1].iter().map(|x| x.count).sum();
            if run_end - 1 > i {
                out.add(g, whole);
            }
            let tail = &items[run_end - 1];
            if range.covers(&tail.key, tail.last_key()) && group(tail.last_key()) == g {
                out.add(g, tail.count);
            } else if node.level > 0 {
                let child = self.load_at(&tail.id, node.level - 1)?;
                self.histogram_in(&child, range, group, out)?;
            }
            i = run_end;
        }
        Ok(())
    }
}

/// The group a histogram walk is counting (in a buffer reused from group to group) and its
/// count so far (`None` before the first key); a group is handed to `f` when the next one
/// starts, the last one by [`Groups::finish`].
struct Groups<'f> {
    current: Vec<u8>,
    count: Option<u64>,
    f: &'f mut dyn FnMut(&[u8], u64),
}

impl Groups<'_> {
    fn add(&mut self, g: &[u8], n: u64) {
        match &mut self.count {
            Some(c) if self.current[..] == *g => *c += n,
            _ => {
                if let Some(c) = self.count {
                    (self.f)(&self.current, c);
                }
                self.current.clear();
                self.current.extend_from_slice(g);
                self.count = Some(n);
            }
        }
    }

    /// Hands the last group to `f` (there is none when no key was counted).
    fn finish(self) {
        if let Some(n) = self.count {
            (self.f)(&self.current, n);
        }
    }
}
