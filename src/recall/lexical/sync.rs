//! Bringing the index to a tree root: from the tree diff when it reflects another root, by a
//! full scan otherwise.

use super::{Doc, LexicalIndex, SyncStats};
use crate::object::ObjectId;
use crate::prolly::NodeStore;
use crate::recall::RecallResult;

impl LexicalIndex {
    /// Brings the index to `root`: from the tree diff when it reflects another root, by a
    /// full scan otherwise. `load` reads the document of a key's value. On any error the
    /// index is left empty (reflecting no root), never half updated.
    pub fn sync(
        &mut self,
        tree: &NodeStore,
        root: &ObjectId,
        load: &mut dyn FnMut(&[u8], &ObjectId) -> RecallResult<Doc>,
    ) -> RecallResult<SyncStats> {
        if self.root.as_ref() == Some(root) {
            return Ok(SyncStats::default());
        }
        let result = self.sync_inner(tree, root, load);
        match result {
            Ok(stats) => {
                self.root = Some(*root);
                Ok(stats)
            }
            Err(e) => {
                *self = LexicalIndex {
                    params: self.params,
                    ..LexicalIndex::new()
                };
                Err(e)
            }
        }
    }

    fn sync_inner(
        &mut self,
        tree: &NodeStore,
        root: &ObjectId,
        load: &mut dyn FnMut(&[u8], &ObjectId) -> RecallResult<Doc>,
    ) -> RecallResult<SyncStats> {
        let mut stats = SyncStats::default();
        if let Some(old) = self.root {
            let mut changes = Vec::new();
            tree.diff(&old, root, &mut |c| {
                changes.push(c);
                true
            })?;
            for c in changes {
                match c.new {
                    Some(v) => {
                        let doc = load(&c.key, &v)?;
                        self.insert(&c.key, v, &doc);
                        stats.inserted += 1;
                    }
                    None => {
                        self.remove(&c.key);
                        stats.removed += 1;
                    }
                }
            }
            return Ok(stats);
        }
        *self = LexicalIndex {
            params: self.params,
            ..LexicalIndex::new()
        };
        let mut entries = Vec::new();
        tree.scan(root, &crate::prolly::KeyRange::all(), &mut |k, v| {
            entries.push((k.to_vec(), *v));
            true
        })?;
        for (k, v) in entries {
            let doc = load(&k, &v)?;
            self.insert(&k, v, &doc);
            stats.inserted += 1;
        }
        stats.rebuilt = true;
        Ok(stats)
    }
}
