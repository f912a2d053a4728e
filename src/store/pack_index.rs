//! Pack index files: for one pack, its object ids sorted, with a fan-out table and each
//! record's place, so that a reader who does not open the database (a closed read) finds an
//! object without loading anything whole: the file is read in place (memory-mapped), and a
//! lookup touches only the pages of its id's bucket and of its place.
//!
//! `cache/pack-NNNNNNNN.idx` describes pack `NNNNNNNN` up to a length (`covered`); records the
//! pack gained after that (its tail) are found by reading them in order. The files are derived
//! data: written when a store closes (only for a pack whose tail has grown past
//! [`REWRITE_TAIL`], so most closes write nothing), removed when their pack is gone, rebuilt
//! from the pack when missing or damaged. Nothing trusts them blindly: every object read
//! through one is re-hashed by the object layer, and any miss sends the reader back to the
//! database. Layout in store-format.md, "Derived caches".

use std::collections::HashMap;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_128;

use super::cache::{remove_cache_file, CACHE_DIR};
use super::files::write_cache_file;
use super::packs::{pack_name, pack_number, read_exact_at, Location, HEADER, RECORD_HEAD};
use super::RawId;

/// First bytes of a pack index file.
const MAGIC: &[u8; 8] = b"MEMPIDX1";
/// Bytes before the ids: magic, pack number (u32), covered length (u64), count (u32), then
/// 256 fan-out counts (u32).
const FIXED: usize = 8 + 4 + 8 + 4 + 256 * 4;
/// Bytes of one place: record offset (u64) and object length (u32).
const PLACE: usize = 12;
/// A pack whose records past its index's `covered` length exceed this gets its index
/// rewritten when the store closes; a reader reads at most this much of a tail, give or take
/// one close's appends.
pub(crate) const REWRITE_TAIL: u64 = 1 << 20;
/// A tail longer than this is not read by a closed read (the reader opens the store instead).
pub(crate) const MAX_TAIL: u64 = 8 << 20;

/// One record of a pack: its object id, where the record starts, the object's length.
pub(crate) type Entry = (RawId, u64, u32);

/// The index file of pack `no` in the store at `store_dir`.
pub(crate) fn index_path(store_dir: &Path, no: u32) -> PathBuf {
    store_dir
        .join(CACHE_DIR)
        .join(format!("{}.idx", pack_name(no)))
}

/// The pack number an index file name stands for.
fn index_number(name: &str) -> Option<u32> {
    pack_number(name.strip_suffix(".idx")?)
}

/// The bytes of an index of pack `no` describing its first `covered` bytes by `entries`:
/// sorted by id, one entry per id (the last record of an id in the pack wins).
pub(crate) fn encode(no: u32, covered: u64, mut entries: Vec<Entry>) -> Vec<u8> {
    // Stable by id, then keep the record that comes last in the pack (a repaired copy).
    entries.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut unique: Vec<Entry> = Vec::with_capacity(entries.len());
    for e in entries {
        match unique.last_mut() {
            Some(last) if last.0 == e.0 => *last = e,
            _ => unique.push(e),
        }
    }
    let n = unique.len();
    let mut out = Vec::with_capacity(FIXED + n * (32 + PLACE) + 16);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&no.to_le_bytes());
    out.extend_from_slice(&covered.to_le_bytes());
    out.extend_from_slice(&(n as u32).to_le_bytes());
    let mut fan = [0u32; 256];
    for (id, _, _) in &unique {
        fan[id[0] as usize] += 1;
    }
    let mut running = 0u32;
    for f in fan {
        running += f;
        out.extend_from_slice(&running.to_le_bytes());
    }
    for (id, _, _) in &unique {
        out.extend_from_slice(id);
    }
    for (_, offset, len) in &unique {
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
    }
    let sum = xxh3_128(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Every whole record of the pack `file` from byte `from` to byte `to`, in order. Stops at
/// the first record that does not fit before `to` (a tail torn by a crash): what follows it
/// cannot be found without the database.
pub(crate) fn scan(file: &File, from: u64, to: u64) -> io::Result<Vec<Entry>> {
    let from = from.max(HEADER);
    if to <= from {
        return Ok(Vec::new());
    }
    let mut buf = vec![0u8; (to - from) as usize];
    read_exact_at(file, &mut buf, from)?;
    Ok(scan_bytes(&buf, from))
}

/// Every whole record in `buf`, the bytes of a pack from offset `from` on, in order (as
/// [`scan`]).
pub(crate) fn scan_bytes(buf: &[u8], from: u64) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while buf.len() - at >= RECORD_HEAD as usize {
        let id: RawId = buf[at..at + 32].try_into().expect("32 bytes");
        let len = u32::from_be_bytes(buf[at + 32..at + 36].try_into().expect("4 bytes"));
        let end = at + RECORD_HEAD as usize + len as usize;
        if end > buf.len() {
            break;
        }
        out.push((id, from + at as u64, len));
        at = end;
    }
    out
}

