//! One write operation of [`Memoir`]. A [`Transaction`] opens the store, picks the branch
//! the write goes to and the commit it starts from, and its `finish` records the edits (or a
//! merge) as one commit and moves that branch; a transaction dropped unfinished writes
//! nothing. A write that only moves refs (branches, `HEAD`, remote-tracking refs) states all
//! its moves in one [`RefUpdate`](crate::repo::RefUpdate), made all or none by
//! [`Repo::update_refs`], the one place the repository layer moves refs.

use crate::object::ObjectId;
use crate::prolly::Edit;
use crate::repo::revision::{format_iso8601, validate_branch_name, validate_new_branch_name};
use crate::repo::{Head, MergeOutcome, MergePlan, Repo, RepoError};

use super::{Memoir, MemoirError, MemoirResult, WriteAs};

/// A write in progress on one branch.
pub(crate) struct Transaction<'a> {
    app: &'a Memoir,
    who: &'a WriteAs,
    repo: Repo,
    branch: String,
    base: ObjectId,
    root: ObjectId,
    /// Whether the branch must be created (from `base`) when the write commits.
    creates_branch: bool,
}

/// What [`Transaction::finish`] recorded.
#[derive(Debug, Clone)]
pub(crate) struct Committed {
    pub id: ObjectId,
    /// The commit's date, ISO 8601.
    pub date: String,
    /// The branch this commit created, when it did.
    pub created: Option<CreatedBranch>,
}

/// A branch that a write created because `--branch` (or `MEMOIR_BRANCH`) named a missing
/// one, as the contract says writes do. A typo would do the same, so the write says so and
/// names the nearest existing branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedBranch {
    /// The new branch.
    pub name: String,
    /// Where it starts: the branch HEAD was on, or HEAD's short commit id when detached.
    pub from: String,
    /// The existing branch whose name is nearest, when one is close enough to be meant.
    pub nearest: Option<String>,
}

impl CreatedBranch {
    /// One line for people: "created branch 'sied' from main (did you mean 'side'?)".
    pub fn message(&self) -> String {
        let mut m = format!("created branch '{}' from {}", self.name, self.from);
        if let Some(n) = &self.nearest {
            m.push_str(&format!(" (did you mean '{n}'?)"));
        }
        m
    }
}

/// Serializes a created branch as the contract's `branch_created: true`.
pub(crate) fn created_as_true<S: serde::Serializer>(
    _: &Option<CreatedBranch>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_bool(true)
}

impl Memoir {
    /// Starts a write on `who`'s branch (`who.branch`, created from HEAD when it commits if it
    /// is missing), else on the branch HEAD is on (a detached HEAD is an error).
    pub(crate) fn start_transaction<'a>(
        &'a self,
        who: &'a WriteAs,
    ) -> MemoirResult<Transaction<'a>> {
        let repo = self.open_repo()?;
        let (branch, base, creates_branch) = write_target(&repo, who.branch.as_deref())?;
        self.transaction_at(who, repo, branch, base, creates_branch)
    }

    /// Starts a write on the existing branch `pick` names, whatever `who.branch` says (a
    /// merge's destination).
    pub(crate) fn start_transaction_on<'a>(
        &'a self,
        who: &'a WriteAs,
        pick: impl FnOnce(&Repo) -> MemoirResult<String>,
    ) -> MemoirResult<Transaction<'a>> {
        let repo = self.open_repo()?;
        let branch = pick(&repo)?;
        let base = repo.branch_tip(&branch)?;
        self.transaction_at(who, repo, branch, base, false)
    }

    fn transaction_at<'a>(
        &'a self,
        who: &'a WriteAs,
        repo: Repo,
        branch: String,
        base: ObjectId,
        creates_branch: bool,
    ) -> MemoirResult<Transaction<'a>> {
        let root = repo.root_of(&base)?;
        Ok(Transaction {
            app: self,
            who,
            repo,
            branch,
            base,
            root,
            creates_branch,
        })
    }
}

