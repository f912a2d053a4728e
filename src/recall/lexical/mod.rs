//! The lexical index: BM25F over key segments and record content, with prefix and
//! near-miss matching. It is derived data: it names the tree root it reflects, is brought up
//! to date from the tree diff between that root and the one asked for, and can always be
//! rebuilt from the tree.
//!
//! One module per part:
//! - `index`: the index, a file part as read from the cache file (`file_part`) plus an overlay
//!   of the documents inserted since; `docs` and `terms` read documents and terms across
//!   both; `key_order` numbers the records of both parts in key order for sweeps;
//! - `sync`: bringing the index to a tree root from the tree diff;
//! - `expand`: the indexed terms a query term reaches (itself, by prefix, by near miss);
//! - `score`: BM25F ranking and the choice of hits, with a record's context of siblings and
//!   parent (`context`), pseudo-relevance feedback (`feedback`) and the date field
//!   (`dates`); `params` holds the weights; `explain` the parts of a hit's score;
//!   `window_bounds` sums windows only where they can change the answer, and `doc_rows`
//!   looks up the query terms' frequencies in those records alone; `stream` ranks in
//!   sweeps in key order, reading the query terms' postings a block at a time (`blocks`,
//!   `postings`), in the parents' order (`sweep_order`), passing over parents none of whose
//!   records can be a hit (`parent_bounds`);
//! - `signals` and `rerank`: what a record and a query say besides their words (speaker,
//!   event time, time expressions, questions), and the factors of the score they make;
//! - `codec` and `delta`: the cache file and its delta file.

mod blocks;
mod build;
mod codec;
mod context;
mod dates;
mod delta;
mod doc_rows;
mod docs;
mod expand;
mod explain;
mod feedback;
mod file_part;
mod index;
mod key_order;
mod near_rare;
#[cfg(test)]
mod near_rare_tests;
mod params;
mod parent_bounds;
mod postings;
mod removed;
mod rerank;
mod score;
pub mod signals;
mod stream;
#[cfg(test)]
mod stream_tests;
mod sweep_order;
mod sync;
mod tables;
mod terms;
#[cfg(test)]
mod tests;
mod view;
mod vocab;
mod window_bounds;

pub use crate::calendar::MONTHS;
pub use build::Builder;
pub use expand::{FUZZY_MIN_CHARS, PREFIX_MIN_CHARS};
pub use explain::LexicalParts;
pub use index::LexicalIndex;
pub use params::Params;
pub use rerank::{rerank, score_terms, QuerySignals, ScoreTerms};

use crate::glob::KeyGlobs;
use crate::key;
use crate::object::ObjectId;

/// A document as the index sees it: one key and its record.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Doc {
    /// Namespace of the key.
    pub namespace: String,
    /// Dotted path of the key.
    pub path: String,
    /// The record's projected content.
    pub content: String,
    /// The record's timestamp (unix seconds).
    pub timestamp: f64,
    /// The agents whose entries the record holds (see [`record_actors`]): the record's
    /// actor first.
    pub actors: Vec<String>,
}

impl Doc {
    /// The document's texts, borrowed.
    pub fn view(&self) -> DocView<'_> {
        DocView {
            namespace: &self.namespace,
            path: &self.path,
            content: &self.content,
            timestamp: self.timestamp,
            actors: &self.actors,
        }
    }
}

/// The agents whose entries a record holds, each once: the actor of its newest entry that
/// records one (the record's actor) first, then the others from newest to oldest. Empty when
/// no entry records an actor.
pub fn record_actors(r: &crate::memory::Record) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in r.entries.iter().rev().filter_map(|e| e.actor.as_deref()) {
        if !out.iter().any(|x| x == a) {
            out.push(a.to_string());
        }
    }
    out
}

/// A document's texts borrowed from wherever they are held (a [`Doc`], or a buffer of many
/// documents), as [`Builder::add`] reads them.
#[derive(Debug, Clone, Copy)]
pub struct DocView<'a> {
    /// Namespace of the key.
    pub namespace: &'a str,
    /// Dotted path of the key.
    pub path: &'a str,
    /// The record's projected content.
    pub content: &'a str,
    /// The record's timestamp (unix seconds).
    pub timestamp: f64,
    /// The agents whose entries the record holds, the record's actor first.
    pub actors: &'a [String],
}

/// How hits are ordered (serde and JSON Schema use the lowercase names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
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
    /// Only this namespace; when none, every namespace but memoir's own (`memoir:*`) unless
    /// `with_internal`.
    pub namespace: Option<&'a str>,
    /// With no namespace given, search memoir's own namespaces too.
    pub with_internal: bool,
    /// Only paths matching these globs.
    pub globs: Option<&'a KeyGlobs>,
    /// Only records at or after this time.
    pub since: Option<f64>,
    /// Only records at or before this time.
    pub until: Option<f64>,
    /// Only records with an entry by this agent (actor).
    pub actor: Option<&'a str>,
    /// Most hits returned.
    pub limit: usize,
    /// Order of the hits.
    pub sort: Sort,
    /// Give each hit the parts of its lexical score ([`ScoreTerms::parts`]). The hits are the
    /// same; finding them may take longer (no shortcut is taken).
    pub explain: bool,
}

impl Query<'_> {
    /// Whether the query narrows the records it ranks (namespace, globs, dates).
    pub(crate) fn filtered(&self) -> bool {
        self.namespace.is_some()
            || !self.with_internal
            || self.globs.is_some()
            || self.since.is_some()
            || self.until.is_some()
            || self.actor.is_some()
    }
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
    /// The record's actor (the agent of its newest entry that records one).
    pub actor: Option<String>,
    /// The terms `score` is made of (see `rerank`).
    pub terms: ScoreTerms,
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

/// The namespace and path of an encoded key, for documents built by callers.
pub fn split_key(encoded: &[u8]) -> (String, String) {
    key::split_encoded(encoded)
}
