//! On-disk backend: object bytes in append-only pack files, and an index from id to
//! location plus the refs in sled.
//!
//! Object ids are hashes, so objects arrive in random key order. Kept inside sled, every new
//! object rewrote a random, cold engine page full of other objects' bytes; in pack files a
//! batch of objects is one sequential write, and sled holds only 16-byte locations, whose
//! pages stay small and cached. No sled type appears in a public signature, so the engine
//! can be replaced without touching the layers above. A sled I/O error becomes
//! [`StoreError::Io`] naming the database directory; any other sled error becomes
//! [`StoreError::Backend`], with the sled error as its source.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use super::pack_index;
use super::packs::{Location, Packs, HEADER, RECORD_HEAD};
use super::ref_journal;
use super::run_index::{RunIndex, Slot};
use super::{
    Backend, Bytes, FileDamage, ObjectStore, PutOutcome, RawId, Reclaim, ReclaimReport,
    RefMismatch, RefMove, RefStore, StoreError, StoreResult,
};

/// Name of the sled tree that mapped each object id to its location in format version 2;
/// read once, when such a store's database is rebuilt in the current format.
const V2_INDEX_TREE: &str = "index";
/// Name of the sled tree holding refs by name (UTF-8 bytes).
const REFS_TREE: &str = "refs";
/// Name of the sled tree of the store's small metadata (key [`PACK_END`]).
const META_TREE: &str = "meta";
/// Key of [`META_TREE`]: the active pack and its length (u32 and u64, big-endian) at the
/// last flush. Everything a flush made durable lies before it; what lies beyond was never
/// acknowledged and is cut off when the database next opens.
const PACK_END: &[u8] = b"pack-end";
/// Name of the sled tree that held object bytes by id in format version 1; moved into packs
/// (and dropped) when such a store is opened.
const LEGACY_OBJECTS_TREE: &str = "objects";
/// Objects copied per pack write while moving a version-1 store's objects into packs.
const MIGRATE_BATCH_BYTES: usize = 8 << 20;
/// Records copied per pack write while reclaiming space.
const MOVE_BATCH: usize = 4096;

/// What [`SledBackend::must_rewrite`] decided for one pack.
enum Verdict {
    /// No dead bytes.
    Clean,
    /// Rewritten.
    Rewrite,
    /// Kept with its dead bytes; the pack's length.
    KeepDead(u64),
}

/// The on-disk backend: objects in pack files, their index and the refs in one sled
/// database.
///
/// Writes become durable only on [`ObjectStore::flush`] (sled's periodic background flush
/// is turned off), which syncs the packs before sled, so an index entry that survives a
/// crash names bytes that survived it too, for every object a ref can reach (refs move only
/// after a flush). Deleted objects' bytes stay in their packs until
/// [`ObjectStore::reclaim`]. Obtained through [`Store`](super::Store).
pub struct SledBackend {
    /// The database directory, named by the errors of its I/O.
    path: PathBuf,
    /// The store directory: the parent of the packs' directory, where the pack indexes are.
    store_dir: PathBuf,
    db: sled::Db,
    /// Boxed: the index's state is most of the backend's size.
    index: Box<RunIndex>,
    refs: sled::Tree,
    /// The small metadata: [`PACK_END`].
    meta: sled::Tree,
    /// Boxed, as the index is.
    packs: Box<Packs>,
}

impl fmt::Debug for SledBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SledBackend").finish_non_exhaustive()
    }
}

/// Maps the errors of the sled database in directory `db` to the store's engine-agnostic
/// errors: an I/O error names the directory, any other keeps the sled error as its source.
pub(super) fn engine(db: &Path) -> impl Fn(sled::Error) -> StoreError + '_ {
    move |e| match e {
        sled::Error::Io(source) => StoreError::Io {
            path: db.to_path_buf(),
            source,
        },
        other => StoreError::backend(other),
    }
}

