//! `forget`: remove a memory in a new commit (history keeps it), or with `purge` erase its key
//! from every commit of every branch (history is rewritten and commit ids change), then remove
//! what became unreachable.

use serde::Serialize;

use crate::key::Key;
use crate::memory::related;
use crate::object::ObjectId;
use crate::prolly::Edit;
use crate::repo::revision::validate_branch_name;
use crate::repo::Repo;

use super::input::NamedKey;
use super::transaction::CreatedBranch;
use super::{Memoir, MemoirError, MemoirResult, Outcome, WriteAs};

/// What to forget.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForgetRequest {
    /// The key (`path` or `ns:path`).
    pub key: String,
    /// Namespace of a bare path (default `default`).
    pub namespace: Option<String>,
    /// Erase the key from the whole history of every branch instead (rewrites commit ids).
    pub purge: bool,
    /// With `purge`: say what would be rewritten, and change nothing.
    pub dry_run: bool,
}

impl ForgetRequest {
    /// A request to forget `key` in a new commit.
    pub fn new(key: impl Into<String>) -> Self {
        ForgetRequest {
            key: key.into(),
            ..ForgetRequest::default()
        }
    }
}

/// What a purge rewrote and removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PurgeCounts {
    /// Commits whose tree held the key.
    pub commits_with_key: u64,
    /// Commits given a new id (those with the key and their descendants).
    pub commits_rewritten: u64,
    /// Refs moved to rewritten commits.
    pub refs_moved: u64,
    /// Unreachable objects removed afterwards.
    pub objects_removed: u64,
    /// Their bytes.
    pub bytes_removed: u64,
}

impl PurgeCounts {
    /// The counts of a purge's `report`.
    pub(crate) fn of(report: &crate::repo::PurgeReport) -> PurgeCounts {
        PurgeCounts {
            commits_with_key: report.commits_with_key,
            commits_rewritten: report.commits_rewritten,
            refs_moved: report.refs_moved,
            objects_removed: report.gc.objects_removed,
            bytes_removed: report.gc.bytes_removed,
        }
    }
}

/// What a purge would rewrite (`forget --purge --dry-run`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PurgePreview {
    /// Commits whose tree holds the key, newest first.
    pub commits_with_key: Vec<String>,
    /// Commits that would get a new id (those and their descendants), newest first.
    pub commits_rewritten: Vec<String>,
    /// Refs that would move (branches, remote-tracking refs), by name.
    pub refs: Vec<String>,
}

/// What `forget` did.
#[derive(Debug, Clone, Serialize)]
pub struct ForgetOutcome {
    /// Always true (a missing key is an error, except to a purge).
    pub success: bool,
    /// The key's path.
    pub key: String,
    /// Its namespace.
    pub namespace: String,
    /// The new commit, or after a purge the branch's (rewritten) tip.
    pub commit_hash: String,
    /// What was done, in one line.
    pub message: String,
    /// With `purge`: what was rewritten and removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purged: Option<PurgeCounts>,
    /// `--dry-run`: what the purge would rewrite; nothing changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_purge: Option<PurgePreview>,
    /// After a purge, the store's remotes: they keep what was pushed to them, the purged
    /// content included, until `push --force` and `gc --remote` (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remotes_keep: Vec<String>,
    /// The branch this write created (`--branch` naming a missing one): JSON
    /// `branch_created: true`, absent otherwise.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::transaction::created_as_true"
    )]
    pub branch_created: Option<CreatedBranch>,
    /// The key as `ns:path`.
    #[serde(skip)]
    pub full_key: String,
    /// The commit of `commit_hash`.
    #[serde(skip)]
    pub commit: ObjectId,
    /// What a purge did to the derived caches (diagnostics).
    #[serde(skip)]
    pub notes: Vec<String>,
}

impl ForgetOutcome {
    /// The outcome of a forget of `key` that leaves its branch at `commit`; purges and
    /// previews add what they did.
    fn of(key: &Key, commit: ObjectId, message: String) -> ForgetOutcome {
        ForgetOutcome {
            success: true,
            key: key.path().to_string(),
            namespace: key.namespace().to_string(),
            commit_hash: commit.to_hex(),
            message,
            purged: None,
            would_purge: None,
            remotes_keep: Vec::new(),
            branch_created: None,
            full_key: key.to_string(),
            commit,
            notes: Vec::new(),
        }
    }
}

impl Outcome for ForgetOutcome {
    crate::outcome_json!();

    fn created_branch(&self) -> Option<&CreatedBranch> {
        self.branch_created.as_ref()
    }
}

