//! The file part's postings of the documents removed since it was written, kept apart so
//! that a term's live count and its parents' sums take them off the file's sums, and its
//! postings are cut around them, without reading the term's postings (which, with thousands
//! of removed documents spread across the file, meant reading and checking nearly all of a
//! common term's postings).

use std::borrow::Cow;
use std::collections::HashMap;

use super::index::Posting;

/// A removed document's posting of a term, and where it lies in the term's postings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Removed {
    pub(super) posting: Posting,
    /// Its number among the term's postings in the file part.
    pub(super) at: u32,
}

/// Removed documents' postings, by the term's number in the file part.
#[derive(Default)]
pub(super) struct RemovedPostings {
    /// As read from the delta file, ascending by term then document: each posting's term,
    /// and the postings (apart, so that a term's are one slice).
    read_terms: Vec<u32>,
    read: Vec<Removed>,
    /// Removed since the delta file was read, per term.
    since: HashMap<u32, Vec<Removed>>,
}

impl RemovedPostings {
    /// Postings read from a delta file and their terms, ascending by term then document
    /// (checked by the reader).
    pub(super) fn from_sorted(read_terms: Vec<u32>, read: Vec<Removed>) -> Self {
        Self {
            read_terms,
            read,
            since: HashMap::new(),
        }
    }

    pub(super) fn add(&mut self, term: u32, r: Removed) {
        self.since.entry(term).or_default().push(r);
    }

    /// The read postings of `term`, ascending by document.
    fn read_of(&self, term: u32) -> &[Removed] {
        let lo = self.read_terms.partition_point(|&t| t < term);
        let hi = lo + self.read_terms[lo..].partition_point(|&t| t == term);
        &self.read[lo..hi]
    }

    fn since_of(&self, term: u32) -> &[Removed] {
        self.since.get(&term).map_or(&[][..], Vec::as_slice)
    }

    /// How many removed documents hold `term`.
    pub(super) fn count(&self, term: u32) -> usize {
        self.read_of(term).len() + self.since_of(term).len()
    }

    /// The postings of `term`'s removed documents, in no particular order.
    pub(super) fn of(&self, term: u32) -> impl Iterator<Item = &Removed> {
        self.read_of(term).iter().chain(self.since_of(term))
    }

    /// The postings of `term`'s removed documents, ascending by document (those read, as
    /// they lie, when none were removed since).
    pub(super) fn sorted_of(&self, term: u32) -> Cow<'_, [Removed]> {
        if self.since_of(term).is_empty() {
            return Cow::Borrowed(self.read_of(term));
        }
        let mut all: Vec<Removed> = self.of(term).copied().collect();
        all.sort_unstable_by_key(|r| r.posting.doc);
        Cow::Owned(all)
    }

    /// Every posting with its term, ascending by term then document: what a delta file
    /// records.
    pub(super) fn sorted(&self) -> Vec<(u32, Removed)> {
        let mut all: Vec<(u32, Removed)> = self
            .read_terms
            .iter()
            .copied()
            .zip(self.read.iter().copied())
            .collect();
        for (&t, rs) in &self.since {
            all.extend(rs.iter().map(|&r| (t, r)));
        }
        all.sort_unstable_by_key(|e| (e.0, e.1.posting.doc));
        all
    }
}
