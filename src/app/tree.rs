//! `tree`: one level of the key taxonomy under a prefix, with the exact number of memories
//! at or below each child. Without a glob the counts come from the tree's subtree counts
//! (a histogram of the prefix's range: O(children x height) node reads, never O(keys));
//! with globs only the keys under the prefix are visited.

use serde::{Serialize, Serializer};

use crate::glob::KeyGlobs;
use crate::key::{
    encode_path_start, group_prefix, group_range, namespace_prefix, split_encoded,
    validate_namespace,
};
use crate::key::{validate_path, Key};
use crate::object::ObjectId;
use crate::prolly::{prefix_range, KeyRange};

use super::ids::hex;
use super::status::namespace_counts;
use super::{Memoir, MemoirError, MemoirResult, Outcome, ReadPoint};

/// Most children listed by default.
pub const TREE_DEFAULT_LIMIT: usize = 1000;
/// Most children listed at all.
pub const TREE_MAX_LIMIT: usize = 10_000;

/// Which level of the taxonomy to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeRequest {
    /// The namespace [default: `default` when the store has it, else the first one].
    pub namespace: Option<String>,
    /// The dot path whose children are listed (none or empty: the namespace's top level).
    pub prefix: Option<String>,
    /// Count only keys whose path matches one of these globs (empty: every key).
    pub keys: Vec<String>,
    /// Most children listed [default [`TREE_DEFAULT_LIMIT`], at most [`TREE_MAX_LIMIT`]].
    pub limit: Option<usize>,
}

/// One child of the listed prefix: a path one segment longer.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct TreeChild {
    /// Its last segment.
    pub name: String,
    /// Its dot path.
    pub path: String,
    /// Memories at this path or below it (in scope of the globs).
    pub count: u64,
    /// Whether a memory is stored at exactly this path.
    pub has_record: bool,
    /// Whether memories are stored below this path.
    pub has_children: bool,
}

/// One level of the taxonomy.
#[derive(Debug, Clone, Serialize)]
pub struct TreeOutcome {
    /// Always true.
    pub success: bool,
    /// The commit read.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// The namespace listed.
    pub namespace: String,
    /// The prefix listed (empty: the top level).
    pub prefix: String,
    /// The depth of the children (1 for the top level).
    pub depth: usize,
    /// Memories at or below the prefix (in scope of the globs).
    pub total: u64,
    /// Whether a memory is stored at exactly the prefix.
    pub has_record: bool,
    /// Every namespace of the revision with its memory count (JSON: an object).
    #[serde(serialize_with = "as_map")]
    pub namespaces: Vec<(String, u64)>,
    /// The globs applied.
    pub keys: Vec<String>,
    /// The children, in key order.
    pub children: Vec<TreeChild>,
    /// Children left out by the limit.
    pub omitted: usize,
}

