//! On-disk backend: object bytes in append-only pack files, found through the object index
//! derived from them (`object_index`), and the refs and the ref journal in sled.
//!
//! Object ids are hashes, so objects arrive in random key order. Kept inside sled, every new
//! object rewrote a random, cold engine page full of other objects' bytes; in pack files a
//! batch of objects is one sequential write, and the pack index files are read in place.
//! sled holds only what must change in place and atomically: the refs (several move in one
//! transaction) and the small metadata. No sled type appears in a public signature, so the
//! engine can be replaced without touching the layers above (see `sled_error`).

use std::collections::HashMap;
use std::fmt;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use super::files::{io_err, sync_dir};
use super::head_cache::CachedRefs;
use super::lifecycle::DB_DIR;
use super::object_index::ObjectIndex;
use super::packs::{Location, Packs, PACKS_DIR};
use super::ref_journal;

mod reclaim;
use super::{
    Backend, Bytes, FileDamage, ObjectStore, OpenOptions, PutOutcome, RawId, Reclaim,
    ReclaimReport, RefMismatch, RefMove, RefStore, StoreError, StoreResult,
};

/// Name of the sled tree holding refs by name (UTF-8 bytes).
const REFS_TREE: &str = "refs";
/// Name of the sled tree of the store's small metadata (the ref journal).
const META_TREE: &str = "meta";
/// Name of the sled tree that held object bytes by id in format version 1; moved into packs
/// (and dropped) when such a store is opened.
const LEGACY_OBJECTS_TREE: &str = "objects";
/// Bytes of objects copied per pack write while moving a version-1 store's objects into packs.
const MIGRATE_BATCH_BYTES: usize = 8 << 20;
/// The on-disk backend: objects in pack files and their index, the refs in a sled database.
///
/// Writes become durable only on [`ObjectStore::flush`] (sled's periodic background flush
/// is turned off), which syncs the packs before sled, so every object a ref can reach
/// (refs move only after a flush) survives a crash that the ref survives. Deleted objects'
/// bytes stay in their packs until [`ObjectStore::reclaim`]. Obtained through
/// [`Store`](super::Store).
///
/// A closed read (see [`Store::read_closed`](super::Store::read_closed)) is this backend
/// without the database: the refs are those the last close recorded, and the packs and
/// their index are read only up to the lengths it recorded, through the same read path.
pub struct DiskBackend {
    /// The database directory, named by the errors of its I/O.
    path: PathBuf,
    home: RefHome,
    /// Where each object is (boxed: its state is most of the backend's size).
    index: Box<ObjectIndex>,
    /// Boxed, as the index is.
    packs: Box<Packs>,
}

/// Where the refs of a [`DiskBackend`] are.
enum RefHome {
    /// The store's sled database.
    Database(Database),
    /// A closed read: every ref as the last close recorded it, sorted by name; the
    /// fingerprint of the engine's log at that close; the packs' recorded lengths together.
    Recorded {
        refs: Refs,
        print: Vec<u8>,
        size: u64,
    },
}

/// The sled database of a store: the refs, and the small metadata (the ref journal).
struct Database {
    db: sled::Db,
    refs: sled::Tree,
    meta: sled::Tree,
}

impl fmt::Debug for DiskBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DiskBackend").finish_non_exhaustive()
    }
}

/// Maps the errors of the sled database in directory `db` to the store's engine-agnostic
/// errors: an I/O error names the directory, any other keeps the sled error as its source.
fn sled_error(db: &Path) -> impl Fn(sled::Error) -> StoreError + '_ {
    move |e| match e {
        sled::Error::Io(source) => StoreError::Io {
            path: db.to_path_buf(),
            source,
        },
        other => StoreError::Backend(Box::new(other)),
    }
}

/// Every ref, by name, with its value.
pub(crate) type Refs = Vec<(String, Vec<u8>)>;

/// The refs and the ref journal a database in directory `path` still holds, for a repair:
/// `None` when it cannot be opened or read (whatever the reason, a panic in the engine
/// included). The caller checks each ref's value against the objects it found.
pub(crate) fn salvage(path: &Path) -> Option<(Refs, Vec<u8>)> {
    if !path.join(DiskBackend::LOG_FILE).is_file() {
        return None;
    }
    std::panic::catch_unwind(|| {
        let db = open_engine(path, 1 << 20).ok()?;
        let refs = db.open_tree(REFS_TREE).ok()?;
        let refs = refs
            .iter()
            .map(|e| {
                let (k, v) = e.ok()?;
                Some((String::from_utf8(k.to_vec()).ok()?, v.to_vec()))
            })
            .collect::<Option<Vec<_>>>()?;
        let journal = ref_journal::read(&db.open_tree(META_TREE).ok()?).ok()?;
        Some((refs, journal))
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
            fs::remove_file(e.path()).map_err(io_err(&e.path()))?;
        }
    }
    Ok(())
}

