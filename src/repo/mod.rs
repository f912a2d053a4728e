//! The repository layer: commits and refs over the tree and object layers.
//!
//! Refs live in the store's ref table: `HEAD` holds `ref: refs/heads/<branch>` (attached) or
//! a raw 32-byte commit id (detached); `refs/heads/<branch>` holds a raw 32-byte commit id.
//! Every ref move is a compare-and-swap, made only after the objects it names are flushed.

mod ancestry;
mod blame;
mod commit;
mod diff;
mod filter;
mod fsck;
mod gc;
pub mod graph_cache;
mod log;
pub use log::KeepCommit;
mod merge;
mod purge;
mod ref_update;
pub mod remote;
mod resolve;
pub mod revision;
mod walk;

pub use ancestry::ReachedCommit;
pub use blame::{BlameEntry, LineBlame};
pub use commit::{Commit, MAX_PARENTS};
pub use diff::{line_stat, unified_diff, KeyChange, LineStat, Op};
pub use filter::KeyFilter;
pub use fsck::{Finding, FindingKind, FsckReport, Subject};
pub use gc::GcReport;
pub use merge::{
    Conflict, MergeKind, MergeOutcome, MergePlan, Resolution, Strategy, TreeMerge, ValueUnion,
};
pub use purge::{PurgePlan, PurgeReport};
pub use ref_update::RefUpdate;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use graph_cache::CommitGraph;

use crate::object::{Object, ObjectError, ObjectId, Objects};
use crate::prolly::{Edit, NodeStore, ProllyError, SharedNodeCache, DEFAULT_CACHE_NODES};
use crate::store::{ObjectStore, RefNote, RefStore, Store, StoreError};

/// The ref that names the current branch.
pub const HEAD: &str = "HEAD";
/// Prefix of branch refs.
pub const BRANCH_PREFIX: &str = "refs/heads/";
/// The branch a new repository starts on.
pub const DEFAULT_BRANCH: &str = "main";
const SYMBOLIC: &str = "ref: ";

/// Errors of the repository layer.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An object is missing or corrupt.
    #[error(transparent)]
    Object(#[from] ObjectError),
    /// A tree operation failed.
    #[error(transparent)]
    Tree(#[from] ProllyError),
    /// The store has no `HEAD`: it was never initialised.
    #[error("the store has no history yet (no HEAD)")]
    NotInitialized,
    /// `init` on a store that already has a `HEAD`.
    #[error("the store already has a history")]
    AlreadyInitialized,
    /// No branch of that name.
    #[error("branch '{0}' not found")]
    BranchNotFound(String),
    /// A branch of that name already exists.
    #[error("branch '{0}' already exists")]
    BranchExists(String),
    /// The branch `HEAD` is on cannot be deleted.
    #[error("cannot delete branch '{0}': it is the current branch")]
    CurrentBranch(String),
    /// A branch name that is not allowed.
    #[error(transparent)]
    BadName(#[from] revision::RevParseError),
    /// A ref changed between reading and updating it (another writer won the race).
    #[error("ref {0} was moved by another writer; nothing was changed")]
    RefMoved(String),
    /// A ref holds a value that is not a commit id or symbolic ref.
    #[error("ref {name} holds an unreadable value")]
    BadRef {
        /// The ref.
        name: String,
    },
    /// A fast-forward-only merge found diverged histories; nothing was changed.
    #[error("branch '{0}' cannot be fast-forwarded: the histories have diverged")]
    NotFastForward(String),
    /// A revision names no commit (unknown name, no such ancestor or parent, nothing at
    /// or before a date): the revision as asked, and why when that helps (how long the
    /// history is, the nearest branch name).
    #[error("unknown revision '{asked}'{}", why.as_ref().map(|w| format!(": {w}")).unwrap_or_default())]
    RevisionNotFound {
        /// The revision as asked.
        asked: String,
        /// Why it names nothing, when more can be said.
        why: Option<String>,
    },
    /// A hex prefix matches several commits.
    #[error("revision '{prefix}' is ambiguous; candidates: {}", candidates.join(", "))]
    AmbiguousRevision {
        /// The prefix asked for.
        prefix: String,
        /// Full hex ids of the commits it matches, sorted.
        candidates: Vec<String>,
    },
    /// A revision or range that does not parse.
    #[error(transparent)]
    BadRevision(revision::RevParseError),
    /// A key stored in a tree does not decode (the tree is damaged).
    #[error("a tree holds an undecodable key: {0}")]
    BadStoredKey(#[from] crate::key::KeyError),
}

/// Result alias of the repository layer.
pub type RepoResult<T> = Result<T, RepoError>;

/// Who makes a commit, when, and with what provenance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// Author text.
    pub author: String,
    /// Unix seconds (UTC); the caller supplies the clock.
    pub timestamp: i64,
    /// Optional provenance (`actor`, `source`, ...).
    pub metadata: BTreeMap<String, String>,
}

impl Signature {
    /// A signature without metadata.
    pub fn new(author: &str, timestamp: i64) -> Self {
        Signature {
            author: author.to_string(),
            timestamp,
            metadata: BTreeMap::new(),
        }
    }
}

/// What `HEAD` points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// A branch, by name.
    Branch(String),
    /// A commit, detached from any branch.
    Detached(ObjectId),
}

/// What `HEAD` resolved to when the store was last closed: the store's
/// [`store::CachedHead`](crate::store::CachedHead) in this layer's types. A reader that
/// knows it can answer from caches keyed by that root (the lexical index) without opening
/// the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedHead {
    /// The branch (or commit) `HEAD` pointed at.
    pub head: Head,
    /// The commit it resolved to.
    pub commit: ObjectId,
    /// That commit's tree root.
    pub root: ObjectId,
}

