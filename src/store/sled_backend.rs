//! On-disk backend: object bytes in append-only pack files, and an index from id to
//! location plus the refs in sled.
//!
//! Object ids are hashes, so objects arrive in random key order. Kept inside sled, every new
//! object rewrote a random, cold engine page full of other objects' bytes; in pack files a
//! batch of objects is one sequential write, and sled holds only 16-byte locations, whose
//! pages stay small and cached. No sled type appears in a public signature, so the engine
//! can be replaced without touching the layers above. Every sled error becomes
//! [`StoreError::Backend`].

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::Path;
use std::sync::Mutex;

use super::packs::{Location, Packs};
use super::{Backend, ObjectStore, PutOutcome, RawId, RefStore, StoreError, StoreResult};

/// Name of the sled tree mapping object ids to their locations in the packs.
const INDEX_TREE: &str = "index";
/// Name of the sled tree holding refs by name (UTF-8 bytes).
const REFS_TREE: &str = "refs";
/// Name of the sled tree that held object bytes by id in format version 1; moved into packs
/// (and dropped) when such a store is opened.
const LEGACY_OBJECTS_TREE: &str = "objects";
/// Objects copied per pack write while moving a version-1 store's objects into packs.
const MIGRATE_BATCH_BYTES: usize = 8 << 20;

/// The on-disk backend: objects in pack files, their index and the refs in one sled
/// database.
///
/// Writes become durable only on [`ObjectStore::flush`] (sled's periodic background flush
/// is turned off), which syncs the packs before sled, so an index entry that survives a
/// crash names bytes that survived it too, for every object a ref can reach (refs move only
/// after a flush). Obtained through [`Store`](super::Store).
pub struct SledBackend {
    db: sled::Db,
    index: sled::Tree,
    refs: sled::Tree,
    packs: Packs,
    /// Packs that lost an object since the last flush: the next flush rewrites them.
    dirty: Mutex<BTreeSet<u32>>,
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

/// Turn a key of the index back into an id; any other length is corruption.
fn raw_id(key: &[u8]) -> StoreResult<RawId> {
    RawId::try_from(key).map_err(|_| {
        StoreError::Backend(format!(
            "object index holds a key of {} bytes, expected 32",
            key.len()
        ))
    })
}

/// Decode an index value; anything but one location is corruption.
fn location(value: &[u8]) -> StoreResult<Location> {
    Location::decode(value).ok_or_else(|| {
        StoreError::Backend(format!(
            "object index holds a value of {} bytes, expected {}",
            value.len(),
            Location::BYTES
        ))
    })
}

impl SledBackend {
    /// sled's log file inside its database directory.
    pub(crate) const LOG_FILE: &'static str = "db";

    /// Open (creating if missing) the sled database in directory `path`, with a page cache
    /// of `cache_bytes`, and the packs in directory `packs` (packs stop growing at
    /// `pack_bytes`). Objects of a version-1 store (bytes inside sled) are copied into packs
    /// (see [`SledBackend::drop_legacy`]).
    pub(crate) fn open(
        path: &Path,
        packs: &Path,
        cache_bytes: u64,
        pack_bytes: u64,
    ) -> StoreResult<Self> {
        let db = sled::Config::new()
            .path(path)
            .cache_capacity(cache_bytes)
            // LowSpace (sled's default): sled now holds only small index entries and refs,
            // and every command ends with an explicit flush, so write throughput is bounded
            // by fsync, not by the log layout; a memory store lives for years on a user's
            // disk, so we keep it compact.
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
        let index = db.open_tree(INDEX_TREE).map_err(engine)?;
        let refs = db.open_tree(REFS_TREE).map_err(engine)?;
        let backend = Self {
            packs: Packs::open(packs, pack_bytes)?,
            db,
            index,
            refs,
            dirty: Mutex::new(BTreeSet::new()),
        };
        backend.migrate_legacy()?;
        Ok(backend)
    }