impl DiskBackend {
    /// sled's log file inside its database directory.
    pub(crate) const LOG_FILE: &'static str = "db";

    /// Opens (creating if missing) the sled database in directory `path` over the packs in
    /// directory `packs`, with the page cache, pack size and record check of `opts`; `None`
    /// while another handle still holds the database's lock. With `writable`, the objects of
    /// a version-1 store (bytes inside sled) are copied into packs (the store then rebuilds
    /// its database without them). Without it the packs are only read (the private copy of
    /// the database of a store without write access), and a version-1 store is refused.
    pub(crate) fn open(
        path: &Path,
        packs: &Path,
        opts: &OpenOptions,
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
            match open_engine(path, opts.cache_bytes) {
                Ok(db) => break db,
                Err(sled::Error::Io(_)) if log_locked(&log) => return Ok(None),
                Err(sled::Error::Io(_)) if tries < 2 => continue,
                Err(e) => return Err(sled_error(path)(e)),
            }
        };
        let refs = db.open_tree(REFS_TREE).map_err(sled_error(path))?;
        let meta = db.open_tree(META_TREE).map_err(sled_error(path))?;
        // The index first: it cuts a torn end off the newest pack before appends start.
        let index = Box::new(ObjectIndex::open(packs, opts.verify, writable)?);
        let backend = Self {
            path: path.to_path_buf(),
            packs: Box::new(Packs::open(packs, opts.pack_bytes, writable)?),
            index,
            home: RefHome::Database(Database { db, refs, meta }),
        };
        if writable {
            // A newest pack shorter than its index file says (damage) takes no appends: they
            // would land where the index names other records.
            let active = backend.packs.active_no();
            let covered = backend.index.covered(active);
            if covered.is_some_and(|c| c > backend.packs.size(active).unwrap_or(0)) {
                backend.packs.roll()?;
            }
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
            let (k, v) = entry.map_err(self.sled_error())?;
            // Any key length but an id's is corruption.
            let id = RawId::try_from(&k[..]).map_err(|_| StoreError::BadIndexKey {
                len: k.len(),
                expected: 32,
            })?;
            bytes += v.len();
            batch.push((id, v.to_vec()));
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
        let db = &self.database()?.db;
        if !db
            .tree_names()
            .iter()
            .any(|n| n.as_ref() == LEGACY_OBJECTS_TREE.as_bytes())
        {
            return Ok(None);
        }
        db.open_tree(LEGACY_OBJECTS_TREE)
            .map(Some)
            .map_err(self.sled_error())
    }

    /// Replaces the stored bytes of `id` without verification (inserting them if `id` is
    /// absent), durably, to simulate a damaged copy (feature `testing`).
    #[cfg(any(test, feature = "testing"))]
    pub fn overwrite_raw(&self, id: &RawId, bytes: &[u8]) -> StoreResult<()> {
        let loc = self.packs.append(&[(id, bytes)])?[0];
        self.index.add(&[(*id, loc)]);
        self.flush()?;
        // Indexed in the pack's index file, as a copy damaged after it was written would be
        // (a tail's damaged record is stepped over when the store next opens).
        self.index.write_pack_file(loc.pack)
    }

    /// The store at `dir` as `cached` records it, for a closed read, or `None` if its packs
    /// are no longer as recorded (one is gone or shorter) or a pack's unindexed tail is too
    /// long to read.
    pub(crate) fn open_closed(dir: &Path, cached: CachedRefs) -> Option<DiskBackend> {
        let packs_dir = dir.join(PACKS_DIR);
        Some(DiskBackend {
            path: dir.join(DB_DIR),
            index: Box::new(ObjectIndex::open_closed(&packs_dir, &cached.packs)?),
            packs: Box::new(Packs::open_closed(&packs_dir, &cached.packs).ok()?),
            home: RefHome::Recorded {
                size: cached.packs.iter().map(|(_, len)| len).sum(),
                refs: cached.refs,
                print: cached.print,
            },
        })
    }

