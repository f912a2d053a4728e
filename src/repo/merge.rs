//! Merging: fast-forwards, and three-way key-level merges against the merge base
//! ([`Repo::merge_base`]).
//!
//! A three-way merge compares the changes `base -> ours` and `base -> theirs` key by key
//! (computed as the tree diff `base -> theirs` plus a lookup in our tree of each key it
//! names, which is the same comparison at half the reads, and costs in proportion to their
//! changes only). A key changed on one side only takes that side's value; a key changed
//! identically on both sides is not a conflict; a key changed differently on both sides (modify/modify,
//! delete/modify, add/add with different values) is a [`Conflict`], settled by the
//! [`Strategy`] or reported as data without committing anything.

use std::sync::mpsc;

use super::ancestry::{best_common, positions, reaches};
use super::{RefUpdate, Repo, RepoError, RepoResult, Signature};
use crate::object::ObjectId;
use crate::prolly::{Change, Edit, IdSet, KeyRange};

/// Supplied by the memory layer: merges two versions of one key's value (for records: the
/// union of their facet entries), writing the merged value object and returning its id.
pub trait ValueUnion {
    /// The merged value of `key` (encoded) from its base, our and their value ids (`None` =
    /// absent on that side); `Ok(None)` deletes the key. An `Err` leaves the key as an
    /// unresolved conflict, with the message.
    fn union(
        &self,
        key: &[u8],
        base: Option<&ObjectId>,
        ours: Option<&ObjectId>,
        theirs: Option<&ObjectId>,
    ) -> Result<Option<ObjectId>, String>;
}

/// How conflicting keys are settled.
#[derive(Clone, Copy)]
pub enum Strategy<'a> {
    /// Any conflict aborts the merge: nothing is committed and the conflicts are returned.
    Fail,
    /// Keep the destination branch's value (the command line's `ours` and `skip`).
    Ours,
    /// Take the merged-in side's value.
    Theirs,
    /// Ask the memory layer to combine both values; a key it fails on stays a conflict,
    /// which (as with [`Strategy::Fail`]) commits nothing.
    Union(&'a dyn ValueUnion),
}

impl Strategy<'_> {
    /// The command line's `skip`: the same as [`Strategy::Ours`].
    pub const SKIP: Strategy<'static> = Strategy::Ours;

    /// Lower-case name, for messages and JSON (`fail`, `ours`, `theirs`, `union`).
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Fail => "fail",
            Strategy::Ours => "ours",
            Strategy::Theirs => "theirs",
            Strategy::Union(_) => "union",
        }
    }
}

impl std::fmt::Debug for Strategy<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a conflict ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// Not settled: the strategy was [`Strategy::Fail`], or the union failed (its message).
    Unresolved(Option<String>),
    /// Settled: the merged tree holds this value id (`None` = the key is absent).
    Resolved(Option<ObjectId>),
}

/// One key changed differently on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The key (encoded, see [`crate::key::Key::encode`]).
    pub key: Vec<u8>,
    /// Its value id at the merge base (`None` = absent).
    pub base: Option<ObjectId>,
    /// Its value id on the destination branch (`None` = deleted or never added).
    pub ours: Option<ObjectId>,
    /// Its value id on the merged-in side.
    pub theirs: Option<ObjectId>,
    /// What the strategy made of it.
    pub resolution: Resolution,
}

impl Conflict {
    /// Whether the strategy settled this conflict.
    pub fn is_resolved(&self) -> bool {
        matches!(self.resolution, Resolution::Resolved(_))
    }
}

/// What a merge did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeKind {
    /// The source was already reachable from the branch: nothing changed.
    UpToDate,
    /// The branch tip was an ancestor of the source: the branch now points at the source.
    FastForward,
    /// A merge commit with parents `[branch tip, source]` was recorded.
    Merged,
    /// Unresolved conflicts: nothing was committed and no ref moved.
    Conflicted,
}

/// The result of [`Repo::merge`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeOutcome {
    /// What happened.
    pub kind: MergeKind,
    /// The branch's new tip: the merge commit, or the source after a fast-forward; `None`
    /// when up to date or conflicted.
    pub commit: Option<ObjectId>,
    /// Every conflicting key in key order, resolved ones included (see
    /// [`Conflict::resolution`]).
    pub conflicts: Vec<Conflict>,
}

/// The result of [`Repo::merge_trees`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeMerge {
    /// The merged tree (written), or `None` when a conflict is unresolved.
    pub root: Option<ObjectId>,
    /// Every conflicting key in key order.
    pub conflicts: Vec<Conflict>,
}

/// What a merge comes to ([`Repo::plan_merge`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergePlan {
    /// The source is already reachable from the branch.
    UpToDate,
    /// The branch tip is an ancestor of the source.
    FastForward,
    /// The histories have diverged: their trees merged.
    Merged(TreeMerge),
    /// The histories have diverged and only a fast-forward was asked for.
    Diverged,
}

/// How a merge source relates to the branch tip.
enum Relation {
    UpToDate,
    FastForward,
    Diverged(Option<ObjectId>),
}

