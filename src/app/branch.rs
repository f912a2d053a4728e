//! Branches: list them, create one, delete one; and `checkout`, which moves HEAD to a branch
//! (optionally created first) or detaches it at a commit.

use serde::Serialize;

use crate::object::ObjectId;
use crate::repo::{checkout_message, Head, RefUpdate, Repo, RepoError};

use super::ids::hex;
use super::store_git::update_mirror;
use super::{Memoir, MemoirError, MemoirResult, Outcome};

/// The branches of a store.
#[derive(Debug, Clone, Serialize)]
pub struct BranchListOutcome {
    /// Every branch, sorted by name.
    pub branches: Vec<String>,
    /// The branch HEAD is on (null when detached).
    pub current: Option<String>,
    /// HEAD's commit.
    #[serde(skip)]
    pub head: ObjectId,
}

impl Outcome for BranchListOutcome {
    crate::outcome_json!();
}

/// A branch created.
#[derive(Debug, Clone, Serialize)]
pub struct BranchCreateOutcome {
    /// Always true.
    pub success: bool,
    /// The new branch.
    pub branch: String,
    /// The commit it starts at.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// `Created branch '<name>' at <id8>`.
    pub message: String,
}

impl Outcome for BranchCreateOutcome {
    crate::outcome_json!();
}

/// A branch deleted.
#[derive(Debug, Clone, Serialize)]
pub struct BranchDeleteOutcome {
    /// Always true.
    pub success: bool,
    /// The branch deleted.
    pub deleted: String,
    /// The commit it pointed at.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// `Deleted branch '<name>' (was <id8>)`.
    pub message: String,
}

impl Outcome for BranchDeleteOutcome {
    crate::outcome_json!();
}

/// Where `checkout` moved HEAD.
#[derive(Debug, Clone, Serialize)]
pub struct CheckoutOutcome {
    /// Always true.
    pub success: bool,
    /// The branch HEAD is now on (null when detached).
    pub branch: Option<String>,
    /// HEAD's commit.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// Whether the branch was created.
    pub created: bool,
    /// Whether HEAD is detached.
    pub detached: bool,
    /// What happened, in one line.
    pub message: String,
}

impl Outcome for CheckoutOutcome {
    crate::outcome_json!();
}

impl Memoir {
    /// Every branch, and the one HEAD is on. The store's git mirror of its branches is
    /// brought up to date on the way (see `store_git`); it is derived, so a mirror that
    /// cannot be written (a read-only store) is left as it is.
    pub fn branches(&self) -> MemoirResult<BranchListOutcome> {
        self.reading(|repo| {
            let current = match repo.head()? {
                Head::Branch(b) => Some(b),
                Head::Detached(_) => None,
            };
            let branches = repo.branches()?;
            let _ = self.update_git_mirror(repo, &branches);
            Ok(BranchListOutcome {
                branches: branches.into_iter().map(|(n, _)| n).collect(),
                current,
                head: repo.head_commit()?,
            })
        })
    }

    /// Writes the git mirror of `branches` (name and tip) into the store's `.git`; a store
    /// without `.git/objects` has no mirror to keep.
    fn update_git_mirror(&self, repo: &Repo, branches: &[(String, ObjectId)]) -> MemoirResult<()> {
        if !self.path().join(".git/objects").is_dir() {
            return Ok(());
        }
        let tips: Vec<ObjectId> = branches.iter().map(|b| b.1).collect();
        let (shared, past) = repo.past_shared(&tips)?;
        update_mirror(self.path(), branches, shared, &past)
            .map_err(|e| MemoirError::invalid(format!("the store's git mirror: {e}")))
    }

    /// Creates branch `name` at revision `from` (default HEAD). An existing branch or a bad
    /// name is exit 1, an unknown revision exit 2.
    pub fn create_branch(
        &self,
        name: &str,
        from: Option<&str>,
    ) -> MemoirResult<BranchCreateOutcome> {
        let repo = self.open_repo()?;
        let at = match from {
            Some(rev) => self.resolve_rev(&repo, rev)?,
            None => repo.head_commit()?,
        };
        repo.create_branch(name, &at)?;
        Ok(BranchCreateOutcome {
            success: true,
            branch: name.to_string(),
            commit: at,
            message: format!("Created branch '{name}' at {}", at.short(8)),
        })
    }

    /// Deletes branch `name` (missing: exit 2). The branch HEAD is on is refused (exit 1),
    /// and so, unless `force`, is a branch whose tip HEAD does not contain (exit 1).
    pub fn delete_branch(&self, name: &str, force: bool) -> MemoirResult<BranchDeleteOutcome> {
        let repo = self.open_repo()?;
        let tip = match repo.branch_tip(name) {
            Err(RepoError::BranchNotFound(_)) => {
                return Err(MemoirError::not_found(format!(
                    "branch '{name}' not found{}",
                    super::did_you_mean(repo.nearest_branch(name)?)
                )))
            }
            other => other?,
        };
        if repo.head()? == Head::Branch(name.to_string()) {
            return Err(RepoError::CurrentBranch(name.to_string()).into());
        }
        if !force && !repo.is_ancestor(&tip, &repo.head_commit()?)? {
            return Err(MemoirError::invalid(format!(
                "branch '{name}' is not merged into HEAD; use -D to delete it anyway"
            )));
        }
        repo.delete_branch(name, &tip)?;
        Ok(BranchDeleteOutcome {
            success: true,
            deleted: name.to_string(),
            commit: tip,
            message: format!("Deleted branch '{name}' (was {})", tip.short(8)),
        })
    }

    /// Moves HEAD to branch `target`; with `create`, creates it at HEAD first (an existing
    /// branch is exit 1). A target that is not a branch is resolved as a revision and HEAD
    /// is detached there (unknown: exit 2).
    pub fn checkout(&self, target: &str, create: bool) -> MemoirResult<CheckoutOutcome> {
        let repo = self.open_repo()?;
        let (branch, commit) = if create {
            (Some(target.to_string()), repo.head_commit()?)
        } else {
            match repo.branch_tip(target) {
                Ok(tip) => (Some(target.to_string()), tip),
                Err(RepoError::BranchNotFound(_)) => (None, self.resolve_rev(&repo, target)?),
                Err(e) => return Err(e.into()),
            }
        };
        let head = branch.clone().map_or(Head::Detached(commit), Head::Branch);
        let mut update = RefUpdate::logged_as(checkout_message(&head));
        if create {
            update.create_branch(target, commit);
        }
        repo.update_refs(update.set_head(head))?;
        let message = match &branch {
            Some(b) if create => format!("Switched to a new branch '{b}'"),
            Some(b) => format!("Switched to branch '{b}'"),
            None => format!("HEAD is now detached at {}", commit.short(8)),
        };
        Ok(CheckoutOutcome {
            success: true,
            detached: branch.is_none(),
            branch,
            commit,
            created: create,
            message,
        })
    }
}
