//! Pack index files: for one pack, its object ids sorted, with a fan-out table and each
//! record's place, read in place (memory-mapped): a lookup touches only the pages of its id's
//! bucket and of its place, so opening a store costs nothing per object.
//!
//! `packs/pack-NNNNNNNN.idx` describes pack `NNNNNNNN` up to a length (`covered`); records the
//! pack gained after that (its tail) are found by reading them in order. The files are derived
//! from the packs (see `object_index`, which writes them); nothing trusts them blindly: every
//! object read through one is re-hashed by the object layer, and a file that fails its
//! checksum is rebuilt from its pack. Layout in store-format.md, "The object index".

use std::fs::File;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_128;

use super::files::write_atomically;
use super::packs::{pack_name, pack_number, HEADER};
use super::{RawId, StoreResult};

/// First bytes of a pack index file.
const MAGIC: &[u8; 8] = b"MEMPIDX1";
/// Bytes before the ids: magic, pack number (u32), covered length (u64), count (u32), then
/// 256 fan-out counts (u32).
const FIXED: usize = 8 + 4 + 8 + 4 + 256 * 4;
/// Bytes of one place: record offset (u64) and object length (u32).
const PLACE: usize = 12;

/// One record of a pack: its object id, where the record starts, the object's length.
pub(crate) type Entry = (RawId, u64, u32);

/// The index file of pack `no` in the packs' directory `dir`.
pub(crate) fn index_path(dir: &Path, no: u32) -> PathBuf {
    dir.join(format!("{}.idx", pack_name(no)))
}

/// Writes the index file at `path` of pack `no` describing its first `covered` bytes by
/// `entries`, atomically and durably (temporary file, sync, rename, sync of the directory).
pub(crate) fn write(path: &Path, no: u32, covered: u64, entries: Vec<Entry>) -> StoreResult<()> {
    write_atomically(path, &encode(no, covered, entries))
}

/// The packs of the index files in the packs' directory `dir` whose pack file is gone.
pub(crate) fn without_pack(dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(index_number))
        .filter(|&no| !dir.join(pack_name(no)).exists())
        .collect()
}

/// The pack number an index file name stands for.
pub(crate) fn index_number(name: &str) -> Option<u32> {
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
        // SAFETY: index files are only ever replaced by renaming a new file over them, never
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
    fn bucket(&self, b: u8) -> (u32, &[u8]) {
        let lo = if b == 0 { 0 } else { self.fan[b as usize - 1] };
        let hi = self.fan[b as usize];
        let at = FIXED + lo as usize * 32;
        (lo, &self.map[at..at + (hi - lo) as usize * 32])
    }

    /// Where the record of `id` starts and the object's length, if the index has it.
    pub(crate) fn find(&self, id: &RawId) -> Option<(u64, u32)> {
        let (lo, ids) = self.bucket(id[0]);
        let i = search(ids, id)?;
        let n = u64::from(lo) + i as u64;
        let at = FIXED + self.count as usize * 32 + n as usize * PLACE;
        Some(place(&self.map[at..at + PLACE]))
    }

    /// The ids the index holds that start with `prefix` (non-empty), ascending.
    pub(crate) fn ids_with_prefix(&self, prefix: &[u8]) -> Vec<RawId> {
        let Some(&first) = prefix.first() else {
            return Vec::new();
        };
        let (_, ids) = self.bucket(first);
        ids.chunks_exact(32)
            .filter(|id| id.starts_with(prefix))
            .map(|id| id.try_into().expect("32 bytes"))
            .collect()
    }

    /// How many objects it indexes.
    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    /// The file's size in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.map.len() as u64
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
                    let (offset, len) = place(p);
                    (id.try_into().expect("32 bytes"), offset, len)
                })
                .collect(),
        )
    }
}

/// The record offset and object length that the [`PLACE`] bytes of `p` hold.
fn place(p: &[u8]) -> (u64, u32) {
    (
        u64::from_le_bytes(p[..8].try_into().expect("8 bytes")),
        u32::from_le_bytes(p[8..PLACE].try_into().expect("4 bytes")),
    )
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
    use std::fs;

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
        assert_eq!(ix.find(&id(0, 2)), Some((8, 10)));
        assert_eq!(ix.find(&id(0xff, 1)), Some((100, 5)));
        assert_eq!(ix.find(&id(0x80, 3)), Some((300, 7)), "last copy wins");
        assert_eq!(ix.find(&id(0x80, 5)), None);
        assert_eq!(ix.find(&id(0x7f, 3)), None);
        assert_eq!(ix.ids_with_prefix(&[0x80]), vec![id(0x80, 3), id(0x80, 4)]);
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
