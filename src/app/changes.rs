//! A diff read a page at a time, for views that must stay quick on a commit that changed
//! 100,000 keys: the changed keys after a cursor (names and operations only, no record
//! read), one change with its records, line counts and patch, and the counts of a whole
//! diff. Either side may be the merge base of the two revisions instead (git's `A...B`:
//! what B adds since it left A), which is what "what does this branch add" asks.

use serde::Serialize;

use crate::object::ObjectId;
use crate::prolly::KeyRange;
use crate::repo::{KeyChange, Op, Repo};

use super::history::{diff_entry, DiffEntry, KeyScope};
use super::ids::{hex, hex_opt};
use super::{parse_key, Memoir, MemoirError, MemoirResult, Outcome};

/// Most changed keys on one page by default.
pub const CHANGES_DEFAULT_LIMIT: usize = 100;
/// Most changed keys on one page at all.
pub const CHANGES_MAX_LIMIT: usize = 1000;

/// Which two trees a paged diff compares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangesQuery {
    /// The old revision [default: `HEAD~1`].
    pub from: Option<String>,
    /// The new revision [default: HEAD].
    pub to: Option<String>,
    /// Compare the merge base of `from` and `to` with `to` (git's `from...to`).
    pub since_base: bool,
    /// Only keys in scope.
    pub scope: KeyScope,
}

/// One changed key of a page.
#[derive(Debug, Clone, Serialize)]
pub struct ChangeName {
    /// The key's namespace.
    pub namespace: String,
    /// The key's path.
    pub key: String,
    /// `added`, `modified` or `removed`.
    pub operation: &'static str,
}

/// One page of a diff's changed keys.
#[derive(Debug, Clone, Serialize)]
pub struct ChangesPage {
    /// Always true.
    pub success: bool,
    /// The old side's commit (null: the empty tree, when the histories share no commit).
    #[serde(serialize_with = "hex_opt")]
    pub from: Option<ObjectId>,
    /// The new side's commit.
    #[serde(serialize_with = "hex")]
    pub to: ObjectId,
    /// Whether the old side is the merge base.
    pub since_base: bool,
    /// The changed keys after the cursor, in key order.
    pub changes: Vec<ChangeName>,
    /// The cursor of the next page (`ns:path` of this page's last key), null on the last.
    pub next: Option<String>,
}

impl Outcome for ChangesPage {
    crate::outcome_json!();
}

/// How many keys a whole diff changes.
#[derive(Debug, Clone, Serialize)]
pub struct ChangeCounts {
    /// Always true.
    pub success: bool,
    /// The old side's commit (null: the empty tree).
    #[serde(serialize_with = "hex_opt")]
    pub from: Option<ObjectId>,
    /// The new side's commit.
    #[serde(serialize_with = "hex")]
    pub to: ObjectId,
    /// Keys changed.
    pub count: u64,
    /// Keys added.
    pub added: u64,
    /// Keys modified.
    pub modified: u64,
    /// Keys removed.
    pub removed: u64,
}

impl Outcome for ChangeCounts {
    crate::outcome_json!();
}

/// One changed key with its records, line counts and patch.
#[derive(Debug, Clone, Serialize)]
pub struct ChangeOutcome {
    /// Always true.
    pub success: bool,
    /// The old side's commit (null: the empty tree).
    #[serde(serialize_with = "hex_opt")]
    pub from: Option<ObjectId>,
    /// The new side's commit.
    #[serde(serialize_with = "hex")]
    pub to: ObjectId,
    /// The change.
    pub change: DiffEntry,
}

impl Outcome for ChangeOutcome {
    crate::outcome_json!();
}

/// The two sides of a paged diff, resolved: commits and tree roots.
struct Sides {
    from: Option<ObjectId>,
    to: ObjectId,
    from_root: ObjectId,
    to_root: ObjectId,
}

impl Memoir {
    fn sides(&self, repo: &Repo, q: &ChangesQuery) -> MemoirResult<Sides> {
        let from = self.resolve_rev(repo, q.from.as_deref().unwrap_or("HEAD~1"))?;
        let to = self.resolve_rev(repo, q.to.as_deref().unwrap_or("HEAD"))?;
        let from = if q.since_base {
            repo.merge_base(&from, &to)?
        } else {
            Some(from)
        };
        let from_root = match &from {
            Some(c) => repo.root_of(c)?,
            None => repo.tree().empty()?,
        };
        Ok(Sides {
            from,
            to,
            from_root,
            to_root: repo.root_of(&to)?,
        })
    }

