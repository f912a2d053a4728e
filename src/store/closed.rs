//! A closed read: a store read as of its last close, from the refs and pack lengths that
//! close recorded (the head cache file), and objects found through the pack index files and the packs' tails, without
//! opening the database or taking the LOCK.
//!
//! What it shows is the store exactly as of that close: refs come from the record, and every
//! object they reach sits in the packs before the recorded lengths, which appends never
//! change. The one thing that can change under a reader is garbage collection deleting a
//! pack; the read then fails (a missing pack, an object not found) and the caller reads again
//! with the store opened. Nothing is written: every write is [`StoreError::ReadOnly`].

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

use super::head_cache::CachedRefs;
use super::object_index::scan_records;
use super::pack_index::{index_path, Entry, PackIndex, MAX_TAIL};
use super::packs::{pack_name, HEADER, PACKS_DIR, RECORD_HEAD};
use super::{
    Backend, Bytes, Damage, ObjectStore, PutOutcome, RawId, RefStore, StoreError, StoreResult,
};

/// Each object's id, where its record starts and its length, sorted by id and then place
/// (a list searched by halving is a third of the memory of a hash table, and a command's
/// cost here is mostly the fresh memory it touches).
type Places = Vec<Entry>;

/// One pack as of the last close.
#[derive(Debug)]
struct ClosedPack {
    no: u32,
    /// Its length at that close: nothing after it is read.
    len: u64,
    /// Its first `len` bytes, mapped (empty for an empty pack). An object read is a window
    /// of it, shared rather than copied, which keeps the map alive while the bytes are held.
    map: Bytes,
    index: Option<PackIndex>,
    /// The records between the index's end and `len`, read on first use.
    tail: OnceLock<Places>,
}

impl ClosedPack {
    /// Where the tail starts.
    fn tail_start(&self) -> u64 {
        self.index.as_ref().map_or(HEADER, PackIndex::covered)
    }

    fn tail(&self) -> &Places {
        self.tail.get_or_init(|| {
            let bytes = &self.map[..];
            let from = self.tail_start().max(HEADER).min(bytes.len() as u64);
            let mut places = scan_records(&bytes[from as usize..], from, None).records;
            places.sort_unstable();
            places
        })
    }

    /// The place of `id` in the tail: its last copy, as a later copy (a repaired one) wins.
    fn in_tail(&self, id: &RawId) -> Option<(u64, u32)> {
        let tail = self.tail();
        let end = tail.partition_point(|(x, _, _)| x <= id);
        let &(x, offset, len) = tail.get(end.checked_sub(1)?)?;
        (x == *id).then_some((offset, len))
    }

    /// Where the record of `id` is in this pack, if it is there.
    fn find(&self, id: &RawId) -> StoreResult<Option<(u64, u32)>> {
        // The tail's copy is newer than the index's.
        Ok(self
            .in_tail(id)
            .or_else(|| self.index.as_ref().and_then(|ix| ix.find(id))))
    }

    fn ids(&self, prefix: &[u8], out: &mut BTreeSet<RawId>) -> StoreResult<()> {
        if let Some(ix) = &self.index {
            if prefix.is_empty() {
                let entries = ix
                    .entries()
                    .ok_or_else(|| StoreError::Backend("a pack index is damaged".into()))?;
                out.extend(entries.into_iter().map(|(id, _, _)| id));
            } else {
                out.extend(ix.ids_with_prefix(prefix));
            }
        }
        out.extend(
            self.tail()
                .iter()
                .map(|(id, _, _)| *id)
                .filter(|id| id.starts_with(prefix)),
        );
        Ok(())
    }
}

/// Where the record of an object `len` bytes long that starts at `offset` lies in a pack
/// mapped up to `mapped` bytes, if it lies wholly inside (a damaged index can name any
/// offset, even one whose end does not fit in 64 bits).
fn record_span(offset: u64, len: u32, mapped: u64) -> Option<std::ops::Range<usize>> {
    let end = offset
        .checked_add(RECORD_HEAD + u64::from(len))
        .filter(|&end| end <= mapped)?;
    Some(usize::try_from(offset).ok()?..usize::try_from(end).ok()?)
}

/// The read-only backend of a closed read.
#[derive(Debug)]
pub(crate) struct ClosedBackend {
    refs: Vec<(String, Vec<u8>)>,
    /// The fingerprint of the engine's log at the close read.
    print: Vec<u8>,
    /// Newest first, so a later copy of an object (a repaired one) is found first.
    packs: Vec<ClosedPack>,
}

