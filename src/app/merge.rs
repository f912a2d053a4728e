//! `merge`: bring another branch's (or any revision's) memories into a branch, by
//! fast-forward or a three-way merge whose conflicts a strategy settles or which are reported
//! without committing anything (exit 4).

use serde::Serialize;

use crate::key::split_encoded;
use crate::memory::{read_record, union as record_union};
use crate::object::ObjectId;
use crate::repo::{Head, MergeKind, Repo, Strategy, ValueUnion};

use super::ids::hex_opt;
use super::{exit, Memoir, MemoirError, MemoirResult, Outcome, WriteAs};

/// How conflicting keys are settled (serde and JSON Schema use the lowercase names).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum MergeStrategy {
    /// Keep the destination's value.
    Ours,
    /// Same as ours.
    Skip,
    /// Take the source's value.
    Theirs,
    /// The union of both records' facet entries (ordered by time, without repeats).
    Union,
}

impl MergeStrategy {
    /// `ours`, `skip`, `theirs` or `union`.
    pub fn name(self) -> &'static str {
        match self {
            MergeStrategy::Ours => "ours",
            MergeStrategy::Skip => "skip",
            MergeStrategy::Theirs => "theirs",
            MergeStrategy::Union => "union",
        }
    }
}

/// What to merge, where.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeRequest {
    /// The branch or revision merged in.
    pub source: String,
    /// The branch merged into (which must exist) [default: the branch HEAD is on].
    pub into: Option<String>,
    /// How conflicts are settled; none: any conflict is reported and nothing is committed.
    pub strategy: Option<MergeStrategy>,
    /// Refuse anything but a fast-forward (exit 6 when the histories have diverged).
    pub ff_only: bool,
}

/// What a merge did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeResultKind {
    /// The source was already contained: nothing changed.
    UpToDate,
    /// The branch moved to the source.
    FastForward,
    /// A merge commit was recorded.
    Merge,
    /// Unresolved conflicts: nothing was committed.
    Conflicted,
}

/// What `merge` did.
#[derive(Debug, Clone, Serialize)]
pub struct MergeOutcome {
    /// False when conflicts were left unresolved (exit 4).
    pub success: bool,
    /// The source as given.
    pub source_branch: String,
    /// The branch merged into.
    pub target_branch: String,
    /// The conflicting keys (`ns:path`), settled by the strategy or not.
    pub conflicts: Vec<String>,
    /// The strategy's name, or `none`.
    pub strategy: &'static str,
    /// What happened.
    pub kind: MergeResultKind,
    /// The merge commit, or the commit fast-forwarded to.
    #[serde(rename = "commit_hash", serialize_with = "hex_opt")]
    pub commit: Option<ObjectId>,
    /// What happened, in one line.
    pub message: String,
}

impl Outcome for MergeOutcome {
    crate::outcome_json!();

    fn exit_code(&self) -> u8 {
        match self.kind {
            MergeResultKind::Conflicted => exit::CONFLICT,
            _ => exit::OK,
        }
    }

    fn error_message(&self) -> Option<String> {
        Some(self.message.clone())
    }
}

/// Record union for [`MergeStrategy::Union`]: writes the combined record, returns its id.
struct RecordUnion<'a> {
    repo: &'a Repo,
}

impl ValueUnion for RecordUnion<'_> {
    fn union(
        &self,
        _key: &[u8],
        _base: Option<&ObjectId>,
        ours: Option<&ObjectId>,
        theirs: Option<&ObjectId>,
    ) -> Result<Option<ObjectId>, String> {
        let read = |id: &ObjectId| read_record(self.repo.objects(), id).map_err(|e| e.to_string());
        match (ours, theirs) {
            (Some(o), Some(t)) => {
                let merged = record_union(&read(o)?, &read(t)?);
                let blob = merged.to_blob().map_err(|e| e.to_string())?;
                self.repo
                    .objects()
                    .write(&blob)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            // A deletion against a change: keep the side that still has a record.
            (Some(o), None) => Ok(Some(*o)),
            (None, Some(t)) => Ok(Some(*t)),
            (None, None) => Ok(None),
        }
    }
}

impl Memoir {
    /// Merges `req.source` into `req.into` (default: the branch HEAD is on; a detached HEAD
    /// is exit 1; a missing branch exit 2). A branch that contains the source is up to date;
    /// one behind it is fast-forwarded; otherwise a merge commit with two parents is
    /// recorded, signed by `who` (whose `branch` is not used: the destination is
    /// `req.into`). Conflicts a strategy does not settle are returned with nothing committed
    /// (the outcome's exit code is 4).
    pub fn merge(&self, req: &MergeRequest, who: &WriteAs) -> MemoirResult<MergeOutcome> {
        who.check()?;
        let tx = self.start_transaction_on(who, |repo| match &req.into {
            Some(b) => Ok(b.clone()),
            None => match repo.head()? {
                Head::Branch(b) => Ok(b),
                Head::Detached(_) => Err(MemoirError::invalid(
                    "HEAD is detached; name the destination with --into",
                )),
            },
        })?;
        let into = tx.branch().to_string();
        let source = self.resolve_rev(tx.repo(), &req.source)?;
        let union = RecordUnion { repo: tx.repo() };
        let strategy = match req.strategy {
            None => Strategy::Fail,
            Some(MergeStrategy::Ours | MergeStrategy::Skip) => Strategy::Ours,
            Some(MergeStrategy::Theirs) => Strategy::Theirs,
            Some(MergeStrategy::Union) => Strategy::Union(&union),
        };
        let message = format!("Merge branch '{}' into {}", req.source, into);
        let strategy = (!req.ff_only).then_some(&strategy);
        let plan = tx.repo().plan_merge(&tx.base(), &source, strategy)?;
        let outcome = tx.finish_merge(plan, &source, &message)?;
        let conflicts: Vec<String> = outcome
            .conflicts
            .iter()
            .map(|c| {
                let (ns, path) = split_encoded(&c.key);
                format!("{ns}:{path}")
            })
            .collect();
        let (kind, summary) = match outcome.kind {
            MergeKind::UpToDate => (
                MergeResultKind::UpToDate,
                format!("Already up to date with '{}'", req.source),
            ),
            MergeKind::FastForward => (
                MergeResultKind::FastForward,
                format!("Fast-forwarded {into} to '{}'", req.source),
            ),
            MergeKind::Merged => (MergeResultKind::Merge, message),
            MergeKind::Conflicted => (
                MergeResultKind::Conflicted,
                format!(
                    "{} conflicting key(s); nothing merged (choose a strategy with -S)",
                    conflicts.len()
                ),
            ),
        };
        Ok(MergeOutcome {
            success: kind != MergeResultKind::Conflicted,
            source_branch: req.source.clone(),
            target_branch: into,
            conflicts,
            strategy: req.strategy.map_or("none", MergeStrategy::name),
            kind,
            commit: outcome.commit,
            message: summary,
        })
    }
}
