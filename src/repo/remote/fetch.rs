//! Reading a remote: its branch heads, and the objects this store lacks.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use super::layout::{
    check_marker, index_name, pack_name, parse_pack_name, parse_ref_name, read_index, read_pack,
    verify_object, PackEntry, RefVersion, MARKER, REFS,
};
use super::transport::{Entry, Transport};
use super::{Progress, RemoteError, RemoteResult};
use crate::object::ObjectId;
use crate::repo::Repo;
use crate::store::ObjectStore;

/// The newest version of every branch of a remote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteHeads {
    /// Branch name to its newest version.
    pub branches: BTreeMap<String, RefVersion>,
}

impl RemoteHeads {
    /// The commit every branch names.
    pub fn commits(&self) -> RemoteResult<Vec<ObjectId>> {
        self.branches.values().map(RefVersion::commit_id).collect()
    }
}

/// Whether the remote at `t` exists as a remote: `false` when it holds nothing at all (a
/// new remote), an error when it holds something that is not a memoir remote.
pub(super) fn check_remote(t: &dyn Transport) -> RemoteResult<bool> {
    match t.get(MARKER)? {
        Some(bytes) => check_marker(&bytes, &t.url()).map(|_| true),
        None => {
            if t.list(REFS)?.is_empty() && t.list("packs/")?.is_empty() {
                Ok(false)
            } else {
                Err(RemoteError::NotARemote(format!(
                    "{} holds packs or refs but no {MARKER}",
                    t.url()
                )))
            }
        }
    }
}

/// The newest version of each branch among listed ref versions, read from the remote.
fn newest_versions(
    t: &dyn Transport,
    listed: &[Entry],
) -> RemoteResult<BTreeMap<String, RefVersion>> {
    let mut newest: BTreeMap<String, (u64, &str)> = BTreeMap::new();
    for e in listed {
        if let Some((branch, seq)) = parse_ref_name(&e.name) {
            let slot = newest.entry(branch).or_insert((seq, &e.name));
            if seq >= slot.0 {
                *slot = (seq, &e.name);
            }
        }
    }
    let mut out = BTreeMap::new();
    for (branch, (_, name)) in newest {
        let bytes = t.get(name)?.ok_or_else(|| {
            RemoteError::Corrupt(format!("ref version {name} was listed but cannot be read"))
        })?;
        out.insert(branch, RefVersion::from_bytes(&bytes, name)?);
    }
    Ok(out)
}

/// Every branch head of the remote (none for a new, empty remote).
pub fn read_heads(t: &dyn Transport) -> RemoteResult<RemoteHeads> {
    if !check_remote(t)? {
        return Ok(RemoteHeads::default());
    }
    Ok(RemoteHeads {
        branches: newest_versions(t, &t.list(REFS)?)?,
    })
}

/// The head of one branch of the remote, read afresh.
pub(super) fn read_head(t: &dyn Transport, branch: &str) -> RemoteResult<Option<RefVersion>> {
    let listed = t.list(&super::layout::ref_dir(branch))?;
    Ok(newest_versions(t, &listed)?.remove(branch))
}

/// What a fetch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchReport {
    /// The remote's branches as fetched.
    pub heads: RemoteHeads,
    /// Objects received (absent here before).
    pub objects: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Packs read from (whole or in part).
    pub packs_read: u64,
    /// The complete packs of the remote whose objects this store now holds: a later fetch
    /// skips them without reading their indexes.
    pub packs_held: BTreeSet<String>,
}

/// A fetch downloads a pack whole when it lacks at least this share of its bytes.
const WHOLE_PACK_SHARE: f64 = 0.5;

