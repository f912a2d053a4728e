//! Reading documents across both parts of the index: by number, in key order, by
//! neighbour.

use super::frozen::span;
use super::{IndexedDoc, LexicalIndex, Query};
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
            return (!self.dead[d]).then(|| self.base.lens[d]);
        }
        Some(self.docs.get(d - n)?.as_ref()?.len)
    }

    /// The namespace of the live document numbered `d` (empty for a removed overlay
    /// document).
    pub(super) fn namespace_of(&self, d: u32) -> &str {
        let (d, n) = (d as usize, self.base.n_docs());
        if d < n {
            return &self.base.ns_text[span(&self.base.ns_off, d)];
        }
        self.docs
            .get(d - n)
            .and_then(Option::as_ref)
            .map_or("", |e| &e.namespace)
    }

    /// The timestamp of the live document numbered `d` (0 for a removed overlay document).
    pub(super) fn timestamp_of(&self, d: u32) -> f64 {
        let (d, n) = (d as usize, self.base.n_docs());
        if d < n {
            return self.base.timestamps[d];
        }
        self.docs
            .get(d - n)
            .and_then(Option::as_ref)
            .map_or(0.0, |e| e.timestamp)
    }

    /// Whether document `d` is live and passes `q`'s filters (without building the document
    /// when there are none).
    pub(super) fn passes(&self, d: u32, q: &Query<'_>) -> bool {
        let unfiltered =
            q.namespace.is_none() && q.globs.is_none() && q.since.is_none() && q.until.is_none();
        if unfiltered {
            return self.live_len(d).is_some();
        }
        self.doc(d).is_some_and(|e| {
            !(q.namespace.is_some_and(|ns| ns != e.namespace)
                || q.globs.is_some_and(|g| !g.matches(e.path))
                || q.since.is_some_and(|t| e.timestamp < t)
                || q.until.is_some_and(|t| e.timestamp > t))
        })
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
                namespace: &b.ns_text[span(&b.ns_off, d)],
                path: &b.path_text[span(&b.path_off, d)],
                content: &b.content_text[span(&b.content_off, d)],
                value: b.values[d],
                timestamp: b.timestamps[d],
                len: b.lens[d],
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

    /// The live documents in key order, by number.
    pub(super) fn live_in_key_order(&self) -> Vec<u32> {
        let n = self.base.n_docs();
        let mut out = Vec::with_capacity(self.len());
        let mut base = (0..n).filter(|&i| !self.dead[i]).peekable();
        let mut over = self.by_key.iter().peekable();
        loop {
            let take_base = match (base.peek(), over.peek()) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(&b), Some((k, _))) => self.base.key(b) < k.as_slice(),
            };
            if take_base {
                if let Some(b) = base.next() {
                    out.push(b as u32);
                }
            } else if let Some((_, &s)) = over.next() {
                out.push((n + s as usize) as u32);
            }
        }
        out
    }
}
