//! `push`, `fetch`, `pull`, `clone` and `gc --remote`: moving history between a store and
//! its remotes.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::object::ObjectId;
use crate::repo::remote::{Progress, PushPlan, RemoteHeads};
use crate::repo::{Head, RefUpdate, Repo, HEAD};
use crate::store::{OpenOptions, RefStore, Store, StoreError};

use super::ids::{hex, hex_opt};
use super::remote::{
    parse_url, read_held_packs, tracking_branches, validate_remote_name, write_held_packs,
    Location, DEFAULT_REMOTE,
};
use super::{Memoir, MemoirError, MemoirResult, MergeOutcome, MergeRequest, Outcome, WriteAs};

/// Receives progress of a long transfer: the phase (`sending`, `receiving`) and the counts.
pub type ProgressFn<'a> = &'a mut dyn FnMut(&str, Progress);

/// What `push` did.
#[derive(Debug, Clone, Serialize)]
pub struct PushOutcome {
    /// Always true (a refused push is an error, exit 6).
    pub success: bool,
    /// The remote.
    pub remote: String,
    /// Its URL.
    pub url: String,
    /// The branch pushed.
    pub branch: String,
    /// The commit the remote branch names now.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// The commit it named before (null: the branch is new there).
    #[serde(serialize_with = "hex_opt")]
    pub previous: Option<ObjectId>,
    /// `created`, `fast_forward`, `forced` or `up_to_date`.
    pub status: &'static str,
    /// Objects uploaded.
    pub objects_sent: u64,
    /// Bytes uploaded (packs).
    pub bytes_sent: u64,
    /// Packs an interrupted earlier push had already uploaded, reused.
    pub packs_reused: u64,
    /// What happened, in one line.
    pub message: String,
}

impl Outcome for PushOutcome {
    crate::outcome_json!();
}

/// One remote branch as a fetch saw it.
#[derive(Debug, Clone, Serialize)]
pub struct FetchedBranch {
    /// The branch on the remote (the tracking ref is `REMOTE/BRANCH`).
    pub branch: String,
    /// The commit it names.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// What the tracking ref named before (null: new).
    #[serde(serialize_with = "hex_opt")]
    pub previous: Option<ObjectId>,
    /// `new`, `updated`, `forced` or `unchanged`.
    pub status: &'static str,
}

/// A remote branch whose newest version cannot be read: left as it was here.
#[derive(Debug, Clone, Serialize)]
pub struct UnreadableBranch {
    /// The branch on the remote.
    pub branch: String,
    /// Why it cannot be read.
    pub error: String,
}

/// What `fetch` did.
#[derive(Debug, Clone, Serialize)]
pub struct FetchOutcome {
    /// False when a branch cannot be read (exit 5; the others are fetched).
    pub success: bool,
    /// The remote.
    pub remote: String,
    /// Its URL.
    pub url: String,
    /// Every readable branch of the remote.
    pub branches: Vec<FetchedBranch>,
    /// Tracking branches removed because the remote no longer has them.
    pub removed: Vec<String>,
    /// Branches that cannot be read (their tracking refs left as they were): exit 5.
    pub unreadable: Vec<UnreadableBranch>,
    /// Objects received (absent here before).
    pub objects_received: u64,
    /// Their bytes.
    pub bytes_received: u64,
    /// What happened, in one line.
    pub message: String,
}

impl Outcome for FetchOutcome {
    crate::outcome_json!();

    fn exit_code(&self) -> u8 {
        if self.unreadable.is_empty() {
            super::exit::OK
        } else {
            super::exit::CORRUPT
        }
    }

    fn error_message(&self) -> Option<String> {
        unreadable_message(&self.remote, &self.unreadable)
    }
}

