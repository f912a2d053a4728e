//! The records of an index changed since its file part (documents removed, overlay
//! documents added), numbered in key order across both parts once per state of the index:
//! each record's document (its length and parent read through it, from the file's columns
//! or the overlay's own), held as spans of records whose documents follow each other; and
//! each query term's postings, read
//! in pieces of the file part's, each run's documents shifted to its records, with the
//! overlay's between them. A sweep in key order (`stream`) ranks such an index as it ranks
//! a whole file part, rather than scoring every record a term matches in memory of the
//! index's size.

use std::borrow::Cow;

use super::blocks::{first_from, Columns, Numbers, Pieces};
use super::context::ParentStats;
use super::dates::{number, numbers, Dated};
use super::index::Posting;
use super::postings::Postings;
use super::removed::Removed;
use super::LexicalIndex;

/// Records' documents: spans of records whose documents follow each other (a change to an
/// index makes a few: one where a document was removed, one for each overlay document),
/// found through the span of each group of [`Spans::GROUP`] records, so that a lookup
/// costs about what reading a vector of every record's document costs, without holding
/// one (4 bytes a record).
#[derive(Default)]
pub(super) struct Spans {
    /// Per span, its first record and that record's document, ascending by record.
    starts: Vec<(u32, u32)>,
    /// Per group of records, the span of its first.
    groups: Vec<u32>,
    /// Records in all.
    len: u32,
}

impl Spans {
    /// Records in a group.
    const GROUP: u32 = 256;

    /// Adds `count` records after those held, their documents `first..first + count`.
    fn push(&mut self, first: u32, count: u32) {
        if count == 0 {
            return;
        }
        self.starts.push((self.len, first));
        let span = (self.starts.len() - 1) as u32;
        self.len += count;
        let groups = self.len.div_ceil(Self::GROUP) as usize;
        self.groups.resize(groups.max(self.groups.len()), span);
    }

    /// Number of records.
    pub(super) fn len(&self) -> u32 {
        self.len
    }

    /// The span holding record `r` (which is below `len`): its group's first span, or one
    /// that starts after it in the group.
    #[inline]
    fn span_of(&self, r: u32) -> usize {
        let mut k = self.groups[(r / Self::GROUP) as usize] as usize;
        while self.starts.get(k + 1).is_some_and(|s| s.0 <= r) {
            k += 1;
        }
        k
    }

    /// The document of record `r` (`u32::MAX` past the end).
    #[inline]
    pub(super) fn doc(&self, r: u32) -> u32 {
        if r >= self.len {
            return u32::MAX;
        }
        let (first, doc) = self.starts[self.span_of(r)];
        doc + (r - first)
    }

    /// The records `lo..hi` (those below `len`) as the parts of spans they cover, in order:
    /// (first record, end, the first's document).
    pub(super) fn segments(&self, lo: u32, hi: u32) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        let hi = hi.min(self.len);
        let k = match lo < hi {
            true => self.span_of(lo),
            false => self.starts.len(),
        };
        let ends = self.starts[k..]
            .iter()
            .skip(1)
            .map(|s| s.0)
            .chain([self.len]);
        (self.starts[k..].iter().zip(ends)).map_while(move |(&(s, d), end)| {
            let a = s.max(lo);
            (a < hi).then(|| (a, end.min(hi), d + (a - s)))
        })
    }

    /// Every record's document, in order.
    pub(super) fn docs(&self) -> Vec<u32> {
        (self.segments(0, self.len))
            .flat_map(|(a, b, d)| d..d + (b - a))
            .collect()
    }
}

/// The live records in key order (see the module documentation).
pub(super) struct KeyOrder {
    /// Per record, its document.
    pub(super) docs: Spans,
    /// Per overlay slot, its document's length and parent number (zero for a free slot):
    /// the file part's documents have theirs in the file's columns.
    over_lens: Vec<f64>,
    over_parents: Vec<u32>,
    /// The runs of live file-part documents between changes: (first document, documents,
    /// record of the first), ascending.
    runs: Vec<(u32, u32, u32)>,
    /// The record of each overlay slot (`u32::MAX` for a free one).
    over: Vec<u32>,
    /// Documents of the file part.
    n_base: u32,
}

impl KeyOrder {
    /// Number of records.
    pub(super) fn len(&self) -> u32 {
        self.docs.len()
    }