impl ClosedBackend {
    /// The store at `dir` as `cached` records it, or `None` if its packs are no longer as
    /// recorded (one is gone or shorter) or a pack's unindexed tail is too long to read.
    pub(crate) fn open(dir: &Path, cached: CachedRefs) -> Option<ClosedBackend> {
        let mut packs = Vec::with_capacity(cached.packs.len());
        for (no, len) in cached.packs.into_iter().rev() {
            let file = std::fs::File::open(dir.join(PACKS_DIR).join(pack_name(no))).ok()?;
            if file.metadata().ok()?.len() < len {
                return None;
            }
            let map = match usize::try_from(len).ok()? {
                0 => Bytes::new(),
                // SAFETY: packs are only ever appended to (never written in place or
                // truncated; gc removes whole packs, which leaves a map valid), so the first
                // `len` bytes do not change under the map.
                #[allow(unsafe_code)]
                n => Bytes::from_owner(
                    unsafe { memmap2::MmapOptions::new().len(n).map(&file) }.ok()?,
                ),
            };
            let index = PackIndex::open(&index_path(&dir.join(PACKS_DIR), no), no)
                .filter(|ix| ix.covered() <= len);
            let pack = ClosedPack {
                no,
                len,
                map,
                index,
                tail: OnceLock::new(),
            };
            if len.saturating_sub(pack.tail_start()) > MAX_TAIL {
                return None;
            }
            packs.push(pack);
        }
        Some(ClosedBackend {
            refs: cached.refs,
            print: cached.print,
            packs,
        })
    }

    /// The fingerprint of the engine's log at the close this reads.
    pub(crate) fn print(&self) -> &[u8] {
        &self.print
    }

    /// The object bytes of the record at `offset`, a window of the pack's map.
    fn read_record(
        &self,
        pack: &ClosedPack,
        id: &RawId,
        offset: u64,
        len: u32,
    ) -> StoreResult<Bytes> {
        let name = || format!("{PACKS_DIR}/{}", pack_name(pack.no));
        let Some(span) = record_span(offset, len, pack.map.len() as u64) else {
            return Err(StoreError::Damaged {
                id: *id,
                damage: Damage::CutShort {
                    pack: name(),
                    offset,
                    end: pack.len,
                },
            });
        };
        let head = &pack.map[span.start..span.start + RECORD_HEAD as usize];
        // As arrays, not slices: compared in registers, without a call.
        let (at, rest) = head.split_first_chunk::<32>().expect("a record head");
        if at != id || rest[..4] != len.to_be_bytes() {
            return Err(StoreError::Damaged {
                id: *id,
                damage: Damage::OtherId {
                    pack: name(),
                    offset,
                    found: super::hex(&head[..8]),
                },
            });
        }
        Ok(pack.map.slice(span.start + RECORD_HEAD as usize..span.end))
    }
}

impl ObjectStore for ClosedBackend {
    fn get(&self, id: &RawId) -> StoreResult<Option<Bytes>> {
        for pack in &self.packs {
            if let Some((offset, len)) = pack.find(id)? {
                return self.read_record(pack, id, offset, len).map(Some);
            }
        }
        Ok(None)
    }

    fn put(&self, _id: &RawId, _bytes: &[u8]) -> StoreResult<PutOutcome> {
        Err(StoreError::ReadOnly)
    }

    fn contains(&self, id: &RawId) -> StoreResult<bool> {
        for pack in &self.packs {
            if pack.find(id)?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        let mut out = BTreeSet::new();
        for pack in &self.packs {
            pack.ids(prefix, &mut out)?;
        }
        Ok(out.into_iter().collect())
    }

    fn for_each_id(&self, f: &mut dyn FnMut(RawId) -> bool) -> StoreResult<()> {
        for id in self.ids_with_prefix(&[])? {
            if !f(id) {
                break;
            }
        }
        Ok(())
    }

    fn delete(&self, _id: &RawId) -> StoreResult<bool> {
        Err(StoreError::ReadOnly)
    }

    fn flush(&self) -> StoreResult<()> {
        Ok(())
    }
}

impl RefStore for ClosedBackend {
    fn get_ref(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        Ok(self
            .refs
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()
            .map(|i| self.refs[i].1.clone()))
    }

    fn cas_ref(
        &self,
        _name: &str,
        _expected: Option<&[u8]>,
        _new: Option<&[u8]>,
    ) -> StoreResult<Result<(), Option<Vec<u8>>>> {
        Err(StoreError::ReadOnly)
    }

