//! The object index: a few sorted run files inside the database's directory, listed in
//! sled, and the changes since the last run was written as single sled entries.
//!
//! sled 0.34 reads and deserializes its whole page table when it opens, writes a new one
//! after every write, and rewrites each free segment of its log with zeros, so one sled
//! entry per object made every command that opens the store pay for the store's size. Here
//! sled holds only the changes of the newest writes (tree `recent`, at most about
//! [`SPILL`] entries) and the list of runs (tree `run-list`); the rest of the index is in
//! immutable run files (see [`super::run_file`]) read in place.
//!
//! A lookup asks the changes not yet flushed, then `recent`, then the runs newest first; the
//! first that holds the id decides, and a tombstone says it is gone. A flush writes its
//! changes into `recent`; once `recent` has taken [`SPILL`] writes, the flush moves it all
//! into a new run file instead. Runs are merged as they grow: the two newest deltas (every
//! run but the oldest, the base) while the newer holds at least as many entries as the
//! older, and every run into a new base, tombstones dropped, once the deltas hold a quarter
//! of the base. So there are about log2 of the deltas' size of them, and each entry is
//! rewritten a logarithmic number of times. Every step writes and syncs the new file, lists
//! it and unlists what it replaces in one sled batch, flushes sled, and only then removes
//! the old files; files that no listing names (a crash's leftovers) are removed when the
//! index opens. Layout in store-format.md, section 1.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

use rustc_hash::FxHashMap;

use super::files::{io_err, sync_dir};
use super::packs::Location;
pub(crate) use super::run_file::Slot;
use super::run_file::{self, run_seq, RunFile};
use super::sled_backend::{engine, raw_id};
use super::{RawId, StoreError, StoreResult};

/// Name of the sled tree holding the newest changes: id -> slot (16 bytes).
const RECENT_TREE: &str = "recent";
/// Name of the sled tree listing the runs: seq (u64, big-endian) -> entry count (u64,
/// big-endian) and the run file's hash (32 bytes); and [`WRITES_KEY`].
const LIST_TREE: &str = "run-list";
/// Key of `run-list` counting the writes `recent` took since its entries last went into a run file (u64,
/// big-endian): when to write the next run, nothing more (a crash may leave it short).
const WRITES_KEY: &[u8] = b"recent-writes";
/// Writes into `recent` after which a flush moves it into a new run file.
pub(crate) const SPILL: u64 = 4096;
/// Lookups that ask `recent` before it is read whole into memory for the ones after (a
/// bulk read, such as an index build, then skips sled; reading `recent` costs about as much
/// as a few thousand lookups in it).
const RECENT_COPY_AFTER: u32 = 4096;
/// Name of the directory of run files, inside the database's directory (so a database and
/// its runs move, and are set aside by a repair, together).
pub(crate) const RUNS_DIR: &str = "runs";

/// The index's state in memory.
#[derive(Default)]
struct State {
    /// Listed runs, ascending by seq; the first is the base.
    runs: Vec<RunFile>,
    /// Changes since the last flush.
    pending: HashMap<RawId, Slot>,
    /// Writes `recent` took since it last went into a run file.
    recent_writes: u64,
    /// `recent` read whole, once lookups asked it [`RECENT_COPY_AFTER`] times; reset
    /// whenever `recent` changes (only this handle writes it: the LOCK holder's).
    recent_copy: OnceLock<FxHashMap<RawId, Slot>>,
    /// Lookups that asked `recent` since it last changed.
    recent_asks: AtomicU32,
}

impl State {
    /// Forgets the copy of `recent` after a change to it.
    fn recent_changed(&mut self) {
        self.recent_copy = OnceLock::new();
        *self.recent_asks.get_mut() = 0;
    }
}

