//! The file part of an index: documents, terms and parents in flat, offset-addressed
//! tables, read in place from the cache file's bytes (memory-mapped when read from disk), so
//! that a search reads the tables of its terms and hits, never the whole file. Each 4 KiB
//! block of the file is checked against its checksum the first time anything in it is read;
//! a block that does not match marks the index damaged (see [`Base::damaged`]).

use crate::key::is_internal_namespace;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use xxhash_rust::xxh3::xxh3_64;

use super::codec::PARENT_ROW;
pub(super) use super::postings::{ParentRow, Postings};
use crate::object::ObjectId;

/// Bytes of a checksummed block of a cache file.
pub(super) const BLOCK: usize = 1 << 12;

/// The bytes of a cache file: mapped from the file, or (for bytes given in memory) from an
/// anonymous map they were copied to. A file is only ever replaced by renaming a new one over
/// it, never changed in place or truncated, so mapped bytes do not change under the map.
pub(super) type Bytes = memmap2::Mmap;

/// A table of the file: where it starts and how many items it holds.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Table {
    pub(super) at: usize,
    pub(super) n: usize,
}

/// The file part's tables, as [`super::codec`] lays them out.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Layout {
    pub(super) term_off: Table,
    pub(super) term_text: Table,
    pub(super) post_off: Table,
    pub(super) postings: Table,
    pub(super) key_off: Table,
    pub(super) keys: Table,
    pub(super) ns_off: Table,
    pub(super) ns_text: Table,
    pub(super) doc_ns: Table,
    pub(super) path_off: Table,
    pub(super) path_text: Table,
    pub(super) content_off: Table,
    pub(super) content_text: Table,
    pub(super) values: Table,
    pub(super) timestamps: Table,
    pub(super) lens: Table,
    pub(super) parents: Table,
    pub(super) dates: Table,
    /// Document numbers in order of date, then number (see [`Base::dated_in`]).
    pub(super) date_order: Table,
    /// The actors' names, sorted: offsets and text.
    pub(super) actor_off: Table,
    pub(super) actor_text: Table,
    /// Per document, where its actor numbers start in `doc_actors` (see
    /// [`Base::doc_actors`]).
    pub(super) doc_actor_off: Table,
    pub(super) doc_actors: Table,
    /// Per actor, where its documents start in `actor_docs` (see [`Base::actor_docs`]).
    pub(super) actor_doc_off: Table,
    pub(super) actor_docs: Table,
    pub(super) pkey_off: Table,
    pub(super) pkey_text: Table,
    pub(super) parent_len: Table,
    pub(super) parent_docs: Table,
    /// Per term, where its per-parent sums start in `psums` (see [`Base::parent_sums`]).
    pub(super) psum_off: Table,
    pub(super) psums: Table,
    /// Checksums of the blocks of everything before them.
    pub(super) sums: Table,
}

/// The file part of an index, as a cache file holds it: documents sorted by key (a
/// document's number is its rank), terms sorted, each term's postings ready to use, parents
/// sorted by key with their lengths. Opening it checks its header and its block checksums'
/// checksum; the tables are read where they lie.
pub(super) struct Base {
    /// Checksum of the cache file it was read from (what a delta file names).
    pub(super) sum: Option<u128>,
    /// None for an index with no file part.
    bytes: Option<Arc<Bytes>>,
    pub(super) t: Layout,
    /// One bit per block: checked already.
    checked: Vec<AtomicU64>,
    /// One bit per table read item by item in bulk: checked whole already.
    dense_checked: AtomicU64,
    /// The documents' lengths and parents, decoded once a search reads them (every search
    /// that scores reads them per posting).
    lens: OnceLock<Vec<f64>>,
    parents: OnceLock<Vec<u32>>,
    /// The namespaces' names, read once (there are few).
    namespaces: OnceLock<Vec<String>>,
    /// The actors' names, read once.
    actors: OnceLock<Vec<String>>,
    damaged: AtomicBool,
}

