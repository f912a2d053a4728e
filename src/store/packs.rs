//! Pack files: object bytes appended to numbered files, named by where they sit.
//!
//! A pack is `packs/pack-NNNNNNNN` (eight decimal digits): the 8-byte magic `MEMPACK1`, then
//! records `id (32 bytes) | length (u32, big-endian) | bytes`. Records are only appended; a
//! pack is never rewritten in place. Reclaiming space copies the live records of a pack
//! elsewhere and deletes the whole file, so removed bytes leave the disk. Writes go to the
//! highest-numbered pack until it reaches the size limit, then a new pack starts.
//!
//! Which record holds an object is the object index's business (see `object_index`); this
//! module only appends, reads and lists.

use std::collections::{BTreeSet, HashMap};
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use super::files::{io_err, sync_dir};
use super::{
    hex, locked, read_locked, write_locked, Bytes, Damage, FileDamage, RawId, StoreError,
    StoreResult,
};

/// Where the record of `want` bytes that starts at `offset` lies in a map of `mapped` bytes,
/// if it lies wholly inside (a damaged index can name any offset, even one whose end does
/// not fit in 64 bits).
fn record_span(offset: u64, want: u64, mapped: u64) -> Option<std::ops::Range<usize>> {
    let end = offset.checked_add(want).filter(|&end| end <= mapped)?;
    Some(usize::try_from(offset).ok()?..usize::try_from(end).ok()?)
}

/// Subdirectory of a store that holds the pack files.
pub(crate) const PACKS_DIR: &str = "packs";

/// First bytes of every pack file.
const PACK_MAGIC: &[u8; 8] = b"MEMPACK1";
/// Bytes before a pack's first record.
pub(crate) const HEADER: u64 = PACK_MAGIC.len() as u64;
/// Bytes of a record before the object's bytes: id and length.
pub(crate) const RECORD_HEAD: u64 = 36;

/// Where one object's record sits: pack number, offset of the record, length of the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Location {
    pub pack: u32,
    pub offset: u64,
    pub len: u32,
}

impl Location {
    /// Bytes the whole record takes in its pack.
    pub fn record_bytes(&self) -> u64 {
        RECORD_HEAD + u64::from(self.len)
    }
}

/// The pack being appended to.
struct Active {
    no: u32,
    file: Arc<File>,
    len: u64,
}

/// Writes since the last [`Packs::sync`].
#[derive(Default)]
struct Unsynced {
    packs: BTreeSet<u32>,
    /// A pack file was created or deleted: the directory's entries must be synced.
    dir: bool,
}

/// The pack files of one store.
pub(crate) struct Packs {
    dir: PathBuf,
    /// A pack that reaches this many bytes gets no more records.
    limit: u64,
    /// Open handles by pack number, for reading (the active pack's too).
    files: RwLock<HashMap<u32, Arc<File>>>,
    /// Each pack's bytes as far as they were when first read, mapped: a record inside is
    /// read as a window of the map, shared rather than copied (records appended after the
    /// map was made are read by a system call).
    maps: RwLock<HashMap<u32, Bytes>>,
    /// For a closed read, how far each pack is read (nothing after is mapped or found).
    limits: Option<HashMap<u32, u64>>,
    active: Mutex<Active>,
    unsynced: Mutex<Unsynced>,
    /// False for packs opened for reading only.
    writable: bool,
}

/// The file name of pack `no`.
pub(crate) fn pack_name(no: u32) -> String {
    format!("pack-{no:08}")
}

/// Pack `no` as a path relative to the store (`packs/pack-NNNNNNNN`), for messages.
pub(crate) fn pack_in_store(no: u32) -> String {
    format!("{PACKS_DIR}/{}", pack_name(no))
}

/// The pack number a file name stands for, if it names a pack.
pub(crate) fn pack_number(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("pack-")?;
    (digits.len() == 8 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Every pack in directory `dir` with its path and length, ascending by number.
pub(crate) fn pack_files(dir: &Path) -> StoreResult<Vec<(u32, PathBuf, u64)>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_err(dir))? {
        let entry = entry.map_err(io_err(dir))?;
        let Some(no) = entry.file_name().to_str().and_then(pack_number) else {
            continue;
        };
        match entry.metadata() {
            Ok(m) => out.push((no, entry.path(), m.len())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&entry.path())(e)),
        }
    }
    out.sort_unstable_by_key(|(no, _, _)| *no);
    Ok(out)
}

