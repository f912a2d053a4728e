//! Object bytes that can be held and shared without copying them: a buffer of their own, or
//! the place they lie in a mapped pack, kept mapped for as long as any holder needs them.

use std::sync::Arc;

/// Object bytes held by reference count. A tree node decoded from a store at rest keeps its
/// bytes this way, so its keys are windows into the pack's map instead of into a copy.
#[derive(Clone)]
pub struct SharedBytes(Arc<Held>);

enum Held {
    Owned(Vec<u8>),
    /// `len` bytes at `start` of a map. Maps are of packs, which are only appended to and
    /// removed whole, so the bytes do not change under it.
    Mapped {
        map: Arc<memmap2::Mmap>,
        start: usize,
        len: usize,
    },
}

impl SharedBytes {
    /// `len` bytes at `start` of `map` (the caller checked the bounds).
    pub(crate) fn mapped(map: &Arc<memmap2::Mmap>, start: usize, len: usize) -> SharedBytes {
        debug_assert!(start + len <= map.len());
        SharedBytes(Arc::new(Held::Mapped {
            map: map.clone(),
            start,
            len,
        }))
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match &*self.0 {
            Held::Owned(v) => v,
            Held::Mapped { map, start, len } => &map[*start..*start + *len],
        }
    }
}

impl From<Vec<u8>> for SharedBytes {
    fn from(v: Vec<u8>) -> Self {
        SharedBytes(Arc::new(Held::Owned(v)))
    }
}

impl std::ops::Deref for SharedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl std::fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match &*self.0 {
            Held::Owned(_) => "owned",
            Held::Mapped { .. } => "mapped",
        };
        write!(f, "SharedBytes({} bytes, {how})", self.as_slice().len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_and_mapped_bytes_read_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        #[allow(unsafe_code)]
        // SAFETY: the file is not changed while mapped.
        let map = Arc::new(unsafe { memmap2::Mmap::map(&file) }.unwrap());
        let lent = SharedBytes::mapped(&map, 2, 5);
        drop(map);
        // The window keeps the map alive.
        assert_eq!(lent.as_slice(), b"23456");
        let own = SharedBytes::from(b"23456".to_vec());
        assert_eq!(&*own, &*lent.clone());
        assert_eq!(format!("{lent:?}"), "SharedBytes(5 bytes, mapped)");
        assert_eq!(format!("{own:?}"), "SharedBytes(5 bytes, owned)");
    }
}
