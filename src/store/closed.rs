//! A closed read: a store read as of its last close, from the refs and pack lengths that
//! close recorded (the head cache file), and objects found as an opened store finds them
//! (the object index, read up to those lengths), without opening the database or taking
//! the LOCK.
//!
//! What it shows is the store exactly as of that close: refs come from the record, and every
//! object they reach sits in the packs before the recorded lengths, which appends never
//! change. The one thing that can change under a reader is garbage collection deleting a
//! pack; the read then fails (a missing pack, an object not found) and the caller reads again
//! with the store opened. Nothing is written: every write is [`StoreError::ReadOnly`].

use std::path::Path;

use super::head_cache::CachedRefs;
use super::object_index::ObjectIndex;
use super::packs::{Packs, PACKS_DIR};
use super::{Backend, Bytes, ObjectStore, PutOutcome, RawId, RefStore, StoreError, StoreResult};

/// The read-only backend of a closed read.
pub(crate) struct ClosedBackend {
    refs: Vec<(String, Vec<u8>)>,
    /// The fingerprint of the engine's log at the close read.
    print: Vec<u8>,
    /// Where each object is, as of that close (boxed: most of the backend's size).
    index: Box<ObjectIndex>,
    /// The packs, read up to their recorded lengths.
    packs: Box<Packs>,
    /// The packs' recorded lengths together.
    size: u64,
}

impl std::fmt::Debug for ClosedBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClosedBackend").finish_non_exhaustive()
    }
}

impl ClosedBackend {
    /// The store at `dir` as `cached` records it, or `None` if its packs are no longer as
    /// recorded (one is gone or shorter) or a pack's unindexed tail is too long to read.
    pub(crate) fn open(dir: &Path, cached: CachedRefs) -> Option<ClosedBackend> {
        let packs_dir = dir.join(PACKS_DIR);
        let index = Box::new(ObjectIndex::open_closed(&packs_dir, &cached.packs)?);
        let packs = Box::new(Packs::open_closed(&packs_dir, &cached.packs).ok()?);
        Some(ClosedBackend {
            refs: cached.refs,
            print: cached.print,
            index,
            packs,
            size: cached.packs.iter().map(|(_, len)| len).sum(),
        })
    }

    /// The fingerprint of the engine's log at the close this reads.
    pub(crate) fn print(&self) -> &[u8] {
        &self.print
    }
}

impl ObjectStore for ClosedBackend {
    fn get(&self, id: &RawId) -> StoreResult<Option<Bytes>> {
        let Some(loc) = self.index.find(id) else {
            return Ok(None);
        };
        match self.packs.read(id, loc)? {
            Ok(bytes) => Ok(Some(bytes)),
            Err(damage) => Err(StoreError::Damaged { id: *id, damage }),
        }
    }

    fn put(&self, _id: &RawId, _bytes: &[u8]) -> StoreResult<PutOutcome> {
        Err(StoreError::ReadOnly)
    }

    fn contains(&self, id: &RawId) -> StoreResult<bool> {
        Ok(self.index.find(id).is_some())
    }

    fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        self.index.ids_with_prefix(prefix)
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
        Ok(self.size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::pack_index::{encode, index_path};
    use crate::store::packs::{pack_name, HEADER, RECORD_HEAD};

    /// Writes pack 1 of `records` (id byte, object bytes) in `dir`; returns its length.
    fn pack_of(dir: &Path, records: &[(u8, &[u8])]) -> u64 {
        let mut bytes = b"MEMPACK1".to_vec();
        for (id, object) in records {
            bytes.extend_from_slice(&[*id; 32]);
            bytes.extend_from_slice(&(object.len() as u32).to_be_bytes());
            bytes.extend_from_slice(object);
        }
        std::fs::write(dir.join(pack_name(1)), &bytes).unwrap();
        bytes.len() as u64
    }

    fn closed(store: &Path, len: u64) -> ClosedBackend {
        let cached = CachedRefs {
            refs: Vec::new(),
            packs: vec![(1, len)],
            print: Vec::new(),
        };
        ClosedBackend::open(store, cached).expect("a closed read")
    }

    /// Objects are found through the index file and the tail after it, the last copy in a
    /// tail winning; nothing past the recorded length is found; a pack shorter than
    /// recorded is no closed read.
    #[test]
    fn a_closed_read_sees_the_packs_as_recorded() {
        let store = tempfile::tempdir().unwrap();
        let dir = store.path().join(PACKS_DIR);
        std::fs::create_dir(&dir).unwrap();
        let head = RECORD_HEAD;
        let len = pack_of(
            &dir,
            &[(7, b"seven"), (3, b"three"), (7, b"again"), (5, b"late")],
        );
        let indexed = vec![([7; 32], HEADER, 5)];
        std::fs::write(index_path(&dir, 1), encode(1, HEADER + head + 5, indexed)).unwrap();
        let recorded = len - (head + 4);
        let c = closed(store.path(), recorded);
        assert_eq!(&c.get(&[7; 32]).unwrap().unwrap()[..], b"again");
        assert_eq!(&c.get(&[3; 32]).unwrap().unwrap()[..], b"three");
        assert!(
            c.get(&[5; 32]).unwrap().is_none(),
            "past the recorded length"
        );
        assert_eq!(c.ids_with_prefix(&[]).unwrap(), vec![[3; 32], [7; 32]]);
        let cached = CachedRefs {
            refs: Vec::new(),
            packs: vec![(1, len + 1)],
            print: Vec::new(),
        };
        assert!(ClosedBackend::open(store.path(), cached).is_none());
    }
}
