//! `stats`: figures about a store at a revision: memories per namespace and per top-level
//! prefix, commits, the size of the store on disk, and how the number of memories grew over
//! the history (sampled from the commit graph, one tree count per sample), and the last gc
//! and fsck.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use serde::Serialize;

use crate::key::{encoded_path, group_prefix, namespace_prefix};
use crate::object::ObjectId;
use crate::prolly::prefix_range;
use crate::repo::revision::format_iso8601;

use super::ids::hex;
use super::last_runs::{FsckRun, GcRun, LastRuns};
use super::status::namespace_counts;
use super::{Memoir, MemoirError, MemoirResult, Outcome, ReadPoint};

/// Most points of the growth series by default.
pub const GROWTH_DEFAULT_POINTS: usize = 60;
/// Most points of the growth series at all.
pub const GROWTH_MAX_POINTS: usize = 1000;

/// One point of the growth series.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct GrowthPoint {
    /// The commit.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// Its unix seconds.
    pub timestamp: i64,
    /// Its date, ISO 8601.
    pub date: String,
    /// Memories in its tree.
    pub memories: u64,
    /// How many commits of the history come at or before it (in generation order).
    pub commits: u64,
}

/// Figures about a store at a revision.
#[derive(Debug, Clone, Serialize)]
pub struct StatsOutcome {
    /// Always true.
    pub success: bool,
    /// The commit read.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// Memories in its tree.
    pub memory_count: u64,
    /// Commits in its history (itself included).
    pub commit_count: u64,
    /// Memories per namespace.
    pub namespaces: BTreeMap<String, u64>,
    /// Memories per top-level prefix, per namespace.
    pub prefixes: BTreeMap<String, BTreeMap<String, u64>>,
    /// Bytes of every file in the store directory.
    pub store_bytes: u64,
    /// Memory counts along the history, oldest first, evenly spaced over its commits (the
    /// first and the last included).
    pub growth: Vec<GrowthPoint>,
    /// The store's last `gc` (null when none is recorded).
    pub last_gc: Option<GcRun>,
    /// The store's last `fsck` (null when none is recorded).
    pub last_fsck: Option<FsckRun>,
}

impl Outcome for StatsOutcome {
    crate::outcome_json!();
}

impl Memoir {
    /// Figures about the store at a read point; `points` bounds the growth series (default
    /// [`GROWTH_DEFAULT_POINTS`], at most [`GROWTH_MAX_POINTS`]).
    pub fn stats(&self, at: &ReadPoint, points: Option<usize>) -> MemoirResult<StatsOutcome> {
        let points = points.unwrap_or(GROWTH_DEFAULT_POINTS);
        if points == 0 || points > GROWTH_MAX_POINTS {
            return Err(MemoirError::invalid(format!(
                "points must be between 1 and {GROWTH_MAX_POINTS}"
            )));
        }
        let (repo, commit, root) = self.open_read(at)?;
        let per_ns = namespace_counts(&repo, &root)?;
        let mut prefixes = BTreeMap::new();
        for (ns, _) in &per_ns {
            let groups =
                repo.tree()
                    .histogram(&root, &prefix_range(&namespace_prefix(ns)), &|k| {
                        group_prefix(k, 1)
                    })?;
            let m: BTreeMap<String, u64> = groups
                .into_iter()
                .map(|(g, n)| (encoded_path(&g), n))
                .collect();
            prefixes.insert(ns.clone(), m);
        }
        // The history of the commit read, from the cached commit graph.
        let graph = repo.commit_graph(&[commit], false)?;
        let start = graph
            .position(&commit)
            .ok_or_else(|| MemoirError::invalid("the commit graph lacks the commit read"))?;
        let mut seen = vec![false; graph.len()];
        let mut queue = VecDeque::from([start]);
        seen[start as usize] = true;
        let mut history = Vec::new();
        while let Some(p) = queue.pop_front() {
            history.push(p);
            for q in graph.parents(p) {
                if !seen[q as usize] {
                    seen[q as usize] = true;
                    queue.push_back(q);
                }
            }
        }
        // Oldest first: by generation, then time (a parent always comes before its child).
        history.sort_by_key(|&p| (graph.generation(p), graph.timestamp(p)));
        let n = history.len();
        let take = points.min(n);
        let mut growth = Vec::with_capacity(take);
        for i in 0..take {
            let idx = if take == 1 {
                n - 1
            } else {
                i * (n - 1) / (take - 1)
            };
            let p = history[idx];
            let ts = graph.timestamp(p);
            growth.push(GrowthPoint {
                commit: graph.id(p),
                timestamp: ts,
                date: format_iso8601(ts),
                memories: repo.tree().count(&graph.root(p))?,
                commits: idx as u64 + 1,
            });
        }
        let memory_count = repo.tree().count(&root)?;
        drop(repo);
        let runs = LastRuns::read(self.path());
        Ok(StatsOutcome {
            success: true,
            commit,
            memory_count,
            commit_count: n as u64,
            namespaces: per_ns.into_iter().collect(),
            prefixes,
            store_bytes: dir_bytes(self.path()),
            growth,
            last_gc: runs.gc,
            last_fsck: runs.fsck,
        })
    }
}

/// The bytes of every file below `dir` (unreadable entries count as nothing).
fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => todo.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}
