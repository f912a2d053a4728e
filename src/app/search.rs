//! `search`: ranked search over keys and record contents, by words (no model), by meaning
//! (an embedding model) or both; and the lexical index every read (search, recall) looks
//! at.

use serde::{Serialize, Serializer};

use crate::glob::KeyGlobs;
use crate::key::validate_namespace;
use crate::recall::tokenize::is_stopword;
use std::sync::{Arc, Mutex};

use crate::object::ObjectId;
use crate::recall::hybrid::{self, Fusion};
use crate::recall::lexical::{LexicalParts, ScoreTerms};
use crate::recall::{
    cache_path, load_cache, sync_loaded, Hit, LexicalIndex, Query, SearchMode, Sort, SyncStats,
};
use crate::repo::revision::parse_date;
use crate::repo::{Head, Repo};

use super::meaning::ModeChoice;
use super::status::unknown_namespace;
use super::{exit, Memoir, MemoirError, MemoirResult, Outcome, ReadPoint};

/// The lexical index a handle that keeps the store open keeps in memory between reads.
#[derive(Default)]
pub(crate) struct WarmIndex {
    index: Mutex<Option<Arc<LexicalIndex>>>,
}

impl std::fmt::Debug for WarmIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WarmIndex")
    }
}

/// What `search` looks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchRequest {
    /// The words looked for.
    pub query: String,
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only keys whose path matches one of these globs (empty: every key).
    pub keys: Vec<String>,
    /// Most hits.
    pub limit: usize,
    /// Only records at or after this date (ISO date, `yesterday`, `2.days.ago`, ...).
    pub since: Option<String>,
    /// Only records at or before this date.
    pub until: Option<String>,
    /// Order of the hits.
    pub sort: Sort,
    /// Give each hit the terms of its score ([`SearchHit::explain`]).
    pub explain: bool,
}

/// The terms of a hit's score (`search --explain`): the lexical score and the factors of the
/// signals (1 when one does not apply); their product is the score. A lexical score is
/// also given in its parts (`words`, `siblings`, `window`, `parent`, `feedback`), which sum
/// to it; a score fused with meaning has none.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScoreExplain {
    /// BM25F over key and content, with the context of siblings and parent.
    #[serde(serialize_with = "rounded")]
    pub lexical: f64,
    /// BM25F of the query's words in the key path and content (with the date field).
    #[serde(
        serialize_with = "rounded_some",
        skip_serializing_if = "Option::is_none"
    )]
    pub words: Option<f64>,
    /// Shares of the adjacent siblings' scores and of the best score under the same parent.
    #[serde(
        serialize_with = "rounded_some",
        skip_serializing_if = "Option::is_none"
    )]
    pub siblings: Option<f64>,
    /// The record read with its nearest siblings as one passage.
    #[serde(
        serialize_with = "rounded_some",
        skip_serializing_if = "Option::is_none"
    )]
    pub window: Option<f64>,
    /// The parent's records read as one document, for the query's words.
    #[serde(
        serialize_with = "rounded_some",
        skip_serializing_if = "Option::is_none"
    )]
    pub parent: Option<f64>,
    /// The parent's records for the feedback terms (words typical of the best hits).
    #[serde(
        serialize_with = "rounded_some",
        skip_serializing_if = "Option::is_none"
    )]
    pub feedback: Option<f64>,
    /// The record is spoken (a leading `Name:`, else its actor) by a speaker the query names.
    #[serde(serialize_with = "rounded")]
    pub speaker: f64,
    /// The query asks about time and the record holds a time expression.
    #[serde(serialize_with = "rounded")]
    pub time: f64,
    /// The record's event time falls in a date or month the query names.
    #[serde(serialize_with = "rounded")]
    pub date: f64,
    /// The record is a turn that asks.
    #[serde(serialize_with = "rounded")]
    pub question: f64,
}

impl From<ScoreTerms> for ScoreExplain {
    fn from(t: ScoreTerms) -> Self {
        let part = |f: fn(&LexicalParts) -> f64| t.parts.as_ref().map(f);
        ScoreExplain {
            lexical: t.lexical,
            words: part(|p| p.words),
            siblings: part(|p| p.siblings),
            window: part(|p| p.window),
            parent: part(|p| p.parent),
            feedback: part(|p| p.feedback),
            speaker: t.speaker,
            time: t.time,
            date: t.date,
            question: t.question,
        }
    }
}

