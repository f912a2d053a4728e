//! `import` and `export`: memories in and out as JSON Lines, one record per line.
//!
//! `export` writes every record (of a namespace) at a read point in key order, in the schema 2
//! shape. `import` stores records in one commit, all or nothing: each line is a record in the
//! schema 2 shape or the older schema 1 shape (`content`, `confidence`, `timestamp`); an
//! imported record replaces the one at its key; when a key appears on several lines, the last
//! line wins. Every line goes through the rules `remember` applies (key rules, content not
//! blank nor longer than [`super::MAX_CONTENT_BYTES`] in every entry, no credential in a
//! content or a key), and a line whose JSON repeats a field is refused. Floats are read and
//! written exactly (shortest round-trip form), so exporting what an import stored gives the
//! same bytes, and importing records a store already holds commits nothing.

use std::collections::BTreeMap;

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Serialize;
use serde_json::{Map, Number, Value};

use crate::key::{namespace_prefix, nfc, validate_namespace, Key, DEFAULT_NAMESPACE};
use crate::memory::{
    read_record, read_record_with_sets, related, related_from_json, secrets, Record, RecordJson,
};
use crate::object::{Object, ObjectId};
use crate::prolly::{prefix_range, Edit, KeyRange};

use super::ids::hex;
use super::input::{
    check_import_line, check_import_size, check_imported_content, refuse_secrets_in_names,
    secret_refusal, Found,
};
use super::transaction::CreatedBranch;
use super::{Memoir, MemoirError, MemoirResult, Outcome, ReadPoint, WriteAs};

/// What to import.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportRequest {
    /// The JSON Lines (blank lines are skipped).
    pub lines: String,
    /// Namespace of records that name none (default `default`).
    pub namespace: Option<String>,
    /// Store records whose content looks like a credential anyway (refused by default).
    pub allow_secrets: bool,
}

impl ImportRequest {
    /// A request to import `lines` with every other setting default.
    pub fn new(lines: impl Into<String>) -> Self {
        ImportRequest {
            lines: lines.into(),
            ..ImportRequest::default()
        }
    }

    /// Checks the request's options without reading its lines (exit 1).
    pub fn validate(&self) -> MemoirResult<()> {
        Ok(validate_namespace(&self.namespace())?)
    }

    /// The namespace of records that name none, in NFC.
    fn namespace(&self) -> Cow<'_, str> {
        nfc(self.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE))
    }
}

/// What `import` stored.
#[derive(Debug, Clone, Serialize)]
pub struct ImportOutcome {
    /// Always true (a bad line is an error, and nothing is imported).
    pub success: bool,
    /// Records read (distinct keys).
    pub imported: usize,
    /// Of those, records that were new or differed from the stored ones (the others are
    /// already there as they are, and are not written again).
    pub changed: usize,
    /// The branch written to.
    pub branch: String,
    /// The branch this write created (`--branch` naming a missing one): JSON
    /// `branch_created: true`, absent otherwise.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::transaction::created_as_true"
    )]
    pub branch_created: Option<CreatedBranch>,
    /// The commit written (none when nothing changed).
    pub commit_hash: Option<String>,
    /// Its date, ISO 8601.
    pub commit_date: Option<String>,
    /// The commit message, or `Nothing to import` (no records), or `Nothing changed` (every
    /// record already stored as it is).
    pub message: String,
    /// The commit of `commit_hash`.
    #[serde(skip)]
    pub commit: Option<ObjectId>,
}

impl Outcome for ImportOutcome {
    crate::outcome_json!();

    fn created_branch(&self) -> Option<&CreatedBranch> {
        self.branch_created.as_ref()
    }
}

/// What `export` read.
#[derive(Debug, Clone, Serialize)]
pub struct ExportOutcome {
    /// Always true.
    pub success: bool,
    /// Records exported.
    pub count: usize,
    /// The commit read (hex).
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// The records, in key order.
    #[serde(skip)]
    pub records: Vec<Record>,
}

