//! The objects one history has and another lacks, found by walking the difference of trees.

use std::sync::Arc;

use super::super::ancestry::{ancestors, positions};
use super::super::{Repo, RepoResult};
use crate::object::ObjectId;
use crate::prolly::{IdSet, Node};
use crate::store::ObjectStore;

/// The objects reachable from some tips and not from some bases (see [`Repo::delta`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delta {
    /// New commits, parents before children.
    pub commits: Vec<ObjectId>,
    /// New tree nodes.
    pub nodes: Vec<ObjectId>,
    /// New values (not read by the walk).
    pub values: Vec<ObjectId>,
}

impl Delta {
    /// How many objects in all.
    pub fn len(&self) -> usize {
        self.commits.len() + self.nodes.len() + self.values.len()
    }

    /// Whether there is nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every id: commits, nodes, values.
    pub fn ids(&self) -> impl Iterator<Item = &ObjectId> {
        self.commits.iter().chain(&self.nodes).chain(&self.values)
    }
}

type Front = Vec<(ObjectId, Arc<Node>)>;

impl Repo {
    /// The objects reachable from `tips` that a holder of everything reachable from `bases`
    /// lacks: the commits that are not ancestors of a base, and, for each, the nodes and
    /// values of its tree that differ from its parents' trees. Trees are compared level by
    /// level from the roots, descending only into nodes that differ, so equal subtrees are
    /// never read and the cost follows the change, not the tree. The result may name a few
    /// objects the bases also reach (a subtree that moved), never miss one they do not.
    /// Every node listed was loaded and checked; values are listed unread. Bases this store
    /// does not hold are ignored.
    pub fn delta(&self, tips: &[ObjectId], bases: &[ObjectId]) -> RepoResult<Delta> {
        let mut held = Vec::new();
        for b in bases {
            if self.store().contains(b.as_bytes())? {
                held.push(*b);
            }
        }
        let all: Vec<ObjectId> = tips.iter().chain(&held).copied().collect();
        let graph = self.commit_graph(&all, false)?;
        let from_tips = ancestors(&graph, &positions(&graph, tips));
        let from_bases = ancestors(&graph, &positions(&graph, &held));
        let mut out = Delta::default();
        let mut sent = IdSet::default();
        for pos in 0..graph.len() as u32 {
            if !from_tips[pos as usize] || from_bases[pos as usize] {
                continue;
            }
            let id = graph.id(pos);
            out.commits.push(id);
            let parents: Vec<ObjectId> = graph.parents(pos).map(|p| graph.root(p)).collect();
            self.tree_delta(&graph.root(pos), &parents, &mut sent, &mut out)?;
        }
        Ok(out)
    }

    /// Adds to `out` the nodes and values of the tree at `root` that the trees at `bases`
    /// lack, skipping what `sent` already holds (and adding what it lists to `sent`).
    fn tree_delta(
        &self,
        root: &ObjectId,
        bases: &[ObjectId],
        sent: &mut IdSet,
        out: &mut Delta,
    ) -> RepoResult<()> {
        if bases.contains(root) || !sent.insert(*root) {
            return Ok(());
        }
        let tree = self.tree();
        let mut new: Front = vec![(*root, tree.load(root)?)];
        let mut base: Front = Vec::new();
        for b in bases {
            base.push((*b, tree.load(b)?));
        }
        while let Some(level) = new.first().map(|(_, n)| n.level) {
            while base.first().is_some_and(|(_, n)| n.level > level) {
                base = self.children(&base)?;
            }
            let aligned = base.first().is_some_and(|(_, n)| n.level == level);
            if aligned {
                let base_ids: IdSet = base.iter().map(|(id, _)| *id).collect();
                let new_ids: IdSet = new.iter().map(|(id, _)| *id).collect();
                new.retain(|(id, _)| !base_ids.contains(id));
                base.retain(|(id, _)| !new_ids.contains(id));
            }
            out.nodes.extend(new.iter().map(|(id, _)| *id));
            if level == 0 {
                let have: IdSet = if aligned {
                    base.iter()
                        .flat_map(|(_, n)| n.items.iter().map(|i| i.id))
                        .collect()
                } else {
                    IdSet::default()
                };
                self.emit_values(&new, &have, sent, out);
                break;
            }
            new = self.unsent_children(&new, sent)?;
            if aligned {
                base = self.children(&base)?;
            }
        }
        Ok(())
    }

    fn children(&self, front: &Front) -> RepoResult<Front> {
        let mut next = Vec::new();
        for (_, n) in front {
            for it in &n.items {
                next.push((it.id, self.tree().load(&it.id)?));
            }
        }
        Ok(next)
    }

    /// The children of `front` not yet in `sent`, loaded, and added to `sent`.
    fn unsent_children(&self, front: &Front, sent: &mut IdSet) -> RepoResult<Front> {
        let mut next = Vec::new();
        for (_, n) in front {
            for it in &n.items {
                if sent.insert(it.id) {
                    next.push((it.id, self.tree().load(&it.id)?));
                }
            }
        }
        Ok(next)
    }

    fn emit_values(&self, leaves: &Front, have: &IdSet, sent: &mut IdSet, out: &mut Delta) {
        for (_, n) in leaves {
            for it in &n.items {
                if !have.contains(&it.id) && sent.insert(it.id) {
                    out.values.push(it.id);
                }
            }
        }
    }
}
