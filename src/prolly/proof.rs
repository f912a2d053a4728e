//! Merkle proofs: the nodes on the path from a root to the leaf whose region holds a key.
//!
//! A [`Proof`] names one key and carries the encoded bytes of every node from the root down to
//! the leaf that would hold it. Anyone holding the root id can check it without a store:
//! each node is re-hashed exactly as object ids are defined (BLAKE3 key derivation with the
//! node context), the first must hash to the root, and each next one must be the child its
//! parent routes the key to (the same routing as a point get), one level lower, down to a
//! leaf. The leaf then shows the key's value id, or its absence. Encoding: `store-format.md`,
//! section 11.

use super::node::{Node, MAX_KEY_BYTES, MAX_LEVEL};
use super::{check_key, NodeStore, ProllyResult};
use crate::object::cbor::{CborError, Decoder, Encoder};
use crate::object::{Kind, Object, ObjectId};

/// Version number that opens every encoded proof.
pub const PROOF_VERSION: u64 = 1;
/// Most nodes a proof may hold: one per level, levels `0..=MAX_LEVEL`.
pub const MAX_PROOF_NODES: usize = MAX_LEVEL as usize + 1;
/// Most bytes one node of a proof may have: the items' bound (format section 5) plus the
/// largest node and item-array heads.
pub const MAX_PROOF_NODE_BYTES: usize = super::chunker::MAX_NODE + 16;

