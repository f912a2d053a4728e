//! Rebuilding a store's database from what it is derived from: the object index from the
//! packs (each record names its object and length, and its bytes hash to its id), the refs
//! from the ref log. For a store whose `db/` is lost or damaged; `fsck --repair` runs it,
//! then checks the result.
//!
//! The new database is built beside the old one, in `db.repair/`, and marked finished
//! (`db.repair/FINISHED`) once it is durable; only then is the old one set aside as
//! `db.damaged` (replacing the one an earlier repair set aside) and the new one renamed to
//! `db/`. A repair cut short is settled by the next open ([`settle`]): a finished one is
//! put in place, an unfinished one removed, so a killed repair never leaves a store worse
//! than it found it.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::Path;

use serde::Serialize;

use super::files::{io_err, remove_dir_if_present, sync_dir};
use super::format_file::read_format;
use super::handle::Engine;
use super::lifecycle::{open_sled, DB_DIR};
use super::lock;
use super::pack_index::Entry;
use super::packs::{pack_files, pack_name, Location, HEADER, PACKS_DIR, RECORD_HEAD};
use super::sled_backend::salvage_refs;
use super::{reflog, BackendKind, RawId, SledBackend, Store, StoreError, StoreResult};

/// Where a repair builds the new database.
const REPAIR_DIR: &str = "db.repair";
/// The file that marks [`REPAIR_DIR`] finished and durable.
const FINISHED: &str = "FINISHED";
/// Where the damaged database is set aside (the most recent one only).
const DAMAGED_DIR: &str = "db.damaged";

/// Refs by name, each with its raw value.
type Refs = Vec<(String, Vec<u8>)>;

/// Checks that a pack record's bytes are the object its id names (the object layer's rule).
pub type VerifyRecord<'a> = &'a dyn Fn(&RawId, &[u8]) -> bool;

/// A stretch of a pack that holds no whole record: a torn or damaged record, stepped over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedBytes {
    /// The pack, relative to the store (`packs/pack-NNNNNNNN`).
    pub pack: String,
    /// Where the stretch starts.
    pub offset: u64,
    /// How many bytes it spans.
    pub bytes: u64,
}

/// What a repair did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RepairReport {
    /// Where the old database was moved (relative to the store), if there was one.
    pub old_database: Option<String>,
    /// Pack records indexed.
    pub objects_indexed: u64,
    /// The refs restored: each from the old database where it still held one whose object
    /// was found, else from the ref log.
    pub refs_restored: Vec<String>,
    /// Packs holding bytes that are not whole records (a tail torn by a crash, damage):
    /// those bytes are stepped over, and the records after them are indexed.
    pub torn_packs: Vec<String>,
    /// Each stretch of bytes stepped over.
    pub skipped: Vec<SkippedBytes>,
    /// Refs whose last logged value names a commit no pack holds: each is set to the most
    /// recent value the log gave it whose commit is present (or left out if there is none).
    /// What was written after that value could not be recovered.
    pub refs_rolled_back: Vec<String>,
}

