//! Where each object is. A pack's records name their objects, so the packs are the one home
//! of both the objects and their places; this index is derived from them: for each pack, its
//! index file (`packs/pack-NNNNNNNN.idx`: the ids of the records up to the length it covers,
//! sorted, see `pack_index`) and the records after that length (the pack's *tail*, read in
//! order when the index opens).
//!
//! The holder of the LOCK opens it with a verified scan of every tail (a record counts only
//! if its bytes hash to its id): a torn or damaged record is stepped over, the records after
//! it are found, and torn bytes at the end of the newest pack (what a killed append leaves)
//! are cut off before anything is appended behind them. It writes a pack's index file when
//! the pack is sealed (a newer pack started), when its tail outgrows [`REWRITE_TAIL`], and
//! when garbage collection deleted objects in it; an index file that is missing or fails its
//! checksum is rebuilt from its pack. Deleting an object only drops its entries, so after a
//! crash a deleted object may come back, unreachable, until the next garbage collection.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::files::{io_err, sync_dir};
use super::pack_index::{self, index_path, Entry, PackIndex};
use super::packs::{pack_files, pack_in_store, pack_name, Location, HEADER, RECORD_HEAD};
use super::{FileDamage, RawId, StoreError, StoreResult};

/// Whether an object's bytes hash to its id: the check of a record that the object layer
/// knows how to make (the store does not know how ids are computed).
pub type VerifyRecord = fn(&RawId, &[u8]) -> bool;

/// A pack whose records past its index file's `covered` length exceed this gets its index
/// file rewritten at the next flush; an open reads at most this much of a pack's tail, give
/// or take one command's appends.
pub(crate) const REWRITE_TAIL: u64 = 1 << 20;

/// A tail longer than this is not read by a closed read (the reader opens the store instead).
const MAX_TAIL: u64 = 8 << 20;

/// Bytes of a pack that are not records: where they start and where they end.
pub(crate) type Gap = (u64, u64);

/// What a scan of pack bytes found (see [`scan_records`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    /// The whole records whose bytes hash to their id (every whole record, unchecked), in
    /// order.
    pub records: Vec<Entry>,
    /// Whole records whose bytes do not hash to their id (damaged) with checked records
    /// after them: an index names them only where no whole copy exists, so that a read
    /// reports the damage rather than an absent object.
    pub damaged: Vec<Entry>,
    /// Stretches that are not records, stepped over.
    pub gaps: Vec<Gap>,
}

/// The records of `buf`, the bytes of a pack from offset `from` on. Records are read in
/// order by their length fields. With `verify`, each is checked; where a length field leads
/// nowhere (a record that does not fit), every later byte offset is tried as a record's
/// start until one verifies, so the records after a torn one are found; and the end of the
/// bytes after the last record that verifies (damaged or torn records, what a killed append
/// leaves) is one last gap. Without `verify`, the scan stops at the first record that does
/// not fit, and what follows is the gap.
pub(crate) fn scan_records(buf: &[u8], from: u64, verify: Option<VerifyRecord>) -> Scan {
    let head = RECORD_HEAD as usize;
    let whole = |at: usize| -> Option<(RawId, u32, usize)> {
        let header = buf.get(at..at.checked_add(head)?)?;
        let len = u32::from_be_bytes(header[32..].try_into().ok()?);
        let end = (at + head).checked_add(len as usize)?;
        (end <= buf.len()).then(|| (header[..32].try_into().expect("32 bytes"), len, end))
    };
    let checks =
        |id: &RawId, at: usize, end: usize| verify.is_none_or(|v| v(id, &buf[at + head..end]));
    let mut out = Scan::default();
    // Records (checked or not) in order, and how many of them end with a checked one.
    let mut found: Vec<(Entry, bool)> = Vec::new();
    let (mut good, mut good_end) = (0, 0);
    let mut at = 0;
    while at < buf.len() {
        if let Some((id, len, end)) = whole(at) {
            let ok = checks(&id, at, end);
            found.push(((id, from + at as u64, len), ok));
            if ok {
                (good, good_end) = (found.len(), end);
            }
            at = end;
            continue;
        }
        if verify.is_none() {
            break;
        }
        let next =
            (at + 1..buf.len()).find(|&o| whole(o).is_some_and(|(id, _, end)| checks(&id, o, end)));
        let Some(next) = next else { break };
        out.gaps.push((from + at as u64, from + next as u64));
        at = next;
    }
    if verify.is_none() {
        (good, good_end) = (found.len(), at);
    }
    found.truncate(good);
    for (entry, ok) in found {
        if ok {
            out.records.push(entry);
        } else {
            out.damaged.push(entry);
        }
    }
    if good_end < buf.len() {
        out.gaps
            .push((from + good_end as u64, from + buf.len() as u64));
    }
    out
}

