//! Reading documents across both parts of the index: by number, in key order, by
//! neighbour.

use super::{IndexedDoc, LexicalIndex, Query};
use crate::key::is_internal_namespace;
use crate::object::ObjectId;
use crate::prolly::KeyRange;

/// A document as search sees it, from either part of the index.
pub(super) struct DocRef<'a> {
    pub(super) key: &'a [u8],
    pub(super) namespace: &'a str,
    pub(super) path: &'a str,
    pub(super) content: &'a str,
    pub(super) value: ObjectId,
    pub(super) timestamp: f64,
    pub(super) len: f64,
}

impl LexicalIndex {
    /// The length of the live document numbered `d`, if any (what scoring needs, without
    /// slicing its texts).
    pub(super) fn live_len(&self, d: u32) -> Option<f64> {
        let d = d as usize;
        let n = self.base.n_docs();
        if d < n {
            return (!self.dead[d]).then(|| self.base.len_at(d));
        }
        Some(self.docs.get(d - n)?.as_ref()?.len)
    }

    /// Whether the live document numbered `d` is in namespace `ns` (false for a removed
    /// overlay document).
    pub(super) fn in_namespace(&self, d: u32, ns: &str) -> bool {
        let (d, n) = (d as usize, self.base.n_docs());
        if d < n {
            return self.base.find_namespace(ns) == Some(self.base.namespace_no(d));
        }
        self.docs
            .get(d - n)
            .and_then(Option::as_ref)
            .is_some_and(|e| e.namespace == ns)
    }

    /// Whether the live document numbered `d` is in `q`'s namespaces: its namespace, else
    /// any but memoir's own unless the query asks for them.
    pub(super) fn in_scope(&self, d: u32, q: &Query<'_>) -> bool {
        match q.namespace {
            Some(ns) => self.in_namespace(d, ns),
            None => q.with_internal || !self.is_internal(d),
        }
    }

    /// Whether document `d` is in one of memoir's own namespaces.
    fn is_internal(&self, d: u32) -> bool {
        let (d, n) = (d as usize, self.base.n_docs());
        if d < n {
            return self.base.namespace_is_internal(self.base.namespace_no(d));
        }
        self.docs
            .get(d - n)
            .and_then(Option::as_ref)
            .is_some_and(|e| is_internal_namespace(&e.namespace))
    }

    /// Whether namespace `ns` has a document in the index (one removed since the file part
    /// was written may still count).
    pub fn has_namespace(&self, ns: &str) -> bool {
        self.base.find_namespace(ns).is_some()
            || self.docs.iter().flatten().any(|e| e.namespace == ns)
    }

    /// The namespaces with a document in the index, sorted (see
    /// [`LexicalIndex::has_namespace`]).
    pub fn namespaces(&self) -> Vec<String> {
        let mut all: std::collections::BTreeSet<String> =
            self.base.namespace_names().iter().cloned().collect();
        all.extend(self.docs.iter().flatten().map(|e| e.namespace.clone()));
        all.into_iter().collect()
    }

    /// Whether any live document is in one of memoir's own namespaces.
    pub(super) fn has_internal(&self) -> bool {
        self.base.has_internal_namespace()
            || self
                .docs
                .iter()
                .flatten()
                .any(|e| is_internal_namespace(&e.namespace))
    }

    /// The timestamp of the live document numbered `d` (0 for a removed overlay document).
    pub(super) fn timestamp_of(&self, d: u32) -> f64 {
        let (d, n) = (d as usize, self.base.n_docs());
        if d < n {
            return self.base.timestamp(d);
        }
        self.docs
            .get(d - n)
            .and_then(Option::as_ref)
            .map_or(0.0, |e| e.timestamp)
    }

    /// The agents whose entries live document `d`'s record holds, the record's actor first
    /// (empty for a removed overlay document).
    pub(super) fn actors_of(&self, d: u32) -> Vec<&str> {
        let (d, n) = (d as usize, self.base.n_docs());
        if d < n {
            let names = self.base.actor_names();
            return self
                .base
                .doc_actors(d)
                .filter_map(|a| names.get(a as usize).map(String::as_str))
                .collect();
        }
        self.docs
            .get(d - n)
            .and_then(Option::as_ref)
            .map_or_else(Vec::new, |e| e.actors.iter().map(String::as_str).collect())
    }

