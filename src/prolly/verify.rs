//! The structural check of trees: one set of node invariants, used by
//! [`NodeStore::verify`] (one tree, for tests and tools) and by the repository's fsck (every
//! tree of a history, each node once).
//!
//! The invariants are those of store-format.md section 6: strict key order, each item's first
//! key at most its last, each internal item's first key, last key and count equal to its
//! child's, levels decreasing by one, a node's items within [`MAX_NODE`] bytes, an internal
//! root with at least two items, and chunk boundaries where the rule puts them (after the
//! last item of every node but the last of its level, and nowhere inside a node).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::chunker::{is_boundary, MAX_NODE};
use super::node::{Item, Node};
use super::{NodeStore, ProllyError};
use crate::object::{ObjectError, ObjectId};

/// One broken invariant, naming the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The node at fault (or whose child is).
    pub node: ObjectId,
    /// What is wrong.
    pub problem: String,
}

/// What a full check found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeReport {
    /// Keys in the tree (counted at the leaves).
    pub keys: u64,
    /// Nodes per level, leaves first.
    pub nodes_per_level: Vec<u64>,
    /// Item bytes per level, leaves first.
    pub bytes_per_level: Vec<u64>,
    /// Every node id seen.
    pub node_ids: Vec<ObjectId>,
    /// Every value id seen in the leaves.
    pub value_ids: Vec<ObjectId>,
    /// Broken invariants; empty for a sound tree.
    pub violations: Vec<Violation>,
}

/// Where a [`TreeChecker`] reads nodes, and who hears what it finds.
pub trait NodeSource {
    /// Node `id`, read and decoded, or `None` once the source has reported why it cannot be
    /// (missing, damaged, unreadable). `parent` is the node whose item names it; `None` for
    /// a root.
    fn load(&mut self, id: &ObjectId, parent: Option<&ObjectId>) -> Option<Arc<Node>>;

    /// Called once for each node that loaded, before its children are checked.
    fn visit(&mut self, id: &ObjectId, node: &Node);

    /// Node `id` breaks a tree invariant: `problem` says which.
    fn violation(&mut self, id: &ObjectId, problem: String);
}

/// What a checked node tells its parent.
#[derive(Clone)]
struct Summary {
    level: u8,
    items: usize,
    first: Option<Box<[u8]>>,
    last: Option<Box<[u8]>>,
    count: u64,
    ends_at_boundary: bool,
    last_child: Option<ObjectId>,
}

/// Checks trees node by node, each node once however many trees (or calls) share it, so
/// checking every commit of a history costs O(distinct nodes), not O(commits x tree).
/// Keeps going after a problem and reports every one to the [`NodeSource`].
#[derive(Default)]
pub struct TreeChecker {
    /// Every node checked: what it tells its parent, `None` if it did not load.
    nodes: HashMap<ObjectId, Option<Summary>>,
    /// Roots already checked for the root's own rule.
    roots: HashSet<ObjectId>,
    /// Nodes already known to need a boundary after their last item.
    spine: HashSet<ObjectId>,
}

impl TreeChecker {
    /// A checker that has seen nothing yet.
    pub fn new() -> Self {
        TreeChecker::default()
    }

    /// Checks the tree under `root`: every node below it is loaded through `src` (unless an
    /// earlier call checked it) and every broken invariant reported to it.
    pub fn check_root(&mut self, src: &mut impl NodeSource, root: &ObjectId) {
        let Some(s) = self.check_node(src, root, None) else {
            return;
        };
        if self.roots.insert(*root) && s.level > 0 && s.items < 2 {
            src.violation(root, "internal root with fewer than two children".into());
        }
    }

    /// Checks one node and (once) everything below it; returns what its parent needs.
    fn check_node(
        &mut self,
        src: &mut impl NodeSource,
        id: &ObjectId,
        parent: Option<&ObjectId>,
    ) -> Option<Summary> {
        if let Some(s) = self.nodes.get(id) {
            return s.clone();
        }
        let summary = self.check_node_once(src, id, parent);
        self.nodes.insert(*id, summary.clone());
        summary
    }

    fn check_node_once(
        &mut self,
        src: &mut impl NodeSource,
        id: &ObjectId,
        parent: Option<&ObjectId>,
    ) -> Option<Summary> {
        let node = src.load(id, parent)?;
        let (mut bad, ends_at_boundary) = own_problems(&node);
        src.visit(id, &node);
        let leaf = node.level == 0;
        if !leaf {
            let n = node.items.len();
            for (i, it) in node.items.iter().enumerate() {
                let Some(child) = self.check_node(src, &it.id, Some(id)) else {
                    continue;
                };
                bad.extend(child_problems(it, node.level, &child));
                if i + 1 < n {
                    self.require_boundary(src, &it.id);
                }
            }
        }
        for b in bad {
            src.violation(id, b);
        }
        Some(Summary {
            level: node.level,
            items: node.items.len(),
            first: node.first_key().map(Into::into),
            last: node.last_key().map(Into::into),
            count: if leaf {
                node.items.len() as u64
            } else {
                node.count()
            },
            ends_at_boundary,
            last_child: if leaf {
                None
            } else {
                node.items.last().map(|it| it.id)
            },
        })
    }