impl Memoir {
    /// Removes the memory at `req.key` on the branch of `who` in a new commit; a key missing
    /// on that branch is exit 2, and nothing changes. With `req.purge`, erases the key from
    /// every commit of every branch whether or not the branch has it now, removes what
    /// became unreachable and prunes the derived caches (the search index holds contents),
    /// so the key's content is in no file of the store; a purge of a key in no commit still
    /// does the removal and pruning, which finishes a purge that was interrupted.
    pub fn forget(&self, req: &ForgetRequest, who: &WriteAs) -> MemoirResult<ForgetOutcome> {
        who.check()?;
        let named = NamedKey::parse(&req.key, req.namespace.as_deref())?;
        // Records name their relation sets by id: a set stays while history names it.
        if named.in_namespace(related::NAMESPACE) {
            return Err(MemoirError::invalid(format!(
                "the namespace {} holds the sets of keys written together, which memoir keeps \
                 itself; nothing was forgotten",
                related::NAMESPACE
            )));
        }
        if req.purge && req.dry_run {
            return self.purge_preview(self.open_repo()?, &named.into_spelled()?, who);
        }
        if req.purge {
            return self.purge(self.open_repo()?, &named.into_spelled()?, who);
        }
        let tx = self.start_transaction(who)?;
        let root = tx.root();
        let (key, id) = named.resolve(|k| Ok(tx.repo().tree().get(&root, &k.encode())?))?;
        if id.is_none() {
            return Err(MemoirError::not_found(format!(
                "memory '{key}' not found on {}; nothing to forget",
                tx.branch()
            )));
        }
        let message = format!("Delete {} from {}", key.path(), key.namespace());
        let committed = tx.finish(vec![Edit::Delete(key.encode())], &message)?;
        let id = committed.id;
        Ok(ForgetOutcome {
            branch_created: committed.created.clone(),
            ..ForgetOutcome::of(&key, id, message)
        })
    }

    /// `forget --purge`: see [`Memoir::forget`]. The reported commit is the tip of the
    /// branch of `who` when it exists, else HEAD's commit, after the rewrite.
    /// What every purge does once history is rewritten: prunes the caches of what went,
    /// and names the commit the writer's branch (else `HEAD`) now points at. Closes `repo`.
    pub(crate) fn after_purge(
        &self,
        repo: Repo,
        who: &WriteAs,
    ) -> MemoirResult<(Vec<String>, crate::object::ObjectId)> {
        let notes = self.prune_caches(repo.store())?;
        let tip = reported_tip(&repo, who)?;
        Ok((notes, tip))
    }

    /// `forget --purge --dry-run`: what the purge would rewrite, with nothing changed.
    fn purge_preview(&self, repo: Repo, key: &Key, who: &WriteAs) -> MemoirResult<ForgetOutcome> {
        if let Some(b) = &who.branch {
            validate_branch_name(b)?;
        }
        let plan = repo.purge_plan(&[key.encode()], &[])?;
        let tip = reported_tip(&repo, who)?;
        drop(repo);
        let hex = |ids: &[ObjectId]| ids.iter().map(ObjectId::to_hex).collect();
        let message = format!(
            "Would purge {} from {}: {} commits hold it, {} would be rewritten, {} refs would \
             move; nothing changed",
            key.path(),
            key.namespace(),
            plan.commits_with_key.len(),
            plan.commits_rewritten.len(),
            plan.refs.len()
        );
        Ok(ForgetOutcome {
            would_purge: Some(PurgePreview {
                commits_with_key: hex(&plan.commits_with_key),
                commits_rewritten: hex(&plan.commits_rewritten),
                refs: plan.refs,
            }),
            ..ForgetOutcome::of(key, tip, message)
        })
    }

    fn purge(&self, repo: Repo, key: &Key, who: &WriteAs) -> MemoirResult<ForgetOutcome> {
        if let Some(b) = &who.branch {
            validate_branch_name(b)?;
        }
        let report = repo.purge(&key.encode())?;
        let (notes, tip) = self.after_purge(repo, who)?;
        let removed = report.gc.objects_removed;
        let message = if report.commits_with_key == 0 {
            format!(
                "Purged {} from {}: it is in no commit of any branch; {removed} unreachable \
                 objects removed",
                key.path(),
                key.namespace()
            )
        } else {
            format!(
                "Purged {} from {}: {} commits rewritten, {} refs moved, {removed} objects removed",
                key.path(),
                key.namespace(),
                report.commits_rewritten,
                report.refs_moved,
            )
        };
        Ok(ForgetOutcome {
            purged: Some(PurgeCounts::of(&report)),
            remotes_keep: crate::store::read_remotes(self.path())
                .map(|r| r.into_keys().collect())
                .unwrap_or_default(),
            notes,
            ..ForgetOutcome::of(key, tip, message)
        })
    }
}

/// The commit a purge reports: the tip of `who`'s branch when it exists, else HEAD's.
fn reported_tip(repo: &Repo, who: &WriteAs) -> MemoirResult<ObjectId> {
    match who.branch.as_deref().map(|b| repo.branch_tip(b)) {
        Some(Ok(tip)) => Ok(tip),
        _ => Ok(repo.head_commit()?),
    }
}
