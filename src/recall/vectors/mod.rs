//! Vectors of memories for search by meaning: derived data kept beside the store in one
//! file (`cache/vectors.bin`, see `codec`), never hashed. A vector is keyed by the memory's
//! value (its content hash) and the model that made it, so a value that branches, revisions
//! and merges share is embedded once. The file names the tree root whose keys it lists in
//! key order; brought to another root, it embeds only the values it has no vector of, and
//! keeps the vectors of values no longer there for when a read goes back.
//!
//! Vectors are int8 (`quant`). The file is read in place and checked whole when opened
//! (size and checksum); a damaged file counts as none and is rebuilt.

mod codec;
mod prune;
pub mod quant;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use prune::VectorCache;

use crate::object::ObjectId;
use codec::{Backing, Layout, Parts};

/// The vector cache file, relative to the store directory.
pub const VECTOR_FILE: &str = "cache/vectors.bin";

/// Where the vector cache of the store at `store_dir` lives.
pub fn vector_path(store_dir: &Path) -> PathBuf {
    store_dir.join(VECTOR_FILE)
}

/// What makes vectors: one unit vector per text, in order.
pub type EmbedFn<'a, E> = dyn FnMut(&[&str]) -> Result<Vec<Vec<f32>>, E> + 'a;

/// Where a vector of a new file comes from: the old file's vector `i`, or fresh text `t`.
#[derive(Clone, Copy)]
enum Source {
    Old(usize),
    New(usize),
}

/// The vectors of one model: of the keys of one tree root, and of other values seen before.
#[derive(Clone, Default)]
pub struct VectorIndex {
    layout: Option<Layout>,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "VectorIndex({:?}, {} vectors, {} keys)",
            self.model(),
            self.vectors(),
            self.keys()
        )
    }
}

/// How a vector file was found when opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// There was none.
    Missing,
    /// It failed its checks (size, checksum, parts out of range) and counts as none.
    Damaged,
    /// It was read.
    Read,
}

/// What bringing the vectors to a root did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VectorSync {
    /// Values embedded now.
    pub embedded: usize,
    /// Values whose vector was there already.
    pub reused: usize,
}

impl VectorIndex {
    /// Opens the vector file at `path` in place, checked whole; a missing or damaged one
    /// gives an empty index, and says which.
    pub fn open_file(path: &Path) -> (VectorIndex, Opened) {
        let Ok(file) = std::fs::File::open(path) else {
            return (VectorIndex::default(), Opened::Missing);
        };
        // SAFETY: cache files are only ever replaced by renaming a new file over them, never
        // written in place or truncated, so the mapped bytes do not change under the map.
        #[allow(unsafe_code)]
        let Ok(map) = (unsafe { memmap2::Mmap::map(&file) }) else {
            return (VectorIndex::default(), Opened::Damaged);
        };
        match codec::read(Arc::new(Backing::Mapped(map))) {
            Ok(layout) => (
                VectorIndex {
                    layout: Some(layout),
                },
                Opened::Read,
            ),
            Err(_) => (VectorIndex::default(), Opened::Damaged),
        }
    }

    /// The index in `bytes` (a vector file's), checked.
    fn from_bytes(bytes: Vec<u8>) -> Option<VectorIndex> {
        let layout = codec::read(Arc::new(Backing::Owned(bytes))).ok()?;
        Some(VectorIndex {
            layout: Some(layout),
        })
    }

    /// The file's bytes (what [`VectorIndex::save`] writes).
    pub fn bytes(&self) -> &[u8] {
        self.layout.as_ref().map_or(&[], |l| &l.bytes[..])
    }

    /// Writes the index to `path`, atomically (a new file renamed over the old one).
    pub fn save(&self, path: &Path) -> Result<(), std::io::Error> {
        crate::store::write_cache_file(path, self.bytes()).map_err(|e| match e {
            crate::store::StoreError::Io { source, .. } => source,
            other => std::io::Error::other(other),
        })
    }

    /// The id of the model whose vectors these are (empty when there are none).
    pub fn model(&self) -> &str {
        self.layout.as_ref().map_or("", |l| l.model.as_str())
    }