    /// A node that is not the last of its level must end at a chunk boundary, and so must
    /// its last child, and so on down (each checked once).
    fn require_boundary(&mut self, src: &mut impl NodeSource, id: &ObjectId) {
        let mut cur = *id;
        loop {
            if !self.spine.insert(cur) {
                return;
            }
            let Some(Some(s)) = self.nodes.get(&cur) else {
                return;
            };
            if !s.ends_at_boundary {
                src.violation(
                    &cur,
                    "node ends where the chunking rule puts no boundary".into(),
                );
            }
            match s.last_child {
                Some(c) => cur = c,
                None => return,
            }
        }
    }
}

/// The problems of a node on its own (size, key order, item ranges, a boundary inside it),
/// and whether the chunking rule cuts after its last item.
fn own_problems(node: &Node) -> (Vec<String>, bool) {
    let mut bad = Vec::new();
    let size = node.items_len();
    if size > MAX_NODE {
        bad.push(format!("node holds {size} bytes of items, over {MAX_NODE}"));
    }
    if node
        .items
        .windows(2)
        .any(|w| w[0].last_key() >= &w[1].key[..])
    {
        bad.push("items not in strictly ascending key order".into());
    }
    if node.level > 0 && node.items.iter().any(|it| it.key > it.last) {
        bad.push("an item's first key is after its last key".into());
    }
    let mut s = 0;
    let mut ends_at_boundary = false;
    for (i, it) in node.items.iter().enumerate() {
        let before = s;
        s += it.encoded_len(node.level);
        ends_at_boundary = is_boundary(it.last_key(), node.level, before, s);
        if ends_at_boundary && i + 1 < node.items.len() {
            bad.push(format!("chunk boundary after item {i} inside the node"));
            break;
        }
    }
    (bad, ends_at_boundary)
}

/// The problems of an internal item (in a node at `level`) against the child it names.
fn child_problems(it: &Item, level: u8, child: &Summary) -> Vec<String> {
    let mut bad = Vec::new();
    let c = it.id.short(12);
    if child.level + 1 != level {
        bad.push(format!("child {c} has level {}", child.level));
    }
    if child.count == 0 {
        bad.push(format!("child {c} is empty"));
    } else {
        if child.first.as_deref() != Some(&it.key[..]) {
            bad.push(format!("child {c} first key differs from its item"));
        }
        if child.last.as_deref() != Some(it.last_key()) {
            bad.push(format!("child {c} last key differs from its item"));
        }
    }
    if child.count != it.count {
        bad.push(format!(
            "child {c} holds {} keys, its item says {}",
            child.count, it.count
        ));
    }
    bad
}

/// [`NodeStore::verify`]'s side of the check: verified reads, and the report.
struct Verify<'a> {
    store: &'a NodeStore,
    rep: TreeReport,
}

impl NodeSource for Verify<'_> {
    fn load(&mut self, id: &ObjectId, parent: Option<&ObjectId>) -> Option<Arc<Node>> {
        let e = match self.store.load(id) {
            Ok(n) => return Some(n),
            Err(e) => e,
        };
        // A root that cannot be read is named itself; a child, through its parent.
        let (node, problem) = match parent {
            None => (*id, e.to_string()),
            Some(p) => match e {
                ProllyError::Object(ObjectError::Missing(_)) => {
                    (*p, format!("child {id} is missing"))
                }
                other => (*p, format!("child {id}: {other}")),
            },
        };
        self.rep.violations.push(Violation { node, problem });
        None
    }

    fn visit(&mut self, id: &ObjectId, node: &Node) {
        let rep = &mut self.rep;
        let l = node.level as usize;
        if rep.nodes_per_level.len() <= l {
            rep.nodes_per_level.resize(l + 1, 0);
            rep.bytes_per_level.resize(l + 1, 0);
        }
        rep.nodes_per_level[l] += 1;
        rep.bytes_per_level[l] += node.items_len() as u64;
        rep.node_ids.push(*id);
        if node.level == 0 {
            rep.keys += node.items.len() as u64;
            rep.value_ids.extend(node.items.iter().map(|it| it.id));
        }
    }

    fn violation(&mut self, id: &ObjectId, problem: String) {
        self.rep.violations.push(Violation { node: *id, problem });
    }
}

impl NodeStore {
    /// Reads every node of the tree and checks every invariant (see the module docs):
    /// hashes and decoding (via the verified reads), levels, strict key order, first/last
    /// keys and counts of children, node size bounds, and the chunk boundaries. Keeps going
    /// after a problem; reports them all.
    pub fn verify(&self, root: &ObjectId) -> TreeReport {
        let mut v = Verify {
            store: self,
            rep: TreeReport::default(),
        };
        TreeChecker::new().check_root(&mut v, root);
        v.rep
    }
}
