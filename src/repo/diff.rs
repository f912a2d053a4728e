//! Key-level diff of two trees, and text diffs of two values.

use std::borrow::Cow;
use std::collections::HashMap;

use similar::algorithms::{myers, Capture, Compact, Replace};
use similar::udiff::UnifiedHunkHeader;
use similar::{group_diff_ops, DiffOp, DiffTag, DiffableStr};

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

/// The line diff of two texts as `diff` and `blame` take it: Myers' algorithm over the
/// lines, with changes joined into replacements and slid to the common positions, as
/// `similar`'s text diff gives it. Lines are compared as numbers (equal lines, equal
/// numbers), so this one call is the only instantiation of `similar`'s generic algorithm
/// in the crate: its text diff instantiates the algorithm dozens of times, which was a
/// sixth of the library's compiled code.
pub(super) fn line_ops<S: AsRef<str>>(old: &[S], new: &[S]) -> Vec<DiffOp> {
    let mut numbers = HashMap::new();
    let old = numbered(old, &mut numbers);
    let new = numbered(new, &mut numbers);
    let mut hook = Compact::new(Replace::new(Capture::new()), &old[..], &new[..]);
    myers::diff(&mut hook, &old[..], 0..old.len(), &new[..], 0..new.len())
        .unwrap_or_else(|never| match never {});
    hook.into_inner().into_inner().into_ops()
}

/// Each line's number: the first line of each distinct text numbers it.
fn numbered<'a, S: AsRef<str>>(lines: &'a [S], numbers: &mut HashMap<&'a str, u32>) -> Vec<u32> {
    lines
        .iter()
        .map(|line| {
            let next = numbers.len() as u32;
            *numbers.entry(line.as_ref()).or_insert(next)
        })
        .collect()
}

/// `text` as whole lines: a final newline added when missing, so a last line compares
/// equal whether or not text follows it (record contents end without one).
fn whole_lines(text: &str) -> Cow<'_, str> {
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
    // Each line with its line end: a newline, a carriage return, or both.
    let (old, new) = (old.tokenize_lines(), new.tokenize_lines());
    let mut out = String::new();
    for hunk in group_diff_ops(line_ops(&old, &new), 3) {
        if hunk.is_empty() {
            continue;
        }
        if out.is_empty() {
            out = format!("--- {old_label}\n+++ {new_label}\n");
        }
        out += &format!("{}\n", UnifiedHunkHeader::new(&hunk));
        for op in &hunk {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            if tag == DiffTag::Equal {
                push_lines(&mut out, ' ', &old[old_range]);
            } else {
                push_lines(&mut out, '-', &old[old_range]);
                push_lines(&mut out, '+', &new[new_range]);
            }
        }
    }
    out
}

/// `lines` (each with its line end) after `out`, each marked with `sign`.
fn push_lines(out: &mut String, sign: char, lines: &[&str]) {
    for line in lines {
        out.push(sign);
        out.push_str(line);
    }
}

/// How many lines a change from `old` to `new` adds and removes (as whole lines).
pub fn line_stat(old: &str, new: &str) -> LineStat {
    let (old, new) = (whole_lines(old), whole_lines(new));
    let mut s = LineStat::default();
    for op in line_ops(&old.tokenize_lines(), &new.tokenize_lines()) {
        let (_, old_range, new_range) = op.as_tag_tuple();
        if op.tag() != DiffTag::Equal {
            s.removed += old_range.len();
            s.added += new_range.len();
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use similar::TextDiff;

    use super::*;

    /// What `similar`'s own text diff gives for the same whole lines.
    fn text_diff(old: &str, new: &str) -> (String, LineStat) {
        let whole = |t: &str| {
            if t.is_empty() || t.ends_with('\n') {
                t.to_string()
            } else {
                format!("{t}\n")
            }
        };
        let (old, new) = (whole(old), whole(new));
        let diff = TextDiff::from_lines(&old, &new);
        let mut stat = LineStat::default();
        for op in diff.ops() {
            if op.tag() != DiffTag::Equal {
                stat.removed += op.old_range().len();
                stat.added += op.new_range().len();
            }
        }
        let patch = diff
            .unified_diff()
            .context_radius(3)
            .header("a", "b")
            .to_string();
        (patch, stat)
    }

    fn text() -> impl Strategy<Value = String> {
        // Few distinct lines, so that texts share many and differ in places; line ends of
        // every kind, and sometimes none at the end.
        let line = prop::sample::select(vec!["a", "b", "c", "", "long line", "é"]);
        let end = prop::sample::select(vec!["\n", "\n", "\n", "\r\n", "\r"]);
        (prop::collection::vec((line, end), 0..40), any::<bool>()).prop_map(|(lines, cut)| {
            let mut t: String = lines.into_iter().map(|(l, e)| format!("{l}{e}")).collect();
            if cut && t.ends_with('\n') {
                t.pop();
            }
            t
        })
    }

    proptest! {
        #[test]
        fn line_diffs_are_similars_text_diffs(old in text(), new in text()) {
            let (patch, stat) = text_diff(&old, &new);
            prop_assert_eq!(unified_diff(&old, &new, "a", "b"), patch);
            prop_assert_eq!(line_stat(&old, &new), stat);
        }
    }

    #[test]
    fn a_long_text_with_one_change_diffs_as_similar_does() {
        // Over 100 lines, where similar's text diff numbers lines and trims first.
        let old: String = (0..300).map(|i| format!("line {}\n", i % 7)).collect();
        let new = old.replacen("line 3\n", "line three\n", 5);
        let (patch, stat) = text_diff(&old, &new);
        assert_eq!(unified_diff(&old, &new, "a", "b"), patch);
        assert_eq!(line_stat(&old, &new), stat);
        assert_eq!(
            stat,
            LineStat {
                added: 5,
                removed: 5
            }
        );
    }
}
