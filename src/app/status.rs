//! `new` and `status`: create a store; where it is, which branch, how many commits and
//! memories.

use serde::Serialize;

use crate::key::{group_prefix, is_internal_namespace, split_encoded};
use crate::llm::ProviderConfig;
use crate::object::ObjectId;
use crate::prolly::KeyRange;
use crate::repo::{Head, Repo, RepoError, HEAD};
use crate::store::{RefStore, Store, StoreError};

use super::{Memoir, MemoirError, MemoirResult, Outcome, WriteAs};

/// Message of a store's first commit.
pub const INIT_MESSAGE: &str = "Initialize memoir store";

/// What `new` created.
#[derive(Debug, Clone, Serialize)]
pub struct CreateOutcome {
    /// Always true.
    pub success: bool,
    /// `Created store at <abs>`.
    pub message: String,
    /// The store directory (absolute).
    pub path: String,
    /// The first commit.
    #[serde(skip)]
    pub commit: ObjectId,
}

impl Outcome for CreateOutcome {
    crate::outcome_json!();
}

/// The state of a store.
#[derive(Debug, Clone, Serialize)]
pub struct StatusOutcome {
    /// Always true.
    pub success: bool,
    /// The store directory (absolute).
    pub path: String,
    /// Always true (a missing store is an error).
    pub exists: bool,
    /// Whether it has a history yet.
    pub initialized: bool,
    /// The branch HEAD is on (null when detached or uninitialised).
    pub branch: Option<String>,
    /// Commits reachable from HEAD.
    pub commit_count: u64,
    /// Memories at HEAD.
    pub memory_count: u64,
    /// Namespaces at HEAD, sorted.
    pub namespaces: Vec<String>,
    /// The model the classifier, `llm_merge` and the LLM picker use (null: none configured).
    pub llm: Option<LlmInfo>,
    /// HEAD's commit (none before the first commit).
    #[serde(skip)]
    pub head: Option<ObjectId>,
}

impl Outcome for StatusOutcome {
    crate::outcome_json!();
}

/// The model a handle is configured with, as `status` reports it (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LlmInfo {
    /// `openai`, `anthropic` or `command`.
    pub provider: String,
    /// The model name (empty for a command that names none).
    pub model: String,
    /// Where requests go: the full URL, or the command line.
    pub endpoint: String,
    /// Whether an API key is sent with each request.
    pub api_key_set: bool,
    /// How the face chose this model (which setting selected it, what else is set and
    /// unused); empty when it did not say.
    pub origin: String,
}

impl LlmInfo {
    /// What `cfg` configures.
    pub fn of(cfg: &ProviderConfig) -> Self {
        LlmInfo {
            provider: cfg.provider_name().to_string(),
            model: cfg.model.clone(),
            endpoint: cfg.endpoint(),
            api_key_set: cfg.api_key.is_some(),
            origin: cfg.origin.clone(),
        }
    }
}

impl Memoir {
    /// Creates a store at `path` (a new or empty directory) with its first commit, and
    /// returns a handle on it with `options`. A non-empty directory that is not a store, or
    /// an existing store, is refused (exit 1) and left untouched.
    pub fn create(
        path: impl AsRef<std::path::Path>,
        options: super::Options,
        author: &WriteAs,
    ) -> MemoirResult<(Memoir, CreateOutcome)> {
        author.check()?;
        let refuse = |e: StoreError| MemoirError::invalid(e.to_string());
        let store = match Store::create(path.as_ref(), &options.store_options()) {
            Ok(s) => s,
            Err(e @ StoreError::AlreadyExists { .. }) => {
                // A store whose creation was killed before its first commit finished has no
                // HEAD: finish it. Any other existing store is refused, untouched.
                let s = Store::open(path.as_ref(), &options.store_options())?;
                if s.get_ref(HEAD)?.is_some() {
                    return Err(refuse(e));
                }
                s
            }
            Err(e @ StoreError::NotEmpty { .. }) => return Err(refuse(e)),
            Err(other) => return Err(other.into()),
        };
        let m = Memoir::open(path.as_ref(), options);
        let sig = m.signature(author);
        store.set_ref_note(crate::store::RefNote {
            time: sig.timestamp,
            author: sig.author.clone(),
            message: format!("create: {INIT_MESSAGE}"),
        });
        let repo = Repo::init(store, &sig, INIT_MESSAGE)?;
        let commit = repo.head_commit()?;
        drop(repo);
        super::ensure_store_git(path.as_ref()).map_err(|e| {
            MemoirError::invalid(format!(
                "created the store, but not its .git directory: {e}"
            ))
        })?;
        let path = super::absolute(path.as_ref()).display().to_string();
        let out = CreateOutcome {
            success: true,
            message: format!("Created store at {path}"),
            path,
            commit,
        };
        Ok((m, out))
    }

