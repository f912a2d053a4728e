//! The JSON shape of records and entries (COMPAT.md, schema 2), serialized directly: a
//! serializer receives the members as they are, so a result holding thousands of records
//! (a diff, an export) builds each one once instead of building a `Value` and copying it.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use super::{Entry, Record, SCHEMA_VERSION};

/// A record as its JSON shape: `content`, `key`, `namespace`, `confidence`, `timestamp`,
/// `related_keys`, `entries`, `schema_version`.
#[derive(Debug, Clone, Copy)]
pub struct RecordJson<'a>(pub &'a Record);

/// An entry as its JSON shape: `content`, `confidence`, `timestamp`, `status`, and
/// `source` / `actor` only when present.
#[derive(Debug, Clone, Copy)]
pub struct EntryJson<'a>(pub &'a Entry);

impl Serialize for EntryJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = self.0;
        let n = 4 + usize::from(e.source.is_some()) + usize::from(e.actor.is_some());
        // Members in sorted order, so that written straight out the shape reads as printed
        // JSON does (sorted members) without a map in between.
        let mut m = s.serialize_map(Some(n))?;
        if let Some(actor) = &e.actor {
            m.serialize_entry("actor", actor)?;
        }
        m.serialize_entry("confidence", &e.confidence)?;
        m.serialize_entry("content", &e.content)?;
        if let Some(source) = &e.source {
            m.serialize_entry("source", source)?;
        }
        m.serialize_entry("status", e.status.as_str())?;
        m.serialize_entry("timestamp", &e.timestamp)?;
        m.end()
    }
}

/// A record's related keys, its own and its sets', as one JSON array.
struct Related<'a>(&'a Record);

impl Serialize for Related<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.all_related())
    }
}

impl Serialize for RecordJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// The entries as a sequence of their shapes.
        struct Entries<'a>(&'a [Entry]);
        impl Serialize for Entries<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.iter().map(EntryJson))
            }
        }
        let r = self.0;
        // Members in sorted order (see `EntryJson`).
        let mut m = s.serialize_map(Some(8))?;
        m.serialize_entry("confidence", &r.confidence)?;
        m.serialize_entry("content", &Content(r))?;
        m.serialize_entry("entries", &Entries(&r.entries))?;
        m.serialize_entry("key", &r.key)?;
        m.serialize_entry("namespace", &r.namespace)?;
        // Every key written with this one, the ones its relation sets name included.
        m.serialize_entry("related_keys", &Related(r))?;
        m.serialize_entry("schema_version", &SCHEMA_VERSION)?;
        m.serialize_entry("timestamp", &r.timestamp)?;
        m.end()
    }
}

/// [`Record::content`] as a JSON string ([`Record::with_content`]).
struct Content<'a>(&'a Record);

impl Serialize for Content<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.with_content(|c| s.serialize_str(c))
    }
}

impl Entry {
    /// The JSON shape ([`EntryJson`]) as a value.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(EntryJson(self)).unwrap_or(Value::Null)
    }
}

impl Record {
    /// Calls `f` with [`Record::content`], borrowed from the one active entry when there is
    /// one (nearly every record), joined into a new string only when there are more.
    pub fn with_content<T>(&self, f: impl FnOnce(&str) -> T) -> T {
        let mut active = self.active();
        match (active.next(), active.next()) {
            (None, _) => f(""),
            (Some(only), None) => f(&only.content),
            _ => f(&self.content()),
        }
    }

    /// The JSON shape ([`RecordJson`]) as a value.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(RecordJson(self)).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Key;
    use crate::memory::Status;
    use serde_json::json;

    #[test]
    fn the_shapes_are_those_of_compat_whatever_the_serializer() {
        let key = Key::new("work", "a.b").unwrap();
        let mut r = Record::new(&key, Entry::new("old", 0.5, 10.0), vec!["c.d".into()]);
        r.entries[0].status = Status::Superseded;
        let mut e = Entry::new("new", 0.75, 20.5);
        e.source = Some("cli".into());
        e.actor = Some("agent-7".into());
        r.entries.push(e);
        r.confidence = 0.75;
        r.timestamp = 20.5;
        let want = json!({
            "content": "new", "key": "a.b", "namespace": "work", "confidence": 0.75,
            "timestamp": 20.5, "related_keys": ["c.d"], "schema_version": 2,
            "entries": [
                {"content": "old", "confidence": 0.5, "timestamp": 10.0, "status": "superseded"},
                {"content": "new", "confidence": 0.75, "timestamp": 20.5, "status": "active",
                 "source": "cli", "actor": "agent-7"},
            ],
        });
        assert_eq!(r.to_json(), want);
        let text = serde_json::to_string(&RecordJson(&r)).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), want);
        // Written straight out, the members come in sorted order, as printed JSON has them.
        assert_eq!(
            text,
            serde_json::to_string(&crate::app::sorted(want.clone())).unwrap()
        );
        assert_eq!(r.entries[1].to_json(), want["entries"][1]);
    }

    /// `content` is the active entries' contents joined, however many there are.
    #[test]
    fn content_is_the_projection_for_any_number_of_active_entries() {
        let key = Key::new("work", "a.b").unwrap();
        let mut r = Record::new(&key, Entry::new("one", 0.5, 10.0), vec![]);
        r.entries.push(Entry::new("two", 0.5, 11.0));
        r.entries.push(Entry::new("three", 0.5, 12.0));
        let content = |r: &Record| r.to_json()["content"].as_str().unwrap().to_string();
        assert_eq!(content(&r), "one\n\n[update] two\n\n[update] three");
        assert_eq!(content(&r), r.content());
        r.entries[0].status = Status::Superseded;
        assert_eq!(content(&r), "two\n\n[update] three");
        r.entries[1].status = Status::Superseded;
        assert_eq!(content(&r), "three");
        r.entries[2].status = Status::Superseded;
        assert_eq!(content(&r), "");
    }
}
