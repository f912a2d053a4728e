//! The [`Store`] handle: an open engine, plus for a store directory the lock on it and its
//! head cache file. Opening and creating are in `lifecycle`; the files of the directory
//! (FORMAT, LOCK, `db/`, `packs/`, `cache/`) are described in store-format.md, section 1.

use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::head_cache::{self, CachedHead, HeadCacheFile};
use super::lifecycle::log_path;
use super::lock;
use super::read_only::{ReadOnlyReason, Scratch};
use super::reflog::{RefLog, RefNote};
#[cfg(any(test, feature = "testing"))]
use super::TestBackend;
use super::{
    Backend, Bytes, DiskBackend, MemoryBackend, ObjectStore, PutOutcome, RawId, Reclaim,
    ReclaimReport, RefMismatch, RefMove, RefStore, StoreError, StoreResult,
};

/// The engine behind a store; an enum rather than a trait object so that the test hooks
/// (feature `testing`) can reach the concrete backend.
pub(super) enum Engine {
    Disk(DiskBackend),
    Memory(MemoryBackend),
    /// A closed read: no database, no lock, no writes.
    Closed(DiskBackend),
    /// A backend a test supplies (feature `testing`).
    #[cfg(any(test, feature = "testing"))]
    Test(Box<dyn TestBackend>),
}

impl Engine {
    fn as_dyn(&self) -> &dyn Backend {
        match self {
            Engine::Disk(b) => b,
            Engine::Memory(b) => b,
            Engine::Closed(b) => b,
            #[cfg(any(test, feature = "testing"))]
            Engine::Test(b) => &**b,
        }
    }
}

/// Shared state of a [`Store`]. Fields drop in declaration order: the engine is closed
/// (and its files released) before the lock file is closed, which releases the lock.
struct Inner {
    engine: Engine,
    /// Published when dropped: after the engine has closed, before the lock is released.
    head: HeadCacheFile,
    /// The open LOCK file, holding the exclusive lock (`None` for a memory store).
    _lock: Option<File>,
    path: Option<PathBuf>,
    /// Where ref moves are logged (a store directory opened for writing).
    reflog: Option<RefLog>,
    /// Why every write through this handle fails, when it does: the store was opened
    /// without write access, or for reading only because its disk was full.
    read_only: Option<ReadOnlyReason>,
    /// The private copy of the database such a store reads, removed after the engine closed.
    _scratch: Option<Scratch>,
}

impl Drop for Inner {
    /// Before the engine closes, while the LOCK is still held: ref moves no flush made
    /// durable yet (a write that ended without one) are made durable now, then logged, as a
    /// flush would.
    fn drop(&mut self) {
        let (Engine::Disk(engine), Some(_), None) = (&self.engine, &self._lock, self.read_only)
        else {
            return;
        };
        if let Some(log) = self.reflog.as_ref().filter(|l| l.has_pending()) {
            if engine.flush().is_ok() {
                let _ = log.write_pending();
            }
        }
    }
}

