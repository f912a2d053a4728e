//! Garbage collection: remove every object no ref can reach.

use super::{id_from_ref, Repo, RepoResult, HEAD, SYMBOLIC};
use crate::object::{Blob, ObjectId};
use crate::prolly::IdSet;
use crate::store::{ObjectStore, Reclaim, RefStore, StoreError, GC_DEAD_SHARE_PERCENT};

/// What [`Repo::gc`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Objects reachable from a ref, all kept.
    pub objects_kept: u64,
    /// Unreachable objects deleted.
    pub objects_removed: u64,
    /// Bytes of the deleted objects.
    pub bytes_removed: u64,
    /// Pack files rewritten to give back the space of dead bytes.
    pub packs_rewritten: u64,
    /// Bytes of live records copied while rewriting them.
    pub bytes_rewritten: u64,
    /// Pack files holding dead bytes that were left as they are (too small a share).
    pub packs_kept_with_dead_bytes: u64,
}

impl Repo {
    /// Every ref that names a commit directly, with that commit: every branch, a detached
    /// `HEAD`, and any other ref holding a 32-byte id. An attached `HEAD` is skipped (its
    /// branch is listed). A ref holding anything else is an error.
    pub(crate) fn commit_refs(&self) -> RepoResult<Vec<(String, ObjectId)>> {
        let mut out = Vec::new();
        for (name, raw) in self.store.list_refs("")? {
            if name == HEAD && raw.starts_with(SYMBOLIC.as_bytes()) {
                continue;
            }
            let id = id_from_ref(&name, &raw)?;
            out.push((name, id));
        }
        Ok(out)
    }

    /// The set of every object reachable from a ref: commits (through all parents), tree
    /// nodes and value ids. Shared subtrees are walked once, so a long history costs
    /// O(distinct objects). Every one is read and checked against its id (values too), and
    /// the walk fails, rather than return a partial set, when anything reachable is missing
    /// or corrupt: what fsck would flag.
    pub(crate) fn reachable_objects(&self) -> RepoResult<IdSet> {
        let tips: Vec<ObjectId> = self.commit_refs()?.into_iter().map(|(_, id)| id).collect();
        self.reachable_from(tips)
    }

    /// As [`Repo::reachable_objects`], from the commits `tips` instead of the refs.
    pub(crate) fn reachable_from(&self, tips: Vec<ObjectId>) -> RepoResult<IdSet> {
        let mut marked = IdSet::default();
        let mut values: Vec<ObjectId> = Vec::new();
        let mut todo = tips;
        while let Some(id) = todo.pop() {
            if !marked.insert(id) {
                continue;
            }
            let c = self.read_commit(&id)?;
            self.tree
                .mark_reachable_with(&c.root, &mut marked, &mut |v| values.push(*v))?;
            todo.extend(c.parents.iter().filter(|p| !marked.contains(*p)));
            for v in values.drain(..) {
                self.objects.read::<Blob>(&v)?;
            }
        }
        Ok(marked)
    }

    /// Deletes every object that no ref reaches (through commits, all their parents, tree
    /// nodes and value ids), flushes, then has the store give back the space of bytes no
    /// object uses ([`ObjectStore::reclaim`]): a pack file is rewritten without them once
    /// at least [`GC_DEAD_SHARE_PERCENT`] percent of its record bytes are dead (or when its
    /// dead bytes could mislead a reader of the pack: a damaged header, a torn record);
    /// other packs keep their dead records, which no index and no read finds, until a later
    /// gc. [`Repo::purge`] erases them all (the derived caches are pruned by the caller, see
    /// [`crate::store::DerivedCache`]). The mark phase
    /// reads and checks every reachable commit, node and value, skipping subtrees already
    /// marked; if any reachable object is missing or corrupt, or a ref is unreadable, gc
    /// fails before deleting anything (run [`Repo::fsck`]).
    ///
    /// gc must not run while another writer of the same store is between writing its
    /// objects and moving its ref (the store's LOCK file keeps other processes out; within a
    /// process the caller serialises).
    pub fn gc(&self) -> RepoResult<GcReport> {
        self.gc_with(Reclaim::DeadShare(GC_DEAD_SHARE_PERCENT))
    }

    /// [`Repo::gc`], rewriting the packs `rule` picks.
    pub(crate) fn gc_with(&self, rule: Reclaim) -> RepoResult<GcReport> {
        let marked = self.reachable_objects()?;
        let mut doomed: Vec<[u8; 32]> = Vec::new();
        let mut kept = 0u64;
        self.store.for_each_id(&mut |raw| {
            if marked.contains(&ObjectId::from_bytes(raw)) {
                kept += 1;
            } else {
                doomed.push(raw);
            }
            true
        })?;
        let mut rep = GcReport {
            objects_kept: kept,
            ..GcReport::default()
        };
        for raw in &doomed {
            let len = match self.store.get(raw) {
                Ok(b) => b.map_or(0, |b| b.len() as u64),
                // A damaged copy of an object nothing needs goes like any other.
                Err(StoreError::Damaged { .. }) => 0,
                Err(e) => return Err(e.into()),
            };
            if self.store.delete(raw)? {
                rep.objects_removed += 1;
                rep.bytes_removed += len;
            }
        }
        self.store.flush()?;
        // Only now, with the deletions durable, are the removed bytes erased.
        let reclaimed = self.store.reclaim(rule)?;
        rep.packs_rewritten = reclaimed.packs_rewritten;
        rep.bytes_rewritten = reclaimed.bytes_rewritten;
        rep.packs_kept_with_dead_bytes = reclaimed.packs_kept_with_dead_bytes;
        Ok(rep)
    }
}