/// The refs a database in directory `path` still holds, for a repair: `None` when it cannot
/// be opened or read (whatever the reason, a panic in the engine included). Only the `refs`
/// tree is read; the caller checks each value against the objects it found.
pub(crate) fn salvage_refs(path: &Path) -> Option<Vec<(String, Vec<u8>)>> {
    if !path.join(SledBackend::LOG_FILE).is_file() {
        return None;
    }
    std::panic::catch_unwind(|| {
        let db = open_engine(path, 1 << 20).ok()?;
        let refs = db.open_tree(REFS_TREE).ok()?;
        refs.iter()
            .map(|e| {
                let (k, v) = e.ok()?;
                Some((String::from_utf8(k.to_vec()).ok()?, v.to_vec()))
            })
            .collect()
    })
    .ok()
    .flatten()
}

/// Opens sled's database in directory `path` with a page cache of `cache_bytes`.
fn open_engine(path: &Path, cache_bytes: u64) -> sled::Result<sled::Db> {
    sled::Config::new()
        .path(path)
        .cache_capacity(cache_bytes)
        // LowSpace (sled's default): sled now holds only small index entries and refs, and
        // every command ends with an explicit flush, so write throughput is bounded by fsync,
        // not by the log layout; a memory store lives for years on a user's disk, so we keep
        // it compact.
        .mode(sled::Mode::LowSpace)
        // No background flusher: durability comes only from explicit `flush` calls, so the
        // upper layers' "objects, flush, ref, flush" order is what reaches disk.
        .flush_every_ms(None)
        .open()
}

/// Whether another handle still holds sled's lock on its log file at `log`: a handle that
/// was just dropped releases it only when sled's I/O threads let go of their last
/// reference, a moment after the store's LOCK was released. sled takes the same kind of OS
/// lock as the LOCK file, so a try of that lock tells, by its error kind. A missing log (a
/// new database) or a file system without locks is not held.
fn log_locked(log: &Path) -> bool {
    let Ok(file) = File::open(log) else {
        return false;
    };
    // On success the lock is released as `file` closes.
    matches!(file.try_lock(), Err(fs::TryLockError::WouldBlock))
}

/// Removes the snapshot files sled had not finished writing (`snap.*.generating`) from its
/// database directory `db`. sled rewrites its snapshot as it opens, to a `.generating` file
/// renamed over the old snapshot once synced; a process killed in between leaves it, and
/// sled 0.34 then picks it as the newest snapshot and refuses the database as corrupt. The
/// finished snapshot it was to replace is still there, and sled recovers from it and its log
/// as on every open, so removing the unfinished one loses nothing. Only the LOCK holder
/// calls this, before it opens sled.
fn remove_unfinished_snapshots(db: &Path) -> StoreResult<()> {
    let Ok(entries) = fs::read_dir(db) else {
        return Ok(()); // a new database: nothing to remove
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("snap.") && name.ends_with(".generating") {
            fs::remove_file(e.path()).map_err(|source| StoreError::Io {
                path: e.path(),
                source,
            })?;
        }
    }
    Ok(())
}

/// The [`PACK_END`] value of pack `end.0` at length `end.1`.
fn encode_pack_end(end: (u32, u64)) -> [u8; 12] {
    let mut v = [0u8; 12];
    v[..4].copy_from_slice(&end.0.to_be_bytes());
    v[4..].copy_from_slice(&end.1.to_be_bytes());
    v
}

/// The pack and length a [`PACK_END`] value holds; `None` for a value of another length.
fn decode_pack_end(v: &[u8]) -> Option<(u32, u64)> {
    let no = u32::from_be_bytes(v.get(..4)?.try_into().ok()?);
    let len = u64::from_be_bytes(v.get(4..12)?.try_into().ok()?);
    (v.len() == 12).then_some((no, len))
}

/// Turn a key of an id-keyed tree back into an id; any other length is corruption.
pub(super) fn raw_id(key: &[u8]) -> StoreResult<RawId> {
    RawId::try_from(key).map_err(|_| StoreError::BadIndexKey {
        len: key.len(),
        expected: 32,
    })
}

/// Decode a version-2 index value; anything but one location is corruption.
fn location(value: &[u8]) -> StoreResult<Location> {
    Location::decode(value).ok_or(StoreError::BadIndexValue {
        len: value.len(),
        expected: Location::BYTES,
    })
}

impl SledBackend {
    /// sled's log file inside its database directory.
    pub(crate) const LOG_FILE: &'static str = "db";

