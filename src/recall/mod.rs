//! Recall: finding the memories that answer a question.
//!
//! [`lexical`] ranks keys and record contents with BM25F and needs no model. Its index is
//! derived data kept beside the store (never hashed, never part of history), named by the
//! tree root it reflects and brought up to date from tree diffs.

pub mod duplicate;
pub mod hybrid;
pub mod inventory;
pub mod lexical;
pub mod picker;
mod prune;
pub mod tokenize;
pub mod vectors;

use std::path::{Path, PathBuf};

pub use hybrid::{Fusion, SearchMode};
pub use inventory::TreeInventory;
pub use lexical::{Doc, Hit, IndexedDoc, LexicalIndex, Query, Sort, SyncStats};
pub use prune::LexicalCache;
pub use tokenize::Tokenizer;
pub use vectors::{VectorCache, VectorIndex};

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
    #[error(transparent)]
    Cache(#[from] CacheError),
}

/// Why the lexical index cache could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// Writing a cache file, or creating its directory, failed.
    #[error("writing {}: {source}", path.display())]
    Write {
        /// The cache file being written.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Removing a cache file failed.
    #[error("removing {}: {source}", path.display())]
    Remove {
        /// The cache file being removed.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file's bytes fail a check (checksum, magic, sizes, order, text).
    #[error("lexical index cache is damaged")]
    Damaged,
    /// The file ends before what its header announces.
    #[error("lexical index cache is truncated")]
    Truncated,
    /// The delta file was written for another cache file, or the index it is applied to
    /// has changed since it was read.
    #[error("lexical index delta does not belong to the cached index")]
    ForeignDelta,
    /// Reading a cache file failed.
    #[error("reading {}: {source}", path.display())]
    Read {
        /// The cache file being read.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The index is too large for the cache file's 32-bit offsets (4 GiB of any one text).
    #[error("lexical index too large for its cache file")]
    TooLarge,
}

/// Result alias of recall.
pub type RecallResult<T> = Result<T, RecallError>;

/// Where the lexical index cache of the store at `store_dir` lives.
pub fn cache_path(store_dir: &Path) -> PathBuf {
    store_dir.join("cache").join("lexical.idx")
}

/// Where the delta file beside the cache file at `path` lives (`lexical.delta`).
pub fn delta_path(path: &Path) -> PathBuf {
    path.with_extension("delta")
}

/// Opens the cached index at `path` in place (its blocks are checked as they are read; see
/// [`LexicalIndex::damaged`]) and applies its delta file when that belongs to it; a missing
/// or damaged cache gives an empty index (which the next sync rebuilds), never an error. A missing, damaged or foreign delta is ignored: the index then reflects the root
/// the full file names, and a sync brings it up to date from the tree diff.
pub fn load_cache(path: &Path) -> LexicalIndex {
    let Ok(mut index) = LexicalIndex::open_file(path) else {
        return LexicalIndex::default();
    };
    if let Ok(delta) = std::fs::read(delta_path(path)) {
        // On error the index is untouched (apply_delta checks everything first).
        let _ = index.apply_delta(&delta);
    }
    index
}

/// Replaces the file at `path` with `bytes`, atomically and durably.
fn write_atomically(path: &Path, bytes: &[u8]) -> RecallResult<()> {
    crate::store::write_cache_file(path, bytes).map_err(|e| {
        let source = match e {
            crate::store::StoreError::Io { source, .. } => source,
            other => std::io::Error::other(other),
        };
        CacheError::Write {
            path: path.to_path_buf(),
            source,
        }
        .into()
    })
}

/// Writes the whole index to `path` atomically (a temporary file renamed over the old one)
/// and then removes the delta file, which named the replaced file and would be ignored.
pub fn save_cache(path: &Path, index: &LexicalIndex) -> RecallResult<()> {
    write_atomically(path, &index.to_bytes()?)?;
    remove_delta(path)
}

/// Builds the index of every key under `root` straight into the cache file at `path` (see
/// [`lexical::Builder`]), removes the delta file, and opens the new file. A cache error
/// when the file cannot be written (the caller then builds in memory); a record that cannot
/// be read is an error naming its key.
pub fn build_cache(
    path: &Path,
    tree: &crate::prolly::NodeStore,
    objects: &crate::object::Objects,
    root: &crate::object::ObjectId,
) -> RecallResult<LexicalIndex> {
    // Records are read here while another thread counts their terms, in batches that go
    // back and forth between the two threads (so the texts of a million records take a few
    // buffers, not a few allocations each).
    const BATCH: usize = 256;
    let (send, receive) = std::sync::mpsc::sync_channel::<DocBatch>(8);
    let (give_back, take_back) = std::sync::mpsc::sync_channel::<DocBatch>(10);
    let (built, scanned) = std::thread::scope(|s| {
        let counter = s.spawn(move || -> RecallResult<lexical::Builder> {
            let mut b = lexical::Builder::new(lexical::Params::default());
            for mut batch in receive {
                for i in 0..batch.len() {
                    let (key, value, doc) = batch.get(i);
                    b.add(key, value, &doc)?;
                }
                batch.clear();
                // The reader may have stopped; the batch is then dropped here.
                let _ = give_back.try_send(batch);
            }
            Ok(b)
        });
        let mut failed = None;
        let mut batch = DocBatch::default();
        let scanned = tree.scan(root, &crate::prolly::KeyRange::all(), &mut |k, v| {
            if let Err(e) = batch.push_record(objects, k, v) {
                failed = Some(e);
                return false;
            }
            if batch.len() == BATCH {
                let next = take_back.try_recv().unwrap_or_default();
                let full = std::mem::replace(&mut batch, next);
                // A closed channel means the counter stopped on an error, reported below.
                return send.send(full).is_ok();
            }
            true
        });
        if failed.is_none() && scanned.is_ok() && batch.len() > 0 {
            let _ = send.send(batch);
        }
        drop(send);
        let built = counter
            .join()
            .unwrap_or_else(|_| Err(CacheError::Damaged.into()));
        (
            built,
            failed.map_or(scanned.map_err(RecallError::from), Err),
        )
    });
    scanned?;
    let mut builder = Some(built?);
    let written = crate::store::write_cache_file_with(path, &mut |w| match builder.take() {
        Some(b) => b.write(Some(root), w),
        None => Err(std::io::Error::other("the index was written already")),
    });
    if let Err(e) = written {
        return Err(match e {
            crate::store::StoreError::Io { source, .. }
                if source.kind() == std::io::ErrorKind::InvalidInput =>
            {
                CacheError::TooLarge.into()
            }
            crate::store::StoreError::Io { source, .. } => CacheError::Write {
                path: path.to_path_buf(),
                source,
            }
            .into(),
            other => CacheError::Write {
                path: path.to_path_buf(),
                source: std::io::Error::other(other),
            }
            .into(),
        });
    }
    remove_delta(path)?;
    LexicalIndex::open_file(path)
}

/// Removes the delta file beside the cache file at `path` (which named the file replaced).
fn remove_delta(path: &Path) -> RecallResult<()> {
    match std::fs::remove_file(delta_path(path)) {
        Err(source) if source.kind() != std::io::ErrorKind::NotFound => Err(CacheError::Remove {
            path: delta_path(path),
            source,
        }
        .into()),
        _ => Ok(()),
    }
}

/// Saves the index's changes since its cache file was read: as a delta file beside it while
/// they are few, else (or when the index was not read from a cache file) as a whole new
/// cache file ([`LexicalIndex::should_compact`]).
pub fn save_changes(path: &Path, index: &LexicalIndex) -> RecallResult<()> {
    match index.delta_bytes().filter(|_| !index.should_compact()) {
        Some(delta) => write_atomically(&delta_path(path), &delta),
        None => save_cache(path, index),
    }
}

/// Removes the lexical index cache of the store at `store_dir` (both files). The cache
/// holds record contents, so rewriting history to drop a content must drop the cache too;
/// the next search rebuilds it from the tree.
pub fn remove_cache(store_dir: &Path) -> RecallResult<()> {
    let path = cache_path(store_dir);
    for p in [delta_path(&path), path] {
        match std::fs::remove_file(&p) {
            Err(source) if source.kind() != std::io::ErrorKind::NotFound => {
                return Err(CacheError::Remove { path: p, source }.into())
            }
            _ => {}
        }
    }
    Ok(())
}

/// Documents read from the tree for an index build, their texts in shared buffers.
#[derive(Default)]
struct DocBatch {
    keys: Vec<u8>,
    texts: String,
    /// Per document: where its key, namespace, path and content end in the buffers, its
    /// value and its timestamp.
    rows: Vec<([usize; 4], crate::object::ObjectId, f64)>,
    /// Per document, the agents whose entries its record holds (empty for most).
    actors: Vec<Vec<String>>,
}

impl DocBatch {
    fn len(&self) -> usize {
        self.rows.len()
    }

    fn clear(&mut self) {
        self.keys.clear();
        self.texts.clear();
        self.rows.clear();
        self.actors.clear();
    }

    /// Reads the record `value` of encoded key `key` into the batch; an error naming the
    /// key when the value is not a record.
    fn push_record(
        &mut self,
        objects: &crate::object::Objects,
        key: &[u8],
        value: &crate::object::ObjectId,
    ) -> RecallResult<()> {
        let record = read_keyed(objects, key, value)?;
        self.keys.extend_from_slice(key);
        let key_end = self.keys.len();
        let ns_end = crate::key::push_split_encoded(key, &mut self.texts);
        let path_end = self.texts.len();
        record.push_content(&mut self.texts);
        let ends = [key_end, ns_end, path_end, self.texts.len()];
        self.rows.push((ends, *value, record.timestamp));
        self.actors.push(lexical::record_actors(&record));
        Ok(())
    }

    /// Document `i`: its encoded key, value and texts.
    fn get(&self, i: usize) -> (&[u8], &crate::object::ObjectId, lexical::DocView<'_>) {
        let (ends, value, timestamp) = &self.rows[i];
        let (key_start, text_start) = match i {
            0 => (0, 0),
            _ => (self.rows[i - 1].0[0], self.rows[i - 1].0[3]),
        };
        let doc = lexical::DocView {
            namespace: &self.texts[text_start..ends[1]],
            path: &self.texts[ends[1]..ends[2]],
            content: &self.texts[ends[2]..ends[3]],
            timestamp: *timestamp,
            actors: &self.actors[i],
        };
        (&self.keys[key_start..ends[0]], value, doc)
    }
}

/// The document of a stored memory record: its key, projected content and timestamp. A value
/// that is not a record is an error naming the key.
pub fn record_doc(
    objects: &crate::object::Objects,
    key: &[u8],
    value: &crate::object::ObjectId,
) -> RecallResult<Doc> {
    let r = read_keyed(objects, key, value)?;
    let (namespace, path) = crate::key::split_encoded(key);
    Ok(Doc {
        namespace,
        path,
        content: r.content(),
        timestamp: r.timestamp,
        actors: lexical::record_actors(&r),
    })
}

/// The record `value` of encoded key `key`; an error naming the key when the value is not a
/// record.
fn read_keyed(
    objects: &crate::object::Objects,
    key: &[u8],
    value: &crate::object::ObjectId,
) -> RecallResult<crate::memory::Record> {
    crate::memory::read_record(objects, value).map_err(|e| {
        let (namespace, path) = crate::key::split_encoded(key);
        RecallError::Load {
            key: format!("{namespace}:{path}"),
            reason: e.to_string(),
        }
    })
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
    let index = load_cache(&cache_path(store_dir));
    sync_loaded(index, store_dir, tree, objects, root)
}

/// As [`synced_index`], for an index the caller already loaded from the store's cache
/// ([`load_cache`]), so that it is not read twice.
pub fn sync_loaded(
    mut index: LexicalIndex,
    store_dir: &Path,
    tree: &crate::prolly::NodeStore,
    objects: &crate::object::Objects,
    root: &crate::object::ObjectId,
) -> RecallResult<(LexicalIndex, SyncStats, Option<RecallError>)> {
    let path = cache_path(store_dir);
    // Whether the index came from the cache, naming a root of its own (a failed sync leaves
    // the index empty, so this is asked first).
    let cached = index.root().is_some();
    // Built straight into the cache file; in memory (saved below) when that cannot be
    // written. The flag says whether the file holds it already.
    let rebuild = || -> RecallResult<(LexicalIndex, SyncStats, bool)> {
        match build_cache(&path, tree, objects, root) {
            Ok(index) => {
                let stats = SyncStats {
                    rebuilt: true,
                    inserted: index.len(),
                    removed: 0,
                };
                Ok((index, stats, true))
            }
            Err(RecallError::Cache(_)) => {
                let mut index = LexicalIndex::new();
                let mut stats = index.sync(tree, root, &mut |k, v| record_doc(objects, k, v))?;
                stats.rebuilt = true;
                Ok((index, stats, false))
            }
            Err(e) => Err(e),
        }
    };
    let synced = match cached {
        true => index
            .sync(tree, root, &mut |k, v| record_doc(objects, k, v))
            .ok(),
        false => None,
    };
    let (mut stats, mut saved) = match synced {
        Some(s) => (s, false),
        // No cache, or its root is gone (gc, purge) or unreadable: a cache is derived, so
        // it is rebuilt from the tree alone, and only what that finds is an error.
        None => {
            let (i, s, saved) = rebuild()?;
            index = i;
            (s, saved)
        }
    };
    if index.damaged() {
        (index, stats, saved) = rebuild()?;
    }
    let mut save_error = None;
    if stats != SyncStats::default() && !saved {
        match save_changes(&path, &index) {
            Ok(()) => {}
            // Writing it whole read a block of the cache file that turned out damaged.
            Err(RecallError::Cache(CacheError::Damaged)) => {
                (index, stats, saved) = rebuild()?;
                if !saved {
                    save_error = save_changes(&path, &index).err();
                }
            }
            Err(e) => save_error = Some(e),
        }
    }
    Ok((index, stats, save_error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_files_that_cannot_be_written_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("cache");
        std::fs::write(&blocker, b"a file where a directory should be").unwrap();
        let path = blocker.join("lexical.idx");
        let e = save_cache(&path, &LexicalIndex::new()).unwrap_err();
        assert!(matches!(e, RecallError::Cache(CacheError::Write { .. })));
        assert!(
            e.to_string()
                .starts_with(&format!("writing {}: ", path.display())),
            "{e}"
        );
    }
}
