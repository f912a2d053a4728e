//! `get`: read memories by key, in the order asked.

use serde::Serialize;

use crate::key::{namespace_prefix, split_encoded, Key};
use crate::memory::{read_record_with_sets, Record};
use crate::object::ObjectId;
use crate::prolly::prefix_range;
use crate::repo::Repo;

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
    crate::outcome_json!();

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
        let (items, keys, found_count, nearest) = self.reading(|repo| {
            let named = parse()?;
            let (_, root) = self.read_root(repo, at)?;
            let mut items = Vec::with_capacity(named.len());
            let mut keys = Vec::with_capacity(named.len());
            let mut found_count = 0u64;
            for name in named {
                let (key, id) = name.resolve(|k| Ok(repo.tree().get(&root, &k.encode())?))?;
                let record = match id {
                    Some(id) => Some(read_record_with_sets(repo.objects(), &id)?),
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
            // A key found proves its namespace exists: only a miss looks the namespace up.
            if let Some(ns) = namespace.filter(|_| found_count < keys.len() as u64) {
                require_namespace(repo, &root, ns)?;
            }
            let nearest = match (keys.as_slice(), found_count) {
                ([only], 0) => nearest_key(repo, &root, only)?,
                _ => None,
            };
            Ok((items, keys, found_count, nearest))
        })?;
        let single_missing = keys.len() == 1 && found_count == 0;
        Ok(GetOutcome {
            success: !single_missing,
            count: keys.len(),
            found_count,
            timing_ms: timer.ms(),
            error: single_missing.then(|| {
                format!(
                    "memory '{}' not found{}",
                    keys[0],
                    super::did_you_mean(nearest)
                )
            }),
            items,
        })
    }
}

/// Keys of a namespace looked at for a "did you mean" hint, at most: the hint is for typos in
/// stores a person reads, and must not make a miss slow in a huge one.
const NEAREST_SCAN: usize = 200_000;

/// The stored key of `key`'s namespace nearest to it (a typo's fix): within two edits, or a
/// quarter of its length for long paths, as `ns:path`.
fn nearest_key(repo: &Repo, root: &ObjectId, key: &Key) -> MemoirResult<Option<String>> {
    let path = key.path();
    let max = (path.chars().count() / 4).max(2);
    let mut best: Option<(usize, String)> = None;
    let mut seen = 0;
    repo.tree().scan(
        root,
        &prefix_range(&namespace_prefix(key.namespace())),
        &mut |k, _| {
            seen += 1;
            let (_, p) = split_encoded(k);
            if p.len().abs_diff(path.len()) <= max {
                let d = strsim::osa_distance(path, &p);
                if d <= max && best.as_ref().is_none_or(|(b, _)| d < *b) {
                    best = Some((d, p));
                }
            }
            seen < NEAREST_SCAN
        },
    )?;
    Ok(best.map(|(_, p)| format!("{}:{p}", key.namespace())))
}
