//! A cursor over the nodes of one level, in key order.

use std::sync::Arc;

use super::node::Node;
use super::{NodeStore, ProllyResult};
use crate::object::ObjectId;

/// Position at one node of level `level`, with the path of internal nodes above it.
pub(crate) struct LevelCursor {
    level: u8,
    /// (node, index of the child taken) from the root down to `level + 1`.
    stack: Vec<(Arc<Node>, usize)>,
    node: Arc<Node>,
    id: ObjectId,
}

impl LevelCursor {
    /// The node of `level` whose region holds `key` (the last node whose first key is `<=
    /// key`, or the first node).
    pub fn seek(
        ns: &NodeStore,
        root: &Arc<Node>,
        root_id: &ObjectId,
        level: u8,
        key: &[u8],
    ) -> ProllyResult<Self> {
        let mut cur = LevelCursor {
            level,
            stack: Vec::with_capacity(root.level as usize),
            node: root.clone(),
            id: *root_id,
        };
        cur.descend(ns, |n| n.child_for(key))?;
        Ok(cur)
    }

    /// Goes down from the current node to this cursor's level, taking in each node the
    /// child `pick` names and stacking the nodes passed.
    fn descend(&mut self, ns: &NodeStore, pick: impl Fn(&Node) -> usize) -> ProllyResult<()> {
        while self.node.level > self.level {
            let idx = pick(&self.node);
            let child_id = self.node.items[idx].id;
            let child = ns.load_at(&child_id, self.node.level - 1)?;
            let parent = std::mem::replace(&mut self.node, child);
            self.stack.push((parent, idx));
            self.id = child_id;
        }
        Ok(())
    }

    /// Makes current the child that the deepest stacked node's index names, then goes down
    /// from it as [`LevelCursor::descend`] does.
    fn enter(&mut self, ns: &NodeStore, pick: impl Fn(&Node) -> usize) -> ProllyResult<()> {
        let (n, i) = self.stack.last().expect("a stacked node");
        let id = n.items[*i].id;
        self.node = ns.load_at(&id, n.level - 1)?;
        self.id = id;
        self.descend(ns, pick)
    }

    /// Moves to the node of this level whose region holds `key`, as [`LevelCursor::seek`]
    /// from the same root would, loading only the nodes below the first level where the
    /// path to `key` leaves the current one.
    pub fn reseek(&mut self, ns: &NodeStore, key: &[u8]) -> ProllyResult<()> {
        let Some(d) = self.stack.iter().position(|(n, i)| n.child_for(key) != *i) else {
            return Ok(()); // same path, same node
        };
        self.stack.truncate(d + 1);
        let (n, i) = self.stack.last_mut().expect("d is an index of the stack");
        *i = n.child_for(key);
        self.enter(ns, |n| n.child_for(key))
    }

    /// The current node.
    pub fn node(&self) -> &Arc<Node> {
        &self.node
    }

    /// The current node's id.
    pub fn id(&self) -> &ObjectId {
        &self.id
    }

    /// The parent holding the next node's item, and that item's index (the next node's
    /// first key is its key), if there is a next node.
    pub fn next_parent(&self) -> Option<(Arc<Node>, usize)> {
        self.stack
            .iter()
            .rev()
            .find(|(n, i)| i + 1 < n.items.len())
            .map(|(n, i)| (n.clone(), i + 1))
    }

    /// Moves to the next node on this level; false at the end.
    pub fn advance(&mut self, ns: &NodeStore) -> ProllyResult<bool> {
        while let Some((n, i)) = self.stack.last() {
            if i + 1 < n.items.len() {
                break;
            }
            self.stack.pop();
        }
        let Some((_, i)) = self.stack.last_mut() else {
            return Ok(false);
        };
        *i += 1;
        self.enter(ns, |_| 0)?;
        Ok(true)
    }
}
