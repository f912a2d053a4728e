//! The store as the LLM picker sees it: every key under a range of one tree root with its
//! value and content, as the lexical index of that root holds them, and an order that can
//! put chosen keys first.

use super::picker::{Inventory, SampleError, MAX_KEY_CANDIDATES};
use super::{LexicalIndex, Query};
use crate::prolly::{prefix_range, KeyRange};

/// The keys (`ns:path`) under a range of one root, for [`super::picker::pick`].
///
/// Keys and their contents sit in two parallel vectors in candidate order; lookups by key go
/// through a permutation sorted by key text (printed keys do not always sort like encoded
/// ones), so building the inventory costs one string per key and no map.
pub struct TreeInventory<'a> {
    /// Keys in candidate order (key order until [`TreeInventory::put_first`]).
    keys: Vec<String>,
    /// `contents[i]` is the content of `keys[i]` (its sample), borrowed from the index.
    contents: Vec<&'a str>,
    /// Positions in `keys`, ordered by key text.
    by_text: Vec<u32>,
}

impl<'a> TreeInventory<'a> {
    /// Every key of the index (in `namespace`, or in every namespace but memoir's own), in key
    /// order, with the contents the
    /// index holds as samples: no tree scan and no record read. The index must reflect the
    /// root asked for.
    pub fn from_index(index: &'a LexicalIndex, namespace: Option<&str>) -> Self {
        let range = namespace.map_or_else(KeyRange::all, |ns| {
            prefix_range(&crate::key::namespace_prefix(ns))
        });
        let mut keys = Vec::new();
        let mut contents = Vec::new();
        for d in index.docs_in(&range) {
            if namespace.is_none() && crate::key::is_internal_namespace(d.namespace) {
                continue;
            }
            let mut k = String::with_capacity(d.namespace.len() + 1 + d.path.len());
            k.push_str(d.namespace);
            k.push(':');
            k.push_str(d.path);
            keys.push(k);
            contents.push(d.content);
        }
        let mut by_text: Vec<u32> = (0..keys.len() as u32).collect();
        // Key order is nearly always text order already, which this sort finds at once.
        by_text.sort_by(|&a, &b| keys[a as usize].cmp(&keys[b as usize]));
        TreeInventory {
            keys,
            contents,
            by_text,
        }
    }

    /// The inventory single mode shows for `query`: the index's keys (in `namespace`, or
    /// all), the lexically closest first when there are more than the picker shows.
    pub fn for_single(index: &'a LexicalIndex, namespace: Option<&str>, query: &str) -> Self {
        let mut inv = Self::from_index(index, namespace);
        if inv.keys.len() > MAX_KEY_CANDIDATES {
            let hits = index.search(&Query {
                text: query,
                with_internal: false,
                namespace,
                limit: MAX_KEY_CANDIDATES,
                ..Default::default()
            });
            inv.put_first(hits.iter().map(|h| format!("{}:{}", h.namespace, h.path)));
        }
        inv
    }

    /// The position of `key` in the candidate order.
    fn position(&self, key: &str) -> Option<usize> {
        self.by_text
            .binary_search_by(|&i| self.keys[i as usize].as_str().cmp(key))
            .ok()
            .map(|j| self.by_text[j] as usize)
    }

    /// Puts `first` (those that are keys of the inventory, in their order) ahead of the other
    /// keys: the picker shows only the first [`super::picker::MAX_KEY_CANDIDATES`].
    pub fn put_first<S: AsRef<str>>(&mut self, first: impl IntoIterator<Item = S>) {
        let n = self.keys.len();
        let mut taken = vec![false; n];
        let mut order: Vec<usize> = Vec::with_capacity(n);
        for k in first {
            if let Some(i) = self.position(k.as_ref()) {
                if !taken[i] {
                    taken[i] = true;
                    order.push(i);
                }
            }
        }
        if order.is_empty() {
            return;
        }
        order.extend((0..n).filter(|&i| !taken[i]));
        let mut old_keys = std::mem::take(&mut self.keys);
        let mut moved_to = vec![0u32; n];
        for (new, &old) in order.iter().enumerate() {
            self.keys.push(std::mem::take(&mut old_keys[old]));
            moved_to[old] = new as u32;
        }
        self.contents = order.iter().map(|&old| self.contents[old]).collect();
        for p in &mut self.by_text {
            *p = moved_to[*p as usize];
        }
    }
}

impl Inventory for TreeInventory<'_> {
    fn keys(&self) -> &[String] {
        &self.keys
    }
    fn sample(&self, key: &str) -> Result<String, SampleError> {
        self.position(key)
            .map(|i| self.contents[i].to_string())
            .ok_or_else(|| SampleError::UnknownKey(key.to_string()))
    }
}