/// A new pack file at `path` holding just the magic.
fn create_pack(path: &Path) -> StoreResult<File> {
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(io_err(path))?;
    file.write_all_at(PACK_MAGIC, 0).map_err(io_err(path))?;
    Ok(file)
}

impl Packs {
    /// Opens the packs in directory `dir` (created if missing), appending to the highest
    /// numbered one; `limit` is the size at which a pack stops growing. (The object index,
    /// opened first, has cut a torn end off the newest pack.)
    ///
    /// Packs opened without `writable` are only read: nothing is cut, made or written, and
    /// every append fails with [`StoreError::ReadOnly`].
    pub fn open(dir: &Path, limit: u64, writable: bool) -> StoreResult<Packs> {
        if writable && !dir.is_dir() {
            fs::create_dir_all(dir).map_err(io_err(dir))?;
            if let Some(parent) = dir.parent() {
                sync_dir(parent)?;
            }
        }
        let mut unsynced = Unsynced::default();
        let (no, file, len) = match pack_files(dir)?.last() {
            Some(&(no, _, _)) => {
                let path = dir.join(pack_name(no));
                let file = fs::OpenOptions::new()
                    .read(true)
                    .write(writable)
                    .open(&path)
                    .map_err(io_err(&path))?;
                let mut len = file.metadata().map_err(io_err(&path))?.len();
                if writable && len < HEADER {
                    // Torn while being created: no record can be in it yet.
                    file.write_all_at(PACK_MAGIC, 0).map_err(io_err(&path))?;
                    len = HEADER;
                    unsynced.packs.insert(no);
                }
                (no, file, len)
            }
            None if writable => {
                unsynced.packs.insert(1);
                unsynced.dir = true;
                (1, create_pack(&dir.join(pack_name(1)))?, HEADER)
            }
            None => {
                return Err(io_err(&dir.join(pack_name(1)))(
                    io::ErrorKind::NotFound.into(),
                ))
            }
        };
        let file = Arc::new(file);
        Ok(Packs {
            dir: dir.to_path_buf(),
            limit: limit.max(HEADER + 1),
            files: RwLock::new(HashMap::from([(no, file.clone())])),
            maps: RwLock::default(),
            limits: None,
            active: Mutex::new(Active { no, file, len }),
            unsynced: Mutex::new(unsynced),
            writable,
        })
    }

    /// The packs of directory `dir` as a close recorded them (`lengths`: number and length),
    /// for a closed read: each read only up to its recorded length.
    pub fn open_closed(dir: &Path, lengths: &[(u32, u64)]) -> StoreResult<Packs> {
        let mut packs = Self::open(dir, 0, false)?;
        packs.limits = Some(lengths.iter().copied().collect());
        Ok(packs)
    }

    /// Pack `no`'s bytes from its start, mapped (made on first use): as far as the file
    /// went then, or as a closed read's limit says. `None` when the pack is gone or cannot
    /// be mapped (its records are then read by system calls).
    fn map(&self, no: u32) -> StoreResult<Option<Bytes>> {
        if let Some(m) = read_locked(&self.maps).get(&no) {
            return Ok(Some(m.clone()));
        }
        let Some(file) = self.file(no)? else {
            return Ok(None);
        };
        let map = match usize::try_from(self.readable_len(no, &file)?) {
            Ok(0) | Err(_) => return Ok(None),
            // SAFETY: packs are only appended to, never written in place; a pack is cut
            // only at its torn end, past anything a reader was given (see `object_index`);
            // gc removes whole packs, which leaves a map valid. So the mapped bytes do not
            // change under the map.
            #[allow(unsafe_code)]
            Ok(n) => match unsafe { memmap2::MmapOptions::new().len(n).map(&*file) } {
                Ok(m) => Bytes::from_owner(m),
                Err(_) => return Ok(None),
            },
        };
        let mut maps = write_locked(&self.maps);
        Ok(Some(maps.entry(no).or_insert(map).clone()))
    }