impl ExportOutcome {
    /// The records as JSON Lines: one object per line with its members sorted, each line
    /// ending in a newline.
    pub fn to_jsonl(&self) -> String {
        let mut out = Vec::with_capacity(self.records.len() * 256);
        for rec in &self.records {
            // The record's shape writes its members sorted, as its printed value has them.
            let _ = serde_json::to_writer(&mut out, &RecordJson(rec));
            out.push(b'\n');
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

impl Outcome for ExportOutcome {
    crate::outcome_json!();
}

/// Rebuilds every object with its members in sorted order, so printed JSON (export lines, the
/// command line's output) is the same whatever map implementation serde_json was built with.
pub fn sorted(v: Value) -> Value {
    if maps_sorted() {
        return v;
    }
    match v {
        // Maps kept in key order (serde_json's default) are sorted already.
        Value::Object(mut m) if m.keys().is_sorted() => {
            for v in m.values_mut() {
                *v = sorted(std::mem::take(v));
            }
            Value::Object(m)
        }
        Value::Object(m) => {
            let mut pairs: Vec<(String, Value)> = m.into_iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            let mut out = Map::new();
            for (k, v) in pairs {
                out.insert(k, sorted(v));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// Whether serde_json's maps keep their members in key order (its default): then every
/// object is sorted already, and [`sorted`] has nothing to do.
fn maps_sorted() -> bool {
    static SORTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SORTED.get_or_init(|| {
        let mut m = Map::new();
        m.insert("b".to_string(), Value::Null);
        m.insert("a".to_string(), Value::Null);
        m.keys().is_sorted()
    })
}

/// Parses JSON Lines into records keyed by encoded key (last line wins). Blank lines are
/// skipped; any other bad line is an error naming its number (exit 1): JSON that does not
/// parse or repeats a field, a record that breaks the schema or the key rules, an entry whose
/// content is blank or longer than [`super::MAX_CONTENT_BYTES`], or (unless `allow_secrets`)
/// a content or key that looks like a credential.
pub fn parse_lines(
    text: &str,
    default_ns: &str,
    now: f64,
    allow_secrets: bool,
) -> MemoirResult<BTreeMap<Vec<u8>, Record>> {
    check_import_size(text)?;
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        check_import_line(n, line)?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |e: String| MemoirError::invalid(format!("line {n}: {e}; nothing imported"));
        let mut v = strict_json(line).map_err(bad)?;
        // More related keys than a record names itself (an export of a write of many keys)
        // are kept aside: the import names them through their set (`import_sets`).
        let many = match v.get("related_keys") {
            Some(Value::Array(a)) if a.len() > related::INLINE_MAX => {
                let keys =
                    related_from_json(v.get("related_keys")).map_err(|e| bad(e.to_string()))?;
                v.as_object_mut().map(|o| o.remove("related_keys"));
                Some(keys)
            }
            _ => None,
        };
        let mut rec = Record::from_json(&v, default_ns, now).map_err(|e| bad(e.to_string()))?;
        if let Some(keys) = many {
            rec.related_keys = keys;
        }
        for (k, e) in rec.entries.iter().enumerate() {
            check_imported_content(n, k + 1, &e.content)?;
        }
        let key = Key::new(&rec.namespace, &rec.key)?;
        let paths =
            std::iter::once(rec.key.as_str()).chain(rec.related_keys.iter().map(String::as_str));
        refuse_secrets_in_names(&rec.namespace, paths, allow_secrets, Some(n))?;
        if !allow_secrets {
            if let Some(kind) = rec.entries.iter().find_map(|e| secrets::detect(&e.content)) {
                return Err(secret_refusal(kind, Found::Content, Some(n)));
            }
        }
        out.insert(key.encode(), rec);
    }
    Ok(out)
}

/// Whether the record stored at `stored` is `rec` but for the times `rec`'s line did not give
/// (those are `now`, the import's time): importing a line without timestamps that the store
/// already holds then changes nothing, as importing its export does.
fn already_stored(
    repo: &crate::repo::Repo,
    stored: Option<ObjectId>,
    rec: &Record,
    now: f64,
) -> MemoirResult<bool> {
    let Some(stored) = stored else {
        return Ok(false);
    };
    let old = read_record(repo.objects(), &stored)?;
    let given = |t: f64, old: Option<f64>| match old {
        Some(o) if t.to_bits() == now.to_bits() => o,
        _ => t,
    };
    let mut same = rec.clone();
    same.timestamp = given(rec.timestamp, Some(old.timestamp));
    for (i, e) in same.entries.iter_mut().enumerate() {
        e.timestamp = given(e.timestamp, old.entries.get(i).map(|o| o.timestamp));
    }
    Ok(same.to_blob()?.to_bytes_and_id().0 == stored)
}

/// Parses one line of JSON like `serde_json::from_str`, but refuses an object that repeats a
/// member (at any depth): which of two values was meant cannot be known. The message names
/// the member and the column.
fn strict_json(line: &str) -> Result<Value, String> {
    let mut de = serde_json::Deserializer::from_str(line);
    let parsed = StrictValue
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v));
    parsed.map_err(|e| {
        let text = e.to_string();
        let at = format!(" at line {} column {}", e.line(), e.column());
        let what = text.strip_suffix(&at).unwrap_or(&text);
        if what.starts_with("duplicate field") {
            format!("{what} (column {})", e.column())
        } else {
            format!("invalid JSON at column {}: {what}", e.column())
        }
    })
}

/// Builds a [`Value`] and refuses repeated members.
struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(StrictValue)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            if out.contains_key(&name) {
                return Err(de::Error::custom(format!("duplicate field {name:?}")));
            }
            let v = map.next_value_seed(StrictValue)?;
            out.insert(name, v);
        }
        Ok(Value::Object(out))
    }
}

impl Memoir {
    /// Stores the records of `req.lines` in one commit on the branch of `who`, all or
    /// nothing: a bad line, or a credential-looking content or key unless
    /// `req.allow_secrets`, imports nothing (exit 1). Only records that are new or differ
    /// from the stored ones are written; when there are none, nothing is committed.
    pub fn import(&self, req: &ImportRequest, who: &WriteAs) -> MemoirResult<ImportOutcome> {
        self.import_with_progress(req, who, &mut |_, _| {})
    }