    /// The fingerprint of the engine's log at the close a closed read reads (`None`: the
    /// database is open).
    pub(crate) fn closed_print(&self) -> Option<&[u8]> {
        match &self.home {
            RefHome::Recorded { print, .. } => Some(print),
            RefHome::Database(_) => None,
        }
    }

    /// The database; a closed read has none, and writes nothing.
    fn database(&self) -> StoreResult<&Database> {
        match &self.home {
            RefHome::Database(d) => Ok(d),
            RefHome::Recorded { .. } => Err(StoreError::ReadOnly),
        }
    }

    /// Moves refs as [`RefStore::cas_refs`] does and, in the same transaction, updates the
    /// *ref journal*, the ref log's lines of the newest moves: drops `logged` (lines the log
    /// holds) and appends `lines`. A crash between the flush that makes a move durable and
    /// the log's append then leaves its line where the next open finds it. On a mismatch
    /// nothing changes, and the name and current value of the first ref that differs are
    /// returned.
    pub(crate) fn move_refs(
        &self,
        moves: &[RefMove<'_>],
        lines: &[u8],
        logged: &[u8],
    ) -> StoreResult<Result<(), RefMismatch>> {
        let d = self.database()?;
        ref_journal::move_refs(&d.refs, &d.meta, moves, lines, logged).map_err(self.sled_error())
    }

    /// The ref journal (see [`DiskBackend::move_refs`]).
    pub(crate) fn ref_journal(&self) -> StoreResult<Vec<u8>> {
        ref_journal::read(&self.database()?.meta).map_err(self.sled_error())
    }

    /// The error mapping of this database (see [`sled_error`]).
    fn sled_error(&self) -> impl Fn(sled::Error) -> StoreError + '_ {
        sled_error(&self.path)
    }

    /// Stores objects: each is looked up first; the new ones, and those whose stored copy
    /// is not these bytes (a damaged copy, since ids are hashes), are appended in one pack
    /// write and indexed, the newest copy winning. Not atomic across objects, and need not
    /// be: objects only become reachable when a ref moves, after the flush that makes all of
    /// them durable (format section 10).
    fn store_objects(&self, objects: &[(&RawId, &[u8])]) -> StoreResult<Vec<PutOutcome>> {
        let mut out = Vec::with_capacity(objects.len());
        let mut new: Vec<(&RawId, &[u8])> = Vec::new();
        // Objects of this batch already headed for the pack, by id: a repeat is compared
        // with them, as it would be with a stored copy.
        let mut batch: HashMap<RawId, usize> = HashMap::new();
        for &(id, bytes) in objects {
            let same = match batch.get(id) {
                Some(&i) => Some(new[i].1 == bytes),
                None => match self.index.find(id) {
                    Some(at) => Some(self.packs.read(id, at)?.ok().as_deref() == Some(bytes)),
                    None => None,
                },
            };
            let outcome = match same {
                None => PutOutcome::Written,
                Some(true) => PutOutcome::Existing,
                Some(false) => PutOutcome::Repaired,
            };
            if outcome != PutOutcome::Existing {
                batch.insert(*id, new.len());
                new.push((id, bytes));
            }
            out.push(outcome);
        }
        if !new.is_empty() {
            let locs = self.packs.append(&new)?;
            let places: Vec<(RawId, Location)> = new
                .iter()
                .zip(locs)
                .map(|((id, _), loc)| (**id, loc))
                .collect();
            self.index.add(&places);
        }
        Ok(out)
    }

    /// Builds a new database in directory `path` (made here) over the packs in directory
    /// `packs`, holding the refs `refs` and the ref journal `journal`, durably: the rebuild
    /// of a lost or damaged database (`Store::repair`) and of an older store's (the upgrade).
    /// `store` is the store directory, for errors.
    pub(crate) fn build_database(
        store: &Path,
        path: &Path,
        packs: &Path,
        opts: &OpenOptions,
        refs: &[(String, Vec<u8>)],
        journal: &[u8],
    ) -> StoreResult<()> {
        fs::create_dir(path).map_err(io_err(path))?;
        sync_dir(store)?;
        let built =
            Self::open(path, packs, opts, true)?.ok_or_else(|| StoreError::CannotRepair {
                path: store.to_path_buf(),
                reason: format!(
                    "its new database {}/ is held by another handle",
                    path.file_name().unwrap_or_default().to_string_lossy()
                ),
            })?;
        for (name, value) in refs {
            let _ = built.cas_ref(name, None, Some(value))?;
        }
        if !journal.is_empty() {
            let meta = &built.database()?.meta;
            meta.insert(ref_journal::JOURNAL_KEY, journal)
                .map_err(built.sled_error())?;
        }
        built.flush()
    }

