//! `import` and `export`: memories in and out as JSON Lines, one record per line.
//!
//! `export` writes every record (of a namespace) at a read point in key order, in the schema 2
//! shape. `import` stores records in one commit, all or nothing: each line is a record in the
//! schema 2 shape or the older schema 1 shape (`content`, `confidence`, `timestamp`); an
//! imported record replaces the one at its key; when a key appears on several lines, the last
//! line wins. Content that looks like a credential is refused, as `remember` refuses it.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::key::{namespace_prefix, validate_namespace, Key, DEFAULT_NAMESPACE};
use crate::memory::{read_record, secrets, Record};
use crate::object::ObjectId;
use crate::prolly::{prefix_range, Edit, KeyRange};

use super::ids::hex;
use super::input::secret_refusal;
use super::{
    commit_to, write_target, Memoir, MemoirError, MemoirResult, Outcome, ReadPoint, WriteAs,
};

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
        Ok(validate_namespace(self.namespace())?)
    }

    fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE)
    }
}

/// What `import` stored.
#[derive(Debug, Clone, Serialize)]
pub struct ImportOutcome {
    /// Always true (a bad line is an error, and nothing is imported).
    pub success: bool,
    /// Records imported (distinct keys).
    pub imported: usize,
    /// The branch written to.
    pub branch: String,
    /// The commit written (none when there was nothing to import).
    pub commit_hash: Option<String>,
    /// Its date, ISO 8601.
    pub commit_date: Option<String>,
    /// The commit message, or `Nothing to import`.
    pub message: String,
    /// The commit of `commit_hash`.
    #[serde(skip)]
    pub commit: Option<ObjectId>,
}

impl Outcome for ImportOutcome {}

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
        let mut out = String::new();
        for rec in &self.records {
            out.push_str(&serde_json::to_string(&sorted(rec.to_json())).unwrap_or_default());
            out.push('\n');
        }
        out
    }
}

impl Outcome for ExportOutcome {}

/// Rebuilds every object with its members in sorted order, so printed JSON (export lines, the
/// command line's output) is the same whatever map implementation serde_json was built with.
pub fn sorted(v: Value) -> Value {
    match v {
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

/// Parses JSON Lines into records keyed by encoded key (last line wins). Blank lines are
/// skipped; any other bad line, or a record whose content looks like a credential (unless
/// `allow_secrets`), is an error naming its number (exit 1).
pub fn parse_lines(
    text: &str,
    default_ns: &str,
    now: f64,
    allow_secrets: bool,
) -> MemoirResult<BTreeMap<Vec<u8>, Record>> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| {
            MemoirError::invalid(format!("line {n}: invalid JSON: {e}; nothing imported"))
        })?;
        let rec = Record::from_json(&v, default_ns, now)
            .map_err(|e| MemoirError::invalid(format!("line {n}: {e}; nothing imported")))?;
        let key = Key::new(&rec.namespace, &rec.key)?;
        if !allow_secrets {
            if let Some(kind) = rec.entries.iter().find_map(|e| secrets::detect(&e.content)) {
                return Err(secret_refusal(kind, Some(n)));
            }
        }
        out.insert(key.encode(), rec);
    }
    Ok(out)
}

impl Memoir {
    /// Stores the records of `req.lines` in one commit on the branch of `who`, all or
    /// nothing: a bad line, or a credential-looking content unless `req.allow_secrets`,
    /// imports nothing (exit 1). No lines: nothing is committed.
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
        let records = parse_lines(
            &req.lines,
            req.namespace(),
            self.clock().now(),
            req.allow_secrets,
        )?;
        let count = records.len();
        let repo = self.open_repo()?;
        let target = write_target(&repo, who.branch.as_deref())?;
        let mut edits = Vec::with_capacity(count);
        for (i, (key, rec)) in records.iter().enumerate() {
            let id = repo.objects().write(&rec.to_blob()?)?;
            edits.push(Edit::Put(key.clone(), id));
            progress(i + 1, count);
        }
        let message = format!("Import {count} memories");
        let (commit, date) = if count == 0 {
            (None, None)
        } else {
            let (id, date) = commit_to(&repo, &target, edits, &self.signature(who), &message)?;
            (Some(id), Some(date))
        };
        drop(repo);
        Ok(ImportOutcome {
            success: true,
            imported: count,
            branch: target.branch,
            commit_hash: commit.map(|id| id.to_hex()),
            commit_date: date,
            message: if count == 0 {
                "Nothing to import".to_string()
            } else {
                message
            },
            commit,
        })
    }

    /// Every record at a read point (only `namespace`'s if given), in key order.
    pub fn export(&self, namespace: Option<&str>, at: &ReadPoint) -> MemoirResult<ExportOutcome> {
        if let Some(ns) = namespace {
            validate_namespace(ns)?;
        }
        let (repo, commit, root) = self.open_read(at)?;
        let range = match namespace {
            Some(ns) => prefix_range(&namespace_prefix(ns)),
            None => KeyRange::all(),
        };
        let entries = repo.tree().collect(&root, &range)?;
        let records = entries
            .iter()
            .map(|(_, id)| read_record(repo.objects(), id))
            .collect::<Result<Vec<_>, _>>()?;
        drop(repo);
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
}
