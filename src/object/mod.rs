//! Object layer: ids, kinds, the canonical encoding, and verified reads and writes.
//!
//! Every object is one canonical CBOR array whose first item is its kind number. Its id is
//! BLAKE3 (key-derivation mode, one context string per kind) of those bytes. Every read
//! re-hashes what the store returned, so a damaged object is reported as corruption naming
//! its id, never served.

pub mod cbor;
mod id;

pub(crate) use id::hex_nibbles;
pub use id::{from_hex, to_hex, ObjectId, ParseIdError};

use std::sync::Arc;

use crate::store::{Bytes, ObjectStore, PutOutcome, StoreError};
use cbor::{CborError, Decoder, Encoder};

/// The kinds of stored objects, with their tag numbers (the first item of every object).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A prolly tree node (leaf or internal).
    Node = 1,
    /// An opaque value: the bytes a tree key maps to.
    Blob = 2,
    /// A commit.
    Commit = 3,
}

impl Kind {
    /// The BLAKE3 key-derivation context of this kind: part of the format.
    pub fn context(self) -> &'static str {
        match self {
            Kind::Node => "memoir object v1 node",
            Kind::Blob => "memoir object v1 blob",
            Kind::Commit => "memoir object v1 commit",
        }
    }

    /// The kind with tag number `tag`.
    pub fn from_tag(tag: u64) -> Option<Kind> {
        match tag {
            1 => Some(Kind::Node),
            2 => Some(Kind::Blob),
            3 => Some(Kind::Commit),
            _ => None,
        }
    }

    /// Lower-case name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Node => "node",
            Kind::Blob => "blob",
            Kind::Commit => "commit",
        }
    }
}

/// Errors of the object layer.
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An object that should exist is not in the store.
    #[error("object {0} is missing from the store")]
    Missing(ObjectId),
    /// Stored bytes do not hash to their id, or do not decode under the profile and schema.
    #[error("object {id} is corrupt: {reason}")]
    Corrupt {
        /// The damaged object.
        id: ObjectId,
        /// What is wrong with it.
        reason: String,
    },
    /// No object id starts with the given hex prefix.
    #[error("no object id starts with {0:?}")]
    PrefixNotFound(String),
    /// Several object ids start with the given hex prefix.
    #[error("object id prefix {prefix:?} is ambiguous; candidates: {}", candidates.iter().map(|c| c.short(16)).collect::<Vec<_>>().join(", "))]
    Ambiguous {
        /// The prefix asked for.
        prefix: String,
        /// The ids that start with it (at most a few).
        candidates: Vec<ObjectId>,
    },
    /// The text is not a hex id prefix.
    #[error("not a hex object id prefix: {0:?}")]
    BadPrefix(String),
}

/// Result alias of the object layer.
pub type ObjectResult<T> = Result<T, ObjectError>;

