//! The lexical index: BM25F over key segments and record content, with prefix and
//! near-miss matching. It is derived data: it names the tree root it reflects, is brought up
//! to date from the tree diff between that root and the one asked for, and can always be
//! rebuilt from the tree.

use std::collections::{btree_map, BTreeMap, HashMap};
use std::iter::Peekable;
use std::ops::Bound;
use std::sync::OnceLock;

use xxhash_rust::xxh3::xxh3_128;

use super::tokenize::Tokenizer;
pub use crate::calendar::MONTHS;

use crate::calendar::year_month;
use crate::glob::KeyGlobs;
use crate::key;
use crate::object::ObjectId;
use crate::prolly::{KeyRange, NodeStore};

use super::{RecallError, RecallResult};

/// Ranking parameters. The defaults are the documented behaviour; other values exist for
/// measuring the method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// BM25 term-frequency saturation.
    pub k1: f64,
    /// BM25 length normalisation.
    pub b: f64,
    /// Weight of a term occurrence in the key path relative to one in the content.
    pub key_weight: f64,
    /// Weight of a term reached by prefix (the query term starts a longer indexed term).
    pub prefix_weight: f64,
    /// Weight of a term reached by a near miss (one or two edits).
    pub fuzzy_weight: f64,
    /// Share of each adjacent sibling key's own score a key receives (neighbouring memories
    /// under one parent, such as consecutive turns, give each other context).
    pub neighbour_weight: f64,
    /// Share of the best own score under the same parent a key receives.
    pub group_weight: f64,
    /// Weight of the window score: the BM25 score of a key's record together with up to
    /// [`Params::window`] siblings on each side, read as one passage, between one record and
    /// its whole parent: the question and the answer of an exchange usually sit in adjacent
    /// records and share the query's words between them.
    pub window_weight: f64,
    /// Siblings on each side of a record in its window.
    pub window: usize,
    /// Weight of the parent's score: the BM25 score of all records under a key's parent
    /// read as one document (a session of turns, a topic of facts). Words of the query spread
    /// over several siblings raise every sibling.
    pub parent_weight: f64,
    /// Pseudo-relevance feedback: the best `feedback_docs` records of the query's scope (after
    /// its filters) give the `feedback_terms` content terms most typical of them (frequency in
    /// each record relative to its length, times the record's share of their scores, times
    /// IDF), which are added to the parents' scores with a weight up to `feedback_weight` of
    /// a query word's. Parents that talk about what the best hits talk about rise, even when
    /// they share few words with the query; records themselves are scored by the query's
    /// words only, so feedback never adds a hit. Zero documents turn it off.
    pub feedback_docs: usize,
    /// Most expansion terms pseudo-relevance feedback adds.
    pub feedback_terms: usize,
    /// Weight of the best expansion term relative to a query word (the others in proportion).
    pub feedback_weight: f64,
    /// Term frequency a record gets for a query word naming the month or the year of its
    /// timestamp (its date read as a field of the record: "June", "2023"). Zero turns the
    /// date field off.
    pub date_weight: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            k1: 0.9,
            b: 0.6,
            key_weight: 2.0,
            prefix_weight: 0.8,
            fuzzy_weight: 0.6,
            neighbour_weight: 0.2,
            group_weight: 0.2,
            window_weight: 1.0,
            window: 2,
            parent_weight: 1.5,
            feedback_docs: 10,
            feedback_terms: 10,
            feedback_weight: 0.3,
            date_weight: 1.0,
        }
    }
}
/// Shortest query term that matches by prefix.
pub const PREFIX_MIN_CHARS: usize = 4;
/// Shortest query term that matches by near miss (one edit; two edits from 8 characters).
pub const FUZZY_MIN_CHARS: usize = 5;
/// Most indexed terms one query term expands to.
const MAX_EXPANSIONS: usize = 64;

/// A document as the index sees it: one key and its record.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    /// Namespace of the key.
    pub namespace: String,
    /// Dotted path of the key.
    pub path: String,
    /// The record's projected content.
    pub content: String,
    /// The record's timestamp (unix seconds).
    pub timestamp: f64,
}

#[derive(Debug, Clone)]
struct Entry {
    key: Vec<u8>,
    value: ObjectId,
    namespace: String,
    path: String,
    content: String,
    timestamp: f64,
    len: f64,
    /// Distinct terms with (key tf, content tf).
    terms: Vec<(u32, u16, u16)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Posting {
    doc: u32,
    key_tf: u16,
    content_tf: u16,
}

/// How hits are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sort {
    /// Highest score first, ties by key.
    #[default]
    Relevance,
    /// Newest record first, ties by score then key.
    Recency,
}

/// A search request.
#[derive(Debug, Clone, Default)]
pub struct Query<'a> {
    /// The words looked for.
    pub text: &'a str,
    /// Only this namespace.
    pub namespace: Option<&'a str>,
    /// Only paths matching these globs.
    pub globs: Option<&'a KeyGlobs>,
    /// Only records at or after this time.
    pub since: Option<f64>,
    /// Only records at or before this time.
    pub until: Option<f64>,
    /// Most hits returned.
    pub limit: usize,
    /// Order of the hits.
    pub sort: Sort,
}

/// One ranked hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Encoded key.
    pub key: Vec<u8>,
    /// Namespace.
    pub namespace: String,
    /// Dotted path.
    pub path: String,
    /// The record's value id.
    pub value: ObjectId,
    /// The record's projected content, as indexed (what search shows without reading the
    /// record).
    pub content: String,
    /// Score: higher is better; always above zero.
    pub score: f64,
    /// The record's timestamp.
    pub timestamp: f64,
}

/// One indexed document as [`LexicalIndex::docs_in`] lists it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexedDoc<'a> {
    /// Encoded key.
    pub key: &'a [u8],
    /// Namespace.
    pub namespace: &'a str,
    /// Dotted path.
    pub path: &'a str,
    /// The record's value id.
    pub value: ObjectId,
    /// The record's projected content.
    pub content: &'a str,
}

/// The frozen part of an index, as a cache file holds it: documents sorted by key (a
/// document's number is its rank), terms sorted, each term's postings ready to use. Loading
/// it is a few bulk copies and checks, with no per-document or per-term allocation.
#[derive(Default)]
struct Base {
    /// Checksum of the cache file it was read from (what a delta file names).
    sum: Option<u128>,
    term_off: Vec<u32>,
    term_text: String,
    post_off: Vec<u32>,
    postings: Vec<Posting>,
    key_off: Vec<u32>,
    keys: Vec<u8>,
    ns_off: Vec<u32>,
    ns_text: String,
    path_off: Vec<u32>,
    path_text: String,
    content_off: Vec<u32>,
    content_text: String,
    values: Vec<ObjectId>,
    timestamps: Vec<f64>,
    lens: Vec<f64>,
}

/// The `i`th range of an offset table (`off[i]..off[i + 1]`); the table is checked on load.
fn span(off: &[u32], i: usize) -> std::ops::Range<usize> {
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
    fn n_docs(&self) -> usize {
        self.values.len()
    }

    fn n_terms(&self) -> usize {
        self.term_off.len().saturating_sub(1)
    }

    fn term(&self, i: usize) -> &str {
        &self.term_text[span(&self.term_off, i)]
    }

    fn term_postings(&self, i: usize) -> &[Posting] {
        &self.postings[span(&self.post_off, i)]
    }

    fn key(&self, i: usize) -> &[u8] {
        &self.keys[span(&self.key_off, i)]
    }

    /// First term index whose name is above `name` (`or_equal`: at or above).
    fn term_bound(&self, name: &str, or_equal: bool) -> usize {
        bound(self.n_terms(), |i| {
            let t = self.term(i);
            t < name || (!or_equal && t == name)
        })
    }

    fn find_term(&self, name: &str) -> Option<u32> {
        let i = self.term_bound(name, true);
        (i < self.n_terms() && self.term(i) == name).then_some(i as u32)
    }

    /// First document whose key is above `key` (`or_equal`: at or above).
    fn key_bound(&self, key: &[u8], or_equal: bool) -> usize {
        bound(self.n_docs(), |i| {
            let k = self.key(i);
            k < key || (!or_equal && k == key)
        })
    }

    fn find_key(&self, key: &[u8]) -> Option<usize> {
        let i = self.key_bound(key, true);
        (i < self.n_docs() && self.key(i) == key).then_some(i)
    }
}

