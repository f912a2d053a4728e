//! Commit objects.

use std::collections::BTreeMap;

use crate::object::cbor::{CborError, Decoder, Encoder};
use crate::object::{Kind, Object, ObjectId};

/// Most parents a commit may have (a merge has two).
pub const MAX_PARENTS: usize = 16;

/// One version of the memory: a tree root, its parents, and who made it, when and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// Root id of the tree at this commit.
    pub root: ObjectId,
    /// Parent commits: none for the first commit, two for a merge (first parent = the branch
    /// merged into).
    pub parents: Vec<ObjectId>,
    /// Who made it (free text, e.g. `Name <email>`).
    pub author: String,
    /// When, in unix seconds (UTC).
    pub timestamp: i64,
    /// Why.
    pub message: String,
    /// Optional provenance such as `actor` and `source`; sorted by key.
    pub metadata: BTreeMap<String, String>,
}

impl Object for Commit {
    const KIND: Kind = Kind::Commit;

    fn field_count(&self) -> usize {
        6
    }

    fn size_hint(&self) -> usize {
        64 + 34 * self.parents.len() + self.author.len() + self.message.len()
    }

    fn encode_fields(&self, e: &mut Encoder) {
        e.bytes(self.root.as_bytes());
        e.array(self.parents.len());
        for p in &self.parents {
            e.bytes(p.as_bytes());
        }
        e.text(&self.author);
        e.i64(self.timestamp);
        e.text(&self.message);
        // Canonical map order is (length, bytes) of the keys.
        let mut keys: Vec<&String> = self.metadata.keys().collect();
        keys.sort_by(|a, b| (a.len(), a.as_bytes()).cmp(&(b.len(), b.as_bytes())));
        e.map(keys.len());
        for k in keys {
            e.text(k);
            e.text(&self.metadata[k]);
        }
    }

    fn decode_fields(d: &mut Decoder<'_>, n: usize) -> Result<Self, CborError> {
        if n != 6 {
            return Err(CborError::Unexpected {
                expected: "commit with six fields",
                at: d.position(),
            });
        }
        let root = ObjectId::from_bytes(d.bytes_fixed::<32>()?);
        let at = d.position();
        let np = d.array()?;
        if np > MAX_PARENTS {
            return Err(CborError::TooLong { at, len: np as u64 });
        }
        let mut parents = Vec::with_capacity(np);
        for _ in 0..np {
            parents.push(ObjectId::from_bytes(d.bytes_fixed::<32>()?));
        }
        let author = d.text()?.to_string();
        let timestamp = d.i64()?;
        let message = d.text()?.to_string();
        let nm = d.map()?;
        let mut metadata = BTreeMap::new();
        let mut prev: Option<&str> = None;
        for _ in 0..nm {
            let k = d.map_key(prev)?;
            prev = Some(k);
            metadata.insert(k.to_string(), d.text()?.to_string());
        }
        Ok(Commit {
            root,
            parents,
            author,
            timestamp,
            message,
            metadata,
        })
    }
}
