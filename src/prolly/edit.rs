//! Building trees and applying sorted batches of edits.
//!
//! An edit batch is applied level by level. At each level, chunking restarts at the start of
//! the first node whose region an edit touches (an old boundary, still valid because nothing
//! before it changed), runs over the merged old items and edits, and stops as soon as a new
//! boundary falls on an old one with no edit pending in between: from there on the old nodes
//! are reused as they are. The nodes replaced and the nodes made become the edits of the level
//! above. Only the touched paths are rewritten.

use std::sync::Arc;

use super::chunker::{ItemRef, MadeNode, NodeChunker};
use super::cursor::LevelCursor;
use super::node::{Item, KeyBytes, Node};
use super::{check_key, IdSet, NodeStore, ProllyError, ProllyResult};
use crate::object::ObjectId;

/// One change to a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Set `key` to the value id.
    Put(Vec<u8>, ObjectId),
    /// Remove `key` (no effect when absent).
    Delete(Vec<u8>),
}

impl Edit {
    /// The key this edit touches.
    pub fn key(&self) -> &[u8] {
        match self {
            Edit::Put(k, _) | Edit::Delete(k) => k,
        }
    }
}

/// What applying a batch did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApplyStats {
    /// Nodes encoded (new or identical to old ones).
    pub nodes_made: usize,
    /// Node objects newly written to the store.
    pub nodes_written: usize,
    /// Bytes of the nodes newly written.
    pub bytes_written: usize,
}

/// An edit of one level: replace or remove the item with this key.
enum LevelEdit {
    Put(Item),
    Delete(KeyBytes),
}

impl LevelEdit {
    fn key(&self) -> &[u8] {
        match self {
            LevelEdit::Put(it) => &it.key,
            LevelEdit::Delete(k) => k,
        }
    }
}

/// Collects the nodes a batch makes; writes them together at the end.
struct Writer<'a> {
    ns: &'a NodeStore,
    pending: Vec<([u8; 32], Vec<u8>)>,
    made: usize,
    /// Nodes known to be stored already: made again, they are not written again.
    known: Option<&'a IdSet>,
}

impl<'a> Writer<'a> {
    fn new(ns: &'a NodeStore) -> Self {
        Writer {
            ns,
            pending: Vec::new(),
            made: 0,
            known: None,
        }
    }

    /// Queues a finished node for writing; returns the item that points at it. The node is
    /// not decoded into the cache: a later read of it decodes it then.
    fn emit(&mut self, made: MadeNode) -> Item {
        self.pending.push((*made.id.as_bytes(), made.bytes));
        self.made += 1;
        made.item
    }

    /// A node made by this batch (not written yet) or stored.
    fn load(&self, id: &ObjectId) -> ProllyResult<Arc<Node>> {
        match self.pending.iter().rev().find(|(p, _)| p == id.as_bytes()) {
            Some((_, bytes)) => Node::decode_shared(bytes.clone().into())
                .map(Arc::new)
                .map_err(|e| super::corrupt(id, e.to_string())),
            None => self.ns.load(id),
        }
    }

    fn write(&mut self, stats: &mut ApplyStats) -> ProllyResult<()> {
        if let Some(known) = self.known {
            self.pending
                .retain(|(id, _)| !known.contains(&ObjectId::from_bytes(*id)));
        }
        let outcomes = self.ns.objects().write_encoded(&self.pending)?;
        for ((_, bytes), o) in self.pending.iter().zip(outcomes) {
            if o != crate::store::PutOutcome::Existing {
                stats.nodes_written += 1;
                stats.bytes_written += bytes.len();
            }
        }
        stats.nodes_made += self.made;
        self.pending.clear();
        self.made = 0;
        Ok(())
    }
}

/// Builds levels upward from a stream of items of `base` level.
struct Builder {
    base: u8,
    chunkers: Vec<NodeChunker>,
    /// The last node emitted on each level, held back until the level is known to have
    /// another node (a level with one node is the top, and gets no parent).
    held: Vec<Option<Item>>,
    nodes: Vec<usize>,
}