    fn list_refs(&self, prefix: &str) -> StoreResult<Vec<(String, Vec<u8>)>> {
        Ok(self
            .refs
            .iter()
            .filter(|(n, _)| n.starts_with(prefix))
            .cloned()
            .collect())
    }
}

impl Backend for ClosedBackend {
    fn size_on_disk(&self) -> StoreResult<u64> {
        Ok(self.packs.iter().map(|p| p.len).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pack of `records` (id byte, object bytes) after a header, as a closed read sees it, with
    /// no index (all of it is tail).
    fn pack_of(dir: &Path, records: &[(u8, &[u8])]) -> ClosedPack {
        let mut bytes = vec![0u8; HEADER as usize];
        for (id, object) in records {
            bytes.extend_from_slice(&[*id; 32]);
            bytes.extend_from_slice(&(object.len() as u32).to_be_bytes());
            bytes.extend_from_slice(object);
        }
        let path = dir.join("pack");
        std::fs::write(&path, &bytes).unwrap();
        ClosedPack {
            no: 1,
            len: bytes.len() as u64,
            map: Bytes::from(bytes),
            index: None,
            tail: OnceLock::new(),
        }
    }

    #[test]
    fn the_last_copy_in_a_tail_wins_and_absent_ids_are_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let pack = pack_of(dir.path(), &[(7, b"old"), (3, b"x"), (7, b"new")]);
        let head = RECORD_HEAD;
        let third = HEADER + 2 * head + 3 + 1;
        assert_eq!(pack.in_tail(&[7; 32]), Some((third, 3)));
        assert_eq!(pack.in_tail(&[3; 32]), Some((HEADER + head + 3, 1)));
        assert_eq!(pack.in_tail(&[5; 32]), None);
        assert_eq!(pack.in_tail(&[9; 32]), None);
        assert_eq!(pack.in_tail(&[0; 32]), None);
    }

    /// An indexed object reads as its bytes, a window of the pack's map; an absent one as
    /// none; a record found under another id is refused.
    #[test]
    fn a_read_is_a_window_of_the_map() {
        let dir = tempfile::tempdir().unwrap();
        let mut pack = pack_of(dir.path(), &[(7, b"seven"), (3, b"three")]);
        let head = RECORD_HEAD;
        let places = vec![([7; 32], HEADER, 5), ([3; 32], HEADER + head + 5, 5)];
        let ix_path = dir.path().join("pack-00000001.idx");
        std::fs::write(
            &ix_path,
            super::super::pack_index::encode(1, pack.len, places),
        )
        .unwrap();
        pack.index = PackIndex::open(&ix_path, 1);
        assert!(pack.index.is_some());
        let map = pack.map.as_ptr() as usize;
        let rest = ClosedBackend {
            refs: Vec::new(),
            print: Vec::new(),
            packs: vec![pack],
        };
        let seven = rest.get(&[7; 32]).unwrap().unwrap();
        assert_eq!(&seven[..], b"seven");
        assert_eq!(seven.as_ptr() as usize, map + (HEADER + head) as usize);
        assert_eq!(&rest.get(&[3; 32]).unwrap().unwrap()[..], b"three");
        assert!(rest.get(&[5; 32]).unwrap().is_none());
        // The record of 3 named as 7's (an index pointing at the wrong place).
        let wrong = rest.read_record(&rest.packs[0], &[7; 32], HEADER + RECORD_HEAD + 5, 5);
        assert!(matches!(
            wrong,
            Err(StoreError::Damaged {
                damage: Damage::OtherId { .. },
                ..
            })
        ));
    }

    #[test]
    fn a_record_is_read_only_where_it_lies_wholly_inside_the_pack() {
        let head = RECORD_HEAD as usize;
        assert_eq!(record_span(8, 4, 100), Some(8..8 + head + 4));
        assert_eq!(
            record_span(8, 4, (8 + head + 4) as u64),
            Some(8..8 + head + 4)
        );
        assert_eq!(record_span(8, 4, (8 + head + 3) as u64), None);
        assert_eq!(record_span(0, 0, 0), None);
        // Offsets a damaged index could name: past the end, and whose end wraps around.
        assert_eq!(record_span(1 << 40, 1, 100), None);
        assert_eq!(record_span(u64::MAX - 10, 4, u64::MAX), None);
        assert_eq!(record_span(u64::MAX, u32::MAX, 100), None);
    }
}
