//! `gc --remote`: remove from a remote the objects none of its branches reaches.

use std::collections::BTreeMap;

use super::fetch::read_pack_index;
use super::fetch::RemoteHeads;
use super::layout::{build_pack, index_name, pack_name, parse_pack_name, PACKS};
use super::transport::Transport;
use super::{RemoteError, RemoteResult};
use crate::object::ObjectId;
use crate::repo::{Repo, RepoError};
use crate::store::ObjectStore;

/// What [`Repo::prune_remote`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Packs left as they were (every object live, or too young to judge).
    pub packs_kept: u64,
    /// Packs rewritten without their dead objects.
    pub packs_rewritten: u64,
    /// Packs removed (nothing live, or incomplete: no index).
    pub packs_removed: u64,
    /// Of the kept packs, those left alone for being younger than the grace period.
    pub packs_young: u64,
    /// Objects no longer on the remote.
    pub objects_removed: u64,
    /// Bytes of packs removed, less those of the packs written in their place.
    pub bytes_removed: u64,
}

impl Repo {
    /// Removes from the remote every object its branches (`heads`, read just before) do not
    /// reach. This store must hold all they reach (fetch first): liveness is computed here,
    /// and the live objects of a pack with dead ones are re-uploaded from here as a new pack
    /// before the old one is deleted, index first. Packs written less than `grace` seconds
    /// before `now` are left alone, since a push in progress may be about to name them.
    pub fn prune_remote(
        &self,
        t: &dyn Transport,
        heads: &RemoteHeads,
        now: i64,
        grace: i64,
    ) -> RemoteResult<PruneReport> {
        if let Some((branch, why)) = heads.unreadable.iter().next() {
            // What that branch reaches is unknown: nothing can be judged unreachable.
            return Err(RemoteError::Corrupt(format!(
                "branch '{branch}' cannot be read, so nothing is removed: {why}"
            )));
        }
        let live = self.reachable_from(heads.commits()?)?;
        let mut report = PruneReport::default();
        // Per pack: its size and time, and its index's size (each when listed).
        type Listed = (Option<(u64, i64)>, Option<u64>);
        let mut packs: BTreeMap<String, Listed> = BTreeMap::new();
        for e in t.list(PACKS)? {
            if let Some((hash, idx)) = parse_pack_name(&e.name) {
                let slot = packs.entry(hash).or_insert((None, None));
                if idx {
                    slot.1 = Some(e.size);
                } else {
                    slot.0 = Some((e.size, e.modified));
                }
            }
        }
        for (hash, (pack, index_size)) in packs {
            let Some((size, modified)) = pack else {
                // An index without its pack: nothing can be read through it.
                t.delete(&index_name(&hash))?;
                continue;
            };
            if now - modified < grace {
                report.packs_kept += 1;
                report.packs_young += 1;
                continue;
            }
            let Some(index_size) = index_size else {
                t.delete(&pack_name(&hash))?;
                report.packs_removed += 1;
                report.bytes_removed += size;
                continue;
            };
            let entries = read_pack_index(t, &hash, size, index_size)?;
            let keep: Vec<ObjectId> = entries
                .iter()
                .map(|e| e.id)
                .filter(|id| live.contains(id))
                .collect();
            if keep.len() == entries.len() {
                report.packs_kept += 1;
                continue;
            }
            if !keep.is_empty() {
                let mut objects = Vec::with_capacity(keep.len());
                for id in keep.iter() {
                    let bytes = self
                        .store()
                        .get(id.as_bytes())
                        .map_err(RepoError::from)?
                        .ok_or(RepoError::Object(crate::object::ObjectError::Missing(*id)))?;
                    objects.push((*id, Vec::from(bytes)));
                }
                let built = build_pack(objects);
                let written = built.pack.len() as u64;
                t.put(&pack_name(&built.hash), built.pack)?;
                t.put(&index_name(&built.hash), built.index)?;
                report.packs_rewritten += 1;
                report.bytes_removed += size.saturating_sub(written);
            } else {
                report.packs_removed += 1;
                report.bytes_removed += size;
            }
            report.objects_removed += (entries.len() - keep.len()) as u64;
            t.delete(&index_name(&hash))?;
            t.delete(&pack_name(&hash))?;
        }
        Ok(report)
    }
}
