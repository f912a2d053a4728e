//! A remote that is another store on this machine: objects copied between the two stores
//! directly, the other store's branch moved by compare-and-swap under its LOCK.

use std::collections::BTreeSet;

use super::fetch::{FetchReport, RemoteHeads};
use super::layout::{verify_object, RefVersion};
use super::push::{PushPlan, PushReport};
use super::{Progress, RemoteError, RemoteResult};
use crate::object::ObjectId;
use crate::repo::{RefUpdate, Repo, RepoError, BRANCH_PREFIX};
use crate::store::ObjectStore;

/// The objects of `ids` that `to` lacks, read from `from` and checked against their ids.
fn missing_objects(
    from: &Repo,
    to: &Repo,
    ids: impl Iterator<Item = ObjectId>,
) -> RemoteResult<Vec<([u8; 32], Vec<u8>)>> {
    let mut out = Vec::new();
    for id in ids {
        if to
            .store()
            .contains(id.as_bytes())
            .map_err(RepoError::from)?
        {
            continue;
        }
        let bytes = from
            .store()
            .get(id.as_bytes())
            .map_err(RepoError::from)?
            .ok_or(RepoError::Object(crate::object::ObjectError::Missing(id)))?;
        verify_object(&id, &bytes, "the other store")?;
        out.push((*id.as_bytes(), Vec::from(bytes)));
    }
    Ok(out)
}

/// The commits of `of`'s refs that `held_by` holds.
fn held_tips(of: &Repo, held_by: &Repo) -> RemoteResult<Vec<ObjectId>> {
    let mut out = Vec::new();
    for (_, id) in of.commit_refs()? {
        if held_by
            .store()
            .contains(id.as_bytes())
            .map_err(RepoError::from)?
        {
            out.push(id);
        }
    }
    Ok(out)
}

impl Repo {
    /// Pushes `plan.commit` to branch `plan.branch` of the store `dest` (opened, so its
    /// LOCK is held): the same rules as [`Repo::push_to`], with the objects `dest` lacks
    /// copied into it and flushed before its branch moves by compare-and-swap.
    pub fn push_to_store(
        &self,
        dest: &Repo,
        plan: &PushPlan,
        progress: &mut dyn FnMut(Progress),
    ) -> RemoteResult<PushReport> {
        let previous = match dest.branch_tip(&plan.branch) {
            Ok(c) => Some(c),
            Err(RepoError::BranchNotFound(_)) => None,
            Err(e) => return Err(e.into()),
        };
        let mut report = self.start_push(plan, previous, "the other store's branch")?;
        if previous == Some(plan.commit) {
            return Ok(report);
        }
        let delta = self.delta(&[plan.commit], &held_tips(dest, self)?)?;
        let objects = missing_objects(self, dest, delta.ids().copied())?;
        report.objects = objects.len() as u64;
        report.bytes = objects.iter().map(|(_, b)| b.len() as u64).sum();
        dest.store().put_many(&objects).map_err(RepoError::from)?;
        dest.store().flush().map_err(RepoError::from)?;
        progress(Progress {
            objects: report.objects,
            objects_total: report.objects,
            bytes: report.bytes,
            bytes_total: report.bytes,
        });
        let mut update = RefUpdate::new();
        update.move_ref(
            format!("{BRANCH_PREFIX}{}", plan.branch),
            previous,
            Some(plan.commit),
        );
        match dest.update_refs(&update) {
            Err(
                RepoError::RefMoved(_) | RepoError::BranchExists(_) | RepoError::BranchNotFound(_),
            ) => {
                return Err(RemoteError::NotFastForward(format!(
                    "the other store's branch '{}' moved while pushing: pull, then push again",
                    plan.branch
                )))
            }
            other => other?,
        }
        report.seq = Some(0);
        Ok(report)
    }

    /// Copies into this store everything the branches of the store `src` reach that it
    /// lacks (each object checked against its id), then checks the branches are complete
    /// here; returns them as heads. No ref of this store moves.
    pub fn fetch_from_store(
        &self,
        src: &Repo,
        progress: &mut dyn FnMut(Progress),
    ) -> RemoteResult<FetchReport> {
        let mut heads = RemoteHeads::default();
        for (branch, commit) in src.branches()? {
            heads.branches.insert(
                branch.clone(),
                RefVersion {
                    branch,
                    seq: 0,
                    commit: commit.to_hex(),
                    previous: None,
                    forced: false,
                    time: 0,
                },
            );
        }
        let tips = heads.commits()?;
        let delta = src.delta(&tips, &held_tips(self, src)?)?;
        let objects = missing_objects(src, self, delta.ids().copied())?;
        let bytes = objects.iter().map(|(_, b)| b.len() as u64).sum();
        self.store().put_many(&objects).map_err(RepoError::from)?;
        self.store().flush().map_err(RepoError::from)?;
        progress(Progress {
            objects: objects.len() as u64,
            objects_total: objects.len() as u64,
            bytes,
            bytes_total: bytes,
        });
        self.check_complete(&heads)?;
        Ok(FetchReport {
            heads,
            objects: objects.len() as u64,
            bytes,
            packs_read: 0,
            packs_held: BTreeSet::new(),
        })
    }
}