    /// The records' lengths and parents, read through their documents.
    pub(super) fn columns<'a>(&'a self, ix: &'a LexicalIndex) -> Columns<'a> {
        // (Without a file part there are no columns to read; reading them would mark the
        // index damaged.)
        let (lens, parents) = match self.n_base {
            0 => (&[][..], &[][..]),
            _ => ix.base.len_and_parent_columns(),
        };
        let file = Columns::of_file(lens, parents);
        Columns::through(
            file,
            &self.docs,
            self.n_base,
            &self.over_lens,
            &self.over_parents,
        )
    }

    /// The record of live document `d` (none for a removed one).
    pub(super) fn record_of(&self, d: u32) -> Option<u32> {
        if d >= self.n_base {
            let r = *self.over.get((d - self.n_base) as usize)?;
            return (r != u32::MAX).then_some(r);
        }
        let i = self.runs.partition_point(|r| r.0 <= d).checked_sub(1)?;
        let (first, len, at) = self.runs[i];
        (d - first < len).then(|| at + (d - first))
    }

    /// An overlay term's postings (`over`) by record, ascending, 8 bytes each as the file
    /// holds them.
    pub(super) fn overlay_postings(&self, over: &[Posting]) -> Vec<u8> {
        let mut extra: Vec<(u32, u16, u16)> = over
            .iter()
            .filter_map(|p| Some((self.record_of(p.doc)?, p.key_tf, p.content_tf)))
            .collect();
        extra.sort_unstable_by_key(|e| e.0);
        let mut out = Vec::with_capacity(8 * extra.len());
        for (r, k, c) in extra {
            out.extend_from_slice(&r.to_le_bytes());
            out.extend_from_slice(&k.to_le_bytes());
            out.extend_from_slice(&c.to_le_bytes());
        }
        out
    }

    /// A term's postings by record, without copying them: the file part's (`base`,
    /// ascending documents, checked as the sweep reads them) of live documents a run at a
    /// time, each run's shifted to its records, and between them the overlay's (`over`,
    /// from [`KeyOrder::overlay_postings`]). Where a run starts or ends at a removed
    /// document the term holds (`removed`, ascending by document), its place is known;
    /// elsewhere it is searched for, reading the postings there.
    pub(super) fn pieces<'a>(
        &self,
        base: Postings<'a>,
        over: &'a [u8],
        removed: &[Removed],
    ) -> Pieces<'a> {
        let mut out = Pieces::default();
        let over = Postings::in_memory(over);
        let (nb, no) = (base.len(), over.len());
        let (mut i, mut j, mut k) = (0, 0, 0);
        // The last posting searched for and its document: a run before it holds none.
        let mut seen = (usize::MAX, 0);
        // The first of the file part's postings of a document at or after `d`, from `i`.
        let mut first_at = |i: usize, d: u32| -> usize {
            let d = u64::from(d);
            while removed
                .get(k)
                .is_some_and(|r| u64::from(r.posting.doc) + 1 < d)
            {
                k += 1;
            }
            let known = match removed.get(k) {
                Some(r) if u64::from(r.posting.doc) + 1 == d => Some(r.at as usize + 1),
                Some(r) if u64::from(r.posting.doc) == d => Some(r.at as usize),
                _ => None,
            };
            match known {
                Some(at) => at.clamp(i, nb),
                None if seen.0 == i && d <= u64::from(seen.1) => i,
                None => {
                    let at = base.first_from(i, nb, d as u32);
                    if let Some(p) = base.get(at) {
                        seen = (at, p.doc);
                    }
                    at
                }
            }
        };
        for &(first, len, at) in &self.runs {
            let before = over.first_from(j, no, at);
            out.push(over.range(j, before), 0);
            j = before;
            i = first_at(i, first);
            let end = first_at(i, first + len);
            out.push(base.range(i, end), at.wrapping_sub(first));
            i = end;
        }
        out.push(over.range(j, no), 0);
        out
    }

    /// The records of documents `docs` (see [`Dated`]), a source of ascending records per
    /// run, none copied: each of the file part's runs in pieces a run of live documents
    /// long, each piece's documents shifted to its records (its removed documents, in no
    /// run of live ones, passed over); the overlay's mapped, as one run more.
    pub(super) fn dated<'a>(&self, docs: &'a Dated<'_>) -> Vec<Numbers<'a>> {
        let mut out = Vec::new();
        let mut over = Vec::new();
        for run in docs.runs() {
            if number(run, 0) >= self.n_base {
                over.extend(numbers(run).filter_map(|d| self.record_of(d)));
                continue;
            }
            let mut pieces = Numbers::default();
            let (count, doc) = (run.len() / 4, |j| number(run, j));
            let mut i = 0;
            for &(first, len, at) in &self.runs {
                i = first_from(i, count, first, doc);
                let end = first_from(i, count, first + len, doc);
                pieces.push(Cow::Borrowed(&run[4 * i..4 * end]), at.wrapping_sub(first));
                i = end;
            }
            out.push(pieces);
        }
        over.sort_unstable();
        let mut pieces = Numbers::default();
        pieces.push(
            Cow::Owned(over.iter().flat_map(|r| r.to_le_bytes()).collect()),
            0,
        );
        out.push(pieces);
        out
    }
}

