//! The cached head: what `HEAD` resolved to when a store was last closed, for readers that
//! answer from derived caches keyed by a tree root without opening (or locking) the store.
//!
//! `<store>/cache/head` holds the record ([`CachedHead`]) and a fingerprint of the engine's
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

use super::cache::{remove_cache_file, DerivedCache};
use super::disk_backend::Refs;
use super::files::write_cache_file;
use super::packs::{pack_files, PACKS_DIR};
use super::{RawId, StoreResult};

/// First bytes of a head cache file.
const MAGIC: &[u8] = b"MEMHEAD2";
/// Bytes of a fingerprint: length, mtime (s, ns), ctime (s, ns), inode.
const PRINT_LEN: usize = 8 + 8 + 4 + 8 + 4 + 8;
/// A head cache file larger than this is not one.
const MAX_BYTES: u64 = 4 << 20;
/// Record kind byte: `HEAD` attached to a branch.
const ATTACHED: u8 = 0;
/// Record kind byte: `HEAD` detached at a commit.
const DETACHED: u8 = 1;

/// What `HEAD` resolved to when a store was last closed, in the store's terms (raw ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedHead {
    /// The branch `HEAD` was attached to; `None` when it was detached at `commit`.
    pub branch: Option<String>,
    /// The commit `HEAD` resolved to.
    pub commit: RawId,
    /// That commit's tree root.
    pub root: RawId,
}

impl CachedHead {
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
    fn decode(b: &[u8]) -> Option<CachedHead> {
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
        Some(CachedHead {
            branch,
            commit,
            root,
        })
    }
}

/// The head cache file, relative to the store directory.
const HEAD_FILE: &str = "cache/head";

/// Where the head cache file of the store at `store_dir` lives.
fn head_path(store_dir: &Path) -> PathBuf {
    store_dir.join(HEAD_FILE)
}

/// The bytes of the head cache file of the store at `store_dir`, unless it is missing or
/// too large to be one.
fn file_bytes(store_dir: &Path) -> Option<Vec<u8>> {
    let path = head_path(store_dir);
    if fs::metadata(&path).ok()?.len() > MAX_BYTES {
        return None;
    }
    fs::read(&path).ok()
}

/// A head cache file's bytes, if whole, split into the fingerprint, the record, and the
/// refs and packs that follow it.
fn split_file(bytes: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let body_len = bytes.len().checked_sub(16)?;
    let (body, sum) = bytes.split_at(body_len);
    if xxh3_128(body).to_le_bytes() != sum || body.len() < MAGIC.len() + PRINT_LEN + 4 {
        return None;
    }
    let (magic, rest) = body.split_at(MAGIC.len());
    let (print, rest) = rest.split_at(PRINT_LEN);
    let (len, rest) = rest.split_at(4);
    let len = u32::from_le_bytes(len.try_into().ok()?) as usize;
    if magic != MAGIC || rest.len() < len {
        return None;
    }
    let (record, more) = rest.split_at(len);
    Some((print, record, more))
}

/// Every ref and the length of every pack when the store closed, as the head cache file
/// records them after the note.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CachedRefs {
    /// Every ref (name, raw value), sorted by name.
    pub refs: Vec<(String, Vec<u8>)>,
    /// Every pack (number, length in bytes), ascending.
    pub packs: Vec<(u32, u64)>,
    /// The fingerprint of the engine's log at that close (not encoded here: it precedes the
    /// record in the file).
    pub print: Vec<u8>,
}

impl CachedRefs {
    /// Refs count (u32), each ref as name and value (u32 length + bytes each); packs count
    /// (u32), each pack as number (u32) and length (u64).
    fn encode(&self, w: &mut Vec<u8>) {
        w.extend_from_slice(&(self.refs.len() as u32).to_le_bytes());
        for (name, value) in &self.refs {
            w.extend_from_slice(&(name.len() as u32).to_le_bytes());
            w.extend_from_slice(name.as_bytes());
            w.extend_from_slice(&(value.len() as u32).to_le_bytes());
            w.extend_from_slice(value);
        }
        w.extend_from_slice(&(self.packs.len() as u32).to_le_bytes());
        for (no, len) in &self.packs {
            w.extend_from_slice(&no.to_le_bytes());
            w.extend_from_slice(&len.to_le_bytes());
        }
    }

