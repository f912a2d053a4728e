//! The frozen part of an index: documents and terms in flat, offset-addressed tables, as a
//! cache file holds them.

use super::index::Posting;
use crate::object::ObjectId;

/// The frozen part of an index, as a cache file holds it: documents sorted by key (a
/// document's number is its rank), terms sorted, each term's postings ready to use. Loading
/// it is a few bulk copies and checks, with no per-document or per-term allocation.
#[derive(Default)]
pub(super) struct Base {
    /// Checksum of the cache file it was read from (what a delta file names).
    pub(super) sum: Option<u128>,
    pub(super) term_off: Vec<u32>,
    pub(super) term_text: String,
    pub(super) post_off: Vec<u32>,
    pub(super) postings: Vec<Posting>,
    pub(super) key_off: Vec<u32>,
    pub(super) keys: Vec<u8>,
    pub(super) ns_off: Vec<u32>,
    pub(super) ns_text: String,
    pub(super) path_off: Vec<u32>,
    pub(super) path_text: String,
    pub(super) content_off: Vec<u32>,
    pub(super) content_text: String,
    pub(super) values: Vec<ObjectId>,
    pub(super) timestamps: Vec<f64>,
    pub(super) lens: Vec<f64>,
}

/// The `i`th range of an offset table (`off[i]..off[i + 1]`); the table is checked on load.
pub(super) fn span(off: &[u32], i: usize) -> std::ops::Range<usize> {
    off[i] as usize..off[i + 1] as usize
}

/// The first of `0..n` for which `below` is false, where `below` holds for a prefix of the
/// range (a binary search over indices, for the frozen index's offset-addressed tables).
fn bound(n: usize, below: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl Base {
    pub(super) fn n_docs(&self) -> usize {
        self.values.len()
    }

    pub(super) fn n_terms(&self) -> usize {
        self.term_off.len().saturating_sub(1)
    }

    pub(super) fn term(&self, i: usize) -> &str {
        &self.term_text[span(&self.term_off, i)]
    }

    pub(super) fn term_postings(&self, i: usize) -> &[Posting] {
        &self.postings[span(&self.post_off, i)]
    }

    pub(super) fn key(&self, i: usize) -> &[u8] {
        &self.keys[span(&self.key_off, i)]
    }

    /// First term index whose name is above `name` (`or_equal`: at or above).
    pub(super) fn term_bound(&self, name: &str, or_equal: bool) -> usize {
        bound(self.n_terms(), |i| {
            let t = self.term(i);
            t < name || (!or_equal && t == name)
        })
    }

    pub(super) fn find_term(&self, name: &str) -> Option<u32> {
        let i = self.term_bound(name, true);
        (i < self.n_terms() && self.term(i) == name).then_some(i as u32)
    }

    /// First document whose key is above `key` (`or_equal`: at or above).
    pub(super) fn key_bound(&self, key: &[u8], or_equal: bool) -> usize {
        bound(self.n_docs(), |i| {
            let k = self.key(i);
            k < key || (!or_equal && k == key)
        })
    }

    pub(super) fn find_key(&self, key: &[u8]) -> Option<usize> {
        let i = self.key_bound(key, true);
        (i < self.n_docs() && self.key(i) == key).then_some(i)
    }
}
