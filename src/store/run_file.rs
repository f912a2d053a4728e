//! Run files: one sorted run of the object index (see [`super::run_index`]), immutable once
//! written, read in place (memory-mapped).
//!
//! `index/RRRRRRRRRRRRRRRR.run` (the run's seq, 16 lower-case hex digits): the 8 bytes
//! `MEMRUN01`, the entry count (u64, big-endian), the entries sorted by id (each the id, 32
//! bytes, and its location, 16 bytes, or a tombstone), then the BLAKE3 hash of every byte
//! before it. The database lists each run with its count and that hash, so a file that is
//! not the one listed is refused when the index opens; a full check of the hash runs when a
//! run is merged and in `fsck`. Layout in store-format.md, section 1.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::files::{io_err, write_atomically};
use super::packs::Location;
use super::{RawId, StoreResult};

/// First bytes of a run file.
const MAGIC: &[u8; 8] = b"MEMRUN01";
/// Bytes before the entries: magic and count.
const HEAD: usize = 16;
/// Bytes of the trailing hash.
const TRAILER: usize = 32;
/// Bytes of one entry: id (32) and location (16), or the id and [`TOMBSTONE`].
pub(crate) const ENTRY: usize = 32 + Location::BYTES;
/// The location bytes of a tombstone: pack number `u32::MAX`, which no pack has, and zeros.
const TOMBSTONE: [u8; Location::BYTES] = {
    let mut t = [0u8; Location::BYTES];
    t[0] = 0xff;
    t[1] = 0xff;
    t[2] = 0xff;
    t[3] = 0xff;
    t
};

/// What the index says of an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// The object's record is here.
    At(Location),
    /// The object was deleted.
    Gone,
}

impl Slot {
    /// The location, unless deleted.
    pub(crate) fn location(self) -> Option<Location> {
        match self {
            Slot::At(loc) => Some(loc),
            Slot::Gone => None,
        }
    }

    /// The 16 bytes stored for this slot.
    pub(crate) fn encode(self) -> [u8; Location::BYTES] {
        match self {
            Slot::At(loc) => loc.encode(),
            Slot::Gone => TOMBSTONE,
        }
    }

    /// The slot of 16 stored bytes; `None` for any other length.
    pub(crate) fn decode(b: &[u8]) -> Option<Slot> {
        if b == TOMBSTONE {
            Some(Slot::Gone)
        } else {
            Location::decode(b).map(Slot::At)
        }
    }
}

/// The name of run `seq`'s file.
pub(crate) fn run_name(seq: u64) -> String {
    format!("{seq:016x}.run")
}

/// The seq a file name stands for, if it names a run.
pub(crate) fn run_seq(name: &str) -> Option<u64> {
    let hex = name.strip_suffix(".run")?;
    if hex.len() != 16
        || !hex
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

/// The bytes of a run file holding `entries` (sorted by id, one per id).
pub(crate) fn encode(entries: &[(RawId, Slot)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEAD + entries.len() * ENTRY + TRAILER);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(entries.len() as u64).to_be_bytes());
    for (id, slot) in entries {
        out.extend_from_slice(id);
        out.extend_from_slice(&slot.encode());
    }
    let hash = *blake3::hash(&out).as_bytes();
    out.extend_from_slice(&hash);
    out
}

/// Writes run `seq` (entries sorted by id) into directory `dir`, durably, and returns its
/// hash (the file's last 32 bytes).
pub(crate) fn write(dir: &Path, seq: u64, entries: &[(RawId, Slot)]) -> StoreResult<[u8; 32]> {
    let bytes = encode(entries);
    write_atomically(&dir.join(run_name(seq)), &bytes)?;
    let mut hash = [0u8; 32];
    hash.copy_from_slice(&bytes[bytes.len() - TRAILER..]);
    Ok(hash)
}

/// Why a run file is refused.
pub(crate) type Refusal = String;

