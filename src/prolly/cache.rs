//! The cache of decoded nodes: a fixed number of entries, evicted by the CLOCK rule.
//!
//! A hit only sets the entry's reference bit (one table probe and one slot write, no list to
//! relink), which matters because every tree operation starts with a few lookups. A miss that
//! finds the cache full sweeps a hand over the slots, clearing reference bits, and replaces the
//! first entry not referenced since the hand last passed: recently used nodes stay.

use std::sync::Arc;

use super::node::Node;
use super::IdMap;
use crate::object::ObjectId;

struct Slot {
    id: ObjectId,
    node: Arc<Node>,
    referenced: bool,
}

/// Decoded nodes by id, at most `cap` of them.
pub(crate) struct NodeCache {
    /// Ids are uniform hashes already, so the cheap id hasher spreads them well.
    index: IdMap<usize>,
    slots: Vec<Slot>,
    hand: usize,
    cap: usize,
}

impl NodeCache {
    /// An empty cache of at most `cap` (at least 1) nodes. Its tables grow as nodes come,
    /// rather than being sized for `cap` at once: a command that loads a hundred nodes
    /// would otherwise touch a fresh page of a table of megabytes for each of them.
    pub fn new(cap: usize) -> Self {
        let cap = cap.max(1);
        NodeCache {
            index: IdMap::default(),
            slots: Vec::new(),
            hand: 0,
            cap,
        }
    }

    /// The node of `id`, if cached (marks it used).
    pub fn get(&mut self, id: &ObjectId) -> Option<Arc<Node>> {
        let &i = self.index.get(id)?;
        let slot = &mut self.slots[i];
        slot.referenced = true;
        Some(slot.node.clone())
    }

    /// Caches `node` as `id`, evicting another node if full.
    pub fn put(&mut self, id: ObjectId, node: Arc<Node>) {
        if let Some(&i) = self.index.get(&id) {
            self.slots[i].node = node;
            self.slots[i].referenced = true;
            return;
        }
        if self.slots.len() < self.cap {
            self.index.insert(id, self.slots.len());
            self.slots.push(Slot {
                id,
                node,
                referenced: false,
            });
            return;
        }
        // Terminates: a full sweep clears every bit.
        while self.slots[self.hand].referenced {
            self.slots[self.hand].referenced = false;
            self.hand = (self.hand + 1) % self.cap;
        }
        let slot = &mut self.slots[self.hand];
        self.index.remove(&slot.id);
        self.index.insert(id, self.hand);
        *slot = Slot {
            id,
            node,
            referenced: false,
        };
        self.hand = (self.hand + 1) % self.cap;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::Kind;

    fn id(n: u32) -> ObjectId {
        ObjectId::of(Kind::Node, &n.to_le_bytes())
    }

    fn node(level: u8) -> Arc<Node> {
        Arc::new(Node {
            level,
            items: Vec::new(),
        })
    }

    #[test]
    fn keeps_at_most_cap_and_prefers_used_entries() {
        let mut c = NodeCache::new(4);
        for n in 0..4 {
            c.put(id(n), node(n as u8));
        }
        assert_eq!(c.get(&id(2)).unwrap().level, 2);
        assert_eq!(c.get(&id(3)).unwrap().level, 3);
        // Full: the new entries replace the unused ones (0, then 1), not 2 or 3.
        c.put(id(10), node(10));
        c.put(id(11), node(11));
        assert!(c.get(&id(0)).is_none());
        assert!(c.get(&id(1)).is_none());
        for n in [2, 3, 10, 11] {
            assert_eq!(c.get(&id(n)).unwrap().level, n as u8);
        }
        assert_eq!(c.index.len(), 4);
        assert_eq!(c.slots.len(), 4);
        // Re-putting an id replaces its node in place.
        c.put(id(2), node(20));
        assert_eq!(c.get(&id(2)).unwrap().level, 20);
        assert_eq!(c.index.len(), 4);
        // Many more entries than slots: the size stays bounded, the newest is there.
        for n in 100..200 {
            c.put(id(n), node(1));
            assert!(c.get(&id(n)).is_some());
        }
        assert_eq!(c.index.len(), 4);
        for (i, s) in c.slots.iter().enumerate() {
            assert_eq!(c.index[&s.id], i);
        }
    }
}
