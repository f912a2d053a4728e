//! Documents: JSON objects kept one per record (its content), as a key-value store such as
//! LangGraph's keeps its items. [`Memoir::find_documents`] selects them under a path prefix
//! by [`Condition`]s, ranks them by words, and pages them, all in the library, handing back
//! only the page; [`Memoir::write_documents`] stores and deletes many in one commit.
//!
//! Parsed documents are kept in memory per handle, keyed by their record's object id: a
//! record's id names its bytes, so an entry never goes stale, and a filter over thousands of
//! documents parses each only once per handle.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

use crate::glob::KeyGlobs;
use crate::key::{encode_path_start, namespace_prefix, split_encoded, validate_namespace, Key};
use crate::memory::{read_record, write, MergePolicy, Outcome as Decision};
use crate::object::ObjectId;
use crate::prolly::{prefix_range, Edit};
use crate::recall::Sort;
use crate::repo::Repo;

use super::document_filter::{all_hold, Condition};
use super::ids::hex_opt;
use super::input::{check_content, refuse_secrets, refuse_secrets_in_key};
use super::search::{lexical, Scope};
use super::taxonomy::refuse_reserved_namespace;
use super::{Memoir, MemoirResult, Outcome, ReadPoint, WriteAs};

/// Most parsed documents a handle keeps; past it the memory is emptied and refilled.
const CACHE_DOCUMENTS: usize = 200_000;

/// What [`Memoir::find_documents`] looks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DocumentQuery {
    /// The namespace the documents are in.
    pub namespace: String,
    /// Only documents whose path starts with these segments (empty: all of the namespace).
    pub prefix: Vec<String>,
    /// Conditions every document returned satisfies.
    pub conditions: Vec<Condition>,
    /// Words to rank by (lexically): documents holding them come first, best first, the
    /// others after them in key order. None, or no word that tells documents apart: key
    /// order.
    pub words: Option<String>,
    /// Documents passed over before the page starts.
    pub offset: usize,
    /// Most documents in the page (none: all that follow `offset`).
    pub limit: Option<usize>,
    /// Hand back only the documents' paths, not their contents.
    pub keys_only: bool,
}

/// One document of a [`DocumentPage`].
#[derive(Debug, Clone, Serialize)]
pub struct DocumentHit {
    /// Its path.
    pub key: String,
    /// Its lexical score, when it holds a word ranked by.
    pub score: Option<f64>,
    /// The record's content (the document's JSON text); none when only keys were asked for.
    pub content: Option<String>,
    /// The record's time (unix seconds); none when only keys were asked for.
    pub timestamp: Option<f64>,
}

/// A page of documents.
#[derive(Debug, Clone, Serialize)]
pub struct DocumentPage {
    /// The page, in order.
    pub items: Vec<DocumentHit>,
    /// How many documents satisfied the conditions in all.
    pub total: usize,
}

impl Outcome for DocumentPage {
    crate::outcome_json!();
}

/// One write of [`Memoir::write_documents`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentWrite {
    /// The document's path.
    pub path: String,
    /// Its JSON text, or none to delete it (deleting an absent document does nothing).
    pub content: Option<String>,
}

/// What [`Memoir::write_documents`] committed.
#[derive(Debug, Clone, Serialize)]
pub struct DocumentsWritten {
    /// The commit (none when nothing changed).
    #[serde(serialize_with = "hex_opt")]
    pub commit: Option<ObjectId>,
    /// Documents stored.
    pub stored: usize,
    /// Documents deleted.
    pub deleted: usize,
}

impl Outcome for DocumentsWritten {
    crate::outcome_json!();
}

/// A record's content parsed once.
#[derive(Debug)]
struct Parsed {
    content: String,
    timestamp: f64,
    /// The content as JSON, when it is JSON (conditions see null otherwise).
    json: Value,
}

/// The parsed documents of a handle, by record id.
#[derive(Debug, Default)]
pub(crate) struct DocumentCache {
    parsed: Mutex<HashMap<ObjectId, Arc<Parsed>>>,
}

