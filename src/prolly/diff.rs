//! Structural diff of two trees: descends only where subtree ids differ.

use super::node::Node;
use super::{KeyRange, NodeStore, ProllyResult};
use crate::object::ObjectId;

/// One key that differs between two trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The key.
    pub key: Vec<u8>,
    /// Its value id in the old tree (None = added).
    pub old: Option<ObjectId>,
    /// Its value id in the new tree (None = removed).
    pub new: Option<ObjectId>,
}

/// The next unvisited piece of one side, in key order.
enum Front {
    Tree { level: u8, id: ObjectId },
    Entry { key: Box<[u8]>, id: ObjectId },
}

/// Pushes the children of `node` that meet `range`, last first.
fn push_children(stack: &mut Vec<Front>, node: &Node, range: &KeyRange) {
    for it in node.items.iter().rev() {
        if !range.meets(&it.key, it.last_key()) {
            continue;
        }
        stack.push(if node.level == 0 {
            Front::Entry {
                key: it.key.clone(),
                id: it.id,
            }
        } else {
            Front::Tree {
                level: node.level - 1,
                id: it.id,
            }
        });
    }
}

impl NodeStore {
    /// Visits every key whose value differs between `old` and `new`, in ascending key order;
    /// stops when `f` returns false. Equal subtrees are skipped without being read, so the
    /// cost is O(changed keys x height) node reads.
    pub fn diff(
        &self,
        old: &ObjectId,
        new: &ObjectId,
        f: &mut dyn FnMut(Change) -> bool,
    ) -> ProllyResult<()> {
        self.diff_range(old, new, &KeyRange::all(), f)
    }

    /// [`NodeStore::diff`] confined to `range`: subtrees outside it are never opened, so the
    /// cost is O((changes in range + 1) x height) node reads.
    pub fn diff_range(
        &self,
        old: &ObjectId,
        new: &ObjectId,
        range: &KeyRange,
        f: &mut dyn FnMut(Change) -> bool,
    ) -> ProllyResult<()> {
        if old == new {
            return Ok(());
        }
        let mut a = Vec::new();
        let mut b = Vec::new();
        for (stack, id) in [(&mut a, old), (&mut b, new)] {
            let root = self.load(id)?;
            stack.push(Front::Tree {
                level: root.level,
                id: *id,
            });
        }
        let expand = |s: &mut Vec<Front>| -> ProllyResult<()> {
            if let Some(Front::Tree { level, id }) = s.pop() {
                let n = self.load(&id)?;
                if n.level != level {
                    return Err(super::corrupt(&id, "node level differs from its parent's"));
                }
                push_children(s, &n, range);
            }
            Ok(())
        };
        loop {
            let change = match (a.last(), b.last()) {
                (None, None) => return Ok(()),
                (Some(Front::Tree { id: x, .. }), Some(Front::Tree { id: y, .. })) if x == y => {
                    a.pop();
                    b.pop();
                    continue;
                }
                (Some(Front::Tree { level: la, .. }), other) => {
                    match other {
                        Some(Front::Tree { level: lb, .. }) if lb > la => expand(&mut b)?,
                        _ => expand(&mut a)?,
                    }
                    continue;
                }
                (_, Some(Front::Tree { .. })) => {
                    expand(&mut b)?;
                    continue;
                }
                (
                    Some(Front::Entry { key: ka, id: va }),
                    Some(Front::Entry { key: kb, id: vb }),
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
                (Some(Front::Entry { key, id }), None) => Change {
                    key: key.to_vec(),
                    old: Some(*id),
                    new: None,
                },
                (None, Some(Front::Entry { key, id })) => Change {
                    key: key.to_vec(),
                    old: None,
                    new: Some(*id),
                },
            };
            if change.new.is_none() {
                a.pop();
            } else {
                b.pop();
            }
            if !f(change) {
                return Ok(());
            }
        }
    }

    /// Every change from `old` to `new`, in key order.
    pub fn diff_all(&self, old: &ObjectId, new: &ObjectId) -> ProllyResult<Vec<Change>> {
        let mut out = Vec::new();
        self.diff(old, new, &mut |c| {
            out.push(c);
            true
        })?;
        Ok(out)
    }
}