/// A document as search sees it, from either part of the index.
struct DocRef<'a> {
    key: &'a [u8],
    namespace: &'a str,
    path: &'a str,
    content: &'a str,
    value: ObjectId,
    timestamp: f64,
    len: f64,
}

/// One indexed term: its number in the frozen part and in the overlay (at least one).
#[derive(Debug, Clone, Copy)]
struct TermRef {
    base: Option<u32>,
    over: Option<u32>,
}

/// The terms of both parts, merged in name order.
struct Terms<'a> {
    base: &'a Base,
    at: usize,
    over: Peekable<btree_map::Range<'a, String, u32>>,
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

/// A BM25F index of the keys of one tree root.
///
/// Two parts: a frozen part as loaded from the cache file ([`LexicalIndex::from_bytes`]),
/// whose documents can only be marked removed, and an overlay of documents inserted since.
/// Searching sees their union; a key is live in at most one of them. Document numbers below
/// the frozen part's size are its documents, the others are overlay slots after it.
#[derive(Default)]
pub struct LexicalIndex {
    root: Option<ObjectId>,
    base: Base,
    /// Per frozen document: removed since loading.
    dead: Vec<bool>,
    base_live: usize,
    docs: Vec<Option<Entry>>,
    free: Vec<u32>,
    by_key: BTreeMap<Vec<u8>, u32>,
    vocab: BTreeMap<String, u32>,
    term_names: Vec<String>,
    postings: Vec<Vec<Posting>>,
    total_len: f64,
    tokenizer: Tokenizer,
    /// Lengths of the parents' documents, computed on first use after a change.
    parents: OnceLock<ParentStats>,
    /// Ranking parameters.
    pub params: Params,
}

/// The parents' documents: per document number its parent's number, per parent the length
/// of its document, their mean; and per document number, the date of its timestamp.
#[derive(Default)]
struct ParentStats {
    /// Parent number of each document (`u32::MAX` for a removed one).
    parent: Vec<u32>,
    /// Length of each parent's document (the sum of its children's lengths).
    len: Vec<f64>,
    mean: f64,
    /// (year, month 1-12) of each document's timestamp; `None` for a removed document or a
    /// timestamp that is not after the epoch (unknown).
    dates: Vec<Option<(i64, u32)>>,
}

/// Years a four-digit query word can name.
const YEARS: std::ops::RangeInclusive<i64> = 1000..=9999;

/// What a query term says about dates: the month it names, or the year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DateTerm {
    Month(u32),
    Year(i64),
}

impl DateTerm {
    fn matches(self, (year, month): (i64, u32)) -> bool {
        match self {
            DateTerm::Month(m) => m == month,
            DateTerm::Year(y) => y == year,
        }
    }
}

/// The parent of an encoded key: everything before its last path segment (its namespace for
/// a one-segment path).
fn parent_of(k: &[u8]) -> &[u8] {
    let cut = k.iter().rposition(|&b| b == 0x01 || b == 0x00).unwrap_or(0);
    &k[..cut]
}

/// The BM25 weight of a term occurring `tf` times in a document `len` long, where documents
/// are `avg` long on average.
fn bm25(idf: f64, tf: f64, len: f64, avg: f64, p: &Params) -> f64 {
    let norm = p.k1 * (1.0 - p.b + p.b * len / avg);
    idf * tf * (p.k1 + 1.0) / (tf + norm)
}

/// Inverse document frequency of a term found in `df` of `n` documents.
fn idf(n: f64, df: f64) -> f64 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// Scores by document number, with the list of documents that have one.
struct Scores {
    value: Vec<f64>,
    has: Vec<bool>,
    scored: Vec<u32>,
}

impl Scores {
    fn new(docs: usize) -> Self {
        Scores {
            value: vec![0.0; docs],
            has: vec![false; docs],
            scored: Vec::new(),
        }
    }

    fn mark(&mut self, d: u32) {
        if !self.has[d as usize] {
            self.has[d as usize] = true;
            self.scored.push(d);
        }
    }

    /// Keeps the larger of the document's score and `s` (a new document starts at zero).
    fn max(&mut self, d: u32, s: f64) {
        self.mark(d);
        let v = &mut self.value[d as usize];
        if s > *v {
            *v = s;
        }
    }

    fn set(&mut self, d: u32, s: f64) {
        self.mark(d);
        self.value[d as usize] = s;
    }

    /// Adds every score to `into`'s and empties this one.
    fn drain_into(&mut self, into: &mut Scores) {
        for d in self.scored.drain(..) {
            let i = d as usize;
            into.mark(d);
            into.value[i] += self.value[i];
            self.value[i] = 0.0;
            self.has[i] = false;
        }
    }
}

/// Weighted query-term frequencies under each parent (or in each document) touched: one row
/// of `terms` values per parent, allocated on first touch.
struct TermRows {
    terms: usize,
    /// Row of each parent (`u32::MAX`: not touched).
    row_of: Vec<u32>,
    rows: Vec<f64>,
    /// Parents touched, in order of first touch.
    touched: Vec<u32>,
}

impl TermRows {
    fn new(parents: usize, terms: usize) -> Self {
        TermRows {
            terms,
            row_of: vec![u32::MAX; parents],
            rows: Vec::new(),
            touched: Vec::new(),
        }
    }

    fn add(&mut self, parent: u32, term: usize, f: f64) {
        let p = parent as usize;
        if self.row_of[p] == u32::MAX {
            self.row_of[p] = self.touched.len() as u32;
            self.touched.push(parent);
            self.rows.resize(self.rows.len() + self.terms, 0.0);
        }
        self.rows[self.row_of[p] as usize * self.terms + term] += f;
    }

    fn row(&self, parent: u32) -> &[f64] {
        let r = self.row_of[parent as usize] as usize * self.terms;
        &self.rows[r..r + self.terms]
    }

    fn has(&self, parent: u32) -> bool {
        self.row_of[parent as usize] != u32::MAX
    }
}

impl LexicalIndex {
    /// An empty index that reflects no root.
    pub fn new() -> Self {
        Self::default()
    }

    /// The tree root the index reflects.
    pub fn root(&self) -> Option<&ObjectId> {
        self.root.as_ref()
    }

    /// Number of indexed keys.
    pub fn len(&self) -> usize {
        self.base_live + self.by_key.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Changes held outside the frozen part: frozen documents removed plus overlay
    /// documents. A delta cache file records exactly these.
    pub fn pending_changes(&self) -> usize {
        (self.base.n_docs() - self.base_live) + self.by_key.len()
    }

    /// Whether the cache should be rewritten whole rather than as a delta: the index has no
    /// frozen part loaded from a cache file, or the changes since it exceed
    /// max(64, 1/32 of its documents).
    pub fn should_compact(&self) -> bool {
        self.base.sum.is_none() || self.pending_changes() > (self.base.n_docs() / 32).max(64)
    }

    fn term_id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.vocab.get(term) {
            return id;
        }
        let id = self.term_names.len() as u32;
        self.vocab.insert(term.to_string(), id);
        self.term_names.push(term.to_string());
        self.postings.push(Vec::new());
        id
    }

    /// Whether `key` is indexed.
    fn contains_key(&self, key: &[u8]) -> bool {
        self.by_key.contains_key(key) || self.base.find_key(key).is_some_and(|i| !self.dead[i])
    }

    /// Adds (or replaces) one key.
    pub fn insert(&mut self, key: &[u8], value: ObjectId, doc: &Doc) {
        self.remove(key);
        let mut counts: HashMap<u32, (u16, u16)> = HashMap::new();
        let key_terms = self.tokenizer.terms(&doc.path);
        let content_terms = self.tokenizer.terms(&doc.content);
        let len = self.params.key_weight * key_terms.len() as f64 + content_terms.len() as f64;
        for t in &key_terms {
            let id = self.term_id(t);
            let c = counts.entry(id).or_default();
            c.0 = c.0.saturating_add(1);
        }
        for t in &content_terms {
            let id = self.term_id(t);
            let c = counts.entry(id).or_default();
            c.1 = c.1.saturating_add(1);
        }
        let mut terms: Vec<(u32, u16, u16)> =
            counts.into_iter().map(|(t, (k, c))| (t, k, c)).collect();
        terms.sort_unstable_by_key(|t| t.0);
        self.attach(Entry {
            key: key.to_vec(),
            value,
            namespace: doc.namespace.clone(),
            path: doc.path.clone(),
            content: doc.content.clone(),
            timestamp: doc.timestamp,
            len,
            terms,
        });
    }