/// One hit of a [`SearchOutcome`].
#[derive(Debug, Clone, Serialize)]
pub struct SearchHit {
    /// The key's path.
    pub key: String,
    /// Its namespace.
    pub namespace: String,
    /// Score: higher is better (JSON: rounded to 6 decimals).
    #[serde(serialize_with = "rounded")]
    pub score: f64,
    /// The record's content.
    pub content: String,
    /// The terms of the score, when asked for (JSON: present only then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<ScoreExplain>,
}

/// What `search` found.
#[derive(Debug, Clone, Serialize)]
pub struct SearchOutcome {
    /// Always true (no match is an empty result).
    pub success: bool,
    /// The words looked for.
    pub query: String,
    /// How the hits were ranked: `lexical`, `semantic` or `hybrid`.
    pub mode: &'static str,
    /// The hits, in the order asked for.
    pub hits: Vec<SearchHit>,
    /// Number of hits.
    pub count: usize,
    /// Time taken.
    pub timing_ms: f64,
    /// Diagnostics (where the index came from, a cache that could not be saved).
    #[serde(skip)]
    pub notes: Vec<String>,
    /// Why the mode asked for is not the one run (hybrid without a model), which a face
    /// shows.
    #[serde(skip)]
    pub fallback: Option<String>,
}

impl Outcome for SearchOutcome {
    crate::outcome_json!();
}

/// Rounds a score for output (stable text, no float noise).
fn round_score(s: f64) -> f64 {
    (s * 1e6).round() / 1e6
}

/// Serialises a score rounded by [`round_score`].
pub(crate) fn rounded<S: Serializer>(score: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round_score(*score))
}

/// Serialises a score part that may be absent, rounded by [`round_score`] (a part that
/// rounds to zero from below is 0, not -0).
fn rounded_some<S: Serializer>(score: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match score {
        Some(x) => s.serialize_f64(round_score(*x) + 0.0),
        None => s.serialize_none(),
    }
}

/// The filters of a lexical search besides its text, and whether to explain its hits.
pub(crate) struct Scope {
    pub namespace: Option<String>,
    pub globs: KeyGlobs,
    pub since: Option<f64>,
    pub until: Option<f64>,
    pub sort: Sort,
    /// Only records with an entry by this agent.
    pub actor: Option<String>,
    /// Give each hit the parts of its lexical score.
    pub explain: bool,
}

/// Errors ([`unknown_namespace`]) unless namespace `ns` has a memory in `index`.
pub(crate) fn require_indexed_namespace(index: &LexicalIndex, ns: &str) -> MemoirResult<()> {
    if index.has_namespace(ns) {
        return Ok(());
    }
    Err(unknown_namespace(ns, &index.namespaces()))
}

/// The query of `text` within `scope`.
fn query_of<'a>(text: &'a str, scope: &'a Scope, limit: usize) -> Query<'a> {
    Query {
        text,
        with_internal: false,
        namespace: scope.namespace.as_deref(),
        globs: (!scope.globs.is_all()).then_some(&scope.globs),
        since: scope.since,
        until: scope.until,
        actor: scope.actor.as_deref(),
        limit,
        sort: scope.sort,
        explain: scope.explain,
    }
}

/// Runs a lexical search on `index`.
pub(crate) fn lexical(index: &LexicalIndex, text: &str, scope: &Scope, limit: usize) -> Vec<Hit> {
    index.search(&query_of(text, scope, limit))
}

/// A query must have a word to rank by: an empty one, or (by words) one of only common
/// words (which every memory shares), is a usage error rather than an empty or arbitrary
/// answer.
pub(crate) fn check_query(query: &str, mode: SearchMode) -> MemoirResult<()> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let usage = |message: String| MemoirError::Coded {
        code: exit::USAGE,
        message,
    };
    if words.is_empty() {
        return Err(usage(
            "search needs words to look for: the query has none".to_string(),
        ));
    }
    if mode != SearchMode::Semantic && words.iter().all(|w| is_stopword(w)) {
        return Err(usage(format!(
            "search needs a word that tells memories apart: {:?} has only common words",
            query.trim()
        )));
    }
    Ok(())
}

impl Memoir {
    /// Ranks the memories at a read point against `req.query`, in the default mode: hybrid
    /// when an embedding model is configured, else lexical (see [`Memoir::search_in`]).
    pub fn search(&self, req: &SearchRequest, at: &ReadPoint) -> MemoirResult<SearchOutcome> {
        self.search_in(None, req, at)
    }