/// Reads bytes `from..to` of the pack at `path`.
fn read_span(path: &Path, from: u64, to: u64) -> StoreResult<Vec<u8>> {
    let file = File::open(path).map_err(io_err(path))?;
    let mut buf = vec![0u8; to.saturating_sub(from) as usize];
    std::os::unix::fs::FileExt::read_exact_at(&file, &mut buf, from).map_err(io_err(path))?;
    Ok(buf)
}

/// Every record of the pack at `path`, `len` bytes long, by a scan from its start (see
/// [`scan_records`]), and the length an index of them covers: the end of the last record
/// when the pack ends in bytes that are not records (so an open cuts or steps over them
/// again), else the whole pack.
pub(crate) fn scan_pack(
    path: &Path,
    len: u64,
    verify: Option<VerifyRecord>,
) -> StoreResult<(Scan, u64)> {
    let from = HEADER.min(len);
    let scan = scan_records(&read_span(path, from, len)?, from, verify);
    let covered = match scan.gaps.last() {
        Some(&(start, end)) if end == len => start.max(HEADER),
        _ => len.max(HEADER),
    };
    Ok((scan, covered))
}

/// Records as a map from id to place (a later record of an id replaces an earlier one).
fn places(records: Vec<Entry>) -> HashMap<RawId, (u64, u32)> {
    records.into_iter().map(|(id, o, l)| (id, (o, l))).collect()
}

/// One pack as the index knows it.
#[derive(Debug)]
struct IndexedPack {
    /// Its index file, if it has a usable one.
    file: Option<PackIndex>,
    /// The records after what the file covers: id -> (offset, length); a later record of
    /// an id replaces an earlier one.
    tail: HashMap<RawId, (u64, u32)>,
    /// Damaged records of the tail (see [`Scan::damaged`]): found only when no pack has a
    /// whole copy.
    damaged: HashMap<RawId, (u64, u32)>,
    /// Where the records known end (the pack's length as scanned, or as appended to).
    end: u64,
}

impl IndexedPack {
    /// A pack read through `file` up to `end`, with no records known after it yet.
    fn new(file: Option<PackIndex>, end: u64) -> IndexedPack {
        let (tail, damaged) = (HashMap::new(), HashMap::new());
        IndexedPack {
            file,
            tail,
            damaged,
            end,
        }
    }

    fn covered(&self) -> u64 {
        self.file.as_ref().map_or(HEADER, PackIndex::covered)
    }

    /// Where the record of `id` is in this pack: the tail's, which is newer, first.
    fn find(&self, id: &RawId) -> Option<(u64, u32)> {
        if let Some(&place) = self.tail.get(id) {
            return Some(place);
        }
        self.file.as_ref().and_then(|f| f.find(id))
    }
}

/// What the index holds: the packs by number and the objects deleted since their files
/// were written.
#[derive(Debug, Default)]
struct State {
    packs: BTreeMap<u32, IndexedPack>,
    deleted: HashSet<RawId>,
    /// Stretches of the tails read that are not records (damage, or a crash's torn record
    /// with records after it), by pack: reported by `fsck`.
    gaps: Vec<(u32, Gap)>,
}

/// The object index of an opened store (see the module documentation).
#[derive(Debug)]
pub(crate) struct ObjectIndex {
    /// The packs' directory, which holds the index files too.
    dir: PathBuf,
    state: RwLock<State>,
    verify: Option<VerifyRecord>,
    /// Whether this handle may write (cut torn tails, write index files).
    writable: bool,
    /// Whether every index file was checked whole since the index opened.
    checked: AtomicBool,
}