/// A value that is stored as an object of one kind.
pub trait Object: Sized {
    /// The kind this type is stored as.
    const KIND: Kind;
    /// Writes the fields that follow the kind tag; `fields()` items in all.
    fn encode_fields(&self, e: &mut Encoder);
    /// Number of array items after the kind tag.
    fn field_count(&self) -> usize;
    /// Reads the fields that follow the kind tag (`n` items).
    fn decode_fields(d: &mut Decoder<'_>, n: usize) -> Result<Self, CborError>;
    /// A capacity hint for encoding.
    fn size_hint(&self) -> usize {
        64
    }

    /// The canonical bytes of this object.
    fn encode(&self) -> Vec<u8> {
        let mut e = Encoder::with_capacity(self.size_hint() + 4);
        e.array(self.field_count() + 1);
        e.u64(Self::KIND as u64);
        self.encode_fields(&mut e);
        e.into_bytes()
    }

    /// Decodes canonical bytes of this kind (strict: any deviation is an error).
    fn decode(bytes: &[u8]) -> Result<Self, CborError> {
        decode_object(bytes, Self::KIND, Self::decode_fields)
    }

    /// Encodes and computes the id.
    fn to_bytes_and_id(&self) -> (ObjectId, Vec<u8>) {
        let b = self.encode();
        (ObjectId::of(Self::KIND, &b), b)
    }
}

/// A store's error reading `id`: a stored copy it reports damaged is corruption of `id`.
fn store_error(id: &ObjectId, e: StoreError) -> ObjectError {
    match e {
        StoreError::Damaged { damage, .. } => ObjectError::Corrupt {
            id: *id,
            reason: damage.to_string(),
        },
        other => other.into(),
    }
}

/// Decodes the canonical bytes of an object of `kind`: the array head and the kind tag, then
/// `fields` reads the `n` items after the tag, and nothing may follow. [`Object::decode`] is
/// this with the type's own fields; a caller that reads the fields its own way (a tree node
/// that keeps its bytes) gets the same checks and errors.
pub fn decode_object<'a, T>(
    bytes: &'a [u8],
    kind: Kind,
    fields: impl FnOnce(&mut Decoder<'a>, usize) -> Result<T, CborError>,
) -> Result<T, CborError> {
    let mut d = Decoder::new(bytes);
    let n = d.array()?;
    let at = d.position();
    let tag = d.u64()?;
    if n == 0 || tag != kind as u64 {
        return Err(CborError::Unexpected {
            expected: kind.context(),
            at,
        });
    }
    let v = fields(&mut d, n - 1)?;
    d.finish()?;
    Ok(v)
}

/// An opaque value object: the bytes a tree key maps to (memory records, later).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob(pub Vec<u8>);

impl Object for Blob {
    const KIND: Kind = Kind::Blob;
    fn encode_fields(&self, e: &mut Encoder) {
        e.bytes(&self.0);
    }
    fn field_count(&self) -> usize {
        1
    }
    fn decode_fields(d: &mut Decoder<'_>, n: usize) -> Result<Self, CborError> {
        Ok(Blob(blob_field(d, n)?.to_vec()))
    }
    fn size_hint(&self) -> usize {
        self.0.len() + 9
    }
}

impl Blob {
    /// The payload of a blob's stored bytes, borrowed from them: [`Object::decode`] without
    /// the copy, for a reader that decodes the payload at once (a memory record).
    pub fn payload(bytes: &[u8]) -> Result<&[u8], CborError> {
        decode_object(bytes, Kind::Blob, blob_field)
    }
}

/// A blob's one field, its payload.
fn blob_field<'a>(d: &mut Decoder<'a>, n: usize) -> Result<&'a [u8], CborError> {
    if n != 1 {
        return Err(CborError::Unexpected {
            expected: "blob with one field",
            at: d.position(),
        });
    }
    d.bytes()
}

/// The kind tag of stored object bytes, read from the array head and first item.
pub fn peek_kind(bytes: &[u8]) -> Result<Kind, CborError> {
    let mut d = Decoder::new(bytes);
    d.array()?;
    let at = d.position();
    let tag = d.u64()?;
    Kind::from_tag(tag).ok_or(CborError::Unexpected {
        expected: "a known object kind",
        at,
    })
}

/// Verified access to objects in an [`ObjectStore`].
#[derive(Clone)]
pub struct Objects {
    store: Arc<dyn ObjectStore>,
}

impl Objects {
    /// Wraps a store.
    pub fn new(store: Arc<dyn ObjectStore>) -> Self {
        Objects { store }
    }

    /// The underlying store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The bytes of `id`, checked to be of `kind` and to hash to `id`, as the store holds
    /// them (see [`ObjectStore::get`]: possibly a window of a mapped pack, not a copy). A
    /// stored copy the store reports damaged is [`ObjectError::Corrupt`], saying what is
    /// wrong with it.
    pub fn read_bytes(&self, id: &ObjectId, kind: Kind) -> ObjectResult<Bytes> {
        let bytes = self
            .store
            .get(id.as_bytes())
            .map_err(|e| store_error(id, e))?
            .ok_or(ObjectError::Missing(*id))?;
        verify(id, kind, &bytes)?;
        Ok(bytes)
    }