/// An open store: a backend plus, for a directory store, the exclusive lock on it.
///
/// Cheap to clone (clones share one backend). The lock is released when the last clone is
/// dropped, after the backend has been closed. `Store` implements [`ObjectStore`],
/// [`RefStore`] and [`Backend`] by delegation, so it (or an `Arc<Store>`) can be handed to
/// upper layers as `Arc<dyn ObjectStore>`.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// A handle on `engine`; `lock` and `path` are the held LOCK file and the directory of a
    /// store directory (both `None` for a store in memory).
    pub(super) fn from_parts(engine: Engine, lock: Option<File>, path: Option<PathBuf>) -> Store {
        Store::assemble(engine, lock, path, None)
    }

    /// A handle on `engine`, which reads the store in `path` from the private copy of its
    /// database in `scratch`, writing nothing (see `read_only`); it holds the LOCK it is
    /// given (a store whose disk is full), none otherwise.
    pub(super) fn read_only_parts(
        engine: Engine,
        path: PathBuf,
        scratch: Scratch,
        lock: Option<File>,
        why: ReadOnlyReason,
    ) -> Store {
        Store::assemble(engine, lock, Some(path), Some((why, scratch)))
    }

    /// A handle that logs ref moves and publishes its cached head only when it may write
    /// the store: an opened store, not a closed read (which holds no LOCK) nor one that
    /// only reads (`read_only`).
    fn assemble(
        engine: Engine,
        lock: Option<File>,
        path: Option<PathBuf>,
        read_only: Option<(ReadOnlyReason, Scratch)>,
    ) -> Store {
        let writer = matches!(engine, Engine::Disk(_)) && read_only.is_none();
        let dir = path.as_deref().filter(|_| writer);
        let (read_only, scratch) = read_only.unzip();
        Store {
            inner: Arc::new(Inner {
                head: HeadCacheFile::new(dir.map(|p| (p.to_path_buf(), log_path(p)))),
                reflog: dir.map(RefLog::new),
                engine,
                _lock: lock,
                path,
                read_only,
                _scratch: scratch,
            }),
        }
    }

    /// Fails on a handle that only reads: [`StoreError::ReadOnly`], or
    /// [`StoreError::DiskFull`] when the disk's being full is why.
    fn check_writable(&self) -> StoreResult<()> {
        if self.is_closed_read() {
            return Err(StoreError::ReadOnly);
        }
        match (self.inner.read_only, &self.inner.path) {
            (None, _) => Ok(()),
            (Some(ReadOnlyReason::DiskFull), Some(path)) => {
                Err(StoreError::DiskFull { path: path.clone() })
            }
            (Some(_), _) => Err(StoreError::ReadOnly),
        }
    }

    /// The engine, for the test hooks.
    #[cfg(any(test, feature = "testing"))]
    pub(super) fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// Ref changes made through this handle so far: the version a cached head given to
    /// [`Store::note_head`] describes.
    pub fn refs_version(&self) -> u64 {
        self.inner.head.version()
    }

    /// Gives the cached head to publish when the store closes: what `HEAD` resolved to
    /// when the refs were at `version` (from [`Store::refs_version`], read before the refs).
    /// It is kept only if no ref changed since, and published only if every change it
    /// reflects was flushed and no ref changed after it.
    pub fn note_head(&self, version: u64, head: CachedHead) {
        if self.is_closed_read() {
            return;
        }
        let refs = self.backend().list_refs("").unwrap_or_default();
        self.inner.head.note(version, head, refs);
    }

    /// The store in directory `path` as of its last close, read without opening the
    /// database or taking the LOCK: `None` unless the head cache file is whole, no one
    /// opened the store since it was written, and its packs are still as that close left
    /// them. The handle reads only (writes fail with [`super::StoreError::ReadOnly`]); a
    /// read through it that fails (garbage collection may delete a pack meanwhile) should
    /// be retried with the store opened.
    pub fn read_closed(path: &Path) -> Option<Store> {
        let (_, cached) = head_cache::read(path, &log_path(path))?;
        let backend = DiskBackend::open_closed(path, cached)?;
        Some(Store::from_parts(
            Engine::Closed(backend),
            None,
            Some(path.to_path_buf()),
        ))
    }

    /// Whether this handle is a closed read ([`Store::read_closed`]): it writes
    /// nothing, caches included.
    pub fn is_closed_read(&self) -> bool {
        matches!(self.inner.engine, Engine::Closed(_))
    }

    /// Says what the next ref moves through this handle are logged with in the ref log
    /// (time, author, message) until the next call.
    pub fn set_ref_note(&self, note: RefNote) {
        if let Some(log) = &self.inner.reflog {
            log.set_note(note);
        }
    }

    /// Changes the message the next ref moves are logged with, keeping the time and author.
    pub fn set_ref_message(&self, message: impl Into<String>) {
        if let Some(log) = &self.inner.reflog {
            let mut note = log.note();
            note.message = message.into();
            log.set_note(note);
        }
    }

    /// Runs `write`, a write of a derived cache, if this handle may write caches: a store
    /// opened for writing always may; a closed read only while it can take the LOCK
    /// at once and nobody opened the store since the close it reads (so no garbage
    /// collection ran since, and what the cache describes still holds). Returns whether
    /// `write` ran.
    pub fn write_cache(&self, write: impl FnOnce()) -> bool {
        let Engine::Closed(closed) = &self.inner.engine else {
            write();
            return true;
        };
        let Some(dir) = &self.inner.path else {
            return false;
        };
        let Ok(held) = lock::lock_existing(dir, Duration::ZERO) else {
            return false;
        };
        let print = closed.closed_print().unwrap_or_default();
        if !head_cache::unopened_since(&log_path(dir), print) {
            return false;
        }
        write();
        drop(held);
        true
    }

    /// Checks every pack index file whole (its checksum) and rebuilds from its pack each
    /// one that fails: a closed read found an object wanting. Returns how many were rebuilt
    /// (none on a handle that cannot write).
    pub fn check_index_files(&self) -> StoreResult<u64> {
        match &self.inner.engine {
            Engine::Disk(b) => b.check_index_files(),
            _ => Ok(0),
        }
    }

    /// The cached head of the closed store in directory `path`, read without opening or
    /// locking the store: `None` unless its file is whole and no one opened the store since
    /// it was written. A reader that uses it sees the store as it was at that close.
    pub fn cached_head(path: &Path) -> Option<CachedHead> {
        head_cache::read(path, &log_path(path)).map(|(head, _)| head)
    }

    /// The store directory (`None` for a memory store).
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// The backend itself.
    pub fn backend(&self) -> &dyn Backend {
        self.inner.engine.as_dyn()
    }
}