    /// The live documents whose records hold an entry by agent `actor`, ascending.
    pub(super) fn docs_of_actor(&self, actor: &str) -> Vec<u32> {
        let mut out: Vec<u32> = match self.base.find_actor(actor) {
            Some(a) => self.base.actor_docs(a),
            None => Vec::new(),
        };
        out.retain(|&d| !self.dead[d as usize]);
        if !self.over_actors.contains_key(actor) {
            return out;
        }
        let n = self.base.n_docs();
        for (slot, e) in self.docs.iter().enumerate() {
            if e.as_ref()
                .is_some_and(|e| e.actors.iter().any(|x| x == actor))
            {
                out.push((n + slot) as u32);
            }
        }
        out
    }

    /// Whether live document `d`'s record holds an entry by agent `actor`.
    pub(super) fn has_actor(&self, d: u32, actor: &str) -> bool {
        let (d, n) = (d as usize, self.base.n_docs());
        if d < n {
            return self
                .base
                .find_actor(actor)
                .is_some_and(|a| self.base.doc_actors(d).any(|x| x == a));
        }
        self.docs
            .get(d - n)
            .and_then(Option::as_ref)
            .is_some_and(|e| e.actors.iter().any(|x| x == actor))
    }

    /// The names of the agents of the index's records, in no order, some more than once
    /// (documents removed since the file part was written may still count).
    pub(super) fn each_actor_name(&self) -> impl Iterator<Item = &str> {
        let base = self.base.actor_names().iter().map(String::as_str);
        base.chain(self.over_actors.keys().map(String::as_str))
    }

    /// The number of the live document with encoded key `key`, if any.
    pub(super) fn number_of(&self, key: &[u8]) -> Option<u32> {
        if let Some(&slot) = self.by_key.get(key) {
            return Some((self.base.n_docs() + slot as usize) as u32);
        }
        self.base
            .find_key(key)
            .filter(|&i| !self.dead[i])
            .map(|i| i as u32)
    }

    /// The agents named by a live document's record, sorted (documents removed since the
    /// file part was written may still count).
    pub fn actor_names(&self) -> Vec<String> {
        let mut all: std::collections::BTreeSet<String> =
            self.base.actor_names().iter().cloned().collect();
        all.extend(self.over_actors.keys().cloned());
        all.into_iter().collect()
    }

    /// Whether document `d` is live and passes `q`'s filters (without building the document
    /// when there are none).
    pub(super) fn passes(&self, d: u32, q: &Query<'_>) -> bool {
        if !q.filtered() {
            return self.live_len(d).is_some();
        }
        self.passes_but_actor(d, q) && q.actor.is_none_or(|a| self.has_actor(d, a))
    }

    /// [`LexicalIndex::passes`] but for the agent filter (which a search among one agent's
    /// records checks by look-up).
    pub(super) fn passes_but_actor(&self, d: u32, q: &Query<'_>) -> bool {
        // Field by field, cheapest first, without reading the document's texts.
        if self.live_len(d).is_none() || !self.in_scope(d, q) {
            return false;
        }
        let t = self.timestamp_of(d);
        if q.since.is_some_and(|s| t < s) || q.until.is_some_and(|u| t > u) {
            return false;
        }
        q.globs
            .is_none_or(|g| self.doc(d).is_some_and(|e| g.matches(e.path)))
    }

