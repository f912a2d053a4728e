//! The derived caches under `<store>/cache/`, as one mechanism: each cache whose contents
//! name objects implements [`DerivedCache`], so that garbage collection (and purge, which
//! ends with one) prunes every cache of what it removed, and fsck checks every cache the
//! same way. The layer that owns a cache implements it (the cached head here, the commit
//! graph in the repository layer, the lexical index in recall); the application lists them.
//!
//! Caches are derived: a cache that names an object the store does not have is rebuilt by
//! its reader, never an error; a cache that cannot be written is skipped. What this module
//! adds is the store-wide rules: which paths are caches, what a path of the wrong type means,
//! and that a temporary file a killed writer left behind (which may hold removed content) is
//! removed.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::files::io_err;
use super::StoreResult;

/// The directory of a store that holds its derived caches.
pub const CACHE_DIR: &str = "cache";

/// A derived cache kept under `<store>/cache/` whose contents name objects. Its methods are
/// given `live`, which says whether the store has an object whose id starts with the bytes
/// given (all 32 of an id: that object; fewer: any object with that prefix, for a cache that
/// keeps ids' prefixes).
pub trait DerivedCache: Sync {
    /// The cache's files, relative to the store directory (`cache/lexical.idx`).
    fn files(&self) -> &'static [&'static str];

    /// What in the cache of the store at `dir` names objects that `live` says the store
    /// does not have, in words; `None` when nothing does (or there is no usable cache).
    fn stale(&self, dir: &Path, live: &dyn Fn(&[u8]) -> bool) -> Option<String>;

    /// Drops what [`DerivedCache::stale`] finds: the entries that name objects `live`
    /// rejects, or the whole cache when it cannot be pruned entry by entry (or cannot be
    /// read). Returns what was done, in words (`None`: nothing). Run with the store's LOCK
    /// held, so no writer of the cache is under way. Only regular files are removed.
    fn prune(&self, dir: &Path, live: &dyn Fn(&[u8]) -> bool) -> StoreResult<Option<String>>;
}

/// What kind of problem a cache has (never damage to the store: caches are derived).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheIssue {
    /// The cache names objects the store no longer has (and may hold their content), or is a
    /// temporary file a killed writer left; garbage collection drops it, and readers rebuild
    /// what they need.
    Stale,
    /// The path of the cache is not a regular file (or `cache` is not a directory): the cache
    /// is skipped, reads fall back to the store, and writes are not blocked.
    Unusable,
}

/// One problem with a cache file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CacheFinding {
    /// The file, relative to the store directory.
    pub file: String,
    /// What kind of problem.
    pub kind: CacheIssue,
    /// What exactly, in words.
    pub detail: String,
}

/// Paths of the wrong type among the caches `files` of the store at `dir` (and `cache`
/// itself): the caches there are skipped.
pub fn check_paths(dir: &Path, files: &[&str]) -> Vec<CacheFinding> {
    let unusable = |file: &str, detail: String| CacheFinding {
        file: file.to_string(),
        kind: CacheIssue::Unusable,
        detail,
    };
    match fs::symlink_metadata(dir.join(CACHE_DIR)) {
        Ok(m) if !m.is_dir() => {
            return vec![unusable(
                CACHE_DIR,
                "is not a directory, so no cache can be kept: reads use the store directly \
                 (remove it to let memoir keep its caches)"
                    .to_string(),
            )]
        }
        Ok(_) => {}
        Err(_) => return Vec::new(),
    }
    let mut out = Vec::new();
    for file in files {
        if let Ok(m) = fs::symlink_metadata(dir.join(file)) {
            if !m.is_file() {
                out.push(unusable(
                    file,
                    "is not a regular file, so this cache is skipped: reads use the store \
                     directly (remove it to let memoir keep the cache)"
                        .to_string(),
                ));
            }
        }
    }
    out
}

/// Temporary files under `<store>/cache/` (named `NAME.tmp.PID.N` by the atomic cache
/// writes). With the store's LOCK held no cache writer is under way, so every one is left
/// over from a writer that was killed, and may hold content that has since been removed.
fn stray_temporaries(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir.join(CACHE_DIR)) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.contains(".tmp.")))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// The finding of each stray temporary file (see `stray_temporaries`).
pub fn stray_findings(dir: &Path) -> Vec<CacheFinding> {
    stray_temporaries(dir)
        .into_iter()
        .map(|p| CacheFinding {
            file: relative(dir, &p),
            kind: CacheIssue::Stale,
            detail: "is a temporary file left by an interrupted cache write; gc removes it"
                .to_string(),
        })
        .collect()
}

/// Removes every stray temporary file (see `stray_temporaries`); returns how many.
pub fn remove_stray_temporaries(dir: &Path) -> StoreResult<usize> {
    let strays = stray_temporaries(dir);
    for p in &strays {
        remove_cache_file(p)?;
    }
    Ok(strays.len())
}

/// Removes the cache file at `path` if it is a regular file (or a symbolic link); returns
/// whether it removed one. A missing file, or a path through something that is not a
/// directory, is nothing to remove; a directory is left alone (fsck reports it).
pub fn remove_cache_file(path: &Path) -> StoreResult<bool> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => return Ok(false),
        Ok(_) => {}
        Err(_) => return Ok(false),
    }
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_err(path)(e)),
    }
}

/// `path` relative to the store directory `dir`, for messages.
pub fn relative(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_of_the_wrong_type_are_unusable_and_never_removed() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_paths(dir.path(), &["cache/head"]).is_empty());
        fs::write(dir.path().join("cache"), b"not a directory").unwrap();
        let f = check_paths(dir.path(), &["cache/head"]);
        assert_eq!((f.len(), f[0].file.as_str()), (1, "cache"));
        assert!(!remove_cache_file(&dir.path().join("cache/head")).unwrap());
        fs::remove_file(dir.path().join("cache")).unwrap();
        fs::create_dir_all(dir.path().join("cache/head/inside")).unwrap();
        let f = check_paths(dir.path(), &["cache/head", "cache/other"]);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].file.as_str(), f[0].kind),
            ("cache/head", CacheIssue::Unusable)
        );
        assert!(!remove_cache_file(&dir.path().join("cache/head")).unwrap());
        assert!(dir.path().join("cache/head/inside").is_dir());
    }

    #[test]
    fn stray_temporaries_are_found_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join(CACHE_DIR);
        fs::create_dir_all(&cache).unwrap();
        fs::write(cache.join("lexical.idx"), b"kept").unwrap();
        fs::write(cache.join("lexical.idx.tmp.123.0"), b"left").unwrap();
        let f = stray_findings(dir.path());
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].file, "cache/lexical.idx.tmp.123.0");
        assert_eq!(remove_stray_temporaries(dir.path()).unwrap(), 1);
        assert!(cache.join("lexical.idx").is_file());
        assert!(stray_temporaries(dir.path()).is_empty());
    }
}