/// The object index of a store (see the module docs).
pub(crate) struct RunIndex {
    /// The database directory, named by its errors.
    db_path: PathBuf,
    /// The store directory, named by damage.
    store_dir: PathBuf,
    /// The database directory's name in the store directory, for messages.
    db_name: String,
    /// The directory of run files.
    dir: PathBuf,
    db: sled::Db,
    recent: sled::Tree,
    list: sled::Tree,
    state: RwLock<State>,
}

/// Merges runs given oldest first: the newest entry of an id wins; sorted by id.
fn merge(runs: Vec<Vec<(RawId, Slot)>>, drop_tombstones: bool) -> Vec<(RawId, Slot)> {
    let mut all: Vec<(RawId, usize, Slot)> = Vec::new();
    for (age, run) in runs.into_iter().enumerate() {
        all.extend(run.into_iter().map(|(id, s)| (id, age, s)));
    }
    all.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<(RawId, Slot)> = Vec::with_capacity(all.len());
    for (id, _, slot) in all {
        match out.last_mut() {
            Some(last) if last.0 == id => last.1 = slot,
            _ => out.push((id, slot)),
        }
    }
    if drop_tombstones {
        out.retain(|(_, s)| *s != Slot::Gone);
    }
    out
}

/// The entries of a map, sorted by id.
fn sorted(map: &HashMap<RawId, Slot>) -> Vec<(RawId, Slot)> {
    let mut v: Vec<(RawId, Slot)> = map.iter().map(|(k, s)| (*k, *s)).collect();
    v.sort_unstable_by_key(|e| e.0);
    v
}

/// The seq of the next run: one past the newest listed, so a seq is never taken twice while
/// listed.
fn next_seq(state: &State) -> u64 {
    state.runs.last().map_or(1, |r| r.seq + 1)
}

/// A run-list value: count and hash.
fn listing(count: u64, hash: &[u8; 32]) -> Vec<u8> {
    let mut v = Vec::with_capacity(40);
    v.extend_from_slice(&count.to_be_bytes());
    v.extend_from_slice(hash);
    v
}

/// A writer's view of the index: lookups, and changes that the next flush writes.
pub(crate) struct Writer<'a> {
    index: &'a RunIndex,
    state: RwLockWriteGuard<'a, State>,
}

impl Writer<'_> {
    /// Where the index points `id`, counting unflushed changes.
    pub(crate) fn find(&self, id: &RawId) -> StoreResult<Option<Location>> {
        self.index.find_in(&self.state, id)
    }

    /// Points `id` at `slot` (a location, or gone) from the next flush on.
    pub(crate) fn set(&mut self, id: RawId, slot: Slot) {
        self.state.pending.insert(id, slot);
    }
}

impl RunIndex {
    /// Opens the index of database `db` (directory `db_path`, run files in its
    /// [`RUNS_DIR`]): maps every listed run, refusing one that is not the file listed, and
    /// removes files no listing names. Only the store's LOCK holder opens it.
    pub(crate) fn open(db: &sled::Db, db_path: &Path) -> StoreResult<RunIndex> {
        let index = RunIndex {
            db_path: db_path.to_path_buf(),
            store_dir: db_path.parent().unwrap_or(db_path).to_path_buf(),
            db_name: db_path
                .file_name()
                .map_or_else(|| "db".into(), |n| n.to_string_lossy().into_owned()),
            dir: db_path.join(RUNS_DIR),
            db: db.clone(),
            recent: db.open_tree(RECENT_TREE).map_err(engine(db_path))?,
            list: db.open_tree(LIST_TREE).map_err(engine(db_path))?,
            state: RwLock::new(State::default()),
        };
        let mut state = State::default();
        for entry in index.list.iter() {
            let (k, v) = entry.map_err(index.engine())?;
            if k.as_ref() == WRITES_KEY {
                state.recent_writes = v.as_ref().try_into().map_or(SPILL, u64::from_be_bytes);
                continue;
            }
            let (Ok(seq), Some(count), Some(hash)) = (
                <[u8; 8]>::try_from(k.as_ref()).map(u64::from_be_bytes),
                v.get(..8)
                    .and_then(|b| b.try_into().ok())
                    .map(u64::from_be_bytes),
                v.get(8..).and_then(|b| <&[u8; 32]>::try_from(b).ok()),
            ) else {
                return Err(index.damaged(format!(
                    "the run list holds an entry of {} and {} bytes",
                    k.len(),
                    v.len()
                )));
            };
            match RunFile::open(&index.dir, seq, count, hash)? {
                Ok(run) => state.runs.push(run),
                Err(why) => return Err(index.run_damaged(seq, &why)),
            }
        }
        index.remove_unlisted(&state)?;
        *index.state.write().expect("index lock") = state;
        Ok(index)
    }

