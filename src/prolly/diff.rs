//! Structural diff of two trees: descends only where subtree ids differ.

use std::sync::Arc;

use super::node::{KeyBytes, Node};
use super::{KeyRange, NodeStore, ProllyError, ProllyResult};
use crate::object::ObjectId;

/// One key that differs between two trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The key (a window of its leaf's bytes, not a copy).
    pub key: KeyBytes,
    /// Its value id in the old tree (None = added).
    pub old: Option<ObjectId>,
    /// Its value id in the new tree (None = removed).
    pub new: Option<ObjectId>,
}

/// One side of a diff: the path from the root to the item to look at next.
///
/// Items are borrowed from the (shared, immutable) nodes on the path, so walking a side
/// allocates nothing per item; only the reported changes copy their keys.
struct Side<'r> {
    /// (node, index of its current item), root first; the current item is the top's.
    stack: Vec<(Arc<Node>, usize)>,
    range: &'r KeyRange,
    /// When set, the ids of the nodes this side opens below its root are added here.
    seen: Option<&'r mut Vec<ObjectId>>,
    /// Whether the leaves it opens are kept in the node cache.
    cache_leaves: bool,
}

impl<'r> Side<'r> {
    fn new(
        root: Arc<Node>,
        range: &'r KeyRange,
        seen: Option<&'r mut Vec<ObjectId>>,
        cache_leaves: bool,
    ) -> Self {
        let mut s = Side {
            stack: Vec::with_capacity(root.level as usize + 1),
            range,
            seen,
            cache_leaves,
        };
        s.stack.push((root, 0));
        s.settle();
        s
    }

    /// Moves to the first item at or after the current position that meets the range,
    /// leaving exhausted nodes.
    fn settle(&mut self) {
        while let Some((n, i)) = self.stack.last_mut() {
            while let Some(it) = n.items.get(*i) {
                if self.range.meets(&it.key, it.last_key()) {
                    return;
                }
                if self.range.hi.as_deref().is_some_and(|hi| &it.key[..] >= hi) {
                    *i = n.items.len(); // this and every later item lie above the range
                } else {
                    *i += 1;
                }
            }
            self.stack.pop();
            if let Some((_, i)) = self.stack.last_mut() {
                *i += 1;
            }
        }
    }

    /// Level and child id of the current item, if any is left.
    fn current(&self) -> Option<(u8, &ObjectId)> {
        self.stack.last().map(|(n, i)| (n.level, &n.items[*i].id))
    }

    /// Skips the current item (a whole subtree, or one entry).
    fn advance(&mut self) {
        if let Some((_, i)) = self.stack.last_mut() {
            *i += 1;
        }
        self.settle();
    }

    /// Replaces the current item, a subtree, by its child node's items.
    fn descend(&mut self, ns: &NodeStore) -> ProllyResult<()> {
        let Some((n, i)) = self.stack.last() else {
            return Ok(());
        };
        let id = n.items[*i].id;
        let level = n.level - 1;
        let child = ns.load_keeping(&id, level > 0 || self.cache_leaves)?;
        if child.level != level {
            return Err(super::corrupt(&id, "node level differs from its parent's"));
        }
        if let Some(seen) = self.seen.as_deref_mut() {
            seen.push(id);
        }
        self.stack.push((child, 0));
        self.settle();
        Ok(())
    }

    /// The current leaf, its current index, and the end of its items inside the range.
    fn leaf(&self) -> Option<(Arc<Node>, usize, usize)> {
        let (n, i) = self.stack.last()?;
        let end = match self.range.hi.as_deref() {
            Some(hi) => n.items.partition_point(|it| &it.key[..] < hi),
            None => n.items.len(),
        };
        Some((n.clone(), *i, end))
    }

    /// Sets the current leaf's index (after a run of entries was consumed).
    fn consumed_to(&mut self, i: usize) {
        if let Some((_, at)) = self.stack.last_mut() {
            *at = i;
        }
        self.settle();
    }
}

/// What the walk does next, decided from the two current items.
enum Step {
    Done,
    SkipBoth,
    DescendOld,
    DescendNew,
    Entries,
}

impl NodeStore {
    /// Visits every key whose value differs between `old` and `new`, in ascending key order;
    /// stops when `f` returns false. Equal subtrees are skipped without being read, so the
    /// cost is O(changed keys x height) node reads.
    pub fn diff(
        &self,
        old: &ObjectId,
        new: &ObjectId,
        f: &mut dyn FnMut(Change) -> bool,
    ) -> ProllyResult<()> {
        self.diff_range(old, new, &KeyRange::all(), f)
    }

