//! The lexical index: BM25F over key segments and record content, with prefix and
//! near-miss matching. It is derived data: it names the tree root it reflects, is brought up
//! to date from the tree diff between that root and the one asked for, and can always be
//! rebuilt from the tree.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use super::tokenize::Tokenizer;
use crate::glob::KeyGlobs;
use crate::key;
use crate::object::ObjectId;
use crate::prolly::NodeStore;

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
    /// Weight of the parent's score: the BM25 score of all records under a key's parent
    /// read as one document (a session of turns, a topic of facts). Words of the query spread
    /// over several siblings raise every sibling.
    pub parent_weight: f64,
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
            parent_weight: 0.7,
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
    timestamp: f64,
    len: f64,
    /// Distinct terms with (key tf, content tf).
    terms: Vec<(u32, u16, u16)>,
}

#[derive(Debug, Clone, Copy)]
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
    /// Score: higher is better; always above zero.
    pub score: f64,
    /// The record's timestamp.
    pub timestamp: f64,
}

/// A BM25F index of the keys of one tree root.
#[derive(Default)]
pub struct LexicalIndex {
    root: Option<ObjectId>,
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

/// The parents' documents: their lengths, how many there are and their mean length.
#[derive(Default)]
struct ParentStats {
    len: HashMap<Vec<u8>, f64>,
    mean: f64,
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
        self.by_key.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
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
            timestamp: doc.timestamp,
            len,
            terms,
        });
    }

    /// Stores an entry whose key is not indexed yet in a free slot: its postings, its length
    /// and its key. Returns false (and stores nothing) when the key is already indexed.
    fn attach(&mut self, e: Entry) -> bool {
        if self.by_key.contains_key(&e.key) {
            return false;
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.docs.push(None);
                (self.docs.len() - 1) as u32
            }
        };
        for &(t, key_tf, content_tf) in &e.terms {
            self.postings[t as usize].push(Posting {
                doc: slot,
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
        let Some(slot) = self.by_key.remove(key) else {
            return;
        };
        if let Some(e) = self.docs[slot as usize].take() {
            for &(t, _, _) in &e.terms {
                self.postings[t as usize].retain(|p| p.doc != slot);
            }
            self.total_len -= e.len;
            self.parents.take();
        }
        self.free.push(slot);
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

    /// Indexed terms that `term` reaches, with their weights: itself, longer terms it
    /// starts (from [`PREFIX_MIN_CHARS`]), and when it is not indexed itself, terms within one
    /// edit (two from 8 characters; from [`FUZZY_MIN_CHARS`], same first letter).
    fn expand(&self, term: &str) -> Vec<(u32, f64)> {
        let mut out = Vec::new();
        let live = |id: &u32| !self.postings[*id as usize].is_empty();
        let exact = self.vocab.get(term).copied().filter(live);
        if let Some(id) = exact {
            out.push((id, 1.0));
        }
        let chars = term.chars().count();
        if chars >= PREFIX_MIN_CHARS {
            for (t, &id) in self
                .vocab
                .range::<str, _>((std::ops::Bound::Excluded(term), std::ops::Bound::Unbounded))
                .take_while(|(t, _)| t.starts_with(term))
                .filter(|(_, id)| live(id))
                .take(MAX_EXPANSIONS)
            {
                let _ = t;
                out.push((id, self.params.prefix_weight));
            }
        }
        if exact.is_none() && chars >= FUZZY_MIN_CHARS {
            let max = if chars >= 8 { 2 } else { 1 };
            let first = term.chars().next();
            let mut n = 0;
            for (t, &id) in &self.vocab {
                if n >= MAX_EXPANSIONS {
                    break;
                }
                let tc = t.chars().count();
                if tc.abs_diff(chars) > max
                    || t.chars().next() != first
                    || t.starts_with(term)
                    || !live(&id)
                {
                    continue;
                }
                if strsim::osa_distance(term, t) <= max {
                    out.push((id, self.params.fuzzy_weight));
                    n += 1;
                }
            }
        }
        out
    }

    /// Ranked hits for `q`; an empty result when nothing matches (never invented hits).
    pub fn search(&self, q: &Query<'_>) -> Vec<Hit> {
        let live = self.by_key.len() as f64;
        if live == 0.0 || q.limit == 0 {
            return Vec::new();
        }
        let avg = (self.total_len / live).max(1.0);
        let pr = self.params;
        let mut terms = self.tokenizer.terms(q.text);
        terms.sort();
        terms.dedup();
        let mut scores: HashMap<u32, f64> = HashMap::new();
        // Per parent touched, the weighted frequency of each query term under it.
        let mut parent_tf: HashMap<&[u8], Vec<f64>> = HashMap::new();
        for (ti, term) in terms.iter().enumerate() {
            let mut best: HashMap<u32, f64> = HashMap::new();
            for (tid, weight) in self.expand(term) {
                let posts = &self.postings[tid as usize];
                if posts.is_empty() {
                    continue;
                }
                let idf = idf(live, posts.len() as f64);
                for p in posts {
                    let Some(e) = &self.docs[p.doc as usize] else {
                        continue;
                    };
                    let tf = pr.key_weight * p.key_tf as f64 + p.content_tf as f64;
                    let s = weight * bm25(idf, tf, e.len, avg, &pr);
                    let slot = best.entry(p.doc).or_insert(0.0);
                    if s > *slot {
                        *slot = s;
                    }
                    if pr.parent_weight > 0.0 {
                        parent_tf
                            .entry(parent_of(&e.key))
                            .or_insert_with(|| vec![0.0; terms.len()])[ti] += weight * tf;
                    }
                }
            }
            for (d, s) in best {
                *scores.entry(d).or_insert(0.0) += s;
            }
        }
        if pr.neighbour_weight > 0.0 || pr.group_weight > 0.0 {
            scores = self.with_context(&scores, pr);
        }
        if pr.parent_weight > 0.0 && !parent_tf.is_empty() {
            let by_parent = self.parent_scores(&parent_tf, terms.len());
            for (d, s) in scores.iter_mut() {
                if let Some(e) = &self.docs[*d as usize] {
                    let p = by_parent.get(parent_of(&e.key)).copied().unwrap_or(0.0);
                    *s += pr.parent_weight * p;
                }
            }
        }
        let mut hits: Vec<Hit> = scores
            .into_iter()
            .filter(|&(_, s)| s > 0.0)
            .filter_map(|(d, score)| {
                let e = self.docs[d as usize].as_ref()?;
                if q.namespace.is_some_and(|ns| ns != e.namespace)
                    || q.globs.is_some_and(|g| !g.matches(&e.path))
                    || q.since.is_some_and(|t| e.timestamp < t)
                    || q.until.is_some_and(|t| e.timestamp > t)
                {
                    return None;
                }
                Some(Hit {
                    key: e.key.clone(),
                    namespace: e.namespace.clone(),
                    path: e.path.clone(),
                    value: e.value,
                    score,
                    timestamp: e.timestamp,
                })
            })
            .collect();
        match q.sort {
            Sort::Relevance => {
                hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)))
            }
            Sort::Recency => hits.sort_by(|a, b| {
                b.timestamp
                    .total_cmp(&a.timestamp)
                    .then_with(|| b.score.total_cmp(&a.score))
                    .then_with(|| a.key.cmp(&b.key))
            }),
        }
        hits.truncate(q.limit);
        hits
    }

    /// BM25 scores of the parents' documents (every record under a parent as one text) for
    /// the query terms whose frequencies under each touched parent are `tf`.
    fn parent_scores<'k>(
        &self,
        tf: &HashMap<&'k [u8], Vec<f64>>,
        terms: usize,
    ) -> HashMap<&'k [u8], f64> {
        let stats = self.parents.get_or_init(|| {
            let mut len: HashMap<Vec<u8>, f64> = HashMap::new();
            for e in self.docs.iter().flatten() {
                *len.entry(parent_of(&e.key).to_vec()).or_insert(0.0) += e.len;
            }
            let mean = if len.is_empty() {
                1.0
            } else {
                (self.total_len / len.len() as f64).max(1.0)
            };
            ParentStats { len, mean }
        });
        let n = stats.len.len() as f64;
        let mut df = vec![0.0; terms];
        for v in tf.values() {
            for (i, f) in v.iter().enumerate() {
                if *f > 0.0 {
                    df[i] += 1.0;
                }
            }
        }
        tf.iter()
            .map(|(&p, v)| {
                let len = stats.len.get(p).copied().unwrap_or(stats.mean);
                let s = v
                    .iter()
                    .zip(&df)
                    .filter(|(f, _)| **f > 0.0)
                    .map(|(f, d)| bm25(idf(n, *d), *f, len, stats.mean, &self.params))
                    .sum();
                (p, s)
            })
            .collect()
    }

    /// Adds context to own scores: a share of adjacent siblings' own scores and of the best
    /// own score under the same parent. Keys are siblings when their namespace and all but
    /// the last path segment agree. Only keys that match by themselves are hits; context
    /// reorders them and never adds a key that does not contain a query term.
    fn with_context(&self, own: &HashMap<u32, f64>, pr: Params) -> HashMap<u32, f64> {
        let mut best_in: HashMap<&[u8], f64> = HashMap::new();
        for (&d, &s) in own {
            if let Some(e) = &self.docs[d as usize] {
                let g = best_in.entry(parent_of(&e.key)).or_insert(0.0);
                *g = g.max(s);
            }
        }
        // Each key's context is summed in a fixed order (previous sibling, next sibling,
        // parent's best), so scores do not depend on map iteration order.
        let mut out = HashMap::with_capacity(own.len());
        for (&d, &s) in own {
            let Some(e) = &self.docs[d as usize] else {
                continue;
            };
            let p = parent_of(&e.key);
            let key: &[u8] = &e.key;
            let sibling_score = |k: &Vec<u8>, n: &u32| {
                if parent_of(k) == p {
                    own.get(n).copied().unwrap_or(0.0)
                } else {
                    0.0
                }
            };
            let before = self
                .by_key
                .range::<[u8], _>((std::ops::Bound::Unbounded, std::ops::Bound::Excluded(key)))
                .next_back()
                .map_or(0.0, |(k, n)| sibling_score(k, n));
            let after = self
                .by_key
                .range::<[u8], _>((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded))
                .next()
                .map_or(0.0, |(k, n)| sibling_score(k, n));
            let best = best_in.get(p).copied().unwrap_or(0.0);
            out.insert(
                d,
                s + pr.neighbour_weight * (before + after) + pr.group_weight * best,
            );
        }
        out
    }

    /// The index as bytes, for a cache file. The layout is private to this build of memoir
    /// and checked on load; a cache that does not load is rebuilt. Terms are written once,
    /// in a table; documents refer to them by number.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Vec::new();
        w.extend_from_slice(CACHE_MAGIC);
        match &self.root {
            Some(r) => {
                w.push(1);
                w.extend_from_slice(r.as_bytes());
            }
            None => w.push(0),
        }
        // Live terms only, renumbered densely.
        let mut renumber = vec![u32::MAX; self.term_names.len()];
        let mut table: Vec<&str> = Vec::new();
        for (t, name) in self.term_names.iter().enumerate() {
            if !self.postings[t].is_empty() {
                renumber[t] = table.len() as u32;
                table.push(name);
            }
        }
        put_u32(&mut w, table.len() as u32);
        for name in &table {
            put_bytes(&mut w, name.as_bytes());
        }
        put_u32(&mut w, self.by_key.len() as u32);
        for &slot in self.by_key.values() {
            let e = self.docs[slot as usize].as_ref().expect("live slot");
            put_bytes(&mut w, &e.key);
            w.extend_from_slice(e.value.as_bytes());
            put_bytes(&mut w, e.namespace.as_bytes());
            put_bytes(&mut w, e.path.as_bytes());
            w.extend_from_slice(&e.timestamp.to_le_bytes());
            w.extend_from_slice(&e.len.to_le_bytes());
            put_u32(&mut w, e.terms.len() as u32);
            for &(t, k, c) in &e.terms {
                put_u32(&mut w, renumber[t as usize]);
                w.extend_from_slice(&k.to_le_bytes());
                w.extend_from_slice(&c.to_le_bytes());
            }
        }
        let sum = blake3::hash(&w);
        w.extend_from_slice(sum.as_bytes());
        w
    }

    /// Reads bytes written by [`LexicalIndex::to_bytes`]; any damage is an error.
    pub fn from_bytes(bytes: &[u8]) -> RecallResult<LexicalIndex> {
        let bad = || RecallError::Cache("lexical index cache is damaged".into());
        if bytes.len() < CACHE_MAGIC.len() + 32 {
            return Err(bad());
        }
        let (body, sum) = bytes.split_at(bytes.len() - 32);
        if blake3::hash(body).as_bytes() != sum {
            return Err(bad());
        }
        let mut r = Reader { b: body, at: 0 };
        if r.take(CACHE_MAGIC.len())? != CACHE_MAGIC {
            return Err(bad());
        }
        let mut idx = LexicalIndex::new();
        idx.root = match r.take(1)?[0] {
            0 => None,
            1 => Some(ObjectId::from_bytes(r.array()?)),
            _ => return Err(bad()),
        };
        let nterms = r.u32()? as usize;
        if nterms > body.len() {
            return Err(bad());
        }
        idx.term_names.reserve(nterms);
        idx.postings.reserve(nterms);
        for _ in 0..nterms {
            let name = r.string()?;
            let id = idx.term_names.len() as u32;
            if idx.vocab.insert(name.clone(), id).is_some() {
                return Err(bad());
            }
            idx.term_names.push(name);
            idx.postings.push(Vec::new());
        }
        let n = r.u32()?;
        for _ in 0..n {
            let key = r.bytes()?.to_vec();
            let value = ObjectId::from_bytes(r.array()?);
            let namespace = r.string()?;
            let path = r.string()?;
            let timestamp = f64::from_le_bytes(r.array()?);
            let len = f64::from_le_bytes(r.array()?);
            let nt = r.u32()? as usize;
            if nt > body.len() {
                return Err(bad());
            }
            let mut terms = Vec::with_capacity(nt);
            for _ in 0..nt {
                let id = r.u32()?;
                if id as usize >= nterms {
                    return Err(bad());
                }
                let k = u16::from_le_bytes(r.array()?);
                let c = u16::from_le_bytes(r.array()?);
                terms.push((id, k, c));
            }
            terms.sort_unstable_by_key(|t| t.0);
            if terms.windows(2).any(|w| w[0].0 == w[1].0) {
                return Err(bad());
            }
            let fresh = idx.attach(Entry {
                key,
                value,
                namespace,
                path,
                timestamp,
                len,
                terms,
            });
            if !fresh {
                return Err(bad());
            }
        }
        if r.at != body.len() {
            return Err(bad());
        }
        Ok(idx)
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

const CACHE_MAGIC: &[u8] = b"memoir lexical index 2\n";

fn put_u32(w: &mut Vec<u8>, n: u32) {
    w.extend_from_slice(&n.to_le_bytes());
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
        Ok(self.take(N)?.try_into().expect("length checked"))
    }
    fn u32(&mut self) -> RecallResult<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn bytes(&mut self) -> RecallResult<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn string(&mut self) -> RecallResult<String> {
        String::from_utf8(self.bytes()?.to_vec())
            .map_err(|_| RecallError::Cache("lexical index cache is damaged".into()))
    }
}

/// The namespace and path of an encoded key, for documents built by callers.
pub fn split_key(encoded: &[u8]) -> (String, String) {
    key::split_encoded(encoded)
}
