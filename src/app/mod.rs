//! The application layer: [`Memoir`], one method per operation of the command-line contract,
//! each returning a typed outcome whose JSON is what `memoir --json` prints, or a
//! [`MemoirError`] that names its exit code. Every face (command line, MCP server, web
//! interface, Python package) is a thin adapter over this handle, so what one face can do,
//! every face does the same way.
//!
//! The library never prints and never reads the environment: the clock, lock timeout, LLM
//! configuration and write defaults come in as [`Options`]; provenance of a write comes in as
//! [`WriteAs`]; the revision a read looks at as [`ReadPoint`].

mod agents;
mod branch;
mod caches;
mod capture;
mod changes;
mod clock;
pub mod code_repo;
pub mod config;
pub mod document_filter;
mod documents;
mod env;
mod error;
mod follow;
mod forget;
mod get;
mod graph;
mod history;
pub mod hook;
mod ids;
mod import_sets;
mod input;
mod kept_open;
mod last_runs;
mod listing;
mod maintenance;
mod meaning;
mod memory_files;
mod merge;
mod merge_preview;
mod prefix_counts;
#[doc(hidden)]
pub mod pretty;
mod proof;
mod recall;
mod reflog;
mod remember;
#[cfg(feature = "remote")]
mod remote;
#[cfg(feature = "remote")]
mod remote_sync;
mod search;
mod settings;
mod stats;
mod status;
mod store_git;
mod summarize;
mod sync_branch;
mod taxonomy;
mod transaction;
mod transfer;
mod tree;
mod watch;
mod watch_manage;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::llm::{provider, Llm, ProviderConfig};
use crate::memory::FacetCap;
use crate::object::ObjectId;
use crate::repo::{Head, Repo, RepoError, SharedCaches, Signature};
use crate::store::{OpenOptions, Store};

