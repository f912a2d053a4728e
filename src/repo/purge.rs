//! Purging a key from the whole history.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::{Commit, GcReport, RefUpdate, Repo, RepoResult};
use crate::object::ObjectId;
use crate::prolly::{Edit, KeyRange};
use crate::store::{ObjectStore, Reclaim};

/// What [`Repo::purge`] or [`Repo::purge_all`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PurgeReport {
    /// Commits whose tree held the key (one of the keys).
    pub commits_with_key: u64,
    /// Commits given a new id (those with the key and all their descendants).
    pub commits_rewritten: u64,
    /// Refs moved to rewritten commits.
    pub refs_moved: u64,
    /// Old commit id -> new commit id, for every rewritten commit.
    pub rewritten: BTreeMap<ObjectId, ObjectId>,
    /// The garbage collection that followed.
    pub gc: GcReport,
}

/// What a purge would rewrite, found without writing anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PurgePlan {
    /// Commits whose tree holds a purged key, newest first.
    pub commits_with_key: Vec<ObjectId>,
    /// Commits that would get a new id (those and their descendants), newest first.
    pub commits_rewritten: Vec<ObjectId>,
    /// Refs that would move, by name.
    pub refs: Vec<String>,
}

impl Repo {
    /// The keys of `keys` (encoded) present in the tree at `root`, and every key there
    /// within one of `ranges`: what a purge removes from that tree.
    fn purged_in(
        &self,
        root: &ObjectId,
        keys: &[Vec<u8>],
        ranges: &[KeyRange],
    ) -> RepoResult<BTreeSet<Vec<u8>>> {
        let mut gone = BTreeSet::new();
        for key in keys {
            if self.tree.get(root, key)?.is_some() {
                gone.insert(key.clone());
            }
        }
        for range in ranges {
            self.tree.scan(root, range, &mut |k, _| {
                gone.insert(k.to_vec());
                true
            })?;
        }
        Ok(gone)
    }

    /// What [`Repo::purge_all`] of `keys` and `ranges` would rewrite: the commits holding
    /// one of them, those and their descendants, and the refs that would move. Reads only.
    pub fn purge_plan(&self, keys: &[Vec<u8>], ranges: &[KeyRange]) -> RepoResult<PurgePlan> {
        let refs = self.commit_refs()?;
        let tips: Vec<ObjectId> = refs.iter().map(|(_, id)| *id).collect();
        let mut holds: HashMap<ObjectId, bool> = HashMap::new();
        let mut dirty: HashSet<ObjectId> = HashSet::new();
        let mut plan = PurgePlan::default();
        // Parents first, so a commit is dirty when one of its parents is.
        for id in self.history_in_order(&tips)? {
            let c = self.read_commit(&id)?;
            let has = match holds.get(&c.root) {
                Some(h) => *h,
                None => {
                    let h = !self.purged_in(&c.root, keys, ranges)?.is_empty();
                    holds.insert(c.root, h);
                    h
                }
            };
            if has {
                plan.commits_with_key.push(id);
            }
            if has || c.parents.iter().any(|p| dirty.contains(p)) {
                dirty.insert(id);
                plan.commits_rewritten.push(id);
            }
        }
        plan.commits_with_key.reverse();
        plan.commits_rewritten.reverse();
        plan.refs = refs
            .into_iter()
            .filter(|(_, id)| dirty.contains(id))
            .map(|(name, _)| name)
            .collect();
        Ok(plan)
    }

    /// Removes `key` (encoded) from every commit reachable from any ref, **rewriting
    /// history: commit ids change** for every commit whose tree held the key and for all of
    /// their descendants.
    ///
    /// Commits are rewritten oldest first in topological order: the new root is the old
    /// root without the key, parents are mapped to their rewritten ids, and author,
    /// timestamp, message and metadata are kept. The new objects are flushed, then every ref
    /// that names a rewritten commit (branches, a detached `HEAD`) is moved by
    /// compare-and-swap, flushed, and [`Repo::gc`] removes the old commits, the old tree
    /// nodes and the key's value objects, unless another key of a remaining commit holds the
    /// same value id; it rewrites every pack holding any dead byte, whatever its share, so no
    /// file of the store keeps the bytes of an object the store no longer has. If another writer moves a ref meanwhile the result is
    /// [`super::RepoError::RefMoved`]; refs already moved stay moved, the history stays
    /// consistent, and running purge again finishes the job.
    pub fn purge(&self, key: &[u8]) -> RepoResult<PurgeReport> {
        self.purge_all(&[key.to_vec()], &[])
    }

    /// [`Repo::purge`] of several keys at once, in one rewrite of history: every key of
    /// `keys` (encoded) and every key within one of `ranges`, in every commit reachable from
    /// any ref.
    pub fn purge_all(&self, keys: &[Vec<u8>], ranges: &[KeyRange]) -> RepoResult<PurgeReport> {
        let refs = self.commit_refs()?;
        let tips: Vec<ObjectId> = refs.iter().map(|(_, id)| *id).collect();
        let mut rep = PurgeReport::default();
        let mut roots: HashMap<ObjectId, ObjectId> = HashMap::new();
        let mut commits: HashMap<ObjectId, ObjectId> = HashMap::new();
        // Parents first, so each commit's parents are rewritten before it.
        for id in self.history_in_order(&tips)? {
            let c = self.read_commit(&id)?;
            let root = match roots.get(&c.root) {
                Some(r) => *r,
                None => {
                    let gone = self.purged_in(&c.root, keys, ranges)?;
                    let r = if gone.is_empty() {
                        c.root
                    } else {
                        let edits = gone.into_iter().map(Edit::Delete).collect();
                        self.tree.apply(&c.root, edits)?
                    };
                    roots.insert(c.root, r);
                    r
                }
            };
            if root != c.root {
                rep.commits_with_key += 1;
            }
            let parents: Vec<ObjectId> = c.parents.iter().map(|p| commits[p]).collect();
            let new_id = if root == c.root && parents == c.parents {
                id
            } else {
                let new = Commit { root, parents, ..c };
                let new_id = self.objects.write(&new)?;
                rep.commits_rewritten += 1;
                rep.rewritten.insert(id, new_id);
                new_id
            };
            commits.insert(id, new_id);
        }
        self.store.flush()?;
        // Every ref in one transaction: a crash leaves all moved or none.
        let mut update = RefUpdate::new();
        for (name, old) in &refs {
            if commits[old] != *old {
                update.move_ref(name.clone(), Some(*old), Some(commits[old]));
                rep.refs_moved += 1;
            }
        }
        self.update_refs(&update)?;
        // Every dead byte goes, not only those of packs gc would rewrite: the purged keys'
        // values may have dead copies anywhere, and this promises they leave the disk.
        rep.gc = self.gc_with(Reclaim::Everything)?;
        Ok(rep)
    }
}
