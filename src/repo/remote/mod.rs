//! Remotes: sharing history through plain object storage (a directory, or an S3-compatible
//! bucket), with no memoir server.
//!
//! A remote holds immutable packs of objects, each with an index, and for every branch a
//! numbered series of immutable ref versions; the newest version is the branch's tip. A push
//! uploads the objects the remote lacks in packs, then creates the next version with a
//! put-if-absent write, so of two machines pushing at once exactly one creates it and the
//! other is told the branch moved. The layout is [`layout`]'s, written in `store-format.md`.
//!
//! What moves is only what the other side lacks: [`Repo::delta`](crate::repo::Repo::delta)
//! walks the difference of trees (equal subtrees are never entered), and a fetch downloads only the objects (byte
//! ranges of packs) absent locally, re-hashing every one before anything points at it.
//!
//! Nothing a remote says is trusted: every read states the most it accepts (the layout's
//! bounds, and an index's entries are checked against its pack's size), so a hostile remote
//! is refused as damaged before anything large is read or allocated.

mod delta;
mod fetch;
pub mod layout;
mod prune;
mod push;
mod stores;
mod transport;

#[cfg(feature = "remote")]
mod directory;
#[cfg(feature = "remote")]
mod s3;
#[cfg(feature = "remote")]
mod sigv4;
#[cfg(feature = "remote")]
mod xml;

pub use delta::Delta;
pub use fetch::{read_heads, FetchReport, RemoteHeads};
pub use layout::{RefVersion, MAX_PACK_BYTES};
pub use prune::PruneReport;
pub use push::{PushPlan, PushReport};
pub use transport::{Entry, Got, MemoryTransport, Transport, TransportError};

#[cfg(feature = "remote")]
pub use directory::Directory;
#[cfg(feature = "remote")]
pub use s3::{S3Bucket, S3Settings};

use super::RepoError;
use crate::object::ObjectId;

/// Prefix of remote-tracking refs: `refs/remotes/<remote>/<branch>`.
pub const TRACKING_PREFIX: &str = "refs/remotes/";

/// What a long transfer has done so far, for a progress display.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Objects sent or received so far.
    pub objects: u64,
    /// Of how many.
    pub objects_total: u64,
    /// Bytes sent or received so far.
    pub bytes: u64,
    /// Of how many.
    pub bytes_total: u64,
}

/// Errors of remote operations.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The local repository failed.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// The object storage failed (network, permissions, missing bucket).
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The remote branch is not an ancestor of what is pushed, or moved while pushing: the
    /// push changed nothing.
    #[error("{0}")]
    NotFastForward(String),
    /// The remote holds damaged or inconsistent data; nothing local was changed.
    #[error("the remote is damaged: {0}")]
    Corrupt(String),
    /// The URL holds something that is not a memoir remote, or of a newer layout.
    #[error("{0}")]
    NotARemote(String),
    /// A branch the remote does not have.
    #[error("the remote has no branch '{0}'")]
    NoSuchBranch(String),
}

/// Results of remote operations.
pub type RemoteResult<T> = Result<T, RemoteError>;

/// The tracking ref of `branch` of remote `remote`.
pub fn tracking_ref(remote: &str, branch: &str) -> String {
    format!("{TRACKING_PREFIX}{remote}/{branch}")
}

/// A commit id from its hex form in remote data.
pub(crate) fn parse_commit(text: &str, what: &str) -> RemoteResult<ObjectId> {
    crate::object::from_hex(text)
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .map(ObjectId::from_bytes)
        .ok_or_else(|| RemoteError::Corrupt(format!("{what} holds '{text}', not a commit id")))
}