impl Transaction<'_> {
    /// The repository written.
    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    /// The branch written.
    pub fn branch(&self) -> &str {
        &self.branch
    }

    /// The commit the write starts from: the branch's tip (HEAD's commit for a new branch).
    pub fn base(&self) -> ObjectId {
        self.base
    }

    /// The tree root of [`Transaction::base`].
    pub fn root(&self) -> ObjectId {
        self.root
    }

    /// Ends the transaction without writing, keeping the repository open (for an operation
    /// that turns out to rewrite history instead).
    pub fn into_repo(self) -> Repo {
        self.repo
    }

    /// Records `edits` as one commit with `message` on the branch, creating the branch first
    /// when it is new, and closes the transaction.
    pub fn finish(self, edits: Vec<Edit>, message: &str) -> MemoirResult<Committed> {
        Ok(self.finish_keeping_repo(edits, message)?.0)
    }

    /// [`Transaction::finish`], handing back the repository for work that follows the commit
    /// (bringing a cache along).
    pub fn finish_keeping_repo(
        self,
        edits: Vec<Edit>,
        message: &str,
    ) -> MemoirResult<(Committed, Repo)> {
        let root = self.repo.tree().apply(&self.root, edits)?;
        let committed = self.record(root, vec![self.base], message)?;
        Ok((committed, self.repo))
    }

    /// Carries out a merge of commit `source` into the branch as `plan` says
    /// ([`Repo::plan_merge`] from [`Transaction::base`]): a fast-forward moves the branch, a
    /// merged tree is recorded as a commit with parents `[base, source]` and `message`.
    pub fn finish_merge(
        self,
        plan: MergePlan,
        source: &ObjectId,
        message: &str,
    ) -> MemoirResult<MergeOutcome> {
        let parents = vec![self.base, *source];
        self.repo
            .finish_merge(plan, &self.branch, &self.base, source, |root| {
                Ok::<_, MemoirError>(self.record(root, parents, message)?.id)
            })
    }

    /// Records tree `root` as a commit with `parents` and `message` on the branch, creating
    /// the branch first when it is new.
    fn record(
        &self,
        root: ObjectId,
        parents: Vec<ObjectId>,
        message: &str,
    ) -> MemoirResult<Committed> {
        let created = if self.creates_branch {
            let from = match self.repo.head()? {
                Head::Branch(b) => b,
                Head::Detached(id) => id.short(8),
            };
            let nearest = self.repo.nearest_branch(&self.branch)?;
            self.repo.create_branch(&self.branch, &self.base)?;
            Some(CreatedBranch {
                name: self.branch.clone(),
                from,
                nearest,
            })
        } else {
            None
        };
        let sig = self.app.signature(self.who);
        let id = self
            .repo
            .commit_tree(&self.branch, &self.base, root, parents, &sig, message)?;
        // A store made before stores had one gets its `.git` (for host plugins) now; the
        // write succeeded whether or not it can be made.
        let _ = super::ensure_store_git(self.app.path());
        Ok(Committed {
            id,
            date: format_iso8601(sig.timestamp),
            created,
        })
    }
}

/// The branch a write goes to, the commit it starts from, and whether the branch must be
/// created: `branch` (from HEAD if missing), else the branch HEAD is on.
fn write_target(repo: &Repo, branch: Option<&str>) -> MemoirResult<(String, ObjectId, bool)> {
    match branch {
        Some(b) => {
            validate_branch_name(b)?;
            match repo.branch_tip(b) {
                Ok(tip) => Ok((b.to_string(), tip, false)),
                Err(RepoError::BranchNotFound(_)) => {
                    validate_new_branch_name(b)?;
                    Ok((b.to_string(), repo.head_commit()?, true))
                }
                Err(e) => Err(e.into()),
            }
        }
        None => match repo.head()? {
            Head::Branch(b) => Ok((b.clone(), repo.branch_tip(&b)?, false)),
            Head::Detached(id) => Err(MemoirError::invalid(format!(
                "HEAD is detached at {}; check out a branch or pass --branch",
                id.short(8)
            ))),
        },
    }
}