/// What is said of the unreadable branches of `remote` (none: nothing).
fn unreadable_message(remote: &str, bad: &[UnreadableBranch]) -> Option<String> {
    let first = bad.first()?;
    let more = match bad.len() {
        1 => String::new(),
        n => format!(" (and {} more branches)", n - 1),
    };
    Some(format!(
        "branch '{}' of {remote} cannot be read{more}, and was not fetched: {}",
        first.branch, first.error
    ))
}

/// What `pull` did: a fetch, then a merge of the remote branch.
#[derive(Debug, Clone, Serialize)]
pub struct PullOutcome {
    /// False when the merge left conflicts (exit 4).
    pub success: bool,
    /// The fetch.
    pub fetch: FetchOutcome,
    /// The merge of `REMOTE/BRANCH` into the current branch (or `--into`).
    pub merge: MergeOutcome,
}

impl Outcome for PullOutcome {
    crate::outcome_json!();

    fn exit_code(&self) -> u8 {
        self.merge.exit_code()
    }

    fn error_message(&self) -> Option<String> {
        self.merge.error_message()
    }
}

/// What `clone` did.
#[derive(Debug, Clone, Serialize)]
pub struct CloneOutcome {
    /// Always true.
    pub success: bool,
    /// The new store.
    pub path: String,
    /// The remote it was cloned from (named `origin`).
    pub url: String,
    /// The branch checked out.
    pub branch: String,
    /// Its commit.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// The fetch that filled it.
    pub fetch: FetchOutcome,
    /// What happened, in one line.
    pub message: String,
}

impl Outcome for CloneOutcome {
    crate::outcome_json!();

    fn exit_code(&self) -> u8 {
        self.fetch.exit_code()
    }

    fn error_message(&self) -> Option<String> {
        self.fetch.error_message()
    }
}

/// What `gc --remote` did.
#[derive(Debug, Clone, Serialize)]
pub struct GcRemoteOutcome {
    /// Always true.
    pub success: bool,
    /// The remote.
    pub remote: String,
    /// Its URL.
    pub url: String,
    /// Packs left as they were.
    pub packs_kept: u64,
    /// Of those, packs younger than the grace period (not judged).
    pub packs_young: u64,
    /// Packs rewritten without their unreachable objects.
    pub packs_rewritten: u64,
    /// Packs removed.
    pub packs_removed: u64,
    /// Objects removed from the remote.
    pub objects_removed: u64,
    /// Bytes removed from the remote.
    pub bytes_removed: u64,
}

impl Outcome for GcRemoteOutcome {
    crate::outcome_json!();
}

impl Memoir {
    /// Pushes `branch` (default: the branch HEAD is on) to the remote (default: `origin`,
    /// or the only one) as the remote branch of the same name. Refused with exit 6 when the
    /// remote branch is not an ancestor (or another push won a race), unless `force`.
    pub fn push(
        &self,
        remote: Option<&str>,
        branch: Option<&str>,
        force: bool,
        progress: ProgressFn<'_>,
    ) -> MemoirResult<PushOutcome> {
        let repo = self.open_repo()?;
        let (name, url) = self.pick_remote(remote)?;
        let location = parse_url(&url)?.0;
        let branch = match branch {
            Some(b) => b.to_string(),
            None => match repo.head()? {
                Head::Branch(b) => b,
                Head::Detached(_) => {
                    return Err(MemoirError::invalid(
                        "HEAD is detached; name the branch to push",
                    ))
                }
            },
        };
        let commit = match repo.branch_tip(&branch) {
            Ok(c) => c,
            Err(crate::repo::RepoError::BranchNotFound(_)) => {
                return Err(MemoirError::not_found(format!(
                    "branch '{branch}' not found"
                )))
            }
            Err(e) => return Err(e.into()),
        };
        let plan = PushPlan {
            branch: branch.clone(),
            commit,
            force,
            time: self.opts.clock.now_secs(),
        };
        let mut on = |p| progress("sending", p);
        let report = match location {
            Location::Store(dir) => {
                let dest = self.other_store(&dir)?;
                dest.store()
                    .set_ref_message(format!("push: from {}", self.path().display()));
                repo.push_to_store(&dest, &plan, &mut on)?
            }
            _ => repo.push_to(self.transport(&url, true)?.as_ref(), &plan, &mut on)?,
        };
        let mut update = RefUpdate::logged_as(format!("push: {name}/{branch}"));
        repo.update_refs(update.set_tracking(&name, &branch, Some(commit)))?;
        let mut held = read_held_packs(self.path(), &name);
        held.extend(report.packs.iter().cloned());
        write_held_packs(self.path(), &name, &held);
        let status = match (report.previous, report.seq) {
            (_, None) => "up_to_date",
            (None, Some(_)) => "created",
            (Some(_), Some(_)) if report.forced => "forced",
            _ => "fast_forward",
        };
        let message = match status {
            "up_to_date" => format!("{name}/{branch} is up to date"),
            _ => format!(
                "Pushed {branch} to {name} ({}): {} objects, {} bytes",
                commit.short(12),
                report.objects,
                report.bytes
            ),
        };
        Ok(PushOutcome {
            success: true,
            remote: name,
            url,
            branch,
            commit,
            previous: report.previous,
            status,
            objects_sent: report.objects,
            bytes_sent: report.bytes,
            packs_reused: report.packs_reused,
            message,
        })
    }