    /// Stores an entry whose key is not indexed yet in a free overlay slot: its postings,
    /// its length and its key. Returns false (and stores nothing) when the key is already
    /// indexed.
    fn attach(&mut self, e: Entry) -> bool {
        if self.contains_key(&e.key) {
            return false;
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.docs.push(None);
                (self.docs.len() - 1) as u32
            }
        };
        let doc = (self.base.n_docs() + slot as usize) as u32;
        for &(t, key_tf, content_tf) in &e.terms {
            self.postings[t as usize].push(Posting {
                doc,
                key_tf,
                content_tf,
            });
        }
        self.total_len += e.len;
        self.parents.take();
        self.by_key.insert(e.key.clone(), slot);
        self.docs[slot as usize] = Some(e);
        true
    }

    /// Removes one key (a no-op when absent).
    pub fn remove(&mut self, key: &[u8]) {
        if let Some(slot) = self.by_key.remove(key) {
            let doc = (self.base.n_docs() + slot as usize) as u32;
            if let Some(e) = self.docs[slot as usize].take() {
                for &(t, _, _) in &e.terms {
                    self.postings[t as usize].retain(|p| p.doc != doc);
                }
                self.total_len -= e.len;
                self.parents.take();
            }
            self.free.push(slot);
        } else if let Some(i) = self.base.find_key(key) {
            if !self.dead[i] {
                self.dead[i] = true;
                self.base_live -= 1;
                self.total_len -= self.base.lens[i];
                self.parents.take();
            }
        }
    }

    /// Brings the index to `root`: from the tree diff when it reflects another root, by a
    /// full scan otherwise. `load` reads the document of a key's value. On any error the
    /// index is left empty (reflecting no root), never half updated.
    pub fn sync(
        &mut self,
        tree: &NodeStore,
        root: &ObjectId,
        load: &mut dyn FnMut(&[u8], &ObjectId) -> RecallResult<Doc>,
    ) -> RecallResult<SyncStats> {
        if self.root.as_ref() == Some(root) {
            return Ok(SyncStats::default());
        }
        let result = self.sync_inner(tree, root, load);
        match result {
            Ok(stats) => {
                self.root = Some(*root);
                Ok(stats)
            }
            Err(e) => {
                *self = LexicalIndex {
                    params: self.params,
                    ..LexicalIndex::new()
                };
                Err(e)
            }
        }
    }

    fn sync_inner(
        &mut self,
        tree: &NodeStore,
        root: &ObjectId,
        load: &mut dyn FnMut(&[u8], &ObjectId) -> RecallResult<Doc>,
    ) -> RecallResult<SyncStats> {
        let mut stats = SyncStats::default();
        if let Some(old) = self.root {
            let mut changes = Vec::new();
            tree.diff(&old, root, &mut |c| {
                changes.push(c);
                true
            })?;
            for c in changes {
                match c.new {
                    Some(v) => {
                        let doc = load(&c.key, &v)?;
                        self.insert(&c.key, v, &doc);
                        stats.inserted += 1;
                    }
                    None => {
                        self.remove(&c.key);
                        stats.removed += 1;
                    }
                }
            }
            return Ok(stats);
        }
        *self = LexicalIndex {
            params: self.params,
            ..LexicalIndex::new()
        };
        let mut entries = Vec::new();
        tree.scan(root, &crate::prolly::KeyRange::all(), &mut |k, v| {
            entries.push((k.to_vec(), *v));
            true
        })?;
        for (k, v) in entries {
            let doc = load(&k, &v)?;
            self.insert(&k, v, &doc);
            stats.inserted += 1;
        }
        stats.rebuilt = true;
        Ok(stats)
    }

    /// The length of the live document numbered `d`, if any (what scoring needs, without
    /// slicing its texts).
    fn live_len(&self, d: u32) -> Option<f64> {
        let d = d as usize;
        let n = self.base.n_docs();
        if d < n {
            return (!self.dead[d]).then(|| self.base.lens[d]);
        }
        Some(self.docs.get(d - n)?.as_ref()?.len)
    }

    /// The key of the live document numbered `d` (empty for a removed overlay document).
    fn key_of(&self, d: u32) -> &[u8] {
        let (d, n) = (d as usize, self.base.n_docs());
        if d < n {
            return self.base.key(d);
        }
        self.docs
            .get(d - n)
            .and_then(Option::as_ref)
            .map_or(&[], |e| &e.key)
    }

    /// The namespace of the live document numbered `d` (empty for a removed overlay
    /// document).
    fn namespace_of(&self, d: u32) -> &str {
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
    fn timestamp_of(&self, d: u32) -> f64 {
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
    fn passes(&self, d: u32, q: &Query<'_>) -> bool {
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
    fn doc(&self, d: u32) -> Option<DocRef<'_>> {
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

    /// The terms of both parts in name order, all of them or those after `after`.
    fn terms_after(&self, after: Option<&str>) -> Terms<'_> {
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

    fn lookup(&self, term: &str) -> Option<TermRef> {
        let r = TermRef {
            base: self.base.find_term(term),
            over: self.vocab.get(term).copied(),
        };
        (r.base.is_some() || r.over.is_some()).then_some(r)
    }

    fn base_postings(&self, t: TermRef) -> &[Posting] {
        t.base.map_or(&[], |i| self.base.term_postings(i as usize))
    }

    fn over_postings(&self, t: TermRef) -> &[Posting] {
        t.over.map_or(&[], |i| &self.postings[i as usize])
    }

    /// Whether some live document holds the term.
    fn live(&self, t: TermRef) -> bool {
        !self.over_postings(t).is_empty()
            || self
                .base_postings(t)
                .iter()
                .any(|p| !self.dead[p.doc as usize])
    }

    /// Number of live documents holding the term.
    fn df(&self, t: TermRef) -> usize {
        let base = self.base_postings(t);
        let live_base = if self.base_live == self.base.n_docs() {
            base.len()
        } else {
            base.iter().filter(|p| !self.dead[p.doc as usize]).count()
        };
        live_base + self.over_postings(t).len()
    }

    /// The live postings of a term: the frozen part's (removed documents skipped), then the
    /// overlay's.
    fn each_posting(&self, t: TermRef, f: &mut dyn FnMut(&Posting)) {
        for p in self.base_postings(t) {
            if !self.dead[p.doc as usize] {
                f(p);
            }
        }
        for p in self.over_postings(t) {
            f(p);
        }
    }

    /// Indexed terms that `term` reaches, with their weights: itself, longer terms it
    /// starts (from [`PREFIX_MIN_CHARS`]), and when it is not indexed itself, terms within one
    /// edit (two from 8 characters; from [`FUZZY_MIN_CHARS`], same first letter).
    fn expand(&self, term: &str) -> Vec<(TermRef, f64)> {
        let mut out = Vec::new();
        let exact = self.lookup(term).filter(|t| self.live(*t));
        if let Some(t) = exact {
            out.push((t, 1.0));
        }
        let chars = term.chars().count();
        if chars >= PREFIX_MIN_CHARS {
            for (_, t) in self
                .terms_after(Some(term))
                .take_while(|(name, _)| name.starts_with(term))
                .filter(|(_, t)| self.live(*t))
                .take(MAX_EXPANSIONS)
            {
                out.push((t, self.params.prefix_weight));
            }
        }
        if exact.is_none() && chars >= FUZZY_MIN_CHARS {
            let max = if chars >= 8 { 2 } else { 1 };
            let first = term.chars().next();
            let mut n = 0;
            for (name, t) in self.terms_after(None) {
                if n >= MAX_EXPANSIONS {
                    break;
                }
                let tc = name.chars().count();
                if tc.abs_diff(chars) > max
                    || name.chars().next() != first
                    || name.starts_with(term)
                    || !self.live(t)
                {
                    continue;
                }
                if strsim::osa_distance(term, name) <= max {
                    out.push((t, self.params.fuzzy_weight));
                    n += 1;
                }
            }
        }
        out
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

    /// Ranked hits for `q`; an empty result when nothing matches (never invented hits).
    pub fn search(&self, q: &Query<'_>) -> Vec<Hit> {
        let live = self.len() as f64;
        if live == 0.0 || q.limit == 0 {
            return Vec::new();
        }
        let avg = (self.total_len / live).max(1.0);
        let pr = self.params;
        let mut terms = self.tokenizer.terms(q.text);
        terms.sort();
        terms.dedup();
        let stats = self.stats();
        let docs = stats.parent.len();
        // Own scores by document number; `scored` lists the documents that have one, in the
        // order they got it (sums below run in a fixed order, so scores do not depend on it).
        let mut scores = Scores::new(docs);
        // Per parent touched, the weighted frequency of each query term under it.
        let mut parent_tf = TermRows::new(stats.len.len(), terms.len());
        // Per record of the query's namespace that holds a query term, the weighted
        // frequency of each (for the windows).
        let windows = pr.window_weight > 0.0;
        let mut doc_tf = TermRows::new(if windows { docs } else { 0 }, terms.len());
        // The indexed terms the query reached, and per query term the records it matches.
        let mut reached = Vec::new();
        let mut matching = Vec::with_capacity(terms.len());
        let mut best = Scores::new(docs);
        for (ti, term) in terms.iter().enumerate() {
            let mut add = |d: u32, s: f64, tf: f64| {
                best.max(d, s);
                if pr.parent_weight > 0.0 {
                    parent_tf.add(stats.parent[d as usize], ti, tf);
                }
                if windows && q.namespace.is_none_or(|ns| self.namespace_of(d) == ns) {
                    doc_tf.add(d, ti, tf);
                }
            };
            for (tid, weight) in self.expand(term) {
                let df = self.df(tid);
                if df == 0 {
                    continue;
                }
                reached.push(tid);
                let idf = idf(live, df as f64);
                self.each_posting(tid, &mut |p| {
                    let Some(len) = self.live_len(p.doc) else {
                        return;
                    };
                    let tf = pr.key_weight * p.key_tf as f64 + p.content_tf as f64;
                    add(p.doc, weight * bm25(idf, tf, len, avg, &pr), weight * tf);
                });
            }
            // The date field: a term naming a month or a year matches the records dated
            // then, as one more occurrence of the term in their content.
            if let Some(dt) = (pr.date_weight > 0.0)
                .then(|| self.date_term(term))
                .flatten()
            {
                let dated = self.dated(dt);
                if !dated.is_empty() {
                    let idf = idf(live, dated.len() as f64);
                    let tf = pr.date_weight;
                    for d in dated {
                        let Some(len) = self.live_len(d) else {
                            continue;
                        };
                        add(d, bm25(idf, tf, len, avg, &pr), tf);
                    }
                }
            }
            matching.push(best.scored.len() as f64);
            best.drain_into(&mut scores);
        }
        let window = if windows {
            self.window_scores(&doc_tf, &matching, avg, stats, q)
        } else {
            Vec::new()
        };
        if pr.neighbour_weight > 0.0 || pr.group_weight > 0.0 {
            scores = self.with_context(&scores, stats, pr);
        }
        for (d, w) in window {
            if scores.has[d as usize] {
                scores.value[d as usize] += pr.window_weight * w;
            }
        }
        if pr.parent_weight > 0.0 && !parent_tf.touched.is_empty() {
            let mut by_parent = self.parent_scores(&parent_tf, &vec![1.0; terms.len()], stats);
            if pr.feedback_docs > 0 && pr.feedback_terms > 0 && pr.feedback_weight > 0.0 {
                // Feedback ranks on the scores so far: a record's own, context and parent.
                let first = |d: u32| {
                    scores.value[d as usize]
                        + pr.parent_weight * by_parent[stats.parent[d as usize] as usize]
                };
                let expansion = self.feedback_terms(&scores.scored, first, &reached, q);
                if !expansion.is_empty() {
                    let mut tf = TermRows::new(stats.len.len(), expansion.len());
                    for (i, &(t, _)) in expansion.iter().enumerate() {
                        self.each_posting(t, &mut |p| {
                            if self.live_len(p.doc).is_some() {
                                tf.add(
                                    stats.parent[p.doc as usize],
                                    i,
                                    pr.key_weight * p.key_tf as f64 + p.content_tf as f64,
                                );
                            }
                        });
                    }
                    let weights: Vec<f64> = expansion.iter().map(|e| e.1).collect();
                    let more = self.parent_scores(&tf, &weights, stats);
                    for &p in &parent_tf.touched {
                        by_parent[p as usize] += more[p as usize];
                    }
                }
            }
            for &d in &scores.scored {
                let p = stats.parent[d as usize];
                scores.value[d as usize] += pr.parent_weight * by_parent[p as usize];
            }
        }
        self.top_hits(&scores, q)
    }

    /// BM25 scores of the windows of the records in `tf` that pass `q`'s filters (`tf`: the
    /// weighted frequencies of the query terms in each record of the query's namespace that
    /// holds one; `df`: the number of records each term matches): each record with up to
    /// [`Params::window`] live siblings on each side, read as one document.
    fn window_scores(
        &self,
        tf: &TermRows,
        df: &[f64],
        avg: f64,
        stats: &ParentStats,
        q: &Query<'_>,
    ) -> Vec<(u32, f64)> {
        let pr = self.params;
        let live = self.len() as f64;
        let idfs: Vec<f64> = df.iter().map(|d| idf(live, *d)).collect();
        let mean = avg * (2 * pr.window + 1) as f64;
        let mut out = Vec::with_capacity(tf.touched.len());
        let mut sum = vec![0.0; df.len()];
        for &d in &tf.touched {
            let Some(mut len) = self.live_len(d).filter(|_| self.passes(d, q)) else {
                continue;
            };
            let p = stats.parent[d as usize];
            sum.copy_from_slice(tf.row(d));
            for after in [false, true] {
                let (mut k, mut n) = (self.key_of(d), d);
                for _ in 0..pr.window {
                    let Some((k2, n2)) = self.neighbour(n, k, after) else {
                        break;
                    };
                    if stats.parent[n2 as usize] != p {
                        break;
                    }
                    let Some(l2) = self.live_len(n2) else { break };
                    len += l2;
                    if tf.has(n2) {
                        for (a, b) in sum.iter_mut().zip(tf.row(n2)) {
                            *a += b;
                        }
                    }
                    (k, n) = (k2, n2);
                }
            }
            let s: f64 = sum
                .iter()
                .zip(&idfs)
                .filter(|(f, _)| **f > 0.0)
                .map(|(f, i)| bm25(*i, *f, len, mean, &pr))
                .sum();
            out.push((d, s));
        }
        out
    }

    /// Pseudo-relevance feedback: the expansion terms, with their weights, of the best
    /// [`Params::feedback_docs`] of the `scored` records in `q`'s scope by `score`; never a
    /// term the query reached itself (`reached`) or one that only one record holds. A
    /// record's terms are read from its content, which the index holds.
    fn feedback_terms(
        &self,
        scored: &[u32],
        score: impl Fn(u32) -> f64,
        reached: &[TermRef],
        q: &Query<'_>,
    ) -> Vec<(TermRef, f64)> {
        let pr = self.params;
        let mut top: Vec<(u32, f64)> = scored
            .iter()
            .filter(|&&d| self.passes(d, q))
            .map(|&d| (d, score(d)))
            .filter(|&(_, s)| s > 0.0)
            .collect();
        // Ties by key, a total order: feedback depends neither on the order documents were
        // scored in nor on how they are numbered.
        let key = |d: u32| self.key_of(d);
        let order = |a: &(u32, f64), b: &(u32, f64)| {
            b.1.total_cmp(&a.1).then_with(|| key(a.0).cmp(key(b.0)))
        };
        if top.len() > pr.feedback_docs {
            top.select_nth_unstable_by(pr.feedback_docs - 1, order);
            top.truncate(pr.feedback_docs);
        }
        top.sort_unstable_by(order);
        let total: f64 = top.iter().map(|t| t.1).sum();
        if top.is_empty() || total <= 0.0 {
            return Vec::new();
        }
        let mut weight: BTreeMap<String, f64> = BTreeMap::new();
        for &(d, s) in &top {
            let Some(e) = self.doc(d) else { continue };
            let mut tf: BTreeMap<String, u32> = BTreeMap::new();
            for t in self.tokenizer.terms(e.content) {
                *tf.entry(t).or_insert(0) += 1;
            }
            for (t, n) in tf {
                *weight.entry(t).or_insert(0.0) += (s / total) * n as f64 / e.len.max(1.0);
            }
        }
        let live = self.len() as f64;
        let same = |a: TermRef, b: TermRef| a.base == b.base && a.over == b.over;
        let mut cand: Vec<(TermRef, String, f64)> = weight
            .into_iter()
            .filter_map(|(name, w)| {
                let r = self.lookup(&name)?;
                let df = self.df(r);
                (df > 1 && !reached.iter().any(|&q| same(q, r)))
                    .then(|| (r, name, w * idf(live, df as f64)))
            })
            .collect();
        // Ties by name, for the same reason.
        cand.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.1.cmp(&b.1)));
        cand.truncate(pr.feedback_terms);
        let max = cand.first().map_or(1.0, |c| c.2);
        cand.into_iter()
            .map(|(r, _, w)| (r, pr.feedback_weight * w / max))
            .collect()
    }

    // Selecting the hits to return is kept apart from scoring: only the best `q.limit` of
    // the scored documents are ordered in full and turned into `Hit`s.

    /// The best `q.limit` of the documents `scores` that pass `q`'s filters, as hits in `q`'s
    /// order (a total order: keys are unique, so the result does not depend on map order).
    fn top_hits(&self, scores: &Scores, q: &Query<'_>) -> Vec<Hit> {
        let mut ranked: Vec<(u32, f64)> = scores
            .scored
            .iter()
            .map(|&d| (d, scores.value[d as usize]))
            .filter(|&(d, s)| s > 0.0 && self.passes(d, q))
            .collect();
        let order = |a: &(u32, f64), b: &(u32, f64)| match q.sort {
            Sort::Relevance => {
                b.1.total_cmp(&a.1)
                    .then_with(|| self.key_of(a.0).cmp(self.key_of(b.0)))
            }
            Sort::Recency => self
                .timestamp_of(b.0)
                .total_cmp(&self.timestamp_of(a.0))
                .then_with(|| b.1.total_cmp(&a.1))
                .then_with(|| self.key_of(a.0).cmp(self.key_of(b.0))),
        };
        if ranked.len() > q.limit {
            ranked.select_nth_unstable_by(q.limit - 1, order);
            ranked.truncate(q.limit);
        }
        ranked.sort_unstable_by(order);
        ranked
            .into_iter()
            .filter_map(|(d, score)| {
                let e = self.doc(d)?;
                Some(Hit {
                    key: e.key.to_vec(),
                    namespace: e.namespace.to_string(),
                    path: e.path.to_string(),
                    value: e.value,
                    content: e.content.to_string(),
                    score,
                    timestamp: e.timestamp,
                })
            })
            .collect()
    }

    /// The live key just before that of document `d`, `key` (`after`: just after), and its
    /// document number.
    fn neighbour(&self, d: u32, key: &[u8], after: bool) -> Option<(&[u8], u32)> {
        let n = self.base.n_docs();
        // A frozen document's neighbours in the frozen part are next to it (documents are
        // numbered in key order); an overlay document's are found by key.
        let d = d as usize;
        let (below, above) = if d < n {
            (d, d + 1)
        } else {
            let b = self.base.key_bound(key, true);
            (b, b)
        };
        let from_base = if after {
            (above..n).find(|&i| !self.dead[i])
        } else {
            (0..below).rev().find(|&i| !self.dead[i])
        }
        .map(|i| (self.base.key(i), i as u32));
        let over = if after {
            self.by_key
                .range::<[u8], _>((Bound::Excluded(key), Bound::Unbounded))
                .next()
        } else {
            self.by_key
                .range::<[u8], _>((Bound::Unbounded, Bound::Excluded(key)))
                .next_back()
        }
        .map(|(k, &s)| (k.as_slice(), (n + s as usize) as u32));
        match (from_base, over) {
            (Some(b), Some(o)) => Some(if (b.0 < o.0) == after { b } else { o }),
            (b, o) => b.or(o),
        }
    }

    /// BM25 scores of the parents' documents (every record under a parent as one text) for
    /// the terms whose frequencies under each touched parent `tf` holds, each term weighted
    /// by its `weights` entry; by parent number (zero for a parent not touched).
    fn parent_scores(&self, tf: &TermRows, weights: &[f64], stats: &ParentStats) -> Vec<f64> {
        let n = stats.len.len() as f64;
        let mut df = vec![0.0; tf.terms];
        for &p in &tf.touched {
            for (i, f) in tf.row(p).iter().enumerate() {
                if *f > 0.0 {
                    df[i] += 1.0;
                }
            }
        }
        let mut out = vec![0.0; stats.len.len()];
        for &p in &tf.touched {
            let len = stats.len[p as usize];
            out[p as usize] = tf
                .row(p)
                .iter()
                .zip(&df)
                .zip(weights)
                .filter(|((f, _), _)| **f > 0.0)
                .map(|((f, d), w)| w * bm25(idf(n, *d), *f, len, stats.mean, &self.params))
                .sum();
        }
        out
    }

    /// The parents' documents and the documents' dates, computed on first use after a change.
    fn stats(&self) -> &ParentStats {
        self.parents.get_or_init(|| {
            let all = self.base.n_docs() + self.docs.len();
            let mut parent = vec![u32::MAX; all];
            let mut len: Vec<f64> = Vec::new();
            let mut dates = Vec::with_capacity(all);
            let mut numbers: HashMap<&[u8], u32> = HashMap::new();
            // Frozen documents come in key order, so siblings are neighbours: only a change
            // of parent needs the map.
            let mut last: Option<(&[u8], u32)> = None;
            for (d, slot) in parent.iter_mut().enumerate() {
                let e = self.doc(d as u32);
                dates.push(
                    e.as_ref()
                        .filter(|e| e.timestamp > 0.0 && e.timestamp.is_finite())
                        .map(|e| year_month(e.timestamp)),
                );
                let Some(e) = e else { continue };
                let pk = parent_of(e.key);
                let p = match last {
                    Some((k, p)) if k == pk => p,
                    _ => *numbers.entry(pk).or_insert_with(|| {
                        len.push(0.0);
                        (len.len() - 1) as u32
                    }),
                };
                last = Some((pk, p));
                *slot = p;
                len[p as usize] += e.len;
            }
            let mean = if len.is_empty() {
                1.0
            } else {
                (self.total_len / len.len() as f64).max(1.0)
            };
            ParentStats {
                parent,
                len,
                mean,
                dates,
            }
        })
    }

    /// The month or year a query term names, if any: a term that is the stem of a month's
    /// name, or four digits.
    fn date_term(&self, term: &str) -> Option<DateTerm> {
        if term.len() == 4 && term.bytes().all(|b| b.is_ascii_digit()) {
            return term
                .parse()
                .ok()
                .filter(|y| YEARS.contains(y))
                .map(DateTerm::Year);
        }
        static STEMS: OnceLock<Vec<String>> = OnceLock::new();
        STEMS
            .get_or_init(|| MONTHS.iter().map(|m| self.tokenizer.stem(m)).collect())
            .iter()
            .position(|m| m == term)
            .map(|m| DateTerm::Month(m as u32 + 1))
    }

    /// The live documents whose timestamp falls in the month or year `t` names: the
    /// postings of the date field for one term.
    fn dated(&self, t: DateTerm) -> Vec<u32> {
        self.stats()
            .dates
            .iter()
            .enumerate()
            .filter(|(_, d)| d.is_some_and(|d| t.matches(d)))
            .map(|(i, _)| i as u32)
            .collect()
    }

    /// Adds context to own scores: a share of adjacent siblings' own scores and of the best
    /// own score under the same parent. Keys are siblings when their namespace and all but
    /// the last path segment agree. Only keys that match by themselves are hits; context
    /// reorders them and never adds a key that does not contain a query term.
    fn with_context(&self, own: &Scores, stats: &ParentStats, pr: Params) -> Scores {
        let mut best_in = vec![0.0f64; stats.len.len()];
        for &d in &own.scored {
            let p = stats.parent[d as usize] as usize;
            best_in[p] = best_in[p].max(own.value[d as usize]);
        }
        // Each key's context is summed in a fixed order (previous sibling, next sibling,
        // parent's best).
        let mut out = Scores::new(own.value.len());
        for &d in &own.scored {
            if self.live_len(d).is_none() {
                continue;
            }
            let key = self.key_of(d);
            let p = stats.parent[d as usize];
            let sibling_score = |(_, n): (&[u8], u32)| {
                if stats.parent[n as usize] == p {
                    own.value[n as usize]
                } else {
                    0.0
                }
            };
            let before = self.neighbour(d, key, false).map_or(0.0, sibling_score);
            let after = self.neighbour(d, key, true).map_or(0.0, sibling_score);
            let s = own.value[d as usize];
            out.set(
                d,
                s + pr.neighbour_weight * (before + after) + pr.group_weight * best_in[p as usize],
            );
        }
        out
    }

    /// The live documents in key order, by number.
    fn live_in_key_order(&self) -> Vec<u32> {
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

    /// The whole index as bytes, for a cache file (layout in store-format.md, "Derived
    /// caches"): both parts merged into one frozen part, ready to search once loaded.
    pub fn to_bytes(&self) -> Vec<u8> {
        let order = self.live_in_key_order();
        let mut renumber = vec![u32::MAX; self.base.n_docs() + self.docs.len()];
        for (i, &d) in order.iter().enumerate() {
            renumber[d as usize] = i as u32;
        }
        let mut term_text = String::new();
        let mut term_off = vec![0u32];
        let mut post_off = vec![0u32];
        let mut postings: Vec<Posting> = Vec::new();
        for (name, t) in self.terms_after(None) {
            let start = postings.len();
            self.each_posting(t, &mut |p| {
                postings.push(Posting {
                    doc: renumber[p.doc as usize],
                    ..*p
                })
            });
            if postings.len() == start {
                continue;
            }
            postings[start..].sort_unstable_by_key(|p| p.doc);
            term_text.push_str(name);
            term_off.push(term_text.len() as u32);
            post_off.push(postings.len() as u32);
        }
        let mut keys = Vec::new();
        let mut key_off = vec![0u32];
        let mut ns_text = String::new();
        let mut ns_off = vec![0u32];
        let mut path_text = String::new();
        let mut path_off = vec![0u32];
        let mut content_text = String::new();
        let mut content_off = vec![0u32];
        let mut tail = Vec::with_capacity(order.len() * 48);
        let (mut stamps, mut lens) = (Vec::new(), Vec::new());
        for &d in &order {
            let Some(e) = self.doc(d) else { continue };
            keys.extend_from_slice(e.key);
            key_off.push(keys.len() as u32);
            ns_text.push_str(e.namespace);
            ns_off.push(ns_text.len() as u32);
            path_text.push_str(e.path);
            path_off.push(path_text.len() as u32);
            content_text.push_str(e.content);
            content_off.push(content_text.len() as u32);
            tail.extend_from_slice(e.value.as_bytes());
            stamps.extend_from_slice(&e.timestamp.to_le_bytes());
            lens.extend_from_slice(&e.len.to_le_bytes());
        }
        let mut w = Vec::with_capacity(
            HEADER_LEN
                + 8 * (term_off.len() + key_off.len() * 4)
                + term_text.len()
                + 8 * postings.len()
                + keys.len()
                + ns_text.len()
                + path_text.len()
                + content_text.len()
                + tail.len() * 2,
        );
        w.extend_from_slice(CACHE_MAGIC);
        w.extend_from_slice(&self.params.key_weight.to_le_bytes());
        put_root(&mut w, self.root.as_ref());
        for n in [
            order.len(),
            term_off.len() - 1,
            postings.len(),
            keys.len(),
            term_text.len(),
            ns_text.len(),
            path_text.len(),
            content_text.len(),
        ] {
            put_u32(&mut w, n as u32);
        }
        put_u32s(&mut w, &term_off);
        w.extend_from_slice(term_text.as_bytes());
        put_u32s(&mut w, &post_off);
        for p in &postings {
            put_u32(&mut w, p.doc);
            w.extend_from_slice(&p.key_tf.to_le_bytes());
            w.extend_from_slice(&p.content_tf.to_le_bytes());
        }
        put_u32s(&mut w, &key_off);
        w.extend_from_slice(&keys);
        put_u32s(&mut w, &ns_off);
        w.extend_from_slice(ns_text.as_bytes());
        put_u32s(&mut w, &path_off);
        w.extend_from_slice(path_text.as_bytes());
        put_u32s(&mut w, &content_off);
        w.extend_from_slice(content_text.as_bytes());
        w.extend_from_slice(&tail);
        w.extend_from_slice(&stamps);
        w.extend_from_slice(&lens);
        let sum = xxh3_128(&w);
        w.extend_from_slice(&sum.to_le_bytes());
        w
    }

    /// Reads bytes written by [`LexicalIndex::to_bytes`] as the frozen part of an index;
    /// any damage, or a file made with another key weight, is an error.
    pub fn from_bytes(bytes: &[u8]) -> RecallResult<LexicalIndex> {
        let body = checked_body(bytes, CACHE_MAGIC)?;
        let mut r = Reader {
            b: body,
            at: CACHE_MAGIC.len(),
        };
        let key_weight = f64::from_le_bytes(r.array()?);
        if key_weight.to_bits() != Params::default().key_weight.to_bits() {
            return Err(damaged());
        }
        let root = get_root(&mut r)?;
        let mut c = [0usize; 8];
        for x in &mut c {
            *x = r.u32()? as usize;
        }
        let [n, nt, np, kb, tb, nb, pb, cb] = c;
        // The sizes must account for the file exactly before anything is allocated.
        let want = HEADER_LEN as u64
            + 8 * (nt as u64 + 1)
            + tb as u64
            + 8 * np as u64
            + 16 * (n as u64 + 1)
            + (kb as u64 + nb as u64 + pb as u64 + cb as u64)
            + 48 * n as u64;
        if want != body.len() as u64 {
            return Err(damaged());
        }
        let term_off = r.u32s(nt + 1)?;
        let term_text = r.text(tb)?;
        let post_off = r.u32s(nt + 1)?;
        let mut postings = Vec::with_capacity(np);
        for ch in r.take(8 * np)?.chunks_exact(8) {
            postings.push(Posting {
                doc: u32::from_le_bytes([ch[0], ch[1], ch[2], ch[3]]),
                key_tf: u16::from_le_bytes([ch[4], ch[5]]),
                content_tf: u16::from_le_bytes([ch[6], ch[7]]),
            });
        }
        let key_off = r.u32s(n + 1)?;
        let keys = r.take(kb)?.to_vec();
        let ns_off = r.u32s(n + 1)?;
        let ns_text = r.text(nb)?;
        let path_off = r.u32s(n + 1)?;
        let path_text = r.text(pb)?;
        let content_off = r.u32s(n + 1)?;
        let content_text = r.text(cb)?;
        let values: Vec<ObjectId> = r
            .take(32 * n)?
            .chunks_exact(32)
            .map(|ch| {
                let mut id = [0u8; 32];
                id.copy_from_slice(ch);
                ObjectId::from_bytes(id)
            })
            .collect();
        let timestamps = r.f64s(n)?;
        let lens = r.f64s(n)?;

        check_offsets(&term_off, tb, Some(&term_text))?;
        check_offsets(&post_off, np, None)?;
        check_offsets(&key_off, kb, None)?;
        check_offsets(&ns_off, nb, Some(&ns_text))?;
        check_offsets(&path_off, pb, Some(&path_text))?;
        check_offsets(&content_off, cb, Some(&content_text))?;
        let base = Base {
            sum: Some(xxh3_128(body)),
            term_off,
            term_text,
            post_off,
            postings,
            key_off,
            keys,
            ns_off,
            ns_text,
            path_off,
            path_text,
            content_off,
            content_text,
            values,
            timestamps,
            lens,
        };
        for i in 1..nt {
            if base.term(i - 1) >= base.term(i) {
                return Err(damaged());
            }
        }
        for i in 0..nt {
            let ps = base.term_postings(i);
            if ps.last().is_some_and(|p| p.doc as usize >= n)
                || ps.windows(2).any(|w| w[0].doc >= w[1].doc)
            {
                return Err(damaged());
            }
        }
        for i in 1..n {
            if base.key(i - 1) >= base.key(i) {
                return Err(damaged());
            }
        }
        if base.lens.iter().any(|l| !(l.is_finite() && *l >= 0.0)) {
            return Err(damaged());
        }
        let total_len = base.lens.iter().sum();
        Ok(LexicalIndex {
            root,
            dead: vec![false; n],
            base_live: n,
            base,
            total_len,
            ..LexicalIndex::new()
        })
    }

    /// The changes since the frozen part, as bytes for a delta cache file (layout in
    /// store-format.md): the root reflected, the frozen documents removed and the overlay
    /// documents. `None` when the index has no frozen part read from a cache file, which
    /// a delta could name.
    pub fn delta_bytes(&self) -> Option<Vec<u8>> {
        let sum = self.base.sum?;
        let mut w = Vec::new();
        w.extend_from_slice(DELTA_MAGIC);
        w.extend_from_slice(&sum.to_le_bytes());
        put_root(&mut w, self.root.as_ref());
        let dead: Vec<u32> = (0..self.base.n_docs())
            .filter(|&i| self.dead[i])
            .map(|i| i as u32)
            .collect();
        put_u32(&mut w, dead.len() as u32);
        put_u32s(&mut w, &dead);
        put_u32(&mut w, self.by_key.len() as u32);
        for &slot in self.by_key.values() {
            let Some(e) = self.docs.get(slot as usize).and_then(Option::as_ref) else {
                continue;
            };
            put_bytes(&mut w, &e.key);
            w.extend_from_slice(e.value.as_bytes());
            put_bytes(&mut w, e.namespace.as_bytes());
            put_bytes(&mut w, e.path.as_bytes());
            put_bytes(&mut w, e.content.as_bytes());
            w.extend_from_slice(&e.timestamp.to_le_bytes());
            w.extend_from_slice(&e.len.to_le_bytes());
            put_u32(&mut w, e.terms.len() as u32);
            for &(t, k, c) in &e.terms {
                put_bytes(&mut w, self.term_names[t as usize].as_bytes());
                w.extend_from_slice(&k.to_le_bytes());
                w.extend_from_slice(&c.to_le_bytes());
            }
        }
        let sum = xxh3_128(&w);
        w.extend_from_slice(&sum.to_le_bytes());
        Some(w)
    }

    /// Applies a delta written by [`LexicalIndex::delta_bytes`] to an index just read by
    /// [`LexicalIndex::from_bytes`]. A delta that is damaged, names another frozen part or
    /// contradicts this one is an error and leaves the index untouched.
    pub fn apply_delta(&mut self, bytes: &[u8]) -> RecallResult<()> {
        let body = checked_body(bytes, DELTA_MAGIC)?;
        let mut r = Reader {
            b: body,
            at: DELTA_MAGIC.len(),
        };
        let base_sum = u128::from_le_bytes(r.array()?);
        let n = self.base.n_docs();
        if self.base.sum != Some(base_sum) || self.pending_changes() != 0 {
            return Err(RecallError::Cache(
                "lexical index delta does not belong to the cached index".into(),
            ));
        }
        let root = get_root(&mut r)?;
        let nd = r.u32()? as usize;
        if nd > n {
            return Err(damaged());
        }
        let dead = r.u32s(nd)?;
        if dead.last().is_some_and(|&d| d as usize >= n) || dead.windows(2).any(|w| w[0] >= w[1]) {
            return Err(damaged());
        }
        let ne = r.u32()? as usize;
        if ne > body.len() {
            return Err(damaged());
        }
        let mut entries: Vec<(Entry, Vec<String>)> = Vec::with_capacity(ne);
        for _ in 0..ne {
            let key = r.bytes()?.to_vec();
            let value = ObjectId::from_bytes(r.array()?);
            let namespace = r.string()?;
            let path = r.string()?;
            let content = r.string()?;
            let timestamp = f64::from_le_bytes(r.array()?);
            let len = f64::from_le_bytes(r.array()?);
            let nt = r.u32()? as usize;
            if nt > body.len() || !(len.is_finite() && len >= 0.0) {
                return Err(damaged());
            }
            let mut names = Vec::with_capacity(nt);
            let mut terms = Vec::with_capacity(nt);
            for i in 0..nt {
                names.push(r.string()?);
                let k = u16::from_le_bytes(r.array()?);
                let c = u16::from_le_bytes(r.array()?);
                terms.push((i as u32, k, c));
            }
            let mut sorted: Vec<&String> = names.iter().collect();
            sorted.sort();
            if sorted.windows(2).any(|w| w[0] == w[1]) {
                return Err(damaged());
            }
            // Keys ascend; a key present in the frozen part must be among the removed.
            if entries.last().is_some_and(|(e, _)| e.key >= key)
                || self
                    .base
                    .find_key(&key)
                    .is_some_and(|i| dead.binary_search(&(i as u32)).is_err())
            {
                return Err(damaged());
            }
            entries.push((
                Entry {
                    key,
                    value,
                    namespace,
                    path,
                    content,
                    timestamp,
                    len,
                    terms,
                },
                names,
            ));
        }
        if r.at != body.len() {
            return Err(damaged());
        }
        // Checked in full: nothing below can fail.
        for d in dead {
            let d = d as usize;
            self.dead[d] = true;
            self.base_live -= 1;
            self.total_len -= self.base.lens[d];
        }
        self.parents.take();
        for (mut e, names) in entries {
            for (t, name) in e.terms.iter_mut().zip(&names) {
                t.0 = self.term_id(name);
            }
            e.terms.sort_unstable_by_key(|t| t.0);
            self.attach(e);
        }
        self.root = root;
        Ok(())
    }
}

/// What [`LexicalIndex::sync`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncStats {
    /// Whether the index was rebuilt from a full scan.
    pub rebuilt: bool,
    /// Keys added or replaced.
    pub inserted: usize,
    /// Keys removed.
    pub removed: usize,
}

/// First bytes of a full cache file (layout version 4).
const CACHE_MAGIC: &[u8] = b"MEMLEX04";
/// First bytes of a delta cache file (layout version 2).
const DELTA_MAGIC: &[u8] = b"MEMLXD02";
/// Bytes of a full cache file before its tables: magic, key weight, root, eight counts.
const HEADER_LEN: usize = 8 + 8 + 33 + 8 * 4;

fn damaged() -> RecallError {
    RecallError::Cache("lexical index cache is damaged".into())
}

/// The bytes before the trailing checksum, when the checksum and the magic agree.
fn checked_body<'a>(bytes: &'a [u8], magic: &[u8]) -> RecallResult<&'a [u8]> {
    if bytes.len() < magic.len() + 16 {
        return Err(damaged());
    }
    let (body, sum) = bytes.split_at(bytes.len() - 16);
    let mut s = [0u8; 16];
    s.copy_from_slice(sum);
    if xxh3_128(body) != u128::from_le_bytes(s) || !body.starts_with(magic) {
        return Err(damaged());
    }
    Ok(body)
}