impl Store {
    /// Rebuilds the database of the store in `path` (holding its LOCK) beside the old one:
    /// every record of every pack whose bytes pass `verify` is indexed (a torn or damaged
    /// stretch is stepped over, and the records after it are found by re-synchronising on
    /// record boundaries), and every ref is set to the value the old database still holds
    /// (when it can be read and names an object found), else to the value its last ref-log
    /// entry gave it whose object was found. The new database then replaces the old one, which is kept as
    /// `db.damaged`. Returns the store, open, and what was done. Refuses, changing nothing, a
    /// store without a ref log (the refs could not be restored).
    pub fn repair(
        path: &Path,
        opts: &super::OpenOptions,
        verify: VerifyRecord<'_>,
    ) -> StoreResult<(Store, RepairReport)> {
        read_format(path)?;
        let lock = lock::lock_existing(path, opts.lock_timeout)?;
        settle(path)?;
        if !reflog::exists(path) {
            return Err(StoreError::CannotRepair {
                path: path.to_path_buf(),
                reason: "it has no ref log to restore the refs from".into(),
            });
        }
        let mut report = RepairReport::default();
        let mut entries = Vec::new();
        for (no, pack, _) in pack_files(&path.join(PACKS_DIR))? {
            let bytes = fs::read(&pack).map_err(io_err(&pack))?;
            let (records, gaps) = scan_verified(&bytes, verify);
            let name = format!("{PACKS_DIR}/{}", pack_name(no));
            if !gaps.is_empty() {
                report.torn_packs.push(name.clone());
            }
            report
                .skipped
                .extend(gaps.into_iter().map(|(offset, end)| SkippedBytes {
                    pack: name.clone(),
                    offset,
                    bytes: end - offset,
                }));
            entries.extend(records.into_iter().map(|(id, offset, len)| {
                (
                    id,
                    Location {
                        pack: no,
                        offset,
                        len,
                    },
                )
            }));
        }
        let present: HashSet<RawId> = entries.iter().map(|(id, _)| *id).collect();
        let (logged, rolled_back) = logged_refs(path, &present)?;
        // The refs' home is the database: every ref it still holds whose object was found
        // wins over the log, which a crash can leave one move behind. The log serves the
        // refs a lost or unreadable database cannot give.
        let mut refs: BTreeMap<String, Vec<u8>> = logged.into_iter().collect();
        let mut from_database = HashSet::new();
        for (name, value) in salvage_refs(&path.join(DB_DIR)).unwrap_or_default() {
            if found(&value, &present) {
                from_database.insert(name.clone());
                refs.insert(name, value);
            }
        }
        report.refs_rolled_back = rolled_back
            .into_iter()
            .filter(|name| !from_database.contains(name))
            .collect();
        let refs: Refs = refs.into_iter().collect();

        let beside = path.join(REPAIR_DIR);
        remove_dir_if_present(&beside)?;
        fs::create_dir(&beside).map_err(io_err(&beside))?;
        let backend = SledBackend::try_open(
            &beside,
            &path.join(PACKS_DIR),
            opts.cache_bytes,
            opts.pack_bytes,
        )?
        .ok_or_else(|| StoreError::CannotRepair {
            path: path.to_path_buf(),
            reason: "its new database is held by another handle".into(),
        })?;
        backend.fill(&entries, &refs)?;
        drop(backend);
        let mark = beside.join(FINISHED);
        fs::File::create(&mark)
            .and_then(|f| f.sync_all())
            .map_err(io_err(&mark))?;
        sync_dir(&beside)?;
        sync_dir(path)?;
        report.old_database = swap_in(path)?;
        report.objects_indexed = entries.len() as u64;
        report.refs_restored = refs.into_iter().map(|(name, _)| name).collect();
        let store = Store::from_parts(
            Engine::Sled(open_sled(path, opts)?),
            Some(lock),
            Some(path.to_path_buf()),
            BackendKind::Sled,
        );
        Ok((store, report))
    }
}

/// Finishes or undoes a repair of the store in `path` that was cut short (the caller holds
/// the LOCK): a finished new database is put in place, an unfinished one removed.
pub(super) fn settle(path: &Path) -> StoreResult<()> {
    let beside = path.join(REPAIR_DIR);
    if fs::symlink_metadata(&beside).is_err() {
        return Ok(());
    }
    if beside.join(FINISHED).is_file() {
        swap_in(path)?;
    } else {
        remove_dir_if_present(&beside)?;
        sync_dir(path)?;
    }
    Ok(())
}

/// Puts the finished new database in place: the database set aside by an earlier repair is
/// removed, `db/` (if any) becomes `db.damaged`, `db.repair/` becomes `db/`. Each step is a
/// rename or removal that [`settle`] can take up after a crash. Returns where the old
/// database went.
fn swap_in(path: &Path) -> StoreResult<Option<String>> {
    let db = path.join(DB_DIR);
    let mut aside = None;
    if fs::symlink_metadata(&db).is_ok() {
        remove_dir_if_present(&path.join(DAMAGED_DIR))?;
        // Databases set aside as `db.damaged-N` by older builds are superseded too.
        for entry in fs::read_dir(path).map_err(io_err(path))?.flatten() {
            if entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with("db.damaged-"))
            {
                remove_dir_if_present(&entry.path())?;
            }
        }
        fs::rename(&db, path.join(DAMAGED_DIR)).map_err(io_err(&db))?;
        aside = Some(DAMAGED_DIR.to_string());
    }
    fs::rename(path.join(REPAIR_DIR), &db).map_err(io_err(&db))?;
    sync_dir(path)?;
    let mark = db.join(FINISHED);
    fs::remove_file(&mark).map_err(io_err(&mark))?;
    Ok(aside)
}

