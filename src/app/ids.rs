//! How outcomes write object ids and records in their JSON: ids as 64 lower-case hex
//! digits, records in their schema-2 shape. Outcomes keep the typed values (so faces can
//! shorten an id or read a record) and serialise them with these.

use serde::{Serialize, Serializer};

use crate::memory::{Record, RecordJson};
use crate::object::ObjectId;

/// An id as hex.
pub(crate) fn hex<S: Serializer>(id: &ObjectId, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&id.to_hex())
}

/// An optional id as hex, or null.
pub(crate) fn hex_opt<S: Serializer>(id: &Option<ObjectId>, s: S) -> Result<S::Ok, S::Error> {
    match id {
        Some(id) => s.serialize_str(&id.to_hex()),
        None => s.serialize_none(),
    }
}

/// A list of ids as hex.
pub(crate) fn hex_vec<S: Serializer>(ids: &[ObjectId], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(ids.iter().map(ObjectId::to_hex))
}

/// An optional record as its JSON, or null.
pub(crate) fn record_opt<R: std::borrow::Borrow<Record>, S: Serializer>(
    r: &Option<R>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match r {
        Some(r) => RecordJson(r.borrow()).serialize(s),
        None => s.serialize_none(),
    }
}