impl ObjectIndex {
    /// Opens the index of the packs in `dir`. A writer first removes what a killed writer
    /// left (temporary files, index files of packs that are gone), cuts the torn end of the
    /// newest pack, and writes the index file of every older pack that lacks a whole one.
    /// Index files it cannot write then are written later; until then their packs are read.
    pub(crate) fn open(
        dir: &Path,
        verify: Option<VerifyRecord>,
        writable: bool,
    ) -> StoreResult<ObjectIndex> {
        let packs = if dir.is_dir() {
            pack_files(dir)?
        } else {
            Vec::new()
        };
        if writable && dir.is_dir() {
            remove_temporaries(dir)?;
        }
        let newest = packs.last().map(|(no, _, _)| *no);
        let mut state = State::default();
        for (no, path, len) in packs {
            let file = PackIndex::open(&index_path(dir, no), no);
            let from = file.as_ref().map_or(HEADER, PackIndex::covered).min(len);
            let mut scan = scan_records(&read_span(&path, from, len)?, from, verify);
            let mut end = len;
            if let Some(&(start, gap_end)) = scan.gaps.last() {
                if writable && Some(no) == newest && gap_end == len {
                    truncate_durably(&path, start.max(HEADER))?;
                    end = start.max(HEADER);
                    scan.gaps.pop();
                }
            }
            state.gaps.extend(scan.gaps.into_iter().map(|g| (no, g)));
            let mut pack = IndexedPack::new(file, end);
            (pack.tail, pack.damaged) = (places(scan.records), places(scan.damaged));
            state.packs.insert(no, pack);
        }
        // The index file of a pack that is gone: its objects read as damaged, not absent.
        for no in pack_index::without_pack(dir) {
            if let Some(file) = PackIndex::open(&index_path(dir, no), no) {
                let end = file.covered();
                state.packs.insert(no, IndexedPack::new(Some(file), end));
            }
        }
        let index = ObjectIndex {
            dir: dir.to_path_buf(),
            state: RwLock::new(state),
            verify,
            writable,
            checked: AtomicBool::new(false),
        };
        if let Some(active) = newest {
            // Best effort: a file not written now is written by a later flush.
            let _ = index.persist(active);
        }
        Ok(index)
    }

    /// The index of the packs in `dir` as a close recorded them (`lengths`: number and
    /// length), for a closed read, which reads nothing past those lengths and checks no
    /// record (every object read is re-hashed above): `None` if a pack is gone or shorter
    /// than recorded, or has a tail longer than [`MAX_TAIL`].
    pub(crate) fn open_closed(dir: &Path, lengths: &[(u32, u64)]) -> Option<ObjectIndex> {
        let mut state = State::default();
        for &(no, len) in lengths {
            let path = dir.join(pack_name(no));
            if fs::metadata(&path).ok()?.len() < len {
                return None;
            }
            let file = PackIndex::open(&index_path(dir, no), no).filter(|f| f.covered() <= len);
            let from = file.as_ref().map_or(HEADER, PackIndex::covered).min(len);
            if len - from > MAX_TAIL {
                return None;
            }
            let scan = scan_records(&read_span(&path, from, len).ok()?, from, None);
            let mut pack = IndexedPack::new(file, len);
            pack.tail = places(scan.records);
            state.packs.insert(no, pack);
        }
        Some(ObjectIndex {
            dir: dir.to_path_buf(),
            state: RwLock::new(state),
            verify: None,
            writable: false,
            checked: AtomicBool::new(true),
        })
    }

    /// The length pack `no`'s index file covers, if it has one.
    pub(crate) fn covered(&self, no: u32) -> Option<u64> {
        self.read()
            .packs
            .get(&no)?
            .file
            .as_ref()
            .map(PackIndex::covered)
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        super::read_locked(&self.state)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        super::write_locked(&self.state)
    }

    /// Where the record of `id` is: the newest pack holding it wins.
    pub(crate) fn find(&self, id: &RawId) -> Option<Location> {
        let st = self.read();
        if st.deleted.contains(id) {
            return None;
        }
        let at = |pack: u32, (offset, len): (u64, u32)| Location { pack, offset, len };
        st.packs
            .iter()
            .rev()
            .find_map(|(&no, p)| p.find(id).map(|place| at(no, place)))
            .or_else(|| {
                st.packs
                    .iter()
                    .rev()
                    .find_map(|(&no, p)| p.damaged.get(id).map(|&place| at(no, place)))
            })
    }

    /// Records that objects were appended at `places`.
    pub(crate) fn add(&self, places: &[(RawId, Location)]) {
        let mut st = self.write();
        for (id, loc) in places {
            st.deleted.remove(id);
            let pack = st
                .packs
                .entry(loc.pack)
                .or_insert_with(|| IndexedPack::new(None, HEADER));
            pack.damaged.remove(id);
            pack.tail.insert(*id, (loc.offset, loc.len));
            pack.end = pack.end.max(loc.offset + loc.record_bytes());
        }
    }

