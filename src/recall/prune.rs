//! The lexical index cache as a derived cache ([`DerivedCache`]): what garbage collection
//! does to it and what fsck says about it.
//!
//! The full file (`lexical.idx`) holds exactly the documents of the tree root it names, and
//! the delta file (`lexical.delta`) the documents added on the way to the root it names. So
//! a file whose root the store still has holds nothing the store lost, and one whose root is
//! gone may hold removed content: it is dropped, or, when only the full file's root is gone
//! and the delta brings the index to a root the store has, the index is written whole at
//! that root (which keeps it warm and drops the old documents).

use std::path::Path;

use super::{cache_path, delta_path, save_cache, LexicalIndex};
use crate::store::{remove_cache_file, DerivedCache, StoreResult};

/// The lexical index cache (`cache/lexical.idx` and `cache/lexical.delta`).
#[derive(Debug, Clone, Copy, Default)]
pub struct LexicalCache;

/// What pruning does to the lexical cache files.
enum Plan {
    /// Nothing names a removed object.
    Keep,
    /// The full file cannot be read: readers ignore it, and it may hold anything.
    DropDamaged,
    /// The delta file names a removed root, or belongs to no index: the full file stays.
    DropDelta(&'static str),
    /// The full file's root is gone but the delta brings the index to a root the store has:
    /// written whole there.
    Compact(Box<LexicalIndex>),
    /// Both files go.
    DropAll(&'static str),
}

fn plan(dir: &Path, live: &dyn Fn(&[u8]) -> bool) -> Plan {
    let path = cache_path(dir);
    let delta = std::fs::read(delta_path(&path)).ok();
    let Ok(bytes) = std::fs::read(&path) else {
        return match delta {
            Some(_) => Plan::DropAll("a delta file without its index"),
            None => Plan::Keep,
        };
    };
    let Ok(mut index) = LexicalIndex::from_bytes(&bytes) else {
        return Plan::DropDamaged;
    };
    let at_live = |index: &LexicalIndex| index.root().is_some_and(|r| live(r.as_bytes()));
    let base_live = at_live(&index);
    let Some(delta) = delta else {
        return if base_live {
            Plan::Keep
        } else {
            Plan::DropAll("an index of a tree the store no longer has")
        };
    };
    let applies = index.apply_delta(&delta).is_ok();
    match (base_live, applies && at_live(&index)) {
        (true, true) => Plan::Keep,
        (true, false) if applies => Plan::DropDelta("a delta to a tree the store no longer has"),
        (true, false) => Plan::DropDelta("a delta that belongs to no index"),
        (false, true) => Plan::Compact(Box::new(index)),
        (false, false) => Plan::DropAll("an index of a tree the store no longer has"),
    }
}

/// Removes both lexical cache files of the store at `dir`; whether any was there.
fn remove_both(dir: &Path) -> StoreResult<bool> {
    let path = cache_path(dir);
    let delta = remove_cache_file(&delta_path(&path))?;
    Ok(remove_cache_file(&path)? || delta)
}

impl DerivedCache for LexicalCache {
    fn files(&self) -> &'static [&'static str] {
        &["cache/lexical.idx", "cache/lexical.delta"]
    }

    fn stale(&self, dir: &Path, live: &dyn Fn(&[u8]) -> bool) -> Option<String> {
        match plan(dir, live) {
            Plan::Keep | Plan::DropDamaged => None,
            Plan::DropDelta(what) | Plan::DropAll(what) => Some(format!(
                "holds {what} (it may hold removed content); gc drops it"
            )),
            Plan::Compact(_) => Some(
                "holds an index of a tree the store no longer has (it may hold removed \
                 content); gc rewrites it"
                    .to_string(),
            ),
        }
    }

    fn prune(&self, dir: &Path, live: &dyn Fn(&[u8]) -> bool) -> StoreResult<Option<String>> {
        let path = cache_path(dir);
        Ok(match plan(dir, live) {
            Plan::Keep => None,
            Plan::DropDamaged => remove_both(dir)?
                .then(|| "removed the lexical index, which could not be read".to_string()),
            Plan::DropDelta(what) => remove_cache_file(&delta_path(&path))?
                .then(|| format!("removed the lexical index's delta file: {what}")),
            Plan::Compact(index) => {
                if save_cache(&path, &index).is_err() {
                    remove_both(dir)?;
                    Some("removed the lexical index".to_string())
                } else {
                    Some("rewrote the lexical index without removed documents".to_string())
                }
            }
            Plan::DropAll(what) => {
                remove_both(dir)?.then(|| format!("removed the lexical index: {what}"))
            }
        })
    }
}
