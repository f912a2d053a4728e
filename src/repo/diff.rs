//! Key-level diff of two trees, and text diffs of two values.

use similar::{DiffOp, TextDiff};

use super::filter::KeyFilter;
use super::{Repo, RepoError, RepoResult};
use crate::key::Key;
use crate::object::ObjectId;
use crate::prolly::{Change, KeyRange, ProllyError};

/// How a key's value changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// The key was absent before.
    Added,
    /// The key had another value before.
    Modified,
    /// The key is absent after.
    Removed,
}

impl Op {
    /// The operation that turns `old` into `new` (`None` when both are absent).
    pub fn between(old: Option<&ObjectId>, new: Option<&ObjectId>) -> Option<Op> {
        match (old, new) {
            (None, None) => None,
            (None, Some(_)) => Some(Op::Added),
            (Some(_), None) => Some(Op::Removed),
            (Some(_), Some(_)) => Some(Op::Modified),
        }
    }

    /// `added`, `modified` or `removed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Added => "added",
            Op::Modified => "modified",
            Op::Removed => "removed",
        }
    }
}

/// One key whose value id differs between two trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyChange {
    /// The key.
    pub key: Key,
    /// Its value id before (`None` = added).
    pub old: Option<ObjectId>,
    /// Its value id after (`None` = removed).
    pub new: Option<ObjectId>,
}

impl KeyChange {
    /// Added, modified or removed.
    pub fn op(&self) -> Op {
        Op::between(self.old.as_ref(), self.new.as_ref()).unwrap_or(Op::Modified)
    }
}

/// Lines added and removed by a text change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineStat {
    /// Lines only in the new text.
    pub added: usize,
    /// Lines only in the old text.
    pub removed: usize,
}

/// `text` as whole lines: a final newline added when missing, so a last line compares
/// equal whether or not text follows it (record contents end without one).
fn whole_lines(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_empty() || text.ends_with('\n') {
        text.into()
    } else {
        format!("{text}\n").into()
    }
}

/// A unified diff (`--- old_label`, `+++ new_label`, hunks with 3 lines of context) of two
/// texts, line by line, as whole lines (a missing final newline is neither a change nor
/// marked); empty when they are equal.
pub fn unified_diff(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    let (old, new) = (whole_lines(old), whole_lines(new));
    TextDiff::from_lines(old.as_ref(), new.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(old_label, new_label)
        .to_string()
}

/// How many lines a change from `old` to `new` adds and removes (as whole lines).
pub fn line_stat(old: &str, new: &str) -> LineStat {
    let (old, new) = (whole_lines(old), whole_lines(new));
    let diff = TextDiff::from_lines(old.as_ref(), new.as_ref());
    let mut s = LineStat::default();
    for op in diff.ops() {
        match *op {
            DiffOp::Equal { .. } => {}
            DiffOp::Delete { old_len, .. } => s.removed += old_len,
            DiffOp::Insert { new_len, .. } => s.added += new_len,
            DiffOp::Replace {
                old_len, new_len, ..
            } => {
                s.removed += old_len;
                s.added += new_len;
            }
        }
    }
    s
}

/// A diff's filter (none when it matches every key) and the key range it confines walks to.
fn scope(filter: Option<&KeyFilter>) -> (Option<&KeyFilter>, KeyRange) {
    let filter = filter.filter(|f| !f.is_all());
    (filter, filter.map_or_else(KeyRange::all, KeyFilter::range))
}

impl Repo {
    /// The keys whose value ids differ from tree `from_root` to tree `to_root`, in tree order
    /// (namespace, then path), restricted to `filter` when given.
    pub fn diff(
        &self,
        from_root: &ObjectId,
        to_root: &ObjectId,
        filter: Option<&KeyFilter>,
    ) -> RepoResult<Vec<KeyChange>> {
        self.diff_each(from_root, to_root, filter, &Ok)
    }

    /// [`Repo::diff`] with each change passed through `each` on the thread that found it
    /// (a large diff is walked on two threads, see `NodeStore::diff_map`), so work done per
    /// change, such as reading its records, is shared by them too. The results come in key
    /// order; the first error (in key order) is returned.
    pub fn diff_each<T: Send, E: From<RepoError> + Send>(
        &self,
        from_root: &ObjectId,
        to_root: &ObjectId,
        filter: Option<&KeyFilter>,
        each: &(dyn Fn(KeyChange) -> Result<T, E> + Sync),
    ) -> Result<Vec<T>, E> {
        let (filter, range) = scope(filter);
        // Unfiltered, the key counts' difference is a lower bound on the changes (the
        // whole count when one tree is empty).
        let expected = match filter {
            Some(_) => 0,
            None => {
                let count = |root| self.tree().count(root).map_err(|e| E::from(e.into()));
                usize::try_from(count(from_root)?.abs_diff(count(to_root)?)).unwrap_or(0)
            }
        };
        self.tree()
            .diff_try_map(from_root, to_root, &range, expected, &|c: Change| {
                if filter.is_some_and(|flt| !flt.matches_encoded(&c.key)) {
                    return Ok(None);
                }
                let key = Key::decode(&c.key).map_err(|e| Fallible(E::from(e.into())))?;
                each(KeyChange {
                    key,
                    old: c.old,
                    new: c.new,
                })
                .map(Some)
                .map_err(Fallible)
            })
            .map_err(|f| f.0)
    }

    /// Whether any key that `filter` matches differs between the two trees.
    pub(crate) fn differs(
        &self,
        from_root: &ObjectId,
        to_root: &ObjectId,
        filter: Option<&KeyFilter>,
    ) -> RepoResult<bool> {
        if from_root == to_root {
            return Ok(false);
        }
        let mut any = false;
        self.diff_visit(from_root, to_root, filter, &mut |_| {
            any = true;
            false
        })?;
        Ok(any)
    }

    /// Whether tree `root` holds any key that `filter` matches.
    pub(crate) fn holds_any(
        &self,
        root: &ObjectId,
        filter: Option<&KeyFilter>,
    ) -> RepoResult<bool> {
        let range = filter.map_or_else(KeyRange::all, KeyFilter::range);
        let mut any = false;
        self.tree().scan(root, &range, &mut |k, _| {
            any = filter.is_none_or(|f| f.matches_encoded(k));
            !any
        })?;
        Ok(any)
    }

    /// Visits the changes that `filter` matches in key order until `f` returns false.
    fn diff_visit(
        &self,
        from_root: &ObjectId,
        to_root: &ObjectId,
        filter: Option<&KeyFilter>,
        f: &mut dyn FnMut(Change) -> bool,
    ) -> RepoResult<()> {
        let (filter, range) = scope(filter);
        Ok(self
            .tree()
            .diff_range(from_root, to_root, &range, &mut |c| match filter {
                Some(flt) if !flt.matches_encoded(&c.key) => true,
                _ => f(c),
            })?)
    }
}

/// A caller's error in a tree walk, made from the tree's own errors through [`RepoError`].
struct Fallible<E>(E);

impl<E: From<RepoError>> From<ProllyError> for Fallible<E> {
    fn from(e: ProllyError) -> Self {
        Fallible(E::from(e.into()))
    }
}
