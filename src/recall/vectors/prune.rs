//! The vector cache as a derived cache ([`DerivedCache`]): a vector says something of the
//! content it was made from, so garbage collection drops the vectors of values the store no
//! longer has, and fsck names them. The file keys a vector by the first bytes of its
//! value's id, so a vector counts as the store's while the store has an object whose id
//! starts with them.

use std::path::Path;

use super::codec::{self, IdPrefix, Parts};
use super::{vector_path, VectorIndex, VECTOR_FILE};
use crate::store::{remove_cache_file, DerivedCache, StoreResult};

/// The vector cache (`cache/vectors.bin`).
#[derive(Debug, Clone, Copy, Default)]
pub struct VectorCache;

/// How many of the file's vectors are of values `live` rejects, and whether its root is.
fn dead(index: &VectorIndex, live: &dyn Fn(&[u8]) -> bool) -> (usize, bool) {
    let Some(l) = &index.layout else {
        return (0, false);
    };
    let n = (0..l.pool).filter(|&i| !live(&l.id(i))).count();
    (n, l.root.is_some_and(|r| !live(r.as_bytes())))
}

impl DerivedCache for VectorCache {
    fn files(&self) -> &'static [&'static str] {
        &[VECTOR_FILE]
    }

    fn stale(&self, dir: &Path, live: &dyn Fn(&[u8]) -> bool) -> Option<String> {
        let (index, _) = VectorIndex::open_file(&vector_path(dir));
        match dead(&index, live) {
            (0, false) => None,
            (n, _) => Some(format!(
                "holds {n} vector(s) of values the store no longer has; gc drops them"
            )),
        }
    }

    fn prune(&self, dir: &Path, live: &dyn Fn(&[u8]) -> bool) -> StoreResult<Option<String>> {
        let path = vector_path(dir);
        let (index, opened) = VectorIndex::open_file(&path);
        if opened == super::Opened::Damaged {
            remove_cache_file(&path)?;
            return Ok(Some("removed a damaged vector cache".to_string()));
        }
        let (n, root_gone) = dead(&index, live);
        let Some(l) = index.layout.as_ref().filter(|_| n > 0 || root_gone) else {
            return Ok(None);
        };
        // The live vectors, in their order; the root's keys stay listed while the root is
        // there (its values are then there too).
        let keep: Vec<usize> = (0..l.pool).filter(|&i| live(&l.id(i))).collect();
        let mut renumber = vec![u32::MAX; l.pool];
        for (new, &old) in keep.iter().enumerate() {
            renumber[old] = new as u32;
        }
        let slots: Vec<u32> = match root_gone {
            true => Vec::new(),
            false => l.slots().iter().map(|&s| renumber[s as usize]).collect(),
        };
        if slots.contains(&u32::MAX) {
            remove_cache_file(&path)?;
            return Ok(Some(
                "removed a vector cache of values the store lost".into(),
            ));
        }
        let ids: Vec<IdPrefix> = keep.iter().map(|&i| l.id(i)).collect();
        let scales: Vec<crate::embed::F16> = keep.iter().map(|&i| l.scale16(i)).collect();
        let vectors: Vec<i8> = keep.iter().flat_map(|&i| l.vector(i).to_vec()).collect();
        let bytes = codec::write(&Parts {
            model: &l.model,
            dims: l.dims,
            root: if root_gone { None } else { l.root.as_ref() },
            ids: &ids,
            scales: &scales,
            vectors: &vectors,
            slots: &slots,
        });
        crate::store::write_cache_file(&path, &bytes)?;
        Ok(Some(format!("dropped {n} vector(s) of removed values")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::ObjectId;

    #[test]
    fn vectors_of_removed_values_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("cache")).unwrap();
        let id = |n: u8| ObjectId::from_bytes([n; 32]);
        let docs = [(id(1), "apple"), (id(2), "banana")];
        let mut embed = |t: &[&str]| -> Result<Vec<Vec<f32>>, ()> {
            Ok(t.iter().map(|_| vec![1.0, 0.0]).collect())
        };
        let (a, _) = VectorIndex::default()
            .synced("m", &id(9), &docs, &mut embed)
            .unwrap();
        a.save(&vector_path(dir.path())).unwrap();
        let all = |_: &[u8]| true;
        assert_eq!(VectorCache.stale(dir.path(), &all), None);
        assert_eq!(VectorCache.prune(dir.path(), &all).unwrap(), None);
        // The store is asked by the ids' first bytes.
        let no_banana = |r: &[u8]| !id(2).as_bytes().starts_with(r);
        assert!(VectorCache.stale(dir.path(), &no_banana).is_some());
        // Banana's key is listed at a root the store still has: the file cannot keep the
        // root without its vector, and goes.
        assert!(VectorCache.prune(dir.path(), &no_banana).unwrap().is_some());
        assert!(!vector_path(dir.path()).exists());
        a.save(&vector_path(dir.path())).unwrap();
        let no_root =
            |r: &[u8]| !id(9).as_bytes().starts_with(r) && !id(2).as_bytes().starts_with(r);
        assert!(VectorCache.prune(dir.path(), &no_root).unwrap().is_some());
        let (b, _) = VectorIndex::open_file(&vector_path(dir.path()));
        assert_eq!((b.vectors(), b.keys(), b.root()), (1, 0, None));
        assert_eq!(VectorCache.stale(dir.path(), &no_root), None);
    }
}