    /// Ranks the memories at a read point against `req.query`, by words, meaning or both
    /// (`mode`; none: the default of [`Memoir::search`]). The index is answered from the
    /// cache kept beside the store, without opening it, when that reflects HEAD as of the
    /// store's last close; else brought up to date from the store. By meaning, vectors are
    /// made first for the memories that have none.
    pub fn search_in(
        &self,
        mode: Option<SearchMode>,
        req: &SearchRequest,
        at: &ReadPoint,
    ) -> MemoirResult<SearchOutcome> {
        self.search_by(mode, req, None, at)
    }

    /// [`Memoir::search_in`] among the records with an entry by agent `actor` (all of them
    /// when none): the filter is applied while ranking, so the best hits of that agent are
    /// found however far below others' they rank.
    pub(crate) fn search_by(
        &self,
        mode: Option<SearchMode>,
        req: &SearchRequest,
        actor: Option<&str>,
        at: &ReadPoint,
    ) -> MemoirResult<SearchOutcome> {
        let timer = self.clock().timer();
        let choice = self.choose_mode(mode)?;
        check_query(&req.query, choice.mode)?;
        if let Some(ns) = &req.namespace {
            validate_namespace(ns)?;
        }
        let now = self.clock().now_secs();
        let date = |d: &Option<String>| -> MemoirResult<Option<f64>> {
            Ok(d.as_deref()
                .map(|d| parse_date(d, now))
                .transpose()?
                .map(|t| t as f64))
        };
        let since = date(&req.since)?;
        let until = date(&req.until)?;
        let scope = Scope {
            namespace: req.namespace.clone(),
            globs: KeyGlobs::new(&req.keys)?,
            since,
            until,
            sort: req.sort,
            actor: actor.map(str::to_string),
            explain: req.explain,
        };
        let (mut index, mut notes) = self.index_for_read(at)?;
        let mut hits = self.ranked(&index, &req.query, &scope, req.limit, &choice, &mut notes)?;
        if index.damaged() {
            // A block of the cached index read above was not what was written: the hits are
            // discarded and searched again in an index rebuilt from the store.
            drop(index);
            (index, notes) = self.rebuild_index(at)?;
            hits = self.ranked(&index, &req.query, &scope, req.limit, &choice, &mut notes)?;
        }
        // Hits prove the namespace exists: only an empty answer looks it up.
        if let Some(ns) = req.namespace.as_ref().filter(|_| hits.is_empty()) {
            require_indexed_namespace(&index, ns)?;
        }
        let hits: Vec<SearchHit> = hits
            .into_iter()
            .map(|h| SearchHit {
                key: h.path,
                namespace: h.namespace,
                score: h.score,
                content: h.content,
                explain: req.explain.then(|| h.terms.into()),
            })
            .collect();
        Ok(SearchOutcome {
            success: true,
            query: req.query.clone(),
            mode: choice.mode.as_str(),
            count: hits.len(),
            hits,
            timing_ms: timer.ms(),
            notes,
            fallback: choice.fallback,
        })
    }

    /// The hits of `text` in `index` ranked in the chosen mode; by meaning, the vectors of
    /// the index's keys are brought up to date first.
    pub(crate) fn ranked(
        &self,
        index: &LexicalIndex,
        text: &str,
        scope: &Scope,
        limit: usize,
        choice: &ModeChoice,
        notes: &mut Vec<String>,
    ) -> MemoirResult<Vec<Hit>> {
        let Some(embedder) = choice.embedder.as_deref() else {
            return Ok(lexical(index, text, scope, limit));
        };
        if choice.mode == SearchMode::Lexical {
            return Ok(lexical(index, text, scope, limit));
        }
        let (vectors, said) = self.vectors_for(index, embedder)?;
        notes.extend(said);
        if !hybrid::aligned(index, &vectors) {
            // An empty store (no root), or vectors that could not be made for it.
            return Ok(lexical(index, text, scope, limit));
        }
        let query = self.embed_query(embedder, text)?;
        let q = query_of(text, scope, limit);
        Ok(match choice.mode {
            SearchMode::Semantic => hybrid::semantic(index, &vectors, &query, &q),
            _ => hybrid::hybrid(index, &vectors, &query, &q, &Fusion::default()),
        })
    }

