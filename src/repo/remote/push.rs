//! Writing a branch to a remote: upload what it lacks in packs, then create the branch's
//! next version if no one else did first.

use std::collections::{BTreeMap, BTreeSet};

use super::fetch::{check_remote, read_head, read_heads};
use super::layout::{
    build_pack, index_name, marker_bytes, pack_bytes, pack_name, parse_pack_name, ref_version_name,
    verify_object, RefVersion, MARKER, MAX_PACK_BYTES, PACKS,
};
use super::transport::Transport;
use super::{Progress, RemoteError, RemoteResult};
use crate::object::ObjectId;
use crate::repo::{Repo, RepoError};
use crate::store::ObjectStore;

/// What to push.
#[derive(Debug, Clone)]
pub struct PushPlan {
    /// The remote branch written.
    pub branch: String,
    /// The commit it is to name.
    pub commit: ObjectId,
    /// Replace the remote branch even when it is not an ancestor of `commit`.
    pub force: bool,
    /// The time recorded in the new version (Unix seconds).
    pub time: i64,
}

/// What a push did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushReport {
    /// The remote branch.
    pub branch: String,
    /// The commit it names now.
    pub commit: ObjectId,
    /// The commit it named before (none: the branch is new on the remote).
    pub previous: Option<ObjectId>,
    /// The version created (none when the remote already named `commit`).
    pub seq: Option<u64>,
    /// Whether the push replaced history that was not an ancestor.
    pub forced: bool,
    /// Objects sent.
    pub objects: u64,
    /// Bytes of packs sent.
    pub bytes: u64,
    /// Every pack this push needed, sent now or found already there (an earlier,
    /// interrupted push of the same objects).
    pub packs: BTreeSet<String>,
    /// Of those, how many were already there.
    pub packs_reused: u64,
}