    /// Open (creating if missing) the sled database in directory `path`, with a page cache
    /// of `cache_bytes`, and the packs in directory `packs` (packs stop growing at
    /// `pack_bytes`); `None` while another handle still holds the database's lock. Objects
    /// of a version-1 store (bytes inside sled) are copied into packs (the store then
    /// rebuilds its database without them).
    pub(crate) fn try_open(
        path: &Path,
        packs: &Path,
        cache_bytes: u64,
        pack_bytes: u64,
    ) -> StoreResult<Option<Self>> {
        Self::open_with(path, packs, cache_bytes, pack_bytes, true)
    }

    /// Opens the sled database in directory `path` (a private copy of a store's database)
    /// over the packs in directory `packs`, which are only read: a store without write
    /// access. A version-1 store is refused (its objects are not in packs yet).
    pub(crate) fn open_read_only(
        path: &Path,
        packs: &Path,
        cache_bytes: u64,
    ) -> StoreResult<Option<Self>> {
        Self::open_with(path, packs, cache_bytes, 0, false)
    }

    fn open_with(
        path: &Path,
        packs: &Path,
        cache_bytes: u64,
        pack_bytes: u64,
        writable: bool,
    ) -> StoreResult<Option<Self>> {
        let log = path.join(Self::LOG_FILE);
        // Only the store's LOCK holder opens the database, yet sled's lock can be held for a
        // moment after a probe says it is free: a child that another thread of this process
        // is starting shares the process's open files (a probe's, or a closed handle's) until
        // it execs. sled says so only in words, the probe by type: a failed open whose lock
        // is held is waited for by the caller; one whose lock is free again is tried once
        // more before its error counts.
        let mut tries = 0;
        let db = loop {
            if log_locked(&log) {
                return Ok(None);
            }
            tries += 1;
            remove_unfinished_snapshots(path)?;
            match open_engine(path, cache_bytes) {
                Ok(db) => break db,
                Err(sled::Error::Io(_)) if log_locked(&log) => return Ok(None),
                Err(sled::Error::Io(_)) if tries < 2 => continue,
                Err(e) => return Err(engine(path)(e)),
            }
        };
        let index = Box::new(RunIndex::open(&db, path)?);
        let refs = db.open_tree(REFS_TREE).map_err(engine(path))?;
        let meta = db.open_tree(META_TREE).map_err(engine(path))?;
        let durable = meta
            .get(PACK_END)
            .map_err(engine(path))?
            .and_then(|v| decode_pack_end(&v));
        let backend = Self {
            path: path.to_path_buf(),
            store_dir: packs.parent().unwrap_or(packs).to_path_buf(),
            packs: Box::new(Packs::open(packs, pack_bytes, durable, writable)?),
            db,
            index,
            refs,
            meta,
        };
        if writable {
            backend.migrate_legacy()?;
        } else if backend.legacy_tree()?.is_some() {
            return Err(StoreError::ReadOnly);
        }
        Ok(Some(backend))
    }

    /// Copies the objects of a version-1 store (bytes in sled's `objects` tree) into packs
    /// and makes the copies durable. The old tree stays until the store's database is
    /// rebuilt without it and FORMAT says the current version, so a crash at any point leaves
    /// every object readable and no older build ever sees a store without its objects.
    fn migrate_legacy(&self) -> StoreResult<()> {
        let Some(old) = self.legacy_tree()? else {
            return Ok(());
        };
        let mut batch: Vec<(RawId, Vec<u8>)> = Vec::new();
        let mut bytes = 0;
        for entry in old.iter() {
            let (k, v) = entry.map_err(self.engine())?;
            bytes += v.len();
            batch.push((raw_id(&k)?, v.to_vec()));
            if bytes >= MIGRATE_BATCH_BYTES {
                self.put_many(&batch)?;
                batch.clear();
                bytes = 0;
            }
        }
        self.put_many(&batch)?;
        self.flush()
    }

    /// The version-1 objects tree, if this database still has one.
    fn legacy_tree(&self) -> StoreResult<Option<sled::Tree>> {
        self.tree_if_present(LEGACY_OBJECTS_TREE)
    }