    /// Drops `id`'s entries (garbage collection); whether it had one.
    pub(crate) fn delete(&self, id: &RawId) -> bool {
        let found = self.find(id).is_some();
        if found {
            self.write().deleted.insert(*id);
        }
        found
    }

    /// Forgets pack `no` and removes its index file: the pack is being deleted.
    pub(crate) fn drop_pack(&self, no: u32) -> StoreResult<()> {
        let mut st = self.write();
        st.packs.remove(&no);
        st.gaps.retain(|(n, _)| *n != no);
        let path = index_path(&self.dir, no);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err(&path)(e)),
            _ => Ok(()),
        }
    }

    /// Every object and where it is (the newest copy of each), sorted by id.
    pub(crate) fn entries(&self) -> StoreResult<Vec<(RawId, Location)>> {
        let st = self.read();
        let mut all: HashMap<RawId, Location> = HashMap::new();
        for (&no, p) in &st.packs {
            let at = |(id, offset, len): Entry| {
                (
                    id,
                    Location {
                        pack: no,
                        offset,
                        len,
                    },
                )
            };
            all.extend(self.file_entries(no, p)?.into_iter().map(at));
            all.extend(p.tail.iter().map(|(id, &(o, l))| at((*id, o, l))));
        }
        let mut out: Vec<(RawId, Location)> = all
            .into_iter()
            .filter(|(id, _)| !st.deleted.contains(id))
            .collect();
        out.sort_unstable_by_key(|(id, _)| *id);
        Ok(out)
    }

    /// The ids that start with `prefix`, ascending.
    pub(crate) fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        if prefix.is_empty() {
            return Ok(self.entries()?.into_iter().map(|(id, _)| id).collect());
        }
        let st = self.read();
        let mut out = BTreeSet::new();
        for p in st.packs.values() {
            if let Some(f) = &p.file {
                out.extend(f.ids_with_prefix(prefix));
            }
            out.extend(p.tail.keys().filter(|id| id.starts_with(prefix)));
        }
        Ok(out
            .into_iter()
            .filter(|id| !st.deleted.contains(id))
            .collect())
    }

    /// The entries of pack `no`'s index file, checked whole against its checksum; a file
    /// that fails is replaced by a scan of the pack up to what it covered.
    fn file_entries(&self, no: u32, p: &IndexedPack) -> StoreResult<Vec<Entry>> {
        let Some(f) = &p.file else {
            return Ok(Vec::new());
        };
        if let Some(entries) = f.entries() {
            return Ok(entries);
        }
        let path = self.dir.join(pack_name(no));
        let from = HEADER.min(f.covered());
        let scan = scan_records(&read_span(&path, from, f.covered())?, from, self.verify);
        Ok(scan.records.into_iter().chain(scan.damaged).collect())
    }

    /// Makes the index files what the packs need, once the packs are synced (a flush): for
    /// every pack but `active` that lacks a whole file, for `active` when its tail outgrew
    /// [`REWRITE_TAIL`], and for every pack holding an object deleted since.
    pub(crate) fn persist(&self, active: u32) -> StoreResult<()> {
        if !self.writable {
            return Ok(());
        }
        let st = &mut *self.write();
        let numbers: Vec<u32> = st.packs.keys().copied().collect();
        for no in numbers {
            if !self.dir.join(pack_name(no)).exists() {
                continue; // the index file of a pack that is gone stays as it is
            }
            let p = &st.packs[&no];
            let holds_deleted = st
                .deleted
                .iter()
                .any(|id| p.find(id).is_some() || p.damaged.contains_key(id));
            let stale = if no == active {
                p.end.saturating_sub(p.covered()) > REWRITE_TAIL
            } else {
                p.file.is_none() || !p.tail.is_empty() || !p.damaged.is_empty()
            };
            if holds_deleted || stale {
                let mut entries = self.file_entries(no, p)?;
                entries.extend(p.tail.iter().map(|(id, &(o, l))| (*id, o, l)));
                // A damaged record only where no pack has a whole copy of its object.
                let no_copy = |id: &RawId| !st.packs.values().any(|q| q.find(id).is_some());
                entries.extend(
                    p.damaged
                        .iter()
                        .filter(|(id, _)| no_copy(id))
                        .map(|(id, &(o, l))| (*id, o, l)),
                );
                entries.retain(|(id, _, _)| !st.deleted.contains(id));
                let end = p.end;
                self.write_file(st, no, end, entries)?;
            }
        }
        st.deleted.clear();
        Ok(())
    }

    /// Writes pack `no`'s index file covering its first `covered` bytes with `entries`,
    /// durably, and reads from it from now on.
    fn write_file(
        &self,
        st: &mut State,
        no: u32,
        covered: u64,
        entries: Vec<Entry>,
    ) -> StoreResult<()> {
        let path = index_path(&self.dir, no);
        pack_index::write(&path, no, covered, entries)?;
        let file = PackIndex::open(&path, no).ok_or_else(|| StoreError::Io {
            path: path.clone(),
            source: std::io::Error::other("the index file just written does not read back"),
        })?;
        let pack = st
            .packs
            .entry(no)
            .or_insert_with(|| IndexedPack::new(None, covered));
        pack.file = Some(file);
        pack.tail.clear();
        pack.damaged.clear();
        pack.end = pack.end.max(covered);
        Ok(())
    }

    /// Writes pack `no`'s index file covering every record known in it.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn write_pack_file(&self, no: u32) -> StoreResult<()> {
        let mut st = self.write();
        let Some(p) = st.packs.get(&no) else {
            return Ok(());
        };
        let mut entries = self.file_entries(no, p)?;
        entries.extend(p.tail.iter().map(|(id, &(o, l))| (*id, o, l)));
        let end = p.end;
        self.write_file(&mut st, no, end, entries)
    }

    /// Writes pack `no`'s index file from `live`, the records the store keeps in it, covering
    /// `len` bytes: the file of a pack kept with dead bytes, which it must not name.
    pub(crate) fn rewrite(&self, no: u32, len: u64, live: &[(RawId, Location)]) -> StoreResult<()> {
        let entries = live.iter().map(|(id, l)| (*id, l.offset, l.len)).collect();
        self.write_file(&mut self.write(), no, len, entries)
    }

    /// Rebuilds pack `no`'s index file from a scan of the pack if the file fails its
    /// checksum: a read found a record where it points damaged. Whether it did.
    pub(crate) fn heal(&self, no: u32) -> StoreResult<bool> {
        let mut st = self.write();
        let Some(p) = st.packs.get(&no) else {
            return Ok(false);
        };
        if !self.writable || p.file.as_ref().is_none_or(|f| f.entries().is_some()) {
            return Ok(false);
        }
        let path = self.dir.join(pack_name(no));
        let len = fs::metadata(&path).map_err(io_err(&path))?.len();
        let (scan, covered) = scan_pack(&path, len, self.verify)?;
        let records = scan.records.into_iter().chain(scan.damaged).collect();
        self.write_file(&mut st, no, covered, records)?;
        Ok(true)
    }

    /// Checks every index file whole, once per opened index, rebuilding each that fails its
    /// checksum: an object was not found, and a damaged file may have hidden it. Returns how
    /// many were rebuilt.
    pub(crate) fn heal_once(&self) -> StoreResult<u64> {
        if self.checked.swap(true, Ordering::Relaxed) {
            return Ok(0);
        }
        let numbers: Vec<u32> = self.read().packs.keys().copied().collect();
        let mut healed = 0;
        for no in numbers {
            healed += u64::from(self.heal(no)?);
        }
        Ok(healed)
    }

    /// The index files that fail their checksum, the packs they index that are gone, and
    /// the stretches of tails that are not records, for `fsck`.
    pub(crate) fn damaged_files(&self) -> Vec<FileDamage> {
        let st = self.read();
        let mut out = Vec::new();
        for (&no, p) in &st.packs {
            let Some(f) = &p.file else { continue };
            if f.entries().is_none() {
                out.push(FileDamage {
                    file: format!("{}.idx", pack_in_store(no)),
                    problem: "does not match its checksum; `memoir fsck --repair` rebuilds it \
                              from its pack"
                        .into(),
                });
            }
            if !self.dir.join(pack_name(no)).exists() {
                out.push(FileDamage {
                    file: pack_in_store(no),
                    problem: format!("is missing, and its index names {} objects", f.count()),
                });
            }
        }
        out.extend(st.gaps.iter().map(|(no, (start, end))| FileDamage {
            file: pack_in_store(*no),
            problem: format!(
                "bytes {start} to {end} are not whole records (damage, or a record a crash \
                 tore); the records after them are read, and gc rewrites the pack"
            ),
        }));
        out
    }

    /// Bytes of the index files.
    pub(crate) fn size_on_disk(&self) -> u64 {
        self.read()
            .packs
            .values()
            .filter_map(|p| p.file.as_ref().map(PackIndex::size))
            .sum()
    }
}

