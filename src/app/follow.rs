//! Memory branches that follow code branches: the per-store switch (`branch-match on|off`),
//! making the checked-out memory branch the code repository's current branch (created from
//! `main` when missing), and the state of each memory branch against `main` and its code
//! branch (unmerged, promoted, merged, stale).

use std::fs;
use std::io::Write;

use serde::Serialize;

use crate::repo::revision::validate_new_branch_name;
use crate::repo::{Head, RefUpdate, RepoError};

use super::code_repo::CodeRepo;
use super::sync_branch::pending_promotions;
use super::{Memoir, MemoirError, MemoirResult, Outcome};

/// The file in a store's directory that turns following off (`off`); absent or anything else
/// is on. Not history: a setting of this copy of the store.
pub const BRANCH_MATCH_FILE: &str = "branch-match";

/// The branch memory branches fork from and are promoted into.
pub const MAIN_BRANCH: &str = "main";

/// Days without a commit after which a promoted memory branch, or one whose code branch is
/// gone, is stale.
pub const STALE_DAYS: i64 = 60;

/// Days within which a memory branch's last commit must fall for its unmerged work to be
/// mentioned.
pub const ACTIVE_DAYS: i64 = 30;

/// Where following left HEAD.
#[derive(Debug, Clone, Serialize)]
pub struct FollowOutcome {
    /// Always true.
    pub success: bool,
    /// The memory branch HEAD is on now.
    pub branch: String,
    /// The branch HEAD was on before (null when detached).
    pub previous: Option<String>,
    /// Whether HEAD moved.
    pub switched: bool,
    /// Whether the branch was created (from `main`).
    pub created: bool,
    /// What happened, in one line.
    pub message: String,
}

impl Outcome for FollowOutcome {
    crate::outcome_json!();
}

/// One memory branch other than `main`, against `main` and its code branch.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryBranch {
    /// The branch.
    pub name: String,
    /// Commits on it that `main` does not have.
    pub ahead: u64,
    /// Its last commit's time, unix seconds.
    pub last_commit: i64,
    /// Days since then (whole days).
    pub age_days: i64,
    /// Whether the code repository has a branch of that name (null outside one).
    pub code_branch_exists: Option<bool>,
    /// Whether that code branch was merged into the code repository's `main` with a merge
    /// commit (null when unknown).
    pub code_merged: Option<bool>,
    /// Keys of namespace `default` that `sync-branch` would add or update on `main`.
    pub pending_keys: usize,
    /// Work `main` lacks, recent (within 30 days) and whose code branch still exists.
    pub unmerged: bool,
    /// Inactive for 60 days and either promoted (nothing pending) or its code branch gone.
    pub stale: bool,
    /// Whether HEAD is on it.
    pub current: bool,
}

/// `branch-match`'s answer: the switch, the branches HEAD and the code repository are on,
/// and the memory branches.
#[derive(Debug, Clone, Serialize)]
pub struct BranchMatchOutcome {
    /// Always true.
    pub success: bool,
    /// Whether the memory branch follows the code branch.
    pub enabled: bool,
    /// The memory branch HEAD is on (null when detached).
    pub memory_branch: Option<String>,
    /// The code repository's current branch (null outside one, or detached).
    pub code_branch: Option<String>,
    /// Whether the two agree.
    pub matched: bool,
    /// The memory branches other than `main`, sorted by name.
    pub branches: Vec<MemoryBranch>,
    /// What happened or holds, in one line.
    pub message: String,
}

impl Outcome for BranchMatchOutcome {
    crate::outcome_json!();
}

impl Memoir {
    /// Whether this store's memory branch follows the code branch (on unless
    /// [`BRANCH_MATCH_FILE`] says `off`).
    pub fn branch_match_enabled(&self) -> bool {
        fs::read_to_string(self.path().join(BRANCH_MATCH_FILE)).map_or(true, |s| s.trim() != "off")
    }

    /// Turns following on or off for this store (written whole: a temporary file renamed
    /// over it). The store must exist (exit 3).
    pub fn set_branch_match(&self, on: bool) -> MemoirResult<()> {
        self.check()?;
        let path = self.path().join(BRANCH_MATCH_FILE);
        let tmp = self
            .path()
            .join(format!("{BRANCH_MATCH_FILE}.tmp.{}", std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(if on { b"on\n" } else { b"off\n" })?;
            f.sync_all()?;
            fs::rename(&tmp, &path)
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            MemoirError::invalid(format!("cannot write {}: {e}", path.display()))
        })
    }

