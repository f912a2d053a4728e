//! `sync-branch`: promote a branch's `default`-namespace memories into another branch (by
//! default `main`) as inserts and updates, never deletes, in one commit on the target. HEAD
//! does not move.

use serde::Serialize;

use crate::glob::KeyGlobs;
use crate::key::DEFAULT_NAMESPACE;
use crate::object::ObjectId;
use crate::prolly::Edit;
use crate::repo::revision::validate_branch_name;
use crate::repo::{Head, KeyFilter, Repo, RepoError};

use super::store_git::mark_synced;
use super::{did_you_mean, Memoir, MemoirError, MemoirResult, Outcome, WriteAs};

/// The branch memories are promoted into when none is named.
pub const SYNC_DEFAULT_TARGET: &str = "main";

/// What to promote where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncBranchRequest {
    /// The branch (or any revision) whose memories are promoted.
    pub source: String,
    /// The branch they go to (it must exist).
    pub into: String,
    /// Say what would change; write nothing.
    pub dry_run: bool,
}

/// What `sync-branch` did (or, in a dry run, would do).
#[derive(Debug, Clone, Serialize)]
pub struct SyncBranchOutcome {
    /// Always true (a failure is an error).
    pub success: bool,
    /// The source.
    pub source_branch: String,
    /// The target branch.
    pub target_branch: String,
    /// Paths (namespace `default`) new on the target, sorted.
    pub added_keys: Vec<String>,
    /// Paths (namespace `default`) whose value the source's replaced, sorted.
    pub updated_keys: Vec<String>,
    /// Whether nothing was written on purpose.
    pub dry_run: bool,
    /// The commit on the target (null when nothing was written).
    pub commit_hash: Option<String>,
    /// The commit's date, ISO 8601 (null when nothing was written).
    pub commit_date: Option<String>,
    /// The branch HEAD is on, as before: memoir never moves it to sync (the reference checks
    /// the target out and back; this says where it is).
    pub restored_branch: Option<String>,
    /// What happened, in one line.
    pub message: String,
    /// Why nothing was written though it was asked (a write refused for want of a
    /// confirmation); the outcome is then a failure (exit 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl SyncBranchOutcome {
    /// This preview as the refusal of a write that was not confirmed.
    pub fn refused(mut self, why: impl Into<String>) -> Self {
        self.success = false;
        self.error = Some(why.into());
        self
    }
}

impl Outcome for SyncBranchOutcome {
    crate::outcome_json!();

    fn exit_code(&self) -> u8 {
        if self.error.is_some() {
            super::exit::ERROR
        } else {
            super::exit::OK
        }
    }

    fn error_message(&self) -> Option<String> {
        self.error.clone()
    }
}

/// The `default`-namespace changes that promoting the tree at `from` into the tree at `to`
/// makes: keys the source has and the target lacks or holds with another value. With the
/// tree of the two branches' merge base (`base_root`), a key whose source value is the
/// base's is left out: the source did not change it, so the target's newer value stays.
pub(crate) fn pending_promotions(
    repo: &Repo,
    target_root: &ObjectId,
    source_root: &ObjectId,
    base_root: Option<&ObjectId>,
) -> MemoirResult<Vec<(crate::key::Key, bool, ObjectId)>> {
    if target_root == source_root {
        return Ok(Vec::new());
    }
    let filter = KeyFilter::new(Some(DEFAULT_NAMESPACE), KeyGlobs::all());
    let changes = repo.diff(target_root, source_root, Some(&filter))?;
    let mut out = Vec::new();
    for c in changes {
        let Some(new) = c.new else { continue };
        if let (Some(base), Some(_)) = (base_root, c.old) {
            if repo.tree().get(base, &c.key.encode())? == Some(new) {
                continue;
            }
        }
        out.push((c.key, c.old.is_none(), new));
    }
    Ok(out)
}