    /// Copies the objects of a version-1 store (bytes in sled's `objects` tree) into packs
    /// and makes the copies durable. The old tree stays until
    /// [`SledBackend::drop_legacy`], which the store calls once FORMAT says version 2, so a
    /// crash at any point leaves every object readable and no older build ever sees a store
    /// without its objects.
    fn migrate_legacy(&self) -> StoreResult<()> {
        let Some(old) = self.legacy_tree()? else {
            return Ok(());
        };
        let mut batch: Vec<(RawId, Vec<u8>)> = Vec::new();
        let mut bytes = 0;
        for entry in old.iter() {
            let (k, v) = entry.map_err(engine)?;
            bytes += v.len();
            batch.push((raw_id(&k)?, v.to_vec()));
            if bytes >= MIGRATE_BATCH_BYTES {
                self.put_many(&batch)?;
                batch.clear();
                bytes = 0;
            }
        }
        self.put_many(&batch)?;
        self.packs.sync()?;
        self.db.flush().map_err(engine)?;
        Ok(())
    }

    /// The version-1 objects tree, if this database still has one.
    fn legacy_tree(&self) -> StoreResult<Option<sled::Tree>> {
        let legacy = LEGACY_OBJECTS_TREE.as_bytes();
        if !self.db.tree_names().iter().any(|n| n.as_ref() == legacy) {
            return Ok(None);
        }
        self.db.open_tree(legacy).map(Some).map_err(engine)
    }

    /// Drops the version-1 objects tree, whose objects [`SledBackend::open`] copied.
    pub(crate) fn drop_legacy(&self) -> StoreResult<()> {
        if self.legacy_tree()?.is_some() {
            self.db
                .drop_tree(LEGACY_OBJECTS_TREE.as_bytes())
                .map_err(engine)?;
            self.db.flush().map_err(engine)?;
        }
        Ok(())
    }

    /// Test and fault-injection use: replace the stored bytes of `id` without verification
    /// (inserting them if `id` is absent), to simulate a damaged copy.
    pub fn overwrite_raw(&self, id: &RawId, bytes: &[u8]) -> StoreResult<()> {
        let loc = self.packs.append(&[(id, bytes)])?[0];
        self.index.insert(id, &loc.encode()[..]).map_err(engine)?;
        Ok(())
    }

    /// The index entry of `id`, if any.
    fn locate(&self, id: &RawId) -> StoreResult<Option<Location>> {
        match self.index.get(id).map_err(engine)? {
            Some(v) => Ok(Some(location(&v)?)),
            None => Ok(None),
        }
    }

    /// Rewrites the packs that lost objects since the last flush, and any other pack (but
    /// the one being appended to) that is mostly dead bytes: their live records are copied
    /// to the active pack, the copies are synced, the index is pointed at them and synced,
    /// and only then are the old packs deleted. Removed objects' bytes thereby leave the
    /// disk; a crash part way leaves every object readable from one copy or the other, and
    /// an old pack left behind is all dead bytes, which the next rewrite deletes.
    fn rewrite_packs(&self, dirty: BTreeSet<u32>) -> StoreResult<()> {
        let mut live: HashMap<u32, u64> = HashMap::new();
        for value in self.index.iter().values() {
            let loc = location(&value.map_err(engine)?)?;
            *live.entry(loc.pack).or_default() += loc.record_bytes();
        }
        let active = self.packs.active_no();
        let mut victims = Vec::new();
        for no in self.packs.numbers()? {
            let size = self.packs.size(no)?;
            let live = live.get(&no).copied().unwrap_or(0);
            if dirty.contains(&no) || (no != active && live * 2 < size) {
                victims.push(no);
            }
        }
        if victims.is_empty() {
            return Ok(());
        }
        if victims.contains(&active) {
            self.packs.roll()?;
        }
        let mut moved: Vec<(RawId, Location, Location)> = Vec::new();
        for &no in &victims {
            let mut keep: Vec<(RawId, Location, Vec<u8>)> = Vec::new();
            for (id, loc) in self.packs.records(no)? {
                if self.locate(&id)? == Some(loc) {
                    keep.push((id, loc, self.packs.read(&id, loc)?));
                }
            }
            let refs: Vec<(&RawId, &[u8])> = keep.iter().map(|(id, _, b)| (id, &b[..])).collect();
            let new = self.packs.append(&refs)?;
            moved.extend(
                keep.iter()
                    .zip(new)
                    .map(|((id, old, _), new)| (*id, *old, new)),
            );
        }
        self.packs.sync()?;
        for (id, old, new) in &moved {
            // Nothing else writes during a flush; the swap only guards against that.
            let _ = self
                .index
                .compare_and_swap(id, Some(&old.encode()[..]), Some(&new.encode()[..]))
                .map_err(engine)?;
        }
        self.db.flush().map_err(engine)?;
        for no in victims {
            self.packs.remove(no)?;
        }
        self.packs.sync()
    }
}

impl ObjectStore for SledBackend {
    fn get(&self, id: &RawId) -> StoreResult<Option<Vec<u8>>> {
        match self.locate(id)? {
            Some(loc) => Ok(Some(self.packs.read(id, loc)?)),
            None => Ok(None),
        }
    }

