//! The memory model: records (the values keys map to), their canonical encoding, their JSON
//! shape, and the write policies that decide how a new memory combines with an existing one.
//!
//! A [`Record`] is schema 2 of memoir-py: facet entries (each with content, confidence,
//! timestamp, status and optional provenance) plus the key, namespace, related keys, the
//! record's confidence and timestamp. Its `content` is not stored: it is the projection of the
//! active entries, joined with [`UPDATE_SEPARATOR`]. Records are stored as blob objects whose
//! bytes are a canonical CBOR map (store-format.md, section 12).
//!
//! Like every library layer, this module never prints, reads the environment or the clock:
//! the caller passes the time, the policy chosen from its flags and environment, and the facet
//! cap.

pub mod capture;
pub mod classify;
mod json;
pub mod llm_merge;
mod policy;
pub mod related;
pub mod secrets;
pub mod taxonomy;
pub mod turn;

pub use json::{EntryJson, RecordJson};

pub use classify::{classify, existing_prefixes, Classification};
pub use llm_merge::{merge_contents, MergeReply};
pub use policy::{
    default_policy, parse_facet_cap, union, write, write_merged, BadFacetCap, Conflict, FacetCap,
    Incoming, MergePolicy, Outcome, UnknownPolicy, DEFAULT_FACET_MAX_ENTRIES,
};

use serde_json::{Map, Value};

use crate::key::{nfc, validate_path, Key};
use crate::object::cbor::{CborError, Decoder, Encoder};
use crate::object::{Blob, Kind, ObjectError, ObjectId, ObjectResult, Objects};

/// The record schema version written by this build.
pub const SCHEMA_VERSION: u64 = 2;
/// Joins the contents of active entries into a record's `content`.
pub const UPDATE_SEPARATOR: &str = "\n\n[update] ";
/// Most entries a stored record may hold (a decoding limit, well above any facet cap).
pub const MAX_ENTRIES: usize = 100_000;
/// Most related keys a record may name.
pub const MAX_RELATED: usize = 1024;

/// Why a record was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MemoryError {
    /// The bytes are not canonical CBOR.
    #[error("record encoding: {0}")]
    Cbor(#[from] CborError),
    /// The value does not follow the record schema.
    #[error("invalid record: {0}")]
    Invalid(String),
    /// A taxonomy document or a stored taxonomy breaks a rule of its format.
    #[error("taxonomy: {0}")]
    Taxonomy(String),
    /// A conversation turn given to `capture` is not in a shape it reads.
    #[error("cannot read the turn: {0}")]
    Turn(String),
}

/// Why a model-backed step (choosing keys for a memory, merging two memories) gave nothing
/// usable. Callers decide what to do instead: `remember` without `-p` stops without
/// writing; `llm_merge` appends.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The model call failed (transport, HTTP status, timeout, malformed answer, failing
    /// command) or its reply is not the JSON object asked for.
    #[error("the model call failed: {0}")]
    Llm(#[from] crate::llm::LlmError),
    /// The classifier's reply names a path that is not an acceptable three-level path.
    #[error("the model's reply names an unacceptable path (refused: {}); reply: {reply:?}", .refused.join("; "))]
    BadPath {
        /// The start of the reply.
        reply: String,
        /// The names it gave that were refused, each with the reason.
        refused: Vec<String>,
    },
    /// The merge reply cannot be used as the merged memory.
    #[error("the model's merge is unusable: {0}")]
    BadMerge(String),
}

fn invalid(msg: impl Into<String>) -> MemoryError {
    MemoryError::Invalid(msg.into())
}

/// Whether an entry still contributes to the record's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Part of the projected content.
    Active,
    /// Kept for provenance; replaced by a later write.
    Superseded,
}

impl Status {
    /// `"active"` or `"superseded"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Superseded => "superseded",
        }
    }

    /// Parses `"active"` or `"superseded"`.
    pub fn parse(s: &str) -> Option<Status> {
        match s {
            "active" => Some(Status::Active),
            "superseded" => Some(Status::Superseded),
            _ => None,
        }
    }
}

