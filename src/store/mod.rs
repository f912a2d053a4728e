//! Store layer: raw object bytes by 32-byte id, and named refs, behind traits.
//!
//! Two backends implement the traits: [`DiskBackend`] (on disk, the default) and
//! [`MemoryBackend`] (tests, benches). A store directory ([`Store`]) adds the metadata file
//! and the LOCK file on top of a backend, and keeps its head cache (what `HEAD` was at the
//! last close) for readers that do not open it. Nothing here knows how objects are encoded
//! or hashed; the object layer does.
//!
//! With the cargo feature `testing`, a store can also run over a backend a test supplies
//! (`TestBackend`, `Store::with_backend`, `Store::power_cut`: the tests' fault injection) and
//! have its stored bytes damaged (`Store::overwrite_raw`); normal builds have neither.

mod cache;
mod disk_backend;
pub(crate) mod files;
mod format_file;
mod handle;
mod head_cache;
mod lifecycle;
mod lock;
mod memory;
mod object_index;
mod pack_index;
mod packs;
mod read_only;
mod ref_journal;
pub mod reflog;
mod remotes_file;
mod repair;
mod upgrade;

#[cfg(any(test, feature = "testing"))]
mod testing;

pub use cache::{
    check_paths, relative, remove_cache_file, remove_stray_temporaries, stray_findings,
    CacheFinding, CacheIssue, DerivedCache, CACHE_DIR,
};
pub use disk_backend::DiskBackend;
pub(crate) use files::{
    write_atomically, write_atomically_private, write_cache_file, write_cache_file_with,
};
pub use format_file::{FORMAT_FILE, FORMAT_VERSION};
pub use handle::Store;
pub use head_cache::{CachedHead, CachedRefs, HeadCache};
pub use lifecycle::OpenOptions;
pub use lock::LOCK_FILE;
pub use memory::MemoryBackend;
pub use object_index::VerifyRecord;
pub use reflog::{RefLogEntry, RefNote, REFLOG_FILE};
pub use remotes_file::{read_remotes, REMOTES_FILE};
pub use repair::{RepairReport, SkippedBytes};
#[cfg(any(test, feature = "testing"))]
pub use testing::TestBackend;

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

pub use bytes::Bytes;

/// A raw object id as the store sees it: 32 bytes, opaque here.
pub type RawId = [u8; 32];

/// Errors of the store layer.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An operating-system I/O failure on a file of the store.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The storage engine failed. The engine's own error is the source; its type is not
    /// part of this API, so the engine can change without changing this enum.
    #[error("storage engine error: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
    /// Another process holds the store's lock and did not release it in time.
    #[error("store {path} is busy: another process holds its lock (waited {waited_ms} ms)")]
    Busy {
        /// The store directory.
        path: PathBuf,
        /// How long this opener waited.
        waited_ms: u64,
    },
    /// The path is not a memoir store (no or unreadable metadata file).
    #[error("{path} is not a memoir store: {reason}")]
    NotAStore {
        /// The path that was opened.
        path: PathBuf,
        /// What is missing or wrong.
        reason: String,
    },
    /// The store was written by a format version this build does not read.
    #[error("store {path} has format version {found}; this memoir reads version {supported}")]
    UnsupportedVersion {
        /// The store directory.
        path: PathBuf,
        /// Version found in the metadata file.
        found: u32,
        /// Version this build reads.
        supported: u32,
    },
    /// `create` was asked to make a store in a non-empty directory that is not a store.
    #[error("{path} is not empty and is not a memoir store; refusing to create a store there")]
    NotEmpty {
        /// The directory.
        path: PathBuf,
    },
    /// `create` was asked to make a store where one already exists.
    #[error("{path} is already a memoir store")]
    AlreadyExists {
        /// The directory.
        path: PathBuf,
    },
    /// The object index holds a key of the wrong length: the engine's data is damaged.
    #[error("object index holds a key of {len} bytes, expected {expected}")]
    BadIndexKey {
        /// The key's length.
        len: usize,
        /// The length such a key has.
        expected: usize,
    },
    /// The ref table holds a name that is not UTF-8: the engine's data is damaged.
    #[error(
        "refs table holds a name that is not UTF-8: {}",
        String::from_utf8_lossy(name)
    )]
    BadRefName {
        /// The name's bytes.
        name: Vec<u8>,
    },
    /// An object too large for a pack record (its length must fit in 32 bits).
    #[error("object of {len} bytes is too large")]
    TooLarge {
        /// The object's length in bytes.
        len: usize,
    },
    /// The store's database (`db/`, the object index and the refs) is missing or damaged;
    /// the packs and the ref log can rebuild it (`memoir fsck --repair`).
    #[error("the database of store {path} is damaged ({detail}); `memoir fsck --repair` rebuilds it from the packs and the ref log")]
    EngineDamaged {
        /// The store directory.
        path: PathBuf,
        /// What is wrong, in words.
        detail: String,
    },
    /// The store's database cannot be rebuilt.
    #[error("store {path} cannot be repaired: {reason}")]
    CannotRepair {
        /// The store directory.
        path: PathBuf,
        /// Why not.
        reason: String,
    },
    /// A write through a handle that only reads: a closed read (see
    /// [`Store::read_closed`]) or one opened without write access (a read-only file
    /// system, or no permission to write its directory).
    #[error("the store is open for reading only (a closed read, or without write access to it); it cannot be written this way")]
    ReadOnly,
    /// A write to a store whose disk is full (reads still work, from a copy of the
    /// database made elsewhere).
    #[error("no space left on the disk of {}: the store can be read but not written until space is freed", path.display())]
    DiskFull {
        /// The store directory.
        path: PathBuf,
    },
    /// The index has an entry for the object, but its stored copy is not whole where the
    /// entry points: the object is damaged (never absent).
    #[error("the stored copy of object {} is damaged: {damage}", hex(id))]
    Damaged {
        /// The object.
        id: RawId,
        /// What is wrong with its record.
        damage: Damage,
    },
}

