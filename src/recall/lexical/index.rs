//! The index: a file part and an overlay of documents inserted since, and the edits
//! (insert, remove) that keep them apart.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use super::context::ParentStats;
use super::file_part::Base;
use super::removed::{Removed, RemovedPostings};
use super::{Doc, Params};
use crate::object::ObjectId;
use crate::recall::tokenize::Tokenizer;

/// A document of the overlay: its key, its record as indexed, and its term counts.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) key: Vec<u8>,
    pub(super) value: ObjectId,
    pub(super) namespace: String,
    pub(super) path: String,
    pub(super) content: String,
    pub(super) timestamp: f64,
    /// The agents whose entries the record holds, the record's actor first.
    pub(super) actors: Vec<String>,
    pub(super) len: f64,
    /// Distinct terms with (key tf, content tf).
    pub(super) terms: Vec<(u32, u16, u16)>,
}

/// A term's occurrences in one document: in its key path and in its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Posting {
    pub(super) doc: u32,
    pub(super) key_tf: u16,
    pub(super) content_tf: u16,
}

/// A BM25F index of the keys of one tree root.
///
/// Two parts: a file part as loaded from the cache file ([`LexicalIndex::from_bytes`]),
/// whose documents can only be marked removed, and an overlay of documents inserted since.
/// Searching sees their union; a key is live in at most one of them. Document numbers below
/// the file part's size are its documents, the others are overlay slots after it.
#[derive(Default)]
pub struct LexicalIndex {
    pub(super) root: Option<ObjectId>,
    pub(super) base: Base,
    /// Per document of the file part: removed since loading.
    pub(super) dead: Vec<bool>,
    pub(super) base_live: usize,
    pub(super) docs: Vec<Option<Entry>>,
    pub(super) free: Vec<u32>,
    pub(super) by_key: BTreeMap<Vec<u8>, u32>,
    /// The actors of the overlay documents, with how many list each (what a search reads
    /// per query, without walking the overlay).
    pub(super) over_actors: BTreeMap<String, u32>,
    pub(super) vocab: BTreeMap<String, u32>,
    pub(super) term_names: Vec<String>,
    pub(super) postings: Vec<Vec<Posting>>,
    /// The file part's postings of its removed documents, worked out from their text when
    /// they are removed.
    pub(super) removed_postings: RemovedPostings,
    pub(super) total_len: f64,
    pub(super) tokenizer: Tokenizer,
    /// Lengths of the parents' documents, computed on first use after a change.
    pub(super) parents: OnceLock<ParentStats>,
    /// Ranking parameters.
    pub params: Params,
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

    /// Whether a part of the cache file read so far turned out damaged: answers given since
    /// it was opened are meaningless, and the index must be rebuilt from the tree.
    pub fn damaged(&self) -> bool {
        self.base.damaged()
    }

    /// Number of indexed keys.
    pub fn len(&self) -> usize {
        self.base_live + self.by_key.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Changes held outside the file part: documents of the file part removed plus overlay
    /// documents. A delta cache file records exactly these.
    pub fn pending_changes(&self) -> usize {
        (self.base.n_docs() - self.base_live) + self.by_key.len()
    }

    /// Whether the cache should be rewritten whole rather than as a delta: the index has no
    /// file part loaded from a cache file, or the changes since it exceed
    /// max(64, 1/32 of its documents).
    pub fn should_compact(&self) -> bool {
        self.base.sum.is_none() || self.pending_changes() > (self.base.n_docs() / 32).max(64)
    }

    pub(super) fn term_id(&mut self, term: &str) -> u32 {
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
        let (terms, len) = self.term_counts(&doc.path, &doc.content);
        self.attach(Entry {
            key: key.to_vec(),
            value,
            namespace: doc.namespace.clone(),
            path: doc.path.clone(),
            content: doc.content.clone(),
            timestamp: doc.timestamp,
            actors: doc.actors.clone(),
            len,
            terms,
        });
    }

    /// The distinct terms of a document's key path and content, numbered (new ones added to
    /// the vocabulary), with their counts in each (ascending by number), and its length.
    pub(super) fn term_counts(&mut self, path: &str, content: &str) -> (Vec<(u32, u16, u16)>, f64) {
        let (counts, len) = self.counted(path, content);
        let mut terms: Vec<(u32, u16, u16)> = counts
            .into_iter()
            .map(|(t, (k, c))| (self.term_id(&t), k, c))
            .collect();
        terms.sort_unstable_by_key(|t| t.0);
        (terms, len)
    }

    /// The distinct terms of a document's key path and content with their counts in each,
    /// and its length.
    fn counted(&self, path: &str, content: &str) -> (HashMap<String, (u16, u16)>, f64) {
        let mut counts: HashMap<String, (u16, u16)> = HashMap::new();
        let key_terms = self.tokenizer.terms(path);
        let content_terms = self.tokenizer.terms(content);
        let len = self.params.key_weight * key_terms.len() as f64 + content_terms.len() as f64;
        for t in key_terms {
            let c = counts.entry(t).or_default();
            c.0 = c.0.saturating_add(1);
        }
        for t in content_terms {
            let c = counts.entry(t).or_default();
            c.1 = c.1.saturating_add(1);
        }
        (counts, len)
    }

    /// Stores an entry whose key is not indexed yet in a free overlay slot: its postings,
    /// its length and its key. Returns false (and stores nothing) when the key is already
    /// indexed.
    pub(super) fn attach(&mut self, e: Entry) -> bool {
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
        for a in &e.actors {
            *self.over_actors.entry(a.clone()).or_default() += 1;
        }
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
                for a in &e.actors {
                    if let Some(n) = self.over_actors.get_mut(a) {
                        *n -= 1;
                        if *n == 0 {
                            self.over_actors.remove(a);
                        }
                    }
                }
            }
            self.free.push(slot);
        } else if let Some(i) = self.base.find_key(key) {
            if !self.dead[i] {
                self.dead[i] = true;
                self.base_live -= 1;
                self.total_len -= self.base.len_at(i);
                self.parents.take();
                self.note_removed(i as u32);
            }
        }
    }

    /// Records the postings the file part holds for its document `d`, now removed: those
    /// of the terms of its text as the file keeps it (the text its postings were made
    /// from), each found in the term's postings.
    fn note_removed(&mut self, d: u32) {
        let (counts, _) = self.counted(self.base.path(d as usize), self.base.content(d as usize));
        for name in counts.into_keys() {
            let Some(t) = self.base.find_term(&name) else {
                continue;
            };
            let postings = self.base.term_postings(t as usize);
            let at = postings.first_from(0, postings.len(), d);
            if let Some(posting) = postings.get(at).filter(|p| p.doc == d) {
                let at = at as u32;
                self.removed_postings.add(t, Removed { posting, at });
            }
        }
    }
}