    /// The tree root whose keys the index lists.
    pub fn root(&self) -> Option<&ObjectId> {
        self.layout.as_ref().and_then(|l| l.root.as_ref())
    }

    /// Vectors held (of distinct values).
    pub fn vectors(&self) -> usize {
        self.layout.as_ref().map_or(0, |l| l.pool)
    }

    /// Keys of the root listed.
    pub fn keys(&self) -> usize {
        self.layout.as_ref().map_or(0, |l| l.keys)
    }

    /// The length of the vectors.
    pub fn dims(&self) -> usize {
        self.layout.as_ref().map_or(0, |l| l.dims)
    }

    /// Whether the index lists the `keys` keys of `root` with vectors of `model`.
    pub fn is_at(&self, model: &str, root: &ObjectId, keys: usize) -> bool {
        self.model() == model && self.root() == Some(root) && self.keys() == keys
    }

    /// The index brought to `root`, whose keys' values and texts are `docs` in key order:
    /// the vector of each value already held is kept, the others are made by `embed` (all
    /// in one call, one unit vector per text). Vectors of another model are dropped.
    pub fn synced<E>(
        &self,
        model: &str,
        root: &ObjectId,
        docs: &[(ObjectId, &str)],
        embed: &mut EmbedFn<'_, E>,
    ) -> Result<(VectorIndex, VectorSync), E> {
        let old = self.layout.as_ref().filter(|l| l.model == model);
        let mut held: HashMap<ObjectId, usize> = HashMap::new();
        if let Some(l) = old {
            held.reserve(l.pool);
            for i in 0..l.pool {
                held.insert(l.id(i), i);
            }
        }
        // The new pool: the root's values in key order (first use), then the rest.
        let mut order: Vec<(ObjectId, Source)> = Vec::new();
        let mut placed: HashMap<ObjectId, u32> = HashMap::with_capacity(docs.len());
        let mut slots = Vec::with_capacity(docs.len());
        let mut texts: Vec<&str> = Vec::new();
        let mut sync = VectorSync::default();
        for (value, text) in docs {
            let slot = *placed.entry(*value).or_insert_with(|| {
                let from = match held.get(value) {
                    Some(&i) => {
                        sync.reused += 1;
                        Source::Old(i)
                    }
                    None => {
                        texts.push(text);
                        Source::New(texts.len() - 1)
                    }
                };
                order.push((*value, from));
                (order.len() - 1) as u32
            });
            slots.push(slot);
        }
        let fresh = if texts.is_empty() {
            Vec::new()
        } else {
            embed(&texts)?
        };
        sync.embedded = texts.len();
        let dims = fresh
            .first()
            .map(Vec::len)
            .or(old.map(|l| l.dims))
            .unwrap_or(0);
        let Some(old) = old else {
            return Ok((
                self.written(model, root, dims, &order, &fresh, &slots),
                sync,
            ));
        };
        if old.dims != dims {
            // The model now gives vectors of another length (an endpoint serving another
            // model under the same name): none of the held ones can be used.
            return VectorIndex::default().synced(model, root, docs, embed);
        }
        let mut rest: Vec<usize> = (0..old.pool)
            .filter(|i| !placed.contains_key(&old.id(*i)))
            .collect();
        rest.sort_unstable();
        order.extend(rest.into_iter().map(|i| (old.id(i), Source::Old(i))));
        Ok((
            self.written(model, root, dims, &order, &fresh, &slots),
            sync,
        ))
    }

