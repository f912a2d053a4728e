//! Reading watched files: regular files only, and never through a link at read time.
//!
//! The policy (also in `memoir watch --help`): `watch add` resolves the path it is given
//! once, links included, and records the target; every read (the add's own, `scan`,
//! `status`) opens the recorded path without following a link at its end (`O_NOFOLLOW`)
//! and without waiting for a writer (`O_NONBLOCK`), and reads it only when what it opened
//! is a regular file. A recorded path that changed to a link (or whose directory did) is
//! reported and not read, so a link swapped in cannot make another file's text a memory;
//! a FIFO, socket or device is refused instead of waited on.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{ErrorKind, Read};
use std::path::Path;

use crate::app::MemoirError;
use crate::ingest::MAX_DOCUMENT_BYTES;

/// Why a watched file was not read. A missing file is exit 2, the rest exit 1.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileError {
    /// Nothing at the path.
    #[error("no file {0}; nothing was stored")]
    Missing(String),
    /// A directory.
    #[error("{0} is a directory; watch the files in it one by one")]
    Directory(String),
    /// A FIFO, socket or device: never read (a FIFO would block the read).
    #[error("{path} is {kind}, not a regular file; memoir reads only regular files")]
    NotRegular {
        /// The path.
        path: String,
        /// `a FIFO`, `a socket`, `a device`.
        kind: &'static str,
    },
    /// The recorded path is a link now: a link is resolved once, at `add`.
    #[error(
        "{0} changed to a link; not read (memoir never follows a link at a watched path: \
         `memoir watch remove` it, then watch the file the link names)"
    )]
    Link(String),
    /// A directory on the recorded path is a link now, so the path leads elsewhere.
    #[error("{path} now leads to {now} (a directory on its path changed to a link); not read")]
    Elsewhere {
        /// The recorded path.
        path: String,
        /// Where it leads.
        now: String,
    },
    /// Longer than [`MAX_DOCUMENT_BYTES`].
    #[error(
        "{0} is longer than {max} MiB, the most memoir reads of one document; nothing was stored",
        max = MAX_DOCUMENT_BYTES >> 20
    )]
    TooLong(String),
    /// The path is not text.
    #[error("{0}: the path is not UTF-8; memoir records paths as text")]
    NotUtf8(String),
    /// Any other failure (permission denied among them).
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
}

impl FileError {
    fn io(path: &str, source: std::io::Error) -> Self {
        if source.kind() == ErrorKind::NotFound {
            FileError::Missing(path.to_string())
        } else {
            FileError::Io {
                path: path.to_string(),
                source,
            }
        }
    }
}

impl From<FileError> for MemoirError {
    fn from(e: FileError) -> Self {
        match e {
            FileError::Missing(_) => MemoirError::not_found(e.to_string()),
            _ => MemoirError::invalid(e.to_string()),
        }
    }
}

/// Open without following a link at the path's end, and without waiting for a writer.
const OPEN_FLAGS: i32 = libc::O_NONBLOCK | libc::O_NOFOLLOW;

/// Resolves `path` for `watch add`, links included (the one time they are followed), and
/// reads the file there: its absolute path, to record, and its bytes.
pub(crate) fn read_for_add(path: &Path) -> Result<(String, Vec<u8>), FileError> {
    let shown = path.display().to_string();
    let abs = path.canonicalize().map_err(|e| FileError::io(&shown, e))?;
    let abs = abs
        .into_os_string()
        .into_string()
        .map_err(|_| FileError::NotUtf8(shown))?;
    let bytes = read_recorded(&abs)?;
    Ok((abs, bytes))
}

/// Reads the watched file at `path`, an absolute path as recorded, without following a
/// link (see the module's policy): at most [`MAX_DOCUMENT_BYTES`] of a regular file.
pub(crate) fn read_recorded(path: &str) -> Result<Vec<u8>, FileError> {
    let p = Path::new(path);
    let before = std::fs::symlink_metadata(p).map_err(|e| FileError::io(path, e))?;
    check_kind(path, &before)?;
    if let (Some(dir), Some(name)) = (p.parent(), p.file_name()) {
        let real = dir.canonicalize().map_err(|e| FileError::io(path, e))?;
        if real != dir {
            return Err(FileError::Elsewhere {
                path: path.to_string(),
                now: real.join(name).display().to_string(),
            });
        }
    }
    let mut file = open(p).map_err(|e| {
        if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
            FileError::Link(path.to_string())
        } else {
            FileError::io(path, e)
        }
    })?;
    let meta = file.metadata().map_err(|e| FileError::io(path, e))?;
    check_kind(path, &meta)?;
    if meta.len() > MAX_DOCUMENT_BYTES as u64 {
        return Err(FileError::TooLong(path.to_string()));
    }
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_DOCUMENT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::io(path, e))?;
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return Err(FileError::TooLong(path.to_string()));
    }
    Ok(bytes)
}

/// Opens `p` for reading, with [`OPEN_FLAGS`].
fn open(p: &Path) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(OPEN_FLAGS);
    }
    o.open(p)
}

/// Refuses what is not a regular file (`meta` from `lstat` or `fstat`).
fn check_kind(path: &str, meta: &Metadata) -> Result<(), FileError> {
    let t = meta.file_type();
    if t.is_file() {
        return Ok(());
    }
    if t.is_symlink() {
        return Err(FileError::Link(path.to_string()));
    }
    if t.is_dir() {
        return Err(FileError::Directory(path.to_string()));
    }
    let kind = {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if t.is_fifo() {
                "a FIFO"
            } else if t.is_socket() {
                "a socket"
            } else {
                "a device"
            }
        }
        #[cfg(not(unix))]
        {
            "a special file"
        }
    };
    Err(FileError::NotRegular {
        path: path.to_string(),
        kind,
    })
}