/// One facet of a record: a piece of content written at one time.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The text.
    pub content: String,
    /// 0.0 ..= 1.0.
    pub confidence: f64,
    /// Unix seconds (UTC), fractional.
    pub timestamp: f64,
    /// Active or superseded.
    pub status: Status,
    /// Where it came from (for example `cli`), if recorded.
    pub source: Option<String>,
    /// Who wrote it (an agent id), if recorded.
    pub actor: Option<String>,
}

impl Entry {
    /// An active entry without provenance.
    pub fn new(content: &str, confidence: f64, timestamp: f64) -> Entry {
        Entry {
            content: content.to_string(),
            confidence,
            timestamp,
            status: Status::Active,
            source: None,
            actor: None,
        }
    }

    fn check(&self) -> Result<(), MemoryError> {
        check_confidence(self.confidence)?;
        check_timestamp(self.timestamp)
    }
}

/// Checks a confidence: finite, 0.0 ..= 1.0.
pub fn check_confidence(c: f64) -> Result<(), MemoryError> {
    if c.is_finite() && (0.0..=1.0).contains(&c) {
        Ok(())
    } else {
        Err(invalid(format!("confidence {c} is not within 0.0..=1.0")))
    }
}

fn check_timestamp(t: f64) -> Result<(), MemoryError> {
    if t.is_finite() {
        Ok(())
    } else {
        Err(invalid("timestamp is not a finite number"))
    }
}

/// A memory: the value a key maps to.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The bare dot path.
    pub key: String,
    /// The namespace.
    pub namespace: String,
    /// The record's confidence: the highest confidence among active entries.
    pub confidence: f64,
    /// The record's time: the newest active entry's timestamp.
    pub timestamp: f64,
    /// Other keys (bare paths) written together with this one, in command-line order, as
    /// the record itself names them.
    pub related_keys: Vec<String>,
    /// The relation sets the record was written with (see [`related`]): the ids of set
    /// records in [`related::NAMESPACE`], each naming every key one write wrote. A write of
    /// many keys names them once in a set instead of in each record.
    pub related_sets: Vec<ObjectId>,
    /// The keys the sets name besides this one and `related_keys`, in their order: filled
    /// when the record is read from a store ([`read_record`]), never stored.
    pub set_related: Vec<String>,
    /// The facets, oldest first.
    pub entries: Vec<Entry>,
}

impl Record {
    /// A record at `key` holding one active entry.
    pub fn new(key: &Key, entry: Entry, related_keys: Vec<String>) -> Record {
        let mut r = Record {
            key: key.path().to_string(),
            namespace: key.namespace().to_string(),
            confidence: 0.0,
            timestamp: 0.0,
            related_keys,
            related_sets: Vec::new(),
            set_related: Vec::new(),
            entries: vec![entry],
        };
        r.refresh();
        r
    }

    /// Every key written together with this one: the record's own `related_keys`, then the
    /// ones its sets name (once read from a store).
    pub fn all_related(&self) -> impl Iterator<Item = &String> + Clone {
        self.related_keys.iter().chain(&self.set_related)
    }

    /// The projected content: active entries' contents joined with [`UPDATE_SEPARATOR`].
    pub fn content(&self) -> String {
        let mut out = String::new();
        self.push_content(&mut out);
        out
    }

    /// Appends [`Record::content`] to `out` (no string of its own: an index build projects a
    /// million records into one reused buffer).
    pub fn push_content(&self, out: &mut String) {
        for (i, e) in self.active().enumerate() {
            if i > 0 {
                out.push_str(UPDATE_SEPARATOR);
            }
            out.push_str(&e.content);
        }
    }