/// One run file, mapped.
pub(crate) struct RunFile {
    /// The run's seq.
    pub(crate) seq: u64,
    /// Its entry count.
    pub(crate) count: u64,
    /// The file.
    pub(crate) path: PathBuf,
    map: memmap2::Mmap,
    /// Lookups so far, until the fan-out table is made.
    lookups: std::sync::atomic::AtomicU32,
    /// Per first two bytes of an id, the first entry at or above them (and the count last):
    /// made in memory once a run has been searched [`FANOUT_AFTER`] times, so that a
    /// process reading many objects finds each in a few probes of one small range.
    fanout: std::sync::OnceLock<Vec<u32>>,
}

/// Lookups in one run after which its fan-out table is made (reading the whole file once
/// costs what this many binary searches do).
const FANOUT_AFTER: u32 = 4096;

impl RunFile {
    /// Maps run `seq` of directory `dir`, listed with `count` entries and hash `hash`.
    /// `Ok(Err(_))` says why the file is not that run (missing, cut short, another run).
    pub(crate) fn open(
        dir: &Path,
        seq: u64,
        count: u64,
        hash: &[u8; 32],
    ) -> StoreResult<Result<RunFile, Refusal>> {
        let path = dir.join(run_name(seq));
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Err("the file is missing".into()))
            }
            Err(e) => return Err(io_err(&path)(e)),
        };
        // SAFETY: run files are never changed in place (written whole under a temporary
        // name, then renamed); only the store's LOCK holder maps or removes them.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err(&path))?;
        let want = usize::try_from(count)
            .ok()
            .and_then(|n| n.checked_mul(ENTRY))
            .and_then(|n| n.checked_add(HEAD + TRAILER));
        if want != Some(map.len()) {
            return Ok(Err(format!(
                "it is {} bytes long; a run of {count} entries is {}",
                map.len(),
                want.map_or_else(|| "larger".to_string(), |n| n.to_string())
            )));
        }
        if &map[..8] != MAGIC || map[8..16] != count.to_be_bytes() {
            return Ok(Err("its header is not a run's of that count".into()));
        }
        if map[map.len() - TRAILER..] != hash[..] {
            return Ok(Err("its hash is not the one the database lists".into()));
        }
        Ok(Ok(RunFile {
            seq,
            count,
            path,
            map,
            lookups: std::sync::atomic::AtomicU32::new(0),
            fanout: std::sync::OnceLock::new(),
        }))
    }

    /// The entry bytes.
    fn body(&self) -> &[u8] {
        &self.map[HEAD..self.map.len() - TRAILER]
    }

    /// The file's length in bytes.
    pub(crate) fn file_len(&self) -> u64 {
        self.map.len() as u64
    }

    /// Whether the file's hash matches its bytes (reads the whole file).
    pub(crate) fn verify(&self) -> bool {
        let end = self.map.len() - TRAILER;
        blake3::hash(&self.map[..end]).as_bytes()[..] == self.map[end..]
    }

    /// The fan-out table, once this run was searched often enough (see [`RunFile::fanout`]).
    fn fanout_table(&self) -> Option<&[u32]> {
        use std::sync::atomic::Ordering;
        if let Some(f) = self.fanout.get() {
            return Some(f);
        }
        if self.lookups.fetch_add(1, Ordering::Relaxed) < FANOUT_AFTER {
            return None;
        }
        let n = self.count as usize;
        let f = self.fanout.get_or_init(|| {
            let mut f = vec![0u32; 65_537];
            let mut i = 0usize;
            for (b, slot) in f.iter_mut().enumerate().take(65_536) {
                while i < n {
                    let e = self.entry(i);
                    if (u16::from_be_bytes([e[0], e[1]]) as usize) >= b {
                        break;
                    }
                    i += 1;
                }
                *slot = i as u32;
            }
            f[65_536] = n as u32;
            f
        });
        Some(f)
    }

    fn entry(&self, i: usize) -> &[u8] {
        &self.body()[i * ENTRY..(i + 1) * ENTRY]
    }

    /// The index of the first entry whose id is not below `id`.
    fn lower_bound(&self, id: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.count as usize);
        if id.len() >= 2 {
            if let Some(f) = self.fanout_table() {
                let b = u16::from_be_bytes([id[0], id[1]]) as usize;
                (lo, hi) = (f[b] as usize, f[b + 1] as usize);
            }
        }
        // Ids are compared by their first eight bytes as a number first: random ids almost
        // always differ there, so the search rarely compares whole ids (a shorter prefix
        // is compared as it is).
        let head = |b: &[u8]| b.first_chunk::<8>().map(|h| u64::from_be_bytes(*h));
        let id_head = head(id);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let e = self.entry(mid);
            let below = match (head(e), id_head) {
                (Some(a), Some(b)) if a != b => a < b,
                _ => e[..32] < *id,
            };
            if below {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// What the run says of `id`, if it holds it. A slot that does not decode reads as
    /// absent; [`RunFile::verify`] tells such damage.
    pub(crate) fn find(&self, id: &RawId) -> Option<Slot> {
        let i = self.lower_bound(id);
        if i == self.count as usize {
            return None;
        }
        let e = self.entry(i);
        (e[..32] == id[..])
            .then(|| Slot::decode(&e[32..]))
            .flatten()
    }

    /// The entries whose id starts with `prefix`, sorted.
    pub(crate) fn with_prefix(&self, prefix: &[u8]) -> Vec<(RawId, Slot)> {
        let mut out = Vec::new();
        for i in self.lower_bound(prefix)..self.count as usize {
            let e = self.entry(i);
            if !e[..32].starts_with(prefix) {
                break;
            }
            out.extend(decode_entry(e));
        }
        out
    }

    /// Every entry, sorted by id.
    pub(crate) fn entries(&self) -> Vec<(RawId, Slot)> {
        self.body()
            .chunks_exact(ENTRY)
            .filter_map(decode_entry)
            .collect()
    }
}

