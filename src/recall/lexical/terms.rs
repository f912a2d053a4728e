//! Reading terms across both parts of the index: by name, in name order, with their
//! postings.

use std::collections::btree_map;
use std::iter::Peekable;
use std::ops::Bound;

use super::file_part::{Base, Postings};
use super::index::Posting;
use super::LexicalIndex;

/// One indexed term: its number in the file part and in the overlay (at least one).
#[derive(Debug, Clone, Copy)]
pub(super) struct TermRef {
    pub(super) base: Option<u32>,
    pub(super) over: Option<u32>,
}

/// The terms of both parts, merged in name order.
pub(super) struct Terms<'a> {
    pub(super) base: &'a Base,
    pub(super) at: usize,
    pub(super) over: Peekable<btree_map::Range<'a, String, u32>>,
}

impl<'a> Iterator for Terms<'a> {
    type Item = (&'a str, TermRef);

    fn next(&mut self) -> Option<Self::Item> {
        let base: &'a Base = self.base;
        let b = (self.at < base.n_terms()).then(|| base.term(self.at));
        let o = self.over.peek().map(|(k, &id)| (k.as_str(), id));
        let (name, r) = match (b, o) {
            (None, None) => return None,
            (Some(bn), Some((on, _))) if bn < on => (bn, (Some(self.at as u32), None)),
            (Some(bn), None) => (bn, (Some(self.at as u32), None)),
            (Some(bn), Some((on, oid))) if bn == on => {
                self.over.next();
                (bn, (Some(self.at as u32), Some(oid)))
            }
            (_, Some((on, oid))) => {
                self.over.next();
                return Some((
                    on,
                    TermRef {
                        base: None,
                        over: Some(oid),
                    },
                ));
            }
        };
        self.at += 1;
        Some((
            name,
            TermRef {
                base: r.0,
                over: r.1,
            },
        ))
    }
}

impl LexicalIndex {
    /// The terms of both parts in name order, all of them or those after `after`.
    pub(super) fn terms_after(&self, after: Option<&str>) -> Terms<'_> {
        let (at, over) = match after {
            Some(a) => (
                self.base.term_bound(a, false),
                self.vocab
                    .range::<str, _>((Bound::Excluded(a), Bound::Unbounded)),
            ),
            None => (
                0,
                self.vocab
                    .range::<str, _>((Bound::<&str>::Unbounded, Bound::Unbounded)),
            ),
        };
        Terms {
            base: &self.base,
            at,
            over: over.peekable(),
        }
    }

    pub(super) fn lookup(&self, term: &str) -> Option<TermRef> {
        let r = TermRef {
            base: self.base.find_term(term),
            over: self.vocab.get(term).copied(),
        };
        (r.base.is_some() || r.over.is_some()).then_some(r)
    }

    pub(super) fn base_postings(&self, t: TermRef) -> Postings<'_> {
        t.base
            .map_or(Postings::EMPTY, |i| self.base.term_postings(i as usize))
    }

    pub(super) fn over_postings(&self, t: TermRef) -> &[Posting] {
        t.over.map_or(&[], |i| &self.postings[i as usize])
    }

    /// Whether some live document holds the term.
    pub(super) fn live(&self, t: TermRef) -> bool {
        !self.over_postings(t).is_empty()
            || self
                .base_postings(t)
                .any_doc(|d| !self.dead.get(d as usize).copied().unwrap_or(true))
    }

    /// Number of live documents holding the term.
    pub(super) fn df(&self, t: TermRef) -> usize {
        let removed = t.base.map_or(0, |i| self.removed_postings.count(i));
        self.base_postings(t).len().saturating_sub(removed) + self.over_postings(t).len()
    }

    /// The file part's postings of the term's documents removed since the file was
    /// written (in no particular order).
    pub(super) fn removed_postings(&self, t: TermRef) -> impl Iterator<Item = &Posting> {
        t.base
            .into_iter()
            .flat_map(|i| self.removed_postings.of(i).map(|r| &r.posting))
    }

    /// The live postings of a term: the file part's (removed documents skipped), then the
    /// overlay's.
    pub(super) fn each_posting(&self, t: TermRef, mut f: impl FnMut(&Posting)) {
        for p in self.base_postings(t).iter() {
            // A document number past the file part only comes from a damaged file, which
            // the part has noted when the block was checked.
            if !self.dead.get(p.doc as usize).copied().unwrap_or(true) {
                f(&p);
            }
        }
        for p in self.over_postings(t) {
            f(p);
        }
    }
}
