//! The content-defined chunking rule: where one node ends and the next begins.
//!
//! After each item is appended to the node being built, a boundary falls there when
//! `hash32(item key, level) < threshold(size before, size after)`. The threshold is
//! `2^32 * ((after/T)^4 - (before/T)^4)` (saturating): the chance of ending a node rises with
//! its size like a Weibull distribution of shape 4 and scale `T`, so sizes cluster near the
//! target instead of being geometric. Nodes never end below `MIN_NODE` bytes and always end
//! before one more item could pass `MAX_NODE`. The hash covers only the item's key (the last
//! key for internal items), never its value, and is salted by level, so a value edit never
//! moves a boundary and levels chunk independently. All arithmetic is integer: the format does
//! not depend on floating point.

use super::node::{Item, MAX_KEY_BYTES};

/// No boundary before a node's items reach this many bytes.
pub const MIN_NODE: usize = 512;
/// Scale of the size distribution (bytes of items).
pub const TARGET_NODE: usize = 4096;
/// No node's items exceed this many bytes.
pub const MAX_NODE: usize = 16384;
/// Largest possible encoded item (an internal item with two maximal keys and count).
pub const MAX_ITEM_BYTES: usize = 1 + 2 * (MAX_KEY_BYTES + 3) + 34 + 9;

/// The boundary hash: upper 32 bits of XXH3-64 of the key, seeded with the level.
pub fn boundary_hash(key: &[u8], level: u8) -> u32 {
    (xxhash_rust::xxh3::xxh3_64_with_seed(key, level as u64) >> 32) as u32
}

/// Whether a node ends after an item whose key is `key`, the node's items having grown from
/// `before` to `after` bytes.
pub fn is_boundary(key: &[u8], level: u8, before: usize, after: usize) -> bool {
    if after < MIN_NODE {
        return false;
    }
    if after + MAX_ITEM_BYTES > MAX_NODE {
        return true;
    }
    let t4 = (TARGET_NODE as u128).pow(4);
    let delta = (after as u128).pow(4) - (before as u128).pow(4);
    let threshold = (delta << 32) / t4;
    (boundary_hash(key, level) as u128) < threshold
}

/// Accumulates items of one level and says where nodes end.
#[derive(Debug)]
pub struct Chunker {
    level: u8,
    items: Vec<Item>,
    size: usize,
}

impl Chunker {
    /// An empty chunker for `level`.
    pub fn new(level: u8) -> Self {
        Chunker {
            level,
            items: Vec::with_capacity(128),
            size: 0,
        }
    }

    /// Appends an item; returns the finished node's items when a boundary falls after it.
    pub fn push(&mut self, item: Item) -> Option<Vec<Item>> {
        let before = self.size;
        self.size += item.encoded_len(self.level);
        let boundary = is_boundary(item.last_key(), self.level, before, self.size);
        self.items.push(item);
        boundary.then(|| self.take())
    }

    /// Whether nothing is pending (the last push ended a node, or nothing was pushed).
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Takes the pending items (the final, possibly short, node of a level).
    pub fn take(&mut self) -> Vec<Item> {
        self.size = 0;
        // The node keeps these items for as long as it is cached: hand over a right-sized
        // vector, not the chunker's growth buffer.
        let mut items = std::mem::take(&mut self.items);
        items.shrink_to_fit();
        items
    }
}

/// Where the chunking rule puts boundaries in `items` of `level`, as end indexes (exclusive)
/// of each node; a final run without a boundary is included as the last end.
pub fn boundaries(items: &[Item], level: u8) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut size = 0;
    for (i, it) in items.iter().enumerate() {
        let before = size;
        size += it.encoded_len(level);
        if is_boundary(it.last_key(), level, before, size) {
            ends.push(i + 1);
            size = 0;
        }
    }
    if ends.last() != Some(&items.len()) && !items.is_empty() {
        ends.push(items.len());
    }
    ends
}
