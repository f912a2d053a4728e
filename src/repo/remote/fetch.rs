//! Reading a remote: its branch heads, and the objects this store lacks.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use super::layout::{
    check_marker, index_name, max_index_bytes, pack_name, parse_pack_name, parse_ref_name,
    read_index, read_pack, verify_object, PackEntry, RefVersion, MARKER, MAX_MARKER_BYTES,
    MAX_PACK_FILE_BYTES, MAX_REF_VERSION_BYTES, REFS,
};
use super::transport::{Entry, Got, Transport};
use super::{Progress, RemoteError, RemoteResult};
use crate::object::ObjectId;
use crate::repo::Repo;
use crate::store::ObjectStore;

/// The newest version of every branch of a remote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteHeads {
    /// Branch name to its newest version.
    pub branches: BTreeMap<String, RefVersion>,
    /// Branches whose newest version cannot be read (damaged, or too large to be one), with
    /// why. They are left out of `branches`: the others are still read.
    pub unreadable: BTreeMap<String, String>,
}

impl RemoteHeads {
    /// The commit every readable branch names.
    pub fn commits(&self) -> RemoteResult<Vec<ObjectId>> {
        self.branches.values().map(RefVersion::commit_id).collect()
    }
}

/// The bytes of the remote object `name`, if there is one, read only if it has at most
/// `limit` bytes: a longer one is damage (`what` names it in the message), and nothing of
/// it is read past the limit.
pub(super) fn get_bounded(
    t: &dyn Transport,
    name: &str,
    limit: u64,
    what: &str,
) -> RemoteResult<Option<Vec<u8>>> {
    match t.get(name, limit)? {
        Got::Missing => Ok(None),
        Got::Bytes(b) => Ok(Some(b)),
        Got::TooLarge(size) => Err(RemoteError::Corrupt(format!(
            "{what} {name} is too large to be one ({size} bytes or more; at most {limit})"
        ))),
    }
}