/// An offset table must start at 0, never decrease and end at `end`; for text, every offset
/// must fall on a character boundary.
fn check_offsets(off: &[u32], end: usize, text: Option<&str>) -> RecallResult<()> {
    let ok = off.first() == Some(&0)
        && off.last().map(|&e| e as usize) == Some(end)
        && off.windows(2).all(|w| w[0] <= w[1])
        && text.is_none_or(|t| off.iter().all(|&o| t.is_char_boundary(o as usize)));
    if ok {
        Ok(())
    } else {
        Err(damaged())
    }
}

fn put_root(w: &mut Vec<u8>, root: Option<&ObjectId>) {
    match root {
        Some(r) => {
            w.push(1);
            w.extend_from_slice(r.as_bytes());
        }
        None => w.extend_from_slice(&[0u8; 33]),
    }
}

fn get_root(r: &mut Reader<'_>) -> RecallResult<Option<ObjectId>> {
    let flag = r.take(1)?[0];
    let id: [u8; 32] = r.array()?;
    match flag {
        0 if id == [0u8; 32] => Ok(None),
        1 => Ok(Some(ObjectId::from_bytes(id))),
        _ => Err(damaged()),
    }
}

fn put_u32(w: &mut Vec<u8>, n: u32) {
    w.extend_from_slice(&n.to_le_bytes());
}

