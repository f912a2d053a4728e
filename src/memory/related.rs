//! Relation sets: how one write of many keys names them once. A `remember` of k keys relates
//! each to the k - 1 others; naming them in every record would store k x (k - 1) names. Past
//! [`INLINE_MAX`] keys the write stores one *set*, a record in [`NAMESPACE`] whose content
//! is the JSON array of the keys' paths in the order given, and each record names the set's
//! id instead (`related_sets`). A set's bytes depend on its paths alone (no time, no author),
//! so the same set written on two branches is the same object and merges cleanly; it is a
//! record of the tree, so history, remotes, `gc` and `fsck` keep it as they keep any other.

use std::collections::HashSet;

use serde_json::Value;

use super::{read_record, Entry, MemoryError, Record};
use crate::key::{validate_path, Key};
use crate::object::{ObjectError, ObjectResult, Objects};

/// The namespace of relation sets (one of memoir's own: left out of searches and counts).
pub const NAMESPACE: &str = "memoir:related";

/// Most other keys a record names itself; a write of more keys than `INLINE_MAX + 1` names
/// them through a set.
pub const INLINE_MAX: usize = 16;

/// A relation set naming `paths` (bare paths, in the order written): its key and record.
pub fn set_record(paths: &[String]) -> Result<(Key, Record), MemoryError> {
    let content = serde_json::to_string(paths).map_err(|e| MemoryError::Invalid(e.to_string()))?;
    let key = Key::new(
        NAMESPACE,
        &format!("set.{}", blake3::hash(content.as_bytes())),
    )
    .map_err(|e| MemoryError::Invalid(e.to_string()))?;
    let record = Record::new(&key, Entry::new(&content, 1.0, 0.0), Vec::new());
    record.validate()?;
    Ok((key, record))
}

/// The paths a relation set's record names.
pub fn set_paths(set: &Record) -> Result<Vec<String>, MemoryError> {
    let bad = |why: &str| MemoryError::Invalid(format!("not a relation set: {why}"));
    if set.namespace != NAMESPACE {
        return Err(bad("outside the namespace of relation sets"));
    }
    let Value::Array(items) = serde_json::from_str(&set.content()).map_err(|_| bad("no JSON"))?
    else {
        return Err(bad("its content is not a JSON array"));
    };
    items
        .into_iter()
        .map(|v| match v {
            Value::String(p) if validate_path(&p).is_ok() => Ok(p),
            _ => Err(bad("an item is not a key path")),
        })
        .collect()
}

/// Fills `r.set_related` from its sets: the paths they name that are neither `r`'s own nor
/// among its `related_keys`, each once, in order. A set that is missing or not a set is an
/// error (its id is named).
pub fn resolve(objects: &Objects, r: &mut Record) -> ObjectResult<()> {
    r.set_related.clear();
    if r.related_sets.is_empty() {
        return Ok(());
    }
    let mut seen: HashSet<String> = r.related_keys.iter().cloned().collect();
    seen.insert(r.key.clone());
    for id in r.related_sets.clone() {
        let set = read_record(objects, &id)?;
        let paths = set_paths(&set).map_err(|e| ObjectError::Corrupt {
            id,
            reason: e.to_string(),
        })?;
        for p in paths {
            if seen.insert(p.clone()) {
                r.set_related.push(p);
            }
        }
    }
    Ok(())
}
