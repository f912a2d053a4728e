//! Recall: finding the memories that answer a question.
//!
//! [`lexical`] ranks keys and record contents with BM25F and needs no model. Its index is
//! derived data kept beside the store (never hashed, never part of history), named by the
//! tree root it reflects and brought up to date from tree diffs.

pub mod lexical;
pub mod picker;
pub mod tokenize;

use std::path::{Path, PathBuf};

pub use lexical::{Doc, Hit, LexicalIndex, Query, Sort, SyncStats};
pub use tokenize::Tokenizer;

use crate::prolly::ProllyError;

/// Errors of recall.
#[derive(Debug, thiserror::Error)]
pub enum RecallError {
    /// Reading the tree failed.
    #[error(transparent)]
    Tree(#[from] ProllyError),
    /// A value could not be read as a document.
    #[error("cannot index {key}: {reason}")]
    Load {
        /// The key (printed form).
        key: String,
        /// Why.
        reason: String,
    },
    /// The index cache could not be read or written (it is rebuilt when unreadable).
    #[error("{0}")]
    Cache(String),
}

/// Result alias of recall.
pub type RecallResult<T> = Result<T, RecallError>;

/// Where the lexical index cache of the store at `store_dir` lives.
pub fn cache_path(store_dir: &Path) -> PathBuf {
    store_dir.join("cache").join("lexical.idx")
}

/// Loads the cached index at `path`; a missing or damaged cache gives an empty index (which
/// the next sync rebuilds), never an error.
pub fn load_cache(path: &Path) -> LexicalIndex {
    std::fs::read(path)
        .ok()
        .and_then(|b| LexicalIndex::from_bytes(&b).ok())
        .unwrap_or_default()
}

/// Writes the index to `path` atomically (a temporary file renamed over the old one).
pub fn save_cache(path: &Path, index: &LexicalIndex) -> RecallResult<()> {
    let io = |e: std::io::Error| RecallError::Cache(format!("writing {}: {e}", path.display()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, index.to_bytes()).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)?;
    Ok(())
}

/// The document of a stored memory record: its key, projected content and timestamp. A value
/// that is not a record is an error naming the key.
pub fn record_doc(
    objects: &crate::object::Objects,
    key: &[u8],
    value: &crate::object::ObjectId,
) -> RecallResult<Doc> {
    let (namespace, path) = crate::key::split_encoded(key);
    match crate::memory::read_record(objects, value) {
        Ok(r) => Ok(Doc {
            namespace,
            path,
            content: r.content(),
            timestamp: r.timestamp,
        }),
        Err(e) => Err(RecallError::Load {
            key: format!("{namespace}:{path}"),
            reason: e.to_string(),
        }),
    }
}

/// The lexical index of the store at `store_dir` brought to `root`: loaded from the cache,
/// updated from the tree diff (or rebuilt), and saved back when it changed. A cache that
/// cannot be written is not an error (the index is derived data); it is reported in the
/// returned stats.
pub fn synced_index(
    store_dir: &Path,
    tree: &crate::prolly::NodeStore,
    objects: &crate::object::Objects,
    root: &crate::object::ObjectId,
) -> RecallResult<(LexicalIndex, SyncStats, Option<RecallError>)> {
    let path = cache_path(store_dir);
    let mut index = load_cache(&path);
    let stats = match index.sync(tree, root, &mut |k, v| record_doc(objects, k, v)) {
        Ok(s) => s,
        Err(e) if index.root().is_none() => return Err(e),
        Err(_) => {
            // The cached root may be gone (gc) or unreadable: rebuild from the tree alone,
            // and report what that finds.
            index = LexicalIndex::new();
            index.sync(tree, root, &mut |k, v| record_doc(objects, k, v))?
        }
    };
    let mut save_error = None;
    if stats != SyncStats::default() {
        if let Err(e) = save_cache(&path, &index) {
            save_error = Some(e);
        }
    }
    Ok((index, stats, save_error))
}
