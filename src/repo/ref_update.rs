//! Ref moves made as one. Every ref this layer moves goes through [`Repo::update_refs`]:
//! it checks what the moves name, moves them all or none in one store transaction (logged
//! with one message), describes `HEAD` anew for the cached head, and makes them durable.
//! Callers write and flush the objects a move names first.

use super::remote::tracking_ref;
use super::revision::validate_new_branch_name;
use super::{branch_ref, Head, Repo, RepoError, RepoResult, BRANCH_PREFIX, HEAD, SYMBOLIC};
use crate::object::ObjectId;
use crate::store::{ObjectStore, RefMove, RefStore};

/// Ref moves to make together ([`Repo::update_refs`]).
#[derive(Debug, Clone, Default)]
pub struct RefUpdate {
    planned: Vec<Planned>,
    message: Option<String>,
}

#[derive(Debug, Clone)]
enum Planned {
    /// Ref `name` from `from` to `to` (`None`: absent).
    Ref {
        name: String,
        from: Option<ObjectId>,
        to: Option<ObjectId>,
    },
    /// `HEAD`, from whatever it is when the update is made.
    Head(Head),
    /// A remote-tracking ref, from whatever it is when the update is made.
    Tracking { name: String, to: Option<ObjectId> },
}

impl RefUpdate {
    /// An update logged with the message the store's ref note holds.
    pub fn new() -> RefUpdate {
        RefUpdate::default()
    }

    /// An update logged with `message` (`branch: created x`).
    pub fn logged_as(message: impl Into<String>) -> RefUpdate {
        RefUpdate {
            planned: Vec::new(),
            message: Some(message.into()),
        }
    }

    /// Creates branch `name` at `at`; it must not exist ([`RepoError::BranchExists`]).
    pub fn create_branch(&mut self, name: &str, at: ObjectId) -> &mut Self {
        self.move_ref(branch_ref(name), None, Some(at))
    }

    /// Moves branch `name` from `from` (its tip when the caller looked) to `to`.
    pub fn move_branch(&mut self, name: &str, from: ObjectId, to: ObjectId) -> &mut Self {
        self.move_ref(branch_ref(name), Some(from), Some(to))
    }

    /// Deletes branch `name`, whose tip must still be `tip`. The branch `HEAD` is on cannot
    /// be deleted ([`RepoError::CurrentBranch`]).
    pub fn delete_branch(&mut self, name: &str, tip: ObjectId) -> &mut Self {
        self.move_ref(branch_ref(name), Some(tip), None)
    }

    /// Moves ref `name` (a full name, `refs/heads/main`) by compare-and-swap.
    pub fn move_ref(
        &mut self,
        name: String,
        from: Option<ObjectId>,
        to: Option<ObjectId>,
    ) -> &mut Self {
        self.planned.push(Planned::Ref { name, from, to });
        self
    }

    /// Points `HEAD` at a branch (which must exist, or be created by this update) or at a
    /// commit.
    pub fn set_head(&mut self, head: Head) -> &mut Self {
        self.planned.push(Planned::Head(head));
        self
    }

    /// Sets remote `remote`'s tracking ref of `branch` to `to` (`None`: removes it).
    pub fn set_tracking(&mut self, remote: &str, branch: &str, to: Option<ObjectId>) -> &mut Self {
        self.planned.push(Planned::Tracking {
            name: tracking_ref(remote, branch),
            to,
        });
        self
    }

    /// Whether the update moves nothing.
    pub fn is_empty(&self) -> bool {
        self.planned.is_empty()
    }

    /// Whether the update creates branch `name`.
    fn creates(&self, branch: &str) -> bool {
        let r = branch_ref(branch);
        self.planned
            .iter()
            .any(|p| matches!(p, Planned::Ref { name, from: None, to: Some(_) } if *name == r))
    }

    /// Whether the update moves `HEAD` off branch `branch`.
    fn moves_head_off(&self, branch: &str) -> bool {
        self.planned
            .iter()
            .any(|p| matches!(p, Planned::Head(h) if *h != Head::Branch(branch.to_string())))
    }
}

