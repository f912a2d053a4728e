//! Making and opening stores: `create` lays out a new store directory (FORMAT last), `open`
//! checks and locks an existing one and upgrades an older format in place, `memory` makes a
//! store without a directory. Closing is dropping the last [`Store`] handle, which closes
//! the engine, publishes the cached head and releases the lock, in that order.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::cache::CACHE_DIR;
use super::files::{io_err, sync_dir};
use super::format_file::{
    not_a_store, read_format, write_format, FORMAT_FILE, FORMAT_VERSION, LEGACY_FORMAT_VERSION,
};
use super::handle::Engine;
use super::lock::{self, LOCK_FILE};
use super::packs::PACKS_DIR;
use super::{read_only, repair, upgrade};
use super::{
    DiskBackend, MemoryBackend, ObjectStore, Store, StoreError, StoreResult, VerifyRecord,
};

/// Subdirectory of a store that holds the sled database.
pub(super) const DB_DIR: &str = "db";
/// What a directory a `create` was killed in can hold besides nothing (and the temporary
/// file of a FORMAT being written): a directory with only these and no FORMAT is finished by
/// the next `create`.
const HALF_MADE: [&str; 4] = [LOCK_FILE, DB_DIR, PACKS_DIR, CACHE_DIR];

/// How to open or create a store directory.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// How long to wait for another holder to release the store's lock before failing with
    /// [`StoreError::Busy`]. Zero means a single attempt.
    pub lock_timeout: Duration,
    /// Size of the engine's page cache in bytes.
    pub cache_bytes: u64,
    /// Size at which a pack file stops growing and the next one starts. Garbage
    /// collection rewrites whole packs, so this bounds the bytes one removed object costs
    /// to rewrite.
    pub pack_bytes: u64,
    /// Where a store this process cannot write is read from: its database is copied into
    /// a directory made here (sled writes as it opens). `None`: such a store is refused.
    pub scratch_dir: Option<PathBuf>,
    /// How a pack record is checked (its bytes hash to its id) when the packs are read
    /// without their index files: the tails an open reads, a repair, an upgrade. `None`:
    /// records are only checked to be whole, and damage inside them is found when read.
    pub verify: Option<VerifyRecord>,
}

impl Default for OpenOptions {
    /// Wait up to 5 s for the lock; 64 MiB of cache; 64 MiB packs; no record check.
    fn default() -> Self {
        Self {
            lock_timeout: Duration::from_secs(5),
            cache_bytes: 64 * 1024 * 1024,
            pack_bytes: 64 * 1024 * 1024,
            scratch_dir: None,
            verify: None,
        }
    }
}

/// The engine's log file in store directory `path`: every open of the engine writes to it.
pub(super) fn log_path(path: &Path) -> PathBuf {
    path.join(DB_DIR).join(DiskBackend::LOG_FILE)
}

/// How long the engine's own lock may still be held once the store's LOCK is ours: the
/// engine of a handle this process just closed lets go of its files from a background thread,
/// a moment after the drop. Holding LOCK, nobody else can be there, so that moment is waited
/// for even when the caller's lock timeout is zero.
const ENGINE_RELEASE_GRACE: Duration = Duration::from_secs(2);

/// Open the sled database of a store whose LOCK is held. sled's own lock on its log file
/// can outlive the previous holder's handle by a moment (its I/O threads drop the last
/// reference after the LOCK is released), so a database still locked is waited for like
/// the LOCK, within `opts.lock_timeout` (at least [`ENGINE_RELEASE_GRACE`]).
pub(super) fn open_disk_backend(path: &Path, opts: &OpenOptions) -> StoreResult<DiskBackend> {
    let wait = opts.lock_timeout.max(ENGINE_RELEASE_GRACE);
    lock::wait_while_held(path, wait, || {
        DiskBackend::open(&path.join(DB_DIR), &path.join(PACKS_DIR), opts, true)
    })
    .map_err(|e| match e {
        StoreError::Backend(b) => StoreError::EngineDamaged {
            path: path.to_path_buf(),
            detail: b.to_string(),
        },
        other => other,
    })
}

/// A store's database is never new: `create` flushed it before writing FORMAT. A database
/// directory that is gone, or whose log is gone or empty, lost its files: damage (exit 5,
/// naming the repair), never a store without history.
pub(super) fn require_log(path: &Path) -> StoreResult<()> {
    let damaged = |detail: String| StoreError::EngineDamaged {
        path: path.to_path_buf(),
        detail,
    };
    if !path.join(DB_DIR).is_dir() {
        return Err(damaged(format!(
            "{FORMAT_FILE} file present but no {DB_DIR}/ directory"
        )));
    }
    if fs::metadata(log_path(path)).map_or(true, |m| m.len() == 0) {
        return Err(damaged(format!(
            "its log file {DB_DIR}/{} is missing or empty",
            DiskBackend::LOG_FILE
        )));
    }
    Ok(())
}

