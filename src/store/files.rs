//! File-system steps shared by the store directory and the derived caches kept beside it:
//! I/O errors that name their path, durable directory entries, and atomic replacement of a
//! whole file.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{StoreError, StoreResult};

/// An I/O error on `path`.
pub(crate) fn io_err(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Make the entries of directory `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> StoreResult<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir))
}

/// Removes directory `dir` and everything in it, if it is there.
pub(crate) fn remove_dir_if_present(dir: &Path) -> StoreResult<()> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err(dir)(e)),
    }
}

/// Temporary files made so far by this process, so that no two writers (threads or
/// processes) ever share a temporary name.
static TEMPS: AtomicU64 = AtomicU64::new(0);

/// The temporary name `path` is written under before being renamed into place: beside it
/// (a rename within one directory is atomic), unique to this process and call.
pub(crate) fn temp_path(path: &Path) -> PathBuf {
    let n = TEMPS.fetch_add(1, Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".tmp.{}.{n}", std::process::id()));
    path.with_file_name(name)
}

/// Whether `file_name` is one [`temp_path`] makes (`NAME.tmp.PID.N`): what a crash between
/// writing and renaming leaves, for listings to skip (a remote directory's).
#[cfg(feature = "remote")]
pub(crate) fn is_temp_name(file_name: &str) -> bool {
    let mut parts = file_name.rsplitn(4, '.');
    let digits =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    digits(parts.next())
        && digits(parts.next())
        && parts.next() == Some("tmp")
        && parts.next().is_some_and(|p| !p.is_empty())
}

/// Replaces the file at `path` with `bytes`, atomically and durably: the bytes go to a
/// temporary file in the same directory (created if missing), which is synced, renamed over
/// `path`, and then the directory is synced. Readers see the old file or the new one, never
/// a mix, and after a crash `path` holds one of the two whole. On failure the temporary
/// file is removed and `path` is untouched.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> StoreResult<()> {
    replace_with(path, true, SHARED, &mut |f| f.write_all(bytes))
}

/// As [`write_atomically`], for a file only its owner may read (mode 0600 from the moment it
/// is created, so a secret in it is never readable by others, not even briefly).
pub(crate) fn write_atomically_private(path: &Path, bytes: &[u8]) -> StoreResult<()> {
    replace_with(path, true, PRIVATE, &mut |f| f.write_all(bytes))
}

/// As [`write_atomically`], without the two syncs: for derived caches, which are checked on
/// load and rebuilt when missing or damaged, so a crash may lose the newest copy but never
/// shows a torn one to a reader. Every command that closes the store publishes one, so the
/// syncs would cost every command milliseconds for nothing.
pub(crate) fn write_cache_file(path: &Path, bytes: &[u8]) -> StoreResult<()> {
    replace_with(path, false, SHARED, &mut |f| f.write_all(bytes))
}

/// As [`write_cache_file`], for a file written piece by piece by `fill` (through a buffer)
/// rather than held whole in memory.
pub(crate) fn write_cache_file_with(
    path: &Path,
    fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> StoreResult<()> {
    replace_with(path, false, SHARED, &mut |f| {
        // Writes of 64 KiB, not more: the page cache keeps a file in folios as large as the
        // writes that made it, and a reader that maps the file is charged a whole folio for
        // each page it touches (a search at 1,000,000 memories, reading a few hundred pages
        // of its index, had 113 MB of it resident when the file was written a megabyte at a
        // time).
        let mut w = io::BufWriter::with_capacity(64 << 10, f);
        fill(&mut w)?;
        w.flush()
    })
}

/// Permission bits a new file is created with: readable by all (less the umask), or by its
/// owner only.
const SHARED: u32 = 0o666;
const PRIVATE: u32 = 0o600;

fn replace_with(
    path: &Path,
    durable: bool,
    mode: u32,
    fill: &mut dyn FnMut(&mut File) -> io::Result<()>,
) -> StoreResult<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Err(e) = fs::create_dir_all(dir) {
        // Say plainly when something other than a directory is in the way.
        let e = match fs::metadata(dir) {
            Ok(m) if !m.is_dir() => io::Error::new(
                io::ErrorKind::NotADirectory,
                "exists and is not a directory",
            ),
            _ => e,
        };
        return Err(io_err(dir)(e));
    }
    let tmp = temp_path(path);
    let mut open = fs::OpenOptions::new();
    open.write(true).create(true).truncate(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, mode);
    let written = open
        .open(&tmp)
        .and_then(|mut f| {
            fill(&mut f)?;
            if durable {
                f.sync_all()?;
            }
            Ok(())
        })
        .and_then(|()| fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io_err(path)(e));
    }
    if durable {
        sync_dir(dir)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_files_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join("file");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["file"]);
    }

    #[test]
    fn temporary_names_are_unique_and_beside_the_target() {
        let a = temp_path(Path::new("/s/cache/head"));
        let b = temp_path(Path::new("/s/cache/head"));
        assert_ne!(a, b);
        assert_eq!(a.parent(), Some(Path::new("/s/cache")));
        assert!(a
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("head.tmp."));
    }

    #[test]
    fn a_failed_write_leaves_the_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file");
        write_atomically(&path, b"kept").unwrap();
        // A directory where the file should be renamed to: the rename fails.
        let blocked = dir.path().join("blocked");
        fs::create_dir_all(blocked.join("inside")).unwrap();
        assert!(matches!(
            write_atomically(&blocked, b"x"),
            Err(StoreError::Io { path, .. }) if path == blocked
        ));
        assert_eq!(fs::read(&path).unwrap(), b"kept");
        let mut names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["blocked", "file"]);
    }
}