/// Where a repository keeps its in-memory commit graph (see [`Repo::sharing_caches`]).
pub type GraphSlot = Arc<Mutex<Option<Arc<CommitGraph>>>>;

/// In-memory caches several repository handles on one store can share
/// ([`Repo::sharing_caches`]).
#[derive(Clone, Default)]
pub struct SharedCaches {
    /// The commit graph.
    pub graph: GraphSlot,
    /// Decoded tree nodes.
    pub nodes: SharedNodeCache,
}

impl std::fmt::Debug for SharedCaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedCaches")
    }
}

/// A store with history: commits, branches and `HEAD`.
pub struct Repo {
    store: Store,
    objects: Objects,
    tree: NodeStore,
    /// The commit graph cache, loaded on first use (see [`graph_cache`]); possibly shared
    /// with other handles on the same store ([`Repo::sharing_caches`]).
    graph: GraphSlot,
}

fn branch_ref(name: &str) -> String {
    format!("{BRANCH_PREFIX}{name}")
}

fn id_from_ref(name: &str, bytes: &[u8]) -> RepoResult<ObjectId> {
    <[u8; 32]>::try_from(bytes)
        .map(ObjectId::from_bytes)
        .map_err(|_| RepoError::BadRef {
            name: name.to_string(),
        })
}

impl Repo {
    /// Wraps an opened store that already has a history.
    pub fn open(store: Store) -> RepoResult<Repo> {
        let repo = Repo::wrap(store);
        if repo.store.get_ref(HEAD)?.is_none() {
            return Err(RepoError::NotInitialized);
        }
        repo.note_head();
        Ok(repo)
    }

    /// Wraps an opened store that may have no history yet: a clone fills a new store from a
    /// remote, then names its branch and `HEAD`.
    pub fn open_uninitialized(store: Store) -> Repo {
        Repo::wrap(store)
    }

    /// Starts the history of a fresh store: an empty tree, a first commit on `main`, and
    /// `HEAD` attached to `main`.
    pub fn init(store: Store, sig: &Signature, message: &str) -> RepoResult<Repo> {
        let repo = Repo::wrap(store);
        if repo.store.get_ref(HEAD)?.is_some() {
            return Err(RepoError::AlreadyInitialized);
        }
        // An init killed after making the branch but before HEAD is finished from there.
        if repo.store.get_ref(&branch_ref(DEFAULT_BRANCH))?.is_none() {
            let root = repo.tree.empty()?;
            let id = repo.write_commit(root, vec![], sig, message)?;
            // Durable before any ref (or the ref log) names it.
            repo.store.flush()?;
            repo.update_refs(RefUpdate::new().create_branch(DEFAULT_BRANCH, id))?;
        }
        repo.update_refs(RefUpdate::new().set_head(Head::Branch(DEFAULT_BRANCH.to_string())))?;
        Ok(repo)
    }

    fn wrap(store: Store) -> Repo {
        let shared: Arc<dyn ObjectStore> = Arc::new(store.clone());
        Repo {
            objects: Objects::new(shared.clone()),
            tree: NodeStore::new(shared, DEFAULT_CACHE_NODES),
            store,
            graph: GraphSlot::default(),
        }
    }