    /// The lexical index at a read point, with diagnostics: the cached one when it reflects
    /// HEAD as of the store's last close (no store opened, no lock taken), else brought there from the store,
    /// whose handle is dropped before this returns. Each hit carries its record's content.
    pub(crate) fn index_for_read(
        &self,
        at: &ReadPoint,
    ) -> MemoirResult<(Arc<LexicalIndex>, Vec<String>)> {
        if self.keeps_open() {
            return self.warm_index_for_read(at);
        }
        let (index, at_closed_head) = self.cached_index(at);
        if at_closed_head {
            let note = "answered from the index of HEAD as of the store's last close";
            return Ok((Arc::new(index), vec![note.to_string()]));
        }
        let (repo, _, root) = self.open_read(at)?;
        let (index, notes, _) = self.synced(index, &repo, &root)?;
        Ok((Arc::new(index), notes))
    }

    /// The index at a read point rebuilt from the store (and saved over the cache), for when
    /// the cached one turned out damaged while it was read; the kept one of a server goes.
    pub(crate) fn rebuild_index(
        &self,
        at: &ReadPoint,
    ) -> MemoirResult<(Arc<LexicalIndex>, Vec<String>)> {
        self.warm
            .index
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let (repo, _, root) = self.open_read(at)?;
        let (index, mut notes, _) = self.synced(LexicalIndex::new(), &repo, &root)?;
        drop(repo);
        notes.insert(
            0,
            "the cached index was damaged: answered from one rebuilt from the store".to_string(),
        );
        Ok((Arc::new(index), notes))
    }

    /// For a handle that keeps the store open (a server): the index of the last read, kept
    /// in memory and brought to the read point's tree by the diff between the two (nothing
    /// to do when the tree is the same), instead of reading the cache file on every call.
    fn warm_index_for_read(
        &self,
        at: &ReadPoint,
    ) -> MemoirResult<(Arc<LexicalIndex>, Vec<String>)> {
        let (repo, _, root) = self.open_read(at)?;
        let mut slot = self.warm.index.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(warm) = slot.as_ref().filter(|i| i.root() == Some(&root)) {
            return Ok((Arc::clone(warm), Vec::new()));
        }
        // The last index, unless a caller still holds it (then the cache file's).
        let start = slot
            .take()
            .and_then(|i| Arc::try_unwrap(i).ok())
            .unwrap_or_else(|| load_cache(&cache_path(self.path())));
        let (index, notes, changed) = self.synced(start, &repo, &root)?;
        let index = Arc::new(index);
        // An index that had to be changed is kept in the form its changes left it in, which
        // searches slower than the compact one the cache file is read back as: the next read
        // takes the saved file instead.
        if !changed {
            *slot = Some(Arc::clone(&index));
        }
        Ok((index, notes))
    }

    /// `index` brought to the tree `root`, with diagnostics.
    fn synced(
        &self,
        index: LexicalIndex,
        repo: &Repo,
        root: &ObjectId,
    ) -> MemoirResult<(LexicalIndex, Vec<String>, bool)> {
        let (index, stats, save_error) =
            sync_loaded(index, self.path(), repo.tree(), repo.objects(), root)?;
        let changed = stats != SyncStats::default();
        let mut notes = Vec::new();
        if stats.rebuilt {
            notes.push(
                "index built from the store (the cache was missing, unreadable or named a tree \
                 the store no longer has)"
                    .to_string(),
            );
        }
        // A cache that cannot be written is skipped: the answer comes from the store.
        notes.extend(save_error.map(|e| format!("index cache not saved: {e}")));
        Ok((index, notes, changed))
    }

    /// The cached index, and whether it reflects HEAD as of the store's last close (see
    /// [`Repo::cached_head`]): a read at HEAD then needs neither the store nor its lock. Not
    /// so when that is not known, the store is held open here, or the read is at another
    /// revision or branch.
    pub(crate) fn cached_index(&self, at: &ReadPoint) -> (LexicalIndex, bool) {
        let index = load_cache(&cache_path(self.path()));
        if self.keeps_open() || at.at.is_some() {
            return (index, false);
        }
        let at_closed_head = Repo::cached_head(self.path()).is_some_and(|head| {
            at.branch
                .as_ref()
                .is_none_or(|b| head.head == Head::Branch(b.clone()))
                && index.root() == Some(&head.root)
        });
        (index, at_closed_head)
    }
}