impl Repo {
    /// Pushes `plan.commit` to `plan.branch` of the remote. The remote branch must be an
    /// ancestor of the commit, and held here, unless `plan.force`: otherwise
    /// [`RemoteError::NotFastForward`] and nothing is written. The objects the remote's
    /// branches do not reach ([`Repo::delta`] against every remote head held here) are read,
    /// checked, and uploaded in packs of at most [`MAX_PACK_BYTES`], each pack before its
    /// index; a pack already there (an interrupted push) is not sent again. Then the branch's
    /// next version is created if absent: when another push created it first, or the branch
    /// moved meanwhile, the result is [`RemoteError::NotFastForward`], and the remote keeps
    /// the other push (the packs sent stay, unreferenced, for `gc --remote`).
    pub fn push_to(
        &self,
        t: &dyn Transport,
        plan: &PushPlan,
        progress: &mut dyn FnMut(Progress),
    ) -> RemoteResult<PushReport> {
        if !check_remote(t)? {
            t.put_new(MARKER, marker_bytes())?;
        }
        let heads = read_heads(t)?;
        if let Some(why) = heads.unreadable.get(&plan.branch) {
            return Err(RemoteError::Corrupt(why.clone()));
        }
        let current = heads.branches.get(&plan.branch).cloned();
        let previous = current.as_ref().map(RefVersion::commit_id).transpose()?;
        let mut report = self.start_push(plan, previous, "the remote branch")?;
        if previous == Some(plan.commit) {
            return Ok(report);
        }
        let bases = heads.commits()?;
        let delta = self.delta(&[plan.commit], &bases)?;
        let listed: BTreeMap<String, bool> = t
            .list(PACKS)?
            .into_iter()
            .filter_map(|e| parse_pack_name(&e.name))
            .fold(BTreeMap::new(), |mut m, (hash, idx)| {
                let complete = m.entry(hash).or_insert(false);
                *complete |= idx;
                m
            });
        let mut total = Progress {
            objects_total: delta.len() as u64,
            ..Progress::default()
        };
        let mut batch: Vec<(ObjectId, Vec<u8>)> = Vec::new();
        let mut batch_bytes = pack_bytes([]);
        let ids: Vec<ObjectId> = delta.ids().copied().collect();
        let mut send = |batch: Vec<(ObjectId, Vec<u8>)>| -> RemoteResult<()> {
            let pack = build_pack(batch);
            let objects = pack.objects;
            let size = pack.pack.len() as u64;
            match listed.get(&pack.hash) {
                Some(true) => report.packs_reused += 1,
                had => {
                    if had.is_none() {
                        t.put(&pack_name(&pack.hash), pack.pack)?;
                    }
                    t.put(&index_name(&pack.hash), pack.index)?;
                    report.objects += objects;
                    report.bytes += size;
                }
            }
            report.packs.insert(pack.hash);
            total.objects += objects;
            total.bytes += size;
            total.bytes_total = total.bytes_total.max(total.bytes);
            progress(total);
            Ok(())
        };
        for id in &ids {
            let bytes = self
                .store()
                .get(id.as_bytes())
                .map_err(RepoError::from)?
                .ok_or(RepoError::Object(crate::object::ObjectError::Missing(*id)))?;
            verify_object(id, &bytes, "this store").map_err(|_| {
                RepoError::Object(crate::object::ObjectError::Corrupt {
                    id: *id,
                    reason: "does not hash to its id".into(),
                })
            })?;
            // A pack stays within MAX_PACK_BYTES, unless one object alone is larger.
            let record = pack_bytes([&bytes[..]]) - pack_bytes([]);
            if !batch.is_empty() && batch_bytes + record > MAX_PACK_BYTES {
                send(std::mem::take(&mut batch))?;
                batch_bytes = pack_bytes([]);
            }
            batch_bytes += record;
            batch.push((*id, Vec::from(bytes)));
        }
        if !batch.is_empty() {
            send(batch)?;
        }
        let now = read_head(t, &plan.branch)?;
        if now.as_ref().map(|v| v.seq) != current.as_ref().map(|v| v.seq) {
            return Err(moved(&plan.branch));
        }
        let seq = current.as_ref().map_or(1, |v| v.seq + 1);
        let version = RefVersion {
            branch: plan.branch.clone(),
            seq,
            commit: plan.commit.to_hex(),
            previous: previous.map(|p| p.to_hex()),
            forced: report.forced,
            time: plan.time,
        };
        if !t.put_new(&ref_version_name(&plan.branch, seq), version.to_bytes())? {
            return Err(moved(&plan.branch));
        }
        report.seq = Some(seq);
        Ok(report)
    }
}

impl Repo {
    /// The report a push to a branch that names `previous` (`whose` says whose branch, in
    /// messages) starts from, with the fast-forward rule applied: refused with
    /// [`RemoteError::NotFastForward`] when `previous` is not held here or is not an
    /// ancestor of `plan.commit`, unless `plan.force`, which sets `forced`.
    pub(super) fn start_push(
        &self,
        plan: &PushPlan,
        previous: Option<ObjectId>,
        whose: &str,
    ) -> RemoteResult<PushReport> {
        let mut report = PushReport {
            branch: plan.branch.clone(),
            commit: plan.commit,
            previous,
            seq: None,
            forced: false,
            objects: 0,
            bytes: 0,
            packs: BTreeSet::new(),
            packs_reused: 0,
        };
        match previous {
            Some(prev) if prev != plan.commit => {
                let ff = self
                    .store()
                    .contains(prev.as_bytes())
                    .map_err(RepoError::from)?
                    && self.is_ancestor(&prev, &plan.commit)?;
                if !ff && !plan.force {
                    return Err(RemoteError::NotFastForward(format!(
                        "{whose} '{}' is at {}, which is not an ancestor of {}: fetch (or \
                         pull) first, or push --force to replace it",
                        plan.branch,
                        prev.short(12),
                        plan.commit.short(12)
                    )));
                }
                report.forced = !ff;
            }
            _ => {}
        }
        Ok(report)
    }
}

fn moved(branch: &str) -> RemoteError {
    RemoteError::NotFastForward(format!(
        "the remote branch '{branch}' moved while pushing (another push won): pull, then push again"
    ))
}