    /// The tree `name`, if this database has it (never creating it).
    fn tree_if_present(&self, name: &str) -> StoreResult<Option<sled::Tree>> {
        if !self
            .db
            .tree_names()
            .iter()
            .any(|n| n.as_ref() == name.as_bytes())
        {
            return Ok(None);
        }
        self.db.open_tree(name).map(Some).map_err(self.engine())
    }

    /// Every object an older store's database indexes, with its location, for the rebuild
    /// of that database in the current format: a version-2 store's per-object tree `index`;
    /// otherwise the index itself (where [`SledBackend::try_open`] put a version-1 store's
    /// objects once they were copied into packs).
    pub(crate) fn entries_to_upgrade(&self) -> StoreResult<Vec<(RawId, Location)>> {
        let Some(old) = self.tree_if_present(V2_INDEX_TREE)? else {
            return self.index.entries();
        };
        let mut entries = Vec::new();
        for entry in old.iter() {
            let (k, v) = entry.map_err(self.engine())?;
            entries.push((raw_id(&k)?, location(&v)?));
        }
        Ok(entries)
    }

    /// Replaces the stored bytes of `id` without verification (inserting them if `id` is
    /// absent), durably, to simulate a damaged copy (feature `testing`).
    #[cfg(any(test, feature = "testing"))]
    pub fn overwrite_raw(&self, id: &RawId, bytes: &[u8]) -> StoreResult<()> {
        let loc = self.packs.append(&[(id, bytes)])?[0];
        self.index.writer().set(*id, Slot::At(loc));
        self.flush()
    }