    /// The active entries, oldest first.
    pub fn active(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| e.status == Status::Active)
    }

    /// Highest confidence among active entries (0.0 when there are none).
    pub fn max_confidence(&self) -> f64 {
        self.active().map(|e| e.confidence).fold(0.0, f64::max)
    }

    /// Recomputes `confidence` and `timestamp` from the entries.
    pub fn refresh(&mut self) {
        self.confidence = self.max_confidence();
        self.timestamp = self
            .active()
            .map(|e| e.timestamp)
            .reduce(f64::max)
            .or_else(|| self.entries.iter().map(|e| e.timestamp).reduce(f64::max))
            .unwrap_or(0.0);
    }

    /// Checks the schema rules the encoding relies on (the key under the stored rules of
    /// [`Key::existing`], so records an earlier version wrote stay readable).
    pub fn validate(&self) -> Result<(), MemoryError> {
        Key::check_existing(&self.namespace, &self.key).map_err(|e| invalid(e.to_string()))?;
        if self.entries.is_empty() {
            return Err(invalid("a record needs at least one entry"));
        }
        if self.entries.len() > MAX_ENTRIES {
            return Err(invalid(format!("more than {MAX_ENTRIES} entries")));
        }
        if self.related_keys.len() > MAX_RELATED {
            return Err(invalid(format!("more than {MAX_RELATED} related keys")));
        }
        if self.related_sets.len() > MAX_RELATED {
            return Err(invalid(format!("more than {MAX_RELATED} related sets")));
        }
        check_confidence(self.confidence)?;
        check_timestamp(self.timestamp)?;
        self.entries.iter().try_for_each(Entry::check)
    }

    /// The full key.
    pub fn full_key(&self) -> String {
        format!("{}:{}", self.namespace, self.key)
    }

    /// Canonical bytes (store-format.md section 12). Fails on a record that breaks the schema
    /// (for example a non-finite number), so nothing undecodable is ever stored.
    pub fn encode(&self) -> Result<Vec<u8>, MemoryError> {
        self.validate()?;
        let mut e = Encoder::with_capacity(
            64 + self
                .entries
                .iter()
                .map(|x| x.content.len() + 48)
                .sum::<usize>(),
        );
        // Keys in canonical order: (length, bytes).
        e.map(7 + usize::from(!self.related_sets.is_empty()));
        e.text("key");
        e.text(&self.key);
        e.text("entries");
        e.array(self.entries.len());
        for x in &self.entries {
            let n = 4 + usize::from(x.actor.is_some()) + usize::from(x.source.is_some());
            e.map(n);
            if let Some(a) = &x.actor {
                e.text("actor");
                e.text(a);
            }
            if let Some(s) = &x.source {
                e.text("source");
                e.text(s);
            }
            e.text("status");
            e.text(x.status.as_str());
            e.text("content");
            e.text(&x.content);
            e.text("timestamp");
            e.f64(x.timestamp);
            e.text("confidence");
            e.f64(x.confidence);
        }
        e.text("namespace");
        e.text(&self.namespace);
        e.text("timestamp");
        e.f64(self.timestamp);
        e.text("confidence");
        e.f64(self.confidence);
        e.text("related_keys");
        e.array(self.related_keys.len());
        for k in &self.related_keys {
            e.text(k);
        }
        if !self.related_sets.is_empty() {
            e.text("related_sets");
            e.array(self.related_sets.len());
            for id in &self.related_sets {
                e.bytes(id.as_bytes());
            }
        }
        e.text("schema_version");
        e.u64(SCHEMA_VERSION);
        Ok(e.into_bytes())
    }

    /// Decodes canonical bytes strictly: exactly the fields of the schema, in canonical order.
    pub fn decode(bytes: &[u8]) -> Result<Record, MemoryError> {
        let mut d = Decoder::new(bytes);
        // `related_sets` is there only when the record has sets.
        let n = d.map()?;
        if n != 7 && n != 8 {
            return Err(invalid(format!("expected 7 or 8 fields, found {n}")));
        }
        // The fields in canonical order, each checked against its name (which checks their
        // order too).
        let field = |d: &mut Decoder<'_>, name: &'static str| -> Result<(), MemoryError> {
            match d.expect_key(name) {
                Err(CborError::Unexpected { at, .. }) => {
                    Err(invalid(format!("expected field {name:?} at byte {at}")))
                }
                other => other.map_err(MemoryError::from),
            }
        };
        field(&mut d, "key")?;
        let key = d.text()?.to_string();
        field(&mut d, "entries")?;
        let ne = d.array()?;
        if ne > MAX_ENTRIES {
            return Err(invalid(format!("more than {MAX_ENTRIES} entries")));
        }
        let mut entries = Vec::with_capacity(ne);
        for _ in 0..ne {
            entries.push(decode_entry(&mut d)?);
        }
        field(&mut d, "namespace")?;
        let namespace = d.text()?.to_string();
        field(&mut d, "timestamp")?;
        let timestamp = d.f64()?;
        field(&mut d, "confidence")?;
        let confidence = d.f64()?;
        field(&mut d, "related_keys")?;
        let nr = d.array()?;
        if nr > MAX_RELATED {
            return Err(invalid(format!("more than {MAX_RELATED} related keys")));
        }
        let mut related_keys = Vec::with_capacity(nr);
        for _ in 0..nr {
            related_keys.push(d.text()?.to_string());
        }
        let mut related_sets = Vec::new();
        if n == 8 {
            field(&mut d, "related_sets")?;
            let ns = d.array()?;
            if ns == 0 || ns > MAX_RELATED {
                return Err(invalid(format!(
                    "related_sets holds {ns} ids; a stored list holds 1 to {MAX_RELATED}"
                )));
            }
            for _ in 0..ns {
                related_sets.push(ObjectId::from_bytes(d.bytes_fixed::<32>()?));
            }
        }
        field(&mut d, "schema_version")?;
        let v = d.u64()?;
        if v != SCHEMA_VERSION {
            return Err(invalid(format!(
                "schema version {v}, expected {SCHEMA_VERSION}"
            )));
        }
        d.finish()?;
        let r = Record {
            key,
            namespace,
            confidence,
            timestamp,
            related_keys,
            related_sets,
            set_related: Vec::new(),
            entries,
        };
        r.validate()?;
        Ok(r)
    }

    /// The record as a blob object.
    pub fn to_blob(&self) -> Result<Blob, MemoryError> {
        Ok(Blob(self.encode()?))
    }

    /// Decodes a blob object's bytes.
    pub fn from_blob(blob: &Blob) -> Result<Record, MemoryError> {
        Record::decode(&blob.0)
    }

    /// Reads a record from its JSON shape: schema 2 (with `entries`), or the older schema 1
    /// (`content`, `confidence`, `timestamp` without entries), which becomes one active
    /// entry. `key` may be `ns:path`; `namespace` defaults to `default_ns`; a missing
    /// timestamp is `now`, a missing confidence 1.0. The key and related keys follow the
    /// input rules of [`Key::new`] (normalised to NFC). The result is validated.
    pub fn from_json(v: &Value, default_ns: &str, now: f64) -> Result<Record, MemoryError> {
        let obj = v.as_object().ok_or_else(|| invalid("not a JSON object"))?;
        let text = |name: &str| -> Result<Option<String>, MemoryError> {
            match obj.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(invalid(format!("field {name:?} must be a string"))),
            }
        };
        let num = |o: &Map<String, Value>, name: &str| -> Result<Option<f64>, MemoryError> {
            match o.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(x) => x
                    .as_f64()
                    .map(Some)
                    .ok_or_else(|| invalid(format!("field {name:?} must be a number"))),
            }
        };
        let raw_key = text("key")?.ok_or_else(|| invalid("missing field \"key\""))?;
        let ns = text("namespace")?;
        let key = match (raw_key.rsplit_once(':'), ns.as_deref()) {
            (Some((kns, path)), Some(ns)) if nfc(kns) != nfc(ns) => {
                return Err(invalid(format!(
                    "key {raw_key:?} names namespace {kns:?} but namespace is {ns:?} ({path})"
                )))
            }
            (_, Some(ns)) => Key::parse(&raw_key, ns),
            (_, None) => Key::parse(&raw_key, default_ns),
        }
        .map_err(|e| invalid(e.to_string()))?;
        let related_keys = related_from_json(obj.get("related_keys"))?;
        let entries = match obj.get("entries") {
            Some(Value::Array(list)) if !list.is_empty() => list
                .iter()
                .map(|x| entry_from_json(x, now))
                .collect::<Result<Vec<_>, _>>()?,
            Some(Value::Array(_)) | None | Some(Value::Null) => {
                // Schema 1: one value.
                let content =
                    text("content")?.ok_or_else(|| invalid("missing field \"content\""))?;
                let mut e = Entry::new(
                    &content,
                    num(obj, "confidence")?.unwrap_or(1.0),
                    num(obj, "timestamp")?.unwrap_or(now),
                );
                e.source = text("source")?;
                e.actor = text("actor")?;
                vec![e]
            }
            Some(_) => return Err(invalid("entries must be an array")),
        };
        let mut r = Record {
            key: key.path().to_string(),
            namespace: key.namespace().to_string(),
            confidence: 0.0,
            timestamp: 0.0,
            related_keys,
            related_sets: Vec::new(),
            set_related: Vec::new(),
            entries,
        };
        r.refresh();
        r.validate()?;
        Ok(r)
    }
}