/// An index file opened for lookups by offset: its header is read once, ids and places on
/// demand, in place: the file is mapped, so a lookup costs no system call, only the first
/// touch of the pages of its bucket and place.
#[derive(Debug)]
pub(crate) struct PackIndex {
    map: memmap2::Mmap,
    /// The pack length the index describes.
    covered: u64,
    count: u32,
    fan: Box<[u32; 256]>,
}

impl PackIndex {
    /// Opens the index of pack `no` at `path` if its header is well formed and its size is
    /// the one its count implies (the checksum is checked by [`PackIndex::verify`], which
    /// reads it whole).
    pub(crate) fn open(path: &Path, no: u32) -> Option<PackIndex> {
        let file = File::open(path).ok()?;
        let size = file.metadata().ok()?.len();
        if size < (FIXED + 16) as u64 {
            return None;
        }
        // SAFETY: cache files are only ever replaced by renaming a new file over them, never
        // written in place or truncated, so the mapped bytes do not change under the map.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let head = &map[..FIXED];
        if &head[..8] != MAGIC || u32::from_le_bytes(head[8..12].try_into().ok()?) != no {
            return None;
        }
        let covered = u64::from_le_bytes(head[12..20].try_into().ok()?);
        let count = u32::from_le_bytes(head[20..24].try_into().ok()?);
        let mut fan = Box::new([0u32; 256]);
        let mut prev = 0;
        for (i, f) in fan.iter_mut().enumerate() {
            let at = 24 + i * 4;
            *f = u32::from_le_bytes(head[at..at + 4].try_into().ok()?);
            if *f < prev {
                return None;
            }
            prev = *f;
        }
        let expected = FIXED as u64 + u64::from(count) * (32 + PLACE as u64) + 16;
        (prev == count && size == expected && map.len() as u64 == size && covered >= HEADER)
            .then_some(PackIndex {
                map,
                covered,
                count,
                fan,
            })
    }

    /// The pack length this index describes.
    pub(crate) fn covered(&self) -> u64 {
        self.covered
    }

    /// The ids whose first byte is `b`, and the number of the first of them.
    fn bucket(&self, b: u8) -> io::Result<(u32, &[u8])> {
        let lo = if b == 0 { 0 } else { self.fan[b as usize - 1] };
        let hi = self.fan[b as usize];
        let at = FIXED + lo as usize * 32;
        Ok((lo, &self.map[at..at + (hi - lo) as usize * 32]))
    }

    /// Where the record of `id` starts and the object's length, if the index has it.
    pub(crate) fn find(&self, id: &RawId) -> io::Result<Option<(u64, u32)>> {
        let (lo, ids) = self.bucket(id[0])?;
        let Some(i) = search(ids, id) else {
            return Ok(None);
        };
        let n = u64::from(lo) + i as u64;
        let at = FIXED + self.count as usize * 32 + n as usize * PLACE;
        let place = &self.map[at..at + PLACE];
        Ok(Some((
            u64::from_le_bytes(place[..8].try_into().expect("8 bytes")),
            u32::from_le_bytes(place[8..].try_into().expect("4 bytes")),
        )))
    }

