//! The store directory: a FORMAT metadata file, a LOCK file and the engine's data.
//!
//! Layout of a store directory:
//!
//! ```text
//! <store>/FORMAT   metadata, written last by `create` (its presence makes it a store)
//! <store>/LOCK     empty file; an exclusive OS lock on it means "this store is open"
//! <store>/db/      the sled database: object index and refs
//! <store>/packs/   pack files holding the objects' bytes
//! <store>/cache/   derived data (see store-format.md); `cache/head` is kept here
//! ```

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::head_file::{self, HeadFile};
use super::{
    Backend, Faults, FaultyBackend, MemoryBackend, ObjectStore, PutOutcome, RawId, RefStore,
    SledBackend, StoreError, StoreResult,
};

/// Name of the metadata file inside a store directory.
pub const FORMAT_FILE: &str = "FORMAT";
/// Name of the lock file inside a store directory.
pub const LOCK_FILE: &str = "LOCK";
/// The store format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 2;
/// The older format version this build opens, moving its objects into packs and
/// rewriting FORMAT: objects inside sled, no `packs/` directory.
const LEGACY_FORMAT_VERSION: u32 = 1;

/// Subdirectory of a store that holds the sled database.
const DB_DIR: &str = "db";
/// Subdirectory of a store that holds the pack files.
const PACKS_DIR: &str = "packs";
/// Temporary name FORMAT is written under before being renamed into place.
const FORMAT_TMP: &str = "FORMAT.tmp";
/// First line of every FORMAT file.
const FORMAT_MAGIC: &str = "memoir-store";
/// FORMAT files are a few dozen bytes; refuse to read more than this of one.
const FORMAT_MAX_BYTES: u64 = 4096;
/// Interval between two attempts to take a held lock.
const LOCK_POLL: Duration = Duration::from_millis(5);

/// Which engine holds a store's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// sled, in the store's `db/` directory (the only kind written to a FORMAT file).
    Sled,
    /// In memory, no directory ([`Store::memory`]); never written to a FORMAT file.
    Memory,
}

impl BackendKind {
    /// The name used for this kind in the FORMAT file.
    fn name(self) -> &'static str {
        match self {
            BackendKind::Sled => "sled",
            BackendKind::Memory => "memory",
        }
    }
}

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
}

impl Default for OpenOptions {
    /// Wait up to 5 s for the lock; 64 MiB of cache; 64 MiB packs.
    fn default() -> Self {
        Self {
            lock_timeout: Duration::from_secs(5),
            cache_bytes: 64 * 1024 * 1024,
            pack_bytes: 64 * 1024 * 1024,
        }
    }
}

/// The engine behind a store; an enum rather than a trait object so that test-only entry
/// points such as [`Store::overwrite_raw`] can reach the concrete backend.
enum Engine {
    Sled(SledBackend),
    Memory(MemoryBackend),
    Faulty(FaultyBackend),
}

impl Engine {
    fn as_dyn(&self) -> &dyn Backend {
        match self {
            Engine::Sled(b) => b,
            Engine::Memory(b) => b,
            Engine::Faulty(b) => b,
        }
    }
}

/// Shared state of a [`Store`]. Fields drop in declaration order: the engine is closed
/// (and its files released) before the lock file is closed, which releases the lock.
struct Inner {
    engine: Engine,
    /// Published when dropped: after the engine has closed, before the lock is released.
    head: HeadFile,
    /// The open LOCK file, holding the exclusive lock (`None` for a memory store).
    _lock: Option<File>,
    path: Option<PathBuf>,
    kind: BackendKind,
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
            .field("kind", &self.inner.kind)
            .finish_non_exhaustive()
    }
}

