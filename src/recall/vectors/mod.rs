//! Vectors of memories for search by meaning: derived data kept beside the store in one
//! file (`cache/vectors.bin`, see `codec`), never hashed. A vector is keyed by the memory's
//! value (the first 12 bytes of its content hash, `codec::ID_PREFIX`) and the model that
//! made it, so a value that branches, revisions and merges share is embedded once. The file names the tree root whose keys it lists in
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

use crate::embed::F16;

use crate::object::ObjectId;
use codec::{prefix_of, Backing, IdPrefix, Layout, Parts};

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
    /// It was of an older layout and was read into this one (in memory: saving it writes
    /// the new layout).
    Upgraded,
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
        let mut head = [0u8; 8];
        if std::io::Read::read_exact(&mut &file, &mut head).is_ok() && &head != codec::MAGIC {
            // A file of version 1 is rewritten in this version (its vectors kept).
            if let Some(index) = std::fs::read(path)
                .ok()
                .and_then(|b| codec::upgrade(&b))
                .and_then(VectorIndex::from_bytes)
            {
                return (index, Opened::Upgraded);
            }
        }
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
        let mut held: HashMap<IdPrefix, usize> = HashMap::new();
        if let Some(l) = old {
            held.reserve(l.pool);
            for i in 0..l.pool {
                held.insert(l.id(i), i);
            }
        }
        // The new pool: the root's values in key order (first use), then the rest.
        let mut order: Vec<(IdPrefix, Source)> = Vec::new();
        let mut placed: HashMap<IdPrefix, u32> = HashMap::with_capacity(docs.len());
        let mut slots = Vec::with_capacity(docs.len());
        let mut texts: Vec<&str> = Vec::new();
        let mut sync = VectorSync::default();
        for (value, text) in docs {
            let value = prefix_of(value);
            let slot = *placed.entry(value).or_insert_with(|| {
                let from = match held.get(&value) {
                    Some(&i) => {
                        sync.reused += 1;
                        Source::Old(i)
                    }
                    None => {
                        texts.push(text);
                        Source::New(texts.len() - 1)
                    }
                };
                order.push((value, from));
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
        order: &[(IdPrefix, Source)],
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
                    scales.push(l.scale16(i));
                    vectors.extend_from_slice(l.vector(i));
                }
                // Only this index's vectors are listed as old.
                (Source::Old(_), None) => {
                    scales.push(F16::ZERO);
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
        let qs = qs.to_f32();
        // The keys not repeating an earlier key's value have vectors 0, 1, 2, ... in key
        // order: one pass over them, front to back, split between threads when large.
        let fresh = l.keys - l.repeats;
        let mut cos = vec![0f32; fresh];
        let vectors = &l.all_vectors()[..fresh * l.dims];
        let scales = l.scales16(fresh);
        let threads = if fresh >= PARALLEL_SCAN {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
        } else {
            1
        };
        let per = fresh.div_ceil(threads).max(1);
        std::thread::scope(|s| {
            for (i, out) in cos.chunks_mut(per).enumerate() {
                let (from, to) = (i * per, i * per + out.len());
                let (v, sc) = (&vectors[from * l.dims..to * l.dims], &scales[from..to]);
                let q = &q;
                if i + 1 == fresh.div_ceil(per) {
                    quant::dots(q, v, sc, qs, out);
                } else {
                    s.spawn(move || quant::dots(q, v, sc, qs, out));
                }
            }
        });
        if l.repeats == 0 {
            return cos;
        }
        l.slots()
            .into_iter()
            .map(|slot| match slot as usize {
                i if i < fresh => cos[i],
                i => quant::dot_i8(&q, l.vector(i)) as f32 * qs * l.scale16(i).to_f32(),
            })
            .collect()
    }
}

/// Vectors from which a search by meaning scans on more than one thread: below it, starting
/// a thread costs more than it saves.
const PARALLEL_SCAN: usize = 32_768;

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
    fn a_version_1_file_is_read_into_this_layout() {
        // Version 1: whole ids, f32 scales, a vector number for every key.
        let mut v1 = b"MVEC\0\0\0\x01".to_vec();
        v1.extend_from_slice(&1u32.to_le_bytes());
        v1.extend_from_slice(b"m");
        v1.extend_from_slice(&2u32.to_le_bytes());
        v1.extend_from_slice(&2u64.to_le_bytes());
        v1.extend_from_slice(&3u64.to_le_bytes());
        v1.push(1);
        v1.extend_from_slice(id(9).as_bytes());
        v1.extend_from_slice(id(1).as_bytes());
        v1.extend_from_slice(id(2).as_bytes());
        for s in [1.0f32 / 127.0, 0.5 / 127.0] {
            v1.extend_from_slice(&s.to_le_bytes());
        }
        v1.extend_from_slice(&[127, 0, 0, 127]);
        for s in [0u32, 1, 0] {
            v1.extend_from_slice(&s.to_le_bytes());
        }
        let sum = xxhash_rust::xxh3::xxh3_64(&v1);
        v1.extend_from_slice(&sum.to_le_bytes());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        std::fs::write(&path, &v1).unwrap();
        let (read, how) = VectorIndex::open_file(&path);
        assert_eq!(how, Opened::Upgraded);
        assert!(read.is_at("m", &id(9), 3));
        assert_eq!(&read.bytes()[..8], codec::MAGIC);
        let c = read.cosines(&[1.0, 0.0]);
        assert!(
            (c[0] - 1.0).abs() < 0.01 && c[1].abs() < 0.01 && (c[2] - 1.0).abs() < 0.01,
            "{c:?}"
        );
        // Its vectors are kept: the same docs embed nothing.
        let docs = [(id(1), "a"), (id(2), "b"), (id(1), "a")];
        let (_, s) = read
            .synced("m", &id(9), &docs, &mut |_: &[&str]| {
                Err::<Vec<Vec<f32>>, ()>(())
            })
            .unwrap();
        assert_eq!((s.embedded, s.reused), (0, 2));
        // Saved, it is read as this version; a damaged old file counts as none.
        read.save(&path).unwrap();
        assert_eq!(VectorIndex::open_file(&path).1, Opened::Read);
        let n = v1.len();
        v1[n - 20] ^= 1;
        std::fs::write(&path, &v1).unwrap();
        assert_eq!(VectorIndex::open_file(&path).1, Opened::Damaged);
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