/// What is wrong with the stored record of an object (see [`StoreError::Damaged`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Damage {
    /// The pack file the index points into is gone.
    #[error("its pack file {pack} is missing")]
    PackMissing {
        /// The pack, as a path relative to the store (`packs/pack-NNNNNNNN`).
        pack: String,
    },
    /// The pack ends before the record does.
    #[error("its record at byte {offset} of {pack} is cut short (the file ends at byte {end})")]
    CutShort {
        /// The pack, relative to the store.
        pack: String,
        /// Where the record starts.
        offset: u64,
        /// The pack's length.
        end: u64,
    },
    /// The record where the index points names another object id: the pack's bytes are
    /// damaged there (or the index points at the wrong place).
    #[error(
        "the record at byte {offset} of {pack} names another object ({found}...): the pack is damaged there"
    )]
    OtherId {
        /// The pack, relative to the store.
        pack: String,
        /// Where the record starts.
        offset: u64,
        /// The first hex digits of the id the record names.
        found: String,
    },
    /// The record's length field disagrees with the index.
    #[error(
        "the record at byte {offset} of {pack} says {found} bytes where the index says {expected}: the pack is damaged there"
    )]
    WrongLength {
        /// The pack, relative to the store.
        pack: String,
        /// Where the record starts.
        offset: u64,
        /// The length the record states.
        found: u32,
        /// The length the index holds.
        expected: u32,
    },
}

/// A file of the store that is damaged as a whole (found by [`Backend::check_files`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDamage {
    /// The file, relative to the store directory (`packs/pack-00000001`).
    pub file: String,
    /// What is wrong with it, in words.
    pub problem: String,
}

/// Lower-case hex of raw bytes, for messages.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Result alias of the store layer.
pub type StoreResult<T> = Result<T, StoreError>;

/// What a `put` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PutOutcome {
    /// The object was not stored before and now is.
    Written,
    /// The object was already stored with exactly these bytes (deduplicated).
    Existing,
    /// The object was stored with different bytes (a damaged copy, since ids are hashes of
    /// the bytes) and has been overwritten with the given, correct bytes.
    Repaired,
}

/// Content-addressed object bytes by id.
///
/// Callers guarantee that `bytes` hash to `id`; the store only stores. A `put` of an id that
/// is already present compares the stored bytes with the given ones, so a damaged copy is
/// noticed (and replaced) instead of being trusted forever.
pub trait ObjectStore: Send + Sync {
    /// The bytes stored under `id`, if any. They may be a window of a mapped pack (kept
    /// mapped while any clone of them lives) rather than a copy, so holding them is cheap.
    /// An object the store has whose stored copy is not whole is [`StoreError::Damaged`],
    /// naming what is wrong.
    fn get(&self, id: &RawId) -> StoreResult<Option<Bytes>>;
    /// Store `bytes` under `id`, verifying existing bytes on a dedup hit.
    fn put(&self, id: &RawId, bytes: &[u8]) -> StoreResult<PutOutcome>;
    /// Store several objects together (one engine batch where the backend has them).
    fn put_many(&self, objects: &[(RawId, Vec<u8>)]) -> StoreResult<Vec<PutOutcome>> {
        objects.iter().map(|(id, b)| self.put(id, b)).collect()
    }
    /// Whether `id` is stored.
    fn contains(&self, id: &RawId) -> StoreResult<bool>;
    /// Every stored id whose bytes start with `prefix`, in ascending byte order.
    fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>>;
    /// Visit every stored id in ascending order; stop early when `f` returns `false`. The
    /// ids are listed before the first call, so `f` may call back into the store, even to
    /// write.
    fn for_each_id(&self, f: &mut dyn FnMut(RawId) -> bool) -> StoreResult<()> {
        for id in self.ids_with_prefix(&[])? {
            if !f(id) {
                break;
            }
        }
        Ok(())
    }
    /// Remove `id`; returns whether it was present. Used by garbage collection only.
    fn delete(&self, id: &RawId) -> StoreResult<bool>;
    /// Make every completed write durable before returning.
    fn flush(&self) -> StoreResult<()>;
    /// Give back, durably, the space of bytes no object uses any more (deleted objects,
    /// extra copies) in the files `rule` picks: afterwards no file it rewrote holds such
    /// bytes, and with [`Reclaim::Everything`] no file of the store does. Garbage collection
    /// calls it after its deletions and flush. Backends without such bytes do nothing.
    fn reclaim(&self, rule: Reclaim) -> StoreResult<ReclaimReport> {
        let _ = rule;
        Ok(ReclaimReport::default())
    }
}