    /// Up to `limit` changed keys after `after` (an `ns:path` cursor from the previous page;
    /// none: from the first), in key order. Only the keys on the page and one more are
    /// visited, so a page costs O(limit x height) node reads whatever the diff's size.
    pub fn changes(
        &self,
        q: &ChangesQuery,
        after: Option<&str>,
        limit: Option<usize>,
    ) -> MemoirResult<ChangesPage> {
        let limit = limit.unwrap_or(CHANGES_DEFAULT_LIMIT);
        if limit == 0 || limit > CHANGES_MAX_LIMIT {
            return Err(MemoirError::invalid(format!(
                "limit must be between 1 and {CHANGES_MAX_LIMIT}"
            )));
        }
        let filter = q.scope.filter()?;
        let after = after
            .filter(|a| !a.is_empty())
            .map(|a| parse_key(a, None))
            .transpose()?;
        self.reading(|repo| {
            let s = self.sides(repo, q)?;
            let mut range = filter.as_ref().map_or_else(KeyRange::all, |f| f.range());
            if let Some(a) = &after {
                // The least key above the cursor: its encoding and one more byte.
                let mut lo = a.encode();
                lo.push(0);
                if range.lo.as_ref().is_none_or(|l| *l < lo) {
                    range.lo = Some(lo);
                }
            }
            let mut found: Vec<(Vec<u8>, Op)> = Vec::new();
            repo.tree()
                .diff_range(&s.from_root, &s.to_root, &range, &mut |c| {
                    if filter.as_ref().is_some_and(|f| !f.matches_encoded(&c.key)) {
                        return true;
                    }
                    if let Some(op) = Op::between(c.old.as_ref(), c.new.as_ref()) {
                        found.push((c.key.to_vec(), op));
                    }
                    found.len() <= limit
                })?;
            let more = found.len() > limit;
            found.truncate(limit);
            let mut changes = Vec::with_capacity(found.len());
            for (k, op) in found {
                let key = crate::key::Key::decode(&k)?;
                let (namespace, key) = key.into_parts();
                changes.push(ChangeName {
                    namespace,
                    key,
                    operation: op.as_str(),
                });
            }
            let next = more
                .then(|| changes.last().map(|c| format!("{}:{}", c.namespace, c.key)))
                .flatten();
            Ok(ChangesPage {
                success: true,
                from: s.from,
                to: s.to,
                since_base: q.since_base,
                changes,
                next,
            })
        })
    }

    /// How many keys the whole diff adds, modifies and removes. Without a scope, a side
    /// with no keys makes it a count of the other tree (O(1)); otherwise every change is
    /// visited, names only.
    pub fn change_counts(&self, q: &ChangesQuery) -> MemoirResult<ChangeCounts> {
        let filter = q.scope.filter()?;
        self.reading(|repo| {
            let s = self.sides(repo, q)?;
            let (mut added, mut modified, mut removed) = (0, 0, 0);
            let count = |root| repo.tree().count(root);
            let (old_n, new_n) = if filter.is_none() {
                (count(&s.from_root)?, count(&s.to_root)?)
            } else {
                (1, 1)
            };
            if old_n == 0 {
                added = new_n;
            } else if new_n == 0 {
                removed = old_n;
            } else {
                let ops = repo.diff_each(&s.from_root, &s.to_root, filter.as_ref(), &|c| {
                    Ok::<_, MemoirError>(c.op())
                })?;
                for op in ops {
                    match op {
                        Op::Added => added += 1,
                        Op::Modified => modified += 1,
                        Op::Removed => removed += 1,
                    }
                }
            }
            Ok(ChangeCounts {
                success: true,
                from: s.from,
                to: s.to,
                count: added + modified + removed,
                added,
                modified,
                removed,
            })
        })
    }

    /// One key's change between the two sides, with both records, line counts and a
    /// unified diff of the contents. A key that is the same on both sides is not found
    /// (exit 2).
    pub fn change(
        &self,
        q: &ChangesQuery,
        key: &str,
        namespace: Option<&str>,
    ) -> MemoirResult<ChangeOutcome> {
        let key = parse_key(key, namespace)?;
        self.reading(|repo| {
            let s = self.sides(repo, q)?;
            let enc = key.encode();
            let old = repo.tree().get(&s.from_root, &enc)?;
            let new = repo.tree().get(&s.to_root, &enc)?;
            if old == new {
                return Err(MemoirError::not_found(format!(
                    "{key} is the same on both sides"
                )));
            }
            let change = KeyChange {
                key: key.clone(),
                old,
                new,
            };
            Ok(ChangeOutcome {
                success: true,
                from: s.from,
                to: s.to,
                change: diff_entry(repo, change, true, true, true)?,
            })
        })
    }
}
