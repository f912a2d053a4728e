//! The store as the LLM picker sees it: every key under a range of one tree root with its
//! value, content samples read on demand, and an order that can put chosen keys first.

use std::collections::BTreeMap;

use super::picker::Inventory;
use super::RecallResult;
use crate::object::{ObjectId, Objects};
use crate::prolly::{KeyRange, NodeStore};

/// The keys (`ns:path`) under a range of one root, for [`super::picker::pick`].
pub struct TreeInventory<'a> {
    objects: &'a Objects,
    keys: Vec<String>,
    values: BTreeMap<String, ObjectId>,
}

impl<'a> TreeInventory<'a> {
    /// Every key of `root` in `range`, in tree order.
    pub fn scan(
        tree: &NodeStore,
        objects: &'a Objects,
        root: &ObjectId,
        range: &KeyRange,
    ) -> RecallResult<Self> {
        let mut keys = Vec::new();
        let mut values = BTreeMap::new();
        tree.scan(root, range, &mut |k, v| {
            let (ns, path) = crate::key::split_encoded(k);
            let full = format!("{ns}:{path}");
            keys.push(full.clone());
            values.insert(full, *v);
            true
        })?;
        Ok(TreeInventory {
            objects,
            keys,
            values,
        })
    }

    /// Puts `first` (those that are keys of the inventory, in their order) ahead of the other
    /// keys: the picker shows only the first [`super::picker::MAX_KEY_CANDIDATES`].
    pub fn put_first(&mut self, first: impl IntoIterator<Item = String>) {
        let mut ordered: Vec<String> = Vec::with_capacity(self.keys.len());
        let mut seen = std::collections::BTreeSet::new();
        for k in first {
            if self.values.contains_key(&k) && seen.insert(k.clone()) {
                ordered.push(k);
            }
        }
        ordered.extend(self.keys.drain(..).filter(|k| !seen.contains(k)));
        self.keys = ordered;
    }

    /// The value id of `key` (`ns:path`).
    pub fn value(&self, key: &str) -> Option<&ObjectId> {
        self.values.get(key)
    }
}

impl Inventory for TreeInventory<'_> {
    fn keys(&self) -> &[String] {
        &self.keys
    }
    fn sample(&self, key: &str) -> Result<String, String> {
        let id = self
            .values
            .get(key)
            .ok_or_else(|| format!("unknown key {key}"))?;
        crate::memory::read_record(self.objects, id)
            .map(|r| r.content())
            .map_err(|e| e.to_string())
    }
}
