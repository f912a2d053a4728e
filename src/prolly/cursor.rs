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
        let mut stack = Vec::with_capacity(root.level as usize);
        let mut node = root.clone();
        let mut id = *root_id;
        while node.level > level {
            let idx = node.child_for(key);
            let child_id = node.items[idx].id;
            let child = ns.load_at(&child_id, node.level - 1)?;
            stack.push((node, idx));
            node = child;
            id = child_id;
        }
        Ok(LevelCursor {
            level,
            stack,
            node,
            id,
        })
    }

    /// The current node.
    pub fn node(&self) -> &Arc<Node> {
        &self.node
    }

    /// The current node's id.
    pub fn id(&self) -> &ObjectId {
        &self.id
    }

    /// First key of the next node on this level, if there is one.
    pub fn next_first(&self) -> Option<&[u8]> {
        self.stack
            .iter()
            .rev()
            .find(|(n, i)| i + 1 < n.items.len())
            .map(|(n, i)| &n.items[i + 1].key[..])
    }

    /// Moves to the next node on this level; false at the end.
    pub fn advance(&mut self, ns: &NodeStore) -> ProllyResult<bool> {
        while let Some((n, i)) = self.stack.last() {
            if i + 1 < n.items.len() {
                break;
            }
            self.stack.pop();
        }
        let Some((n, i)) = self.stack.last_mut() else {
            return Ok(false);
        };
        *i += 1;
        let mut id = n.items[*i].id;
        let mut node = ns.load_at(&id, n.level - 1)?;
        while node.level > self.level {
            let child_id = node.items[0].id;
            let child = ns.load_at(&child_id, node.level - 1)?;
            self.stack.push((node, 0));
            node = child;
            id = child_id;
        }
        self.node = node;
        self.id = id;
        Ok(true)
    }
}
