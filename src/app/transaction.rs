//! One write operation of [`Memoir`]: it opens the store, picks the branch the write goes to
//! and the commit it starts from, and [`Transaction::finish`] records its edits as one commit
//! and moves that branch. Every write goes through one, so the commit, the branch's creation
//! and the ref move happen in one place; a transaction dropped unfinished writes nothing.

use crate::object::ObjectId;
use crate::prolly::Edit;
use crate::repo::revision::{format_iso8601, validate_branch_name, validate_new_branch_name};
use crate::repo::{Head, Repo, RepoError};

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
        let id = self.repo.commit(&self.branch, edits, &sig, message)?;
        // A store made before stores had one gets its `.git` (for host plugins) now; the
        // write succeeded whether or not it can be made.
        let _ = super::ensure_store_git(self.app.path());
        let committed = Committed {
            id,
            date: format_iso8601(sig.timestamp),
            created,
        };
        Ok((committed, self.repo))
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