    fn decode(mut b: &[u8]) -> Option<CachedRefs> {
        fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
            if b.len() < n {
                return None;
            }
            let (head, rest) = b.split_at(n);
            *b = rest;
            Some(head)
        }
        fn u32_of(b: &mut &[u8]) -> Option<u32> {
            Some(u32::from_le_bytes(take(b, 4)?.try_into().ok()?))
        }
        let mut out = CachedRefs::default();
        for _ in 0..u32_of(&mut b)? {
            let n = u32_of(&mut b)? as usize;
            let name = String::from_utf8(take(&mut b, n)?.to_vec()).ok()?;
            let n = u32_of(&mut b)? as usize;
            let value = take(&mut b, n)?.to_vec();
            if out.refs.last().is_some_and(|(last, _)| *last >= name) {
                return None;
            }
            out.refs.push((name, value));
        }
        for _ in 0..u32_of(&mut b)? {
            let no = u32_of(&mut b)?;
            let len = u64::from_le_bytes(take(&mut b, 8)?.try_into().ok()?);
            if out.packs.last().is_some_and(|(last, _)| *last >= no) {
                return None;
            }
            out.packs.push((no, len));
        }
        b.is_empty().then_some(out)
    }
}

/// The cached head as a derived cache: it names `HEAD`'s commit and that commit's tree
/// root, so a file naming objects the store no longer has is removed.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeadCache;

impl HeadCache {
    /// The record of the head cache file of the store at `dir`, whatever its fingerprint
    /// says (so also while the store is open), if it is whole and names an object that
    /// `live` says the store does not have.
    fn stale_record(dir: &Path, live: &dyn Fn(&[u8]) -> bool) -> Option<CachedHead> {
        let bytes = file_bytes(dir)?;
        CachedHead::decode(split_file(&bytes)?.1).filter(|r| !live(&r.commit) || !live(&r.root))
    }
}

impl DerivedCache for HeadCache {
    fn files(&self) -> &'static [&'static str] {
        &[HEAD_FILE]
    }

    fn stale(&self, dir: &Path, live: &dyn Fn(&[u8]) -> bool) -> Option<String> {
        Self::stale_record(dir, live)
            .map(|_| "names a HEAD commit the store no longer has; gc removes it".to_string())
    }

    fn prune(&self, dir: &Path, live: &dyn Fn(&[u8]) -> bool) -> StoreResult<Option<String>> {
        if Self::stale_record(dir, live).is_none() {
            return Ok(None);
        }
        Ok(remove_cache_file(&head_path(dir))?
            .then(|| "removed the cached head, which named a removed commit".to_string()))
    }
}

/// The identity of a file's current content as the file system reports it: length,
/// modification and change times to the nanosecond, and inode.
fn fingerprint(file: &Path) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(file)?;
    let mut out = Vec::with_capacity(PRINT_LEN);
    out.extend_from_slice(&m.len().to_le_bytes());
    out.extend_from_slice(&m.mtime().to_le_bytes());
    out.extend_from_slice(&(m.mtime_nsec() as u32).to_le_bytes());
    out.extend_from_slice(&m.ctime().to_le_bytes());
    out.extend_from_slice(&(m.ctime_nsec() as u32).to_le_bytes());
    out.extend_from_slice(&m.ino().to_le_bytes());
    Ok(out)
}

/// The cached head of the store at `store_dir` with every ref and pack length of that close,
/// when its file is whole and the engine's log file at `log` still has the fingerprint it
/// records; `None` otherwise.
pub(super) fn read(store_dir: &Path, log: &Path) -> Option<(CachedHead, CachedRefs)> {
    let bytes = file_bytes(store_dir)?;
    let (print, record, more) = split_file(&bytes)?;
    if fingerprint(log).ok()? != print {
        return None;
    }
    let mut refs = CachedRefs::decode(more)?;
    refs.print = print.to_vec();
    Some((CachedHead::decode(record)?, refs))
}

/// Whether the engine's log file at `log` still has fingerprint `print`: nobody opened the
/// store since the close that recorded it.
pub(super) fn unopened_since(log: &Path, print: &[u8]) -> bool {
    fingerprint(log).is_ok_and(|p| p == print)
}

/// Ref changes seen by one store handle, and the cached head to publish when it closes.
#[derive(Debug, Default)]
struct State {
    /// Ref changes made through this handle.
    version: u64,
    /// The highest version made durable by a flush.
    durable: u64,
    /// The cached head (and every ref) given for the current version.
    noted: Option<(CachedHead, Refs)>,
    /// Whether this handle removed the file (it does so once, before its first ref
    /// change).
    removed: bool,
}

/// The head cache file of one open store directory: removed before the first ref change,
/// written when the store closes (when dropped, after the engine, before the LOCK).
#[derive(Debug)]
pub(super) struct HeadCacheFile {
    /// The store directory and the engine's log file (`None`: a store without a directory).
    paths: Option<(PathBuf, PathBuf)>,
    state: Mutex<State>,
}

