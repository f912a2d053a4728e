//! The prolly tree: a content-defined, counted B-tree of `key -> value id`.
//!
//! Node boundaries come from the keys themselves ([`chunker`]), so a tree's shape, and its
//! root id, depend only on its set of entries, never on the order of edits. Internal items
//! carry each child's first and last key and its key count, which makes counts, range counts
//! and prefix histograms cost O(groups x height) node reads instead of O(keys). Nodes are
//! immutable objects; an edit writes new nodes along the touched paths only.
//!
//! A tree is named by its root node id. The empty tree is an empty leaf.

mod cache;
pub mod chunker;
mod cursor;
mod diff;
mod edit;
pub mod node;
mod proof;
mod reach;
mod read;
mod verify;

pub use diff::{Change, PARALLEL_DIFF_LEVEL};
pub use edit::{ApplyStats, Edit};
pub use node::{Item, KeyBytes, Node, MAX_KEY_BYTES};
pub use proof::{Proof, ProofError, MAX_PROOF_NODES, MAX_PROOF_NODE_BYTES, PROOF_VERSION};
pub use reach::{IdHasher, IdMap, IdSet, MarkStats};
pub use read::{prefix_range, KeyRange};
pub use verify::{NodeSource, TreeChecker, TreeReport, Violation};

use std::sync::{Arc, Mutex};

use cache::NodeCache;

use crate::object::{Object, ObjectError, ObjectId, Objects};
use crate::store::ObjectStore;

/// Errors of the tree layer.
#[derive(Debug, thiserror::Error)]
pub enum ProllyError {
    /// Reading or writing an object failed (missing, corrupt, store error).
    #[error(transparent)]
    Object(#[from] ObjectError),
    /// A key given to the tree is empty or longer than [`MAX_KEY_BYTES`].
    #[error("tree keys must be 1..={MAX_KEY_BYTES} bytes, got {0}")]
    BadKey(usize),
    /// Input that must be strictly ascending was not.
    #[error("input keys are not strictly ascending")]
    Unsorted,
}

/// Result alias of the tree layer.
pub type ProllyResult<T> = Result<T, ProllyError>;

pub(crate) fn corrupt(id: &ObjectId, reason: impl Into<String>) -> ProllyError {
    ProllyError::Object(ObjectError::Corrupt {
        id: *id,
        reason: reason.into(),
    })
}

/// Default number of decoded nodes kept in memory. A decoded node holds its stored bytes
/// (about 4 KiB) and its item table (72 bytes an item), so a full cache takes about 60 MiB.
/// Large enough for the working set of a diff or merge over ~100k keys with thousands of
/// changes (two versions of most leaves); a working set larger than the cache gets almost
/// no hits when it is walked repeatedly (the CLOCK rule, like LRU, evicts what a cyclic
/// walk needs next).
pub const DEFAULT_CACHE_NODES: usize = 8192;

/// Tree operations over an object store, with a cache of decoded nodes.
///
/// Nodes are immutable and named by their hash, so the cache never needs invalidation.
pub struct NodeStore {
    objects: Objects,
    cache: SharedNodeCache,
}

/// A cache of decoded nodes that several [`NodeStore`]s may share (even over different
/// handles on one store, or over different stores: a node is named by its hash, so a
/// cached node is right wherever its id is asked for).
#[derive(Clone)]
pub struct SharedNodeCache(Arc<Mutex<NodeCache>>);

impl SharedNodeCache {
    /// A cache of up to `nodes` decoded nodes.
    pub fn new(nodes: usize) -> SharedNodeCache {
        SharedNodeCache(Arc::new(Mutex::new(NodeCache::new(nodes.max(16)))))
    }
}

impl Default for SharedNodeCache {
    /// A cache of [`DEFAULT_CACHE_NODES`] nodes.
    fn default() -> Self {
        SharedNodeCache::new(DEFAULT_CACHE_NODES)
    }
}

impl NodeStore {
    /// Tree access over `store`, caching up to `cache_nodes` decoded nodes.
    pub fn new(store: Arc<dyn ObjectStore>, cache_nodes: usize) -> Self {
        NodeStore::with_cache(store, SharedNodeCache::new(cache_nodes))
    }

    /// Tree access over `store` with the node cache `cache`.
    pub fn with_cache(store: Arc<dyn ObjectStore>, cache: SharedNodeCache) -> Self {
        NodeStore {
            objects: Objects::new(store),
            cache,
        }
    }

    /// The verified object access underneath.
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    /// Loads a node: from the cache, or read, hash-verified and decoded.
    pub fn load(&self, id: &ObjectId) -> ProllyResult<Arc<Node>> {
        self.load_keeping(id, true)
    }

    /// Loads a node as [`NodeStore::load`] does; a node it reads is kept in the cache only
    /// with `keep`. A walk that visits each node once (a one-off diff) passes its leaves
    /// by, which would otherwise all stay alive decoded, each in fresh memory.
    pub(crate) fn load_keeping(&self, id: &ObjectId, keep: bool) -> ProllyResult<Arc<Node>> {
        if let Some(n) = self.cache_lock().get(id) {
            return Ok(n);
        }
        let bytes = self.objects.read_bytes(id, crate::object::Kind::Node)?;
        let node = Arc::new(Node::decode_shared(bytes).map_err(|e| corrupt(id, e.to_string()))?);
        if keep {
            self.cache_lock().put(*id, node.clone());
        }
        Ok(node)
    }

    /// Loads a node that must be at `level` (a child of a node at `level + 1`).
    pub(crate) fn load_at(&self, id: &ObjectId, level: u8) -> ProllyResult<Arc<Node>> {
        let n = self.load(id)?;
        if n.level != level {
            return Err(corrupt(
                id,
                format!("node is at level {}, its parent expects {}", n.level, level),
            ));
        }
        if n.items.is_empty() {
            return Err(corrupt(id, "empty node below the root"));
        }
        Ok(n)
    }

    fn cache_lock(&self) -> std::sync::MutexGuard<'_, NodeCache> {
        self.cache.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The id of the empty tree, writing its (single, empty) node if needed.
    pub fn empty(&self) -> ProllyResult<ObjectId> {
        let node = Node {
            level: 0,
            items: Vec::new(),
        };
        let id = self.objects.write(&node)?;
        Ok(id)
    }

    /// The id the empty tree has (without writing it).
    pub fn empty_id() -> ObjectId {
        Node {
            level: 0,
            items: Vec::new(),
        }
        .to_bytes_and_id()
        .0
    }
}

pub(crate) fn check_key(key: &[u8]) -> ProllyResult<()> {
    if key.is_empty() || key.len() > MAX_KEY_BYTES {
        return Err(ProllyError::BadKey(key.len()));
    }
    Ok(())
}