    /// [`Memoir::import`], calling `progress(done, total)` after each record is written.
    pub fn import_with_progress(
        &self,
        req: &ImportRequest,
        who: &WriteAs,
        progress: &mut dyn FnMut(usize, usize),
    ) -> MemoirResult<ImportOutcome> {
        req.validate()?;
        who.check()?;
        let now = self.clock().now();
        let mut records = parse_lines(&req.lines, &req.namespace(), now, req.allow_secrets)?;
        let count = records.len();
        let tx = self.start_transaction(who)?;
        let (repo, root) = (tx.repo(), tx.root());
        super::import_sets::name_sets(repo, &root, &mut records)?;
        let mut edits = Vec::with_capacity(count);
        for (i, (key, rec)) in records.iter().enumerate() {
            let blob = rec.to_blob()?;
            let (id, _) = blob.to_bytes_and_id();
            let stored = repo.tree().get(&root, key)?;
            if stored != Some(id) && !already_stored(repo, stored, rec, now)? {
                repo.objects().write(&blob)?;
                edits.push(Edit::Put(key.clone(), id));
            }
            progress(i + 1, count);
        }
        let changed = edits.len();
        let message = format!("Import {changed} memories");
        let branch = tx.branch().to_string();
        let committed = if changed == 0 {
            None
        } else {
            Some(tx.finish(edits, &message)?)
        };
        let commit = committed.as_ref().map(|c| c.id);
        Ok(ImportOutcome {
            success: true,
            imported: count,
            changed,
            branch,
            branch_created: committed.as_ref().and_then(|c| c.created.clone()),
            commit_hash: commit.map(|id| id.to_hex()),
            commit_date: committed.map(|c| c.date),
            message: match (count, changed) {
                (0, _) => "Nothing to import".to_string(),
                (_, 0) => "Nothing changed".to_string(),
                _ => message,
            },
            commit,
        })
    }

