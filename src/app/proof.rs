//! `proof` and `verify`: Merkle proofs that a key has a value (or is absent) under a tree
//! root, made from the store and checked without trusting it.

use serde::Serialize;

use crate::object::{from_hex, to_hex, ObjectId};
use crate::prolly::Proof;

use super::ids::{hex, hex_opt};
use super::input::check_proof_size;
use super::{exit, parse_key, Memoir, MemoirError, MemoirResult, Outcome, ReadPoint};

/// A proof made.
#[derive(Debug, Clone, Serialize)]
pub struct ProofOutcome {
    /// Always true.
    pub success: bool,
    /// The key's path.
    pub key: String,
    /// Its namespace.
    pub namespace: String,
    /// `ns:path`.
    #[serde(skip)]
    pub full_key: String,
    /// The commit read.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// Its tree root, which the proof is checked against.
    #[serde(serialize_with = "hex")]
    pub root: ObjectId,
    /// Whether the key has a value.
    pub found: bool,
    /// The value's id (null when absent).
    #[serde(serialize_with = "hex_opt")]
    pub value: Option<ObjectId>,
    /// The proof's bytes, in hex.
    pub proof: String,
    /// How many bytes the proof has.
    pub proof_bytes: usize,
}

impl Outcome for ProofOutcome {
    crate::outcome_json!();
}

/// A proof checked (one that does not check is an error, exit 1).
#[derive(Debug, Clone, Serialize)]
pub struct VerifyOutcome {
    /// Always true.
    pub success: bool,
    /// Always true.
    pub valid: bool,
    /// The key's path.
    pub key: String,
    /// Its namespace.
    pub namespace: String,
    /// `ns:path`.
    #[serde(skip)]
    pub full_key: String,
    /// The tree root checked against.
    #[serde(serialize_with = "hex")]
    pub root: ObjectId,
    /// Whether the proof shows a value.
    pub found: bool,
    /// The value's id (null when the proof shows the key absent).
    #[serde(serialize_with = "hex_opt")]
    pub value: Option<ObjectId>,
}

impl Outcome for VerifyOutcome {
    crate::outcome_json!();
}

impl Memoir {
    /// A proof that `key` (`path` or `ns:path`) has its value, or is absent, in the tree of
    /// a read point. The proof is checked before it is returned (failing: exit 5).
    pub fn proof(
        &self,
        key: &str,
        namespace: Option<&str>,
        at: &ReadPoint,
    ) -> MemoirResult<ProofOutcome> {
        let key = parse_key(key, namespace)?;
        let (commit, root, proof) = self.reading(|repo| {
            let (commit, root) = self.read_root(repo, at)?;
            Ok((commit, root, repo.tree().prove(&root, &key.encode())?))
        })?;
        let value = proof
            .verify(&root, &key.encode())
            .map_err(|e| MemoirError::coded(exit::CORRUPT, e.to_string()))?;
        let bytes = proof.to_bytes();
        Ok(ProofOutcome {
            success: true,
            key: key.path().to_string(),
            namespace: key.namespace().to_string(),
            full_key: key.to_string(),
            commit,
            root,
            found: value.is_some(),
            value,
            proof: to_hex(&bytes),
            proof_bytes: bytes.len(),
        })
    }

    /// Checks `proof` (hex, surrounding whitespace ignored) for `key` against tree `root`
    /// (a full id; no store is opened), else against the root of the read point's commit.
    /// A proof that is not hex, does not decode or does not check is exit 1.
    pub fn verify(
        &self,
        key: &str,
        namespace: Option<&str>,
        proof: &str,
        root: Option<&str>,
        at: &ReadPoint,
    ) -> MemoirResult<VerifyOutcome> {
        let key = parse_key(key, namespace)?;
        check_proof_size(proof)?;
        let bytes =
            from_hex(proof.trim()).ok_or_else(|| MemoirError::invalid("the proof is not hex"))?;
        let proof = Proof::from_bytes(&bytes)
            .map_err(|e| MemoirError::invalid(format!("the proof does not decode: {e}")))?;
        let root = match root {
            Some(r) => r.trim().parse::<ObjectId>().map_err(|_| {
                MemoirError::invalid(format!("--root {r:?} is not a full object id"))
            })?,
            None => self.reading(|repo| Ok(self.read_root(repo, at)?.1))?,
        };
        let value = proof
            .verify(&root, &key.encode())
            .map_err(|e| MemoirError::invalid(format!("the proof does not check: {e}")))?;
        Ok(VerifyOutcome {
            success: true,
            valid: true,
            key: key.path().to_string(),
            namespace: key.namespace().to_string(),
            full_key: key.to_string(),
            root,
            found: value.is_some(),
            value,
        })
    }
}
