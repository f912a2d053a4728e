//! The commit graph file as a derived cache of the store: pruned by garbage collection of
//! the commits it no longer has, removed when it cannot be read.

use std::path::Path;
use std::sync::Arc;

use super::columns::Image;
use super::{cache_path, CommitGraph};
use crate::store::{remove_cache_file, write_cache_file, DerivedCache, StoreResult};

/// The commit graph cache as a derived cache ([`DerivedCache`]): entries of commits the
/// store no longer has are pruned (the file is rewritten without them), and a file that
/// cannot be read is removed.
#[derive(Debug, Clone, Copy, Default)]
pub struct GraphCache;

/// The entries of the graph at `path` that name commits `live` rejects (0 without a
/// readable file).
fn dead_entries(path: &Path, live: &dyn Fn(&[u8]) -> bool) -> Option<(CommitGraph, usize)> {
    let g = Image::map(path).and_then(|image| CommitGraph::from_image(Arc::new(image)))?;
    let dead = g.ids.iter().filter(|id| !live(id.as_bytes())).count();
    Some((g, dead))
}

impl DerivedCache for GraphCache {
    fn files(&self) -> &'static [&'static str] {
        &["cache/commit-graph"]
    }

    fn stale(&self, dir: &Path, live: &dyn Fn(&[u8]) -> bool) -> Option<String> {
        let (_, dead) = dead_entries(&cache_path(dir), live)?;
        (dead > 0)
            .then(|| format!("names {dead} commit(s) the store no longer has; gc prunes them"))
    }

    fn prune(&self, dir: &Path, live: &dyn Fn(&[u8]) -> bool) -> StoreResult<Option<String>> {
        let path = cache_path(dir);
        let Some((mut g, dead)) = dead_entries(&path, live) else {
            return Ok(remove_cache_file(&path)?
                .then(|| "removed the commit graph, which could not be read".to_string()));
        };
        if dead == 0 {
            return Ok(None);
        }
        let gone = g.retain(&|id| live(id.as_bytes()));
        if write_cache_file(&path, &g.to_bytes()).is_err() {
            remove_cache_file(&path)?;
            return Ok(Some("removed the commit graph".to_string()));
        }
        Ok(Some(format!(
            "pruned {gone} removed commit(s) from the commit graph"
        )))
    }
}