    /// The commit graph cache holding every commit reachable from `tips` (read from the
    /// store where the cache lacks them), with the change filters of all of them when
    /// `filters`. The cache is loaded from `<store>/cache/commit-graph` on first use and
    /// saved back (atomically) when it grew; failing to save it is not an error.
    pub fn commit_graph(&self, tips: &[ObjectId], filters: bool) -> RepoResult<Arc<CommitGraph>> {
        let mut guard = self.graph.lock().unwrap_or_else(|e| e.into_inner());
        let path = self.store.path().map(graph_cache::cache_path);
        let g = guard.get_or_insert_with(|| {
            Arc::new(
                path.as_deref()
                    .map_or_else(CommitGraph::new, CommitGraph::load),
            )
        });
        if tips.iter().any(|t| g.position(t).is_none()) {
            Arc::make_mut(g).extend(self, tips)?;
        }
        if filters {
            let todo = g.missing_filters(tips);
            if !todo.is_empty() {
                Arc::make_mut(g).fill_filters(self, &todo)?;
            }
        }
        // Only the LOCK's holder writes caches (a closed read takes it if it can).
        if g.is_dirty() {
            if let Some(p) = &path {
                self.store.write_cache(|| {
                    let _ = Arc::make_mut(g).save(p);
                });
            }
        }
        Ok(g.clone())
    }

    /// This repository with its in-memory commit graph and decoded tree nodes kept in
    /// `caches`, which other handles on the same store may share: a process that opens the
    /// store once per request keeps what it has read instead of loading the commit graph
    /// file and the nodes again each time. Sharing is always sound, as both are named by
    /// hash and never go stale; what they lack is read from the store when asked for
    /// (checks such as fsck read the store itself, never these caches).
    pub fn sharing_caches(mut self, caches: &SharedCaches) -> Repo {
        self.graph = caches.graph.clone();
        let shared: Arc<dyn ObjectStore> = Arc::new(self.store.clone());
        self.tree = NodeStore::with_cache(shared, caches.nodes.clone());
        self
    }