/// What a face needs to fill in and show for remotes: S3 settings, transfer progress.
#[cfg(feature = "remote")]
pub use crate::repo::remote::{Progress as TransferProgress, S3Settings};
/// A problem with a derived cache, as `fsck` lists it.
pub use crate::store::CacheFinding;
pub use agents::{
    AgentSummary, AgentsOutcome, BranchTip, HistoryFilter, HistoryOutcome, TimelineDay,
    TimelineOutcome,
};
pub use branch::{BranchCreateOutcome, BranchDeleteOutcome, BranchListOutcome, CheckoutOutcome};
pub use capture::{
    CaptureOutcome, CaptureRequest, CaptureTimings, CapturedFact, SkippedFact, CAPTURE_CONFIDENCE,
    CAPTURE_SOURCE,
};
pub use changes::{
    ChangeCounts, ChangeName, ChangeOutcome, ChangesPage, ChangesQuery, CHANGES_DEFAULT_LIMIT,
    CHANGES_MAX_LIMIT,
};
pub use clock::{round_ms, Clock, Timer};
pub use document_filter::{Condition, FilterOp, Operand};
pub use documents::{DocumentHit, DocumentPage, DocumentQuery, DocumentWrite, DocumentsWritten};
pub use env::{parse_seconds, Env, MAX_NOW};
pub use error::{exit, MemoirError, MemoirResult};
pub use follow::{BranchMatchOutcome, FollowOutcome, MemoryBranch, BRANCH_MATCH_FILE, MAIN_BRANCH};
pub use forget::{ForgetOutcome, ForgetRequest, PurgeCounts, PurgePreview};
pub use get::{GetItem, GetOutcome};
pub use graph::{
    EdgeKind, GraphEdge, GraphNode, GraphOutcome, GraphRequest, NodeKind, GRAPH_DEFAULT_DEPTH,
    GRAPH_DEFAULT_LIMIT, GRAPH_MAX_DEPTH, GRAPH_MAX_LIMIT,
};
pub use history::{
    BlameItem, BlameLine, BlameOutcome, DiffEntry, DiffOutcome, DiffQuery, DiffStats, KeyScope,
    LogEntry, LogOutcome, LogQuery, TimeTravelOutcome,
};
pub use input::{check_confidence, check_content, refuse_secrets, refuse_secrets_in_key};
pub use input::{parse_key, read_import, read_text};
pub use input::{MAX_CONTENT_BYTES, MAX_IMPORT_BYTES, MAX_IMPORT_LINE_BYTES, MAX_PROOF_TEXT_BYTES};
pub use kept_open::KeptOpenStore;
pub use last_runs::{FsckRun, GcRun, LastRuns, MAINTENANCE_FILE};
pub use listing::{KeyPage, MAX_PAGE};
pub use maintenance::{FsckOutcome, GcOutcome};
pub use memory_files::{MemoryCommand, MemoryFileError, MemoryFileOutcome, MEMORY_ROOT};
pub use merge::{MergeOutcome, MergeRequest, MergeResultKind, MergeStrategy};
pub use merge_preview::{MergePreviewOutcome, PreviewConflict};
pub use prefix_counts::PrefixCounts;
pub use pretty::{write_pretty, write_printed};
pub use proof::{ProofOutcome, VerifyOutcome};
pub use reflog::{ReflogItem, ReflogOutcome};
pub use remember::{
    ClassificationReport, KeyAction, KeyResult, RememberOutcome, RememberRequest, RememberTimings,
    MAX_WRITE_BYTES,
};
#[cfg(feature = "remote")]
pub use remote::{
    validate_remote_name, RemoteChangeOutcome, RemoteItem, RemoteListOutcome, TrackingBranch,
    DEFAULT_REMOTE,
};
#[cfg(feature = "remote")]
pub use remote_sync::{
    CloneOutcome, FetchOutcome, FetchedBranch, GcRemoteOutcome, ProgressFn, PullOutcome,
    PushOutcome,
};
pub use settings::{
    user_config_path, ConfigGetOutcome, ConfigListOutcome, ConfigSetOutcome, SettingItem,
};
pub use stats::{GrowthPoint, StatsOutcome, GROWTH_DEFAULT_POINTS, GROWTH_MAX_POINTS};
pub use status::{CreateOutcome, LlmInfo, StatusOutcome, INIT_MESSAGE};
pub use transaction::CreatedBranch;
pub use transfer::{parse_lines, sorted, ExportOutcome, ImportOutcome, ImportRequest};
pub use tree::{
    natural_cmp, TreeChild, TreeOutcome, TreeRequest, TREE_DEFAULT_LIMIT, TREE_MAX_LIMIT,
    TREE_PREVIEW_CHARS,
};

pub use crate::memory::capture::{Dropped, Profile};
pub use crate::memory::MergePolicy;
pub use crate::recall::SearchMode;
pub use crate::recall::Sort;
pub use crate::repo::Op;
pub use recall::{
    LlmPrompt, RecallMetadata, RecallMode, RecallOutcome, RecallRequest, RecalledMemory,
};
pub use search::{ScoreExplain, SearchHit, SearchOutcome, SearchRequest};
pub use store_git::ensure_store_git;
pub use summarize::{SummarizeOutcome, SummarizeRequest, SummaryKind};
pub use sync_branch::{SyncBranchOutcome, SyncBranchRequest, SYNC_DEFAULT_TARGET};
pub use taxonomy::{
    CategorySummary, TaxonomyListOutcome, TaxonomyShowOutcome, TaxonomySnippetOutcome,
    TaxonomyWriteOutcome,
};
pub use watch::{
    SkippedChunk, WatchAddRequest, WatchFileReport, WatchOutcome, WatchRemoveRequest,
    WatchScanRequest, WatchedFile, WATCH_LIST_NAMESPACE, WATCH_NAMESPACE,
};
pub use watch_manage::{
    WatchFormatsOutcome, WatchListItem, WatchListOutcome, WatchRemoveOutcome, WatchStatusItem,
    WatchStatusOutcome,
};

