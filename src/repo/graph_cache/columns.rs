//! The commit graph's columns, read in place: each column is a run of fixed-size
//! little-endian records in the file image (memory-mapped when loaded from a file), followed
//! by the records appended since in memory. Loading a graph of thousands of commits then
//! copies nothing: a command that asks about a few commits touches only their pages.

use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

use crate::object::ObjectId;

/// The bytes of a graph file, mapped or owned.
#[derive(Debug)]
pub(super) enum Image {
    /// A cache file mapped read-only.
    Mapped(memmap2::Mmap),
    /// Bytes handed over in memory.
    Owned(Box<[u8]>),
}

impl Deref for Image {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Image::Mapped(m) => m,
            Image::Owned(b) => b,
        }
    }
}

impl Image {
    /// Maps the file at `path`; `None` when it cannot be opened or mapped (an empty file
    /// cannot be mapped, and is no graph either).
    pub(super) fn map(path: &Path) -> Option<Image> {
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: cache files are only ever replaced by renaming a new file over them, never
        // written in place or truncated, so the mapped bytes do not change under the map.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        Some(Image::Mapped(map))
    }
}

/// A record of fixed size in a column.
pub(super) trait Fixed: Copy + PartialEq {
    /// Its size in bytes.
    const SIZE: usize;
    /// Reads one from exactly [`Fixed::SIZE`] bytes.
    fn decode(b: &[u8]) -> Self;
    /// Appends its bytes.
    fn encode(&self, out: &mut Vec<u8>);
}

impl Fixed for ObjectId {
    const SIZE: usize = 32;
    fn decode(b: &[u8]) -> Self {
        ObjectId::from_bytes(b.try_into().unwrap_or_default())
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
    }
}

macro_rules! fixed_int {
    ($t:ty) => {
        impl Fixed for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn decode(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().unwrap_or_default())
            }
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    };
}
fixed_int!(u32);
fixed_int!(u64);
fixed_int!(i64);

/// A column: `in_image` records read from the image at `start`, then `tail` in memory.
#[derive(Debug, Clone)]
pub(super) struct Column<T> {
    image: Option<Arc<Image>>,
    start: usize,
    in_image: usize,
    tail: Vec<T>,
}

impl<T: Fixed> Default for Column<T> {
    fn default() -> Self {
        Column {
            image: None,
            start: 0,
            in_image: 0,
            tail: Vec::new(),
        }
    }
}

impl<T: Fixed> Column<T> {
    /// The `count` records at byte `start` of `image` (which must hold them).
    pub(super) fn from_image(image: &Arc<Image>, start: usize, count: usize) -> Self {
        debug_assert!(start + count * T::SIZE <= image.len());
        Column {
            image: Some(image.clone()),
            start,
            in_image: count,
            tail: Vec::new(),
        }
    }

    /// Number of records.
    pub(super) fn len(&self) -> usize {
        self.in_image + self.tail.len()
    }

    /// Record `i` (which must exist).
    #[inline]
    pub(super) fn get(&self, i: usize) -> T {
        if i < self.in_image {
            let image = self
                .image
                .as_deref()
                .expect("a column with records in the image has one");
            let at = self.start + i * T::SIZE;
            T::decode(&image[at..at + T::SIZE])
        } else {
            self.tail[i - self.in_image]
        }
    }

    /// The bytes of the records in the image.
    pub(super) fn image(&self) -> &[u8] {
        match &self.image {
            Some(image) => &image[self.start..self.start + self.in_image * T::SIZE],
            None => &[],
        }
    }

    /// Appends a record.
    pub(super) fn push(&mut self, v: T) {
        self.tail.push(v);
    }

    /// Appends records.
    pub(super) fn extend(&mut self, vs: impl IntoIterator<Item = T>) {
        self.tail.extend(vs);
    }

    /// Replaces record `i`. A record in the image is first copied out with every other one,
    /// so the image is never written.
    pub(super) fn set(&mut self, i: usize, v: T) {
        if i < self.in_image {
            self.thaw();
        }
        let at = i - self.in_image;
        self.tail[at] = v;
    }

    /// Moves the records in the image into memory.
    fn thaw(&mut self) {
        let mut all = Vec::with_capacity(self.len());
        all.extend(self.iter());
        *self = Column {
            image: None,
            start: 0,
            in_image: 0,
            tail: all,
        };
    }

    /// Every record in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Appends every record's bytes (those in the image copied as they are).
    pub(super) fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.image());
        for v in &self.tail {
            v.encode(out);
        }
    }
}

impl<T: Fixed> PartialEq for Column<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}