    /// The error mapping of this database (see [`engine`]).
    fn engine(&self) -> impl Fn(sled::Error) -> StoreError + '_ {
        engine(&self.path)
    }

    /// The index entry of `id`, if any.
    fn locate(&self, id: &RawId) -> StoreResult<Option<Location>> {
        self.index.find(id)
    }

    /// Stores objects: one pack write for the whole batch, then, holding the index alone,
    /// one lookup per new object, which adds the entry only where none exists. An object
    /// already indexed keeps its entry when its stored bytes are equal (the copy just
    /// appended is dead bytes, erased by the next [`ObjectStore::reclaim`]) and is pointed
    /// at the new copy when they differ (a damaged copy). An entry is never moved off bytes
    /// that may be durable onto bytes that are not yet, so a crash cannot damage an object a
    /// ref reaches. Not atomic across objects, and need not be: objects only become
    /// reachable when a ref moves, after the flush that makes all of them durable (format
    /// section 10).
    fn store_objects(&self, objects: &[(&RawId, &[u8])]) -> StoreResult<Vec<PutOutcome>> {
        if objects.is_empty() {
            return Ok(Vec::new());
        }
        let locs = self.packs.append(objects)?;
        let mut out = Vec::with_capacity(objects.len());
        let mut index = self.index.writer();
        for ((id, bytes), loc) in objects.iter().zip(locs) {
            let Some(at) = index.find(id)? else {
                index.set(**id, Slot::At(loc));
                out.push(PutOutcome::Written);
                continue;
            };
            if self.packs.read(id, at)?.ok().as_deref() == Some(*bytes) {
                out.push(PutOutcome::Existing);
            } else {
                index.set(**id, Slot::At(loc));
                out.push(PutOutcome::Repaired);
            }
        }
        Ok(out)
    }

    /// Fills a new database: the index becomes `entries` (later entries of an id win) and
    /// each ref of `refs` is set, durably. The rebuild of a lost or damaged database from the
    /// packs and the ref log (`Store::repair`), and of an older store's (the upgrade).
    pub(crate) fn fill(
        &self,
        entries: &[(RawId, Location)],
        refs: &[(String, Vec<u8>)],
    ) -> StoreResult<()> {
        self.index.replace(entries)?;
        for (name, value) in refs {
            let _ = self.cas_ref(name, None, Some(value))?;
        }
        self.flush()
    }

    /// Syncs the packs, records how far they are durable ([`PACK_END`]), hands the index
    /// its changes, then flushes sled. The pack end is written before the index entries, so
    /// sled, which recovers a prefix of its writes, never keeps an entry beyond it.
    fn make_durable(&self) -> StoreResult<()> {
        let end = encode_pack_end(self.packs.sync()?);
        self.meta
            .insert(PACK_END, &end[..])
            .map_err(self.engine())?;
        self.index.write_pending()?;
        self.db.flush().map_err(self.engine())?;
        Ok(())
    }

    /// Whether sled found a database to recover when it opened (false: it made a new one).
    pub(crate) fn was_recovered(&self) -> bool {
        self.db.was_recovered()
    }

    /// Every index entry, grouped by the pack it points into.
    fn entries_by_pack(&self) -> StoreResult<HashMap<u32, Vec<(RawId, Location)>>> {
        let mut out: HashMap<u32, Vec<(RawId, Location)>> = HashMap::new();
        for (id, loc) in self.index.entries()? {
            out.entry(loc.pack).or_default().push((id, loc));
        }
        Ok(out)
    }

    /// Whether [`ObjectStore::reclaim`] under `rule` rewrites pack `no`, into which the
    /// index points at `live`. A pack whose records are all live is clean. One with dead
    /// bytes is rewritten when `rule` says so by their share, when it does not begin with
    /// the magic, or when its records, read in order from its start, do not end exactly at
    /// its end and pass through every live record (a record torn by a crash, after which
    /// readers of the pack alone, a pack index or a repair, would lose their way); otherwise
    /// it is kept, with its length.
    fn must_rewrite(
        &self,
        no: u32,
        live: &[(RawId, Location)],
        rule: Reclaim,
    ) -> StoreResult<Verdict> {
        if !self.packs.has_magic(no)? {
            return Ok(Verdict::Rewrite);
        }
        let records = self.packs.records_size(no)?;
        let live_bytes: u64 = live.iter().map(|(_, loc)| loc.record_bytes()).sum();
        let dead = records.saturating_sub(live_bytes);
        if dead == 0 {
            return Ok(Verdict::Clean);
        }
        let share = match rule {
            Reclaim::Everything => return Ok(Verdict::Rewrite),
            Reclaim::DeadShare(percent) => u64::from(percent),
        };
        if dead.saturating_mul(100) >= records.saturating_mul(share) {
            return Ok(Verdict::Rewrite);
        }
        let Some((len, scanned)) = self.packs.scan(no)? else {
            return Ok(Verdict::Rewrite);
        };
        let ends = scanned
            .last()
            .map_or(HEADER, |(_, off, n)| off + RECORD_HEAD + u64::from(*n));
        let found: HashSet<(RawId, u64, u32)> = scanned.into_iter().collect();
        let all_live = live
            .iter()
            .all(|(id, loc)| loc.pack == no && found.contains(&(*id, loc.offset, loc.len)));
        Ok(if ends == len && all_live {
            Verdict::KeepDead(len)
        } else {
            Verdict::Rewrite
        })
    }

    /// Whether the index points `id` at the record at `offset` of pack `no`: what a pack
    /// index rebuilt from the pack keeps (an error counts as no).
    pub(crate) fn points_at(&self, id: &RawId, no: u32, offset: u64) -> bool {
        matches!(self.locate(id), Ok(Some(loc)) if loc.pack == no && loc.offset == offset)
    }

    /// The bytes of `id`, read where the index points. A record that is not there whole
    /// is looked up once more (a concurrent rewrite may have just moved it); if it is still
    /// not there, the answer is what is wrong with it: a damaged object, never an absent one.
    fn read_indexed(&self, id: &RawId, loc: Location) -> StoreResult<Vec<u8>> {
        let mut damage = match self.packs.read(id, loc)? {
            Ok(bytes) => return Ok(bytes),
            Err(d) => d,
        };
        if let Some(now) = self.locate(id)?.filter(|now| *now != loc) {
            match self.packs.read(id, now)? {
                Ok(bytes) => return Ok(bytes),
                Err(d) => damage = d,
            }
        }
        Err(StoreError::Damaged { id: *id, damage })
    }
}