impl ObjectStore for Store {
    fn get(&self, id: &RawId) -> StoreResult<Option<Bytes>> {
        self.backend().get(id)
    }

    fn put(&self, id: &RawId, bytes: &[u8]) -> StoreResult<PutOutcome> {
        self.check_writable()?;
        self.backend().put(id, bytes)
    }

    fn put_many(&self, objects: &[(RawId, Vec<u8>)]) -> StoreResult<Vec<PutOutcome>> {
        self.check_writable()?;
        self.backend().put_many(objects)
    }

    fn contains(&self, id: &RawId) -> StoreResult<bool> {
        self.backend().contains(id)
    }

    fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        self.backend().ids_with_prefix(prefix)
    }

    fn delete(&self, id: &RawId) -> StoreResult<bool> {
        self.check_writable()?;
        self.backend().delete(id)
    }

    fn reclaim(&self, rule: Reclaim) -> StoreResult<ReclaimReport> {
        self.check_writable()?;
        self.backend().reclaim(rule)
    }

    fn flush(&self) -> StoreResult<()> {
        let version = self.inner.head.version();
        self.backend().flush()?;
        self.inner.head.flushed(version);
        match &self.inner.reflog {
            Some(log) => log.write_pending(),
            None => Ok(()),
        }
    }
}

impl RefStore for Store {
    fn get_ref(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        self.backend().get_ref(name)
    }

    fn cas_ref(
        &self,
        name: &str,
        expected: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> StoreResult<Result<(), Option<Vec<u8>>>> {
        let one = [RefMove {
            name,
            expected,
            new,
        }];
        Ok(self.move_refs_logged(&one)?.map_err(|(_, current)| current))
    }

    fn list_refs(&self, prefix: &str) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.backend().list_refs(prefix)
    }

    fn cas_refs(&self, moves: &[RefMove<'_>]) -> StoreResult<Result<(), String>> {
        Ok(self.move_refs_logged(moves)?.map_err(|(name, _)| name))
    }
}

impl Store {
    /// Makes the ref `moves` (all or none), on a writable handle, voiding the cached head
    /// first; with a ref log, their lines replace in the ref journal, in the same
    /// transaction, those the log already holds, and are queued for the log once the moves
    /// are made. On a mismatch, the first ref that differs and its current value.
    fn move_refs_logged(&self, moves: &[RefMove<'_>]) -> StoreResult<Result<(), RefMismatch>> {
        self.check_writable()?;
        self.inner.head.before_ref_change()?;
        let (Engine::Disk(backend), Some(log)) = (&self.inner.engine, &self.inner.reflog) else {
            return Ok(match self.backend().cas_refs(moves)? {
                Ok(()) => Ok(()),
                Err(name) => Err((name.clone(), self.backend().get_ref(&name)?)),
            });
        };
        let (lines, logged) = (log.lines(moves), log.logged());
        let moved = backend.move_refs(moves, &lines, &logged)?;
        if moved.is_ok() {
            log.forget_logged(logged.len());
            log.queue(&lines);
        }
        Ok(moved)
    }

    /// Logs the moves a crash left out of the ref log after the flush that made them
    /// durable (what the ref journal holds and the log's tail lacks); the next move drops
    /// them from the journal. Run by the LOCK holder as it opens the store; a failure
    /// leaves the journal for the next open.
    pub(super) fn settle_ref_journal(&self) -> StoreResult<()> {
        let (Engine::Disk(backend), Some(log)) = (&self.inner.engine, &self.inner.reflog) else {
            return Ok(());
        };
        let journal = backend.ref_journal()?;
        if journal.is_empty() {
            return Ok(());
        }
        log.complete_from(&journal)
    }
}

impl Backend for Store {
    fn size_on_disk(&self) -> StoreResult<u64> {
        self.backend().size_on_disk()
    }

    fn check_files(&self) -> StoreResult<Vec<super::FileDamage>> {
        self.backend().check_files()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_store_has_no_path() {
        let s = Store::memory();
        assert_eq!(s.path(), None);
        assert_eq!(s.size_on_disk().unwrap(), 0);
    }
}