/// Settings of a [`Memoir`] handle, filled by the face from its flags and environment.
#[derive(Debug, Clone)]
pub struct Options {
    /// How long to wait for a store another process holds before failing (exit 7).
    pub lock_timeout: Duration,
    /// The clock (fixed for reproducible ids and output).
    pub clock: Clock,
    /// Keep the store open between operations (servers), releasing it when idle; see
    /// [`Memoir::release_if_idle`].
    pub keep_open: bool,
    /// The model used by the classifier, `llm_merge` and the LLM picker (none: those steps
    /// fall back or refuse, as each operation documents).
    pub llm: Option<ProviderConfig>,
    /// The embedding model of search by meaning (none: search is lexical, and asking for
    /// `semantic` is an error).
    pub embed: Option<crate::embed::EmbedConfig>,
    /// Merge policy of writes that name none (else the per-type default by key prefix).
    pub merge_policy: Option<MergePolicy>,
    /// How many entries `append` keeps per record.
    pub facet_cap: FacetCap,
    /// How many decoded tree nodes the handle keeps between and within operations. Many
    /// serve a long-lived handle (a server, a program) and operations that walk a tree more
    /// than once (merge); few serve a one-shot read, which reads each node once and is faster
    /// when the memory of the nodes it is done with is used again.
    pub node_cache: usize,
    /// Where a store this process cannot write (a read-only file system, no permission) is
    /// read from: a private copy of its database is made here. `None`: such a store is
    /// refused. Faces pass the system's temporary directory.
    pub scratch_dir: Option<std::path::PathBuf>,
    /// Credentials and endpoint of S3 remotes (never stored in the store).
    #[cfg(feature = "remote")]
    pub s3: crate::repo::remote::S3Settings,
}

impl Options {
    /// How the store is opened or created under these options.
    pub(crate) fn store_options(&self) -> OpenOptions {
        OpenOptions {
            lock_timeout: self.lock_timeout,
            scratch_dir: self.scratch_dir.clone(),
            verify: Some(crate::object::record_verifies),
            ..OpenOptions::default()
        }
    }
}

impl Default for Options {
    /// A 5 s lock wait, the system clock, no model, the per-type merge policies, a node cache
    /// of [`crate::prolly::DEFAULT_CACHE_NODES`].
    fn default() -> Self {
        Options {
            lock_timeout: Duration::from_secs(5),
            clock: Clock::system(),
            keep_open: false,
            llm: None,
            embed: None,
            merge_policy: None,
            facet_cap: FacetCap::default(),
            node_cache: crate::prolly::DEFAULT_CACHE_NODES,
            scratch_dir: None,
            #[cfg(feature = "remote")]
            s3: Default::default(),
        }
    }
}

/// The revision a read looks at: `at` (any revision) if given, else the tip of `branch` (which
/// must exist), else HEAD.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadPoint {
    /// A revision: branch, commit id or unique prefix, `HEAD~2`, `main@{yesterday}`, ...
    pub at: Option<String>,
    /// A branch, read without moving HEAD.
    pub branch: Option<String>,
}

impl ReadPoint {
    /// HEAD.
    pub fn head() -> Self {
        ReadPoint::default()
    }

    /// Any revision.
    pub fn at(rev: impl Into<String>) -> Self {
        ReadPoint {
            at: Some(rev.into()),
            branch: None,
        }
    }

    /// The tip of a branch.
    pub fn branch(name: impl Into<String>) -> Self {
        ReadPoint {
            at: None,
            branch: Some(name.into()),
        }
    }
}

/// Who writes, where: the branch (none: the branch HEAD is on; a missing branch is created
/// from HEAD), the commit author, and the provenance recorded on the commit and the entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteAs {
    /// Branch written to, without moving HEAD.
    pub branch: Option<String>,
    /// Commit author.
    pub author: String,
    /// Where the memory comes from.
    pub source: Option<String>,
    /// Who writes it (an agent id).
    pub actor: Option<String>,
}

/// Longest author, source or actor accepted, in bytes.
pub const MAX_SIGNATURE_BYTES: usize = 1024;

impl WriteAs {
    /// `content` as a new entry written by this writer (its source and actor, when not
    /// empty), related to no other key.
    pub(crate) fn incoming(
        &self,
        content: String,
        confidence: f64,
        timestamp: f64,
    ) -> crate::memory::Incoming {
        crate::memory::Incoming {
            content,
            confidence,
            timestamp,
            source: self.source.clone().filter(|x| !x.is_empty()),
            actor: self.actor.clone().filter(|x| !x.is_empty()),
            related_keys: Vec::new(),
            related_sets: Vec::new(),
        }
    }