    /// The ids the index holds that start with `prefix` (non-empty), ascending.
    pub(crate) fn ids_with_prefix(&self, prefix: &[u8]) -> io::Result<Vec<RawId>> {
        let Some(&first) = prefix.first() else {
            return Ok(Vec::new());
        };
        let (_, ids) = self.bucket(first)?;
        Ok(ids
            .chunks_exact(32)
            .filter(|id| id.starts_with(prefix))
            .map(|id| id.try_into().expect("32 bytes"))
            .collect())
    }

    /// Every entry, read whole, if the file's checksum holds.
    pub(crate) fn entries(&self) -> Option<Vec<Entry>> {
        let bytes = &self.map[..];
        let body = bytes.len().checked_sub(16)?;
        if xxh3_128(&bytes[..body]).to_le_bytes() != bytes[body..] {
            return None;
        }
        let n = self.count as usize;
        let ids = &bytes[FIXED..FIXED + n * 32];
        let places = &bytes[FIXED + n * 32..FIXED + n * (32 + PLACE)];
        Some(
            ids.chunks_exact(32)
                .zip(places.chunks_exact(PLACE))
                .map(|(id, p)| {
                    (
                        id.try_into().expect("32 bytes"),
                        u64::from_le_bytes(p[..8].try_into().expect("8 bytes")),
                        u32::from_le_bytes(p[8..].try_into().expect("4 bytes")),
                    )
                })
                .collect(),
        )
    }
}

/// Brings the pack indexes of the store at `store_dir` up to date; run by the holder of the
/// LOCK as the store closes. For each pack in `packs` (number and path): an index whose tail
/// has grown past [`REWRITE_TAIL`], or that is missing or malformed, is rewritten from the
/// old index and the records after it; with `verify`, an index whose checksum fails is
/// rebuilt from the whole pack. Of the records read from a pack, only those `indexed` (the
/// database's index points at them: pack number, record offset) are indexed, so that an
/// object the store no longer has is not found by a closed read. Indexes of packs that are gone are
/// removed. Best effort:
/// the files are derived, and a missing one only costs readers time.
pub(crate) fn refresh(
    store_dir: &Path,
    packs: &[(u32, PathBuf)],
    verify: bool,
    indexed: &dyn Fn(&RawId, u32, u64) -> bool,
) {
    for (no, pack) in packs {
        let Ok(file) = File::open(pack) else { continue };
        let Ok(len) = file.metadata().map(|m| m.len()) else {
            continue;
        };
        let path = index_path(store_dir, *no);
        let old = PackIndex::open(&path, *no).filter(|ix| ix.covered() <= len);
        let (mut entries, from) = match &old {
            Some(ix) if len - ix.covered() <= REWRITE_TAIL && !verify => continue,
            Some(ix) => match ix.entries() {
                Some(e) => (e, ix.covered()),
                None => (Vec::new(), HEADER),
            },
            None if len <= HEADER + REWRITE_TAIL && !path.exists() => continue,
            None => (Vec::new(), HEADER),
        };
        if old.as_ref().is_some_and(|ix| ix.covered() == len) && from == len {
            continue;
        }
        let Ok(tail) = scan(&file, from, len) else {
            continue;
        };
        entries.extend(tail.into_iter().filter(|(id, at, _)| indexed(id, *no, *at)));
        let _ = write_cache_file(&path, &encode(*no, len, entries));
    }
    remove_orphans(store_dir, packs);
}

/// Writes the index of pack `no`, `len` bytes long, from the records the database's index
/// points at in it (`live`), so that the pack's dead records are in no index; an index that
/// cannot be written is removed (readers then read the pack's records in order, or open the
/// store). Best effort, as for every cache.
pub(crate) fn rewrite(store_dir: &Path, no: u32, len: u64, live: &[(RawId, Location)]) {
    let entries = live
        .iter()
        .map(|(id, loc)| (*id, loc.offset, loc.len))
        .collect();
    let path = index_path(store_dir, no);
    if write_cache_file(&path, &encode(no, len, entries)).is_err() {
        let _ = remove_cache_file(&path);
    }
}