/// Whether the remote at `t` exists as a remote: `false` when it holds nothing at all (a
/// new remote), an error when it holds something that is not a memoir remote.
pub(super) fn check_remote(t: &dyn Transport) -> RemoteResult<bool> {
    match get_bounded(t, MARKER, MAX_MARKER_BYTES, "the marker")? {
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

/// The newest version of each branch among listed ref versions, read from the remote: a
/// version that cannot be read puts its branch among the unreadable ones.
fn newest_versions(t: &dyn Transport, listed: &[Entry]) -> RemoteResult<RemoteHeads> {
    let mut newest: BTreeMap<String, (u64, &Entry)> = BTreeMap::new();
    for e in listed {
        if let Some((branch, seq)) = parse_ref_name(&e.name) {
            let slot = newest.entry(branch).or_insert((seq, e));
            if seq >= slot.0 {
                *slot = (seq, e);
            }
        }
    }
    let mut out = RemoteHeads::default();
    for (branch, (_, e)) in newest {
        let name = e.name.as_str();
        let read = if e.size > MAX_REF_VERSION_BYTES {
            Err(RemoteError::Corrupt(format!(
                "ref version {name} is too large to be one ({} bytes; at most \
                 {MAX_REF_VERSION_BYTES})",
                e.size
            )))
        } else {
            get_bounded(t, name, MAX_REF_VERSION_BYTES, "ref version").and_then(|b| {
                let b = b.ok_or_else(|| {
                    RemoteError::Corrupt(format!(
                        "ref version {name} was listed but cannot be read"
                    ))
                })?;
                RefVersion::from_bytes(&b, name)
            })
        };
        match read {
            Ok(v) => {
                out.branches.insert(branch, v);
            }
            Err(RemoteError::Corrupt(why)) => {
                out.unreadable.insert(branch, why);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Every branch head of the remote (none for a new, empty remote).
pub fn read_heads(t: &dyn Transport) -> RemoteResult<RemoteHeads> {
    if !check_remote(t)? {
        return Ok(RemoteHeads::default());
    }
    newest_versions(t, &t.list(REFS)?)
}

/// The head of one branch of the remote, read afresh (unreadable: an error).
pub(super) fn read_head(t: &dyn Transport, branch: &str) -> RemoteResult<Option<RefVersion>> {
    let listed = t.list(&super::layout::ref_dir(branch))?;
    let mut heads = newest_versions(t, &listed)?;
    if let Some(why) = heads.unreadable.remove(branch) {
        return Err(RemoteError::Corrupt(why));
    }
    Ok(heads.branches.remove(branch))
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
            if !report.heads.unreadable.is_empty() {
                // Nothing was read: what this store holds of the remote is as it was.
                report.packs_held = held.clone();
            }
            return Ok(report);
        }
        let listed = t.list(super::layout::PACKS)?;
        let mut sizes: BTreeMap<String, (Option<u64>, Option<u64>)> = BTreeMap::new();
        for e in &listed {
            if let Some((hash, idx)) = parse_pack_name(&e.name) {
                let slot = sizes.entry(hash).or_default();
                *(if idx { &mut slot.1 } else { &mut slot.0 }) = Some(e.size);
            }
        }
        // Packs are read one at a time, and every size is checked before it is read: a
        // fetch holds at most one pack and its index besides the objects it receives.
        let mut received: Vec<([u8; 32], Vec<u8>)> = Vec::new();
        let mut got: BTreeSet<ObjectId> = BTreeSet::new();
        let mut total = Progress::default();
        for (hash, sizes) in sizes {
            let (Some(size), Some(idx_size)) = sizes else {
                continue;
            };
            if held.contains(&hash) {
                report.packs_held.insert(hash);
                continue;
            }
            let entries = read_pack_index(t, &hash, size, idx_size)?;
            let mut missing = Vec::new();
            for e in entries {
                if !got.contains(&e.id)
                    && !self
                        .store()
                        .contains(e.id.as_bytes())
                        .map_err(crate::repo::RepoError::from)?
                {
                    missing.push(e);
                }
            }
            report.packs_held.insert(hash.clone());
            if missing.is_empty() {
                continue;
            }
            let bytes: u64 = missing.iter().map(|e| u64::from(e.len)).sum();
            total.objects_total += missing.len() as u64;
            total.bytes_total += bytes;
            let objects = if bytes as f64 >= size as f64 * WHOLE_PACK_SHARE {
                let pack = get_bounded(t, &pack_name(&hash), size, "pack")?.ok_or_else(|| {
                    RemoteError::Corrupt(format!("pack {hash} was listed but cannot be read"))
                })?;
                read_pack(&pack, &hash, &missing)?
            } else {
                read_ranges(t, &hash, &missing)?
            };
            report.packs_read += 1;
            for (id, bytes) in objects {
                total.objects += 1;
                total.bytes += bytes.len() as u64;
                got.insert(id);
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

/// The entries of the index of pack `hash` (`size` bytes, its index listed as `idx_size`),
/// its size checked against the most such a pack allows before anything is read.
pub(super) fn read_pack_index(
    t: &dyn Transport,
    hash: &str,
    size: u64,
    idx_size: u64,
) -> RemoteResult<Vec<PackEntry>> {
    if size > MAX_PACK_FILE_BYTES {
        return Err(RemoteError::Corrupt(format!(
            "pack {hash} is {size} bytes; a pack is at most {MAX_PACK_FILE_BYTES}"
        )));
    }
    let limit = max_index_bytes(size);
    if idx_size > limit {
        return Err(RemoteError::Corrupt(format!(
            "pack index {hash} is {idx_size} bytes; the index of a pack of {size} bytes is at \
             most {limit}"
        )));
    }
    let idx = get_bounded(t, &index_name(hash), limit, "pack index")?.ok_or_else(|| {
        RemoteError::Corrupt(format!("pack index {hash} was listed but cannot be read"))
    })?;
    read_index(&idx, hash, size)
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
        if chunk.len() as u64 != range.end - range.start {
            return Err(RemoteError::Corrupt(format!(
                "pack {hash} answered {} bytes for a range of {}",
                chunk.len(),
                range.end - range.start
            )));
        }
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