    /// The index of the vectors `order` lists (of this index, or `fresh` ones), with the
    /// keys of `root` given by `slots`.
    fn written(
        &self,
        model: &str,
        root: &ObjectId,
        dims: usize,
        order: &[(ObjectId, Source)],
        fresh: &[Vec<f32>],
        slots: &[u32],
    ) -> VectorIndex {
        let mut ids = Vec::with_capacity(order.len());
        let mut scales = Vec::with_capacity(order.len());
        let mut vectors = Vec::with_capacity(order.len() * dims);
        for (id, from) in order {
            ids.push(*id);
            match (*from, &self.layout) {
                (Source::Old(i), Some(l)) => {
                    scales.push(l.scale(i));
                    vectors.extend_from_slice(l.vector(i));
                }
                // Only this index's vectors are listed as old.
                (Source::Old(_), None) => {
                    scales.push(0.0);
                    vectors.extend(std::iter::repeat_n(0, dims));
                }
                (Source::New(t), _) => {
                    let (mut q, s) = quant::quantize(&fresh[t]);
                    q.resize(dims, 0);
                    scales.push(s);
                    vectors.extend_from_slice(&q);
                }
            }
        }
        let bytes = codec::write(&Parts {
            model,
            dims: dims.max(1),
            root: Some(root),
            ids: &ids,
            scales: &scales,
            vectors: &vectors,
            slots,
        });
        VectorIndex::from_bytes(bytes).unwrap_or_default()
    }

    /// The cosine of `query` (a unit vector) with the vector of each key of the root, in key
    /// order.
    pub fn cosines(&self, query: &[f32]) -> Vec<f32> {
        let Some(l) = &self.layout else {
            return Vec::new();
        };
        if query.len() != l.dims {
            return vec![0.0; l.keys];
        }
        let (q, qs) = quant::quantize(query);
        (0..l.keys)
            .map(|k| {
                let i = l.slot(k);
                quant::dot_i8(&q, l.vector(i)) as f32 * qs * l.scale(i)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes([n; 32])
    }

    /// A stand-in model: a unit vector along the axis of the text's first letter.
    fn axis(texts: &[&str]) -> Result<Vec<Vec<f32>>, ()> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0; 8];
                v[(t.as_bytes()[0] - b'a') as usize % 8] = 1.0;
                v
            })
            .collect())
    }

    #[test]
    fn vectors_are_reused_across_roots_and_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let mut calls = Vec::new();
        let mut embed = |t: &[&str]| {
            calls.push(t.len());
            axis(t)
        };
        let docs = [(id(1), "apple"), (id(2), "banana"), (id(1), "apple")];
        let (a, s) = VectorIndex::default()
            .synced("m", &id(9), &docs, &mut embed)
            .unwrap();
        assert_eq!((s.embedded, s.reused, a.keys(), a.vectors()), (2, 0, 3, 2));
        a.save(&path).unwrap();
        let (read, how) = VectorIndex::open_file(&path);
        assert_eq!(how, Opened::Read);
        assert!(read.is_at("m", &id(9), 3));
        let c = read.cosines(&axis(&["b"]).unwrap()[0]);
        assert_eq!(c.len(), 3);
        assert!(
            c[1] > 0.99 && c[0].abs() < 0.01 && c[2].abs() < 0.01,
            "{c:?}"
        );
        // Another root drops banana and adds cherry; going back embeds nothing.
        let other = [(id(1), "apple"), (id(3), "cherry")];
        let (b, s) = read.synced("m", &id(8), &other, &mut embed).unwrap();
        assert_eq!((s.embedded, s.reused, b.keys(), b.vectors()), (1, 1, 2, 3));
        let (c, s) = b.synced("m", &id(9), &docs, &mut embed).unwrap();
        assert_eq!((s.embedded, s.reused), (0, 2));
        assert!(c.cosines(&axis(&["b"]).unwrap()[0])[1] > 0.99);
        // Another model starts again.
        let (_, s) = c.synced("n", &id(9), &docs, &mut embed).unwrap();
        assert_eq!(s.embedded, 2);
        assert_eq!(calls, vec![2, 1, 2]);
    }

    #[test]
    fn damaged_files_count_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let docs = [(id(1), "apple")];
        let (a, _) = VectorIndex::default()
            .synced("m", &id(9), &docs, &mut axis)
            .unwrap();
        let mut bytes = a.bytes().to_vec();
        let n = bytes.len();
        bytes[n / 2] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(VectorIndex::open_file(&path).1, Opened::Damaged);
        std::fs::write(&path, &a.bytes()[..n - 3]).unwrap();
        assert_eq!(VectorIndex::open_file(&path).1, Opened::Damaged);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(VectorIndex::open_file(&path).1, Opened::Missing);
    }
}