    /// Every record at a read point (only `namespace`'s if given), in key order.
    pub fn export(&self, namespace: Option<&str>, at: &ReadPoint) -> MemoirResult<ExportOutcome> {
        if let Some(ns) = namespace {
            validate_namespace(ns)?;
        }
        let (commit, records) = self.reading(|repo| {
            let (commit, root) = self.read_root(repo, at)?;
            let range = match namespace {
                Some(ns) => prefix_range(&namespace_prefix(ns)),
                None => KeyRange::all(),
            };
            let entries = repo.tree().collect(&root, &range)?;
            let records = entries
                .iter()
                .map(|(_, id)| read_record_with_sets(repo.objects(), id))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((commit, records))
        })?;
        Ok(ExportOutcome {
            success: true,
            count: records.len(),
            commit,
            records,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_line_wins_and_secrets_are_refused() {
        let text = "{\"key\": \"a.b\", \"content\": \"one\"}\n\n{\"key\": \"a.b\", \"content\": \"two\"}\n";
        let r = parse_lines(text, "default", 0.0, false).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r.values().next().unwrap().content(), "two");
        let text = "{\"key\": \"a.b\", \"content\": \"ok\"}\n{\"key\": \"c\", \"content\": \"db password=hunter22\"}\n";
        let e = parse_lines(text, "default", 0.0, false).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("line 2: refused"), "{msg}");
        assert!(!msg.contains("hunter22"), "{msg}");
        assert_eq!(parse_lines(text, "default", 0.0, true).unwrap().len(), 2);
    }

    #[test]
    fn repeated_fields_blank_and_oversized_entries_are_refused() {
        let cases = [
            (
                "{\"key\": \"a\", \"content\": \"x\", \"content\": \"y\"}",
                "duplicate field \"content\"",
            ),
            (
                "{\"key\": \"a\", \"entries\": [{\"content\": \"x\", \"status\": \"active\", \"status\": \"superseded\"}]}",
                "duplicate field \"status\"",
            ),
            ("{\"key\": \"a\", \"content\": \"\"}", "entry 1: the memory's content is empty"),
            (
                "{\"key\": \"a\", \"entries\": [{\"content\": \"x\"}, {\"content\": \" \"}]}",
                "entry 2: the memory's content is empty",
            ),
            ("{\"key\": \"a\\u3164b\", \"content\": \"x\"}", "invisible"),
            ("{\"key\": \"a\", \"content\": \"x\", \"related_keys\": [\"b c\"]}", "related key"),
            ("{\"key\": \"a\", \"content\": 1e999}", "invalid JSON"),
        ];
        for (line, why) in cases {
            let text = format!("{{\"key\": \"ok\", \"content\": \"fine\"}}\n{line}\n");
            let e = parse_lines(&text, "default", 0.0, false).unwrap_err();
            let msg = e.to_string();
            assert!(msg.starts_with("line 2:"), "{msg}");
            assert!(msg.contains(why), "{line}: {msg}");
        }
        let big = "x".repeat(super::super::MAX_CONTENT_BYTES + 1);
        let line = serde_json::json!({"key": "a", "content": big}).to_string();
        let msg = parse_lines(&line, "default", 0.0, false)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("longer than 16 MiB"), "{msg}");
        // Keys are normalised: two spellings of one key are one record.
        let text = "{\"key\": \"cafe\\u0301\", \"content\": \"one\"}\n{\"key\": \"caf\\u00e9\", \"content\": \"two\"}";
        let r = parse_lines(text, "default", 0.0, false).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r.values().next().unwrap().key, "caf\u{e9}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Any finite float is read back exactly from the JSON an export writes.
        #[test]
        fn floats_round_trip_through_json_lines(
            ts in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO,
            conf in 0.0f64..=1.0,
        ) {
            let key = Key::new("default", "a.b").unwrap();
            let rec = Record::new(&key, crate::memory::Entry::new("x", conf, ts), vec![]);
            let out = ExportOutcome { success: true, count: 1, commit: ObjectId::from_bytes([0; 32]), records: vec![rec.clone()] };
            let line = out.to_jsonl();
            let back = parse_lines(&line, "default", 0.0, false).unwrap();
            let got = back.values().next().unwrap();
            proptest::prop_assert_eq!(got.timestamp.to_bits(), ts.to_bits());
            proptest::prop_assert_eq!(got.confidence.to_bits(), conf.to_bits());
            proptest::prop_assert_eq!(got.encode().unwrap(), rec.encode().unwrap());
        }
    }
}