    /// Drops the in-memory commit graph; the next use loads the cache file again.
    pub fn forget_commit_graph(&self) {
        *self.graph.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The store underneath.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Tree operations (reads at any root).
    pub fn tree(&self) -> &NodeStore {
        &self.tree
    }

    /// Verified object access.
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    /// Describes `HEAD` as it is now to the store, which publishes it as the cached head
    /// when it closes unless a ref moves after it. Best effort: on any error nothing is
    /// noted, and readers of the cached head fall back to opening the store.
    pub fn note_head(&self) {
        let version = self.store.refs_version();
        let resolved = self.head().and_then(|head| {
            let (branch, commit) = match head {
                Head::Branch(b) => {
                    let tip = self.branch_tip(&b)?;
                    (Some(b), tip)
                }
                Head::Detached(id) => (None, id),
            };
            let root = self.root_of(&commit)?;
            Ok(crate::store::CachedHead {
                branch,
                commit: *commit.as_bytes(),
                root: *root.as_bytes(),
            })
        });
        if let Ok(head) = resolved {
            self.store.note_head(version, head);
        }
    }

    /// `HEAD` as of the last close of the store in directory `store_dir`, read without
    /// opening or locking it; `None` when that is not known exactly (the store was opened
    /// since, a writer stopped half way, or there is no cached head).
    pub fn cached_head(store_dir: &Path) -> Option<CachedHead> {
        let cached = Store::cached_head(store_dir)?;
        let commit = ObjectId::from_bytes(cached.commit);
        Some(CachedHead {
            head: cached.branch.map_or(Head::Detached(commit), Head::Branch),
            commit,
            root: ObjectId::from_bytes(cached.root),
        })
    }

    /// What `HEAD` points at.
    pub fn head(&self) -> RepoResult<Head> {
        let raw = self.store.get_ref(HEAD)?.ok_or(RepoError::NotInitialized)?;
        if let Some(rest) = raw.strip_prefix(SYMBOLIC.as_bytes()) {
            let target = std::str::from_utf8(rest).map_err(|_| RepoError::BadRef {
                name: HEAD.to_string(),
            })?;
            let name = target
                .strip_prefix(BRANCH_PREFIX)
                .ok_or_else(|| RepoError::BadRef {
                    name: HEAD.to_string(),
                })?;
            return Ok(Head::Branch(name.to_string()));
        }
        Ok(Head::Detached(id_from_ref(HEAD, &raw)?))
    }

    /// The commit `HEAD` resolves to.
    pub fn head_commit(&self) -> RepoResult<ObjectId> {
        match self.head()? {
            Head::Branch(b) => self.branch_tip(&b),
            Head::Detached(id) => Ok(id),
        }
    }

    /// The tip commit of a branch.
    pub fn branch_tip(&self, name: &str) -> RepoResult<ObjectId> {
        let r = branch_ref(name);
        match self.store.get_ref(&r)? {
            Some(raw) => id_from_ref(&r, &raw),
            None => Err(RepoError::BranchNotFound(name.to_string())),
        }
    }

    /// Every branch and its tip, sorted by name.
    pub fn branches(&self) -> RepoResult<Vec<(String, ObjectId)>> {
        self.store
            .list_refs(BRANCH_PREFIX)?
            .into_iter()
            .map(|(name, raw)| {
                let id = id_from_ref(&name, &raw)?;
                Ok((name[BRANCH_PREFIX.len()..].to_string(), id))
            })
            .collect()
    }

    /// Creates branch `name` at commit `at`, as one [`RefUpdate`] logged `branch: created`.
    pub fn create_branch(&self, name: &str, at: &ObjectId) -> RepoResult<()> {
        let mut update = RefUpdate::logged_as(format!("branch: created {name}"));
        self.update_refs(update.create_branch(name, *at))
    }

    /// Deletes branch `name`, whose tip must still be `expected_tip` (so a check the caller
    /// made on that tip, such as whether it is merged, still holds). The branch `HEAD` is on
    /// cannot be deleted ([`RepoError::CurrentBranch`]); a missing branch is
    /// [`RepoError::BranchNotFound`]; a branch another writer moved meanwhile is
    /// [`RepoError::RefMoved`], and nothing is deleted. The commits stay until gc.
    pub fn delete_branch(&self, name: &str, expected_tip: &ObjectId) -> RepoResult<()> {
        let mut update = RefUpdate::logged_as(format!("branch: deleted {name}"));
        self.update_refs(update.delete_branch(name, *expected_tip))
    }

    /// Points `HEAD` at a branch (which must exist) or a commit.
    pub fn set_head(&self, head: &Head) -> RepoResult<()> {
        let mut update = RefUpdate::logged_as(checkout_message(head));
        self.update_refs(update.set_head(head.clone()))
    }

    /// Reads a commit (hash-verified).
    pub fn read_commit(&self, id: &ObjectId) -> RepoResult<Commit> {
        Ok(self.objects.read::<Commit>(id)?)
    }

    fn write_commit(
        &self,
        root: ObjectId,
        parents: Vec<ObjectId>,
        sig: &Signature,
        message: &str,
    ) -> RepoResult<ObjectId> {
        let c = Commit {
            root,
            parents,
            author: sig.author.clone(),
            timestamp: sig.timestamp,
            message: message.to_string(),
            metadata: sig.metadata.clone(),
        };
        Ok(self.objects.write(&c)?)
    }

    /// Applies `edits` to the tip of `branch` and records one commit, durably: tree nodes and
    /// the commit are written and flushed, then the branch moves by compare-and-swap from the
    /// tip the edits were applied to, then the ref is flushed. If another writer moved the
    /// branch meanwhile, nothing is changed and [`RepoError::RefMoved`] is returned (the
    /// written objects are unreachable and removed by gc).
    pub fn commit(
        &self,
        branch: &str,
        edits: Vec<Edit>,
        sig: &Signature,
        message: &str,
    ) -> RepoResult<ObjectId> {
        let tip = self.branch_tip(branch)?;
        let parent = self.read_commit(&tip)?;
        let root = self.tree.apply(&parent.root, edits)?;
        self.commit_tree(branch, &tip, root, vec![tip], sig, message)
    }

    /// Records a commit of an already-written tree `root` with `parents` on `branch`, whose
    /// tip must still be `expected_tip`. The durability order of [`Repo::commit`].
    pub fn commit_tree(
        &self,
        branch: &str,
        expected_tip: &ObjectId,
        root: ObjectId,
        parents: Vec<ObjectId>,
        sig: &Signature,
        message: &str,
    ) -> RepoResult<ObjectId> {
        let id = self.write_commit(root, parents, sig, message)?;
        self.store.flush()?;
        self.store.set_ref_note(RefNote {
            time: sig.timestamp,
            author: sig.author.clone(),
            message: format!("commit: {}", message.lines().next().unwrap_or_default()),
        });
        self.update_refs(RefUpdate::new().move_branch(branch, *expected_tip, id))?;
        Ok(id)
    }

    /// The tree root at a commit.
    pub fn root_of(&self, commit: &ObjectId) -> RepoResult<ObjectId> {
        Ok(self.read_commit(commit)?.root)
    }
}

/// What the ref log says of a move of `HEAD` to `head`.
pub fn checkout_message(head: &Head) -> String {
    match head {
        Head::Branch(b) => format!("checkout: {b}"),
        Head::Detached(id) => format!("checkout: {}", id.short(8)),
    }
}

/// The id a commit would have (for tests and vectors).
pub fn commit_id(c: &Commit) -> ObjectId {
    c.to_bytes_and_id().0
}