    /// Reads and decodes an object of type `T`.
    pub fn read<T: Object>(&self, id: &ObjectId) -> ObjectResult<T> {
        let bytes = self.read_bytes(id, T::KIND)?;
        T::decode(&bytes).map_err(|e| ObjectError::Corrupt {
            id: *id,
            reason: e.to_string(),
        })
    }

    /// Encodes and stores an object; returns its id.
    pub fn write<T: Object>(&self, obj: &T) -> ObjectResult<ObjectId> {
        let (id, bytes) = obj.to_bytes_and_id();
        self.store.put(id.as_bytes(), &bytes)?;
        Ok(id)
    }

    /// Stores already-encoded objects together (one engine batch); each raw id must be the
    /// object's hash.
    pub fn write_encoded(&self, objects: &[([u8; 32], Vec<u8>)]) -> ObjectResult<Vec<PutOutcome>> {
        Ok(self.store.put_many(objects)?)
    }

    /// Whether `id` is stored.
    pub fn contains(&self, id: &ObjectId) -> ObjectResult<bool> {
        Ok(self.store.contains(id.as_bytes())?)
    }

    /// The unique stored id that starts with the hex `prefix` (at least 4 digits).
    pub fn resolve_prefix(&self, prefix: &str) -> ObjectResult<ObjectId> {
        let nibbles = hex_nibbles(prefix)
            .filter(|n| (4..=64).contains(&n.len()))
            .ok_or_else(|| ObjectError::BadPrefix(prefix.to_string()))?;
        let whole: Vec<u8> = nibbles.chunks_exact(2).map(|p| p[0] << 4 | p[1]).collect();
        let odd = (nibbles.len() % 2 == 1).then(|| nibbles[nibbles.len() - 1]);
        let mut found: Vec<ObjectId> = self
            .store
            .ids_with_prefix(&whole)?
            .into_iter()
            .filter(|raw| odd.is_none_or(|n| raw[whole.len()] >> 4 == n))
            .map(ObjectId::from_bytes)
            .collect();
        match found.len() {
            0 => Err(ObjectError::PrefixNotFound(prefix.to_string())),
            1 => Ok(found[0]),
            _ => {
                found.truncate(8);
                Err(ObjectError::Ambiguous {
                    prefix: prefix.to_string(),
                    candidates: found,
                })
            }
        }
    }
}

/// Why stored `bytes` whose kind tag could not be read (`e`) are not an object, in words.
pub fn unreadable_kind(bytes: &[u8], e: &CborError) -> String {
    if bytes.is_empty() {
        "its stored bytes are empty, so it is not an object".to_string()
    } else {
        format!("its stored bytes do not begin with an object kind tag ({e}), so they are damaged")
    }
}

/// Whether `bytes` are an object whose id is `id`: the check of a pack record that the store
/// asks for when it reads records without an index (see `OpenOptions::verify`).
pub fn record_verifies(id: &[u8; 32], bytes: &[u8]) -> bool {
    peek_kind(bytes).is_ok_and(|kind| ObjectId::of(kind, bytes).as_bytes() == id)
}

/// Checks that `bytes` are an object of `kind` whose id is `id`.
pub fn verify(id: &ObjectId, kind: Kind, bytes: &[u8]) -> ObjectResult<()> {
    let corrupt = |reason: String| ObjectError::Corrupt { id: *id, reason };
    let found = peek_kind(bytes).map_err(|e| corrupt(unreadable_kind(bytes, &e)))?;
    if found != kind {
        return Err(corrupt(format!(
            "expected a {} object, found a {}",
            kind.name(),
            found.name()
        )));
    }
    if ObjectId::of(kind, bytes) != *id {
        return Err(corrupt("content does not match its id".to_string()));
    }
    Ok(())
}