impl HeadCacheFile {
    /// The head cache file of the store in `store_dir` whose engine logs to `log`, or of a
    /// store without a directory (`None`), which has none.
    pub(super) fn new(paths: Option<(PathBuf, PathBuf)>) -> Self {
        HeadCacheFile {
            paths,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        super::locked(&self.state)
    }

    /// Ref changes made through this handle so far.
    pub(super) fn version(&self) -> u64 {
        self.state().version
    }

    /// Call before each ref change: forgets the noted head and, the first time, removes the
    /// file. The file is a cache, so it never blocks the change: one that cannot be removed
    /// is emptied instead (a reader then finds no record), and one that can be neither is
    /// already void for readers, because opening the engine changed the fingerprint of its
    /// log. A path that is not a regular file holds no record to remove.
    pub(super) fn before_ref_change(&self) -> StoreResult<()> {
        let mut st = self.state();
        if !st.removed {
            if let Some((dir, _)) = &self.paths {
                let path = head_path(dir);
                if remove_cache_file(&path).is_err() {
                    let _ = fs::OpenOptions::new()
                        .write(true)
                        .truncate(true)
                        .open(&path);
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

    /// Keeps `head` and `refs` (every ref, sorted by name) to publish at close if no ref
    /// changed since `version` was read.
    pub(super) fn note(&self, version: u64, head: CachedHead, refs: Vec<(String, Vec<u8>)>) {
        let mut st = self.state();
        if st.version == version {
            st.noted = Some((head, refs));
        }
    }

    /// Writes the file when the noted head describes the refs as they are and as flushed.
    /// Best effort: the file is derived data, and a missing one only costs readers time.
    fn publish(&self) {
        let Some((dir, log)) = &self.paths else {
            return;
        };
        let st = self.state();
        let Some((head, refs)) = &st.noted else {
            return;
        };
        if st.version > st.durable {
            return;
        }
        let Ok(print) = fingerprint(log) else {
            return;
        };
        let Ok(packs) = pack_files(&dir.join(PACKS_DIR)) else {
            return;
        };
        let packs = packs.into_iter().map(|(no, _, len)| (no, len)).collect();
        let record = head.encode();
        let mut w = Vec::with_capacity(MAGIC.len() + PRINT_LEN + 4 + record.len() + 16);
        w.extend_from_slice(MAGIC);
        w.extend_from_slice(&print);
        w.extend_from_slice(&(record.len() as u32).to_le_bytes());
        w.extend_from_slice(&record);
        let closed = CachedRefs {
            refs: refs.clone(),
            packs,
            print: Vec::new(),
        };
        closed.encode(&mut w);
        if w.len() as u64 + 16 > MAX_BYTES {
            return;
        }
        let sum = xxh3_128(&w);
        w.extend_from_slice(&sum.to_le_bytes());
        let _ = write_cache_file(&head_path(dir), &w);
    }
}

impl Drop for HeadCacheFile {
    fn drop(&mut self) {
        self.publish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector of store-format.md: the refs and packs after the note.
    #[test]
    fn refs_vector() {
        let r = CachedRefs {
            refs: vec![
                ("HEAD".into(), b"ref: refs/heads/main".to_vec()),
                ("refs/heads/main".into(), vec![1; 32]),
            ],
            packs: vec![(1, 52)],
            print: Vec::new(),
        };
        let mut w = Vec::new();
        r.encode(&mut w);
        let hex: String = w.iter().map(|x| format!("{x:02x}")).collect();
        assert_eq!(
            hex,
            concat!(
                "020000000400000048454144140000007265663a20726566732f68656164732f6d61696e0f000000",
                "726566732f68656164732f6d61696e20000000010101010101010101010101010101010101010101",
                "010101010101010101010101000000010000003400000000000000",
            )
        );
        assert_eq!(CachedRefs::decode(&w), Some(r));
        assert_eq!(CachedRefs::decode(&w[..w.len() - 1]), None);
    }

    #[test]
    fn records_round_trip_and_reject_garbage() {
        for branch in [Some("agent/a".to_string()), None] {
            let h = CachedHead {
                branch,
                commit: [7; 32],
                root: [9; 32],
            };
            let bytes = h.encode();
            assert_eq!(CachedHead::decode(&bytes), Some(h.clone()));
            assert_eq!(CachedHead::decode(&bytes[..64]), None);
        }
        let mut bad = vec![ATTACHED];
        bad.extend_from_slice(&[1; 64]);
        assert_eq!(CachedHead::decode(&bad), None, "a branch needs a name");
        bad[0] = 2;
        assert_eq!(CachedHead::decode(&bad), None, "unknown kind");
        let mut detached_named = vec![DETACHED];
        detached_named.extend_from_slice(&[1; 64]);
        detached_named.extend_from_slice(b"main");
        assert_eq!(CachedHead::decode(&detached_named), None);
        let mut not_utf8 = vec![ATTACHED];
        not_utf8.extend_from_slice(&[1; 64]);
        not_utf8.push(0xff);
        assert_eq!(CachedHead::decode(&not_utf8), None);
    }
}
