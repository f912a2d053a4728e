//! Full structural check of a tree, for tests and fsck.

use super::chunker::{is_boundary, MAX_NODE};
use super::node::Node;
use super::NodeStore;
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

/// Per-level state of the in-order walk: the previous node, and whether it ended at a
/// chunk boundary (every node but the last of its level must).
struct LevelState {
    prev: Option<(ObjectId, bool)>,
}

impl NodeStore {
    /// Reads every node of the tree and checks every invariant: hashes and decoding (via the
    /// verified reads), levels, strict key order, first/last keys and counts of children, node
    /// size bounds, and that re-chunking each level reproduces its nodes. Keeps going after a
    /// problem; reports them all.
    pub fn verify(&self, root: &ObjectId) -> TreeReport {
        let mut rep = TreeReport::default();
        let node = match self.load(root) {
            Ok(n) => n,
            Err(e) => {
                rep.violations.push(Violation {
                    node: *root,
                    problem: e.to_string(),
                });
                return rep;
            }
        };
        if node.level > 0 && node.items.len() < 2 {
            rep.violations.push(Violation {
                node: *root,
                problem: "internal root with fewer than two children".into(),
            });
        }
        let mut levels: Vec<LevelState> = (0..=node.level)
            .map(|_| LevelState { prev: None })
            .collect();
        rep.nodes_per_level = vec![0; node.level as usize + 1];
        rep.bytes_per_level = vec![0; node.level as usize + 1];
        self.verify_node(root, &node, &mut levels, &mut rep);
        rep
    }

    fn verify_node(
        &self,
        id: &ObjectId,
        node: &Node,
        levels: &mut [LevelState],
        rep: &mut TreeReport,
    ) {
        let mut bad = |problem: String| rep.violations.push(Violation { node: *id, problem });
        let l = node.level as usize;
        let size = node.items_len();
        if size > MAX_NODE {
            bad(format!("node holds {size} bytes of items, over {MAX_NODE}"));
        }
        for w in node.items.windows(2) {
            if w[0].last_key() >= &w[1].key[..] {
                bad("items not in strictly ascending key order".into());
                break;
            }
        }
        for it in &node.items {
            if node.level > 0 && it.key > it.last {
                bad("item's first key is after its last key".into());
            }
        }
        // The chunking rule must end this node exactly after its last item (or, for the last
        // node of its level, nowhere before it).
        let mut s = 0;
        let mut ends_at_boundary = false;
        for (i, it) in node.items.iter().enumerate() {
            let before = s;
            s += it.encoded_len(node.level);
            let b = is_boundary(it.last_key(), node.level, before, s);
            if b && i + 1 < node.items.len() {
                bad(format!("chunk boundary after item {i} inside the node"));
                break;
            }
            ends_at_boundary = b;
        }
        if let Some((prev, ended)) = levels[l].prev.replace((*id, ends_at_boundary)) {
            if !ended {
                rep.violations.push(Violation {
                    node: prev,
                    problem: "node ends where the chunking rule puts no boundary".into(),
                });
            }
        }
        rep.nodes_per_level[l] += 1;
        rep.bytes_per_level[l] += size as u64;
        rep.node_ids.push(*id);
        if node.level == 0 {
            rep.keys += node.items.len() as u64;
            rep.value_ids.extend(node.items.iter().map(|it| it.id));
            return;
        }
        for it in &node.items {
            let child = match self.load(&it.id) {
                Ok(c) => c,
                Err(e) => {
                    let problem = match e {
                        super::ProllyError::Object(ObjectError::Missing(_)) => {
                            format!("child {} is missing", it.id)
                        }
                        other => format!("child {}: {other}", it.id),
                    };
                    rep.violations.push(Violation { node: *id, problem });
                    continue;
                }
            };
            let mut problems = Vec::new();
            if child.level + 1 != node.level {
                problems.push(format!("child {} has level {}", it.id, child.level));
            }
            if child.items.is_empty() {
                problems.push(format!("child {} is empty", it.id));
            } else {
                if child.first_key() != Some(&it.key[..]) {
                    problems.push(format!("child {} first key differs from its item", it.id));
                }
                if child.last_key() != Some(it.last_key()) {
                    problems.push(format!("child {} last key differs from its item", it.id));
                }
            }
            if child.count() != it.count {
                problems.push(format!(
                    "child {} holds {} keys, its item says {}",
                    it.id,
                    child.count(),
                    it.count
                ));
            }
            let sound = problems.is_empty();
            for p in problems {
                rep.violations.push(Violation {
                    node: *id,
                    problem: p,
                });
            }
            if sound {
                self.verify_node(&it.id, &child, levels, rep);
            }
        }
    }
}