    /// Checks the provenance a write records: author, source and actor are one line each
    /// (no control characters, so `log` and `blame` cannot be made to show forged lines) and
    /// at most [`MAX_SIGNATURE_BYTES`] long (exit 1).
    pub fn check(&self) -> MemoirResult<()> {
        let fields = [
            ("author", Some(&self.author)),
            ("source", self.source.as_ref()),
            ("actor", self.actor.as_ref()),
        ];
        for (what, value) in fields {
            let Some(v) = value else { continue };
            if v.chars().any(char::is_control) {
                return Err(MemoirError::invalid(format!(
                    "the {what} contains a control character (a newline, tab or escape); it must be one line of text"
                )));
            }
            if v.len() > MAX_SIGNATURE_BYTES {
                return Err(MemoirError::invalid(format!(
                    "the {what} is longer than {MAX_SIGNATURE_BYTES} bytes"
                )));
            }
        }
        Ok(())
    }

    /// Writes by `author` to the branch HEAD is on.
    pub fn author(author: impl Into<String>) -> Self {
        WriteAs {
            author: author.into(),
            ..WriteAs::default()
        }
    }
}

/// What an operation hands back: serialisable to the contract's JSON, with the exit code of a
/// partial failure (a reported conflict, a single missing key) that is not an error.
pub trait Outcome: Serialize {
    /// The exit code the command line reports for this outcome (0 unless partly failed).
    fn exit_code(&self) -> u8 {
        exit::OK
    }

    /// What went wrong, for the `error` member of a partly failed outcome's JSON (used when
    /// the outcome carries no error text of its own).
    fn error_message(&self) -> Option<String> {
        None
    }

    /// The branch this write created (`--branch` naming a missing one), which the command
    /// line says on stderr.
    fn created_branch(&self) -> Option<&CreatedBranch> {
        None
    }

    /// Whether the outcome's own serialisation writes every object's members in sorted
    /// order, as printed JSON has them, so that [`Outcome::write_json`] may write it straight
    /// out instead of through a value tree (a test of each such outcome holds it to that).
    const MEMBERS_SORTED: bool = false;

    /// Writes the JSON `memoir --json` prints: [`Outcome::to_json`], pretty, members sorted,
    /// with a final newline, through a buffer of its own. An outcome whose members serialise
    /// sorted is written straight out, without building a value tree first (a diff of a
    /// thousand records is hundreds of kilobytes of it). Every implementation's is
    /// [`outcome_json!`](crate::outcome_json)'s.
    fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()>;

    /// The outcome as the JSON `memoir --json` prints. A partly failed outcome (a non-zero
    /// [`Outcome::exit_code`]) keeps its members and carries, like every failure,
    /// `success: false`, `error` and `code`. Every implementation's is
    /// [`outcome_json!`](crate::outcome_json)'s.
    fn to_json(&self) -> serde_json::Value;
}

/// The application handle on one store directory.
///
/// Opening is cheap and touches nothing: each operation opens the store (taking its LOCK)
/// for as long as it needs it, unless [`Options::keep_open`] keeps it open between
/// operations. A path that is not a store is reported by the first operation (exit 3).
#[derive(Debug)]
pub struct Memoir {
    path: PathBuf,
    opts: Options,
    kept: Option<KeptOpenStore>,
    /// With a held store: the lexical index of the last read.
    warm: search::WarmIndex,
    /// The embedding model, once loaded, and the vectors of the last search by meaning.
    meaning: meaning::Meaning,
    /// The commit graph and tree nodes every repository handle opened here shares.
    caches: SharedCaches,
    /// The last summary of agents, kept until a branch moves.
    agents: agents::AgentsCache,
    /// Documents parsed by [`Memoir::find_documents`], by record id.
    documents: documents::DocumentCache,
}