impl Builder {
    fn new(base: u8) -> Self {
        Builder {
            base,
            chunkers: Vec::new(),
            held: Vec::new(),
            nodes: Vec::new(),
        }
    }

    fn ensure(&mut self, l: usize) {
        while self.chunkers.len() <= l {
            self.chunkers
                .push(NodeChunker::new(self.base + self.chunkers.len() as u8));
            self.held.push(None);
            self.nodes.push(0);
        }
    }

    fn push(&mut self, w: &mut Writer<'_>, l: usize, item: ItemRef<'_>) {
        self.ensure(l);
        if let Some(made) = self.chunkers[l].push(item) {
            self.emitted(w, l, made);
        }
    }

    fn emitted(&mut self, w: &mut Writer<'_>, l: usize, made: MadeNode) {
        let parent = w.emit(made);
        self.nodes[l] += 1;
        if let Some(prev) = self.held[l].replace(parent) {
            self.push(w, l + 1, (&prev).into());
        }
    }

    /// Flushes every level; returns the item of the single top node, or None if no item was
    /// ever pushed.
    fn finish(mut self, w: &mut Writer<'_>) -> Option<Item> {
        let mut l = 0;
        loop {
            if l >= self.chunkers.len() {
                return None;
            }
            if !self.chunkers[l].is_empty() {
                let made = self.chunkers[l].finish();
                self.emitted(w, l, made);
            }
            if self.nodes[l] == 1 {
                return self.held[l].take();
            }
            if let Some(last) = self.held[l].take() {
                self.push(w, l + 1, (&last).into());
            }
            l += 1;
        }
    }
}

impl NodeStore {
    /// Builds a tree from entries in strictly ascending key order; writes it; returns its
    /// root id.
    pub fn build_sorted(
        &self,
        entries: impl IntoIterator<Item = (Vec<u8>, ObjectId)>,
    ) -> ProllyResult<ObjectId> {
        let mut w = Writer::new(self);
        let mut b = Builder::new(0);
        let mut prev: Option<Vec<u8>> = None;
        for (k, v) in entries {
            check_key(&k)?;
            if prev.as_deref().is_some_and(|p| p >= &k[..]) {
                return Err(ProllyError::Unsorted);
            }
            b.push(&mut w, 0, ItemRef::leaf(&k, &v));
            prev = Some(k);
            if w.pending.len() >= 4096 {
                w.write(&mut ApplyStats::default())?;
            }
        }
        let top = b.finish(&mut w);
        w.write(&mut ApplyStats::default())?;
        match top {
            Some(it) => Ok(it.id),
            None => self.empty(),
        }
    }

    /// Applies a batch of edits to the tree `root`; writes the new nodes (one store batch);
    /// returns the new root id. Later edits of the same key win. Only the paths the edits
    /// touch are rewritten.
    pub fn apply(&self, root: &ObjectId, edits: Vec<Edit>) -> ProllyResult<ObjectId> {
        self.apply_with_stats(root, edits).map(|(r, _)| r)
    }

    /// [`NodeStore::apply`], also reporting what was written.
    pub fn apply_with_stats(
        &self,
        root: &ObjectId,
        edits: Vec<Edit>,
    ) -> ProllyResult<(ObjectId, ApplyStats)> {
        self.apply_inner(root, edits, None)
    }

    /// [`NodeStore::apply_with_stats`], told that the nodes in `known` are stored already:
    /// a node the edits make again (a merge remakes many of the merged-in side's nodes) is
    /// not written again, which saves a store write per node. The caller must know them
    /// stored, e.g. because it just read them (as a merge's tree diff does), and must
    /// keep garbage collection from running in between.
    pub fn apply_known(
        &self,
        root: &ObjectId,
        edits: Vec<Edit>,
        known: &IdSet,
    ) -> ProllyResult<(ObjectId, ApplyStats)> {
        self.apply_inner(root, edits, Some(known))
    }