/// Cuts the pack at `path` to `len` bytes, durably.
fn truncate_durably(path: &Path, len: u64) -> StoreResult<()> {
    fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.set_len(len).and_then(|()| f.sync_all()))
        .map_err(io_err(path))
}

/// Removes from the packs' directory `dir` the temporary files of index files a killed
/// writer left.
fn remove_temporaries(dir: &Path) -> StoreResult<()> {
    let mut removed = false;
    for e in fs::read_dir(dir).map_err(io_err(dir))?.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("pack-")
            && name.contains(".idx.tmp.")
            && e.file_type().is_ok_and(|t| t.is_file())
        {
            fs::remove_file(e.path()).map_err(io_err(&e.path()))?;
            removed = true;
        }
    }
    if removed {
        sync_dir(dir)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let scan = scan_records(&pack[8..], 8, Some(verify));
        let ids: Vec<u8> = scan.records.iter().map(|(id, _, _)| id[0]).collect();
        assert_eq!(ids, b"ac");
        assert_eq!(scan.records[1].1, after as u64);
        assert_eq!(
            scan.gaps,
            vec![
                (torn as u64, after as u64),
                ((after + 38) as u64, pack.len() as u64)
            ]
        );
        // Without verification the scan stops at the first record that does not fit.
        let scan = scan_records(&pack[8..], 8, None);
        assert_eq!(scan.records.len(), 1);
        assert_eq!(scan.gaps, vec![(torn as u64, pack.len() as u64)]);
    }

    #[test]
    fn a_damaged_record_with_records_after_it_is_kept_as_damaged() {
        let mut pack = b"MEMPACK1".to_vec();
        pack.extend(record(b"aaaa"));
        let mut bad = record(b"bbbb");
        bad[36] = b'x';
        pack.extend(&bad);
        pack.extend(record(b"cc"));
        let mut last = record(b"dd");
        last[36] = b'x';
        pack.extend(&last);
        let scan = scan_records(&pack[8..], 8, Some(verify));
        let ids = |v: &[Entry]| v.iter().map(|(id, _, _)| id[0]).collect::<Vec<u8>>();
        assert_eq!(ids(&scan.records), b"ac");
        assert_eq!(ids(&scan.damaged), b"b");
        // A damaged last record is a torn end.
        let end = pack.len() - last.len();
        assert_eq!(scan.gaps, vec![(end as u64, pack.len() as u64)]);
    }

    #[test]
    fn an_index_finds_appended_objects_and_forgets_deleted_ones() {
        let dir = tempfile::tempdir().unwrap();
        let mut pack = b"MEMPACK1".to_vec();
        pack.extend(record(b"aaaa"));
        pack.extend(record(b"bb"));
        fs::write(dir.path().join(pack_name(1)), &pack).unwrap();
        let ix = ObjectIndex::open(dir.path(), Some(verify), true).unwrap();
        let a = [b'a'; 32];
        let b = [b'b'; 32];
        assert_eq!(ix.find(&a).unwrap().offset, 8);
        assert_eq!(ix.find(&b).unwrap().offset, 8 + 40);
        assert!(ix.delete(&a));
        assert_eq!(ix.find(&a), None);
        ix.persist(1).unwrap();
        assert!(
            index_path(dir.path(), 1).is_file(),
            "a deletion writes the file"
        );
        let again = ObjectIndex::open(dir.path(), Some(verify), true).unwrap();
        assert_eq!(again.find(&a), None);
        assert_eq!(again.find(&b).unwrap().offset, 8 + 40);
        assert_eq!(again.entries().unwrap().len(), 1);
    }

    #[test]
    fn the_torn_end_of_the_newest_pack_is_cut_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let mut pack = b"MEMPACK1".to_vec();
        pack.extend(record(b"aaaa"));
        let whole = pack.len() as u64;
        pack.extend(&record(b"bbbbbbbb")[..30]);
        let path = dir.path().join(pack_name(1));
        fs::write(&path, &pack).unwrap();
        ObjectIndex::open(dir.path(), Some(verify), false).unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().len(),
            pack.len() as u64,
            "a reader cuts nothing"
        );
        let ix = ObjectIndex::open(dir.path(), Some(verify), true).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), whole);
        assert!(ix.find(&[b'a'; 32]).is_some());
    }
}