fn put_u32s(w: &mut Vec<u8>, ns: &[u32]) {
    for &n in ns {
        put_u32(w, n);
    }
}

fn put_bytes(w: &mut Vec<u8>, b: &[u8]) {
    put_u32(w, b.len() as u32);
    w.extend_from_slice(b);
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> RecallResult<&'a [u8]> {
        if self.b.len() - self.at < n {
            return Err(RecallError::Cache(
                "lexical index cache is truncated".into(),
            ));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn array<const N: usize>(&mut self) -> RecallResult<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u32(&mut self) -> RecallResult<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u32s(&mut self, n: usize) -> RecallResult<Vec<u32>> {
        let b = self.take(n.checked_mul(4).ok_or_else(damaged)?)?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
    fn f64s(&mut self, n: usize) -> RecallResult<Vec<f64>> {
        let b = self.take(n.checked_mul(8).ok_or_else(damaged)?)?;
        Ok(b.chunks_exact(8)
            .map(|c| {
                let mut a = [0u8; 8];
                a.copy_from_slice(c);
                f64::from_le_bytes(a)
            })
            .collect())
    }
    fn bytes(&mut self) -> RecallResult<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn text(&mut self, n: usize) -> RecallResult<String> {
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| damaged())
    }
    fn string(&mut self) -> RecallResult<String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| damaged())
    }
}

