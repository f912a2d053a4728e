//! Key-level diff of two trees, and text diffs of two values.

use similar::{DiffOp, TextDiff};

use super::filter::KeyFilter;
use super::{Repo, RepoError, RepoResult};
use crate::key::Key;
use crate::object::{ObjectError, ObjectId};
use crate::prolly::{Change, KeyRange, Node};

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

/// A unified diff (`--- old_label`, `+++ new_label`, hunks with 3 lines of context) of two
/// texts, line by line; empty when they are equal.
pub fn unified_diff(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_label, new_label)
        .to_string()
}

/// How many lines a change from `old` to `new` adds and removes.
pub fn line_stat(old: &str, new: &str) -> LineStat {
    let diff = TextDiff::from_lines(old, new);
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

fn meets(range: &KeyRange, first: &[u8], last: &[u8]) -> bool {
    range.lo.as_deref().is_none_or(|lo| last >= lo)
        && range.hi.as_deref().is_none_or(|hi| first < hi)
}

/// The next unvisited piece of one side of a range diff, in key order.
enum Piece {
    Subtree { level: u8, id: ObjectId },
    Entry { key: Box<[u8]>, value: ObjectId },
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
        let mut out = Vec::new();
        let mut failed = None;
        self.diff_visit(from_root, to_root, filter, &mut |c| {
            match Key::decode(&c.key) {
                Ok(key) => out.push(KeyChange {
                    key,
                    old: c.old,
                    new: c.new,
                }),
                Err(e) => {
                    failed = Some(e);
                    return false;
                }
            }
            true
        })?;
        match failed {
            Some(e) => Err(e.into()),
            None => Ok(out),
        }
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
        let filter = filter.filter(|f| !f.is_all());
        match filter {
            None => Ok(self.tree().diff(from_root, to_root, f)?),
            Some(flt) if flt.namespace.is_none() => {
                Ok(self.tree().diff(from_root, to_root, &mut |c| {
                    !flt.matches_encoded(&c.key) || f(c)
                })?)
            }
            Some(flt) => {
                let range = flt.range();
                self.diff_range(from_root, to_root, &range, &mut |c| {
                    !flt.matches_encoded(&c.key) || f(c)
                })
            }
        }
    }

    /// Structural diff confined to `range`: subtrees outside it are never opened, equal
    /// subtrees are skipped, so the cost is O((changes in range + 1) x height) node reads.
    fn diff_range(
        &self,
        from_root: &ObjectId,
        to_root: &ObjectId,
        range: &KeyRange,
        f: &mut dyn FnMut(Change) -> bool,
    ) -> RepoResult<()> {
        let tree = self.tree();
        let push = |stack: &mut Vec<Piece>, node: &Node| {
            for it in node.items.iter().rev() {
                if !meets(range, &it.key, it.last_key()) {
                    continue;
                }
                stack.push(if node.level == 0 {
                    Piece::Entry {
                        key: it.key.clone(),
                        value: it.id,
                    }
                } else {
                    Piece::Subtree {
                        level: node.level - 1,
                        id: it.id,
                    }
                });
            }
        };
        let open = |stack: &mut Vec<Piece>| -> RepoResult<()> {
            if let Some(Piece::Subtree { level, id }) = stack.pop() {
                let n = tree.load(&id)?;
                if n.level != level {
                    return Err(RepoError::Object(ObjectError::Corrupt {
                        id,
                        reason: format!("node at level {} where {} was expected", n.level, level),
                    }));
                }
                push(stack, &n);
            }
            Ok(())
        };
        let mut a = Vec::new();
        let mut b = Vec::new();
        if from_root == to_root {
            return Ok(());
        }
        push(&mut a, &*tree.load(from_root)?);
        push(&mut b, &*tree.load(to_root)?);
        loop {
            let change = match (a.last(), b.last()) {
                (None, None) => return Ok(()),
                (Some(Piece::Subtree { id: x, .. }), Some(Piece::Subtree { id: y, .. }))
                    if x == y =>
                {
                    a.pop();
                    b.pop();
                    continue;
                }
                (
                    Some(Piece::Subtree { level: la, .. }),
                    Some(Piece::Subtree { level: lb, .. }),
                ) => {
                    if lb > la {
                        open(&mut b)?;
                    } else {
                        open(&mut a)?;
                    }
                    continue;
                }
                (Some(Piece::Subtree { .. }), _) => {
                    open(&mut a)?;
                    continue;
                }
                (_, Some(Piece::Subtree { .. })) => {
                    open(&mut b)?;
                    continue;
                }
                (
                    Some(Piece::Entry { key: ka, value: va }),
                    Some(Piece::Entry { key: kb, value: vb }),
                ) => match ka.cmp(kb) {
                    std::cmp::Ordering::Less => Change {
                        key: ka.to_vec(),
                        old: Some(*va),
                        new: None,
                    },
                    std::cmp::Ordering::Greater => Change {
                        key: kb.to_vec(),
                        old: None,
                        new: Some(*vb),
                    },
                    std::cmp::Ordering::Equal => {
                        let c = (va != vb).then(|| Change {
                            key: ka.to_vec(),
                            old: Some(*va),
                            new: Some(*vb),
                        });
                        a.pop();
                        b.pop();
                        if let Some(c) = c {
                            if !f(c) {
                                return Ok(());
                            }
                        }
                        continue;
                    }
                },
                (Some(Piece::Entry { key, value }), None) => Change {
                    key: key.to_vec(),
                    old: Some(*value),
                    new: None,
                },
                (None, Some(Piece::Entry { key, value })) => Change {
                    key: key.to_vec(),
                    old: None,
                    new: Some(*value),
                },
            };
            if change.new.is_some() {
                b.pop();
            } else {
                a.pop();
            }
            if !f(change) {
                return Ok(());
            }
        }
    }
}