    /// Removes the files of the index directory that are not listed runs: runs unlisted
    /// before their files went, runs a crash left before listing them, temporary files.
    fn remove_unlisted(&self, state: &State) -> StoreResult<()> {
        let dir = match fs::read_dir(&self.dir) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_err(&self.dir)(e)),
        };
        for e in dir {
            let e = e.map_err(io_err(&self.dir))?;
            let listed = e
                .file_name()
                .to_str()
                .and_then(run_seq)
                .is_some_and(|seq| state.runs.iter().any(|r| r.seq == seq));
            if !listed && e.file_type().is_ok_and(|t| t.is_file()) {
                fs::remove_file(e.path()).map_err(io_err(&e.path()))?;
            }
        }
        Ok(())
    }

    fn engine(&self) -> impl Fn(sled::Error) -> StoreError + '_ {
        engine(&self.db_path)
    }

    /// The error for damage to the index as a whole.
    fn damaged(&self, detail: String) -> StoreError {
        StoreError::EngineDamaged {
            path: self.store_dir.clone(),
            detail: format!("object index: {detail}"),
        }
    }

    fn run_damaged(&self, seq: u64, why: &str) -> StoreError {
        self.damaged(format!("run {}: {why}", self.run_path_text(seq)))
    }

    /// Run `seq`'s file, relative to the store directory.
    fn run_path_text(&self, seq: u64) -> String {
        format!("{}/{RUNS_DIR}/{}", self.db_name, run_file::run_name(seq))
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().expect("index lock")
    }

    /// A writer holding the index alone until dropped.
    pub(crate) fn writer(&self) -> Writer<'_> {
        Writer {
            index: self,
            state: self.state.write().expect("index lock"),
        }
    }

    /// Where the index points `id`, counting unflushed changes.
    pub(crate) fn find(&self, id: &RawId) -> StoreResult<Option<Location>> {
        self.find_in(&self.read(), id)
    }

    fn find_in(&self, state: &State, id: &RawId) -> StoreResult<Option<Location>> {
        if let Some(slot) = state.pending.get(id) {
            return Ok(slot.location());
        }
        if let Some(slot) = self.in_recent(state, id)? {
            return Ok(slot.location());
        }
        Ok(state
            .runs
            .iter()
            .rev()
            .find_map(|r| r.find(id))
            .and_then(Slot::location))
    }

    /// What `recent` says of `id`: from sled, or from its copy in memory once lookups have
    /// asked it often (see [`RECENT_COPY_AFTER`]).
    fn in_recent(&self, state: &State, id: &RawId) -> StoreResult<Option<Slot>> {
        if let Some(copy) = state.recent_copy.get() {
            return Ok(copy.get(id).copied());
        }
        if state.recent_asks.fetch_add(1, Ordering::Relaxed) >= RECENT_COPY_AFTER {
            let copy = self.recent_entries()?;
            return Ok(state.recent_copy.get_or_init(|| copy).get(id).copied());
        }
        match self.recent.get(id).map_err(self.engine())? {
            Some(v) => Ok(Some(self.slot(&v)?)),
            None => Ok(None),
        }
    }

    /// A value of `recent`; any other length is corruption.
    fn slot(&self, v: &[u8]) -> StoreResult<Slot> {
        Slot::decode(v).ok_or(StoreError::BadIndexValue {
            len: v.len(),
            expected: Location::BYTES,
        })
    }

    /// Every entry of `recent`, in id order (collected into a list or a map).
    fn recent_entries<C: FromIterator<(RawId, Slot)>>(&self) -> StoreResult<C> {
        self.recent.iter().map(|e| self.recent_entry(e)).collect()
    }

    /// An entry of `recent`.
    fn recent_entry(
        &self,
        entry: sled::Result<(sled::IVec, sled::IVec)>,
    ) -> StoreResult<(RawId, Slot)> {
        let (k, v) = entry.map_err(self.engine())?;
        Ok((raw_id(&k)?, self.slot(&v)?))
    }

    /// Every entry of run `run`, its hash checked first.
    fn run_entries(&self, run: &RunFile) -> StoreResult<Vec<(RawId, Slot)>> {
        if !run.verify() {
            return Err(self.run_damaged(run.seq, "its bytes do not match its hash"));
        }
        Ok(run.entries())
    }

    /// Every object the index holds, with its location, sorted by id.
    pub(crate) fn entries(&self) -> StoreResult<Vec<(RawId, Location)>> {
        let state = self.read();
        let mut runs = Vec::new();
        for run in &state.runs {
            runs.push(self.run_entries(run)?);
        }
        runs.push(self.recent_entries()?);
        runs.push(sorted(&state.pending));
        Ok(merge(runs, true)
            .into_iter()
            .filter_map(|(id, s)| s.location().map(|l| (id, l)))
            .collect())
    }

    /// Every id the index holds that starts with `prefix`, sorted.
    pub(crate) fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        let state = self.read();
        let mut runs: Vec<Vec<(RawId, Slot)>> =
            state.runs.iter().map(|r| r.with_prefix(prefix)).collect();
        runs.push(
            self.recent
                .scan_prefix(prefix)
                .map(|e| self.recent_entry(e))
                .collect::<StoreResult<_>>()?,
        );
        runs.push(
            sorted(&state.pending)
                .into_iter()
                .filter(|(id, _)| id.starts_with(prefix))
                .collect(),
        );
        Ok(merge(runs, true).into_iter().map(|(id, _)| id).collect())
    }

    /// Writes the unflushed changes into `recent`, or, once it has taken [`SPILL`] writes,
    /// moves it and them into a new run, merging runs as they call for (see the module
    /// docs). The caller then flushes sled, which makes it durable.
    pub(crate) fn write_pending(&self) -> StoreResult<()> {
        let mut state = self.state.write().expect("index lock");
        if state.pending.is_empty() {
            return Ok(());
        }
        let n = state.pending.len() as u64;
        if state.recent_writes + n >= SPILL {
            return self.write_run(&mut state);
        }
        let mut batch = sled::Batch::default();
        for (id, slot) in &state.pending {
            batch.insert(&id[..], &slot.encode()[..]);
        }
        self.recent.apply_batch(batch).map_err(self.engine())?;
        state.recent_changed();
        state.recent_writes += n;
        self.list
            .insert(WRITES_KEY, &state.recent_writes.to_be_bytes()[..])
            .map_err(self.engine())?;
        state.pending.clear();
        Ok(())
    }

    /// Moves `recent` and the unflushed changes into a new run: the file is written and
    /// listed, sled flushed, and only then is `recent` emptied (a crash in between leaves
    /// both saying the same).
    fn write_run(&self, state: &mut State) -> StoreResult<()> {
        let recent: Vec<(RawId, Slot)> = self.recent_entries()?;
        let mut batch = sled::Batch::default();
        for (id, _) in &recent {
            batch.remove(&id[..]);
        }
        let entries = merge(vec![recent, sorted(&state.pending)], false);
        let seq = next_seq(state);
        self.add_run(state, seq, &entries, &[])?;
        self.recent.apply_batch(batch).map_err(self.engine())?;
        state.recent_changed();
        self.list
            .insert(WRITES_KEY, &0u64.to_be_bytes()[..])
            .map_err(self.engine())?;
        state.recent_writes = 0;
        state.pending.clear();
        self.compact(state)
    }

    /// Writes run `seq` of `entries`, lists it and unlists `replaced` (runs of `state`) in
    /// one batch, flushes sled, removes the replaced files, and puts the new run in
    /// `state` after the runs it keeps.
    fn add_run(
        &self,
        state: &mut State,
        seq: u64,
        entries: &[(RawId, Slot)],
        replaced: &[u64],
    ) -> StoreResult<()> {
        let created = !self.dir.exists();
        let hash = run_file::write(&self.dir, seq, entries)?;
        if created {
            sync_dir(&self.db_path)?;
        }
        let count = entries.len() as u64;
        let mut batch = sled::Batch::default();
        batch.insert(&seq.to_be_bytes()[..], listing(count, &hash));
        for old in replaced {
            batch.remove(&old.to_be_bytes()[..]);
        }
        self.list.apply_batch(batch).map_err(self.engine())?;
        self.db.flush().map_err(self.engine())?;
        let (gone, kept): (Vec<RunFile>, Vec<RunFile>) = std::mem::take(&mut state.runs)
            .into_iter()
            .partition(|r| replaced.contains(&r.seq));
        state.runs = kept;
        for run in gone {
            let path = run.path.clone();
            drop(run);
            fs::remove_file(&path).map_err(io_err(&path))?;
        }
        match RunFile::open(&self.dir, seq, count, &hash)? {
            Ok(run) => state.runs.push(run),
            Err(why) => return Err(self.run_damaged(seq, &why)),
        }
        Ok(())
    }

    /// Merges the two newest deltas while the newer holds at least as many entries as the
    /// older, then every run into a new base once the deltas hold a quarter of the base.
    fn compact(&self, state: &mut State) -> StoreResult<()> {
        while state.runs.len() >= 3 {
            let n = state.runs.len();
            let (older, newer) = (&state.runs[n - 2], &state.runs[n - 1]);
            if newer.count < older.count {
                break;
            }
            let merged = merge(
                vec![self.run_entries(older)?, self.run_entries(newer)?],
                false,
            );
            let replaced = [older.seq, newer.seq];
            let seq = next_seq(state);
            self.add_run(state, seq, &merged, &replaced)?;
        }
        let deltas: u64 = state.runs.iter().skip(1).map(|r| r.count).sum();
        let base = state.runs.first().map_or(0, |r| r.count);
        if state.runs.len() >= 2 && deltas.saturating_mul(4) >= base {
            let mut runs = Vec::new();
            for run in &state.runs {
                runs.push(self.run_entries(run)?);
            }
            let merged = merge(runs, true);
            let replaced: Vec<u64> = state.runs.iter().map(|r| r.seq).collect();
            let seq = next_seq(state);
            self.add_run(state, seq, &merged, &replaced)?;
        }
        Ok(())
    }

    /// Replaces the whole index with `entries` (later entries of an id win), written as one
    /// base run: the rebuild of an index from the packs or from an older format. Durable on
    /// return.
    pub(crate) fn replace(&self, entries: &[(RawId, Location)]) -> StoreResult<()> {
        let mut state = self.state.write().expect("index lock");
        let mut sorted: Vec<(RawId, Slot)> =
            entries.iter().map(|(id, l)| (*id, Slot::At(*l))).collect();
        // Stable: the later entry of an id stays last.
        sorted.sort_by_key(|e| e.0);
        sorted.dedup_by(|later, earlier| {
            if later.0 == earlier.0 {
                earlier.1 = later.1;
                true
            } else {
                false
            }
        });
        let replaced: Vec<u64> = state.runs.iter().map(|r| r.seq).collect();
        let seq = next_seq(&state);
        self.add_run(&mut state, seq, &sorted, &replaced)?;
        // Only once the new base is listed: a crash before leaves the old index whole.
        self.recent.clear().map_err(self.engine())?;
        state.recent_changed();
        self.list
            .insert(WRITES_KEY, &0u64.to_be_bytes()[..])
            .map_err(self.engine())?;
        state.pending.clear();
        state.recent_writes = 0;
        self.db.flush().map_err(self.engine())?;
        Ok(())
    }

    /// The run files whose bytes do not match their hash, with the problem in words
    /// (reads every run whole: `fsck`).
    pub(crate) fn damaged_runs(&self) -> Vec<(String, String)> {
        self.read()
            .runs
            .iter()
            .filter(|r| !r.verify())
            .map(|r| {
                (
                    self.run_path_text(r.seq),
                    "its bytes do not match its hash".to_string(),
                )
            })
            .collect()
    }

    /// Bytes of the run files.
    pub(crate) fn size_on_disk(&self) -> u64 {
        self.read().runs.iter().map(|r| r.file_len()).sum()
    }

    /// How many runs are listed (tests).
    #[cfg(test)]
    fn run_count(&self) -> usize {
        self.read().runs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u16) -> RawId {
        let mut id = [0u8; 32];
        id[..2].copy_from_slice(&n.to_be_bytes());
        id[31] = 7;
        id
    }

    fn at(n: u64) -> Slot {
        Slot::At(Location {
            pack: 1,
            offset: 8 + n,
            len: 3,
        })
    }

    #[test]
    fn run_vector() {
        let bytes = run_file::encode(&[(id(1), at(0)), (id(2), Slot::Gone)]);
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "4d454d52554e30310000000000000002\
             0001000000000000000000000000000000000000000000000000000000000007\
             00000001000000000000000800000003\
             0002000000000000000000000000000000000000000000000000000000000007\
             ffffffff000000000000000000000000\
             5be92e9e5d7eb395c6ccc44f5583b4c044735a5956676274dd2464b5b4319c0a"
        );
    }

    #[test]
    fn the_newest_run_wins_and_a_full_merge_drops_tombstones() {
        let merged = merge(
            vec![
                vec![(id(1), at(1)), (id(2), at(2))],
                vec![(id(2), Slot::Gone), (id(3), at(3))],
                vec![(id(1), at(9))],
            ],
            false,
        );
        assert_eq!(
            merged,
            vec![(id(1), at(9)), (id(2), Slot::Gone), (id(3), at(3))]
        );
        let merged = merge(vec![merged], true);
        assert_eq!(merged, vec![(id(1), at(9)), (id(3), at(3))]);
    }

    fn index_in(dir: &Path) -> (sled::Db, RunIndex) {
        let db_path = dir.join("db");
        let db = sled::Config::new()
            .path(&db_path)
            .temporary(false)
            .open()
            .unwrap();
        let index = RunIndex::open(&db, &db_path).unwrap();
        (db, index)
    }

    /// Through many flushes, deletions, new runs and merges, the index answers as a map would,
    /// before and after it is reopened, and its runs stay few.
    #[test]
    fn an_index_of_runs_answers_as_a_map() {
        let dir = tempfile::tempdir().unwrap();
        let mut model: HashMap<RawId, Location> = HashMap::new();
        let (db, index) = index_in(dir.path());
        let mut n = 0u64;
        for round in 0..400u64 {
            let mut w = index.writer();
            for _ in 0..(1 + round % 90) {
                n += 1;
                let key = id((n * 7919 % 40_000) as u16);
                if n.is_multiple_of(11) {
                    w.set(key, Slot::Gone);
                    model.remove(&key);
                } else {
                    let Slot::At(loc) = at(n) else { unreachable!() };
                    w.set(key, Slot::At(loc));
                    model.insert(key, loc);
                }
            }
            drop(w);
            index.write_pending().unwrap();
            if round % 50 == 0 {
                for (k, v) in &model {
                    assert_eq!(index.find(k).unwrap(), Some(*v));
                }
            }
        }
        assert!(index.run_count() >= 1, "the index wrote a run");
        assert!(index.run_count() <= 8, "{} runs", index.run_count());
        let check = |index: &RunIndex| {
            let mut want: Vec<(RawId, Location)> = model.iter().map(|(k, v)| (*k, *v)).collect();
            want.sort_unstable_by_key(|e| e.0);
            assert_eq!(index.entries().unwrap(), want);
            for k in (0..40_000u16).step_by(97).map(id) {
                assert_eq!(index.find(&k).unwrap(), model.get(&k).copied());
            }
            let p = [0x12u8];
            let with: Vec<RawId> = want
                .iter()
                .map(|(k, _)| *k)
                .filter(|k| k.starts_with(&p))
                .collect();
            assert_eq!(index.ids_with_prefix(&p).unwrap(), with);
        };
        check(&index);
        db.flush().unwrap();
        drop(index);
        drop(db);
        // A leftover of a crash: a run file no listing names.
        let runs = dir.path().join("db").join(RUNS_DIR);
        fs::write(runs.join(run_file::run_name(999)), b"x").unwrap();
        let (_db, index) = index_in(dir.path());
        check(&index);
        assert!(index.damaged_runs().is_empty());
        let files = fs::read_dir(&runs).unwrap().count();
        assert_eq!(files, index.run_count(), "only listed runs are left");
    }

    /// Once lookups have read `recent` into memory, later writes are still seen: the copy
    /// goes whenever `recent` changes.
    #[test]
    fn the_copy_of_recent_follows_writes() {
        let dir = tempfile::tempdir().unwrap();
        let (_db, index) = index_in(dir.path());
        index.writer().set(id(1), at(1));
        index.write_pending().unwrap();
        for _ in 0..=RECENT_COPY_AFTER {
            assert_eq!(index.find(&id(1)).unwrap(), at(1).location());
        }
        assert!(
            index.read().recent_copy.get().is_some(),
            "recent was copied"
        );
        assert_eq!(index.find(&id(2)).unwrap(), None);
        let mut w = index.writer();
        w.set(id(1), at(2));
        w.set(id(2), at(3));
        drop(w);
        index.write_pending().unwrap();
        assert!(index.read().recent_copy.get().is_none());
        for _ in 0..=RECENT_COPY_AFTER {
            assert_eq!(index.find(&id(1)).unwrap(), at(2).location());
            assert_eq!(index.find(&id(2)).unwrap(), at(3).location());
        }
        assert!(index.read().recent_copy.get().is_some());
    }

    /// A run file that is not the one listed is refused as damage to the index, naming it.
    #[test]
    fn a_changed_run_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (db, index) = index_in(dir.path());
            index
                .replace(&[(
                    id(1),
                    Location {
                        pack: 1,
                        offset: 8,
                        len: 3,
                    },
                )])
                .unwrap();
            db.flush().unwrap();
        }
        let run = fs::read_dir(dir.path().join("db").join(RUNS_DIR))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let mut bytes = fs::read(&run).unwrap();
        bytes[20] ^= 1;
        fs::write(&run, &bytes).unwrap();
        {
            let (_db, index) = index_in(dir.path());
            assert_eq!(
                index.damaged_runs().len(),
                1,
                "an entry's flip is found by fsck"
            );
        }
        let n = bytes.len();
        bytes[n - 1] ^= 1;
        fs::write(&run, &bytes).unwrap();
        let db_path = dir.path().join("db");
        let db = sled::Config::new().path(&db_path).open().unwrap();
        match RunIndex::open(&db, &db_path) {
            Err(StoreError::EngineDamaged { detail, .. }) => {
                assert!(detail.contains(".run"), "{detail}");
                assert!(detail.contains("hash"), "{detail}");
            }
            Err(other) => panic!("expected EngineDamaged, got {other:?}"),
            Ok(_) => panic!("expected EngineDamaged, got an index"),
        }
    }
}