/// `backend`, the database of the store in `path`, unless sled found nothing to recover
/// when it opened it (its files were lost: see [`require_log`]).
pub(super) fn require_recovered(path: &Path, backend: DiskBackend) -> StoreResult<DiskBackend> {
    if backend.was_recovered() {
        return Ok(backend);
    }
    Err(StoreError::EngineDamaged {
        path: path.to_path_buf(),
        detail: "it holds no database (its files are missing)".into(),
    })
}

/// Whether `name` is the temporary file of a FORMAT being written.
fn is_format_temp(name: &OsStr) -> bool {
    name.to_str()
        .is_some_and(|n| n.starts_with(&format!("{FORMAT_FILE}.tmp.")))
}

/// What `create` made so far, so that a failed create can remove exactly that.
#[derive(Default)]
struct Created {
    dir: bool,
    lock: bool,
    db: bool,
    packs: bool,
    format: bool,
}

impl Created {
    /// Removes what a failed `create` in `path` made. Best effort: the error that made it
    /// fail is what matters.
    fn undo(&self, path: &Path) {
        if self.format {
            let _ = fs::remove_file(path.join(FORMAT_FILE));
        }
        if self.db {
            let _ = fs::remove_dir_all(path.join(DB_DIR));
        }
        if self.packs {
            let _ = fs::remove_dir_all(path.join(PACKS_DIR));
        }
        if self.lock {
            let _ = fs::remove_file(path.join(LOCK_FILE));
        }
        if self.dir {
            let _ = fs::remove_dir(path);
        }
    }
}

