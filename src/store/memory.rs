//! In-memory backend: ordered maps behind read-write locks. For tests and benches; nothing
//! survives the process.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::RwLock;

use super::{
    read_locked, write_locked, Backend, Bytes, ObjectStore, PutOutcome, RawId, RefStore,
    StoreResult,
};

/// A backend that keeps objects and refs in memory.
///
/// Behaves exactly like the on-disk backend (same ordering, same dedup and repair rules, same
/// compare-and-swap semantics), so upper layers can be tested without touching the disk.
#[derive(Debug, Default)]
pub struct MemoryBackend {
    objects: RwLock<BTreeMap<MemKey, Bytes>>,
    refs: RwLock<BTreeMap<String, Vec<u8>>>,
}

/// An id as four big-endian words: ordered exactly like the id's bytes, but compared with
/// four integer comparisons instead of a call to `memcmp` (the map is searched on every put).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct MemKey([u64; 4]);

impl MemKey {
    fn of(id: &RawId) -> MemKey {
        let w = |i: usize| u64::from_be_bytes(id[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        MemKey([w(0), w(1), w(2), w(3)])
    }

    fn id(&self) -> RawId {
        let mut id = [0u8; 32];
        for (i, w) in self.0.iter().enumerate() {
            id[i * 8..i * 8 + 8].copy_from_slice(&w.to_be_bytes());
        }
        id
    }
}

/// Store `bytes` under `id` in `map`, with the dedup-or-repair rule of [`ObjectStore::put`].
fn put_into(map: &mut BTreeMap<MemKey, Bytes>, id: &RawId, bytes: &[u8]) -> PutOutcome {
    // One descent of the map whether the id is new or not.
    match map.entry(MemKey::of(id)) {
        Entry::Occupied(mut e) => {
            let stored = e.get_mut();
            if stored[..] == *bytes {
                PutOutcome::Existing
            } else {
                *stored = Bytes::copy_from_slice(bytes);
                PutOutcome::Repaired
            }
        }
        Entry::Vacant(e) => {
            e.insert(Bytes::copy_from_slice(bytes));
            PutOutcome::Written
        }
    }
}

impl MemoryBackend {
    /// An empty in-memory backend.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the stored bytes of `id` without verification (inserting them if `id` is
    /// absent), to simulate a damaged copy (feature `testing`).
    #[cfg(any(test, feature = "testing"))]
    pub fn overwrite_raw(&self, id: &RawId, bytes: &[u8]) {
        write_locked(&self.objects).insert(MemKey::of(id), Bytes::copy_from_slice(bytes));
    }
}

impl ObjectStore for MemoryBackend {
    fn get(&self, id: &RawId) -> StoreResult<Option<Bytes>> {
        Ok(read_locked(&self.objects).get(&MemKey::of(id)).cloned())
    }

    fn put(&self, id: &RawId, bytes: &[u8]) -> StoreResult<PutOutcome> {
        Ok(put_into(&mut write_locked(&self.objects), id, bytes))
    }

    /// All objects are stored under one write lock, so readers see all or none of them.
    fn put_many(&self, objects: &[(RawId, Vec<u8>)]) -> StoreResult<Vec<PutOutcome>> {
        let mut map = write_locked(&self.objects);
        Ok(objects
            .iter()
            .map(|(id, bytes)| put_into(&mut map, id, bytes))
            .collect())
    }

    fn contains(&self, id: &RawId) -> StoreResult<bool> {
        Ok(read_locked(&self.objects).contains_key(&MemKey::of(id)))
    }

    fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        if prefix.len() > 32 {
            return Ok(Vec::new());
        }
        // The smallest id with this prefix is the prefix padded with zero bytes.
        let mut start = [0u8; 32];
        start[..prefix.len()].copy_from_slice(prefix);
        Ok(read_locked(&self.objects)
            .range(MemKey::of(&start)..)
            .map(|(k, _)| k.id())
            .take_while(|id| id.starts_with(prefix))
            .collect())
    }

    fn delete(&self, id: &RawId) -> StoreResult<bool> {
        Ok(write_locked(&self.objects)
            .remove(&MemKey::of(id))
            .is_some())
    }

    /// Nothing to do: memory is never durable.
    fn flush(&self) -> StoreResult<()> {
        Ok(())
    }
}

impl RefStore for MemoryBackend {
    fn get_ref(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        Ok(read_locked(&self.refs).get(name).cloned())
    }

    fn cas_ref(
        &self,
        name: &str,
        expected: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> StoreResult<Result<(), Option<Vec<u8>>>> {
        let mut refs = write_locked(&self.refs);
        let current = refs.get(name);
        if current.map(Vec::as_slice) != expected {
            return Ok(Err(current.cloned()));
        }
        match new {
            Some(value) => {
                refs.insert(name.to_owned(), value.to_vec());
            }
            None => {
                refs.remove(name);
            }
        }
        Ok(Ok(()))
    }

    fn list_refs(&self, prefix: &str) -> StoreResult<Vec<(String, Vec<u8>)>> {
        Ok(read_locked(&self.refs)
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .take_while(|(name, _)| name.starts_with(prefix))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect())
    }
}

impl Backend for MemoryBackend {
    fn size_on_disk(&self) -> StoreResult<u64> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(b: u8) -> RawId {
        let mut id = [0u8; 32];
        id[0] = b;
        id
    }

    #[test]
    fn put_dedups_and_repairs() {
        let m = MemoryBackend::new();
        assert_eq!(m.put(&id(1), b"a").unwrap(), PutOutcome::Written);
        assert_eq!(m.put(&id(1), b"a").unwrap(), PutOutcome::Existing);
        m.overwrite_raw(&id(1), b"damaged");
        assert_eq!(m.get(&id(1)).unwrap().as_deref(), Some(&b"damaged"[..]));
        assert_eq!(m.put(&id(1), b"a").unwrap(), PutOutcome::Repaired);
        assert_eq!(m.get(&id(1)).unwrap().as_deref(), Some(&b"a"[..]));
    }

    #[test]
    fn put_many_sees_its_own_earlier_entries() {
        let m = MemoryBackend::new();
        let out = m
            .put_many(&[
                (id(1), b"a".to_vec()),
                (id(1), b"a".to_vec()),
                (id(1), b"b".to_vec()),
            ])
            .unwrap();
        assert_eq!(
            out,
            vec![
                PutOutcome::Written,
                PutOutcome::Existing,
                PutOutcome::Repaired
            ]
        );
    }

    #[test]
    fn prefix_edge_cases() {
        let m = MemoryBackend::new();
        m.put(&[0xff; 32], b"x").unwrap();
        m.put(&id(0), b"y").unwrap();
        assert_eq!(m.ids_with_prefix(&[]).unwrap(), vec![id(0), [0xff; 32]]);
        assert_eq!(m.ids_with_prefix(&[0xff; 32]).unwrap(), vec![[0xff; 32]]);
        assert!(m.ids_with_prefix(&[0xff; 33]).unwrap().is_empty());
    }

    #[test]
    fn for_each_id_allows_reentrant_writes() {
        let m = MemoryBackend::new();
        m.put(&id(1), b"a").unwrap();
        m.for_each_id(&mut |i| {
            m.delete(&i).unwrap();
            true
        })
        .unwrap();
        assert!(!m.contains(&id(1)).unwrap());
    }
}