/// An I/O error on `path`.
pub(super) fn io_err(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn not_a_store(path: &Path, reason: impl Into<String>) -> StoreError {
    StoreError::NotAStore {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// The exact FORMAT file content for a store of `kind`.
fn format_text(kind: BackendKind) -> String {
    format!(
        "{FORMAT_MAGIC}\nformat-version: {FORMAT_VERSION}\nbackend: {}\n",
        kind.name()
    )
}

/// Parse a FORMAT file strictly: the magic line, then `key: value` lines among which
/// `format-version` and `backend` are required; unknown keys are ignored (forward
/// compatibility). `path` is the store directory, for errors.
fn parse_format(path: &Path, text: &str) -> StoreResult<(BackendKind, u32)> {
    let garbled = |why: String| not_a_store(path, format!("garbled {FORMAT_FILE} file: {why}"));
    // One trailing LF ends the last line; any other empty line is garbage.
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut lines = body.split('\n');
    if lines.next() != Some(FORMAT_MAGIC) {
        return Err(garbled(format!("first line is not `{FORMAT_MAGIC}`")));
    }
    let mut version: Option<&str> = None;
    let mut backend: Option<&str> = None;
    for line in lines {
        let Some((key, value)) = line.split_once(": ") else {
            return Err(garbled(format!("line {line:?} is not `key: value`")));
        };
        if key.is_empty() || value.is_empty() || key.contains(char::is_whitespace) {
            return Err(garbled(format!("line {line:?} is not `key: value`")));
        }
        let slot = match key {
            "format-version" => &mut version,
            "backend" => &mut backend,
            _ => continue,
        };
        if slot.replace(value).is_some() {
            return Err(garbled(format!("`{key}` appears twice")));
        }
    }
    let version = version.ok_or_else(|| garbled("no `format-version` line".into()))?;
    let found: u32 = version
        .parse()
        .map_err(|_| garbled(format!("format-version {version:?} is not a number")))?;
    if found != FORMAT_VERSION && found != LEGACY_FORMAT_VERSION {
        return Err(StoreError::UnsupportedVersion {
            path: path.to_path_buf(),
            found,
            supported: FORMAT_VERSION,
        });
    }
    match backend.ok_or_else(|| garbled("no `backend` line".into()))? {
        "sled" => Ok((BackendKind::Sled, found)),
        other => Err(not_a_store(
            path,
            format!("unknown backend {other:?} in {FORMAT_FILE} file"),
        )),
    }
}

/// Read and parse the FORMAT file of store directory `path`: the backend and the format
/// version.
fn read_format(path: &Path) -> StoreResult<(BackendKind, u32)> {
    let file_path = path.join(FORMAT_FILE);
    let file = match File::open(&file_path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(not_a_store(path, format!("no {FORMAT_FILE} file")))
        }
        Err(e) => {
            return Err(not_a_store(
                path,
                format!("cannot read {FORMAT_FILE} file: {e}"),
            ))
        }
    };
    let mut bytes = Vec::new();
    file.take(FORMAT_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| not_a_store(path, format!("cannot read {FORMAT_FILE} file: {e}")))?;
    if bytes.len() as u64 > FORMAT_MAX_BYTES {
        return Err(not_a_store(
            path,
            format!("garbled {FORMAT_FILE} file: longer than {FORMAT_MAX_BYTES} bytes"),
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| not_a_store(path, format!("garbled {FORMAT_FILE} file: not UTF-8")))?;
    parse_format(path, &text)
}

/// Take the exclusive lock on `file`, retrying every [`LOCK_POLL`] until `timeout` has
/// elapsed (a zero timeout is one attempt). `path` is the store directory, for errors.
fn acquire_lock(file: &File, path: &Path, timeout: Duration) -> StoreResult<()> {
    let start = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(fs::TryLockError::WouldBlock) => {
                let waited = start.elapsed();
                if waited >= timeout {
                    return Err(StoreError::Busy {
                        path: path.to_path_buf(),
                        waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
                    });
                }
                std::thread::sleep(LOCK_POLL.min(timeout - waited));
            }
            Err(fs::TryLockError::Error(e)) => return Err(io_err(&path.join(LOCK_FILE))(e)),
        }
    }
}

/// Open the sled database of a store whose LOCK is held. sled's own file lock can outlive the
/// previous holder's handle by a moment (its I/O threads drop the last reference after the
/// LOCK is released), so a database still locked is retried like the LOCK, within
/// `opts.lock_timeout`.
fn open_sled(path: &Path, opts: &OpenOptions) -> StoreResult<SledBackend> {
    let start = Instant::now();
    loop {
        match SledBackend::open(
            &path.join(DB_DIR),
            &path.join(PACKS_DIR),
            opts.cache_bytes,
            opts.pack_bytes,
        ) {
            Err(StoreError::Busy { .. }) => {
                let waited = start.elapsed();
                if waited >= opts.lock_timeout {
                    return Err(StoreError::Busy {
                        path: path.to_path_buf(),
                        waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
                    });
                }
                std::thread::sleep(LOCK_POLL.min(opts.lock_timeout - waited));
            }
            other => return other,
        }
    }
}

/// Make the entries of directory `dir` durable (a no-op where directories cannot be opened
/// as files).
pub(super) fn sync_dir(dir: &Path) -> StoreResult<()> {
    #[cfg(unix)]
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir))?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// The engine's log file in store directory `path`: every open of the engine writes to it.
fn log_path(path: &Path) -> PathBuf {
    path.join(DB_DIR).join(SledBackend::LOG_FILE)
}

/// Writes this build's FORMAT file into store directory `path`: a temporary file, fsync,
/// rename over FORMAT, fsync of the directory, so FORMAT is always whole.
fn write_format(path: &Path) -> StoreResult<()> {
    let tmp_path = path.join(FORMAT_TMP);
    let mut tmp = File::create(&tmp_path).map_err(io_err(&tmp_path))?;
    tmp.write_all(format_text(BackendKind::Sled).as_bytes())
        .and_then(|()| tmp.sync_all())
        .map_err(io_err(&tmp_path))?;
    drop(tmp);
    let format_path = path.join(FORMAT_FILE);
    fs::rename(&tmp_path, &format_path).map_err(io_err(&format_path))?;
    sync_dir(path)
}

/// What `create` made so far, so that a failed create can remove exactly that.
#[derive(Default)]
struct Created {
    dir: bool,
    lock: bool,
    db: bool,
    packs: bool,
    format_tmp: bool,
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
            let mut entries = fs::read_dir(path).map_err(io_err(path))?;
            if entries.next().is_some() {
                return Err(StoreError::NotEmpty {
                    path: path.to_path_buf(),
                });
            }
        }
        match Self::create_in(path, opts, &mut created) {
            Ok(store) => Ok(store),
            Err(e) => {
                // Best effort: the original error is what matters.
                if created.format_tmp {
                    let _ = fs::remove_file(path.join(FORMAT_TMP));
                }
                if created.db {
                    let _ = fs::remove_dir_all(path.join(DB_DIR));
                }
                if created.packs {
                    let _ = fs::remove_dir_all(path.join(PACKS_DIR));
                }
                if created.lock {
                    let _ = fs::remove_file(path.join(LOCK_FILE));
                }
                if created.dir {
                    let _ = fs::remove_dir(path);
                }
                Err(e)
            }
        }
    }

    /// The steps of `create` after the emptiness checks, recording in `created` what exists.
    fn create_in(path: &Path, opts: &OpenOptions, created: &mut Created) -> StoreResult<Store> {
        // `create_new` makes concurrent creators race on one atomic step: the loser sees the
        // directory as taken and touches nothing.
        let lock_path = path.join(LOCK_FILE);
        let lock = match fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&lock_path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(StoreError::NotEmpty {
                    path: path.to_path_buf(),
                })
            }
            Err(e) => return Err(io_err(&lock_path)(e)),
        };
        created.lock = true;
        acquire_lock(&lock, path, opts.lock_timeout)?;

        let db_path = path.join(DB_DIR);
        fs::create_dir(&db_path).map_err(io_err(&db_path))?;
        created.db = true;
        let packs_path = path.join(PACKS_DIR);
        fs::create_dir(&packs_path).map_err(io_err(&packs_path))?;
        created.packs = true;
        let backend = SledBackend::open(&db_path, &packs_path, opts.cache_bytes, opts.pack_bytes)?;
        backend.flush()?;

        created.format_tmp = true;
        write_format(path)?;
        created.format_tmp = false;
        if created.dir {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                sync_dir(parent)?;
            }
        }

        Ok(Store::from_parts(
            Engine::Sled(backend),
            Some(lock),
            Some(path.to_path_buf()),
            BackendKind::Sled,
        ))
    }

    /// Open the existing store in directory `path`, taking its exclusive lock.
    ///
    /// Fails with [`StoreError::NotAStore`] if `path` does not exist, is not a directory, or
    /// has no valid FORMAT file; with [`StoreError::UnsupportedVersion`] for another format
    /// version; and with [`StoreError::Busy`] if another holder keeps the lock for longer
    /// than `opts.lock_timeout`.
    ///
    /// The lock is an OS advisory lock on the LOCK file, which the OS releases when its
    /// holder's process ends for any reason, so a crashed or killed holder never blocks
    /// anyone; the LOCK file itself is never deleted and carries no state. The lock is per
    /// open file, so a second `open` of the same store in the same process is busy too.
    pub fn open(path: &Path, opts: &OpenOptions) -> StoreResult<Store> {
        match fs::metadata(path) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(not_a_store(path, "not a directory")),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(not_a_store(path, "does not exist"))
            }
            Err(e) => return Err(io_err(path)(e)),
        }
        let (kind, version) = read_format(path)?;

        let lock_path = path.join(LOCK_FILE);
        let lock = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(io_err(&lock_path))?;
        acquire_lock(&lock, path, opts.lock_timeout)?;

        // Checked under the lock, so no concurrent `create` or repair is half done.
        let db_path = path.join(DB_DIR);
        if !db_path.is_dir() {
            return Err(not_a_store(
                path,
                format!("{FORMAT_FILE} file present but no {DB_DIR}/ directory"),
            ));
        }
        if version != LEGACY_FORMAT_VERSION && !path.join(PACKS_DIR).is_dir() {
            return Err(not_a_store(
                path,
                format!("{FORMAT_FILE} file present but no {PACKS_DIR}/ directory"),
            ));
        }
        let engine = match kind {
            BackendKind::Sled => {
                // A version-1 store's objects are copied into packs as the backend opens;
                // FORMAT says version 2 once the copies are durable, and only then is the
                // old copy dropped, so no build ever sees a store without its objects.
                let backend = open_sled(path, opts)?;
                if version == LEGACY_FORMAT_VERSION {
                    write_format(path)?;
                }
                backend.drop_legacy()?;
                Engine::Sled(backend)
            }
            // `read_format` never yields Memory; refuse rather than panic if it ever did.
            BackendKind::Memory => {
                return Err(not_a_store(path, "memory backend in a store directory"))
            }
        };
        Ok(Store::from_parts(
            engine,
            Some(lock),
            Some(path.to_path_buf()),
            kind,
        ))
    }

    /// A fresh, empty store in memory: no directory, no lock. For tests and benches.
    pub fn memory() -> Store {
        Store::from_parts(
            Engine::Memory(MemoryBackend::new()),
            None,
            None,
            BackendKind::Memory,
        )
    }

    fn from_parts(
        engine: Engine,
        lock: Option<File>,
        path: Option<PathBuf>,
        kind: BackendKind,
    ) -> Store {
        Store {
            inner: Arc::new(Inner {
                engine,
                head: HeadFile::new(
                    path.as_ref()
                        .filter(|_| kind == BackendKind::Sled)
                        .map(|p| (p.clone(), log_path(p))),
                ),
                _lock: lock,
                path,
                kind,
            }),
        }
    }

    /// Ref changes made through this handle so far: the version a note given to
    /// [`Store::note_head`] describes.
    pub fn refs_version(&self) -> u64 {
        self.inner.head.version()
    }

    /// Gives the note to publish in the head file when the store closes: a description of
    /// the refs as they were at `version` (from [`Store::refs_version`], read before the
    /// refs). It is kept only if no ref changed since, and published only if every change
    /// it reflects was flushed and no ref changed after it.
    pub fn note_head(&self, version: u64, note: Vec<u8>) {
        self.inner.head.note(version, note);
    }

    /// The note of the head file of the closed store in directory `path`, without opening
    /// or locking the store: `None` unless the file is whole and no one opened the store
    /// since it was written. A reader that uses it sees the store as it was at that close.
    pub fn read_head_note(path: &Path) -> Option<Vec<u8>> {
        head_file::read(path, &log_path(path))
    }

    /// The store directory (`None` for a memory store).
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// Which engine holds this store's data.
    pub fn kind(&self) -> BackendKind {
        self.inner.kind
    }

    /// The backend itself.
    pub fn backend(&self) -> &dyn Backend {
        self.inner.engine.as_dyn()
    }

    /// For tests and fault injection: replace the stored bytes of `id` without
    /// verification, to simulate a damaged copy.
    pub fn overwrite_raw(&self, id: &RawId, bytes: &[u8]) -> StoreResult<()> {
        match &self.inner.engine {
            Engine::Sled(b) => b.overwrite_raw(id, bytes),
            Engine::Memory(b) => {
                b.overwrite_raw(id, bytes);
                Ok(())
            }
            Engine::Faulty(b) => {
                b.overwrite_raw(id, bytes);
                Ok(())
            }
        }
    }

    /// For tests: a fresh in-memory store that injects the faults `faults` asks for and
    /// keeps a durable snapshot at each flush (see [`Store::power_cut`]).
    pub fn with_faults(faults: std::sync::Arc<Faults>) -> Store {
        Store::from_parts(
            Engine::Faulty(FaultyBackend::new(faults)),
            None,
            None,
            BackendKind::Memory,
        )
    }

    /// For tests: on a store made by [`Store::with_faults`], lose every write since the
    /// last successful flush, as a power cut would. Other stores: no effect.
    pub fn power_cut(&self) {
        if let Engine::Faulty(b) = &self.inner.engine {
            b.power_cut();
        }
    }
}