/// A record's `related_keys` member read from JSON (absent or null: none): paths under the
/// input rules, normalised to NFC. The number is not bounded here ([`Record::validate`]
/// bounds what a record names itself).
pub fn related_from_json(v: Option<&Value>) -> Result<Vec<String>, MemoryError> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                let p = nfc(x
                    .as_str()
                    .ok_or_else(|| invalid("related_keys must be strings"))?);
                validate_path(&p).map_err(|e| invalid(format!("related key: {e}")))?;
                Ok::<_, MemoryError>(p.into_owned())
            })
            .collect(),
        Some(_) => Err(invalid("related_keys must be an array")),
    }
}

/// Reads the record stored at value id `id`, as stored: its relation sets are not read
/// ([`Record::set_related`] empty), which only what shows related keys needs
/// ([`read_record_with_sets`]). A value that is not a valid record is reported as corruption
/// of that object.
pub fn read_record(objects: &Objects, id: &ObjectId) -> ObjectResult<Record> {
    // Decoded from the bytes as the store holds them (possibly where they lie in a mapped
    // pack): no copy of the object, nor of the blob's payload, is made first.
    let corrupt = |reason: String| ObjectError::Corrupt { id: *id, reason };
    let bytes = objects.read_bytes(id, Kind::Blob)?;
    let payload = Blob::payload(&bytes).map_err(|e| corrupt(e.to_string()))?;
    Record::decode(payload).map_err(|e| corrupt(e.to_string()))
}