    /// Fetches every branch of the remote into remote-tracking refs `REMOTE/BRANCH`
    /// (usable as revisions), receiving only the objects this store lacks, each checked
    /// against its id before any ref names it (a damaged remote: exit 5, nothing changed).
    pub fn fetch(
        &self,
        remote: Option<&str>,
        progress: ProgressFn<'_>,
    ) -> MemoirResult<FetchOutcome> {
        let repo = self.open_repo()?;
        let (name, url) = self.pick_remote(remote)?;
        self.fetch_into(&repo, &name, &url, progress)
    }

    fn fetch_into(
        &self,
        repo: &Repo,
        name: &str,
        url: &str,
        progress: ProgressFn<'_>,
    ) -> MemoirResult<FetchOutcome> {
        let held = read_held_packs(self.path(), name);
        let mut on = |p| progress("receiving", p);
        let transport = match parse_url(url)?.0 {
            Location::Store(dir) => Err(self.other_store(&dir)?),
            _ => Ok(self.transport(url, false)?),
        };
        let report = match transport {
            Err(src) => repo.fetch_from_store(&src, &mut on)?,
            Ok(t) => self.fetch_packs(repo, t.as_ref(), &held, &mut on)?,
        };
        write_held_packs(self.path(), name, &report.packs_held);
        // The record of held packs is a cache: objects gc removed since may be missing.
        let mut update = RefUpdate::logged_as(format!("fetch: {name}"));
        let before: BTreeMap<String, ObjectId> = tracking_branches(repo, name)?
            .into_iter()
            .map(|t| (t.branch, t.commit))
            .collect();
        let mut branches = Vec::new();
        for (branch, v) in &report.heads.branches {
            let commit = v.commit_id()?;
            let previous = before.get(branch).copied();
            let status = match previous {
                None => "new",
                Some(p) if p == commit => "unchanged",
                Some(p) if repo.is_ancestor(&p, &commit)? => "updated",
                Some(_) => "forced",
            };
            update.set_tracking(name, branch, Some(commit));
            branches.push(FetchedBranch {
                branch: branch.clone(),
                commit,
                previous,
                status,
            });
        }
        let mut removed = Vec::new();
        let gone = |b: &String| {
            !report.heads.branches.contains_key(b) && !report.heads.unreadable.contains_key(b)
        };
        for (branch, _) in before.iter().filter(|(b, _)| gone(b)) {
            update.set_tracking(name, branch, None);
            removed.push(branch.clone());
        }
        repo.update_refs(&update)?;
        let changed = branches.iter().filter(|b| b.status != "unchanged").count();
        let unreadable: Vec<UnreadableBranch> = report
            .heads
            .unreadable
            .iter()
            .map(|(branch, error)| UnreadableBranch {
                branch: branch.clone(),
                error: error.clone(),
            })
            .collect();
        let mut message = format!(
            "Fetched {name}: {} branch(es), {changed} changed; {} objects, {} bytes received",
            branches.len(),
            report.objects,
            report.bytes
        );
        if let Some(m) = unreadable_message(name, &unreadable) {
            message = format!("{message}; {m}");
        }
        Ok(FetchOutcome {
            success: unreadable.is_empty(),
            remote: name.to_string(),
            url: url.to_string(),
            message,
            branches,
            removed,
            unreadable,
            objects_received: report.objects,
            bytes_received: report.bytes,
        })
    }

