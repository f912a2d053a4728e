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
use crate::memory::read_record;
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
    /// Children skipped before the listed ones (paging through a large level).
    pub offset: usize,
    /// Give each child that holds a memory the start of its content.
    pub previews: bool,
}

/// Most characters of a child's content given as its preview.
pub const TREE_PREVIEW_CHARS: usize = 120;

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
    /// With previews asked for: the start of the memory stored at this path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
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
    /// The children, in natural order of their names (digit runs compare as numbers:
    /// `n7`, `n8`, `n70`).
    pub children: Vec<TreeChild>,
    /// Children skipped before them (the request's offset).
    pub offset: usize,
    /// Children left out after them by the limit.
    pub omitted: usize,
}

fn as_map<S: Serializer>(pairs: &[(String, u64)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

impl Outcome for TreeOutcome {
    crate::outcome_json!();
}

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
        let named: Vec<(String, Vec<u8>, u64, bool)> = groups
            .into_iter()
            .map(|(g, n, exact)| (split_encoded(&g).1, g, n, exact))
            .collect();
        let mut named = named;
        named.sort_by(|a, b| natural_cmp(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)));
        let offset = req.offset.min(named.len());
        let omitted = named.len().saturating_sub(offset + limit);
        let mut children = Vec::with_capacity(named.len().min(limit));
        for (path, g, count, exact) in named.into_iter().skip(offset).take(limit) {
            let value = if globs.is_some() && !(exact && req.previews) {
                None
            } else {
                repo.tree().get(&root, &g)?
            };
            let exact = if globs.is_some() {
                exact
            } else {
                value.is_some()
            };
            let preview = match value.filter(|_| req.previews && exact) {
                Some(id) => Some(preview_of(&read_record(repo.objects(), &id)?.content())),
                None => None,
            };
            let name = path.rsplit('.').next().unwrap_or(&path).to_string();
            children.push(TreeChild {
                name,
                path,
                count,
                has_record: exact,
                has_children: count > u64::from(exact),
                preview,
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
            offset,
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

/// The start of a memory's content, on one line: at most [`TREE_PREVIEW_CHARS`] characters.
fn preview_of(content: &str) -> String {
    let line: String = content.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(TREE_PREVIEW_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// Natural order of two names: runs of ASCII digits compare by their value (`n7` < `n8` <
/// `n70`; with equal values, fewer leading zeros first), everything else character by
/// character.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let (si, sj) = (i, j);
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let (x, y) = (&a[si..i], &b[sj..j]);
            let (tx, ty) = (trim_zeros(x), trim_zeros(y));
            let by_value = tx.len().cmp(&ty.len()).then_with(|| tx.cmp(ty));
            match by_value.then_with(|| x.len().cmp(&y.len())) {
                Ordering::Equal => {}
                o => return o,
            }
        } else {
            match a[i].cmp(&b[j]) {
                Ordering::Equal => {
                    i += 1;
                    j += 1;
                }
                o => return o,
            }
        }
    }
    (a.len() - i).cmp(&(b.len() - j))
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let n = digits.iter().take_while(|d| **d == b'0').count();
    &digits[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        let mut v = vec!["n70", "n8", "n7", "a", "n07", "b2c10", "b2c9", "n"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["a", "b2c9", "b2c10", "n", "n7", "n07", "n8", "n70"]);
    }

    #[test]
    fn previews_are_one_bounded_line() {
        assert_eq!(preview_of("a\n  b"), "a b");
        let long = "x".repeat(200);
        assert_eq!(preview_of(&long).chars().count(), TREE_PREVIEW_CHARS + 1);
    }
}
