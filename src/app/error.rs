//! The application's one error type, and the one place that says which exit code each error
//! maps to (the codes of the command-line contract, shared by every face).

use crate::glob::GlobError;
use crate::ingest::IngestError;
use crate::key::KeyError;
use crate::memory::MemoryError;
use crate::object::ObjectError;
use crate::prolly::ProllyError;
use crate::recall::RecallError;
use crate::repo::revision::RevParseError;
use crate::repo::RepoError;
use crate::store::StoreError;

/// Exit codes of the command-line contract; every face reports failures with them.
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// Any other error (invalid input, bad option combination, I/O).
    pub const ERROR: u8 = 1;
    /// A single requested key, branch or revision does not exist.
    pub const NOT_FOUND: u8 = 2;
    /// Usage errors share the not-found code.
    pub const USAGE: u8 = 2;
    /// The path is not a store.
    pub const NOT_A_STORE: u8 = 3;
    /// A conflict was left unresolved (reject policy, merge).
    pub const CONFLICT: u8 = 4;
    /// The store is corrupt (an object missing or damaged).
    pub const CORRUPT: u8 = 5;
    /// A branch cannot be fast-forwarded.
    pub const NON_FAST_FORWARD: u8 = 6;
    /// Another process holds the store's lock.
    pub const BUSY: u8 = 7;
}