impl Memoir {
    /// Promotes `req.source`'s `default`-namespace memories into branch `req.into`: each key
    /// the target lacks is added and each it holds with another value is set to the source's
    /// record, in one commit signed by `who` (whose `branch` is not used); keys only the
    /// target has are kept. A missing target or source is exit 2, the same branch twice exit
    /// 1. Nothing to promote writes nothing.
    pub fn sync_branch(
        &self,
        req: &SyncBranchRequest,
        who: &WriteAs,
    ) -> MemoirResult<SyncBranchOutcome> {
        who.check()?;
        let repo = self.open_repo()?;
        let target_tip = match repo.branch_tip(&req.into) {
            Err(RepoError::BranchNotFound(_)) => {
                return Err(MemoirError::not_found(format!(
                    "branch '{}' not found (the target of sync-branch){}",
                    req.into,
                    did_you_mean(repo.nearest_branch(&req.into)?)
                )))
            }
            other => other?,
        };
        let source = self.resolve_rev(&repo, &req.source)?;
        if req.source == req.into || source == target_tip {
            return Err(MemoirError::invalid(format!(
                "'{}' and '{}' are the same; name another branch to promote",
                req.source, req.into
            )));
        }
        let restored_branch = match repo.head()? {
            Head::Branch(b) => Some(b),
            Head::Detached(_) => None,
        };
        let target_root = repo.root_of(&target_tip)?;
        let source_root = repo.root_of(&source)?;
        let base_root = match repo.merge_base(&source, &target_tip)? {
            Some(base) => Some(repo.root_of(&base)?),
            None => None,
        };
        let pending = pending_promotions(&repo, &target_root, &source_root, base_root.as_ref())?;
        drop(repo);
        let mut added_keys = Vec::new();
        let mut updated_keys = Vec::new();
        let mut edits = Vec::new();
        for (key, added, value) in pending {
            let list = if added {
                &mut added_keys
            } else {
                &mut updated_keys
            };
            list.push(key.path().to_string());
            edits.push(Edit::Put(key.encode(), value));
        }
        let (n_add, n_upd) = (added_keys.len(), updated_keys.len());
        let mut out = SyncBranchOutcome {
            success: true,
            source_branch: req.source.clone(),
            target_branch: req.into.clone(),
            added_keys,
            updated_keys,
            dry_run: req.dry_run,
            commit_hash: None,
            commit_date: None,
            restored_branch,
            message: String::new(),
            error: None,
        };
        if req.dry_run || edits.is_empty() {
            if !req.dry_run {
                self.mark_promoted(&req.source);
            }
            out.message = if edits.is_empty() {
                format!(
                    "'{}' has no default-namespace changes to promote into '{}'",
                    req.source, req.into
                )
            } else {
                format!(
                    "Would promote '{}' into '{}': {n_add} added, {n_upd} updated",
                    req.source, req.into
                )
            };
            return Ok(out);
        }
        let into = WriteAs {
            branch: Some(req.into.clone()),
            ..who.clone()
        };
        let tx = self.start_transaction(&into)?;
        // The target moved since it was read: promote against what it is now.
        let edits = if tx.root() == target_root {
            edits
        } else {
            let now = pending_promotions(tx.repo(), &tx.root(), &source_root, base_root.as_ref())?;
            now.into_iter()
                .map(|(k, _, v)| Edit::Put(k.encode(), v))
                .collect()
        };
        let message = format!("Sync branch '{}' into {}", req.source, req.into);
        let committed = tx.finish(edits, &message)?;
        out.commit_hash = Some(committed.id.to_hex());
        out.commit_date = Some(committed.date);
        self.mark_promoted(&req.source);
        out.message = format!(
            "Promoted '{}' into '{}': {n_add} added, {n_upd} updated (commit {})",
            req.source,
            req.into,
            committed.id.short(8)
        );
        Ok(out)
    }

    /// Leaves the reference plugin's marker that branch `source` is promoted (see
    /// `store_git::mark_synced`); a revision that is not a branch name gets none, and a
    /// marker that cannot be written is left out, as the plugin then offers the branch again.
    fn mark_promoted(&self, source: &str) {
        if validate_branch_name(source).is_ok() {
            let _ = mark_synced(self.path(), source, self.clock().now() as i64);
        }
    }
}
