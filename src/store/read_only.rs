//! Reading a store this process cannot write: a read-only file system, or no permission to
//! write the store's directory, read without its LOCK (which cannot be made or locked); or a
//! store whose disk is full, read holding its LOCK. Either is read without writing a byte
//! of it: sled must write to open its database, so it opens a private copy of `db/` (the
//! refs: small) in a scratch directory the caller names, over the store's packs and index
//! files opened for reading. Every write through the handle fails with
//! [`StoreError::ReadOnly`]; the copy is removed when the handle closes.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::files::io_err;
use super::format_file::FORMAT_VERSION;
use super::handle::Engine;
use super::lifecycle::{require_log, require_recovered, DB_DIR};
use super::packs::PACKS_DIR;
use super::{DiskBackend, OpenOptions, Store, StoreError, StoreResult};

/// Why a store is read without writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReadOnlyReason {
    /// No write access to it.
    NoWriteAccess,
    /// Its disk is full: sled could not open its database, which writes as it opens.
    DiskFull,
}

/// Whether `e`, met taking a store's LOCK, means the store cannot be written here.
pub(super) fn is_read_only_error(e: &StoreError) -> bool {
    matches!(e, StoreError::Io { source, .. } if matches!(
        source.kind(),
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
    ))
}

/// Whether `e`, met opening the database, is a full disk (or quota).
pub(super) fn is_disk_full(e: &StoreError) -> bool {
    matches!(e, StoreError::Io { source, .. } if source.kind() == io::ErrorKind::StorageFull
        || source.kind() == io::ErrorKind::QuotaExceeded)
}

/// A scratch directory of this process, removed when dropped (after the engine using it
/// has closed: see the field order of the store's state).
#[derive(Debug)]
pub(super) struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

impl Store {
    /// Opens the store in `path`, of format `version`, for reading only: the caller found
    /// its LOCK cannot be taken for want of write access (`held` is `None`), or took it and
    /// could not open the database for want of space (`held` is the LOCK, kept while the
    /// handle lives). Needs `opts.scratch_dir`, on another disk for a full one; without it,
    /// or when the copy cannot be made there, the error is `denied`.
    pub(super) fn open_read_only(
        path: &Path,
        opts: &OpenOptions,
        version: u32,
        denied: StoreError,
        held: Option<fs::File>,
    ) -> StoreResult<Store> {
        let Some(scratch_root) = &opts.scratch_dir else {
            return Err(denied);
        };
        let why = match held {
            Some(_) => ReadOnlyReason::DiskFull,
            None => ReadOnlyReason::NoWriteAccess,
        };
        if version != FORMAT_VERSION {
            // An older store is upgraded by its first open with write access.
            return Err(StoreError::ReadOnly);
        }
        require_log(path)?;
        let copied = make_scratch(scratch_root)
            .and_then(|scratch| copy_database(&path.join(DB_DIR), &scratch.0).map(|()| scratch));
        let scratch = match copied {
            Ok(scratch) => scratch,
            // No room for the copy either: the full disk is the error to report.
            Err(_) if why == ReadOnlyReason::DiskFull => return Err(denied),
            Err(e) => return Err(e),
        };
        let backend = DiskBackend::open(&scratch.0, &path.join(PACKS_DIR), opts, false)?
            .ok_or_else(|| StoreError::EngineDamaged {
                path: path.to_path_buf(),
                detail: "its copy is held by another handle".into(),
            })?;
        Ok(Store::read_only_parts(
            Engine::Disk(require_recovered(path, backend)?),
            path.to_path_buf(),
            scratch,
            held,
            why,
        ))
    }
}

/// A new, empty directory under `root` for this process.
fn make_scratch(root: &Path) -> StoreResult<Scratch> {
    static MADE: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let dir = root.join(format!("memoir-read-{}-{n}", std::process::id()));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(Scratch(dir)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_err(&dir)(e)),
        }
    }
}

/// Copies database directory `from` into `to` (sled writes to its copy as it opens).
fn copy_database(from: &Path, to: &Path) -> StoreResult<()> {
    for entry in fs::read_dir(from).map_err(io_err(from))? {
        let entry = entry.map_err(io_err(from))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().map_err(io_err(&src))?;
        if kind.is_dir() {
            fs::create_dir(&dst).map_err(io_err(&dst))?;
            copy_database(&src, &dst)?;
        } else if kind.is_file() {
            fs::copy(&src, &dst).map_err(io_err(&src))?;
            // The copy takes the original's mode, read-only here; sled writes to its copy.
            fs::set_permissions(&dst, fs::Permissions::from_mode(0o600)).map_err(io_err(&dst))?;
        }
    }
    Ok(())
}