/// [`read_record`] with the keys its relation sets name ([`Record::set_related`]), for
/// what shows a record's related keys. A set that is missing or not a set is reported as
/// corruption of that object.
pub fn read_record_with_sets(objects: &Objects, id: &ObjectId) -> ObjectResult<Record> {
    let mut r = read_record(objects, id)?;
    related::resolve(objects, &mut r)?;
    Ok(r)
}

fn entry_from_json(v: &Value, now: f64) -> Result<Entry, MemoryError> {
    let o = v
        .as_object()
        .ok_or_else(|| invalid("an entry is not an object"))?;
    let s = |name: &str| -> Result<Option<String>, MemoryError> {
        match o.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(invalid(format!("entry field {name:?} must be a string"))),
        }
    };
    let n = |name: &str| -> Result<Option<f64>, MemoryError> {
        match o.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(x) => x
                .as_f64()
                .map(Some)
                .ok_or_else(|| invalid(format!("entry field {name:?} must be a number"))),
        }
    };
    let status = match s("status")? {
        None => Status::Active,
        Some(t) => Status::parse(&t).ok_or_else(|| invalid(format!("unknown status {t:?}")))?,
    };
    let e = Entry {
        content: s("content")?.ok_or_else(|| invalid("an entry has no content"))?,
        confidence: n("confidence")?.unwrap_or(1.0),
        timestamp: n("timestamp")?.unwrap_or(now),
        status,
        source: s("source")?,
        actor: s("actor")?,
    };
    e.check()?;
    Ok(e)
}

