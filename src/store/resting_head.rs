//! The resting head: what `HEAD` resolved to when a store was last closed, for readers that
//! answer from derived caches keyed by a tree root without opening (or locking) the store.
//!
//! `<store>/cache/head` holds the record ([`RestingHead`]) and a fingerprint of the engine's
//! log file taken after the engine closed. It is trusted only while the log file still has
//! that fingerprint: every later open of the engine writes to the log (recovery), so a
//! reader that finds another fingerprint ignores the file. A handle also removes the file
//! before its first ref change, so a writer that dies half way never leaves a file
//! describing refs it changed. The repository layer describes `HEAD` to the handle after
//! each ref move; the handle publishes the last description when it closes, if no ref
//! changed after it and every change was flushed. Layout in store-format.md, "Derived
//! caches".

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use xxhash_rust::xxh3::xxh3_128;

use super::files::write_cache_file;
use super::{RawId, StoreError, StoreResult};

/// First bytes of a resting-head file.
const MAGIC: &[u8] = b"MEMHEAD1";
/// Bytes of a fingerprint: length, mtime (s, ns), ctime (s, ns), inode.
const PRINT_LEN: usize = 8 + 8 + 4 + 8 + 4 + 8;
/// A resting-head file larger than this is not one.
const MAX_BYTES: u64 = 64 * 1024;
/// Record kind byte: `HEAD` attached to a branch.
const ATTACHED: u8 = 0;
/// Record kind byte: `HEAD` detached at a commit.
const DETACHED: u8 = 1;

/// What `HEAD` resolved to when a store was last closed, in the store's terms (raw ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestingHead {
    /// The branch `HEAD` was attached to; `None` when it was detached at `commit`.
    pub branch: Option<String>,
    /// The commit `HEAD` resolved to.
    pub commit: RawId,
    /// That commit's tree root.
    pub root: RawId,
}

impl RestingHead {
    /// The record's bytes: kind (0 attached, 1 detached), commit id, tree root, then the
    /// branch name (UTF-8, empty when detached).
    fn encode(&self) -> Vec<u8> {
        let name = self.branch.as_deref().unwrap_or_default();
        let mut w = Vec::with_capacity(1 + 64 + name.len());
        w.push(if self.branch.is_some() {
            ATTACHED
        } else {
            DETACHED
        });
        w.extend_from_slice(&self.commit);
        w.extend_from_slice(&self.root);
        w.extend_from_slice(name.as_bytes());
        w
    }

    /// The record encoded in `b`, if it is one: an attached record names a branch, a
    /// detached one does not.
    fn decode(b: &[u8]) -> Option<RestingHead> {
        let (&kind, rest) = b.split_first()?;
        if rest.len() < 64 {
            return None;
        }
        let (ids, name) = rest.split_at(64);
        let commit: RawId = ids[..32].try_into().ok()?;
        let root: RawId = ids[32..].try_into().ok()?;
        let branch = match kind {
            ATTACHED => Some(
                String::from_utf8(name.to_vec())
                    .ok()
                    .filter(|n| !n.is_empty())?,
            ),
            DETACHED if name.is_empty() => None,
            _ => return None,
        };
        Some(RestingHead {
            branch,
            commit,
            root,
        })
    }
}

/// Where the resting-head file of the store at `store_dir` lives.
fn head_path(store_dir: &Path) -> PathBuf {
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

/// The resting head of the store at `store_dir`, when its file is whole and the engine's
/// log file at `log` still has the fingerprint it records; `None` otherwise.
pub(super) fn read(store_dir: &Path, log: &Path) -> Option<RestingHead> {
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
    let (len, record) = rest.split_at(4);
    let len = u32::from_le_bytes(len.try_into().ok()?) as usize;
    if magic != MAGIC || record.len() != len || fingerprint(log).ok()?[..] != *print {
        return None;
    }
    RestingHead::decode(record)
}

/// Ref changes seen by one store handle, and the resting head to publish when it closes.
#[derive(Debug, Default)]
struct State {
    /// Ref changes made through this handle.
    version: u64,
    /// The highest version made durable by a flush.
    durable: u64,
    /// The resting head given for a version.
    noted: Option<(u64, RestingHead)>,
    /// Whether this handle removed the file (it does so once, before its first ref
    /// change).
    removed: bool,
}

/// The resting-head file of one open store directory: removed before the first ref change,
/// written when the store closes (when dropped, after the engine, before the LOCK).
#[derive(Debug)]
pub(super) struct RestingHeadFile {
    /// The store directory and the engine's log file (`None`: a store without a directory).
    paths: Option<(PathBuf, PathBuf)>,
    state: Mutex<State>,
}

impl RestingHeadFile {
    /// The resting-head file of the store in `store_dir` whose engine logs to `log`, or of a
    /// store without a directory (`None`), which has none.
    pub(super) fn new(paths: Option<(PathBuf, PathBuf)>) -> Self {
        RestingHeadFile {
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

    /// Call before each ref change: forgets the noted head and, the first time, removes the
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
        st.noted = None;
        Ok(())
    }

    /// Records that a flush started at `version` (read when it started) succeeded.
    pub(super) fn flushed(&self, version: u64) {
        let mut st = self.state();
        st.durable = st.durable.max(version);
    }

    /// Keeps `head` to publish at close if no ref changed since `version` was read.
    pub(super) fn note(&self, version: u64, head: RestingHead) {
        let mut st = self.state();
        if st.version == version {
            st.noted = Some((version, head));
        }
    }

    /// Writes the file when the noted head describes the refs as they are and as flushed.
    /// Best effort: the file is derived data, and a missing one only costs readers time.
    fn publish(&self) {
        let Some((dir, log)) = &self.paths else {
            return;
        };
        let st = self.state();
        let Some((v, head)) = &st.noted else {
            return;
        };
        if *v != st.version || *v > st.durable {
            return;
        }
        let Ok(print) = fingerprint(log) else {
            return;
        };
        let record = head.encode();
        let mut w = Vec::with_capacity(MAGIC.len() + PRINT_LEN + 4 + record.len() + 16);
        w.extend_from_slice(MAGIC);
        w.extend_from_slice(&print);
        w.extend_from_slice(&(record.len() as u32).to_le_bytes());
        w.extend_from_slice(&record);
        let sum = xxh3_128(&w);
        w.extend_from_slice(&sum.to_le_bytes());
        let _ = write_cache_file(&head_path(dir), &w);
    }
}

impl Drop for RestingHeadFile {
    fn drop(&mut self) {
        self.publish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_reject_garbage() {
        for branch in [Some("agent/a".to_string()), None] {
            let h = RestingHead {
                branch,
                commit: [7; 32],
                root: [9; 32],
            };
            let bytes = h.encode();
            assert_eq!(RestingHead::decode(&bytes), Some(h.clone()));
            assert_eq!(RestingHead::decode(&bytes[..64]), None);
        }
        let mut bad = vec![ATTACHED];
        bad.extend_from_slice(&[1; 64]);
        assert_eq!(RestingHead::decode(&bad), None, "a branch needs a name");
        bad[0] = 2;
        assert_eq!(RestingHead::decode(&bad), None, "unknown kind");
        let mut detached_named = vec![DETACHED];
        detached_named.extend_from_slice(&[1; 64]);
        detached_named.extend_from_slice(b"main");
        assert_eq!(RestingHead::decode(&detached_named), None);
        let mut not_utf8 = vec![ATTACHED];
        not_utf8.extend_from_slice(&[1; 64]);
        not_utf8.push(0xff);
        assert_eq!(RestingHead::decode(&not_utf8), None);
    }
}
