//! `merge_preview`: what merging a source into a branch would do, computed without writing
//! anything: up to date, a fast-forward, or a three-way merge with the keys it would change
//! and the conflicting keys (with the base, our and their records), as data.

use serde::Serialize;

use crate::memory::Record;
use crate::object::ObjectId;
use crate::repo::{Head, KeyChange};

use super::history::{diff_entry, record_at, DiffEntry};
use super::ids::{hex, hex_opt, record_opt};
use super::{Memoir, MemoirError, MemoirResult, MergeResultKind, Outcome};

/// One key changed differently on both sides since the merge base.
#[derive(Debug, Clone, Serialize)]
pub struct PreviewConflict {
    /// The key's namespace.
    pub namespace: String,
    /// The key's path.
    pub key: String,
    /// `ns:path`.
    pub full_key: String,
    /// The record at the merge base (null: absent).
    #[serde(serialize_with = "record_opt")]
    pub base: Option<Record>,
    /// The record on the destination branch (null: deleted or never added).
    #[serde(serialize_with = "record_opt")]
    pub ours: Option<Record>,
    /// The record on the merged-in side (null: deleted or never added).
    #[serde(serialize_with = "record_opt")]
    pub theirs: Option<Record>,
}

/// What a merge would do.
#[derive(Debug, Clone, Serialize)]
pub struct MergePreviewOutcome {
    /// Always true (a preview with conflicts is still a successful preview).
    pub success: bool,
    /// The source as given.
    pub source_branch: String,
    /// The branch that would be merged into.
    pub target_branch: String,
    /// The source's commit.
    #[serde(serialize_with = "hex")]
    pub source: ObjectId,
    /// The destination's tip.
    #[serde(serialize_with = "hex")]
    pub target: ObjectId,
    /// Their merge base (null for unrelated histories).
    #[serde(serialize_with = "hex_opt")]
    pub base: Option<ObjectId>,
    /// What a merge without a strategy would do: `up_to_date`, `fast_forward`, `merge` or
    /// `conflicted`.
    pub kind: MergeResultKind,
    /// The keys the merge would change on the destination without conflict, in key order.
    pub changes: Vec<DiffEntry>,
    /// The keys changed differently on both sides, in key order.
    pub conflicts: Vec<PreviewConflict>,
}

impl Outcome for MergePreviewOutcome {
    crate::outcome_json!();
}

impl Memoir {
    /// What merging `source` (a branch or any revision) into `into` (default: the branch
    /// HEAD is on) would change, and which keys would conflict; nothing is written.
    pub fn merge_preview(
        &self,
        source: &str,
        into: Option<&str>,
    ) -> MemoirResult<MergePreviewOutcome> {
        let repo = self.open_repo()?;
        let into = match into {
            Some(b) => {
                repo.branch_tip(b)?;
                b.to_string()
            }
            None => match repo.head()? {
                Head::Branch(b) => b,
                Head::Detached(_) => {
                    return Err(MemoirError::invalid(
                        "HEAD is detached; name the destination branch",
                    ))
                }
            },
        };
        let theirs = self.resolve_rev(&repo, source)?;
        let ours = repo.branch_tip(&into)?;
        let preview = |kind, base, changes, conflicts| MergePreviewOutcome {
            success: true,
            source_branch: source.to_string(),
            target_branch: into.clone(),
            source: theirs,
            target: ours,
            base,
            kind,
            changes,
            conflicts,
        };
        if repo.is_ancestor(&theirs, &ours)? {
            return Ok(preview(
                MergeResultKind::UpToDate,
                Some(theirs),
                Vec::new(),
                Vec::new(),
            ));
        }
        let ours_root = repo.root_of(&ours)?;
        let theirs_root = repo.root_of(&theirs)?;
        if repo.is_ancestor(&ours, &theirs)? {
            let changes = repo
                .diff(&ours_root, &theirs_root, None)?
                .into_iter()
                .map(|c| diff_entry(&repo, c, true, false, false))
                .collect::<MemoirResult<Vec<_>>>()?;
            return Ok(preview(
                MergeResultKind::FastForward,
                Some(ours),
                changes,
                Vec::new(),
            ));
        }
        let base = repo.merge_base(&ours, &theirs)?;
        let base_root = match &base {
            Some(b) => repo.root_of(b)?,
            None => repo.tree().empty()?,
        };
        let mut changes = Vec::new();
        let mut conflicts = Vec::new();
        for c in repo.diff(&base_root, &theirs_root, None)? {
            let mine = repo.tree().get(&ours_root, &c.key.encode())?;
            if mine == c.old {
                // Changed on their side only: taken as it is.
                let applied = KeyChange {
                    key: c.key.clone(),
                    old: mine,
                    new: c.new,
                };
                changes.push(diff_entry(&repo, applied, true, false, false)?);
            } else if mine != c.new {
                conflicts.push(PreviewConflict {
                    namespace: c.key.namespace().to_string(),
                    key: c.key.path().to_string(),
                    full_key: c.key.to_string(),
                    base: record_at(&repo, c.old.as_ref())?,
                    ours: record_at(&repo, mine.as_ref())?,
                    theirs: record_at(&repo, c.new.as_ref())?,
                });
            }
        }
        let kind = if conflicts.is_empty() {
            MergeResultKind::Merge
        } else {
            MergeResultKind::Conflicted
        };
        Ok(preview(kind, base, changes, conflicts))
    }
}
