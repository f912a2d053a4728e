//! A term's postings as the file part holds them, checked as they are read, and its
//! entries under each parent.

use super::blocks::first_from;
use super::file_part::{Base, BLOCK};
use super::index::Posting;

/// A term's entry under one parent, as stored (see [`Base::parent_rows`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ParentRow {
    pub(super) key_sum: u32,
    pub(super) content_sum: u32,
    /// Documents under the parent that hold the term.
    pub(super) docs: u32,
    /// Largest and smallest frequencies of those documents.
    pub(super) key_most: u16,
    pub(super) content_most: u16,
    pub(super) key_least: u16,
    pub(super) content_least: u16,
}

impl ParentRow {
    /// No document yet (the smallest frequencies at their most).
    pub(super) const NONE: ParentRow = ParentRow {
        key_sum: 0,
        content_sum: 0,
        docs: 0,
        key_most: 0,
        content_most: 0,
        key_least: u16::MAX,
        content_least: u16::MAX,
    };

    /// Counts in a document that holds the term this often; false when a sum passes a u32
    /// (it is then kept at its most).
    pub(super) fn add(&mut self, p: &Posting) -> bool {
        let (k, c) = (
            self.key_sum.checked_add(p.key_tf.into()),
            self.content_sum.checked_add(p.content_tf.into()),
        );
        self.key_sum = k.unwrap_or(u32::MAX);
        self.content_sum = c.unwrap_or(u32::MAX);
        self.docs = self.docs.saturating_add(1);
        self.key_most = self.key_most.max(p.key_tf);
        self.content_most = self.content_most.max(p.content_tf);
        self.key_least = self.key_least.min(p.key_tf);
        self.content_least = self.content_least.min(p.content_tf);
        k.is_some() && c.is_some()
    }
}

/// A term's postings as the file holds them (8 bytes each). A posting read alone has its
/// block checked then; a run of them a block at a time; a walk through all of them checks
/// them all first.
#[derive(Clone, Copy)]
pub(super) struct Postings<'a> {
    /// The postings' bytes, within the file but not checked yet when `base` is given.
    raw: &'a [u8],
    base: Option<&'a Base>,
    /// Where `raw` starts in the file.
    at: usize,
}

impl<'a> Postings<'a> {
    /// No postings.
    pub(super) const EMPTY: Postings<'static> = Postings {
        raw: &[],
        base: None,
        at: 0,
    };

    /// The postings `raw`, not checked yet, at `at` in `base`'s file.
    pub(super) fn in_file(raw: &'a [u8], base: &'a Base, at: usize) -> Self {
        Postings {
            raw,
            base: Some(base),
            at,
        }
    }

    /// Postings held in memory (whole postings of 8 bytes; a shorter tail is left out).
    pub(super) fn in_memory(raw: &'a [u8]) -> Self {
        Postings {
            raw: &raw[..raw.len() / 8 * 8],
            base: None,
            at: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.raw.len() / 8
    }

    /// The postings from `i` on as far as the file block that holds the end of posting `i`
    /// goes, checked (at least posting `i`); empty past the last, or when they are not what
    /// was written (the index is then marked damaged). A sweep reads a term's postings so,
    /// a block at a time, and so checks only the blocks it reads.
    pub(super) fn run_from(&self, i: usize) -> &'a [u8] {
        let len = self.len();
        if i >= len {
            return &[];
        }
        let Some(base) = self.base else {
            return &self.raw[8 * i..];
        };
        let start = self.at + 8 * i;
        let block_end = (start + 7) / BLOCK * BLOCK + BLOCK;
        let j = ((block_end - self.at) / 8).clamp(i + 1, len);
        match base.check(start, 8 * (j - i)) {
            true => &self.raw[8 * i..8 * j],
            false => &[],
        }
    }

    /// The bytes of posting `i` (below `len`), checked (zeros, and the index marked
    /// damaged, when they are not what was written).
    #[inline]
    pub(super) fn bytes(&self, i: usize) -> [u8; 8] {
        let b: [u8; 8] = self.raw[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]);
        match self.base {
            Some(base) if !base.check(self.at + 8 * i, 8) => [0; 8],
            _ => b,
        }
    }

    /// The document number of posting `i`.
    fn doc(&self, i: usize) -> u32 {
        let c = self.bytes(i);
        u32::from_le_bytes([c[0], c[1], c[2], c[3]])
    }

    /// Postings `i..j` (within `len`), checked as these are.
    pub(super) fn range(&self, i: usize, j: usize) -> Postings<'a> {
        Postings {
            raw: &self.raw[8 * i..8 * j],
            base: self.base,
            at: self.at + 8 * i,
        }
    }

    /// The first of postings `lo..hi` (within `len`) of a document at or after `d` (`hi`
    /// when none is): a search (see [`first_from`]) that checks the blocks it reads.
    pub(super) fn first_from(&self, lo: usize, hi: usize, d: u32) -> usize {
        first_from(lo, hi, d, |i| self.doc(i))
    }

    /// Posting `i`, if it is below `len`.
    pub(super) fn get(&self, i: usize) -> Option<Posting> {
        (i < self.len()).then(|| posting(self.bytes(i)))
    }

    /// The posting for document `d`, if any: found by [`first_from`], which reads the
    /// postings around where `d` would be if they were spread evenly rather than a trail
    /// of halvings across them (each probe maps pages of the file).
    pub(super) fn find(&self, d: u32) -> Option<Posting> {
        let i = self.first_from(0, self.len(), d);
        (i < self.len() && self.doc(i) == d).then(|| posting(self.bytes(i)))
    }

    /// Whether some posting's document passes `f`, reading postings one by one (a walk
    /// that usually stops at the first).
    pub(super) fn any_doc(&self, f: impl Fn(u32) -> bool) -> bool {
        (0..self.len()).any(|i| f(self.doc(i)))
    }

    /// The postings' bytes (8 a posting: document number, key-path and content
    /// frequencies, little-endian), checked; empty when they are damaged.
    pub(super) fn checked_bytes(&self) -> &'a [u8] {
        match self.base {
            Some(base) => base.bytes_at(self.at, self.raw.len()),
            None => self.raw,
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = Posting> + 'a {
        let all: &'a [u8] = match self.base {
            Some(base) => base.bytes_at(self.at, self.raw.len()),
            None => self.raw,
        };
        all.chunks_exact(8)
            .map(|c| posting(c.try_into().unwrap_or([0; 8])))
    }
}

fn posting(c: [u8; 8]) -> Posting {
    Posting {
        doc: u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
        key_tf: u16::from_le_bytes([c[4], c[5]]),
        content_tf: u16::from_le_bytes([c[6], c[7]]),
    }
}