impl Memoir {
    /// A handle on the store at `path` (nothing is read yet).
    pub fn open(path: impl AsRef<Path>, options: Options) -> Memoir {
        let kept = options.keep_open.then(KeptOpenStore::default);
        Memoir {
            path: absolute(path.as_ref()),
            kept,
            warm: search::WarmIndex::default(),
            meaning: meaning::Meaning::default(),
            caches: SharedCaches {
                nodes: crate::prolly::SharedNodeCache::new(options.node_cache),
                ..SharedCaches::default()
            },
            opts: options,
            agents: agents::AgentsCache::default(),
            documents: documents::DocumentCache::default(),
        }
    }

    /// The store directory (absolute).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the store and its history, then closes them: whether this is a usable store
    /// (not a store: exit 3; busy: exit 7). For faces that check before serving.
    pub fn check(&self) -> MemoirResult<()> {
        drop(self.open_repo()?);
        Ok(())
    }

    /// The options this handle runs with.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// The clock.
    pub fn clock(&self) -> Clock {
        self.opts.clock
    }

    /// For servers ([`Options::keep_open`]): closes the store if it was idle or held long
    /// enough that waiting processes deserve a turn. Call it between operations. Returns
    /// whether it was released.
    pub fn release_if_idle(&self) -> bool {
        self.kept.as_ref().is_some_and(|h| h.release_if_idle())
    }

    /// For servers: an operation just ended. The store stays open for the next one unless
    /// it was held long enough that waiting processes deserve a turn (then it is closed).
    /// Returns whether it was released.
    pub fn operation_done(&self) -> bool {
        self.kept.as_ref().is_some_and(|h| h.finished())
    }

    /// Closes a store kept open by [`Options::keep_open`] now.
    pub fn release(&self) {
        if let Some(h) = &self.kept {
            h.release();
        }
    }

    /// The store (the held one when kept open). For faces that still reach below the
    /// application layer while they move onto it.
    #[doc(hidden)]
    pub fn open_store_held(&self) -> MemoirResult<Store> {
        self.open_store()
    }

    /// Whether the store is kept open between operations.
    pub(crate) fn keeps_open(&self) -> bool {
        self.kept.is_some()
    }

    pub(crate) fn open_options(&self) -> OpenOptions {
        self.opts.store_options()
    }

    /// Opens the store (or takes the held one).
    pub(crate) fn open_store(&self) -> MemoirResult<Store> {
        let store = match &self.kept {
            Some(h) => h.open(&self.path, &self.open_options())?,
            None => Store::open(&self.path, &self.open_options())?,
        };
        // Ref moves are logged at this operation's time (a commit logs its own).
        store.set_ref_note(crate::store::RefNote {
            time: self.opts.clock.now_secs(),
            ..Default::default()
        });
        Ok(store)
    }

    /// Opens the store with its history (exit 3 if it is not a store).
    pub(crate) fn open_repo(&self) -> MemoirResult<Repo> {
        self.repo_of(self.open_store()?)
    }

    /// A repository handle on an opened store, sharing this handle's in-memory caches.
    pub(crate) fn repo_of(&self, store: Store) -> MemoirResult<Repo> {
        Ok(Repo::open(store)?.sharing_caches(&self.caches))
    }

    /// The configured model, with `model` overriding its model name.
    pub(crate) fn llm(&self, model: Option<&str>) -> Option<Box<dyn Llm>> {
        self.opts.llm.clone().map(|mut cfg| {
            if let Some(m) = model {
                cfg.model = m.to_string();
            }
            provider(cfg)
        })
    }

    /// The commit signature of a write: author, now, and actor/source metadata when given.
    pub(crate) fn signature(&self, w: &WriteAs) -> Signature {
        let mut metadata = BTreeMap::new();
        if let Some(a) = w.actor.as_ref().filter(|a| !a.is_empty()) {
            metadata.insert("actor".to_string(), a.clone());
        }
        if let Some(s) = w.source.as_ref().filter(|s| !s.is_empty()) {
            metadata.insert("source".to_string(), s.clone());
        }
        Signature {
            author: w.author.clone(),
            timestamp: self.opts.clock.now_secs(),
            metadata,
        }
    }