/// Removes the index files of packs not in `packs`.
fn remove_orphans(store_dir: &Path, packs: &[(u32, PathBuf)]) {
    let Ok(dir) = fs::read_dir(store_dir.join(CACHE_DIR)) else {
        return;
    };
    let live: HashMap<u32, ()> = packs.iter().map(|(n, _)| (*n, ())).collect();
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(no) = name.to_str().and_then(index_number) else {
            continue;
        };
        if !live.contains_key(&no) && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = remove_cache_file(&e.path());
        }
    }
}

/// The place of `id` among `ids` (ascending, 32 bytes each, all starting with `id`'s first
/// byte), if it is there.
///
/// Ids are hashes, so their next eight bytes, read as a number, are spread evenly: the place
/// they predict is within a few entries of the real one. The search starts there and widens
/// by doubling steps until it brackets the id, then halves: it reads a few neighbouring
/// entries, not entries spread over the whole bucket, so a cold index costs a cache miss or
/// two per lookup instead of one per halving (and a large one, few pages). Uneven ids (never
/// seen from a hash) only cost more steps, never a wrong answer.
fn search(ids: &[u8], id: &RawId) -> Option<usize> {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let n = ids.len() / 32;
    if n == 0 {
        return None;
    }
    let word = |b: &[u8]| u64::from_be_bytes(b[1..9].try_into().expect("8 bytes"));
    let want = word(id);
    // Compared by that number first, which nearly always decides.
    let cmp = |i: usize| {
        let here = &ids[i * 32..i * 32 + 32];
        word(here).cmp(&want).then_with(|| here[9..].cmp(&id[9..]))
    };
    let guess = ((u128::from(want) * n as u128) >> 64) as usize;
    // The id lies in lo..hi once bracketed.
    let (mut lo, mut hi) = match cmp(guess) {
        Equal => return Some(guess),
        Less => {
            let (mut lo, mut step) = (guess + 1, 1);
            loop {
                let probe = guess + step;
                if probe >= n {
                    break (lo, n);
                }
                match cmp(probe) {
                    Equal => return Some(probe),
                    Less => lo = probe + 1,
                    Greater => break (lo, probe),
                }
                step *= 2;
            }
        }
        Greater => {
            let (mut hi, mut step) = (guess, 1);
            loop {
                let Some(probe) = guess.checked_sub(step) else {
                    break (0, hi);
                };
                match cmp(probe) {
                    Equal => return Some(probe),
                    Greater => hi = probe,
                    Less => break (probe + 1, hi),
                }
                step *= 2;
            }
        }
    };
    while lo < hi {
        let mid = (lo + hi) / 2;
        match cmp(mid) {
            Less => lo = mid + 1,
            Greater => hi = mid,
            Equal => return Some(mid),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(b: u8, c: u8) -> RawId {
        let mut i = [c; 32];
        i[0] = b;
        i
    }

    /// The vector of store-format.md: the index of a pack holding only blob `hello`.
    #[test]
    fn index_vector() {
        let hello: RawId = crate::object::from_hex(
            "2704a477b685fd64d875e4ac4dbc1acb9db5f4b54ae09dca449069bea94b8632",
        )
        .unwrap()
        .try_into()
        .unwrap();
        let b = encode(1, 52, vec![(hello, 8, 8)]);
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        assert_eq!(b.len(), 1108);
        assert_eq!(
            hex(&b[..24]),
            "4d454d504944583101000000340000000000000001000000"
        );
        // Fan-out: 0 for first bytes below 0x27, 1 from 0x27 on.
        assert!(b[24..24 + 0x27 * 4].iter().all(|&x| x == 0));
        assert!(b[24 + 0x27 * 4..1048].chunks(4).all(|c| c == [1, 0, 0, 0]));
        assert_eq!(
            hex(&b[1048..]),
            "2704a477b685fd64d875e4ac4dbc1acb9db5f4b54ae09dca449069bea94b8632\
             080000000000000008000000909554a709aa80550008267685cce323"
                .replace(' ', "")
        );
    }

    /// The search from the predicted place agrees with a plain binary search, for ids
    /// spread as hashes are and for ids bunched at either end or sharing their first bytes.
    #[test]
    fn the_search_finds_every_id_and_no_other() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let spread = |next: &mut dyn FnMut() -> u64| {
            let mut id = [0u8; 32];
            for chunk in id.chunks_mut(8) {
                chunk.copy_from_slice(&next().to_le_bytes());
            }
            id[0] = 7;
            id
        };
        let shapes: [&dyn Fn(RawId) -> RawId; 4] = [
            &|id| id,
            &|mut id| {
                id[1..9].fill(0);
                id
            },
            &|mut id| {
                id[1..9].fill(0xff);
                id
            },
            &|mut id| {
                id[1] = 0;
                id[2] = 0x10;
                id
            },
        ];
        for n in [1usize, 2, 3, 20, 500, 3000] {
            for shape in shapes {
                let mut all: Vec<RawId> = (0..2 * n).map(|_| shape(spread(&mut next))).collect();
                all.sort();
                all.dedup();
                // Every other id is held; the rest are looked for and must be missed.
                let held: Vec<RawId> = all.iter().step_by(2).copied().collect();
                let bytes: Vec<u8> = held.iter().flatten().copied().collect();
                for (i, id) in all.iter().enumerate() {
                    let want = held.binary_search(id).ok();
                    assert_eq!(search(&bytes, id), want, "n {n} id {i}");
                    if i % 2 == 0 {
                        assert!(want.is_some());
                    }
                }
                let below = [7u8; 32].map(|b| b & 0x07);
                assert_eq!(search(&bytes, &below), held.binary_search(&below).ok());
                let mut above = [0xffu8; 32];
                above[0] = 7;
                assert_eq!(search(&bytes, &above), held.binary_search(&above).ok());
            }
        }
        assert_eq!(search(&[], &[7; 32]), None);
    }

    #[test]
    fn an_index_finds_what_it_was_given_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pack-00000003.idx");
        let entries = vec![
            (id(0xff, 1), 100, 5),
            (id(0, 2), 8, 10),
            (id(0x80, 3), 200, 7),
            (id(0x80, 3), 300, 7),
            (id(0x80, 4), 400, 9),
        ];
        fs::write(&path, encode(3, 500, entries)).unwrap();
        assert!(PackIndex::open(&path, 4).is_none(), "another pack's number");
        let ix = PackIndex::open(&path, 3).unwrap();
        assert_eq!(ix.covered(), 500);
        assert_eq!(ix.find(&id(0, 2)).unwrap(), Some((8, 10)));
        assert_eq!(ix.find(&id(0xff, 1)).unwrap(), Some((100, 5)));
        assert_eq!(
            ix.find(&id(0x80, 3)).unwrap(),
            Some((300, 7)),
            "last copy wins"
        );
        assert_eq!(ix.find(&id(0x80, 5)).unwrap(), None);
        assert_eq!(ix.find(&id(0x7f, 3)).unwrap(), None);
        assert_eq!(
            ix.ids_with_prefix(&[0x80]).unwrap(),
            vec![id(0x80, 3), id(0x80, 4)]
        );
        assert_eq!(ix.entries().unwrap().len(), 4);

        let mut bytes = fs::read(&path).unwrap();
        let last = bytes.len() - 20;
        bytes[last] ^= 1;
        fs::write(&path, &bytes).unwrap();
        let ix = PackIndex::open(&path, 3).unwrap();
        assert!(ix.entries().is_none(), "a flipped byte fails the checksum");
        bytes.pop();
        fs::write(&path, &bytes).unwrap();
        assert!(PackIndex::open(&path, 3).is_none(), "a cut file is refused");
    }
}
