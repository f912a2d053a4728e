//! Search by meaning at the application layer: the embedding model (loaded once, on first
//! use, from [`Options::embed`](super::Options), or given by the caller), and the vectors of
//! the memories at the root a search reads, kept in `cache/vectors.bin` and in memory.

use std::sync::{Arc, Mutex};

use crate::embed::{embedder, Embedder};
use crate::prolly::KeyRange;
use crate::recall::vectors::{vector_path, Opened};
use crate::recall::{LexicalIndex, SearchMode, VectorIndex};
use crate::store::ObjectStore;

use super::{Memoir, MemoirError, MemoirResult};

/// The embedding model and the last vectors of a handle.
#[derive(Default)]
pub(crate) struct Meaning {
    /// The model given by the caller, or loaded from the options on first use.
    embedder: Mutex<Option<Arc<dyn Embedder>>>,
    /// The vectors of the last search by meaning (valid at any later one: they are keyed by
    /// model and root).
    vectors: Mutex<Option<Arc<VectorIndex>>>,
}

impl std::fmt::Debug for Meaning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Meaning")
    }
}

/// The mode a search runs in, the model it needs, and what was said about the choice.
pub(crate) struct ModeChoice {
    pub mode: SearchMode,
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Why the mode asked for is not the one run (hybrid without a model).
    pub fallback: Option<String>,
}

impl Memoir {
    /// Searches by meaning with `embedder` (a caller's own model: the Python binding passes
    /// a callable) instead of the one the options configure.
    pub fn set_embedder(&self, embedder: Arc<dyn Embedder>) {
        *self
            .meaning
            .embedder
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(embedder);
    }

    /// The embedding model: the caller's, else the configured one loaded now (an error
    /// when its files cannot be read); `None` when none is configured.
    pub(crate) fn embedder(&self) -> MemoirResult<Option<Arc<dyn Embedder>>> {
        let mut slot = self
            .meaning
            .embedder
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(e) = slot.as_ref() {
            return Ok(Some(Arc::clone(e)));
        }
        let Some(cfg) = &self.opts.embed else {
            return Ok(None);
        };
        let e = embedder(cfg)?;
        *slot = Some(Arc::clone(&e));
        Ok(Some(e))
    }

    /// Whether an embedding model is configured or given (not yet loaded, maybe).
    pub(crate) fn has_embedder(&self) -> bool {
        self.opts.embed.is_some()
            || self
                .meaning
                .embedder
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_some()
    }

    /// The mode a search asked for `asked` runs in: the default is hybrid with a model,
    /// lexical without; semantic without a model is an error naming the setting, and hybrid
    /// without one is lexical, saying so.
    pub(crate) fn choose_mode(&self, asked: Option<SearchMode>) -> MemoirResult<ModeChoice> {
        let configured = self.has_embedder();
        let lexical = |fallback: Option<String>| ModeChoice {
            mode: SearchMode::Lexical,
            embedder: None,
            fallback,
        };
        match (asked, configured) {
            (Some(SearchMode::Lexical), _) | (None, false) => Ok(lexical(None)),
            (Some(SearchMode::Semantic), false) => Err(MemoirError::invalid(
                "semantic search needs an embedding model: set MEMOIR_EMBED_MODEL to a model \
                 directory or openai:NAME (or the embed.model setting)",
            )),
            (Some(SearchMode::Hybrid), false) => Ok(lexical(Some(
                "no embedding model is configured (MEMOIR_EMBED_MODEL): hybrid search is \
                 lexical"
                    .to_string(),
            ))),
            (mode, true) => Ok(ModeChoice {
                mode: mode.unwrap_or(SearchMode::Hybrid),
                embedder: self.embedder()?,
                fallback: None,
            }),
        }
    }

    /// The vectors of `embedder` for the keys of `index` (at its root): in memory or in the
    /// cache file when they are there, else brought there by embedding only the values no
    /// vector is held of, and saved. Notes say what was done.
    pub(crate) fn vectors_for(
        &self,
        index: &LexicalIndex,
        embedder: &dyn Embedder,
    ) -> MemoirResult<(Arc<VectorIndex>, Vec<String>)> {
        let model = embedder.model_id();
        let mut notes = Vec::new();
        let Some(root) = index.root().copied() else {
            return Ok((Arc::new(VectorIndex::default()), notes));
        };
        let mut warm = self
            .meaning
            .vectors
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(v) = warm
            .as_ref()
            .filter(|v| v.is_at(&model, &root, index.len()))
        {
            return Ok((Arc::clone(v), notes));
        }
        let path = vector_path(self.path());
        let mut upgraded = false;
        let start = match warm.take().filter(|v| v.model() == model) {
            Some(v) => v,
            None => {
                let (v, opened) = VectorIndex::open_file(&path);
                if opened == Opened::Damaged {
                    notes.push(
                        "the vector cache was damaged: its vectors are made again".to_string(),
                    );
                }
                upgraded = opened == Opened::Upgraded;
                Arc::new(v)
            }
        };
        if start.is_at(&model, &root, index.len()) {
            if upgraded {
                notes.push("the vector cache was rewritten in its new layout".to_string());
                self.save_vectors(&start, &root, &path, &mut notes);
            }
            *warm = Some(Arc::clone(&start));
            return Ok((start, notes));
        }
        let docs = index.docs_in(&KeyRange::all());
        let texts: Vec<(crate::object::ObjectId, &str)> = docs
            .iter()
            .map(|d| {
                let text = if d.content.trim().is_empty() {
                    d.path
                } else {
                    d.content
                };
                (d.value, text)
            })
            .collect();
        let (vectors, sync) = start.synced(&model, &root, &texts, &mut |t| embedder.embed(t))?;
        if sync.embedded > 0 {
            notes.push(format!(
                "embedded {} memories ({} vectors reused)",
                sync.embedded, sync.reused
            ));
        }
        self.save_vectors(&vectors, &root, &path, &mut notes);
        let vectors = Arc::new(vectors);
        *warm = Some(Arc::clone(&vectors));
        Ok((vectors, notes))
    }

    /// Writes `vectors` (at `root`) to the cache file `path`: holding the store's LOCK, as
    /// every cache is, and only while the store has the root, so that a garbage collection
    /// that removed its values meanwhile is not undone. A failure is a note.
    fn save_vectors(
        &self,
        vectors: &VectorIndex,
        root: &crate::object::ObjectId,
        path: &std::path::Path,
        notes: &mut Vec<String>,
    ) {
        match self.open_store() {
            Ok(store) if store.contains(root.as_bytes()).unwrap_or(false) => {
                if let Err(e) = vectors.save(path) {
                    notes.push(format!("vector cache not saved: {e}"));
                }
            }
            Ok(_) => notes.push("vector cache not saved: the store no longer has its tree".into()),
            Err(e) => notes.push(format!("vector cache not saved: {e}")),
        }
    }

    /// The unit vector of a query.
    pub(crate) fn embed_query(
        &self,
        embedder: &dyn Embedder,
        text: &str,
    ) -> MemoirResult<Vec<f32>> {
        let mut v = embedder.embed(&[text])?;
        v.pop().ok_or_else(|| {
            crate::embed::EmbedError::Malformed("no vector for the query".into()).into()
        })
    }
}