/// One entry's id and slot.
fn decode_entry(e: &[u8]) -> Option<(RawId, Slot)> {
    let id: RawId = e[..32].try_into().ok()?;
    Some((id, Slot::decode(&e[32..])?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(run_name(26), "000000000000001a.run");
        assert_eq!(run_seq("000000000000001a.run"), Some(26));
        assert_eq!(run_seq("000000000000001A.run"), None);
        assert_eq!(run_seq("1a.run"), None);
        assert_eq!(run_seq("000000000000001a.run.tmp.1.0"), None);
    }

    /// Past the lookups that make its fan-out table, a run answers as before: every id it
    /// holds, none it does not, and ids by prefix (two bytes or shorter).
    #[test]
    fn lookups_through_the_fan_out_table_answer_as_a_search() {
        let dir = tempfile::tempdir().unwrap();
        let id = |i: u32| *blake3::hash(&i.to_le_bytes()).as_bytes();
        let mut entries: Vec<(RawId, Slot)> = (0..20_000u32)
            .map(|i| {
                let slot = match i % 7 {
                    0 => Slot::Gone,
                    _ => Slot::At(Location {
                        pack: i,
                        offset: u64::from(i) * 3,
                        len: i + 1,
                    }),
                };
                (id(i), slot)
            })
            .collect();
        entries.sort_by_key(|e| e.0);
        let hash = write(dir.path(), 1, &entries).unwrap();
        let run = RunFile::open(dir.path(), 1, entries.len() as u64, &hash)
            .unwrap()
            .unwrap();
        // A thousand lookups searching the whole run, then many through the table.
        for (from, to, made) in [(0, 500, false), (500, entries.len(), true)] {
            for (i, (k, slot)) in entries.iter().enumerate().take(to).skip(from) {
                assert_eq!(run.find(k), Some(*slot), "entry {i}");
                let absent = id(1_000_000 + i as u32);
                assert_eq!(run.find(&absent), None);
            }
            assert_eq!(run.fanout.get().is_some(), made);
        }
        for prefix in [&entries[77].0[..2], &entries[5].0[..1], &entries[9].0[..3]] {
            let want: Vec<_> = entries
                .iter()
                .filter(|e| e.0.starts_with(prefix))
                .copied()
                .collect();
            assert!(!want.is_empty());
            assert_eq!(run.with_prefix(prefix), want);
        }
    }
}