/// One checked move: the ref, its value now and after.
type Checked = (String, Option<Vec<u8>>, Option<Vec<u8>>);

impl Repo {
    /// Makes `update`, all or none: the commits it names must be stored, a new branch's
    /// name allowed, and every ref still where the caller saw it; otherwise nothing moves
    /// and the error says why ([`RepoError::BranchExists`], [`RepoError::BranchNotFound`],
    /// [`RepoError::RefMoved`]). The moves are flushed before this returns.
    pub fn update_refs(&self, update: &RefUpdate) -> RepoResult<()> {
        let mut checked: Vec<Checked> = Vec::with_capacity(update.planned.len());
        for p in &update.planned {
            checked.push(match p {
                Planned::Ref { name, from, to } => self.check_ref_move(update, name, from, to)?,
                Planned::Head(head) => self.check_head_move(update, head)?,
                Planned::Tracking { name, to } => {
                    let old = self.store.get_ref(name)?;
                    let new = to.map(|c| c.as_bytes().to_vec());
                    if old == new {
                        continue;
                    }
                    (name.clone(), old, new)
                }
            });
        }
        if checked.is_empty() {
            return Ok(());
        }
        if let Some(m) = &update.message {
            self.store.set_ref_message(m.clone());
        }
        let moves: Vec<RefMove<'_>> = checked
            .iter()
            .map(|(name, old, new)| RefMove {
                name,
                expected: old.as_deref(),
                new: new.as_deref(),
            })
            .collect();
        if let Err(name) = self.store.cas_refs(&moves)? {
            return Err(self.mismatch(update, name)?);
        }
        self.note_head();
        self.store.flush()?;
        Ok(())
    }

    fn check_ref_move(
        &self,
        update: &RefUpdate,
        name: &str,
        from: &Option<ObjectId>,
        to: &Option<ObjectId>,
    ) -> RepoResult<Checked> {
        let branch = name.strip_prefix(BRANCH_PREFIX);
        if let (Some(b), None) = (branch, from) {
            validate_new_branch_name(b)?;
        }
        if let Some(c) = to {
            self.read_commit(c)?;
        }
        if let (Some(b), None) = (branch, to) {
            if self.head()? == Head::Branch(b.to_string()) && !update.moves_head_off(b) {
                return Err(RepoError::CurrentBranch(b.to_string()));
            }
        }
        let bytes = |id: &Option<ObjectId>| id.map(|c| c.as_bytes().to_vec());
        Ok((name.to_string(), bytes(from), bytes(to)))
    }

    fn check_head_move(&self, update: &RefUpdate, head: &Head) -> RepoResult<Checked> {
        let value = match head {
            Head::Branch(b) => {
                if !update.creates(b) {
                    self.branch_tip(b)?;
                }
                format!("{SYMBOLIC}{BRANCH_PREFIX}{b}").into_bytes()
            }
            Head::Detached(id) => {
                self.read_commit(id)?;
                id.as_bytes().to_vec()
            }
        };
        Ok((HEAD.to_string(), self.store.get_ref(HEAD)?, Some(value)))
    }

    /// Why the move of ref `name` found it elsewhere than expected.
    fn mismatch(&self, update: &RefUpdate, name: String) -> RepoResult<RepoError> {
        let planned_from = update.planned.iter().find_map(|p| match p {
            Planned::Ref { name: n, from, .. } if *n == name => Some(*from),
            _ => None,
        });
        let branch = name.strip_prefix(BRANCH_PREFIX).map(str::to_string);
        let now = self.store.get_ref(&name)?;
        Ok(match (branch, planned_from, now) {
            (Some(b), Some(None), Some(_)) => RepoError::BranchExists(b),
            (Some(b), Some(Some(_)), None) => RepoError::BranchNotFound(b),
            _ => RepoError::RefMoved(name),
        })
    }
}