impl Repo {
    /// The changes `base -> theirs` in key order, each with our value of its key, and the
    /// ids of their nodes the diff opened. Our values are looked up on a second thread fed
    /// by the diff in batches, so the two kinds of reads overlap.
    #[allow(clippy::type_complexity)]
    fn their_changes_with_ours(
        &self,
        base: &ObjectId,
        ours: &ObjectId,
        theirs: &ObjectId,
    ) -> RepoResult<(Vec<(Change, Option<ObjectId>)>, Vec<ObjectId>)> {
        const BATCH: usize = 64;
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::sync_channel::<Vec<Change>>(16);
            let lookups = s.spawn(move || -> RepoResult<Vec<(Change, Option<ObjectId>)>> {
                let mut out = Vec::new();
                for batch in rx {
                    for c in batch {
                        let v = self.tree.get(ours, &c.key)?;
                        out.push((c, v));
                    }
                }
                Ok(out)
            });
            let mut seen = Vec::new();
            let mut batch = Vec::with_capacity(BATCH);
            let walked = self.tree.diff_walk(
                base,
                theirs,
                &KeyRange::all(),
                &mut |c| {
                    batch.push(c);
                    // A failed send means the lookups stopped on an error: stop too.
                    batch.len() < BATCH
                        || tx
                            .send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))
                            .is_ok()
                },
                Some(&mut seen),
                true,
            );
            if !batch.is_empty() {
                let _ = tx.send(batch);
            }
            drop(tx);
            let looked = lookups
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            walked?;
            Ok((looked?, seen))
        })
    }

    /// Three-way merge of trees at the key level: the changes `base -> theirs` are applied
    /// to `ours`, except where `base -> ours` changed the same key to something else; those
    /// keys are conflicts, settled by `strategy`. The merged tree is written unless a
    /// conflict stays unresolved.
    pub fn merge_trees(
        &self,
        base: &ObjectId,
        ours: &ObjectId,
        theirs: &ObjectId,
        strategy: &Strategy<'_>,
    ) -> RepoResult<TreeMerge> {
        // One diff suffices: our value of a key their side changed is read from our tree,
        // and we changed it exactly when it differs from the base value the diff reports.
        // The lookups run on a second thread as the diff streams its changes.
        let (looked_up, seen) = self.their_changes_with_ours(base, ours, theirs)?;
        let mut edits: Vec<Edit> = Vec::new();
        let mut conflicts: Vec<Conflict> = Vec::new();
        let take = |edits: &mut Vec<Edit>, key: Vec<u8>, v: Option<ObjectId>| {
            edits.push(match v {
                Some(v) => Edit::Put(key, v),
                None => Edit::Delete(key),
            })
        };
        for (t, ours_value) in looked_up {
            if ours_value == t.old {
                take(&mut edits, t.key.to_vec(), t.new);
                continue;
            }
            if ours_value == t.new {
                continue;
            }
            let resolution = match strategy {
                Strategy::Fail => Resolution::Unresolved(None),
                Strategy::Ours => Resolution::Resolved(ours_value),
                Strategy::Theirs => Resolution::Resolved(t.new),
                Strategy::Union(u) => {
                    match u.union(&t.key, t.old.as_ref(), ours_value.as_ref(), t.new.as_ref()) {
                        Ok(v) => Resolution::Resolved(v),
                        Err(msg) => Resolution::Unresolved(Some(msg)),
                    }
                }
            };
            if let Resolution::Resolved(v) = &resolution {
                if *v != ours_value {
                    take(&mut edits, t.key.to_vec(), *v);
                }
            }
            conflicts.push(Conflict {
                key: t.key.to_vec(),
                base: t.old,
                ours: ours_value,
                theirs: t.new,
                resolution,
            });
        }
        if conflicts.iter().any(|c| !c.is_resolved()) {
            return Ok(TreeMerge {
                root: None,
                conflicts,
            });
        }
        let root = if edits.is_empty() {
            *ours
        } else {
            // Their nodes the diff opened are stored; where the merged tree remakes them
            // (their changes next to none of ours), they are not written again.
            let known: IdSet = seen.into_iter().collect();
            self.tree.apply_known(ours, edits, &known)?.0
        };
        Ok(TreeMerge {
            root: Some(root),
            conflicts,
        })
    }

    /// What merging commit `source` into a branch at `ours_tip` comes to, writing no
    /// commit and moving no ref:
    ///
    /// - `source` already reachable from the tip: [`MergePlan::UpToDate`];
    /// - the tip is an ancestor of `source`: [`MergePlan::FastForward`];
    /// - otherwise, with a `strategy`, the three-way merge ([`Repo::merge_trees`]) against
    ///   the merge base ([`Repo::merge_base`]; the empty tree for unrelated histories),
    ///   [`MergePlan::Merged`]; without one (a fast-forward only), [`MergePlan::Diverged`].
    pub fn plan_merge(
        &self,
        ours_tip: &ObjectId,
        source: &ObjectId,
        strategy: Option<&Strategy<'_>>,
    ) -> RepoResult<MergePlan> {
        let theirs = self.read_commit(source)?;
        let base = match self.relate(ours_tip, source)? {
            Relation::UpToDate => return Ok(MergePlan::UpToDate),
            Relation::FastForward => return Ok(MergePlan::FastForward),
            Relation::Diverged(base) => base,
        };
        let Some(strategy) = strategy else {
            return Ok(MergePlan::Diverged);
        };
        let base_root = match base {
            Some(b) => self.root_of(&b)?,
            None => self.tree.empty()?,
        };
        let ours_root = self.root_of(ours_tip)?;
        let merged = self.merge_trees(&base_root, &ours_root, &theirs.root, strategy)?;
        Ok(MergePlan::Merged(merged))
    }

    /// Merges commit `source` into branch `into_branch` as [`Repo::plan_merge`] plans it:
    /// up to date, nothing changes; a fast-forward moves the branch to `source` by
    /// compare-and-swap; a merge with every conflict settled records a commit with parents
    /// `[branch tip, source]` through [`Repo::commit_tree`] ([`MergeKind::Merged`]), even
    /// when the merged tree equals the branch's, so the source becomes reachable; with any
    /// conflict unresolved nothing is written to the history and no ref moves
    /// ([`MergeKind::Conflicted`]). If another writer moves the branch meanwhile the result
    /// is [`RepoError::RefMoved`] and nothing changed. To refuse anything but a
    /// fast-forward, use [`Repo::fast_forward`].
    pub fn merge(
        &self,
        source: &ObjectId,
        into_branch: &str,
        strategy: &Strategy<'_>,
        sig: &Signature,
        message: &str,
    ) -> RepoResult<MergeOutcome> {
        let ours_tip = self.branch_tip(into_branch)?;
        let plan = self.plan_merge(&ours_tip, source, Some(strategy))?;
        self.finish_merge(plan, into_branch, &ours_tip, source, |root| {
            self.commit_tree(
                into_branch,
                &ours_tip,
                root,
                vec![ours_tip, *source],
                sig,
                message,
            )
        })
    }

    /// Fast-forward-only merge: [`MergeKind::UpToDate`] or [`MergeKind::FastForward`] as in
    /// [`Repo::merge`], and [`RepoError::NotFastForward`] (nothing changed) when the
    /// histories have diverged.
    pub fn fast_forward(&self, source: &ObjectId, into_branch: &str) -> RepoResult<MergeOutcome> {
        let ours_tip = self.branch_tip(into_branch)?;
        let plan = self.plan_merge(&ours_tip, source, None)?;
        self.finish_merge(plan, into_branch, &ours_tip, source, |_| {
            Err(RepoError::NotFastForward(into_branch.to_string()))
        })
    }

    /// Carries out `plan` on branch `into_branch` (at `ours_tip`): moves the branch for a
    /// fast-forward, and hands a merged tree with every conflict settled to `commit`, which
    /// records it with parents `[ours_tip, source]` and returns the commit.
    pub fn finish_merge<E: From<RepoError>>(
        &self,
        plan: MergePlan,
        into_branch: &str,
        ours_tip: &ObjectId,
        source: &ObjectId,
        commit: impl FnOnce(ObjectId) -> Result<ObjectId, E>,
    ) -> Result<MergeOutcome, E> {
        let outcome = |kind, commit, conflicts| MergeOutcome {
            kind,
            commit,
            conflicts,
        };
        Ok(match plan {
            MergePlan::UpToDate => outcome(MergeKind::UpToDate, None, Vec::new()),
            MergePlan::FastForward => {
                let mut update = RefUpdate::logged_as(fast_forward_message(source));
                self.update_refs(update.move_branch(into_branch, *ours_tip, *source))?;
                outcome(MergeKind::FastForward, Some(*source), Vec::new())
            }
            MergePlan::Diverged => {
                return Err(RepoError::NotFastForward(into_branch.to_string()).into())
            }
            MergePlan::Merged(TreeMerge {
                root: None,
                conflicts,
            }) => outcome(MergeKind::Conflicted, None, conflicts),
            MergePlan::Merged(TreeMerge {
                root: Some(root),
                conflicts,
            }) => outcome(MergeKind::Merged, Some(commit(root)?), conflicts),
        })
    }

    /// How `theirs` relates to `ours`, from the commit graph.
    fn relate(&self, ours: &ObjectId, theirs: &ObjectId) -> RepoResult<Relation> {
        let g = self.commit_graph(&[*ours, *theirs], false)?;
        let p = positions(&g, &[*ours, *theirs]);
        let (po, pt) = (p[0], p[1]);
        if reaches(&g, po, pt) {
            return Ok(Relation::UpToDate);
        }
        if reaches(&g, pt, po) {
            return Ok(Relation::FastForward);
        }
        let base = best_common(&g, po, pt).into_iter().next();
        Ok(Relation::Diverged(base))
    }
}

/// What the ref log says of a fast-forward to `source`.
fn fast_forward_message(source: &ObjectId) -> String {
    format!("merge: fast-forward to {}", source.short(8))
}