fn decode_entry(d: &mut Decoder<'_>) -> Result<Entry, MemoryError> {
    let n = d.map()?;
    if !(4..=6).contains(&n) {
        return Err(invalid(format!("an entry has {n} fields")));
    }
    let mut prev: Option<&[u8]> = None;
    let mut actor = None;
    let mut source = None;
    let mut status = None;
    let mut content = None;
    let mut timestamp = None;
    let mut confidence = None;
    for _ in 0..n {
        let k = d.map_key_bytes(prev)?;
        prev = Some(k);
        match k {
            b"actor" => actor = Some(d.text()?.to_string()),
            b"source" => source = Some(d.text()?.to_string()),
            b"status" => {
                let t = d.text()?;
                status =
                    Some(Status::parse(t).ok_or_else(|| invalid(format!("unknown status {t:?}")))?);
            }
            b"content" => content = Some(d.text()?.to_string()),
            b"timestamp" => timestamp = Some(d.f64()?),
            b"confidence" => confidence = Some(d.f64()?),
            other => {
                let other = String::from_utf8_lossy(other);
                return Err(invalid(format!("unknown entry field {other:?}")));
            }
        }
    }
    match (status, content, timestamp, confidence) {
        (Some(status), Some(content), Some(timestamp), Some(confidence)) => Ok(Entry {
            content,
            confidence,
            timestamp,
            status,
            source,
            actor,
        }),
        _ => Err(invalid(
            "an entry lacks content, confidence, timestamp or status",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(p: &str) -> Key {
        Key::new("default", p).unwrap()
    }

    fn sample() -> Record {
        let mut r = Record::new(&key("a.b"), Entry::new("one", 0.5, 100.0), vec!["c".into()]);
        let mut e = Entry::new("two", 0.9, 200.5);
        e.source = Some("cli".into());
        e.actor = Some("agent-1".into());
        r.entries.push(e);
        r.entries.push(Entry {
            status: Status::Superseded,
            ..Entry::new("old", 1.0, 50.0)
        });
        r.refresh();
        r
    }

    #[test]
    fn content_projects_active_entries() {
        let r = sample();
        assert_eq!(r.content(), "one\n\n[update] two");
        assert_eq!(r.confidence, 0.9);
        assert_eq!(r.timestamp, 200.5);
    }

    #[test]
    fn encoding_round_trips_and_is_canonical() {
        let r = sample();
        let b = r.encode().unwrap();
        assert_eq!(Record::decode(&b).unwrap(), r);
        assert_eq!(Record::decode(&b).unwrap().encode().unwrap(), b);
        let mut t = b.clone();
        t.push(0);
        assert!(Record::decode(&t).is_err());
        assert!(Record::decode(&b[..b.len() - 1]).is_err());
    }

    #[test]
    fn non_finite_and_out_of_range_numbers_are_refused() {
        let mut r = sample();
        r.entries[0].timestamp = f64::NAN;
        assert!(r.encode().is_err());
        let mut r = sample();
        r.entries[0].confidence = 1.5;
        assert!(r.encode().is_err());
        let mut r = sample();
        r.timestamp = f64::INFINITY;
        assert!(r.encode().is_err());
    }

    #[test]
    fn json_shape_and_schema_1_upgrade() {
        let r = sample();
        let v = r.to_json();
        assert_eq!(v["content"], "one\n\n[update] two");
        assert_eq!(v["schema_version"], 2);
        assert!(v["entries"][0].get("source").is_none());
        assert_eq!(v["entries"][1]["actor"], "agent-1");
        assert_eq!(v["entries"][2]["status"], "superseded");
        assert_eq!(Record::from_json(&v, "default", 0.0).unwrap(), r);

        let old = json!({"key": "x.y", "content": "hi", "confidence": 0.7, "timestamp": 12.0});
        let u = Record::from_json(&old, "ns", 99.0).unwrap();
        assert_eq!(u.namespace, "ns");
        assert_eq!(u.entries, vec![Entry::new("hi", 0.7, 12.0)]);
        let old = json!({"key": "other:x.y", "content": "hi"});
        let u = Record::from_json(&old, "ns", 99.0).unwrap();
        assert_eq!(
            (u.namespace.as_str(), u.timestamp, u.confidence),
            ("other", 99.0, 1.0)
        );
        assert!(Record::from_json(&json!({"key": "x y", "content": "a"}), "d", 0.0).is_err());
        assert!(Record::from_json(&json!({"content": "a"}), "d", 0.0).is_err());
        assert!(Record::from_json(
            &json!({"key": "a", "content": "a", "confidence": 2}),
            "d",
            0.0
        )
        .is_err());
    }
}