    /// Rebuilds every pack index file that fails its checksum (see
    /// [`Store::check_index_files`](super::Store::check_index_files)).
    pub(crate) fn check_index_files(&self) -> StoreResult<u64> {
        self.index.heal_once()
    }

    /// Whether sled found a database to recover when it opened (false: it made a new one).
    pub(crate) fn was_recovered(&self) -> bool {
        self.database().is_ok_and(|d| d.db.was_recovered())
    }

    /// The bytes of `id`, read where the index points. A record that is not there whole
    /// sends the index to check that pack's index file (rebuilt from the pack if it fails its
    /// checksum) and is looked up once more (a concurrent rewrite may also have moved it); if
    /// it is still not there, the answer is what is wrong with it: a damaged object, never an
    /// absent one.
    fn read_indexed(&self, id: &RawId, loc: Location) -> StoreResult<Bytes> {
        let mut damage = match self.packs.read(id, loc)? {
            Ok(bytes) => return Ok(bytes),
            Err(d) => d,
        };
        self.index.heal(loc.pack)?;
        if let Some(now) = self.index.find(id).filter(|now| *now != loc) {
            match self.packs.read(id, now)? {
                Ok(bytes) => return Ok(bytes),
                Err(d) => damage = d,
            }
        }
        Err(StoreError::Damaged { id: *id, damage })
    }
}

impl ObjectStore for DiskBackend {
    /// An object not found sends the index to check its files whole, once (a damaged file
    /// may hide it), and is looked up again if one was rebuilt.
    fn get(&self, id: &RawId) -> StoreResult<Option<Bytes>> {
        let mut found = self.index.find(id);
        if found.is_none() && self.index.heal_once()? > 0 {
            found = self.index.find(id);
        }
        match found {
            Some(loc) => Ok(Some(self.read_indexed(id, loc)?)),
            None => Ok(None),
        }
    }

    fn put(&self, id: &RawId, bytes: &[u8]) -> StoreResult<PutOutcome> {
        Ok(self.store_objects(&[(id, bytes)])?[0])
    }

    /// One pack write for the new objects of the batch.
    fn put_many(&self, objects: &[(RawId, Vec<u8>)]) -> StoreResult<Vec<PutOutcome>> {
        let refs: Vec<(&RawId, &[u8])> = objects.iter().map(|(id, b)| (id, &b[..])).collect();
        self.store_objects(&refs)
    }

    fn contains(&self, id: &RawId) -> StoreResult<bool> {
        Ok(self.index.find(id).is_some())
    }

    fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        self.index.ids_with_prefix(prefix)
    }

    /// Drops the index entry (the index files lose it at the next flush); the bytes leave
    /// the disk at the next [`ObjectStore::reclaim`].
    fn delete(&self, id: &RawId) -> StoreResult<bool> {
        Ok(self.index.delete(id))
    }

    /// Syncs the packs, writes the index files they now need, then flushes sled.
    fn flush(&self) -> StoreResult<()> {
        let active = self.packs.sync()?;
        self.index.persist(active)?;
        if let RefHome::Database(d) = &self.home {
            d.db.flush().map_err(self.sled_error())?;
        }
        Ok(())
    }

    /// See the `reclaim` module.
    fn reclaim(&self, rule: Reclaim) -> StoreResult<ReclaimReport> {
        self.reclaim_packs(rule)
    }
}

impl RefStore for DiskBackend {
    fn get_ref(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        let d = match &self.home {
            RefHome::Database(d) => d,
            RefHome::Recorded { refs, .. } => {
                let at = refs.binary_search_by(|(n, _)| n.as_str().cmp(name));
                return Ok(at.ok().map(|i| refs[i].1.clone()));
            }
        };
        let value = d.refs.get(name).map_err(self.sled_error())?;
        Ok(value.map(|v| v.to_vec()))
    }