/// The parsed document of record `id`, from `map` or read and parsed into it.
fn parsed(
    map: &mut HashMap<ObjectId, Arc<Parsed>>,
    repo: &Repo,
    id: &ObjectId,
) -> MemoirResult<Arc<Parsed>> {
    if let Some(p) = map.get(id) {
        return Ok(p.clone());
    }
    let record = read_record(repo.objects(), id)?;
    let content = record.content();
    let json = serde_json::from_str(&content).unwrap_or(Value::Null);
    let parsed = Arc::new(Parsed {
        content,
        timestamp: record.timestamp,
        json,
    });
    if map.len() >= CACHE_DOCUMENTS {
        map.clear();
    }
    map.insert(*id, parsed.clone());
    Ok(parsed)
}

impl DocumentCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ObjectId, Arc<Parsed>>> {
        self.parsed.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Memoir {
    /// The documents of `q.namespace` under `q.prefix` that satisfy `q.conditions`, ranked
    /// by `q.words` when given, one page of them, at a read point. A namespace with nothing
    /// stored is an empty page.
    pub fn find_documents(&self, q: &DocumentQuery, at: &ReadPoint) -> MemoirResult<DocumentPage> {
        validate_namespace(&q.namespace)?;
        let start = if q.prefix.is_empty() {
            namespace_prefix(&q.namespace)
        } else {
            encode_path_start(&q.namespace, &format!("{}.", q.prefix.join(".")))
        };
        let scores = match q.words.as_deref().filter(|w| ranks_by(w)) {
            Some(words) => self.lexical_scores(q, words, at)?,
            None => HashMap::new(),
        };
        self.reading(|repo| {
            let (_, root) = self.read_root(repo, at)?;
            let mut selected: Vec<(Vec<u8>, Arc<Parsed>)> = Vec::new();
            let mut failed = None;
            // One lock of the parsed documents for the whole scan.
            let mut map = self.documents.lock();
            repo.tree()
                .scan(
                    &root,
                    &prefix_range(&start),
                    &mut |k, id| match parsed(&mut map, repo, id) {
                        Ok(p) => {
                            if all_hold(&q.conditions, &p.json) {
                                selected.push((k.to_vec(), p));
                            }
                            true
                        }
                        Err(e) => {
                            failed = Some(e);
                            false
                        }
                    },
                )?;
            drop(map);
            if let Some(e) = failed {
                return Err(e);
            }
            let total = selected.len();
            let limit = q.limit.unwrap_or(usize::MAX);
            if scores.is_empty() {
                // Key order: only the page's paths are decoded.
                let items = selected
                    .into_iter()
                    .skip(q.offset)
                    .take(limit)
                    .map(|(k, p)| hit(split_encoded(&k).1, None, &p, q.keys_only))
                    .collect();
                return Ok(DocumentPage { items, total });
            }
            let mut ranked: Vec<(Option<f64>, String, Arc<Parsed>)> = selected
                .into_iter()
                .map(|(k, p)| {
                    let (_, path) = split_encoded(&k);
                    (scores.get(&path).copied(), path, p)
                })
                .collect();
            // Scored first, best first; the rest keep key order (the sort is stable).
            ranked.sort_by(|a, b| match (a.0, b.0) {
                (Some(x), Some(y)) => y.total_cmp(&x),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            });
            let items = ranked
                .into_iter()
                .skip(q.offset)
                .take(limit)
                .map(|(score, key, p)| hit(key, score, &p, q.keys_only))
                .collect();
            Ok(DocumentPage { items, total })
        })
    }

    /// The lexical score of each document under the query's prefix holding `words`.
    fn lexical_scores(
        &self,
        q: &DocumentQuery,
        words: &str,
        at: &ReadPoint,
    ) -> MemoirResult<HashMap<String, f64>> {
        let globs = if q.prefix.is_empty() {
            KeyGlobs::new::<String>(&[])?
        } else {
            KeyGlobs::new(&[format!("{}.*", q.prefix.join("."))])?
        };
        let scope = Scope {
            namespace: Some(q.namespace.clone()),
            globs,
            since: None,
            until: None,
            sort: Sort::Relevance,
            actor: None,
            explain: false,
        };
        let (index, _) = self.index_for_read(at)?;
        let mut hits = lexical(&index, words, &scope, usize::MAX);
        if index.damaged() {
            drop(index);
            let (index, _) = self.rebuild_index(at)?;
            hits = lexical(&index, words, &scope, usize::MAX);
        }
        Ok(hits.into_iter().map(|h| (h.path, h.score)).collect())
    }

    /// Stores and deletes documents of `namespace` in one commit on `who`'s branch (none
    /// when nothing changes): each stored document replaces the record at its path with one
    /// entry holding its text; the last write of a path wins. Content or a path that looks
    /// like a credential is refused unless `allow_secrets` (exit 1, nothing written).
    pub fn write_documents(
        &self,
        namespace: &str,
        writes: &[DocumentWrite],
        allow_secrets: bool,
        who: &WriteAs,
    ) -> MemoirResult<DocumentsWritten> {
        who.check()?;
        validate_namespace(namespace)?;
        refuse_reserved_namespace(namespace)?;
        let mut last: HashMap<&str, usize> = HashMap::new();
        let mut keys = Vec::with_capacity(writes.len());
        for (i, w) in writes.iter().enumerate() {
            let key = Key::new(namespace, &w.path)?;
            refuse_secrets_in_key(&key, allow_secrets)?;
            if let Some(c) = &w.content {
                check_content(c)?;
                refuse_secrets(c, allow_secrets)?;
            }
            last.insert(w.path.as_str(), i);
            keys.push(key);
        }
        let tx = self.start_transaction(who)?;
        let (repo, root) = (tx.repo(), tx.root());
        let now = self.clock().now();
        let (mut stored, mut deleted) = (0, 0);
        let mut edits = Vec::new();
        for (i, (w, key)) in writes.iter().zip(&keys).enumerate() {
            if last.get(w.path.as_str()) != Some(&i) {
                continue;
            }
            let existing = repo.tree().get(&root, &key.encode())?;
            match &w.content {
                None => {
                    if existing.is_some() {
                        edits.push(Edit::Delete(key.encode()));
                        deleted += 1;
                    }
                }
                Some(content) => {
                    let old = existing
                        .map(|id| read_record(repo.objects(), &id))
                        .transpose()?;
                    let incoming = who.incoming(content.clone(), 1.0, now);
                    let cap = self.options().facet_cap;
                    let (decision, _) =
                        write(key, old.as_ref(), &incoming, MergePolicy::Replace, cap)?;
                    if let Decision::Write(record) = decision {
                        let id = repo.objects().write(&record.to_blob()?)?;
                        edits.push(Edit::Put(key.encode(), id));
                        stored += 1;
                    }
                }
            }
        }
        if edits.is_empty() {
            return Ok(DocumentsWritten {
                commit: None,
                stored,
                deleted,
            });
        }
        let message = match (stored, deleted, writes.first()) {
            (1, 0, Some(w)) if writes.len() == 1 => format!("Store {} in {namespace}", w.path),
            (0, 1, Some(w)) if writes.len() == 1 => format!("Delete {} from {namespace}", w.path),
            _ => format!("Store {stored} and delete {deleted} documents in {namespace}"),
        };
        let committed = tx.finish(edits, &message)?;
        Ok(DocumentsWritten {
            commit: Some(committed.id),
            stored,
            deleted,
        })
    }
}

/// One document of a page.
fn hit(key: String, score: Option<f64>, p: &Parsed, keys_only: bool) -> DocumentHit {
    DocumentHit {
        key,
        score,
        content: (!keys_only).then(|| p.content.clone()),
        timestamp: (!keys_only).then_some(p.timestamp),
    }
}

/// Whether a query has a word to rank by: not empty, not only common words (which every
/// document shares).
fn ranks_by(words: &str) -> bool {
    words
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .any(|w| !crate::recall::tokenize::is_stopword(&w.to_lowercase()))
}