impl ObjectStore for Store {
    fn get(&self, id: &RawId) -> StoreResult<Option<Vec<u8>>> {
        self.backend().get(id)
    }

    fn put(&self, id: &RawId, bytes: &[u8]) -> StoreResult<PutOutcome> {
        self.backend().put(id, bytes)
    }

    fn put_many(&self, objects: &[(RawId, Vec<u8>)]) -> StoreResult<Vec<PutOutcome>> {
        self.backend().put_many(objects)
    }

    fn contains(&self, id: &RawId) -> StoreResult<bool> {
        self.backend().contains(id)
    }

    fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        self.backend().ids_with_prefix(prefix)
    }

    fn for_each_id(&self, f: &mut dyn FnMut(RawId) -> bool) -> StoreResult<()> {
        self.backend().for_each_id(f)
    }

    fn delete(&self, id: &RawId) -> StoreResult<bool> {
        self.backend().delete(id)
    }

    fn reclaim(&self) -> StoreResult<()> {
        self.backend().reclaim()
    }

    fn flush(&self) -> StoreResult<()> {
        let version = self.inner.head.version();
        self.backend().flush()?;
        self.inner.head.flushed(version);
        Ok(())
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
        self.inner.head.before_ref_change()?;
        self.backend().cas_ref(name, expected, new)
    }

    fn list_refs(&self, prefix: &str) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.backend().list_refs(prefix)
    }
}