    fn apply_inner(
        &self,
        root: &ObjectId,
        mut edits: Vec<Edit>,
        known: Option<&IdSet>,
    ) -> ProllyResult<(ObjectId, ApplyStats)> {
        for e in &edits {
            check_key(e.key())?;
        }
        // Stable sort, then keep the last edit of each key.
        edits.sort_by(|a, b| a.key().cmp(b.key()));
        let mut level_edits: Vec<LevelEdit> = Vec::with_capacity(edits.len());
        for e in edits {
            let le = match e {
                Edit::Put(k, v) => LevelEdit::Put(Item::leaf(&k, v)),
                Edit::Delete(k) => LevelEdit::Delete(k.into()),
            };
            match level_edits.last_mut() {
                Some(last) if last.key() == le.key() => *last = le,
                _ => level_edits.push(le),
            }
        }
        let mut stats = ApplyStats::default();
        let old_root = self.load(root)?;
        let mut w = Writer::new(self);
        w.known = known;
        if old_root.items.is_empty() {
            let mut b = Builder::new(0);
            for e in &level_edits {
                if let LevelEdit::Put(it) = e {
                    b.push(&mut w, 0, it.into());
                }
            }
            let new_root = match b.finish(&mut w) {
                Some(it) => it.id,
                None => *root,
            };
            w.write(&mut stats)?;
            return Ok((new_root, stats));
        }
        let mut level = 0u8;
        loop {
            if level_edits.is_empty() {
                w.write(&mut stats)?;
                return Ok((*root, stats));
            }
            let above = self.edit_level(&old_root, root, level, &level_edits, &mut w)?;
            if level < old_root.level {
                level_edits = above;
                level += 1;
                continue;
            }
            // The root's level: the new top items are the root's item edited by `above`.
            let root_item = Item {
                key: old_root.items[0].key.clone(),
                last: old_root.last_key().unwrap_or_default().into(),
                id: *root,
                count: old_root.count(),
            };
            let tops = merge(vec![root_item], &above);
            let new_root = match tops.len() {
                0 => {
                    w.write(&mut stats)?;
                    return Ok((self.empty()?, stats));
                }
                1 => tops[0].id,
                _ => {
                    let mut b = Builder::new(level + 1);
                    for it in &tops {
                        b.push(&mut w, 0, it.into());
                    }
                    b.finish(&mut w).map(|it| it.id).unwrap_or(*root)
                }
            };
            let new_root = self.collapse(new_root, &mut w)?;
            w.write(&mut stats)?;
            return Ok((new_root, stats));
        }
    }

    /// Drops internal roots with a single child (and their pending writes).
    fn collapse(&self, mut root: ObjectId, w: &mut Writer<'_>) -> ProllyResult<ObjectId> {
        loop {
            let n = w.load(&root)?;
            if n.level == 0 || n.items.len() != 1 {
                return Ok(root);
            }
            w.pending.retain(|(id, _)| id != root.as_bytes());
            root = n.items[0].id;
        }
    }

