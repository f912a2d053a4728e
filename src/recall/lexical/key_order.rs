//! The records of an index changed since its file part (documents removed, overlay
//! documents added), numbered in key order across both parts once per state of the index:
//! each record's document (its length and parent read through it, from the file's columns
//! or the overlay's own); and each query term's postings, read
//! in pieces of the file part's, each run's documents shifted to its records, with the
//! overlay's between them. A sweep in key order (`stream`) ranks such an index as it ranks
//! a whole file part, rather than scoring every record a term matches in memory of the
//! index's size.

use super::blocks::{first_from, Columns, Pieces};
use super::context::ParentStats;
use super::dates::{number, numbers, Dated};
use super::index::Posting;
use super::postings::Postings;
use super::LexicalIndex;

/// The live records in key order (see the module documentation): record `r` is document
/// `docs[r]`.
pub(super) struct KeyOrder {
    /// Per record, its document number.
    pub(super) docs: Vec<u32>,
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
        self.docs.len() as u32
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
    /// from [`KeyOrder::overlay_postings`]).
    pub(super) fn pieces<'a>(&self, base: Postings<'a>, over: &'a [u8]) -> Pieces<'a> {
        let mut out = Pieces::default();
        let over = Postings::in_memory(over);
        let (nb, no) = (base.len(), over.len());
        let (mut i, mut j) = (0, 0);
        for &(first, len, at) in &self.runs {
            let before = over.first_from(j, no, at);
            out.push(over.range(j, before), 0);
            j = before;
            i = base.first_from(i, nb, first);
            let end = base.first_from(i, nb, first + len);
            out.push(base.range(i, end), at.wrapping_sub(first));
            i = end;
        }
        out.push(over.range(j, no), 0);
        out
    }

    /// Documents as their records, ascending; removed ones left out. The file part's are
    /// mapped a run at a time, read where they lie (a changed index's dates are one run of
    /// ascending documents), the overlay's placed between the runs.
    pub(super) fn records(&self, docs: &Dated<'_>) -> Dated<'static> {
        // The file part's: one run walked where it lies (its removed documents are in no
        // run of live ones, so passed over), else all of them sorted; then the overlay's.
        let file: Vec<&[u8]> = docs.runs().filter(|r| number(r, 0) < self.n_base).collect();
        let sorted: Vec<u8>;
        let (base, mut over): (&[u8], Vec<u32>) = match &file[..] {
            [run] => {
                let mut over = Vec::new();
                (docs.runs().filter(|r| number(r, 0) >= self.n_base))
                    .for_each(|r| over.extend(numbers(r)));
                (run, over)
            }
            _ => {
                let mut v = Vec::with_capacity(docs.len());
                docs.for_each(|d| v.push(d));
                v.sort_unstable();
                let split = v.partition_point(|&d| d < self.n_base);
                let over = v.split_off(split);
                sorted = v.iter().flat_map(|d| d.to_le_bytes()).collect();
                (&sorted, over)
            }
        };
        let split = base.len() / 4;
        // The overlay's records (few), ascending.
        over = over.into_iter().filter_map(|d| self.record_of(d)).collect();
        over.sort_unstable();
        let mut over = over.into_iter().peekable();
        let mut out = Vec::with_capacity(4 * docs.len());
        let mut put = |r: u32| out.extend_from_slice(&r.to_le_bytes());
        let doc = |j| number(base, j);
        let mut i = 0;
        for &(first, len, at) in &self.runs {
            std::iter::from_fn(|| over.next_if(|&o| o < at)).for_each(&mut put);
            i = first_from(i, split, first, doc);
            let end = first_from(i, split, first + len, doc);
            numbers(&base[4 * i..4 * end]).for_each(|d| put(at + (d - first)));
            i = end;
        }
        over.for_each(put);
        Dated::held(out)
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
        let live = self.len();
        let slots = self.docs.len();
        let mut k = KeyOrder {
            docs: Vec::with_capacity(live),
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
                    k.runs.push((a as u32, (b - a) as u32, k.docs.len() as u32));
                    k.docs.extend(a as u32..b as u32);
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
            k.over[slot as usize] = k.docs.len() as u32;
            k.docs.push((n + slot as usize) as u32);
            k.over_lens[slot as usize] = e.len;
            k.over_parents[slot as usize] = self.parent(stats, (n + slot as usize) as u32);
        }
        base_upto(&mut k, &mut at, n);
        k
    }
}