    fn put(&self, id: &RawId, bytes: &[u8]) -> StoreResult<PutOutcome> {
        Ok(self.put_many(&[(*id, bytes.to_vec())])?[0])
    }

    /// One pack write for the whole batch, then one index operation per new object: a
    /// compare-and-swap that adds the entry only where none exists. An object already
    /// indexed keeps its entry when its stored bytes are equal (the copy just appended is
    /// dead bytes, reclaimed by a later pack rewrite) and is pointed at the new copy when
    /// they differ (a damaged copy). An entry is never moved off bytes that may be durable
    /// onto bytes that are not yet, so a crash cannot damage an object a ref reaches. Not
    /// atomic across objects, and need not be: objects only become reachable when a ref
    /// moves, after the flush that makes all of them durable (format section 10).
    fn put_many(&self, objects: &[(RawId, Vec<u8>)]) -> StoreResult<Vec<PutOutcome>> {
        if objects.is_empty() {
            return Ok(Vec::new());
        }
        let refs: Vec<(&RawId, &[u8])> = objects.iter().map(|(id, b)| (id, &b[..])).collect();
        let locs = self.packs.append(&refs)?;
        let mut out = Vec::with_capacity(objects.len());
        for ((id, bytes), loc) in objects.iter().zip(locs) {
            let swap = self
                .index
                .compare_and_swap(id, None as Option<&[u8]>, Some(&loc.encode()[..]))
                .map_err(engine)?;
            let Err(cas) = swap else {
                out.push(PutOutcome::Written);
                continue;
            };
            let current = cas.current.as_deref().map(location).transpose()?;
            let stored = match current {
                Some(at) => Some(self.packs.read(id, at)?),
                None => None,
            };
            if stored.as_deref() == Some(&bytes[..]) {
                out.push(PutOutcome::Existing);
            } else {
                self.index.insert(id, &loc.encode()[..]).map_err(engine)?;
                out.push(PutOutcome::Repaired);
            }
        }
        Ok(out)
    }

    fn contains(&self, id: &RawId) -> StoreResult<bool> {
        self.index.contains_key(id).map_err(engine)
    }

    fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        self.index
            .scan_prefix(prefix)
            .keys()
            .map(|k| raw_id(&k.map_err(engine)?))
            .collect()
    }

    fn for_each_id(&self, f: &mut dyn FnMut(RawId) -> bool) -> StoreResult<()> {
        for key in self.index.iter().keys() {
            if !f(raw_id(&key.map_err(engine)?)?) {
                break;
            }
        }
        Ok(())
    }

    /// Drops the index entry; the bytes leave the disk when the next flush rewrites the
    /// object's pack.
    fn delete(&self, id: &RawId) -> StoreResult<bool> {
        let Some(old) = self.index.remove(id).map_err(engine)? else {
            return Ok(false);
        };
        if let Some(loc) = Location::decode(&old) {
            self.dirty
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(loc.pack);
        }
        Ok(true)
    }

    /// Syncs the packs, then sled; then, if objects were deleted, rewrites their packs.
    fn flush(&self) -> StoreResult<()> {
        self.packs.sync()?;
        self.db.flush().map_err(engine)?;
        let dirty = std::mem::take(&mut *self.dirty.lock().unwrap_or_else(|p| p.into_inner()));
        if dirty.is_empty() {
            return Ok(());
        }
        self.rewrite_packs(dirty.clone()).inspect_err(|_| {
            // Rewrite them at the next flush instead.
            self.dirty
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(dirty);
        })
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
        Ok(self.db.size_on_disk().map_err(engine)? + self.packs.total_size()?)
    }
}
