//! Rebuilding a store's database and index files from what they are derived from: the
//! object index from the packs (each record names its object and length, and its bytes hash
//! to its id), the refs from what the old database still yields and from the ref log. For a
//! store whose `db/` is lost or damaged, or whose packs or index files are; `fsck --repair`
//! runs it, then checks the result.
//!
//! Each pack's index file is rewritten from a verified scan of the pack (atomically; the
//! files are derived, so this is safe at any point). The new database is built beside the
//! old one, in `db.repair/`, and marked finished (`db.repair/FINISHED`) once it is durable;
//! only then is the old one set aside as `db.damaged` (replacing the one an earlier repair
//! set aside) and the new one renamed to `db/`. A repair cut short is settled by the next
//! open ([`settle`]): a finished one is put in place, an unfinished one removed, so a killed
//! repair never leaves a store worse than it found it.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::Path;

use serde::Serialize;

use super::disk_backend::{salvage, Refs};
use super::files::{io_err, remove_dir_if_present, sync_dir};
use super::format_file::read_format;
use super::handle::Engine;
use super::lifecycle::{open_disk_backend, DB_DIR};
use super::lock;
use super::object_index::scan_pack;
use super::pack_index::{self, index_path};
use super::packs::{pack_files, pack_in_store, PACKS_DIR, RECORD_HEAD};
use super::{reflog, DiskBackend, RawId, Store, StoreError, StoreResult};

/// Where a repair builds the new database.
const REPAIR_DIR: &str = "db.repair";
/// The file that marks [`REPAIR_DIR`] finished and durable.
const FINISHED: &str = "FINISHED";
/// Where the damaged database is set aside (the most recent one only).
const DAMAGED_DIR: &str = "db.damaged";

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
    /// Rebuilds the index files and the database of the store in `path` (taking its LOCK),
    /// as the module documentation says: every pack record whose bytes pass `opts.verify` is
    /// indexed, and each ref takes the value the old database still holds when its object
    /// was found, else the latest value the ref log gave it whose object was found. Returns
    /// the store, open, and what was done. Refuses, changing nothing, a store without a ref
    /// log (the refs could not be restored) or options without `verify`.
    pub fn repair(path: &Path, opts: &super::OpenOptions) -> StoreResult<(Store, RepairReport)> {
        read_format(path)?;
        let lock = lock::lock_existing(path, opts.lock_timeout)?;
        settle(path)?;
        if !reflog::exists(path) {
            return Err(StoreError::CannotRepair {
                path: path.to_path_buf(),
                reason: "it has no ref log to restore the refs from".into(),
            });
        }
        let Some(verify) = opts.verify else {
            return Err(StoreError::CannotRepair {
                path: path.to_path_buf(),
                reason: "no check of pack records was given to rebuild its index with".into(),
            });
        };
        let mut report = RepairReport::default();
        let dir = path.join(PACKS_DIR);
        let mut scans = Vec::new();
        for (no, pack, len) in pack_files(&dir)? {
            let (scan, covered) = scan_pack(&pack, len, Some(verify))?;
            let name = pack_in_store(no);
            if !scan.gaps.is_empty() || !scan.damaged.is_empty() {
                report.torn_packs.push(name.clone());
            }
            let skipped = scan.gaps.iter().copied().chain(
                scan.damaged
                    .iter()
                    .map(|&(_, at, len)| (at, at + RECORD_HEAD + u64::from(len))),
            );
            report
                .skipped
                .extend(skipped.map(|(offset, end)| SkippedBytes {
                    pack: name.clone(),
                    offset,
                    bytes: end - offset,
                }));
            scans.push((no, scan.records, covered));
        }
        let present: HashSet<RawId> = scans
            .iter()
            .flat_map(|(_, records, _)| records.iter().map(|(id, _, _)| *id))
            .collect();
        for (no, records, covered) in scans {
            report.objects_indexed += records.len() as u64;
            pack_index::write(&index_path(&dir, no), no, covered, records)?;
        }
        remove_orphan_index_files(&dir)?;
        let (logged, rolled_back) = logged_refs(path, &present)?;
        // The refs' home is the database: every ref it still holds whose object was found
        // wins over the log, which a crash can leave one move behind. The log serves the
        // refs a lost or unreadable database cannot give.
        let mut refs: BTreeMap<String, Vec<u8>> = logged.into_iter().collect();
        let mut from_database = HashSet::new();
        let (old_refs, journal) = salvage(&path.join(DB_DIR)).unwrap_or_default();
        for (name, value) in old_refs {
            if value_present(&value, &present) {
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
        DiskBackend::build_database(path, &beside, &dir, opts, &refs, &journal)?;
        let mark = beside.join(FINISHED);
        fs::File::create(&mark)
            .and_then(|f| f.sync_all())
            .map_err(io_err(&mark))?;
        sync_dir(&beside)?;
        sync_dir(path)?;
        report.old_database = swap_in(path)?;
        report.refs_restored = refs.into_iter().map(|(name, _)| name).collect();
        let store = Store::from_parts(
            Engine::Disk(open_disk_backend(path, opts)?),
            Some(lock),
            Some(path.to_path_buf()),
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
fn value_present(value: &[u8], present: &HashSet<RawId>) -> bool {
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
        let Some(Some(last)) = values.last() else {
            continue; // deleted
        };
        if value_present(last, present) {
            refs.push((name, last.clone()));
            continue;
        }
        rolled_back.push(name.clone());
        // The most recent earlier value that is present, unless the ref was deleted since.
        for value in values.iter().rev().skip(1) {
            match value {
                None => break,
                Some(v) if value_present(v, present) => {
                    refs.push((name, v.clone()));
                    break;
                }
                Some(_) => {}
            }
        }
    }
    Ok((refs, rolled_back))
}

/// Removes the index files whose pack is gone: the repair found what the packs still hold.
fn remove_orphan_index_files(dir: &Path) -> StoreResult<()> {
    for no in pack_index::without_pack(dir) {
        let path = index_path(dir, no);
        fs::remove_file(&path).map_err(io_err(&path))?;
    }
    sync_dir(dir)
}
