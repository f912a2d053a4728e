//! On-disk backend on sled: objects and refs in two trees of one database.
//!
//! No sled type appears in a public signature, so the engine can be replaced without
//! touching the layers above. Every sled error becomes [`StoreError::Backend`].

use std::fmt;
use std::path::Path;

use super::{Backend, ObjectStore, PutOutcome, RawId, RefStore, StoreError, StoreResult};

/// Name of the sled tree holding object bytes by 32-byte id.
const OBJECTS_TREE: &str = "objects";
/// Name of the sled tree holding refs by name (UTF-8 bytes).
const REFS_TREE: &str = "refs";

/// The sled backend: objects and refs in one sled database.
///
/// Writes become durable only on [`ObjectStore::flush`] (sled's periodic background flush
/// is turned off), so the durability order of the layers above is exactly the order of
/// their `flush` calls. Obtained through [`Store`](super::Store).
pub struct SledBackend {
    db: sled::Db,
    objects: sled::Tree,
    refs: sled::Tree,
}

impl fmt::Debug for SledBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SledBackend").finish_non_exhaustive()
    }
}

/// Map a sled error to the store's engine-agnostic error, keeping its message.
fn engine(e: sled::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

/// Whether sled refused to open because its own lock on the database files is still held:
/// a handle that was just dropped releases it only when sled's I/O threads let go of their
/// last reference, a moment after the store's LOCK was released.
fn lock_held(e: &sled::Error) -> bool {
    matches!(e, sled::Error::Io(io) if io.to_string().starts_with("could not acquire lock"))
}

/// Turn a key of the objects tree back into an id; any other length is corruption.
fn raw_id(key: &[u8]) -> StoreResult<RawId> {
    RawId::try_from(key).map_err(|_| {
        StoreError::Backend(format!(
            "objects tree holds a key of {} bytes, expected 32",
            key.len()
        ))
    })
}

impl SledBackend {
    /// sled's log file inside its database directory.
    pub(crate) const LOG_FILE: &'static str = "db";

    /// Open (creating if missing) the sled database in directory `path`, with a page cache
    /// of `cache_bytes`.
    pub(crate) fn open(path: &Path, cache_bytes: u64) -> StoreResult<Self> {
        let db = sled::Config::new()
            .path(path)
            .cache_capacity(cache_bytes)
            // LowSpace (sled's default): objects are written once and never rewritten, and
            // every command ends with an explicit flush, so write throughput is bounded by
            // fsync, not by the log layout. HighThroughput would trade disk space (sled
            // keeps more fragmented segments) for throughput we cannot use; a memory store
            // lives for years on a user's disk, so we keep it compact.
            .mode(sled::Mode::LowSpace)
            // No background flusher: durability comes only from explicit `flush` calls, so
            // the upper layers' "objects, flush, ref, flush" order is what reaches disk.
            .flush_every_ms(None)
            .open()
            .map_err(|e| {
                if lock_held(&e) {
                    StoreError::Busy {
                        path: path.to_path_buf(),
                        waited_ms: 0,
                    }
                } else {
                    engine(e)
                }
            })?;
        let objects = db.open_tree(OBJECTS_TREE).map_err(engine)?;
        let refs = db.open_tree(REFS_TREE).map_err(engine)?;
        Ok(Self { db, objects, refs })
    }

    /// Test and fault-injection use: replace the stored bytes of `id` without verification
    /// (inserting them if `id` is absent), to simulate a damaged copy.
    pub fn overwrite_raw(&self, id: &RawId, bytes: &[u8]) -> StoreResult<()> {
        self.objects.insert(id, bytes).map_err(engine)?;
        Ok(())
    }
}

impl ObjectStore for SledBackend {
    fn get(&self, id: &RawId) -> StoreResult<Option<Vec<u8>>> {
        Ok(self.objects.get(id).map_err(engine)?.map(|v| v.to_vec()))
    }

    /// One engine operation: sled's `insert` returns the bytes it replaced and skips the
    /// write when they are the same, so a new object costs one tree descent and one write, a
    /// dedup hit one descent and one comparison, and a damaged copy is overwritten in the
    /// same step.
    fn put(&self, id: &RawId, bytes: &[u8]) -> StoreResult<PutOutcome> {
        let old = self.objects.insert(id, bytes).map_err(engine)?;
        Ok(match old {
            None => PutOutcome::Written,
            Some(stored) if stored.as_ref() == bytes => PutOutcome::Existing,
            Some(_) => PutOutcome::Repaired,
        })
    }

    /// Each object is `put` in order (so a repeated id sees the earlier entry of the same
    /// call, and outcomes are exact). Not one atomic engine batch: a batch would need a
    /// separate existence read per object (sled's batch does not report what it replaced),
    /// nearly doubling the cost of a write, and atomicity is not needed: objects only become
    /// reachable when a ref moves, after the flush that makes all of them durable (format
    /// section 10), so a crash part-way leaves only unreachable objects.
    fn put_many(&self, objects: &[(RawId, Vec<u8>)]) -> StoreResult<Vec<PutOutcome>> {
        objects.iter().map(|(id, b)| self.put(id, b)).collect()
    }

    fn contains(&self, id: &RawId) -> StoreResult<bool> {
        self.objects.contains_key(id).map_err(engine)
    }

    fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        self.objects
            .scan_prefix(prefix)
            .keys()
            .map(|k| raw_id(&k.map_err(engine)?))
            .collect()
    }

    fn for_each_id(&self, f: &mut dyn FnMut(RawId) -> bool) -> StoreResult<()> {
        for key in self.objects.iter().keys() {
            if !f(raw_id(&key.map_err(engine)?)?) {
                break;
            }
        }
        Ok(())
    }

    fn delete(&self, id: &RawId) -> StoreResult<bool> {
        Ok(self.objects.remove(id).map_err(engine)?.is_some())
    }

    /// Write out every dirty buffer of both trees and fsync.
    fn flush(&self) -> StoreResult<()> {
        self.db.flush().map_err(engine)?;
        Ok(())
    }
}

impl RefStore for SledBackend {
    fn get_ref(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        Ok(self.refs.get(name).map_err(engine)?.map(|v| v.to_vec()))
    }

    fn cas_ref(
        &self,
        name: &str,
        expected: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> StoreResult<Result<(), Option<Vec<u8>>>> {
        Ok(self
            .refs
            .compare_and_swap(name, expected, new)
            .map_err(engine)?
            .map_err(|cas| cas.current.map(|v| v.to_vec())))
    }

    fn list_refs(&self, prefix: &str) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.refs
            .scan_prefix(prefix)
            .map(|entry| {
                let (name, value) = entry.map_err(engine)?;
                let name = String::from_utf8(name.to_vec()).map_err(|_| {
                    StoreError::Backend("refs tree holds a name that is not UTF-8".into())
                })?;
                Ok((name, value.to_vec()))
            })
            .collect()
    }
}

impl Backend for SledBackend {
    fn size_on_disk(&self) -> StoreResult<u64> {
        self.db.size_on_disk().map_err(engine)
    }
}