/// Why a proof does not prove anything about a key under a root. Never a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// The proof bytes are not a canonical encoding of a proof.
    #[error("proof does not decode: {0}")]
    Decode(#[from] CborError),
    /// The proof's version number is not one this code knows.
    #[error("unknown proof version {0}")]
    Version(u64),
    /// The proof holds no node, more than [`MAX_PROOF_NODES`], or a node over
    /// [`MAX_PROOF_NODE_BYTES`].
    #[error("proof is out of bounds: {0}")]
    Bounds(&'static str),
    /// The key asked about is not a valid tree key.
    #[error("tree keys must be 1..={MAX_KEY_BYTES} bytes, got {0}")]
    BadKey(usize),
    /// The proof is about another key.
    #[error("proof is for another key")]
    KeyMismatch,
    /// The first node does not hash to the root.
    #[error("first node hashes to {found}, not to the root {expected}")]
    RootMismatch {
        /// The root asked about.
        expected: ObjectId,
        /// What the first node hashes to.
        found: ObjectId,
    },
    /// A node is not the child its parent routes the key to.
    #[error("node {index} hashes to {found}, its parent routes the key to {expected}")]
    ChildMismatch {
        /// Position of the node in the proof (0 = root).
        index: usize,
        /// The child id in the parent's item.
        expected: ObjectId,
        /// What the node hashes to.
        found: ObjectId,
    },
    /// A node's bytes are not a well-formed node.
    #[error("node {index} of the proof is not a node: {reason}")]
    BadNode {
        /// Position of the node in the proof (0 = root).
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A node is not at the level below its parent's, or is empty below the root, or an
    /// internal root has fewer than two children.
    #[error("node {index} breaks the tree's shape: {reason}")]
    Shape {
        /// Position of the node in the proof (0 = root).
        index: usize,
        /// The rule broken.
        reason: &'static str,
    },
    /// The proof stops above the leaf level.
    #[error("proof ends at level {0}, above the leaves")]
    Incomplete(u8),
    /// Nodes follow the leaf.
    #[error("{0} nodes follow the leaf")]
    Trailing(usize),
}

/// The nodes on the path from a root to the leaf whose region holds one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    /// The key the proof is about.
    pub key: Vec<u8>,
    /// Encoded node objects, root first, leaf last.
    pub nodes: Vec<Vec<u8>>,
}

impl NodeStore {
    /// A proof of `key`'s value, or of its absence, in the tree `root`: the encoded bytes of
    /// every node from the root to the leaf whose region holds the key (the leaf a point get
    /// would read, were it to descend by region alone).
    pub fn prove(&self, root: &ObjectId, key: &[u8]) -> ProllyResult<Proof> {
        check_key(key)?;
        let mut nodes = Vec::new();
        let mut id = *root;
        let mut level = None;
        loop {
            let node = match level {
                None => self.load(&id)?,
                Some(l) => self.load_at(&id, l)?,
            };
            // The encoding is canonical: re-encoding the (verified) node gives its stored bytes.
            nodes.push(node.encode());
            if node.level == 0 || node.items.is_empty() {
                break;
            }
            id = node.items[node.child_for(key)].id;
            level = Some(node.level - 1);
        }
        Ok(Proof {
            key: key.to_vec(),
            nodes,
        })
    }
}

impl Proof {
    /// Checks the proof against `root` and `key` without any store. Returns the value id the
    /// key maps to, or `None` when the proof shows the key is absent (the key falls in the
    /// leaf's region but the leaf does not hold it).
    pub fn verify(&self, root: &ObjectId, key: &[u8]) -> Result<Option<ObjectId>, ProofError> {
        if key.is_empty() || key.len() > MAX_KEY_BYTES {
            return Err(ProofError::BadKey(key.len()));
        }
        if self.key != key {
            return Err(ProofError::KeyMismatch);
        }
        if self.nodes.is_empty() {
            return Err(ProofError::Bounds("a proof holds at least one node"));
        }
        if self.nodes.len() > MAX_PROOF_NODES {
            return Err(ProofError::Bounds("too many nodes"));
        }
        let mut expected = *root;
        let mut parent_level: Option<u8> = None;
        for (index, bytes) in self.nodes.iter().enumerate() {
            if bytes.len() > MAX_PROOF_NODE_BYTES {
                return Err(ProofError::Bounds("node too large"));
            }
            let found = ObjectId::of(Kind::Node, bytes);
            if found != expected {
                return Err(if index == 0 {
                    ProofError::RootMismatch { expected, found }
                } else {
                    ProofError::ChildMismatch {
                        index,
                        expected,
                        found,
                    }
                });
            }
            let node = Node::decode(bytes).map_err(|e| ProofError::BadNode {
                index,
                reason: e.to_string(),
            })?;
            let shape = |reason| ProofError::Shape { index, reason };
            match parent_level {
                None => {
                    if node.level > 0 && node.items.len() < 2 {
                        return Err(shape("internal root with fewer than two children"));
                    }
                }
                Some(p) => {
                    if node.level + 1 != p {
                        return Err(shape("node is not one level below its parent"));
                    }
                    if node.items.is_empty() {
                        return Err(shape("empty node below the root"));
                    }
                }
            }
            if node.level == 0 {
                if index + 1 != self.nodes.len() {
                    return Err(ProofError::Trailing(self.nodes.len() - index - 1));
                }
                return Ok(node.leaf_value(key));
            }
            if index + 1 == self.nodes.len() {
                return Err(ProofError::Incomplete(node.level));
            }
            expected = node.items[node.child_for(key)].id;
            parent_level = Some(node.level);
        }
        // Unreachable: the loop returns at the leaf or at the last node.
        Err(ProofError::Bounds("a proof holds at least one node"))
    }

    /// Canonical CBOR: `[1, key: bytes, [node: bytes, ...]]` (format section 11).
    pub fn to_bytes(&self) -> Vec<u8> {
        let size: usize = self.nodes.iter().map(|n| n.len() + 5).sum();
        let mut e = Encoder::with_capacity(size + self.key.len() + 16);
        e.array(3);
        e.u64(PROOF_VERSION);
        e.bytes(&self.key);
        e.array(self.nodes.len());
        for n in &self.nodes {
            e.bytes(n);
        }
        e.into_bytes()
    }

    /// Decodes [`Proof::to_bytes`] strictly, within the bounds of section 11; never
    /// allocates more than the input's size.
    pub fn from_bytes(bytes: &[u8]) -> Result<Proof, ProofError> {
        let mut d = Decoder::new(bytes);
        let at = d.position();
        if d.array()? != 3 {
            return Err(CborError::Unexpected {
                expected: "proof array of three items",
                at,
            }
            .into());
        }
        let version = d.u64()?;
        if version != PROOF_VERSION {
            return Err(ProofError::Version(version));
        }
        let key = d.bytes()?;
        if key.is_empty() || key.len() > MAX_KEY_BYTES {
            return Err(ProofError::BadKey(key.len()));
        }
        let n = d.array()?;
        if n == 0 {
            return Err(ProofError::Bounds("a proof holds at least one node"));
        }
        if n > MAX_PROOF_NODES {
            return Err(ProofError::Bounds("too many nodes"));
        }
        let mut nodes = Vec::with_capacity(n);
        for _ in 0..n {
            let b = d.bytes()?;
            if b.len() > MAX_PROOF_NODE_BYTES {
                return Err(ProofError::Bounds("node too large"));
            }
            nodes.push(b.to_vec());
        }
        d.finish()?;
        Ok(Proof {
            key: key.to_vec(),
            nodes,
        })
    }
}