impl Default for Base {
    fn default() -> Self {
        Base {
            sum: None,
            bytes: None,
            t: Layout::default(),
            checked: Vec::new(),
            dense_checked: AtomicU64::new(0),
            lens: OnceLock::new(),
            parents: OnceLock::new(),
            namespaces: OnceLock::new(),
            actors: OnceLock::new(),
            damaged: AtomicBool::new(false),
        }
    }
}

/// The first of `0..n` for which `below` is false, where `below` holds for a prefix of the
/// range (a binary search over indices, for the file part's offset-addressed tables).
pub(super) fn first_not_below(n: usize, below: impl Fn(usize) -> bool) -> usize {
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
    /// A file part over `bytes`, whose layout and checksum the caller has checked.
    pub(super) fn new(bytes: Arc<Bytes>, t: Layout, sum: u128) -> Base {
        let blocks = t.sums.n;
        Base {
            sum: Some(sum),
            bytes: Some(bytes),
            t,
            checked: (0..blocks.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            dense_checked: AtomicU64::new(0),
            lens: OnceLock::new(),
            parents: OnceLock::new(),
            namespaces: OnceLock::new(),
            actors: OnceLock::new(),
            damaged: AtomicBool::new(false),
        }
    }

    /// Whether a block read so far did not match its checksum (or a table pointed outside
    /// the file): what was read from it is meaningless, and the index must be rebuilt.
    pub(super) fn damaged(&self) -> bool {
        self.damaged.load(Ordering::Relaxed)
    }

    fn fail(&self) {
        self.damaged.store(true, Ordering::Relaxed);
    }

    /// Checks every block not checked yet (what reading the whole file needs).
    pub(super) fn check_all(&self) {
        let end = self.t.sums.at;
        if end > 0 {
            self.bytes_at(0, end);
        }
    }

    /// Checks the blocks `at..at + len` falls in (at once when they were checked before).
    #[inline]
    pub(super) fn check(&self, at: usize, len: usize) -> bool {
        if len > 0 {
            let b = at / BLOCK;
            let last = at.wrapping_add(len - 1);
            if last / BLOCK == b
                && last < self.t.sums.at
                && self.checked[b / 64].load(Ordering::Relaxed) & (1u64 << (b % 64)) != 0
            {
                return true;
            }
        }
        self.check_blocks(at, len)
    }

    fn check_blocks(&self, at: usize, len: usize) -> bool {
        let end = self.t.sums.at;
        if len == 0 {
            return at <= end;
        }
        let Some(last) = at.checked_add(len).filter(|&e| e <= end) else {
            self.fail();
            return false;
        };
        for b in at / BLOCK..=(last - 1) / BLOCK {
            let (word, bit) = (&self.checked[b / 64], 1u64 << (b % 64));
            if word.load(Ordering::Relaxed) & bit != 0 {
                continue;
            }
            let Some(bytes) = self.bytes.as_deref() else {
                self.fail();
                return false;
            };
            let block = &bytes[b * BLOCK..((b + 1) * BLOCK).min(end)];
            let at = self.t.sums.at + 8 * b;
            let want = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
            if xxh3_64(block) != want {
                self.fail();
                return false;
            }
            word.fetch_or(bit, Ordering::Relaxed);
        }
        true
    }

    /// The bytes `at..at + len`, checked; empty (and the index marked damaged) when they
    /// are not what was written.
    #[inline]
    pub(super) fn bytes_at(&self, at: usize, len: usize) -> &[u8] {
        match self.bytes.as_deref() {
            Some(b) if self.check(at, len) => &b[at..at + len],
            _ => &[],
        }
    }

    #[inline]
    fn item<const N: usize>(&self, t: Table, i: usize) -> [u8; N] {
        if i >= t.n {
            self.fail();
            return [0; N];
        }
        self.bytes_at(t.at + N * i, N).try_into().unwrap_or([0; N])
    }

    fn u32_at(&self, t: Table, i: usize) -> u32 {
        u32::from_le_bytes(self.item(t, i))
    }

    fn f64_at(&self, t: Table, i: usize) -> f64 {
        f64::from_le_bytes(self.item(t, i))
    }

    /// Item `i` of a text table whose offsets are `off`.
    fn piece(&self, off: Table, text: Table, i: usize) -> &[u8] {
        let (s, e) = (
            self.u32_at(off, i) as usize,
            self.u32_at(off, i + 1) as usize,
        );
        if s > e || e > text.n {
            self.fail();
            return &[];
        }
        self.bytes_at(text.at + s, e - s)
    }

    fn text_piece(&self, off: Table, text: Table, i: usize) -> &str {
        std::str::from_utf8(self.piece(off, text, i)).unwrap_or_else(|_| {
            self.fail();
            ""
        })
    }

    pub(super) fn n_docs(&self) -> usize {
        self.t.values.n
    }

    pub(super) fn n_terms(&self) -> usize {
        self.t.term_off.n.saturating_sub(1)
    }

    pub(super) fn n_parents(&self) -> usize {
        self.t.parent_len.n
    }

    pub(super) fn term(&self, i: usize) -> &str {
        self.text_piece(self.t.term_off, self.t.term_text, i)
    }

    /// The postings of term `i`.
    pub(super) fn term_postings(&self, i: usize) -> Postings<'_> {
        let (s, e) = (
            self.u32_at(self.t.post_off, i) as usize,
            self.u32_at(self.t.post_off, i + 1) as usize,
        );
        if s > e || e > self.t.postings.n {
            self.fail();
            return Postings::EMPTY;
        }
        let at = self.t.postings.at + 8 * s;
        match self.bytes.as_deref() {
            Some(b) if at + 8 * (e - s) <= self.t.sums.at => {
                Postings::in_file(&b[at..at + 8 * (e - s)], self, at)
            }
            _ => {
                self.fail();
                Postings::EMPTY
            }
        }
    }

    pub(super) fn key(&self, i: usize) -> &[u8] {
        self.piece(self.t.key_off, self.t.keys, i)
    }

    /// The number of document `i`'s namespace (namespaces are numbered in name order).
    pub(super) fn namespace_no(&self, i: usize) -> u32 {
        u32::from_le_bytes(self.item(self.t.doc_ns, i))
    }

    /// The namespaces' names, in number order (name order).
    pub(super) fn namespace_names(&self) -> &[String] {
        self.namespaces.get_or_init(|| {
            (0..self.t.ns_off.n.saturating_sub(1))
                .map(|i| {
                    self.text_piece(self.t.ns_off, self.t.ns_text, i)
                        .to_string()
                })
                .collect()
        })
    }

    /// The number of namespace `name`, if a document is in it.
    pub(super) fn find_namespace(&self, name: &str) -> Option<u32> {
        self.namespace_names()
            .binary_search_by(|n| n.as_str().cmp(name))
            .ok()
            .map(|i| i as u32)
    }

    /// Whether namespace number `no` is one of memoir's own.
    pub(super) fn namespace_is_internal(&self, no: u32) -> bool {
        self.namespace_names()
            .get(no as usize)
            .is_some_and(|n| is_internal_namespace(n))
    }

    /// Whether a document is in one of memoir's own namespaces (removed documents count:
    /// the answer only decides whether searches test each record's namespace).
    pub(super) fn has_internal_namespace(&self) -> bool {
        self.namespace_names()
            .iter()
            .any(|n| is_internal_namespace(n))
    }

    /// The actors' names, in number order (name order).
    pub(super) fn actor_names(&self) -> &[String] {
        self.actors.get_or_init(|| {
            (0..self.t.actor_off.n.saturating_sub(1))
                .map(|i| {
                    self.text_piece(self.t.actor_off, self.t.actor_text, i)
                        .to_string()
                })
                .collect()
        })
    }

    /// The number of actor `name`, if a document names it.
    pub(super) fn find_actor(&self, name: &str) -> Option<u32> {
        self.actor_names()
            .binary_search_by(|n| n.as_str().cmp(name))
            .ok()
            .map(|i| i as u32)
    }

    /// The actor numbers of document `i`: the record's actor first, then the other agents
    /// whose entries it holds.
    pub(super) fn doc_actors(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        let (s, e) = (
            self.u32_at(self.t.doc_actor_off, i) as usize,
            self.u32_at(self.t.doc_actor_off, i + 1) as usize,
        );
        let (s, e) = if s > e || e > self.t.doc_actors.n {
            self.fail();
            (0, 0)
        } else {
            (s, e)
        };
        let names = self.actor_names().len() as u32;
        (s..e).map(move |k| {
            let a = self.u32_at(self.t.doc_actors, k);
            if a >= names {
                self.fail();
                return u32::MAX;
            }
            a
        })
    }

    /// The documents (removed ones too) whose records hold an entry by actor number `a`,
    /// ascending.
    pub(super) fn actor_docs(&self, a: u32) -> Vec<u32> {
        let a = a as usize;
        let (s, e) = (
            self.u32_at(self.t.actor_doc_off, a) as usize,
            self.u32_at(self.t.actor_doc_off, a + 1) as usize,
        );
        if s > e || e > self.t.actor_docs.n {
            self.fail();
            return Vec::new();
        }
        let bytes = self.bytes_at(self.t.actor_docs.at + 4 * s, 4 * (e - s));
        let docs: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if docs.len() != e - s || docs.iter().any(|&d| d as usize >= self.n_docs()) {
            self.fail();
            return Vec::new();
        }
        docs
    }

    pub(super) fn namespace(&self, i: usize) -> &str {
        self.text_piece(self.t.ns_off, self.t.ns_text, self.namespace_no(i) as usize)
    }

    pub(super) fn path(&self, i: usize) -> &str {
        self.text_piece(self.t.path_off, self.t.path_text, i)
    }

    pub(super) fn content(&self, i: usize) -> &str {
        self.text_piece(self.t.content_off, self.t.content_text, i)
    }

    pub(super) fn value(&self, i: usize) -> ObjectId {
        ObjectId::from_bytes(self.item(self.t.values, i))
    }

    /// The bytes of a table read item by item over many documents (the one numbered
    /// `which`), checked whole the first time: then each item costs what reading a slice does.
    #[inline]
    fn dense<const N: usize>(&self, t: Table, which: u32, i: usize) -> [u8; N] {
        let bit = 1u64 << which;
        if self.dense_checked.load(Ordering::Relaxed) & bit == 0 {
            if !self.check(t.at, t.n * N) {
                return [0; N];
            }
            self.dense_checked.fetch_or(bit, Ordering::Relaxed);
        }
        let b = self
            .bytes
            .as_deref()
            .and_then(|b| b.get(t.at + N * i..t.at + N * (i + 1)));
        match b.filter(|_| i < t.n) {
            Some(b) => b.try_into().unwrap_or([0; N]),
            None => {
                self.fail();
                [0; N]
            }
        }
    }

    pub(super) fn timestamp(&self, i: usize) -> f64 {
        f64::from_le_bytes(self.item(self.t.timestamps, i))
    }

    /// Every document's length, by number (decoded once: every search that scores reads
    /// them per posting).
    pub(super) fn lens(&self) -> &[f64] {
        self.lens.get_or_init(|| {
            (0..self.n_docs())
                .map(|i| f64::from_le_bytes(self.dense(self.t.lens, 1, i)))
                .collect()
        })
    }

    /// Every document's parent number, by number (parents are numbered in key order).
    pub(super) fn parents(&self) -> &[u32] {
        self.parents.get_or_init(|| {
            (0..self.n_docs())
                .map(|i| u32::from_le_bytes(self.dense(self.t.parents, 2, i)))
                .collect()
        })
    }

    /// The bytes of the documents' lengths (8 each, little-endian `f64`) and of their parent
    /// numbers (4 each, `u32`), where the file maps them, checked whole: what a search that
    /// reads them in order reads without decoding them into memory of its own. Empty (and the
    /// index marked damaged) when they are not what was written.
    pub(super) fn len_and_parent_columns(&self) -> (&[u8], &[u8]) {
        (
            self.column::<8>(self.t.lens, 1),
            self.column::<4>(self.t.parents, 2),
        )
    }

    /// The documents' parent numbers (4 bytes each), as [`Base::len_and_parent_columns`]
    /// gives them.
    pub(super) fn parent_column(&self) -> &[u8] {
        self.column::<4>(self.t.parents, 2)
    }

    /// A table of `N`-byte items read in bulk (the one numbered `which`, as [`Base::dense`]
    /// numbers them), checked whole the first time.
    fn column<const N: usize>(&self, t: Table, which: u32) -> &[u8] {
        let bit = 1u64 << which;
        if self.dense_checked.load(Ordering::Relaxed) & bit == 0 {
            if !self.check(t.at, t.n * N) {
                return &[];
            }
            self.dense_checked.fetch_or(bit, Ordering::Relaxed);
        }
        match self
            .bytes
            .as_deref()
            .and_then(|b| b.get(t.at..t.at + N * t.n))
        {
            Some(b) => b,
            None => {
                self.fail();
                &[]
            }
        }
    }

    /// The length of document `i`, read alone (what a search that reads few documents
    /// asks, without decoding the whole table).
    #[inline]
    pub(super) fn len_at(&self, i: usize) -> f64 {
        match self.lens.get() {
            Some(l) => l.get(i).copied().unwrap_or_else(|| {
                self.fail();
                0.0
            }),
            None => self.f64_at(self.t.lens, i),
        }
    }

    /// The parent number of document `i`, read alone (see [`Base::len_at`]).
    #[inline]
    pub(super) fn parent_at(&self, i: usize) -> u32 {
        match self.parents.get() {
            Some(p) => p.get(i).copied().unwrap_or_else(|| {
                self.fail();
                0
            }),
            None => self.u32_at(self.t.parents, i),
        }
    }

    /// (year, month 1-12) of document `i`'s timestamp, `None` when it is unknown.
    pub(super) fn date(&self, i: usize) -> Option<(i64, u32)> {
        let b: [u8; 9] = self.item(self.t.dates, i);
        let month = b[8] as u32;
        let mut y = [0u8; 8];
        y.copy_from_slice(&b[..8]);
        (month != 0).then(|| (i64::from_le_bytes(y), month))
    }

    /// The date of document `i`, read alone: `(0, 0)` when unknown.
    fn date_at(&self, i: usize) -> (i64, u8) {
        let b: [u8; 9] = self.item(self.t.dates, i);
        let mut y = [0u8; 8];
        y.copy_from_slice(&b[..8]);
        (i64::from_le_bytes(y), b[8])
    }

    /// The documents (removed ones too) dated in `year` (any year when `None`) and in
    /// `months` (a range of 1-12): ranges of the date-ordered table, checked, one per month
    /// (each in ascending number; empty ones left out).
    pub(super) fn dated_in(
        &self,
        year: Option<i64>,
        months: std::ops::RangeInclusive<u8>,
    ) -> Vec<&[u8]> {
        let n = self.t.date_order.n;
        let key = |i: usize| self.date_at(self.u32_at(self.t.date_order, i) as usize);
        let first_at = |k: (i64, u8)| first_not_below(n, |i| key(i) < k);
        let mut out = Vec::new();
        let (lo_m, hi_m) = (*months.start(), *months.end());
        let mut take = |y: i64| {
            let mut lo = first_at((y, lo_m)).min(n);
            for m in lo_m..=hi_m {
                let hi = first_at((y, m.saturating_add(1))).clamp(lo, n);
                if hi > lo {
                    // Read and checked at once (empty, the index marked damaged, when it is
                    // not what was written).
                    out.push(self.bytes_at(self.t.date_order.at + 4 * lo, 4 * (hi - lo)));
                }
                lo = hi;
            }
        };
        match year {
            Some(y) => take(y),
            None => {
                // Every year some document is dated in (unknown dates, (0, 0), come first).
                let mut at = first_at((0, 1));
                while at < n {
                    let y = key(at).0;
                    take(y);
                    if y == i64::MAX {
                        break;
                    }
                    at = first_at((y + 1, 0));
                }
            }
        }
        out
    }

    /// The encoded key of parent `p` (what precedes its children's last path segment).
    pub(super) fn parent_key(&self, p: usize) -> &[u8] {
        self.piece(self.t.pkey_off, self.t.pkey_text, p)
    }

    /// The length of parent `p`'s document: the sum of its documents' lengths, in key order.
    pub(super) fn parent_len(&self, p: usize) -> f64 {
        self.f64_at(self.t.parent_len, p)
    }

    /// The number of documents under parent `p`.
    pub(super) fn parent_docs(&self, p: usize) -> u32 {
        self.u32_at(self.t.parent_docs, p)
    }

    /// Term `i`'s frequencies under each parent that holds it, as stored (for terms held by
    /// [`super::codec::PARENT_SUMS_FROM`] documents or more): `(parent, key-path sum,
    /// content sum)` by ascending parent. `None` when none are stored (or the table is
    /// damaged, which marks the index so).
    pub(super) fn parent_sums(
        &self,
        i: usize,
    ) -> Option<impl Iterator<Item = (u32, u32, u32)> + '_> {
        Some(
            self.parent_rows(i)?
                .map(|(p, r)| (p, r.key_sum, r.content_sum)),
        )
    }

    /// [`Base::parent_sums`] with the rest of each entry: the documents under the parent
    /// that hold the term and their largest and smallest frequencies.
    pub(super) fn parent_rows(
        &self,
        i: usize,
    ) -> Option<impl Iterator<Item = (u32, ParentRow)> + '_> {
        if self.t.psum_off.n == 0 {
            return None;
        }
        let (s, e) = (
            self.u32_at(self.t.psum_off, i) as usize,
            self.u32_at(self.t.psum_off, i + 1) as usize,
        );
        if s > e || e > self.t.psums.n {
            self.fail();
            return None;
        }
        if s == e {
            return None;
        }
        let g = self.n_parents() as u32;
        let bytes = self.bytes_at(self.t.psums.at + PARENT_ROW * s, PARENT_ROW * (e - s));
        if bytes.is_empty() {
            return None;
        }
        Some(bytes.chunks_exact(PARENT_ROW).map(move |c| {
            let at = |k: usize| u32::from_le_bytes([c[k], c[k + 1], c[k + 2], c[k + 3]]);
            let short = |k: usize| u16::from_le_bytes([c[k], c[k + 1]]);
            let parent = at(0);
            if parent >= g {
                self.fail();
                return (0, ParentRow::default());
            }
            let row = ParentRow {
                key_sum: at(4),
                content_sum: at(8),
                docs: at(12),
                key_most: short(16),
                content_most: short(18),
                key_least: short(20),
                content_least: short(22),
            };
            (parent, row)
        }))
    }

    pub(super) fn find_parent(&self, key: &[u8]) -> Option<u32> {
        let n = self.n_parents();
        let i = first_not_below(n, |i| self.parent_key(i) < key);
        (i < n && self.parent_key(i) == key).then_some(i as u32)
    }

    /// First term index whose name is above `name` (`or_equal`: at or above).
    pub(super) fn term_bound(&self, name: &str, or_equal: bool) -> usize {
        first_not_below(self.n_terms(), |i| {
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
        first_not_below(self.n_docs(), |i| {
            let k = self.key(i);
            k < key || (!or_equal && k == key)
        })
    }

    pub(super) fn find_key(&self, key: &[u8]) -> Option<usize> {
        let i = self.key_bound(key, true);
        (i < self.n_docs() && self.key(i) == key).then_some(i)
    }
}

/// `bytes` copied into an anonymous read-only map.
pub(super) fn copied_map(bytes: &[u8]) -> std::io::Result<Bytes> {
    let mut m = memmap2::MmapMut::map_anon(bytes.len())?;
    m[..bytes.len()].copy_from_slice(bytes);
    let m = m.make_read_only()?;
    Ok(m)
}