/// The share of a pack's record bytes that must be dead (unused by any object) before
/// garbage collection rewrites the pack, in percent.
pub const GC_DEAD_SHARE_PERCENT: u8 = 25;

/// Which files [`ObjectStore::reclaim`] rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reclaim {
    /// Every file holding at least this percentage of dead bytes, and every file whose dead
    /// bytes could hide or damage live ones (a damaged header, a record torn by a crash).
    /// The dead bytes of the other files stay until a later reclaim.
    DeadShare(u8),
    /// Every file holding any dead byte: afterwards no file of the store holds the bytes of
    /// an object the store no longer has (`forget --purge`).
    Everything,
}

/// What [`ObjectStore::reclaim`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReclaimReport {
    /// Files rewritten (their live records copied, then the files deleted).
    pub packs_rewritten: u64,
    /// Bytes of live records copied out of them.
    pub bytes_rewritten: u64,
    /// Files left as they were although they hold dead bytes (below the rule's share).
    pub packs_kept_with_dead_bytes: u64,
}

/// Named references (branches, HEAD) with compare-and-swap updates.
pub trait RefStore: Send + Sync {
    /// The value of ref `name`, if set.
    fn get_ref(&self, name: &str) -> StoreResult<Option<Vec<u8>>>;
    /// Set ref `name` to `new` (or delete it with `None`) only if its current value is
    /// `expected` (`None` = absent). On mismatch nothing changes and `Err(current)` is
    /// returned inside the `Ok`.
    fn cas_ref(
        &self,
        name: &str,
        expected: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> StoreResult<Result<(), Option<Vec<u8>>>>;
    /// All refs whose name starts with `prefix`, sorted by name.
    fn list_refs(&self, prefix: &str) -> StoreResult<Vec<(String, Vec<u8>)>>;
    /// Moves every ref of `moves` by compare-and-swap, all or none: if one's current value
    /// is not its expected one, nothing changes and `Err(name)` names it. On disk the moves
    /// are one transaction, so a crash keeps all of them or none. This default, for
    /// backends in memory, moves them one by one and puts back the ones moved on a mismatch.
    fn cas_refs(&self, moves: &[RefMove<'_>]) -> StoreResult<Result<(), String>> {
        for (done, m) in moves.iter().enumerate() {
            if self.cas_ref(m.name, m.expected, m.new)?.is_err() {
                for back in moves[..done].iter().rev() {
                    let _ = self.cas_ref(back.name, back.new, back.expected)?;
                }
                return Ok(Err(m.name.to_string()));
            }
        }
        Ok(Ok(()))
    }
}

/// The ref whose value was not the one a move expected: its name and current value
/// (`None`: absent).
pub type RefMismatch = (String, Option<Vec<u8>>);

/// One ref move of [`RefStore::cas_refs`]: ref `name` from `expected` to `new` (`None`:
/// absent, deleted).
#[derive(Debug, Clone, Copy)]
pub struct RefMove<'a> {
    /// The ref.
    pub name: &'a str,
    /// Its value now.
    pub expected: Option<&'a [u8]>,
    /// Its value after.
    pub new: Option<&'a [u8]>,
}

/// A backend holds both objects and refs.
pub trait Backend: ObjectStore + RefStore {
    /// Bytes the backend occupies on disk (0 for memory).
    fn size_on_disk(&self) -> StoreResult<u64>;
    /// The files of the backend that are damaged as a whole, such as a pack file that does
    /// not begin with the pack magic (object damage is found by reading the objects).
    fn check_files(&self) -> StoreResult<Vec<FileDamage>> {
        Ok(Vec::new())
    }
}

/// The data behind a lock, going on with what a holder that panicked left: every update in
/// this layer leaves its state consistent before anything can panic.
pub(crate) fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// [`locked`], to read an `RwLock`.
pub(crate) fn read_locked<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

/// [`locked`], to write an `RwLock`.
pub(crate) fn write_locked<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}