    /// Puts HEAD on memory branch `code_branch`, creating it from `main` (else from HEAD)
    /// when missing. HEAD already there moves nothing and takes no lock. A name memoir
    /// refuses for a branch is exit 1.
    pub fn follow_code_branch(&self, code_branch: &str) -> MemoirResult<FollowOutcome> {
        let head = self.reading(|repo| Ok(repo.head()?))?;
        let previous = match &head {
            Head::Branch(b) => Some(b.clone()),
            Head::Detached(_) => None,
        };
        if previous.as_deref() == Some(code_branch) {
            return Ok(FollowOutcome {
                success: true,
                branch: code_branch.to_string(),
                previous,
                switched: false,
                created: false,
                message: format!("Already on memory branch '{code_branch}'"),
            });
        }
        let repo = self.open_repo()?;
        let mut update = RefUpdate::logged_as(format!("follow: {code_branch}"));
        let created = match repo.branch_tip(code_branch) {
            Ok(_) => false,
            Err(RepoError::BranchNotFound(_)) => {
                validate_new_branch_name(code_branch)?;
                let from = match repo.branch_tip(MAIN_BRANCH) {
                    Ok(tip) => tip,
                    Err(RepoError::BranchNotFound(_)) => repo.head_commit()?,
                    Err(e) => return Err(e.into()),
                };
                update.create_branch(code_branch, from);
                true
            }
            Err(e) => return Err(e.into()),
        };
        repo.update_refs(update.set_head(Head::Branch(code_branch.to_string())))?;
        let message = if created {
            format!("Switched to a new memory branch '{code_branch}' (from {MAIN_BRANCH})")
        } else {
            format!("Switched to memory branch '{code_branch}'")
        };
        Ok(FollowOutcome {
            success: true,
            branch: code_branch.to_string(),
            previous,
            switched: true,
            created,
            message,
        })
    }

    /// The memory branches other than `main`, against `main` (commits ahead, keys pending
    /// promotion) and, given the code repository, their code branches; `now` in unix
    /// seconds. Whether a code branch was merged is asked of `git` only for a branch with
    /// work pending, and only when `check_merged`.
    pub fn memory_branches(
        &self,
        code: Option<&CodeRepo>,
        now: i64,
        check_merged: bool,
    ) -> MemoirResult<Vec<MemoryBranch>> {
        self.reading(|repo| {
            let current = match repo.head()? {
                Head::Branch(b) => Some(b),
                Head::Detached(_) => None,
            };
            let branches = repo.branches()?;
            let main = branches.iter().find(|(n, _)| n == MAIN_BRANCH).map(|b| b.1);
            let main_root = main.map(|m| repo.root_of(&m)).transpose()?;
            let main_count = main.map(|m| repo.count_reachable(&[m])).transpose()?;
            let mut out = Vec::new();
            for (name, tip) in &branches {
                if name == MAIN_BRANCH {
                    continue;
                }
                let commit = repo.read_commit(tip)?;
                let ahead = match (main, main_count) {
                    (Some(m), Some(c)) => repo.count_reachable(&[*tip, m])?.saturating_sub(c),
                    _ => repo.count_reachable(&[*tip])?,
                };
                let pending_keys = match &main_root {
                    Some(r) => pending_promotions(repo, r, &commit.root, None)?.len(),
                    None => 0,
                };
                let age_days = (now - commit.timestamp).max(0) / 86_400;
                let code_branch_exists = code.map(|c| c.has_branch(name));
                let code_merged = match code {
                    Some(c)
                        if check_merged && pending_keys > 0 && code_branch_exists == Some(true) =>
                    {
                        c.merged_into(name, MAIN_BRANCH)
                    }
                    _ => None,
                };
                let unmerged = ahead > 0
                    && pending_keys > 0
                    && age_days < ACTIVE_DAYS
                    && code_branch_exists != Some(false);
                let stale = age_days >= STALE_DAYS
                    && (pending_keys == 0 || code_branch_exists == Some(false));
                out.push(MemoryBranch {
                    name: name.clone(),
                    ahead,
                    last_commit: commit.timestamp,
                    age_days,
                    code_branch_exists,
                    code_merged,
                    pending_keys,
                    unmerged,
                    stale,
                    current: current.as_deref() == Some(name.as_str()),
                });
            }
            Ok(out)
        })
    }

    /// `branch-match status`: the switch, HEAD's branch, the code branch and the memory
    /// branches.
    pub fn branch_match_status(
        &self,
        code: Option<&CodeRepo>,
        now: i64,
    ) -> MemoirResult<BranchMatchOutcome> {
        let enabled = self.branch_match_enabled();
        let memory_branch = self.reading(|repo| {
            Ok(match repo.head()? {
                Head::Branch(b) => Some(b),
                Head::Detached(_) => None,
            })
        })?;
        let code_branch = code.and_then(CodeRepo::current_branch);
        let matched = code_branch.is_some() && code_branch == memory_branch;
        let branches = self.memory_branches(code, now, true)?;
        let message = match (&code_branch, enabled) {
            (None, _) => "Not in a code repository on a branch; nothing to follow".to_string(),
            (Some(c), true) if matched => format!("Memory branch follows code branch '{c}'"),
            (Some(c), true) => format!(
                "Memory branch '{}' will follow code branch '{c}' at the next hook or \
                 `memoir branch-match follow`",
                memory_branch.as_deref().unwrap_or("(detached)")
            ),
            (Some(_), false) => "Following is off for this store".to_string(),
        };
        Ok(BranchMatchOutcome {
            success: true,
            enabled,
            memory_branch,
            code_branch,
            matched,
            branches,
            message,
        })
    }
}