    /// Fetches, then merges `REMOTE/BRANCH` (default: the current branch's name) into the
    /// current branch, fast-forwarding when possible (`req.ff_only`: only then; exit 6
    /// otherwise) or merging with `req.strategy` as `merge` does.
    pub fn pull(
        &self,
        remote: Option<&str>,
        branch: Option<&str>,
        req: &MergeRequest,
        who: &WriteAs,
        progress: ProgressFn<'_>,
    ) -> MemoirResult<PullOutcome> {
        who.check()?;
        let (name, fetch, into) = {
            let repo = self.open_repo()?;
            let (name, url) = self.pick_remote(remote)?;
            let fetch = self.fetch_into(&repo, &name, &url, progress)?;
            let into = match &req.into {
                Some(b) => b.clone(),
                None => match repo.head()? {
                    Head::Branch(b) => b,
                    Head::Detached(_) => {
                        return Err(MemoirError::invalid(
                            "HEAD is detached; name the destination with --into",
                        ))
                    }
                },
            };
            (name, fetch, into)
        };
        let branch = branch.unwrap_or(&into).to_string();
        if let Some(bad) = fetch.unreadable.iter().find(|b| b.branch == branch) {
            return Err(MemoirError::coded(
                super::exit::CORRUPT,
                format!(
                    "the remote {name} is damaged: branch '{branch}' cannot be read, and was \
                     not fetched: {}",
                    bad.error
                ),
            ));
        }
        if !fetch.branches.iter().any(|b| b.branch == branch) {
            return Err(MemoirError::not_found(format!(
                "the remote {name} has no branch '{branch}'"
            )));
        }
        let merge = self.merge(
            &MergeRequest {
                source: format!("{name}/{branch}"),
                into: Some(into),
                strategy: req.strategy,
                ff_only: req.ff_only,
            },
            who,
        )?;
        Ok(PullOutcome {
            success: merge.success,
            fetch,
            merge,
        })
    }