    /// [`NodeStore::diff`] confined to `range`: subtrees outside it are never opened, so the
    /// cost is O((changes in range + 1) x height) node reads.
    ///
    /// Both trees are walked in key order together. Whenever both current items are
    /// subtrees with the same id they are skipped together; the same id at different
    /// heights is found too, because the higher side is always opened first (chunk
    /// boundaries that line up give equal nodes on the same level). Two leaves are compared
    /// by one merge of their sorted items.
    pub fn diff_range(
        &self,
        old: &ObjectId,
        new: &ObjectId,
        range: &KeyRange,
        f: &mut dyn FnMut(Change) -> bool,
    ) -> ProllyResult<()> {
        self.diff_walk(old, new, range, f, None, true)
    }

    /// The walk behind [`NodeStore::diff_range`]; when `seen_new` is given, the ids of the
    /// nodes it opens in `new` (below its root) are added to it: they were just read, so
    /// they are stored (see [`NodeStore::apply_known`]). Without `cache_leaves`, the leaves
    /// it opens are not kept in the node cache: a one-off diff visits each once, and keeping
    /// them all decoded would put each in fresh memory. A walk over consecutive commits
    /// (each commit's leaves are the next one's old side) keeps them.
    pub(crate) fn diff_walk(
        &self,
        old: &ObjectId,
        new: &ObjectId,
        range: &KeyRange,
        f: &mut dyn FnMut(Change) -> bool,
        seen_new: Option<&mut Vec<ObjectId>>,
        cache_leaves: bool,
    ) -> ProllyResult<()> {
        if old == new {
            return Ok(());
        }
        let mut a = Side::new(self.load(old)?, range, None, cache_leaves);
        let mut b = Side::new(self.load(new)?, range, seen_new, cache_leaves);
        loop {
            let step = match (a.current(), b.current()) {
                (None, None) => Step::Done,
                (Some((la, x)), Some((lb, y))) if la > 0 && lb > 0 && x == y => Step::SkipBoth,
                (Some((la, _)), other) if la > 0 && other.is_none_or(|(lb, _)| lb <= la) => {
                    Step::DescendOld
                }
                (_, Some((lb, _))) if lb > 0 => Step::DescendNew,
                _ => Step::Entries,
            };
            match step {
                Step::Done => return Ok(()),
                Step::SkipBoth => {
                    a.advance();
                    b.advance();
                }
                Step::DescendOld => a.descend(self)?,
                Step::DescendNew => b.descend(self)?,
                Step::Entries => {
                    if !merge_leaves(&mut a, &mut b, f) {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Every change from `old` to `new`, in key order.
    pub fn diff_all(&self, old: &ObjectId, new: &ObjectId) -> ProllyResult<Vec<Change>> {
        self.diff_map(old, new, &KeyRange::all(), &Some)
    }

    /// The changes from `old` to `new` inside `range`, each passed through `map` (which
    /// drops it by returning `None`), in key order.
    ///
    /// A diff of large trees is split at a key near the middle of the range (by key count)
    /// and the two halves are walked on two threads: the walk is bound by node reads and
    /// leaf comparisons, which parallelise cleanly, and the halves' results concatenate in
    /// key order.
    pub fn diff_map<T: Send>(
        &self,
        old: &ObjectId,
        new: &ObjectId,
        range: &KeyRange,
        map: &(dyn Fn(Change) -> Option<T> + Sync),
    ) -> ProllyResult<Vec<T>> {
        self.diff_try_map(old, new, range, 0, &|c| Ok(map(c)))
    }

    /// [`NodeStore::diff_map`] with a `map` that can fail: the walk stops at the first
    /// failure in key order, which is returned. The results are collected as they come,
    /// with no list of outcomes first; a walk on one thread makes room for `expected` of
    /// them at once (a caller who knows a lower bound spares the list its regrowing). Like
    /// every one-off diff, it keeps none of the leaves it opens in the node cache (see
    /// `diff_walk`).
    pub fn diff_try_map<T: Send, E: From<ProllyError> + Send>(
        &self,
        old: &ObjectId,
        new: &ObjectId,
        range: &KeyRange,
        expected: usize,
        map: &(dyn Fn(Change) -> Result<Option<T>, E> + Sync),
    ) -> Result<Vec<T>, E> {
        if old == new {
            return Ok(Vec::new());
        }
        let walk = |range: &KeyRange, expected: usize| -> Result<Vec<T>, E> {
            let mut out = Vec::with_capacity(expected);
            let mut failed = None;
            let mut each = |c| match map(c) {
                Ok(kept) => {
                    out.extend(kept);
                    true
                }
                Err(e) => {
                    failed = Some(e);
                    false
                }
            };
            self.diff_walk(old, new, range, &mut each, None, false)?;
            failed.map_or(Ok(out), Err)
        };
        let Some(mid) = self.split_key(old, new, range)? else {
            return walk(range, expected);
        };
        let left = KeyRange {
            lo: range.lo.clone(),
            hi: Some(mid.clone()),
        };
        let right = KeyRange {
            lo: Some(mid),
            hi: range.hi.clone(),
        };
        let (l, r) = std::thread::scope(|s| {
            // How the changes split between the halves is not known: each grows its own list.
            let r = s.spawn(|| walk(&right, 0));
            let l = walk(&left, 0);
            (l, r.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        });
        let mut out = l?;
        out.extend(r?);
        Ok(out)
    }

    /// A key strictly inside `range` near the middle, by key count, of the larger of the
    /// two trees' parts in the range; `None` when the trees are too small to be worth two
    /// threads (fewer than [`PARALLEL_DIFF_LEVEL`] levels above the leaves).
    fn split_key(
        &self,
        old: &ObjectId,
        new: &ObjectId,
        range: &KeyRange,
    ) -> ProllyResult<Option<Vec<u8>>> {
        let (a, b) = (self.load(old)?, self.load(new)?);
        let mut node = if b.level >= a.level { b } else { a };
        if node.level < PARALLEL_DIFF_LEVEL {
            return Ok(None);
        }
        let inside = |n: &Node| -> Vec<usize> {
            (0..n.items.len())
                .filter(|&i| range.meets(&n.items[i].key, n.items[i].last_key()))
                .collect()
        };
        let mut idx = inside(&node);
        let half = idx.iter().map(|&i| node.items[i].count).sum::<u64>() / 2;
        let mut before = 0u64;
        let key = loop {
            if node.level == 0 {
                let at = (half.saturating_sub(before) as usize).min(idx.len().saturating_sub(1));
                match idx.get(at) {
                    Some(&i) => break node.items[i].key.to_vec(),
                    None => return Ok(None),
                }
            }
            let mut next = None;
            for &i in &idx {
                let it = &node.items[i];
                if before + it.count > half {
                    next = Some(it.id);
                    break;
                }
                before += it.count;
            }
            let Some(id) = next.or_else(|| idx.last().map(|&i| node.items[i].id)) else {
                return Ok(None);
            };
            node = self.load_at(&id, node.level - 1)?;
            idx = inside(&node);
        };
        let strictly_inside = range.lo.as_deref().is_none_or(|lo| key.as_slice() > lo)
            && range.hi.as_deref().is_none_or(|hi| key.as_slice() < hi);
        Ok(strictly_inside.then_some(key))
    }
}

/// Diffs of trees whose root is at least this many levels above the leaves (about 60,000
/// keys and up with keys of about 25 bytes) are split over two threads; below it a thread
/// costs more than it saves (at 5,000 keys a diff of 1,000 of them took 1 ms longer on two).
pub const PARALLEL_DIFF_LEVEL: u8 = 3;

/// Compares the current leaves of both sides (either may be exhausted) by one merge of
/// their items, up to the end of the shorter run; reports the changes. False when `f`
/// asked to stop.
fn merge_leaves(a: &mut Side<'_>, b: &mut Side<'_>, f: &mut dyn FnMut(Change) -> bool) -> bool {
    let empty = || {
        (
            Arc::new(Node {
                level: 0,
                items: Vec::new(),
            }),
            0,
            0,
        )
    };
    let (has_a, has_b) = (a.current().is_some(), b.current().is_some());
    let (na, mut i, ea) = a.leaf().unwrap_or_else(empty);
    let (nb, mut j, eb) = b.leaf().unwrap_or_else(empty);
    let (xs, ys) = (&na.items, &nb.items);
    let mut go = true;
    // Stop at the end of either leaf (unless the other side is exhausted): its next leaf
    // may start a subtree the other side shares.
    while go && (i < ea || j < eb) && (i < ea || !has_a) && (j < eb || !has_b) {
        let change = match (xs.get(i).filter(|_| i < ea), ys.get(j).filter(|_| j < eb)) {
            (Some(x), Some(y)) => match x.key.cmp(&y.key) {
                std::cmp::Ordering::Equal => {
                    i += 1;
                    j += 1;
                    if x.id == y.id {
                        continue;
                    }
                    Change {
                        key: x.key.clone(),
                        old: Some(x.id),
                        new: Some(y.id),
                    }
                }
                std::cmp::Ordering::Less => {
                    i += 1;
                    Change {
                        key: x.key.clone(),
                        old: Some(x.id),
                        new: None,
                    }
                }
                std::cmp::Ordering::Greater => {
                    j += 1;
                    Change {
                        key: y.key.clone(),
                        old: None,
                        new: Some(y.id),
                    }
                }
            },
            (Some(x), None) => {
                i += 1;
                Change {
                    key: x.key.clone(),
                    old: Some(x.id),
                    new: None,
                }
            }
            (None, Some(y)) => {
                j += 1;
                Change {
                    key: y.key.clone(),
                    old: None,
                    new: Some(y.id),
                }
            }
            (None, None) => break,
        };
        go = f(change);
    }
    if has_a {
        a.consumed_to(i);
    }
    if has_b {
        b.consumed_to(j);
    }
    go
}