impl Store {
    /// Create a new store in directory `path` (created if missing) and return it open and
    /// locked.
    ///
    /// Refuses with [`StoreError::AlreadyExists`] if `path` already holds a FORMAT file and
    /// with [`StoreError::NotEmpty`] if it holds anything else; in both cases nothing is
    /// touched. FORMAT is written last (temp file, fsync, rename, fsync of the directory),
    /// so a crash during `create` never leaves a directory that opens as a store. If
    /// `create` fails, it removes what it made.
    pub fn create(path: &Path, opts: &OpenOptions) -> StoreResult<Store> {
        let mut created = Created::default();
        match fs::metadata(path) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(io_err(path)(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    "exists and is not a directory",
                )))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    fs::create_dir_all(parent).map_err(io_err(parent))?;
                }
                match fs::create_dir(path) {
                    Ok(()) => created.dir = true,
                    // Someone else made it meanwhile: check it like any existing directory.
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(io_err(path)(e)),
                }
            }
            Err(e) => return Err(io_err(path)(e)),
        }
        if !created.dir {
            if path.join(FORMAT_FILE).symlink_metadata().is_ok() {
                return Err(StoreError::AlreadyExists {
                    path: path.to_path_buf(),
                });
            }
            let mut names = Vec::new();
            for entry in fs::read_dir(path).map_err(io_err(path))? {
                names.push(entry.map_err(io_err(path))?.file_name());
            }
            if !names.is_empty() {
                let ours = |n: &OsStr| HALF_MADE.iter().any(|h| n == *h) || is_format_temp(n);
                if names.iter().all(|n| ours(n)) {
                    return Self::finish_half_made(path, opts);
                }
                return Err(StoreError::NotEmpty {
                    path: path.to_path_buf(),
                });
            }
        }
        Self::create_in(path, opts, &mut created).inspect_err(|_| created.undo(path))
    }

    /// Creates the store again in a directory a killed `create` left with its LOCK and some
    /// of `db/`, `packs/` and `cache/` but no FORMAT (written last, so nothing there was
    /// ever a store): under the lock, and if FORMAT is still missing, those are removed and
    /// made anew.
    fn finish_half_made(path: &Path, opts: &OpenOptions) -> StoreResult<Store> {
        let lock = lock::lock_existing(path, opts.lock_timeout)?;
        if path.join(FORMAT_FILE).symlink_metadata().is_ok() {
            return Err(StoreError::AlreadyExists {
                path: path.to_path_buf(),
            });
        }
        for dir in [DB_DIR, PACKS_DIR, CACHE_DIR] {
            let d = path.join(dir);
            if d.symlink_metadata().is_ok() {
                fs::remove_dir_all(&d).map_err(io_err(&d))?;
            }
        }
        // A FORMAT the killed create was still writing (its temporary file).
        for entry in fs::read_dir(path).map_err(io_err(path))? {
            let name = entry.map_err(io_err(path))?.file_name();
            if is_format_temp(&name) {
                let _ = fs::remove_file(path.join(name));
            }
        }
        let mut created = Created::default();
        Self::build(path, opts, lock, &mut created).inspect_err(|_| created.undo(path))
    }

    /// The steps of `create` after the emptiness checks, recording in `created` what exists.
    fn create_in(path: &Path, opts: &OpenOptions, created: &mut Created) -> StoreResult<Store> {
        let Some(lock) = lock::create_lock_file(path)? else {
            return Err(StoreError::NotEmpty {
                path: path.to_path_buf(),
            });
        };
        created.lock = true;
        lock::acquire(&lock, path, opts.lock_timeout)?;
        // Between making LOCK and locking it, another creator may have taken this directory
        // for a half-made store and finished it: then LOCK is theirs, and so is the store.
        if path.join(DB_DIR).symlink_metadata().is_ok()
            || path.join(FORMAT_FILE).symlink_metadata().is_ok()
        {
            created.lock = false;
            created.dir = false;
            return Err(StoreError::AlreadyExists {
                path: path.to_path_buf(),
            });
        }
        Self::build(path, opts, lock, created)
    }

    /// Makes `db/`, `packs/`, the engine and, last, FORMAT in `path`, whose LOCK `lock` holds.
    fn build(
        path: &Path,
        opts: &OpenOptions,
        lock: fs::File,
        created: &mut Created,
    ) -> StoreResult<Store> {
        let db_path = path.join(DB_DIR);
        fs::create_dir(&db_path).map_err(io_err(&db_path))?;
        created.db = true;
        let packs_path = path.join(PACKS_DIR);
        fs::create_dir(&packs_path).map_err(io_err(&packs_path))?;
        created.packs = true;
        let backend = open_disk_backend(path, opts)?;
        backend.flush()?;

        created.format = true;
        write_format(path)?;
        if created.dir {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                sync_dir(parent)?;
            }
        }

        Ok(Store::from_parts(
            Engine::Disk(backend),
            Some(lock),
            Some(path.to_path_buf()),
        ))
    }

    /// Open the existing store in directory `path`, taking its exclusive lock.
    ///
    /// Fails with [`StoreError::NotAStore`] if `path` does not exist, is not a directory, or
    /// has no valid FORMAT file; with [`StoreError::UnsupportedVersion`] for another format
    /// version; and with [`StoreError::Busy`] if another holder keeps the lock for longer
    /// than `opts.lock_timeout`.
    ///
    /// The lock is per open file, so a second `open` of the same store in the same process
    /// is busy too (see the `lock` module).
    ///
    /// An older store is upgraded first (see the `upgrade` module).
    pub fn open(path: &Path, opts: &OpenOptions) -> StoreResult<Store> {
        match fs::metadata(path) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(not_a_store(path, "not a directory")),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(not_a_store(
                    path,
                    format!(
                        "does not exist (`memoir new {}` makes one there)",
                        path.display()
                    ),
                ))
            }
            Err(e) => return Err(io_err(path)(e)),
        }
        let version = read_format(path)?;
        let lock = match lock::lock_existing(path, opts.lock_timeout) {
            Ok(lock) => lock,
            Err(e) if read_only::is_read_only_error(&e) => {
                return Store::open_read_only(path, opts, version, e, None)
            }
            Err(e) => return Err(e),
        };
        // An upgrade a crash cut short is finished or undone before anything looks at `db/`.
        upgrade::settle(path, version)?;
        repair::settle(path)?;

        // Checked under the lock, so no concurrent `create` or repair is half done.
        require_log(path)?;
        if version != LEGACY_FORMAT_VERSION && !path.join(PACKS_DIR).is_dir() {
            return Err(not_a_store(
                path,
                format!("{FORMAT_FILE} file present but no {PACKS_DIR}/ directory"),
            ));
        }
        if version != FORMAT_VERSION {
            upgrade::rebuild(path, opts)?;
        }
        let engine = match open_disk_backend(path, opts) {
            Ok(backend) => Engine::Disk(require_recovered(path, backend)?),
            // sled writes as it opens: on a full disk the store is still read, from a copy
            // of its database elsewhere, holding the LOCK.
            Err(e) if read_only::is_disk_full(&e) => {
                return Store::open_read_only(path, opts, version, e, Some(lock));
            }
            Err(e) => return Err(e),
        };
        let store = Store::from_parts(engine, Some(lock), Some(path.to_path_buf()));
        // History, not data: a journal the log cannot take now waits for the next open.
        let _ = store.settle_ref_journal();
        Ok(store)
    }

    /// A fresh, empty store in memory: no directory, no lock. For tests and benches.
    pub fn memory() -> Store {
        Store::from_parts(Engine::Memory(MemoryBackend::new()), None, None)
    }
}