impl ObjectStore for SledBackend {
    fn get(&self, id: &RawId) -> StoreResult<Option<Bytes>> {
        match self.locate(id)? {
            Some(loc) => Ok(Some(self.read_indexed(id, loc)?.into())),
            None => Ok(None),
        }
    }

    fn put(&self, id: &RawId, bytes: &[u8]) -> StoreResult<PutOutcome> {
        Ok(self.store_objects(&[(id, bytes)])?[0])
    }

    /// One pack write for the whole batch, then one index compare-and-swap per new object
    /// (an object already indexed keeps its entry when its stored bytes are equal).
    fn put_many(&self, objects: &[(RawId, Vec<u8>)]) -> StoreResult<Vec<PutOutcome>> {
        let refs: Vec<(&RawId, &[u8])> = objects.iter().map(|(id, b)| (id, &b[..])).collect();
        self.store_objects(&refs)
    }

    fn contains(&self, id: &RawId) -> StoreResult<bool> {
        Ok(self.locate(id)?.is_some())
    }

    fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        self.index.ids_with_prefix(prefix)
    }

    fn for_each_id(&self, f: &mut dyn FnMut(RawId) -> bool) -> StoreResult<()> {
        for (id, _) in self.index.entries()? {
            if !f(id) {
                break;
            }
        }
        Ok(())
    }

    /// Drops the index entry (a tombstone from the next flush on); the bytes leave the disk
    /// at the next [`ObjectStore::reclaim`].
    fn delete(&self, id: &RawId) -> StoreResult<bool> {
        let mut index = self.index.writer();
        let found = index.find(id)?.is_some();
        if found {
            index.set(*id, Slot::Gone);
        }
        Ok(found)
    }

    /// Syncs the packs, then hands the index its changes (into `recent`, or moved into a
    /// run), then flushes sled.
    fn flush(&self) -> StoreResult<()> {
        self.make_durable()
    }

    /// Rewrites the packs `rule` picks among those holding bytes no index entry points at
    /// (deleted objects, extra copies from repeated writes, a tail torn by a crash), the
    /// active pack included: the records the index points into those packs are copied to a
    /// new pack, the copies are synced, the index is pointed at them and synced, and only
    /// then are the old packs deleted. A crash part way leaves every object readable from
    /// one copy or the other, and whatever it leaves behind is rewritten by the next call.
    /// The copy list comes from the index, never from parsing the old packs, so a torn
    /// record cannot hide the live records after it. See `SledBackend::must_rewrite` for
    /// which packs are picked; a pack kept with dead bytes gets its pack index rewritten from
    /// the index, so that closed reads do not see the objects it no longer has.
    fn reclaim(&self, rule: Reclaim) -> StoreResult<ReclaimReport> {
        let mut by_pack = self.entries_by_pack()?;
        let mut report = ReclaimReport::default();
        let mut victims = HashSet::new();
        let mut kept = Vec::new();
        for no in self.packs.numbers()? {
            let live = by_pack.get(&no).map_or(&[][..], Vec::as_slice);
            match self.must_rewrite(no, live, rule)? {
                Verdict::Clean => {}
                Verdict::Rewrite => {
                    victims.insert(no);
                }
                Verdict::KeepDead(len) => kept.push((no, len)),
            }
        }
        report.packs_kept_with_dead_bytes = kept.len() as u64;
        for (no, len) in kept {
            let live = by_pack.remove(&no).unwrap_or_default();
            pack_index::rewrite(&self.store_dir, no, len, &live);
        }
        if victims.is_empty() {
            return Ok(report);
        }
        if victims.contains(&self.packs.active_no()) {
            self.packs.roll()?;
        }
        let mut entries: Vec<(RawId, Location)> = Vec::new();
        for no in &victims {
            entries.extend(by_pack.remove(no).unwrap_or_default());
        }
        let mut moved: Vec<(RawId, Location, Location)> = Vec::with_capacity(entries.len());
        for chunk in entries.chunks(MOVE_BATCH) {
            let mut bytes = Vec::with_capacity(chunk.len());
            for (id, loc) in chunk {
                bytes.push(self.read_indexed(id, *loc)?);
            }
            let refs: Vec<(&RawId, &[u8])> = chunk
                .iter()
                .zip(&bytes)
                .map(|((id, _), b)| (id, &b[..]))
                .collect();
            let new = self.packs.append(&refs)?;
            moved.extend(
                chunk
                    .iter()
                    .zip(new)
                    .map(|((id, old), new)| (*id, *old, new)),
            );
        }
        {
            let mut index = self.index.writer();
            for (id, old, new) in &moved {
                // Nothing else writes meanwhile (gc runs alone); the check only guards that.
                if index.find(id)? == Some(*old) {
                    index.set(*id, Slot::At(*new));
                }
                report.bytes_rewritten += new.record_bytes();
            }
        }
        self.make_durable()?;
        let mut victims: Vec<u32> = victims.into_iter().collect();
        victims.sort_unstable();
        report.packs_rewritten = victims.len() as u64;
        for no in victims {
            self.packs.remove(no)?;
        }
        self.packs.sync()?;
        Ok(report)
    }
}

