//! The store as the LLM picker sees it: every key under a range of one tree root with its
//! value, content samples (read on demand, or taken from the lexical index), and an order
//! that can put chosen keys first.

use super::picker::{Inventory, MAX_KEY_CANDIDATES};
use super::{LexicalIndex, Query, RecallResult};
use crate::object::{ObjectId, Objects};
use crate::prolly::{prefix_range, KeyRange, NodeStore};

/// Where content samples come from.
enum Samples<'a> {
    /// Read from each key's record when asked.
    Records(&'a Objects),
    /// Held by the lexical index: `contents[i]` belongs to `keys[i]`.
    Indexed(Vec<&'a str>),
}

/// The keys (`ns:path`) under a range of one root, for [`super::picker::pick`].
///
/// Keys and their values sit in two parallel vectors in candidate order; lookups by key go
/// through a permutation sorted by key text (printed keys do not always sort like encoded
/// ones), so building the inventory costs one string per key and no map.
pub struct TreeInventory<'a> {
    samples: Samples<'a>,
    /// Keys in candidate order (tree order until [`TreeInventory::put_first`]).
    keys: Vec<String>,
    /// `values[i]` is the value of `keys[i]`.
    values: Vec<ObjectId>,
    /// Positions in `keys`, ordered by key text.
    by_text: Vec<u32>,
}

/// The printed form (`ns:path`) of an encoded key, as [`crate::key::split_encoded`] gives
/// its parts, built in one allocation.
fn printed_key(encoded: &[u8]) -> String {
    let mut out = Vec::with_capacity(encoded.len() + 1);
    match encoded.iter().position(|&b| b == 0x00) {
        Some(i) => {
            out.extend_from_slice(&encoded[..i]);
            out.push(b':');
            out.extend(
                encoded[i + 1..]
                    .iter()
                    .map(|&b| if b == 0x01 { b'.' } else { b }),
            );
        }
        None => {
            out.extend_from_slice(encoded);
            out.push(b':');
        }
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
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
        let mut values = Vec::new();
        tree.scan(root, range, &mut |k, v| {
            keys.push(printed_key(k));
            values.push(*v);
            true
        })?;
        Ok(Self::new(Samples::Records(objects), keys, values))
    }

    /// Every key of the index in `range`, in key order, with the contents the index holds as
    /// samples: no tree scan and no record read. The index must reflect the root asked for.
    pub fn from_index(index: &'a LexicalIndex, range: &KeyRange) -> Self {
        let mut keys = Vec::new();
        let mut values = Vec::new();
        let mut contents = Vec::new();
        for d in index.docs_in(range) {
            let mut k = String::with_capacity(d.namespace.len() + 1 + d.path.len());
            k.push_str(d.namespace);
            k.push(':');
            k.push_str(d.path);
            keys.push(k);
            values.push(d.value);
            contents.push(d.content);
        }
        Self::new(Samples::Indexed(contents), keys, values)
    }

    /// The inventory single mode shows for `query`: the index's keys (in `namespace`, or
    /// all), the lexically closest first when there are more than the picker shows.
    pub fn for_single(index: &'a LexicalIndex, namespace: Option<&str>, query: &str) -> Self {
        let range = namespace.map_or_else(KeyRange::all, |ns| {
            prefix_range(&crate::key::namespace_prefix(ns))
        });
        let mut inv = Self::from_index(index, &range);
        if inv.keys.len() > MAX_KEY_CANDIDATES {
            let hits = index.search(&Query {
                text: query,
                namespace,
                limit: MAX_KEY_CANDIDATES,
                ..Default::default()
            });
            inv.put_first(hits.iter().map(|h| format!("{}:{}", h.namespace, h.path)));
        }
        inv
    }

    fn new(samples: Samples<'a>, keys: Vec<String>, values: Vec<ObjectId>) -> Self {
        let mut by_text: Vec<u32> = (0..keys.len() as u32).collect();
        // Key order is nearly always text order already, which this sort finds at once.
        by_text.sort_by(|&a, &b| keys[a as usize].cmp(&keys[b as usize]));
        TreeInventory {
            samples,
            keys,
            values,
            by_text,
        }
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
        let old_values = std::mem::take(&mut self.values);
        let mut moved_to = vec![0u32; n];
        for (new, &old) in order.iter().enumerate() {
            self.keys.push(std::mem::take(&mut old_keys[old]));
            self.values.push(old_values[old]);
            moved_to[old] = new as u32;
        }
        if let Samples::Indexed(contents) = &mut self.samples {
            *contents = order.iter().map(|&old| contents[old]).collect();
        }
        for p in &mut self.by_text {
            *p = moved_to[*p as usize];
        }
    }

    /// The value id of `key` (`ns:path`).
    pub fn value(&self, key: &str) -> Option<&ObjectId> {
        self.position(key).map(|i| &self.values[i])
    }
}

impl Inventory for TreeInventory<'_> {
    fn keys(&self) -> &[String] {
        &self.keys
    }
    fn sample(&self, key: &str) -> Result<String, String> {
        let i = self
            .position(key)
            .ok_or_else(|| format!("unknown key {key}"))?;
        match &self.samples {
            Samples::Indexed(contents) => Ok(contents[i].to_string()),
            Samples::Records(objects) => crate::memory::read_record(objects, &self.values[i])
                .map(|r| r.content())
                .map_err(|e| e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_keys_agree_with_split_encoded() {
        for encoded in [
            &b"default\x00a\x01b\x01c"[..],
            b"codebase:onboard\x00x-y\x01z_w",
            b"ns\x00one",
            b"ns-only",
            b"\xc3\xa9t\xc3\xa9\x00caf\xc3\xa9\x01\xe2\x80\xa2",
        ] {
            let (ns, path) = crate::key::split_encoded(encoded);
            assert_eq!(printed_key(encoded), format!("{ns}:{path}"), "{encoded:?}");
        }
    }
}