fn as_map<S: Serializer>(pairs: &[(String, u64)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

impl Outcome for TreeOutcome {}

impl Memoir {
    /// The children of a prefix at a read point, each with its exact memory count. An
    /// invalid namespace, path or glob is exit 1; an unknown namespace lists nothing.
    pub fn tree(&self, req: &TreeRequest, at: &ReadPoint) -> MemoirResult<TreeOutcome> {
        if let Some(ns) = &req.namespace {
            validate_namespace(ns)?;
        }
        let prefix = req.prefix.clone().unwrap_or_default();
        let prefix = prefix.trim_matches('.').to_string();
        if !prefix.is_empty() {
            validate_path(&prefix)?;
        }
        let globs = if req.keys.is_empty() {
            None
        } else {
            Some(KeyGlobs::new(&req.keys)?)
        };
        let limit = req.limit.unwrap_or(TREE_DEFAULT_LIMIT);
        if limit == 0 || limit > TREE_MAX_LIMIT {
            return Err(MemoirError::invalid(format!(
                "limit must be between 1 and {TREE_MAX_LIMIT}"
            )));
        }
        let (repo, commit, root) = self.open_read(at)?;
        let namespaces = namespace_counts(&repo, &root)?;
        let namespace = match &req.namespace {
            Some(ns) => ns.clone(),
            None if namespaces.iter().any(|(n, _)| n == "default") => "default".to_string(),
            None => namespaces
                .first()
                .map_or_else(|| "default".to_string(), |(n, _)| n.clone()),
        };
        let depth = if prefix.is_empty() {
            1
        } else {
            prefix.split('.').count() + 1
        };
        let (here, range) = if prefix.is_empty() {
            (None, prefix_range(&namespace_prefix(&namespace)))
        } else {
            let enc = Key::new(&namespace, &prefix)?.encode();
            let (lo, hi) = group_range(&enc);
            (
                Some(enc),
                KeyRange {
                    lo: Some(lo),
                    hi: Some(hi),
                },
            )
        };
        // (group, count, has_record) in key order; the prefix's own key is its own group.
        let mut groups: Vec<(Vec<u8>, u64, bool)> = Vec::new();
        let mut has_record = false;
        match &globs {
            None => {
                for (g, n) in repo
                    .tree()
                    .histogram(&root, &range, &|k| group_prefix(k, depth))?
                {
                    if here.as_deref() == Some(&g[..]) {
                        has_record = true;
                        continue;
                    }
                    groups.push((g, n, false));
                }
            }
            Some(globs) => {
                for part in glob_ranges(&namespace, &req.keys, &range) {
                    repo.tree().scan(&root, &part, &mut |k, _| {
                        let (_, path) = split_encoded(k);
                        if !globs.matches(&path) {
                            return true;
                        }
                        if here.as_deref() == Some(k) {
                            has_record = true;
                            return true;
                        }
                        let g = group_prefix(k, depth);
                        let exact = g == k;
                        match groups.last_mut() {
                            Some((last, n, rec)) if last[..] == *g => {
                                *n += 1;
                                *rec |= exact;
                            }
                            _ => groups.push((g.to_vec(), 1, exact)),
                        }
                        true
                    })?;
                }
            }
        }
        let total = groups.iter().map(|(_, n, _)| n).sum::<u64>() + u64::from(has_record);
        let omitted = groups.len().saturating_sub(limit);
        groups.truncate(limit);
        let mut children = Vec::with_capacity(groups.len());
        for (g, count, exact) in groups {
            let exact = if globs.is_some() {
                exact
            } else {
                repo.tree().get(&root, &g)?.is_some()
            };
            let (_, path) = split_encoded(&g);
            let name = path.rsplit('.').next().unwrap_or(&path).to_string();
            children.push(TreeChild {
                name,
                path,
                count,
                has_record: exact,
                has_children: count > u64::from(exact),
            });
        }
        Ok(TreeOutcome {
            success: true,
            commit,
            namespace,
            prefix,
            depth,
            total,
            has_record,
            namespaces,
            keys: req.keys.clone(),
            children,
            omitted,
        })
    }
}

/// The parts of `range` a scan for keys matching `patterns` must visit, sorted and
/// disjoint: each pattern can only match paths that start with its literal beginning (up to
/// its first wildcard), so only those keys are read.
fn glob_ranges(namespace: &str, patterns: &[String], range: &KeyRange) -> Vec<KeyRange> {
    let mut parts: Vec<KeyRange> = Vec::new();
    for p in patterns {
        let literal = p
            .find(['*', '?', '[', '{', '\\'])
            .map_or(p.as_str(), |i| &p[..i]);
        let own = prefix_range(&encode_path_start(namespace, literal));
        let lo = match (&own.lo, &range.lo) {
            (Some(a), Some(b)) => Some(a.max(b).clone()),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        let hi = match (&own.hi, &range.hi) {
            (Some(a), Some(b)) => Some(a.min(b).clone()),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        if let (Some(l), Some(h)) = (&lo, &hi) {
            if l >= h {
                continue;
            }
        }
        parts.push(KeyRange { lo, hi });
    }
    parts.sort_by(|a, b| a.lo.cmp(&b.lo));
    let mut merged: Vec<KeyRange> = Vec::new();
    for r in parts {
        match merged.last_mut() {
            // Overlapping or touching: one part (an open end reaches everything after).
            Some(last)
                if last
                    .hi
                    .as_ref()
                    .is_none_or(|h| r.lo.as_ref().is_some_and(|l| l <= h)) =>
            {
                if last.hi.is_some() && r.hi.as_ref().is_none_or(|h| Some(h) > last.hi.as_ref()) {
                    last.hi = r.hi;
                }
            }
            _ => merged.push(r),
        }
    }
    merged
}
