//! `forget`: remove a memory in a new commit (history keeps it), or with `purge` erase its key
//! from every commit of every branch (history is rewritten and commit ids change), then remove
//! what became unreachable.

use serde::Serialize;

use crate::object::ObjectId;
use crate::prolly::Edit;

use super::input::NamedKey;
use super::{commit_to, write_target, Memoir, MemoirError, MemoirResult, Outcome, WriteAs};

/// What to forget.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForgetRequest {
    /// The key (`path` or `ns:path`).
    pub key: String,
    /// Namespace of a bare path (default `default`).
    pub namespace: Option<String>,
    /// Erase the key from the whole history of every branch instead (rewrites commit ids).
    pub purge: bool,
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

/// What `forget` did.
#[derive(Debug, Clone, Serialize)]
pub struct ForgetOutcome {
    /// Always true (a missing key is an error).
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
    /// The key as `ns:path`.
    #[serde(skip)]
    pub full_key: String,
    /// The commit of `commit_hash`.
    #[serde(skip)]
    pub commit: ObjectId,
}

impl Outcome for ForgetOutcome {}

impl Memoir {
    /// Removes the memory at `req.key` on the branch of `who` in a new commit, or with
    /// `req.purge` erases the key from every commit of every branch and removes what became
    /// unreachable (and the search index, which holds contents). A key missing on that branch
    /// is exit 2, and nothing changes.
    pub fn forget(&self, req: &ForgetRequest, who: &WriteAs) -> MemoirResult<ForgetOutcome> {
        let named = NamedKey::parse(&req.key, req.namespace.as_deref())?;
        let repo = self.open_repo()?;
        let target = write_target(&repo, who.branch.as_deref())?;
        let root = repo.root_of(&target.base)?;
        let (key, id) = named.resolve(|k| Ok(repo.tree().get(&root, &k.encode())?))?;
        if id.is_none() {
            return Err(MemoirError::not_found(format!(
                "memory '{key}' not found on {}; nothing to forget",
                target.branch
            )));
        }
        if req.purge {
            let report = repo.purge(&key.encode())?;
            let tip = repo.branch_tip(&target.branch)?;
            drop(repo);
            // The search index holds contents verbatim: it goes too (rebuilt on the next
            // search).
            crate::recall::remove_cache(self.path())?;
            let message = format!(
                "Purged {} from {}: {} commits rewritten, {} refs moved, {} objects removed",
                key.path(),
                key.namespace(),
                report.commits_rewritten,
                report.refs_moved,
                report.gc.objects_removed
            );
            return Ok(ForgetOutcome {
                success: true,
                key: key.path().to_string(),
                namespace: key.namespace().to_string(),
                commit_hash: tip.to_hex(),
                message,
                purged: Some(PurgeCounts {
                    commits_with_key: report.commits_with_key,
                    commits_rewritten: report.commits_rewritten,
                    refs_moved: report.refs_moved,
                    objects_removed: report.gc.objects_removed,
                    bytes_removed: report.gc.bytes_removed,
                }),
                full_key: key.to_string(),
                commit: tip,
            });
        }
        let message = format!("Delete {} from {}", key.path(), key.namespace());
        let (id, _) = commit_to(
            &repo,
            &target,
            vec![Edit::Delete(key.encode())],
            &self.signature(who),
            &message,
        )?;
        drop(repo);
        Ok(ForgetOutcome {
            success: true,
            key: key.path().to_string(),
            namespace: key.namespace().to_string(),
            commit_hash: id.to_hex(),
            message,
            purged: None,
            full_key: key.to_string(),
            commit: id,
        })
    }
}