    /// Makes a new store at `dir` from the remote at `url`: the remote is added as
    /// `origin`, every branch is fetched, and `main` (else the first branch) is checked
    /// out. A clone cut short leaves a store without history, which cloning again into the
    /// same directory finishes.
    pub fn clone_from(
        url: &str,
        dir: &Path,
        options: super::Options,
        progress: ProgressFn<'_>,
    ) -> MemoirResult<(Memoir, CloneOutcome)> {
        let (_, url) = parse_url(url)?;
        let opts: OpenOptions = options.store_options();
        let store = match Store::create(dir, &opts) {
            Ok(s) => s,
            Err(e @ StoreError::AlreadyExists { .. }) => {
                let s = Store::open(dir, &opts)?;
                if s.get_ref(HEAD)?.is_some() {
                    return Err(MemoirError::invalid(e.to_string()));
                }
                s
            }
            Err(e @ StoreError::NotEmpty { .. }) => {
                return Err(MemoirError::invalid(e.to_string()))
            }
            Err(e) => return Err(e.into()),
        };
        let mut remotes = crate::store::read_remotes(dir)?;
        remotes.insert(DEFAULT_REMOTE.to_string(), url.clone());
        store.write_remotes(&remotes)?;
        drop(store);
        let m = Memoir::open(dir, options);
        let store = m.open_store()?;
        let repo = Repo::open_uninitialized(store);
        let fetch = m.fetch_into(&repo, DEFAULT_REMOTE, &url, progress)?;
        let default_bad = fetch
            .unreadable
            .iter()
            .any(|b| b.branch == crate::repo::DEFAULT_BRANCH);
        if default_bad || (fetch.branches.is_empty() && !fetch.unreadable.is_empty()) {
            let why = fetch.error_message().unwrap_or_default();
            return Err(MemoirError::coded(
                super::exit::CORRUPT,
                format!("the remote {url} is damaged: {why}"),
            ));
        }
        let pick = fetch
            .branches
            .iter()
            .find(|b| b.branch == crate::repo::DEFAULT_BRANCH)
            .or_else(|| fetch.branches.first())
            .cloned()
            .ok_or_else(|| MemoirError::not_found(format!("the remote {url} has no branches")))?;
        let mut update = RefUpdate::logged_as(format!("clone: from {url}"));
        update.create_branch(&pick.branch, pick.commit);
        repo.update_refs(update.set_head(Head::Branch(pick.branch.clone())))?;
        drop(repo);
        let path = super::absolute(dir).display().to_string();
        let out = CloneOutcome {
            success: true,
            message: format!("Cloned {url} into {path}; on branch {}", pick.branch),
            path,
            url,
            branch: pick.branch,
            commit: pick.commit,
            fetch,
        };
        Ok((m, out))
    }

    /// Removes from the remote every object its branches do not reach (after a fetch, so
    /// this store holds all they do); packs written less than `grace_secs` ago are left.
    pub fn gc_remote(&self, remote: &str, grace_secs: i64) -> MemoirResult<GcRemoteOutcome> {
        validate_remote_name(remote)?;
        let repo = self.open_repo()?;
        let (name, url) = self.pick_remote(Some(remote))?;
        if let Location::Store(dir) = parse_url(&url)?.0 {
            return Err(MemoirError::invalid(format!(
                "{name} is the store {}: run memoir gc there",
                dir.display()
            )));
        }
        let fetched = self.fetch_into(&repo, &name, &url, &mut |_, _| {})?;
        if let Some(why) = fetched.error_message() {
            return Err(MemoirError::coded(
                super::exit::CORRUPT,
                format!("the remote is damaged, so nothing was removed: {why}"),
            ));
        }
        let t = self.transport(&url, false)?;
        let heads: RemoteHeads = crate::repo::remote::read_heads(t.as_ref())?;
        let r = repo.prune_remote(t.as_ref(), &heads, self.opts.clock.now_secs(), grace_secs)?;
        let _ = std::fs::remove_file(super::remote::held_packs_path(self.path(), &name));
        Ok(GcRemoteOutcome {
            success: true,
            remote: name,
            url,
            packs_kept: r.packs_kept,
            packs_young: r.packs_young,
            packs_rewritten: r.packs_rewritten,
            packs_removed: r.packs_removed,
            objects_removed: r.objects_removed,
            bytes_removed: r.bytes_removed,
        })
    }
}

impl Memoir {
    /// A fetch from object storage, read again without the record of held packs when that
    /// record (a cache: gc may have removed objects since) led it astray.
    fn fetch_packs(
        &self,
        repo: &Repo,
        t: &dyn crate::repo::remote::Transport,
        held: &std::collections::BTreeSet<String>,
        on: &mut dyn FnMut(Progress),
    ) -> MemoirResult<crate::repo::remote::FetchReport> {
        match repo.fetch_from(t, held, on) {
            Err(crate::repo::remote::RemoteError::Corrupt(_)) if !held.is_empty() => {
                Ok(repo.fetch_from(t, &Default::default(), on)?)
            }
            other => Ok(other?),
        }
    }
}
