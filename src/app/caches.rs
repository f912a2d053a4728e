//! The derived caches of a store, as one list: garbage collection (and purge, which ends
//! with one) prunes every one of what it removed, and fsck checks every one. Each cache's
//! own layer says what is stale in it and how to prune it ([`DerivedCache`]); this module
//! only lists them and asks the store which objects it has.

use crate::recall::{LexicalCache, VectorCache};
use crate::repo::graph_cache::GraphCache;
use crate::store::{
    check_paths, remove_stray_temporaries, stray_findings, CacheFinding, CacheIssue, DerivedCache,
    HeadCache, ObjectStore, RawId, Store,
};

use super::{Memoir, MemoirResult};

/// Every derived cache whose contents name objects.
static CACHES: &[&dyn DerivedCache] = &[&HeadCache, &GraphCache, &LexicalCache, &VectorCache];

impl Memoir {
    /// Prunes every cache of the objects `store` no longer has, and removes the temporary
    /// files killed cache writers left (which may hold removed content). Run after the
    /// objects were removed, with the store open (its LOCK held). Returns what was done, in
    /// words. Repeating it after an interruption finishes the job.
    pub(crate) fn prune_caches(&self, store: &Store) -> MemoirResult<Vec<String>> {
        // An object the store cannot vouch for counts as gone: dropping a cache is always
        // safe.
        let live = |id: &[u8]| has(store, id).unwrap_or(false);
        let dir = self.path();
        let mut notes = Vec::new();
        for cache in CACHES {
            notes.extend(cache.prune(dir, &live)?);
        }
        let strays = remove_stray_temporaries(dir)?;
        if strays > 0 {
            notes.push(format!(
                "removed {strays} temporary cache file(s) left by interrupted writes"
            ));
        }
        Ok(notes)
    }

    /// What is wrong with the caches, never with the store: paths of the wrong type (the
    /// cache is skipped), caches naming objects `store` does not have, and temporary files
    /// left by interrupted cache writes. None of it makes fsck fail.
    pub(crate) fn check_caches(&self, store: &Store) -> Vec<CacheFinding> {
        // An object the store cannot say it lacks is not reported.
        let live = |id: &[u8]| has(store, id).unwrap_or(true);
        let dir = self.path();
        let files: Vec<&str> = CACHES.iter().flat_map(|c| c.files()).copied().collect();
        let mut out = check_paths(dir, &files);
        for cache in CACHES {
            if let Some(detail) = cache.stale(dir, &live) {
                out.push(CacheFinding {
                    file: cache.files()[0].to_string(),
                    kind: CacheIssue::Stale,
                    detail,
                });
            }
        }
        out.extend(stray_findings(dir));
        out
    }
}

/// Whether `store` has the object `id` (32 bytes), or any object whose id starts with `id`
/// (fewer).
fn has(store: &Store, id: &[u8]) -> crate::store::StoreResult<bool> {
    match <&RawId>::try_from(id) {
        Ok(full) => store.contains(full),
        Err(_) => Ok(!store.ids_with_prefix(id)?.is_empty()),
    }
}