impl RefStore for SledBackend {
    fn get_ref(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        Ok(self
            .refs
            .get(name)
            .map_err(self.engine())?
            .map(|v| v.to_vec()))
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
            .map_err(self.engine())?
            .map_err(|cas| cas.current.map(|v| v.to_vec())))
    }

    fn cas_refs(&self, moves: &[RefMove<'_>]) -> StoreResult<Result<(), String>> {
        Ok(self
            .cas_refs_journaled(moves, &[], &[])?
            .map_err(|(name, _)| name))
    }

    fn list_refs(&self, prefix: &str) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.refs
            .scan_prefix(prefix)
            .map(|entry| {
                let (name, value) = entry.map_err(self.engine())?;
                let name =
                    String::from_utf8(name.to_vec()).map_err(|e| StoreError::BadRefName {
                        name: e.into_bytes(),
                    })?;
                Ok((name, value.to_vec()))
            })
            .collect()
    }
}

impl Backend for SledBackend {
    fn cas_refs_journaled(
        &self,
        moves: &[RefMove<'_>],
        lines: &[u8],
        logged: &[u8],
    ) -> StoreResult<Result<(), RefMismatch>> {
        ref_journal::move_refs(&self.refs, &self.meta, moves, lines, logged).map_err(self.engine())
    }

    fn ref_journal(&self) -> StoreResult<Vec<u8>> {
        ref_journal::read(&self.meta).map_err(self.engine())
    }

    fn size_on_disk(&self) -> StoreResult<u64> {
        Ok(self.db.size_on_disk().map_err(self.engine())?
            + self.index.size_on_disk()
            + self.packs.total_size()?)
    }

    /// Every pack that does not begin with the pack magic.
    fn check_files(&self) -> StoreResult<Vec<FileDamage>> {
        let mut out = Vec::new();
        for no in self.packs.numbers()? {
            out.extend(self.packs.magic_problem(no)?);
        }
        out.extend(
            self.index
                .damaged_runs()
                .into_iter()
                .map(|(file, problem)| FileDamage { file, problem }),
        );
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test vector of store-format.md for the `pack-end` entry.
    #[test]
    fn pack_end_vector() {
        let v = encode_pack_end((1, 52));
        assert_eq!(v, [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x34]);
        assert_eq!(decode_pack_end(&v), Some((1, 52)));
        assert_eq!(decode_pack_end(&v[..11]), None);
    }

    /// sled's lock on its log file is recognised by the kind of the lock error, and an open
    /// while it is held waits instead of failing.
    #[test]
    fn a_held_database_is_seen_as_held() {
        let dir = tempfile::tempdir().unwrap();
        let (db, packs) = (dir.path().join("db"), dir.path().join("packs"));
        let open = || SledBackend::try_open(&db, &packs, 1 << 20, 1 << 20).unwrap();
        let first = open().expect("a new database is free");
        assert!(log_locked(&db.join(SledBackend::LOG_FILE)));
        assert!(open().is_none(), "held by the first handle");
        drop(first);
        let start = std::time::Instant::now();
        // sled's I/O threads may keep it a moment after the handle is gone.
        let again = loop {
            if let Some(b) = open() {
                break b;
            }
            assert!(start.elapsed().as_secs() < 10, "never released");
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        drop(again);
    }
}