    /// Resolves a revision to a commit (unknown: exit 2; ambiguous prefix: exit 1).
    pub(crate) fn resolve_rev(&self, repo: &Repo, text: &str) -> MemoirResult<ObjectId> {
        Ok(repo.resolve(text, self.opts.clock.now_secs())?)
    }

    /// The commit a read looks at, and the branch it is the tip of when read by branch.
    pub(crate) fn read_commit(
        &self,
        repo: &Repo,
        at: &ReadPoint,
    ) -> MemoirResult<(Option<String>, ObjectId)> {
        match &at.at {
            Some(rev) => Ok((None, self.resolve_rev(repo, rev)?)),
            None => read_target(repo, at.branch.as_deref()),
        }
    }

    /// Runs the read `f` on the closed store when it is closed (as of its last close, without
    /// opening the database or taking the LOCK: see [`Store::read_closed`]), else, or when
    /// that read fails, on the opened store. A store kept open ([`Options::keep_open`]) is
    /// read open. When the closed read failed for want of an object, the opened store first
    /// checks its pack index files whole, rebuilding a damaged one.
    pub(crate) fn reading<T>(&self, f: impl Fn(&Repo) -> MemoirResult<T>) -> MemoirResult<T> {
        let mut recheck = false;
        if !self.keeps_open() {
            if let Some(store) = Store::read_closed(&self.path) {
                match self.repo_of(store).and_then(|repo| f(&repo)) {
                    Ok(v) => return Ok(v),
                    Err(e) => recheck = store_trouble(&e),
                }
            }
        }
        let repo = self.open_repo()?;
        if recheck {
            repo.store().check_index_files()?;
        }
        f(&repo)
    }

    /// The commit a read looks at and its tree root, in an open repository.
    pub(crate) fn read_root(
        &self,
        repo: &Repo,
        at: &ReadPoint,
    ) -> MemoirResult<(ObjectId, ObjectId)> {
        let (_, commit) = self.read_commit(repo, at)?;
        let root = repo.root_of(&commit)?;
        Ok((commit, root))
    }

    /// Opens the store for a read: the repository, the commit looked at and its tree root.
    pub(crate) fn open_read(&self, at: &ReadPoint) -> MemoirResult<(Repo, ObjectId, ObjectId)> {
        let repo = self.open_repo()?;
        let (_, commit) = self.read_commit(&repo, at)?;
        let root = repo.root_of(&commit)?;
        Ok((repo, commit, root))
    }
}

/// Whether a failed read points at the stored bytes (an object missing, damaged or not where
/// an index said), rather than at the request.
fn store_trouble(e: &MemoirError) -> bool {
    e.code() == exit::CORRUPT
        || matches!(
            e,
            MemoirError::Store(_)
                | MemoirError::Object(_)
                | MemoirError::Tree(_)
                | MemoirError::Repo(_)
        ) && e.code() == exit::ERROR
}

/// "; did you mean 'X'?" for a suggestion, else nothing.
pub(crate) fn did_you_mean(nearest: Option<String>) -> String {
    nearest
        .map(|n| format!("; did you mean '{n}'?"))
        .unwrap_or_default()
}

/// `path` made absolute (without resolving symlinks if it does not exist).
pub fn absolute(path: &Path) -> PathBuf {
    path.canonicalize()
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The tip of `branch` (which must exist: exit 2 naming it), else HEAD; with the branch name
/// when there is one.
pub(crate) fn read_target(
    repo: &Repo,
    branch: Option<&str>,
) -> MemoirResult<(Option<String>, ObjectId)> {
    match branch {
        Some(b) => match repo.branch_tip(b) {
            Ok(id) => Ok((Some(b.to_string()), id)),
            Err(RepoError::BranchNotFound(_)) => Err(MemoirError::not_found(format!(
                "branch '{b}' not found (from --branch or MEMOIR_BRANCH){}",
                did_you_mean(repo.nearest_branch(b)?)
            ))),
            Err(e) => Err(e.into()),
        },
        None => {
            let id = repo.head_commit()?;
            let name = match repo.head()? {
                Head::Branch(b) => Some(b),
                Head::Detached(_) => None,
            };
            Ok((name, id))
        }
    }
}