    /// The length of pack `no`, open as `file`, as far as it is read: a closed read reads
    /// only up to the length its close recorded.
    fn readable_len(&self, no: u32, file: &File) -> StoreResult<u64> {
        let len = file.metadata().map_err(io_err(&self.path(no)))?.len();
        let limit = self.limits.as_ref().and_then(|l| l.get(&no));
        Ok(limit.map_or(len, |&limit| len.min(limit)))
    }

    fn path(&self, no: u32) -> PathBuf {
        self.dir.join(pack_name(no))
    }

    /// Every pack number present, ascending.
    pub fn numbers(&self) -> StoreResult<Vec<u32>> {
        Ok(pack_files(&self.dir)?
            .into_iter()
            .map(|(no, _, _)| no)
            .collect())
    }

    /// Bytes of pack `no` on disk (0 if it is gone).
    pub fn size(&self, no: u32) -> StoreResult<u64> {
        let path = self.path(no);
        match fs::metadata(&path) {
            Ok(m) => Ok(m.len()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(io_err(&path)(e)),
        }
    }

    /// The number of the pack being appended to.
    pub fn active_no(&self) -> u32 {
        locked(&self.active).no
    }

    /// Creates the pack after the highest one and makes it the active pack (`active` is
    /// the locked active pack).
    fn start_next(&self, active: &mut Active) -> StoreResult<()> {
        let no = self
            .numbers()?
            .last()
            .map_or(1, |n| n + 1)
            .max(active.no + 1);
        let file = Arc::new(create_pack(&self.path(no))?);
        let mut u = locked(&self.unsynced);
        u.packs.insert(no);
        u.dir = true;
        drop(u);
        write_locked(&self.files).insert(no, file.clone());
        *active = Active {
            no,
            file,
            len: HEADER,
        };
        Ok(())
    }

    /// Starts a new pack after the highest one; later appends go there.
    pub fn roll(&self) -> StoreResult<()> {
        if !self.writable {
            return Err(StoreError::ReadOnly);
        }
        self.start_next(&mut locked(&self.active))
    }

    /// Appends one record per object, in order, with one write; returns their locations.
    pub fn append(&self, objects: &[(&RawId, &[u8])]) -> StoreResult<Vec<Location>> {
        if !self.writable {
            return Err(StoreError::ReadOnly);
        }
        let mut active = locked(&self.active);
        if active.len >= self.limit {
            self.start_next(&mut active)?;
        }
        let mut buf = Vec::with_capacity(
            objects
                .iter()
                .map(|(_, b)| RECORD_HEAD as usize + b.len())
                .sum(),
        );
        let mut out = Vec::with_capacity(objects.len());
        for (id, bytes) in objects {
            let len = u32::try_from(bytes.len())
                .map_err(|_| StoreError::TooLarge { len: bytes.len() })?;
            out.push(Location {
                pack: active.no,
                offset: active.len + buf.len() as u64,
                len,
            });
            buf.extend_from_slice(&id[..]);
            buf.extend_from_slice(&len.to_be_bytes());
            buf.extend_from_slice(bytes);
        }
        let path = self.path(active.no);
        active
            .file
            .write_all_at(&buf, active.len)
            .map_err(io_err(&path))?;
        active.len += buf.len() as u64;
        locked(&self.unsynced).packs.insert(active.no);
        Ok(out)
    }

    /// The open handle of pack `no`, opening it on first use; `None` if it is gone. Opened
    /// under the map's write lock, as [`Packs::remove`] deletes under it, so a handle of a
    /// deleted pack is never put back.
    fn file(&self, no: u32) -> StoreResult<Option<Arc<File>>> {
        if let Some(f) = read_locked(&self.files).get(&no) {
            return Ok(Some(f.clone()));
        }
        let mut files = write_locked(&self.files);
        if let Some(f) = files.get(&no) {
            return Ok(Some(f.clone()));
        }
        let path = self.path(no);
        let file = match File::open(&path) {
            Ok(f) => Arc::new(f),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&path)(e)),
        };
        files.insert(no, file.clone());
        Ok(Some(file))
    }

    /// The bytes of the record of `id` at `loc`, or what keeps that record from being
    /// there whole (cut short, another id's record, or its pack is gone): a window of the
    /// pack's map when the record lies inside it, else read by a system call.
    pub fn read(&self, id: &RawId, loc: Location) -> StoreResult<Result<Bytes, Damage>> {
        let pack = || pack_in_store(loc.pack);
        let want = loc.record_bytes();
        let mapped = self.map(loc.pack)?.and_then(|map| {
            record_span(loc.offset, want, map.len() as u64).map(|span| map.slice(span))
        });
        let record = match mapped {
            Some(record) => record,
            None => match self.read_copy(loc)? {
                Ok(bytes) => bytes,
                Err(d) => return Ok(Err(d)),
            },
        };
        // As arrays, not slices: compared in registers, without a call.
        let (at, rest) = record.split_first_chunk::<32>().expect("a record head");
        if at != id {
            return Ok(Err(Damage::OtherId {
                pack: pack(),
                offset: loc.offset,
                found: hex(&record[..8]),
            }));
        }
        let found = u32::from_be_bytes(rest[..4].try_into().expect("4 bytes"));
        if found != loc.len {
            return Ok(Err(Damage::WrongLength {
                pack: pack(),
                offset: loc.offset,
                found,
                expected: loc.len,
            }));
        }
        Ok(Ok(record.slice(RECORD_HEAD as usize..)))
    }

    /// The record at `loc` (head included), read by system calls.
    fn read_copy(&self, loc: Location) -> StoreResult<Result<Bytes, Damage>> {
        let pack = pack_in_store(loc.pack);
        let Some(file) = self.file(loc.pack)? else {
            return Ok(Err(Damage::PackMissing { pack }));
        };
        let want = loc.record_bytes();
        let end = self.readable_len(loc.pack, &file)?;
        // A damaged entry may claim up to 4 GiB: never allocate past the readable end.
        if loc.offset.saturating_add(want) > end {
            let offset = loc.offset;
            return Ok(Err(Damage::CutShort { pack, offset, end }));
        }
        let mut buf = vec![0u8; want as usize];
        match file.read_exact_at(&mut buf, loc.offset) {
            Ok(()) => Ok(Ok(Bytes::from(buf))),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                let offset = loc.offset;
                Ok(Err(Damage::CutShort { pack, offset, end }))
            }
            Err(e) => Err(io_err(&self.path(loc.pack))(e)),
        }
    }

    /// Pack `no`'s length and its records read in order from its start, up to the first
    /// that does not fit before its end; `None` if it is gone.
    pub fn scan(&self, no: u32) -> StoreResult<Option<(u64, Vec<super::pack_index::Entry>)>> {
        let Some(file) = self.file(no)? else {
            return Ok(None);
        };
        let path = self.path(no);
        let len = file.metadata().map_err(io_err(&path))?.len();
        let (scan, _) = super::object_index::scan_pack(&path, len, None)?;
        Ok(Some((len, scan.records)))
    }

    /// Whether pack `no` begins with the pack magic (a pack that is gone has nothing wrong
    /// with it here).
    pub fn has_magic(&self, no: u32) -> StoreResult<bool> {
        let Some(file) = self.file(no)? else {
            return Ok(true);
        };
        let mut head = [0u8; HEADER as usize];
        match file.read_exact_at(&mut head, 0) {
            Ok(()) => Ok(head == *PACK_MAGIC),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
            Err(e) => Err(io_err(&self.path(no))(e)),
        }
    }

    /// The problem with pack `no`'s first bytes, if any, in words.
    pub fn magic_problem(&self, no: u32) -> StoreResult<Option<FileDamage>> {
        if self.has_magic(no)? {
            return Ok(None);
        }
        Ok(Some(FileDamage {
            file: pack_in_store(no),
            problem: format!(
                "does not begin with the pack magic {} (its header is damaged); its records are \
                 still found through the index, and gc rewrites the pack",
                String::from_utf8_lossy(PACK_MAGIC)
            ),
        }))
    }

    /// Deletes pack `no` (never the active one).
    pub fn remove(&self, no: u32) -> StoreResult<()> {
        debug_assert_ne!(no, self.active_no());
        write_locked(&self.maps).remove(&no);
        // Our handle is closed first (some systems refuse to delete an open file).
        let mut files = write_locked(&self.files);
        files.remove(&no);
        let path = self.path(no);
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&path)(e)),
        }
        drop(files);
        let mut u = locked(&self.unsynced);
        u.packs.remove(&no);
        u.dir = true;
        Ok(())
    }

    /// Makes every append, and every pack created or deleted, durable. Returns the pack
    /// that was active when the sync started.
    pub fn sync(&self) -> StoreResult<u32> {
        let active = self.active_no();
        let mut u = locked(&self.unsynced);
        for &no in &u.packs {
            if let Some(file) = self.file(no)? {
                file.sync_data().map_err(io_err(&self.path(no)))?;
            }
        }
        u.packs.clear();
        if u.dir {
            sync_dir(&self.dir)?;
            u.dir = false;
        }
        Ok(active)
    }

    /// Bytes of every pack together.
    pub fn total_size(&self) -> StoreResult<u64> {
        Ok(pack_files(&self.dir)?.iter().map(|(_, _, len)| len).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_read_from_the_map_only_where_it_lies_wholly_inside() {
        let head = RECORD_HEAD;
        assert_eq!(record_span(8, head + 4, 100), Some(8..8 + 40));
        assert_eq!(record_span(8, head + 4, 8 + head + 4), Some(8..8 + 40));
        assert_eq!(record_span(8, head + 4, 8 + head + 3), None);
        // Offsets a damaged index could name: past the end, and whose end wraps around.
        assert_eq!(record_span(1 << 40, head + 1, 100), None);
        assert_eq!(record_span(u64::MAX - 10, head + 4, u64::MAX), None);
        assert_eq!(record_span(u64::MAX, u64::from(u32::MAX), 100), None);
    }

    #[test]
    fn pack_names_are_eight_digits() {
        assert_eq!(pack_number("pack-00000012"), Some(12));
        assert_eq!(pack_number("pack-12"), None);
        assert_eq!(pack_number("pack-0000001x"), None);
    }

    #[test]
    fn records_that_are_not_whole_say_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let packs = Packs::open(dir.path(), 1 << 20, true).unwrap();
        let (a, b) = ([1u8; 32], [2u8; 32]);
        let la = packs.append(&[(&a, b"first")]).unwrap()[0];
        packs.roll().unwrap();
        let lb = packs.append(&[(&b, b"second")]).unwrap()[0];
        assert_eq!(
            packs.read(&a, la).unwrap(),
            Ok(Bytes::from_static(b"first"))
        );
        let other = packs.read(&b, la).unwrap().unwrap_err();
        assert!(
            matches!(other, Damage::OtherId { offset: 8, .. }),
            "{other:?}"
        );
        let longer = Location { len: 9, ..lb };
        assert!(matches!(
            packs.read(&b, longer).unwrap(),
            Err(Damage::CutShort { end: 50, .. })
        ));
        let shorter = Location { len: 2, ..la };
        assert!(matches!(
            packs.read(&a, shorter).unwrap(),
            Err(Damage::WrongLength {
                found: 5,
                expected: 2,
                ..
            })
        ));
        assert!(packs.has_magic(1).unwrap() && packs.magic_problem(2).unwrap().is_none());
        fs::remove_file(dir.path().join(pack_name(1))).unwrap();
        // A map made before keeps the bytes readable; a handle without one finds no file.
        assert_eq!(
            packs.read(&a, la).unwrap(),
            Ok(Bytes::from_static(b"first"))
        );
        packs.files.write().unwrap().remove(&1);
        packs.maps.write().unwrap().remove(&1);
        let gone = packs.read(&a, la).unwrap().unwrap_err();
        assert_eq!(
            gone.to_string(),
            "its pack file packs/pack-00000001 is missing"
        );
    }
}