impl Backend for Store {
    fn size_on_disk(&self) -> StoreResult<u64> {
        self.backend().size_on_disk()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> StoreResult<BackendKind> {
        parse_format(Path::new("/s"), text).map(|(kind, _)| kind)
    }

    #[test]
    fn written_format_is_exact_and_parses() {
        let text = format_text(BackendKind::Sled);
        assert_eq!(text, "memoir-store\nformat-version: 2\nbackend: sled\n");
        assert_eq!(
            parse_format(Path::new("/s"), &text).unwrap(),
            (BackendKind::Sled, 2)
        );
        // Version 1 still opens (its objects are moved into packs).
        assert_eq!(
            parse_format(
                Path::new("/s"),
                "memoir-store\nformat-version: 1\nbackend: sled\n"
            )
            .unwrap(),
            (BackendKind::Sled, 1)
        );
    }

    #[test]
    fn unknown_keys_are_ignored() {
        let text = "memoir-store\ncreated-by: memoir 9\nformat-version: 1\nbackend: sled\nx: y\n";
        assert_eq!(parse(text).unwrap(), BackendKind::Sled);
    }

    #[test]
    fn bad_formats_are_typed() {
        let not_store = |t: &str| matches!(parse(t), Err(StoreError::NotAStore { .. }));
        assert!(not_store(""));
        assert!(not_store("memoir-store\n"));
        assert!(not_store("git\nformat-version: 1\nbackend: sled\n"));
        assert!(not_store(
            "memoir-store\r\nformat-version: 1\r\nbackend: sled\r\n"
        ));
        assert!(not_store(
            "memoir-store\nformat-version: one\nbackend: sled\n"
        ));
        assert!(not_store("memoir-store\nformat-version: 1\n"));
        assert!(not_store(
            "memoir-store\nformat-version: 1\nbackend: rocks\n"
        ));
        assert!(not_store(
            "memoir-store\nformat-version: 1\nbackend: memory\n"
        ));
        assert!(not_store(
            "memoir-store\nformat-version: 1\n\nbackend: sled\n"
        ));
        assert!(not_store(
            "memoir-store\nformat-version: 1\nformat-version: 1\nbackend: sled\n"
        ));
        assert!(not_store("memoir-store\nformat-version:1\nbackend: sled\n"));
        assert!(matches!(
            parse("memoir-store\nformat-version: 3\nbackend: sled\n"),
            Err(StoreError::UnsupportedVersion {
                found: 3,
                supported: 2,
                ..
            })
        ));
    }

    #[test]
    fn memory_store_has_no_path() {
        let s = Store::memory();
        assert_eq!(s.path(), None);
        assert_eq!(s.kind(), BackendKind::Memory);
        assert_eq!(s.size_on_disk().unwrap(), 0);
    }
}
