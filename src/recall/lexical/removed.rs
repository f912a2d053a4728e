//! The file part's postings of the documents removed since it was written, kept apart so
//! that a term's live count and its parents' sums take them off the file's sums without
//! reading the term's postings (which, with thousands of removed documents spread across
//! the file, meant reading and checking nearly all of a common term's postings).

use std::collections::HashMap;

use super::index::Posting;

/// Removed documents' postings, by the term's number in the file part.
#[derive(Default)]
pub(super) struct RemovedPostings {
    /// As read from the delta file: (term, posting), ascending by term then document.
    read: Vec<(u32, Posting)>,
    /// Removed since the delta file was read, per term.
    since: HashMap<u32, Vec<Posting>>,
}

impl RemovedPostings {
    /// Postings read from a delta file, ascending by term then document (checked by the
    /// reader).
    pub(super) fn from_sorted(read: Vec<(u32, Posting)>) -> Self {
        Self {
            read,
            since: HashMap::new(),
        }
    }

    pub(super) fn add(&mut self, term: u32, p: Posting) {
        self.since.entry(term).or_default().push(p);
    }

    /// The read postings of `term`.
    fn read_of(&self, term: u32) -> &[(u32, Posting)] {
        let lo = self.read.partition_point(|e| e.0 < term);
        let hi = lo + self.read[lo..].partition_point(|e| e.0 == term);
        &self.read[lo..hi]
    }

    /// How many removed documents hold `term`.
    pub(super) fn count(&self, term: u32) -> usize {
        self.read_of(term).len() + self.since.get(&term).map_or(0, Vec::len)
    }

    /// The postings of `term`'s removed documents, in no particular order.
    pub(super) fn of(&self, term: u32) -> impl Iterator<Item = &Posting> {
        let since = self.since.get(&term).map_or(&[][..], Vec::as_slice);
        self.read_of(term).iter().map(|e| &e.1).chain(since)
    }

    /// Every posting, ascending by term then document: what a delta file records.
    pub(super) fn sorted(&self) -> Vec<(u32, Posting)> {
        let mut all = self.read.clone();
        for (&t, ps) in &self.since {
            all.extend(ps.iter().map(|&p| (t, p)));
        }
        all.sort_unstable_by_key(|e| (e.0, e.1.doc));
        all
    }
}