/// Why an operation of [`crate::Memoir`] failed. [`MemoirError::code`] gives its exit code.
#[derive(Debug, thiserror::Error)]
pub enum MemoirError {
    /// Store layer.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Object layer.
    #[error(transparent)]
    Object(#[from] ObjectError),
    /// Tree layer.
    #[error(transparent)]
    Tree(#[from] ProllyError),
    /// History layer.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// A key or namespace breaks a rule.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A glob does not parse.
    #[error(transparent)]
    Glob(#[from] GlobError),
    /// A record given by the caller is invalid.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// Revision or branch-name syntax.
    #[error(transparent)]
    Rev(#[from] RevParseError),
    /// Recall and its index.
    #[error(transparent)]
    Recall(#[from] RecallError),
    /// Remotes: push, fetch and the object storage behind them.
    #[error(transparent)]
    Remote(#[from] crate::repo::remote::RemoteError),
    /// A document that cannot be read as text (exit 1).
    #[error(transparent)]
    Ingest(#[from] IngestError),
    /// A memory tool command refused (its message is the text the model is shown; exit 2
    /// when nothing is at the path, else 1).
    #[error(transparent)]
    MemoryFile(#[from] super::memory_files::MemoryFileError),
    /// A settings file cannot be read, or a setting not set (exit 1).
    #[error(transparent)]
    Config(#[from] super::config::ConfigError),
    /// The embedding model cannot be loaded or run (exit 1).
    #[error(transparent)]
    Embed(#[from] crate::embed::EmbedError),
    /// Invalid input or option combination (exit 1).
    #[error("{0}")]
    Invalid(String),
    /// What was asked for does not exist (exit 2).
    #[error("{0}")]
    NotFound(String),
    /// A hook event the host does not have (exit 2).
    #[error("{host} has no hook event '{event}' (events: {})", known.join(", "))]
    UnknownHookEvent {
        /// The host.
        host: &'static str,
        /// The event asked for.
        event: String,
        /// The host's events memoir handles.
        known: Vec<&'static str>,
    },
    /// A failure with an explicit exit code and message.
    #[error("{message}")]
    Coded {
        /// Exit code (see [`exit`]).
        code: u8,
        /// One-line message.
        message: String,
    },
}

/// Results of the application layer.
pub type MemoirResult<T> = Result<T, MemoirError>;

impl MemoirError {
    /// Exit 1 with this message.
    pub fn invalid(message: impl Into<String>) -> Self {
        MemoirError::Invalid(message.into())
    }

    /// Exit 2 with this message.
    pub fn not_found(message: impl Into<String>) -> Self {
        MemoirError::NotFound(message.into())
    }

    /// An explicit exit code with this message.
    pub fn coded(code: u8, message: impl Into<String>) -> Self {
        MemoirError::Coded {
            code,
            message: message.into(),
        }
    }

    /// Whether the path holds no store at all, or one whose creation was cut short before
    /// its first commit (as opposed to a damaged or busy one): a face that may create the
    /// store on first use (`mcp --init`) asks this, and [`crate::Memoir::create`] finishes
    /// a half-made store.
    pub fn is_not_a_store(&self) -> bool {
        matches!(
            self,
            MemoirError::Store(StoreError::NotAStore { .. })
                | MemoirError::Repo(RepoError::NotInitialized)
        )
    }

    /// The exit code of this error (the contract's; see [`exit`]).
    pub fn code(&self) -> u8 {
        match self {
            MemoirError::Store(s) => store_code(s),
            MemoirError::Object(o) => object_code(o),
            MemoirError::Tree(t) => tree_code(t),
            MemoirError::Repo(r) => repo_code(r),
            MemoirError::Key(_)
            | MemoirError::Glob(_)
            | MemoirError::Memory(_)
            | MemoirError::Rev(_)
            | MemoirError::Ingest(_)
            | MemoirError::Config(_)
            | MemoirError::Embed(_)
            | MemoirError::Invalid(_) => exit::ERROR,
            MemoirError::Recall(r) => match r {
                RecallError::Tree(t) => tree_code(t),
                RecallError::Load { .. } => exit::CORRUPT,
                _ => exit::ERROR,
            },
            MemoirError::Remote(r) => remote_code(r),
            MemoirError::MemoryFile(m) if m.is_not_found() => exit::NOT_FOUND,
            MemoirError::MemoryFile(_) => exit::ERROR,
            MemoirError::NotFound(_) => exit::NOT_FOUND,
            MemoirError::UnknownHookEvent { .. } => exit::USAGE,
            MemoirError::Coded { code, .. } => *code,
        }
    }
}

fn store_code(e: &StoreError) -> u8 {
    match e {
        StoreError::Busy { .. } => exit::BUSY,
        StoreError::NotAStore { .. } => exit::NOT_A_STORE,
        StoreError::EngineDamaged { .. } | StoreError::CannotRepair { .. } => exit::CORRUPT,
        _ => exit::ERROR,
    }
}

fn object_code(e: &ObjectError) -> u8 {
    match e {
        ObjectError::Store(s) => store_code(s),
        ObjectError::Missing(_) | ObjectError::Corrupt { .. } => exit::CORRUPT,
        ObjectError::PrefixNotFound(_) => exit::NOT_FOUND,
        ObjectError::Ambiguous { .. } | ObjectError::BadPrefix(_) => exit::ERROR,
    }
}

fn tree_code(e: &ProllyError) -> u8 {
    match e {
        ProllyError::Object(o) => object_code(o),
        _ => exit::ERROR,
    }
}

fn remote_code(r: &crate::repo::remote::RemoteError) -> u8 {
    use crate::repo::remote::RemoteError as E;
    match r {
        E::Repo(e) => repo_code(e),
        E::NotFastForward(_) => exit::NON_FAST_FORWARD,
        E::Corrupt(_) => exit::CORRUPT,
        E::NoSuchBranch(_) => exit::NOT_FOUND,
        E::Transport(_) | E::NotARemote(_) => exit::ERROR,
    }
}

fn repo_code(r: &RepoError) -> u8 {
    match r {
        RepoError::Store(s) => store_code(s),
        RepoError::Object(o) => object_code(o),
        RepoError::Tree(t) => tree_code(t),
        RepoError::NotInitialized => exit::NOT_A_STORE,
        RepoError::BranchNotFound(_) | RepoError::RevisionNotFound { .. } => exit::NOT_FOUND,
        RepoError::NotFastForward(_) => exit::NON_FAST_FORWARD,
        RepoError::BadStoredKey(_) | RepoError::BadRef { .. } => exit::CORRUPT,
        RepoError::AmbiguousRevision { .. }
        | RepoError::BadRevision(_)
        | RepoError::AlreadyInitialized
        | RepoError::BranchExists(_)
        | RepoError::CurrentBranch(_)
        | RepoError::BadName(_)
        | RepoError::RefMoved(_) => exit::ERROR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_of_library_errors() {
        let busy = StoreError::Busy {
            path: "/x".into(),
            waited_ms: 0,
        };
        assert_eq!(MemoirError::from(busy).code(), exit::BUSY);
        assert_eq!(
            MemoirError::from(RepoError::BranchNotFound("x".into())).code(),
            exit::NOT_FOUND
        );
        let id = crate::object::ObjectId::from_bytes([0; 32]);
        assert_eq!(
            MemoirError::from(RepoError::Object(ObjectError::Missing(id))).code(),
            exit::CORRUPT
        );
        assert_eq!(
            MemoirError::from(KeyError::EmptyPath(String::new())).code(),
            1
        );
        assert_eq!(MemoirError::not_found("x").code(), exit::NOT_FOUND);
        assert_eq!(MemoirError::coded(6, "x").code(), 6);
    }
}