    /// Re-chunks the regions of `level` that `edits` touch; returns the edits of the level
    /// above (replaced nodes deleted, new nodes put, unchanged pairs dropped).
    fn edit_level(
        &self,
        root: &Arc<Node>,
        root_id: &ObjectId,
        level: u8,
        edits: &[LevelEdit],
        w: &mut Writer<'_>,
    ) -> ProllyResult<Vec<LevelEdit>> {
        // Replaced nodes (their first key is the parent item's key).
        let mut removed: Vec<(Arc<Node>, ObjectId)> = Vec::new();
        let mut made: Vec<Item> = Vec::new();
        let mut ch = NodeChunker::new(level);
        fn feed(ch: &mut NodeChunker, it: ItemRef<'_>, w: &mut Writer<'_>, made: &mut Vec<Item>) {
            if let Some(node) = ch.push(it) {
                made.push(w.emit(node));
            }
        }
        let mut cur: Option<LevelCursor> = None;
        let mut i = 0;
        while i < edits.len() {
            let cur = match &mut cur {
                // Later groups re-descend only from where their path leaves the last one.
                Some(c) => {
                    c.reseek(self, edits[i].key())?;
                    c
                }
                None => cur.insert(LevelCursor::seek(
                    self,
                    root,
                    root_id,
                    level,
                    edits[i].key(),
                )?),
            };
            loop {
                let node = cur.node().clone();
                // The next node's first key, held through its parent (no copy).
                let next = cur.next_parent();
                let bound = next.as_ref().map(|(n, i)| &n.items[*i].key[..]);
                removed.push((node.clone(), *cur.id()));
                let in_region = |k: &[u8]| bound.is_none_or(|b| k < b);
                let items = &node.items[..];
                let mut j = 0;
                while let Some(e) = edits.get(i).filter(|e| in_region(e.key())) {
                    // The old items before the edit's key go through unchanged.
                    let k = j + items[j..].partition_point(|it| it.key[..] < *e.key());
                    for it in &items[j..k] {
                        feed(&mut ch, it.into(), w, &mut made);
                    }
                    j = k;
                    if items.get(j).is_some_and(|it| it.key[..] == *e.key()) {
                        j += 1; // replaced or deleted
                    }
                    if let LevelEdit::Put(new) = e {
                        feed(&mut ch, new.into(), w, &mut made);
                    }
                    i += 1;
                }
                for it in &items[j..] {
                    feed(&mut ch, it.into(), w, &mut made);
                }
                if bound.is_none() {
                    if !ch.is_empty() {
                        made.push(w.emit(ch.finish()));
                    }
                    break;
                }
                if ch.is_empty() {
                    break; // a new boundary meets an old one: the rest is unchanged
                }
                cur.advance(self)?;
            }
        }
        // Pair up replaced and made nodes; identical ones cancel out.
        let mut out = Vec::with_capacity(removed.len() + made.len());
        let (mut a, mut b) = (removed.into_iter().peekable(), made.into_iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (None, None) => break,
                (Some((n, id)), Some(it)) if n.items[0].key == it.key => {
                    let same = *id == it.id;
                    a.next();
                    let it = b.next().expect("peeked");
                    if !same {
                        out.push(LevelEdit::Put(it));
                    }
                }
                (Some((n, _)), Some(it)) if n.items[0].key < it.key => {
                    let (n, _) = a.next().expect("peeked");
                    out.push(LevelEdit::Delete(n.items[0].key.clone()));
                }
                (Some(_), None) => {
                    let (n, _) = a.next().expect("peeked");
                    out.push(LevelEdit::Delete(n.items[0].key.clone()));
                }
                (_, Some(_)) => out.push(LevelEdit::Put(b.next().expect("peeked"))),
            }
        }
        Ok(out)
    }
}

/// Applies level edits to a sorted item list.
fn merge(items: Vec<Item>, edits: &[LevelEdit]) -> Vec<Item> {
    let mut out = Vec::with_capacity(items.len() + edits.len());
    let mut edits = edits.iter().peekable();
    for it in items {
        while let Some(e) = edits.peek() {
            if e.key() > &it.key[..] {
                break;
            }
            if e.key() < &it.key[..] {
                if let LevelEdit::Put(n) = e {
                    out.push(n.clone());
                }
                edits.next();
                continue;
            }
            break;
        }
        match edits.peek() {
            Some(e) if e.key() == &it.key[..] => {
                if let LevelEdit::Put(n) = e {
                    out.push(n.clone());
                }
                edits.next();
            }
            _ => out.push(it),
        }
    }
    for e in edits {
        if let LevelEdit::Put(n) = e {
            out.push(n.clone());
        }
    }
    out
}