    fn cas_ref(
        &self,
        name: &str,
        expected: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> StoreResult<Result<(), Option<Vec<u8>>>> {
        Ok(self
            .database()?
            .refs
            .compare_and_swap(name, expected, new)
            .map_err(self.sled_error())?
            .map_err(|cas| cas.current.map(|v| v.to_vec())))
    }

    fn cas_refs(&self, moves: &[RefMove<'_>]) -> StoreResult<Result<(), String>> {
        Ok(self.move_refs(moves, &[], &[])?.map_err(|(name, _)| name))
    }

    fn list_refs(&self, prefix: &str) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let d = match &self.home {
            RefHome::Database(d) => d,
            RefHome::Recorded { refs, .. } => {
                let wanted = refs.iter().filter(|(n, _)| n.starts_with(prefix));
                return Ok(wanted.cloned().collect());
            }
        };
        d.refs
            .scan_prefix(prefix)
            .map(|entry| {
                let (name, value) = entry.map_err(self.sled_error())?;
                let name =
                    String::from_utf8(name.to_vec()).map_err(|e| StoreError::BadRefName {
                        name: e.into_bytes(),
                    })?;
                Ok((name, value.to_vec()))
            })
            .collect()
    }
}

impl Backend for DiskBackend {
    fn size_on_disk(&self) -> StoreResult<u64> {
        match &self.home {
            RefHome::Database(d) => Ok(d.db.size_on_disk().map_err(self.sled_error())?
                + self.index.size_on_disk()
                + self.packs.total_size()?),
            RefHome::Recorded { size, .. } => Ok(*size),
        }
    }

    /// Every pack that does not begin with the pack magic, and every index file that fails
    /// its checksum.
    fn check_files(&self) -> StoreResult<Vec<FileDamage>> {
        let mut out = Vec::new();
        if self.closed_print().is_some() {
            return Ok(out); // fsck opens the store
        }
        for no in self.packs.numbers()? {
            out.extend(self.packs.magic_problem(no)?);
        }
        out.extend(self.index.damaged_files());
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::packs::{HEADER, RECORD_HEAD};
    use super::*;

    /// sled's lock on its log file is recognised by the kind of the lock error, and an open
    /// while it is held waits instead of failing.
    #[test]
    fn a_held_database_is_seen_as_held() {
        let dir = tempfile::tempdir().unwrap();
        let (db, packs) = (dir.path().join("db"), dir.path().join("packs"));
        let opts = OpenOptions {
            cache_bytes: 1 << 20,
            pack_bytes: 1 << 20,
            ..OpenOptions::default()
        };
        let open = || DiskBackend::open(&db, &packs, &opts, true).unwrap();
        let first = open().expect("a new database is free");
        assert!(log_locked(&db.join(DiskBackend::LOG_FILE)));
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

    /// Writes pack 1 of `records` (id byte, object bytes) in `dir`; returns its length.
    fn pack_of(dir: &Path, records: &[(u8, &[u8])]) -> u64 {
        let mut bytes = b"MEMPACK1".to_vec();
        for (id, object) in records {
            bytes.extend_from_slice(&[*id; 32]);
            bytes.extend_from_slice(&(object.len() as u32).to_be_bytes());
            bytes.extend_from_slice(object);
        }
        fs::write(dir.join(super::super::packs::pack_name(1)), &bytes).unwrap();
        bytes.len() as u64
    }

    fn closed(store: &Path, len: u64) -> Option<DiskBackend> {
        let cached = CachedRefs {
            refs: Vec::new(),
            packs: vec![(1, len)],
            print: Vec::new(),
        };
        DiskBackend::open_closed(store, cached)
    }

    /// Objects are found through the index file and the tail after it, the last copy in a
    /// tail winning; nothing past the recorded length is found; a pack shorter than
    /// recorded is no closed read.
    #[test]
    fn a_closed_read_sees_the_packs_as_recorded() {
        use super::super::pack_index::{encode, index_path};
        let store = tempfile::tempdir().unwrap();
        let dir = store.path().join(PACKS_DIR);
        fs::create_dir(&dir).unwrap();
        let head = RECORD_HEAD;
        let len = pack_of(
            &dir,
            &[(7, b"seven"), (3, b"three"), (7, b"again"), (5, b"late")],
        );
        let indexed = vec![([7; 32], HEADER, 5)];
        fs::write(index_path(&dir, 1), encode(1, HEADER + head + 5, indexed)).unwrap();
        let c = closed(store.path(), len - (head + 4)).expect("a closed read");
        assert_eq!(&c.get(&[7; 32]).unwrap().unwrap()[..], b"again");
        assert_eq!(&c.get(&[3; 32]).unwrap().unwrap()[..], b"three");
        assert!(
            c.get(&[5; 32]).unwrap().is_none(),
            "past the recorded length"
        );
        assert_eq!(c.ids_with_prefix(&[]).unwrap(), vec![[3; 32], [7; 32]]);
        assert!(closed(store.path(), len + 1).is_none());
    }
}