/// The namespace and path of an encoded key, for documents built by callers.
pub fn split_key(encoded: &[u8]) -> (String, String) {
    key::split_encoded(encoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 June 2023, 12:00 UTC.
    const JUNE_2023: f64 = 1_685_620_800.0;
    /// 15 March 2024, 12:00 UTC.
    const MARCH_2024: f64 = 1_710_504_000.0;

    fn index(docs: &[(&str, &str, f64)]) -> LexicalIndex {
        let mut idx = LexicalIndex::new();
        for (path, content, ts) in docs {
            let key = crate::key::Key::new("default", path).unwrap().encode();
            let doc = Doc {
                namespace: "default".into(),
                path: path.to_string(),
                content: content.to_string(),
                timestamp: *ts,
            };
            idx.insert(&key, ObjectId::from_bytes([0; 32]), &doc);
        }
        idx
    }

    fn paths(idx: &LexicalIndex, text: &str) -> Vec<String> {
        idx.search(&Query {
            text,
            limit: 10,
            ..Default::default()
        })
        .into_iter()
        .map(|h| h.path)
        .collect()
    }

    #[test]
    fn query_words_naming_months_and_years() {
        let idx = LexicalIndex::new();
        assert_eq!(idx.date_term("june"), Some(DateTerm::Month(6)));
        let t = Tokenizer::default();
        assert_eq!(
            idx.date_term(&t.stem("september")),
            Some(DateTerm::Month(9))
        );
        assert_eq!(idx.date_term("2023"), Some(DateTerm::Year(2023)));
        assert_eq!(idx.date_term("0999"), None);
        assert_eq!(idx.date_term("12345"), None);
        assert_eq!(idx.date_term("hike"), None);
    }

    #[test]
    fn a_month_or_year_in_the_query_favours_records_dated_then() {
        let docs = [
            ("trips.a", "Went hiking in the hills.", MARCH_2024),
            ("trips.b", "Went hiking by the lake.", JUNE_2023),
            ("trips.c", "Went hiking with friends.", MARCH_2024),
        ];
        let idx = index(&docs);
        assert_eq!(paths(&idx, "hiking in June")[0], "trips.b");
        assert_eq!(paths(&idx, "hiking 2023")[0], "trips.b");
        assert_eq!(paths(&idx, "hiking in March 2024").len(), 3);
        assert_ne!(paths(&idx, "hiking in March 2024")[0], "trips.b");
        // Without the date field the month word matches nothing.
        let mut off = index(&docs);
        off.params.date_weight = 0.0;
        assert_eq!(paths(&off, "june"), Vec::<String>::new());
        // A date word alone finds the records dated then, and only them.
        assert_eq!(paths(&idx, "june"), ["trips.b"]);
        assert_eq!(paths(&idx, "2025"), Vec::<String>::new());
    }

    #[test]
    fn query_words_in_adjacent_siblings_favour_their_window() {
        // Both parents hold both words, once each, in records of equal length: the parent
        // scores tie. Under `near` the words sit in adjacent records, under `far` four
        // records apart.
        let docs = [
            ("far.t1", "Planted the garden.", 0.0),
            ("far.t2", "Weather was nice.", 0.0),
            ("far.t3", "Called my sister.", 0.0),
            ("far.t4", "Fixed the bike.", 0.0),
            ("far.t5", "Picked ripe tomatoes.", 0.0),
            ("near.t1", "Planted the garden.", 0.0),
            ("near.t2", "Picked ripe tomatoes.", 0.0),
            ("near.t3", "Weather was nice.", 0.0),
            ("near.t4", "Called my sister.", 0.0),
            ("near.t5", "Fixed the bike.", 0.0),
        ];
        let mut idx = index(&docs);
        idx.params.neighbour_weight = 0.0;
        idx.params.group_weight = 0.0;
        idx.params.feedback_docs = 0;
        assert_eq!(paths(&idx, "garden tomatoes")[..2], ["near.t1", "near.t2"]);
        // Without windows the records of the two parents tie, and ties go by key.
        idx.params.window_weight = 0.0;
        assert_eq!(paths(&idx, "garden tomatoes")[0], "far.t1");
    }

    #[test]
    fn feedback_raises_parents_that_share_the_best_hits_topic() {
        // "piano" matches alike under `other` and `related`; the best hits, under
        // `lessons`, also talk about Anna and lessons, which only `related` mentions.
        let docs = [
            ("lessons.t1", "Piano lessons with Anna today.", 0.0),
            ("lessons.t2", "Anna says piano lessons need scales.", 0.0),
            ("other.t1", "Piano tuning notes.", 0.0),
            ("other.t2", "Bob repairs bikes.", 0.0),
            ("related.t1", "Piano tuning notes.", 0.0),
            ("related.t2", "Anna lessons weekly.", 0.0),
        ];
        let mut idx = index(&docs);
        let hits = paths(&idx, "piano");
        let pos = |p: &str| hits.iter().position(|h| h == p).unwrap();
        assert!(pos("related.t1") < pos("other.t1"), "{hits:?}");
        // Feedback adds no hits: records without the query's words stay out.
        assert!(!hits
            .iter()
            .any(|h| h.ends_with(".t2") && !h.starts_with("lessons")));
        // Without feedback the two tie, and ties go by key.
        idx.params.feedback_docs = 0;
        let hits = paths(&idx, "piano");
        let pos = |p: &str| hits.iter().position(|h| h == p).unwrap();
        assert!(pos("other.t1") < pos("related.t1"), "{hits:?}");
    }

    #[test]
    fn unknown_timestamps_have_no_date() {
        let idx = index(&[("a", "Notes.", 0.0), ("b", "Notes.", f64::NAN)]);
        assert!(paths(&idx, "january 1970").is_empty());
    }

    #[test]
    fn date_field_follows_removal() {
        let mut idx = index(&[("a", "Notes.", JUNE_2023), ("b", "Notes.", MARCH_2024)]);
        assert_eq!(paths(&idx, "june"), ["a"]);
        idx.remove(&crate::key::Key::new("default", "a").unwrap().encode());
        assert!(paths(&idx, "june").is_empty());
        let back = LexicalIndex::from_bytes(&idx.to_bytes()).unwrap();
        assert_eq!(paths(&back, "march"), ["b"]);
    }
}