impl LexicalIndex {
    /// The live records in key order (see [`KeyOrder`]), built on first use after a change.
    pub(super) fn records_in_key_order(&self) -> &KeyOrder {
        let stats = self.stats();
        (stats.key_order).get_or_init(|| self.build_key_order(stats))
    }

    fn build_key_order(&self, stats: &ParentStats) -> KeyOrder {
        let n = self.base.n_docs();
        let slots = self.docs.len();
        let mut k = KeyOrder {
            docs: Spans::default(),
            over_lens: vec![0.0; slots],
            over_parents: vec![0; slots],
            runs: Vec::new(),
            over: vec![u32::MAX; slots],
            n_base: n as u32,
        };
        // The file part's live documents `from..to`, in runs between removed ones.
        let mut removed = stats.removed.iter().map(|&d| d as usize).peekable();
        let mut base_upto = |k: &mut KeyOrder, from: &mut usize, to: usize| {
            while *from < to {
                while removed.next_if(|&r| r < *from).is_some() {}
                let end = removed.peek().map_or(to, |&r| r.min(to));
                if end > *from {
                    let (a, b) = (*from, end);
                    k.runs.push((a as u32, (b - a) as u32, k.docs.len()));
                    k.docs.push(a as u32, (b - a) as u32);
                    *from = end;
                }
                if *from < to && removed.next_if_eq(&*from).is_some() {
                    *from += 1;
                }
            }
        };
        let mut at = 0;
        for (key, &slot) in &self.by_key {
            let Some(e) = self.docs.get(slot as usize).and_then(Option::as_ref) else {
                continue;
            };
            // Before the file part's first document whose key is not below it.
            base_upto(&mut k, &mut at, self.base.key_bound(key, true));
            k.over[slot as usize] = k.docs.len();
            k.docs.push((n + slot as usize) as u32, 1);
            k.over_lens[slot as usize] = e.len;
            k.over_parents[slot as usize] = self.parent(stats, (n + slot as usize) as u32);
        }
        base_upto(&mut k, &mut at, n);
        k
    }
}

#[cfg(test)]
mod tests {
    use super::Spans;
    use proptest::prelude::*;

    proptest! {
        /// Spans give each record the document a vector of every record's would, and
        /// any range of records as the parts of spans it covers.
        #[test]
        fn spans_give_each_record_its_document(
            spans in prop::collection::vec((0u32..5000, 0u32..700), 0..40),
            lo in 0u32..12_000,
            width in 0u32..3000,
        ) {
            let mut held = Spans::default();
            let mut docs = Vec::new();
            for &(first, count) in &spans {
                held.push(first, count);
                docs.extend(first..first + count);
            }
            prop_assert_eq!(held.len() as usize, docs.len());
            prop_assert_eq!(held.docs(), docs.clone());
            for r in 0..docs.len() as u32 + 2 {
                prop_assert_eq!(held.doc(r), docs.get(r as usize).copied().unwrap_or(u32::MAX));
            }
            let hi = lo.saturating_add(width);
            let mut got = Vec::new();
            let mut next = lo;
            for (a, b, d) in held.segments(lo, hi) {
                prop_assert!(a == next && a < b);
                got.extend(d..d + (b - a));
                next = b;
            }
            let want: Vec<u32> = docs.iter().copied().skip(lo as usize).take((hi - lo) as usize).collect();
            prop_assert_eq!(got, want);
        }
    }
}