    /// The store's path, branch, commit and memory counts, and namespaces, and the model
    /// configured in [`super::Options::llm`].
    pub fn status(&self) -> MemoirResult<StatusOutcome> {
        let path = self.path().display().to_string();
        let llm = self.options().llm.as_ref().map(LlmInfo::of);
        match self.reading(|repo| self.status_of(repo, &path, llm.clone())) {
            // A store whose creation stopped before its first commit.
            Err(MemoirError::Repo(RepoError::NotInitialized)) => Ok(StatusOutcome {
                success: true,
                path,
                exists: true,
                initialized: false,
                branch: None,
                commit_count: 0,
                memory_count: 0,
                namespaces: Vec::new(),
                llm,
                head: None,
            }),
            other => other,
        }
    }

    /// [`Memoir::status`] of an initialized store.
    fn status_of(
        &self,
        repo: &Repo,
        path: &str,
        llm: Option<LlmInfo>,
    ) -> MemoirResult<StatusOutcome> {
        let path = path.to_string();
        let branch = match repo.head()? {
            Head::Branch(b) => Some(b),
            Head::Detached(_) => None,
        };
        let head = repo.head_commit()?;
        // From the commit graph (cached beside the store), not by reading every commit.
        let commit_count = repo.count_reachable(&[head])?;
        let root = repo.root_of(&head)?;
        // memoir's own records (taxonomy, watch list) are not memories.
        let users: Vec<(String, u64)> = namespace_counts(repo, &root)?
            .into_iter()
            .filter(|(n, _)| !is_internal_namespace(n))
            .collect();
        let memory_count = users.iter().map(|(_, c)| c).sum();
        let namespaces = users.into_iter().map(|(n, _)| n).collect();
        Ok(StatusOutcome {
            success: true,
            path,
            exists: true,
            initialized: true,
            branch,
            commit_count,
            memory_count,
            namespaces,
            llm,
            head: Some(head),
        })
    }
}

/// The error for a namespace given with `-n` that `known` (sorted) does not hold: exit 1,
/// listing the namespaces there are.
pub(crate) fn unknown_namespace(ns: &str, known: &[String]) -> MemoirError {
    MemoirError::invalid(format!(
        "namespace '{ns}' not found; namespaces: {}",
        if known.is_empty() {
            "(none)".to_string()
        } else {
            known.join(", ")
        }
    ))
}

/// Errors ([`unknown_namespace`]) unless namespace `ns` has a memory in the tree at `root`.
pub(crate) fn require_namespace(repo: &Repo, root: &ObjectId, ns: &str) -> MemoirResult<()> {
    let all = namespace_counts(repo, root)?;
    if all.iter().any(|(n, _)| n == ns) {
        return Ok(());
    }
    let names: Vec<String> = all.into_iter().map(|(n, _)| n).collect();
    Err(unknown_namespace(ns, &names))
}

/// The namespaces of a tree, sorted, with their key counts: O(namespaces x height).
pub(crate) fn namespace_counts(repo: &Repo, root: &ObjectId) -> MemoirResult<Vec<(String, u64)>> {
    let groups = repo
        .tree()
        .histogram(root, &KeyRange::all(), &|k| group_prefix(k, 0))?;
    Ok(groups
        .into_iter()
        .map(|(g, n)| (split_encoded(&g).0, n))
        .collect())
}
