//! `sync-branch`: promote a branch's memories into another branch (by default `main`) as
//! inserts and updates in one commit, never deleting anything there.
//!
//! Only the `default` namespace is promoted, as the reference does. A key is promoted when
//! the source's value differs from the target's and the source changed it since the two
//! branches parted (their merge base): a memory the target changed or removed on its own, and
//! the source left as it was, stays as the target has it. Branches without a common ancestor
//! promote every key whose value differs. HEAD never moves.

use serde::Serialize;

use crate::key::{namespace_prefix, Key, DEFAULT_NAMESPACE};
use crate::object::ObjectId;
use crate::prolly::{prefix_range, Edit};
use crate::repo::{Head, RepoError};

use super::transaction::CreatedBranch;
use super::{did_you_mean, read_target, Memoir, MemoirError, MemoirResult, Outcome, WriteAs};

/// The branch memories are promoted into when none is named.
pub const SYNC_DEFAULT_TARGET: &str = "main";

/// What to promote where.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncBranchRequest {
    /// The branch whose memories are promoted.
    pub source: String,
    /// The branch they go to (default [`SYNC_DEFAULT_TARGET`]); it must exist.
    pub into: Option<String>,
    /// Say what would be promoted, and write nothing.
    pub dry_run: bool,
}

/// What `sync-branch` did (or, in a dry run, would do).
#[derive(Debug, Clone, Serialize)]
pub struct SyncBranchOutcome {
    /// Always true (a failure is an error).
    pub success: bool,
    /// The branch promoted from.
    pub source_branch: String,
    /// The branch promoted into.
    pub target_branch: String,
    /// Paths (default namespace) new on the target, sorted.
    pub added_keys: Vec<String>,
    /// Paths whose value on the target was replaced by the source's, sorted.
    pub updated_keys: Vec<String>,
    /// Whether nothing was written on purpose.
    pub dry_run: bool,
    /// The commit on the target (null when nothing was written).
    pub commit_hash: Option<String>,
    /// The branch checked out before and after (HEAD never moves; null when detached).
    pub restored_branch: Option<String>,
    /// What happened, in one line.
    pub message: String,
    /// Never set: the target must exist.
    #[serde(skip)]
    pub branch_created: Option<CreatedBranch>,
}

impl Outcome for SyncBranchOutcome {}

/// One key to promote: its encoding, path, the source's value, and whether it is new there.
struct Promoted {
    key: Vec<u8>,
    path: String,
    value: ObjectId,
    added: bool,
}

impl Memoir {
    /// Promotes `req.source`'s `default`-namespace memories into `req.into` (default `main`)
    /// in one commit by `who` (whose own branch is ignored): keys new on the target are
    /// added, keys whose value differs are updated, nothing is deleted (see the module
    /// documentation for keys both sides changed). A missing branch is exit 2; promoting a
    /// branch into itself is exit 1. With nothing to promote, or `req.dry_run`, no commit.
    pub fn sync_branch(
        &self,
        req: &SyncBranchRequest,
        who: &WriteAs,
    ) -> MemoirResult<SyncBranchOutcome> {
        who.check()?;
        let target = req
            .into
            .clone()
            .unwrap_or_else(|| SYNC_DEFAULT_TARGET.to_string());
        if target == req.source {
            return Err(MemoirError::invalid(format!(
                "cannot promote branch '{target}' into itself"
            )));
        }
        let writer = WriteAs {
            branch: Some(target.clone()),
            ..who.clone()
        };
        // Both must exist: a write would create the target, a promotion must not.
        {
            let repo = self.open_repo()?;
            for b in [&req.source, &target] {
                match repo.branch_tip(b) {
                    Ok(_) => {}
                    Err(RepoError::BranchNotFound(_)) => {
                        return Err(MemoirError::not_found(format!(
                            "branch '{b}' not found{}",
                            did_you_mean(repo.nearest_branch(b)?)
                        )))
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        let tx = self.start_transaction(&writer)?;
        let repo = tx.repo();
        let (_, source_tip) = read_target(repo, Some(&req.source))?;
        let target_tip = repo.branch_tip(&target)?;
        let source_root = repo.root_of(&source_tip)?;
        let target_root = tx.root();
        let base_root = match repo.merge_base(&source_tip, &target_tip)? {
            Some(base) => Some(repo.root_of(&base)?),
            None => None,
        };
        let restored_branch = match repo.head()? {
            Head::Branch(b) => Some(b),
            Head::Detached(_) => None,
        };
        let range = prefix_range(&namespace_prefix(DEFAULT_NAMESPACE));
        let mut promoted = Vec::new();
        for (key, value) in repo.tree().collect(&source_root, &range)? {
            let theirs = repo.tree().get(&target_root, &key)?;
            if theirs == Some(value) {
                continue;
            }
            if let Some(base) = &base_root {
                if repo.tree().get(base, &key)? == Some(value) {
                    // Unchanged on the source since the branches parted.
                    continue;
                }
            }
            let path = Key::decode(&key)?.path().to_string();
            promoted.push(Promoted {
                key,
                path,
                value,
                added: theirs.is_none(),
            });
        }
        let added_keys: Vec<String> = promoted
            .iter()
            .filter(|p| p.added)
            .map(|p| p.path.clone())
            .collect();
        let updated_keys: Vec<String> = promoted
            .iter()
            .filter(|p| !p.added)
            .map(|p| p.path.clone())
            .collect();
        let counts = format!("{} added, {} updated", added_keys.len(), updated_keys.len());
        let mut outcome = SyncBranchOutcome {
            success: true,
            source_branch: req.source.clone(),
            target_branch: target.clone(),
            added_keys,
            updated_keys,
            dry_run: req.dry_run,
            commit_hash: None,
            restored_branch,
            message: String::new(),
            branch_created: None,
        };
        if req.dry_run {
            outcome.message = format!(
                "Would promote '{}' into {target}: {counts}; nothing changed",
                req.source
            );
            return Ok(outcome);
        }
        if promoted.is_empty() {
            outcome.message = format!(
                "Nothing to promote from '{}' into {target}: it has every memory",
                req.source
            );
            return Ok(outcome);
        }
        let edits = promoted
            .into_iter()
            .map(|p| Edit::Put(p.key, p.value))
            .collect();
        let message = format!("Sync branch '{}' into {target}: {counts}", req.source);
        let committed = tx.finish(edits, &message)?;
        outcome.commit_hash = Some(committed.id.to_hex());
        outcome.message = message;
        Ok(outcome)
    }
}