impl Repo {
    /// Brings into this store every object the remote's branches reach that it lacks, and
    /// returns the remote's heads. Packs listed in `held` are known to be here already and
    /// are skipped. For any other complete pack the index is read and only the objects
    /// absent here are downloaded (the whole pack when most of it is missing). Every object
    /// received is re-hashed against its id, and all are checked before any is stored: a
    /// damaged remote is [`RemoteError::Corrupt`] and changes nothing here. Then the heads
    /// are checked to be complete here (every commit, node and value they reach that no
    /// local ref reaches). No ref is moved: that is the caller's, once this returns.
    pub fn fetch_from(
        &self,
        t: &dyn Transport,
        held: &BTreeSet<String>,
        progress: &mut dyn FnMut(Progress),
    ) -> RemoteResult<FetchReport> {
        let heads = read_heads(t)?;
        let mut report = FetchReport {
            heads,
            ..FetchReport::default()
        };
        if report.heads.branches.is_empty() {
            return Ok(report);
        }
        let listed = t.list(super::layout::PACKS)?;
        let sizes: BTreeMap<String, u64> = listed
            .iter()
            .filter_map(|e| {
                parse_pack_name(&e.name)
                    .filter(|(_, idx)| !idx)
                    .map(|(h, _)| (h, e.size))
            })
            .collect();
        let complete: Vec<String> = listed
            .iter()
            .filter_map(|e| {
                parse_pack_name(&e.name)
                    .filter(|(_, idx)| *idx)
                    .map(|(h, _)| h)
            })
            .filter(|h| sizes.contains_key(h))
            .collect();
        let mut wanted: Vec<(String, Vec<PackEntry>, Vec<PackEntry>, bool)> = Vec::new();
        let mut total = Progress::default();
        for hash in complete {
            if held.contains(&hash) {
                report.packs_held.insert(hash);
                continue;
            }
            let size = sizes[&hash];
            let idx = t.get(&index_name(&hash))?.ok_or_else(|| {
                RemoteError::Corrupt(format!("pack index {hash} was listed but cannot be read"))
            })?;
            let entries = read_index(&idx, &hash, Some(size))?;
            let mut missing = Vec::new();
            for e in entries.iter().copied() {
                if !self
                    .store()
                    .contains(e.id.as_bytes())
                    .map_err(crate::repo::RepoError::from)?
                {
                    missing.push(e);
                }
            }
            let bytes: u64 = missing.iter().map(|e| u64::from(e.len)).sum();
            total.objects_total += missing.len() as u64;
            total.bytes_total += bytes;
            let whole = bytes as f64 >= size as f64 * WHOLE_PACK_SHARE;
            report.packs_held.insert(hash.clone());
            if !missing.is_empty() {
                wanted.push((hash, entries, missing, whole));
            }
        }
        let mut received: Vec<([u8; 32], Vec<u8>)> = Vec::new();
        for (hash, entries, missing, whole) in &wanted {
            let objects = if *whole {
                let pack = t.get(&pack_name(hash))?.ok_or_else(|| {
                    RemoteError::Corrupt(format!("pack {hash} was listed but cannot be read"))
                })?;
                let want: BTreeSet<ObjectId> = missing.iter().map(|e| e.id).collect();
                read_pack(&pack, hash, entries)?
                    .into_iter()
                    .filter(|(id, _)| want.contains(id))
                    .collect()
            } else {
                read_ranges(t, hash, missing)?
            };
            report.packs_read += 1;
            for (id, bytes) in objects {
                total.objects += 1;
                total.bytes += bytes.len() as u64;
                received.push((*id.as_bytes(), bytes));
            }
            progress(total);
        }
        report.objects = total.objects;
        report.bytes = total.bytes;
        if !received.is_empty() {
            self.store()
                .put_many(&received)
                .map_err(crate::repo::RepoError::from)?;
            self.store().flush().map_err(crate::repo::RepoError::from)?;
        }
        self.check_complete(&report.heads)?;
        Ok(report)
    }

    /// Checks that everything the remote heads reach is here, walking only what no local
    /// ref reaches.
    pub(super) fn check_complete(&self, heads: &RemoteHeads) -> RemoteResult<()> {
        let tips = heads.commits()?;
        for (branch, v) in &heads.branches {
            if !self
                .store()
                .contains(v.commit_id()?.as_bytes())
                .map_err(crate::repo::RepoError::from)?
            {
                return Err(RemoteError::Corrupt(format!(
                    "branch '{branch}' names commit {}, which no complete pack holds",
                    v.commit
                )));
            }
        }
        let bases: Vec<ObjectId> = self.commit_refs()?.into_iter().map(|(_, id)| id).collect();
        let delta = self.delta(&tips, &bases).map_err(|e| match e {
            crate::repo::RepoError::Object(_) | crate::repo::RepoError::Tree(_) => {
                RemoteError::Corrupt(format!(
                    "the remote's branches reach objects it does not hold: {e}"
                ))
            }
            other => other.into(),
        })?;
        for v in &delta.values {
            if !self
                .store()
                .contains(v.as_bytes())
                .map_err(crate::repo::RepoError::from)?
            {
                return Err(RemoteError::Corrupt(format!(
                    "the remote's branches reach value {}, which no complete pack holds",
                    v.to_hex()
                )));
            }
        }
        Ok(())
    }
}

/// The objects of `entries` read from pack `hash` by byte ranges (adjacent ones merged),
/// each checked against its id.
fn read_ranges(
    t: &dyn Transport,
    hash: &str,
    entries: &[PackEntry],
) -> RemoteResult<Vec<(ObjectId, Vec<u8>)>> {
    const GAP: u64 = 64 << 10;
    let mut spans: Vec<(Range<u64>, Vec<PackEntry>)> = Vec::new();
    let mut sorted = entries.to_vec();
    sorted.sort_by_key(|e| e.offset);
    for e in sorted {
        let end = e.offset + u64::from(e.len);
        match spans.last_mut() {
            Some((r, members)) if e.offset <= r.end + GAP => {
                r.end = r.end.max(end);
                members.push(e);
            }
            _ => spans.push((e.offset..end, vec![e])),
        }
    }
    let ranges: Vec<Range<u64>> = spans.iter().map(|(r, _)| r.clone()).collect();
    let chunks = t.get_ranges(&pack_name(hash), &ranges)?;
    let mut out = Vec::with_capacity(entries.len());
    for ((range, members), chunk) in spans.iter().zip(chunks) {
        for e in members {
            let start = (e.offset - range.start) as usize;
            let bytes = chunk.get(start..start + e.len as usize).ok_or_else(|| {
                RemoteError::Corrupt(format!("pack {hash} is shorter than its index says"))
            })?;
            verify_object(&e.id, bytes, &format!("pack {hash}"))?;
            out.push((e.id, bytes.to_vec()));
        }
    }
    Ok(out)
}
