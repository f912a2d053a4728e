//! The head file: what the refs said when a store was last closed, for readers that answer
//! from derived caches without opening the engine.
//!
//! `<store>/cache/head` holds an opaque note (the repository layer describes `HEAD` in it)
//! and a fingerprint of the engine's log file taken after the engine closed. It is trusted
//! only while the log file still has that fingerprint: every later open of the engine
//! writes to the log (recovery), so a reader that finds another fingerprint ignores the
//! file. A handle also removes the file before its first ref change, so a writer that dies
//! half way never leaves a file describing refs it changed. Layout in store-format.md,
//! "Derived caches".

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use xxhash_rust::xxh3::xxh3_128;

use super::{StoreError, StoreResult};

/// First bytes of a head file.
const MAGIC: &[u8] = b"MEMHEAD1";
/// Bytes of a fingerprint: length, mtime (s, ns), ctime (s, ns), inode.
const PRINT_LEN: usize = 8 + 8 + 4 + 8 + 4 + 8;
/// A head file larger than this is not one.
const MAX_BYTES: u64 = 64 * 1024;

/// Where the head file of the store at `store_dir` lives.
pub fn head_path(store_dir: &Path) -> PathBuf {
    store_dir.join("cache").join("head")
}

/// The identity of a file's current content as the file system reports it: length,
/// modification and change times to the nanosecond, and inode.
fn fingerprint(file: &Path) -> io::Result<[u8; PRINT_LEN]> {
    let m = fs::metadata(file)?;
    let mut out = [0u8; PRINT_LEN];
    let mut w = &mut out[..];
    let mut put = |b: &[u8]| {
        let (head, rest) = std::mem::take(&mut w).split_at_mut(b.len());
        head.copy_from_slice(b);
        w = rest;
    };
    put(&m.len().to_le_bytes());
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        put(&m.mtime().to_le_bytes());
        put(&(m.mtime_nsec() as u32).to_le_bytes());
        put(&m.ctime().to_le_bytes());
        put(&(m.ctime_nsec() as u32).to_le_bytes());
        put(&m.ino().to_le_bytes());
    }
    #[cfg(not(unix))]
    {
        let t = m
            .modified()?
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        put(&t.as_secs().to_le_bytes());
        put(&t.subsec_nanos().to_le_bytes());
    }
    Ok(out)
}

/// The note of the head file of the store at `store_dir`, when the file is whole and the
/// engine's log file at `log` still has the fingerprint it records; `None` otherwise.
pub fn read(store_dir: &Path, log: &Path) -> Option<Vec<u8>> {
    let path = head_path(store_dir);
    if fs::metadata(&path).ok()?.len() > MAX_BYTES {
        return None;
    }
    let bytes = fs::read(&path).ok()?;
    let body_len = bytes.len().checked_sub(16)?;
    let (body, sum) = bytes.split_at(body_len);
    if xxh3_128(body).to_le_bytes() != sum || body.len() < MAGIC.len() + PRINT_LEN + 4 {
        return None;
    }
    let (magic, rest) = body.split_at(MAGIC.len());
    let (print, rest) = rest.split_at(PRINT_LEN);
    let (len, note) = rest.split_at(4);
    let len = u32::from_le_bytes(len.try_into().ok()?) as usize;
    if magic != MAGIC || note.len() != len || fingerprint(log).ok()?[..] != *print {
        return None;
    }
    Some(note.to_vec())
}

/// Ref changes seen by one store handle, and the note to publish when it closes.
#[derive(Debug, Default)]
struct State {
    /// Ref changes made through this handle.
    version: u64,
    /// The highest version made durable by a flush.
    durable: u64,
    /// The note given for a version.
    note: Option<(u64, Vec<u8>)>,
    /// Whether this handle removed the head file (it does so once, before its first ref
    /// change).
    removed: bool,
}

/// The head file of one open store directory: removed before the first ref change,
/// written when the store closes (when dropped, after the engine, before the LOCK).
#[derive(Debug)]
pub(super) struct HeadFile {
    /// The store directory and the engine's log file (`None`: a store without a directory).
    paths: Option<(PathBuf, PathBuf)>,
    state: Mutex<State>,
}

impl HeadFile {
    /// The head file of the store in `store_dir` whose engine logs to `log`, or of a store
    /// without a directory (`None`), which has none.
    pub(super) fn new(paths: Option<(PathBuf, PathBuf)>) -> Self {
        HeadFile {
            paths,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ref changes made through this handle so far.
    pub(super) fn version(&self) -> u64 {
        self.state().version
    }

    /// Call before each ref change: forgets the note and, the first time, removes the head
    /// file (a failure to remove it refuses the change).
    pub(super) fn before_ref_change(&self) -> StoreResult<()> {
        let mut st = self.state();
        if !st.removed {
            if let Some((dir, _)) = &self.paths {
                let path = head_path(dir);
                match fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(source) => return Err(StoreError::Io { path, source }),
                }
            }
            st.removed = true;
        }
        st.version += 1;
        st.note = None;
        Ok(())
    }

    /// Records that a flush started at `version` (read when it started) succeeded.
    pub(super) fn flushed(&self, version: u64) {
        let mut st = self.state();
        st.durable = st.durable.max(version);
    }

    /// Keeps `note` to publish at close if no ref changed since `version` was read.
    pub(super) fn note(&self, version: u64, note: Vec<u8>) {
        let mut st = self.state();
        if st.version == version {
            st.note = Some((version, note));
        }
    }

    /// Writes the head file when a note describes the refs as they are and as flushed.
    /// Best effort: the file is derived data, and a missing one only costs readers time.
    fn publish(&self) {
        let Some((dir, log)) = &self.paths else {
            return;
        };
        let st = self.state();
        let Some((v, note)) = &st.note else {
            return;
        };
        if *v != st.version || *v > st.durable {
            return;
        }
        let Ok(print) = fingerprint(log) else {
            return;
        };
        let mut w = Vec::with_capacity(MAGIC.len() + PRINT_LEN + 4 + note.len() + 16);
        w.extend_from_slice(MAGIC);
        w.extend_from_slice(&print);
        w.extend_from_slice(&(note.len() as u32).to_le_bytes());
        w.extend_from_slice(note);
        let sum = xxh3_128(&w);
        w.extend_from_slice(&sum.to_le_bytes());
        let path = head_path(dir);
        let tmp = path.with_extension("tmp");
        let written = path
            .parent()
            .map_or(Ok(()), fs::create_dir_all)
            .and_then(|()| fs::write(&tmp, &w))
            .and_then(|()| fs::rename(&tmp, &path));
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
    }
}

impl Drop for HeadFile {
    fn drop(&mut self) {
        self.publish();
    }
}