/// Whether a ref's `value` can be kept: it is not an id (an attached `HEAD`), or it names an
/// object in `present`.
fn found(value: &[u8], present: &HashSet<RawId>) -> bool {
    <RawId>::try_from(value).map_or(true, |id| present.contains(&id))
}

/// The refs the ref log of the store in `path` leaves, each at the most recent value whose
/// object is in `present` (a value that is not an id, such as an attached `HEAD`, always
/// is), sorted by name; and the names of the refs that had to go back to an earlier value
/// (or were left out) because a later one names a missing object.
fn logged_refs(path: &Path, present: &HashSet<RawId>) -> StoreResult<(Refs, Vec<String>)> {
    let mut history: BTreeMap<String, Vec<Option<Vec<u8>>>> = BTreeMap::new();
    for e in reflog::read(path)? {
        let value = e.new_value();
        history.entry(e.name).or_default().push(value);
    }
    let mut refs = Vec::new();
    let mut rolled_back = Vec::new();
    for (name, values) in history {
        let Some(last) = values.last() else { continue };
        let Some(last) = last else { continue }; // deleted
        if found(last, present) {
            refs.push((name, last.clone()));
            continue;
        }
        rolled_back.push(name.clone());
        // The most recent earlier value that is present, unless the ref was deleted since.
        for value in values.iter().rev().skip(1) {
            match value {
                None => break,
                Some(v) if found(v, present) => {
                    refs.push((name, v.clone()));
                    break;
                }
                Some(_) => {}
            }
        }
    }
    Ok((refs, rolled_back))
}

/// Every record in `pack` (a whole pack file, magic included) whose bytes pass `verify`, in
/// order, and the byte ranges `[start, end)` between them that hold none. After a stretch
/// that is not a record, every later byte offset is tried as a record's start until one
/// verifies, so a torn record with records after it hides none of them.
fn scan_verified(pack: &[u8], verify: VerifyRecord<'_>) -> (Vec<Entry>, Vec<(u64, u64)>) {
    let head = RECORD_HEAD as usize;
    let record_at = |at: usize| -> Option<(RawId, u32)> {
        let header = pack.get(at..at.checked_add(head)?)?;
        let len = u32::from_be_bytes(header[32..].try_into().ok()?);
        let body = pack.get(at + head..(at + head).checked_add(len as usize)?)?;
        let id: RawId = header[..32].try_into().ok()?;
        verify(&id, body).then_some((id, len))
    };
    let mut records = Vec::new();
    let mut gaps = Vec::new();
    let mut gap_start = None;
    let mut at = (HEADER as usize).min(pack.len());
    while at < pack.len() {
        match record_at(at) {
            Some((id, len)) => {
                if let Some(start) = gap_start.take() {
                    gaps.push((start as u64, at as u64));
                }
                records.push((id, at as u64, len));
                at += head + len as usize;
            }
            None => {
                gap_start.get_or_insert(at);
                at += 1;
            }
        }
    }
    if let Some(start) = gap_start {
        gaps.push((start as u64, pack.len() as u64));
    }
    (records, gaps)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of `body` under the id that is `body`'s first byte repeated.
    fn record(body: &[u8]) -> Vec<u8> {
        let mut r = vec![body[0]; 32];
        r.extend_from_slice(&(body.len() as u32).to_be_bytes());
        r.extend_from_slice(body);
        r
    }

    fn verify(id: &RawId, body: &[u8]) -> bool {
        !body.is_empty() && id.iter().all(|&b| b == body[0])
    }

    #[test]
    fn records_after_a_torn_one_are_found() {
        let mut pack = b"MEMPACK1".to_vec();
        pack.extend(record(b"aaaa"));
        let torn = pack.len();
        pack.extend(&record(b"bbbbbbbb")[..20]);
        pack.extend(b"0123456789abcdef");
        let after = pack.len();
        pack.extend(record(b"cc"));
        pack.extend(&record(b"dddd")[..5]);
        let (records, gaps) = scan_verified(&pack, &verify);
        let ids: Vec<u8> = records.iter().map(|(id, _, _)| id[0]).collect();
        assert_eq!(ids, b"ac");
        assert_eq!(records[1].1, after as u64);
        assert_eq!(
            gaps,
            vec![
                (torn as u64, after as u64),
                ((after + 38) as u64, pack.len() as u64)
            ]
        );
    }

    #[test]
    fn a_pack_shorter_than_its_magic_has_no_records() {
        let (records, gaps) = scan_verified(b"MEMP", &verify);
        assert!(records.is_empty() && gaps.is_empty());
    }
}
