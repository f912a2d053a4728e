//! `get`: read memories by key, in the order asked.

use serde::Serialize;

use crate::memory::{read_record, Record};

use super::ids::record_opt;
use super::input::NamedKey;
use super::status::require_namespace;
use super::{exit, Memoir, MemoirResult, Outcome, ReadPoint};

/// One key of a [`GetOutcome`].
#[derive(Debug, Clone, Serialize)]
pub struct GetItem {
    /// The key's path.
    pub key: String,
    /// Its namespace.
    pub namespace: String,
    /// `ns:path`.
    pub full_key: String,
    /// Whether a memory is stored there.
    pub found: bool,
    /// The memory (JSON: `value`, the record's schema-2 shape, or null).
    #[serde(rename = "value", serialize_with = "record_opt")]
    pub record: Option<Record>,
}

/// What `get` read.
#[derive(Debug, Clone, Serialize)]
pub struct GetOutcome {
    /// False only when exactly one key was asked for and it is missing.
    pub success: bool,
    /// One item per key asked for, in that order.
    pub items: Vec<GetItem>,
    /// Number of keys asked for.
    pub count: usize,
    /// Number found.
    pub found_count: u64,
    /// Time taken.
    pub timing_ms: f64,
    /// Why it failed (a single missing key), else null.
    pub error: Option<String>,
}

impl Outcome for GetOutcome {
    fn exit_code(&self) -> u8 {
        if self.success {
            exit::OK
        } else {
            exit::NOT_FOUND
        }
    }
}

impl Memoir {
    /// Reads the memories at `keys` (`path` or `ns:path`; bare paths in `namespace`) at a
    /// read point. A key is looked up in NFC, or exactly as spelled when a key an earlier
    /// version stored under that spelling is there. A missing key is an item with `found: false`; the outcome fails (exit 2)
    /// only when exactly one key was asked for and it is missing.
    pub fn get(
        &self,
        keys: &[String],
        namespace: Option<&str>,
        at: &ReadPoint,
    ) -> MemoirResult<GetOutcome> {
        let timer = self.clock().timer();
        let parse = || {
            keys.iter()
                .map(|k| NamedKey::parse(k, namespace))
                .collect::<MemoirResult<Vec<_>>>()
        };
        // Bad keys fail before the store is looked at.
        parse()?;
        let (items, keys, found_count) = self.reading(|repo| {
            let named = parse()?;
            let (_, root) = self.read_root(repo, at)?;
            if let Some(ns) = namespace {
                require_namespace(repo, &root, ns)?;
            }
            let mut items = Vec::with_capacity(named.len());
            let mut keys = Vec::with_capacity(named.len());
            let mut found_count = 0u64;
            for name in named {
                let (key, id) = name.resolve(|k| Ok(repo.tree().get(&root, &k.encode())?))?;
                let record = match id {
                    Some(id) => Some(read_record(repo.objects(), &id)?),
                    None => None,
                };
                found_count += u64::from(record.is_some());
                keys.push(key.clone());
                items.push(GetItem {
                    key: key.path().to_string(),
                    namespace: key.namespace().to_string(),
                    full_key: key.to_string(),
                    found: record.is_some(),
                    record,
                });
            }
            Ok((items, keys, found_count))
        })?;
        let single_missing = keys.len() == 1 && found_count == 0;
        Ok(GetOutcome {
            success: !single_missing,
            count: keys.len(),
            found_count,
            timing_ms: timer.ms(),
            error: single_missing.then(|| format!("memory '{}' not found", keys[0])),
            items,
        })
    }
}