    /// The live document numbered `d`, if any.
    pub(super) fn doc(&self, d: u32) -> Option<DocRef<'_>> {
        let d = d as usize;
        let n = self.base.n_docs();
        if d < n {
            if self.dead[d] {
                return None;
            }
            let b = &self.base;
            return Some(DocRef {
                key: b.key(d),
                namespace: b.namespace(d),
                path: b.path(d),
                content: b.content(d),
                value: b.value(d),
                timestamp: b.timestamp(d),
                len: b.len_at(d),
            });
        }
        let e = self.docs.get(d - n)?.as_ref()?;
        Some(DocRef {
            key: &e.key,
            namespace: &e.namespace,
            path: &e.path,
            content: &e.content,
            value: e.value,
            timestamp: e.timestamp,
            len: e.len,
        })
    }

    /// The documents whose keys fall in `range`, in key order: every key of the root the
    /// index reflects, with its value and content, without reading the tree or the records.
    pub fn docs_in(&self, range: &KeyRange) -> Vec<IndexedDoc<'_>> {
        self.live_in_key_order()
            .into_iter()
            .filter_map(|d| {
                let e = self.doc(d)?;
                range.contains(e.key).then_some(IndexedDoc {
                    key: e.key,
                    namespace: e.namespace,
                    path: e.path,
                    value: e.value,
                    content: e.content,
                })
            })
            .collect()
    }

    /// The encoded key of document `d` (empty for a removed overlay document).
    pub(super) fn key_of(&self, d: u32) -> &[u8] {
        let (d, n) = (d as usize, self.base.n_docs());
        if d < n {
            return self.base.key(d);
        }
        self.docs
            .get(d - n)
            .and_then(Option::as_ref)
            .map_or(&[], |e| &e.key)
    }

    /// The order of two live documents' keys: for two documents of the file part, that of their
    /// numbers.
    pub(super) fn key_cmp(&self, a: u32, b: u32) -> std::cmp::Ordering {
        let n = self.base.n_docs() as u32;
        if a < n && b < n {
            a.cmp(&b)
        } else {
            self.key_of(a).cmp(self.key_of(b))
        }
    }

    /// Whether the index is its file part alone, whole (no document removed or added
    /// since): then key order is number order.
    #[inline]
    pub(super) fn file_part_whole(&self) -> bool {
        self.by_key.is_empty() && self.base_live == self.base.n_docs()
    }

    /// The live document just before live document `d` in key order (`after`: just after),
    /// across both parts (what [`super::view::View`] asks when documents were removed or
    /// added since the file part).
    pub(super) fn neighbour_across(&self, d: u32, after: bool) -> Option<u32> {
        let n = self.base.n_docs();
        if self.file_part_whole() {
            // Key order is number order.
            return match after {
                true => (d as usize + 1 < n).then_some(d + 1),
                false => d.checked_sub(1),
            };
        }
        let di = d as usize;
        let key = self.key_of(d);
        // The nearest live document of the file part on that side.
        let mut b = if di < n {
            if after {
                di + 1
            } else {
                di.wrapping_sub(1)
            }
        } else {
            let i = self.base.key_bound(key, true);
            if after {
                i
            } else {
                i.wrapping_sub(1)
            }
        };
        while b < n && self.dead[b] {
            b = if after { b + 1 } else { b.wrapping_sub(1) };
        }
        let base = (b < n).then_some(b as u32);
        use std::ops::Bound::{Excluded, Unbounded};
        let over = if after {
            self.by_key
                .range::<[u8], _>((Excluded(key), Unbounded))
                .next()
        } else {
            self.by_key
                .range::<[u8], _>((Unbounded, Excluded(key)))
                .next_back()
        }
        .map(|(_, &s)| (n + s as usize) as u32);
        match (base, over) {
            (Some(b), Some(o)) => {
                let b_first = self.base.key(b as usize) < self.key_of(o);
                Some(if b_first == after { b } else { o })
            }
            (b, o) => b.or(o),
        }
    }

    /// The live documents in key order, by number.
    pub(super) fn live_in_key_order(&self) -> Vec<u32> {
        match self.file_part_whole() {
            true => (0..self.base.n_docs() as u32).collect(),
            false => self.records_in_key_order().docs.docs(),
        }
    }
}

/// Reading documents by position in key order, for rankings made outside the index (by
/// meaning: `recall::hybrid`).
impl LexicalIndex {
    /// The live documents' numbers in key order (position `p` of a ranking made over the
    /// root's keys in key order is document `key_order()[p]`).
    pub fn key_order(&self) -> Vec<u32> {
        self.live_in_key_order()
    }

    /// Whether live document `d` passes `q`'s filters (namespace, globs, dates).
    pub fn admits(&self, d: u32, q: &Query<'_>) -> bool {
        self.live_len(d).is_some() && self.in_scope(d, q) && self.passes(d, q)
    }

    /// The position of the document with encoded key `key` in `order` (a
    /// [`LexicalIndex::key_order`]).
    pub fn position_of(&self, order: &[u32], key: &[u8]) -> Option<usize> {
        order.binary_search_by(|&d| self.key_of(d).cmp(key)).ok()
    }

    /// Live document `d` as a hit scored `score`, all of it lexical in its terms.
    pub fn hit_of(&self, d: u32, score: f64) -> Option<super::Hit> {
        let e = self.doc(d)?;
        Some(super::Hit {
            key: e.key.to_vec(),
            namespace: e.namespace.to_string(),
            path: e.path.to_string(),
            value: e.value,
            content: e.content.to_string(),
            score,
            timestamp: e.timestamp,
            actor: self.actors_of(d).first().map(|a| a.to_string()),
            terms: super::ScoreTerms::lexical(score),
        })
    }
}
