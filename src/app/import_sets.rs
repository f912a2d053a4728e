//! Importing records written together with many keys. An export lists every related key in
//! every record (the JSON shape has no sets), so a record of a write of k keys arrives naming
//! k - 1 of them. Where a relation set (in the import itself or in the store) names them in
//! the same order, the record names the set again, as the write that made it did: importing
//! an export stores what the store held, and a record may name more keys than it could hold
//! itself.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::key::namespace_prefix;
use crate::memory::{read_record, related, Record};
use crate::object::{Object, ObjectId};
use crate::prolly::prefix_range;
use crate::repo::Repo;

use super::{MemoirError, MemoirResult};

/// Gives each record of `records` that names more than [`related::INLINE_MAX`] keys the sets
/// that name them (see the module), and checks it then names few enough itself (exit 1).
pub(crate) fn name_sets(
    repo: &Repo,
    root: &ObjectId,
    records: &mut BTreeMap<Vec<u8>, Record>,
) -> MemoirResult<()> {
    if !records
        .values()
        .any(|r| r.related_keys.len() > related::INLINE_MAX)
    {
        return Ok(());
    }
    // The sets known: the import's own, then the store's.
    let mut sets: Vec<(ObjectId, Vec<String>)> = Vec::new();
    for r in records
        .values()
        .filter(|r| r.namespace == related::NAMESPACE)
    {
        if let Ok(paths) = related::set_paths(r) {
            sets.push((r.to_blob()?.to_bytes_and_id().0, paths));
        }
    }
    let mut ids = Vec::new();
    let range = prefix_range(&namespace_prefix(related::NAMESPACE));
    repo.tree().scan(root, &range, &mut |_, id| {
        ids.push(*id);
        true
    })?;
    for id in ids {
        if let Ok(paths) = related::set_paths(&read_record(repo.objects(), &id)?) {
            sets.push((id, paths));
        }
    }
    // Each set by its first two paths: a record's part of a set starts with one of them.
    let mut by_start: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, (_, paths)) in sets.iter().enumerate() {
        for p in paths.iter().take(2) {
            by_start.entry(p.as_str()).or_default().push(i);
        }
    }
    for r in records.values_mut() {
        if r.related_keys.len() <= related::INLINE_MAX {
            continue;
        }
        if let Some((inline, named)) = split(r, &sets, &by_start) {
            r.related_keys = inline;
            r.related_sets = named;
        }
        r.validate().map_err(|e| {
            MemoirError::invalid(format!(
                "{}:{}: {e} (no relation set names them); nothing imported",
                r.namespace, r.key
            ))
        })?;
    }
    Ok(())
}

/// `r`'s related keys as a record would name them to read back the same: the keys it names
/// itself, then sets, each giving its paths but `r`'s own and those named before. `None`
/// when no set gives a part of them.
fn split(
    r: &Record,
    sets: &[(ObjectId, Vec<String>)],
    by_start: &HashMap<&str, Vec<usize>>,
) -> Option<(Vec<String>, Vec<ObjectId>)> {
    let list = &r.related_keys;
    let mut seen: HashSet<&str> = HashSet::from([r.key.as_str()]);
    let (mut inline, mut named) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < list.len() {
        let found = by_start
            .get(list[i].as_str())
            .into_iter()
            .flatten()
            .find_map(|&s| {
                let (id, paths) = &sets[s];
                if !paths.contains(&r.key) {
                    return None;
                }
                let part: Vec<&str> = paths
                    .iter()
                    .map(String::as_str)
                    .filter(|p| !seen.contains(p))
                    .collect();
                let fits = !part.is_empty()
                    && part.len() <= list.len() - i
                    && part.iter().zip(&list[i..]).all(|(a, b)| *a == b.as_str());
                fits.then_some((*id, part.len()))
            });
        match found {
            Some((id, n)) => {
                seen.extend(list[i..i + n].iter().map(String::as_str));
                named.push(id);
                i += n;
            }
            // What a record names itself comes before its sets.
            None if named.is_empty() => {
                seen.insert(list[i].as_str());
                inline.push(list[i].clone());
                i += 1;
            }
            None => return None,
        }
    }
    (!named.is_empty()).then_some((inline, named))
}
