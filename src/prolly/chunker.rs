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
use crate::object::cbor::{write_head, MAJOR_ARRAY, MAJOR_BYTES, MAJOR_UINT};
use crate::object::{Kind, ObjectId};

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

/// A borrowed item to be chunked: from a cached node, an edit or the caller's entries, so
/// feeding the chunker allocates nothing per item.
#[derive(Debug, Clone, Copy)]
pub struct ItemRef<'a> {
    /// Leaf key, or first key of the child.
    pub key: &'a [u8],
    /// Last key of the child; empty in leaves.
    pub last: &'a [u8],
    /// Value id (leaf) or child node id.
    pub id: &'a ObjectId,
    /// Keys below (1 in leaves).
    pub count: u64,
}

impl<'a> ItemRef<'a> {
    /// A leaf item.
    pub fn leaf(key: &'a [u8], id: &'a ObjectId) -> Self {
        ItemRef {
            key,
            last: &[],
            id,
            count: 1,
        }
    }

    /// The last key covered (the key itself in a leaf).
    pub fn last_key(&self) -> &'a [u8] {
        if self.last.is_empty() {
            self.key
        } else {
            self.last
        }
    }
}

impl<'a> From<&'a Item> for ItemRef<'a> {
    fn from(it: &'a Item) -> Self {
        ItemRef {
            key: &it.key,
            last: &it.last,
            id: &it.id,
            count: it.count,
        }
    }
}

/// A node the [`NodeChunker`] finished: its canonical bytes, id, and the item that points at
/// it from the level above.
#[derive(Debug)]
pub struct MadeNode {
    /// The node's id (BLAKE3 of `bytes` under the node context).
    pub id: ObjectId,
    /// The node object's canonical bytes.
    pub bytes: Vec<u8>,
    /// The parent's item for this node: first key, last key, id, key count.
    pub item: Item,
}

/// Room kept in front of the items for the node's heads: array(3), kind, level (up to 2
/// bytes), array(items) (up to 3 bytes: a node holds fewer than 2^16 items).
const HEAD_ROOM: usize = 8;

/// Appends a CBOR byte string; returns where its content lies in `buf`.
fn push_bytes(buf: &mut Vec<u8>, b: &[u8]) -> std::ops::Range<usize> {
    write_head(buf, MAJOR_BYTES, b.len() as u64);
    let start = buf.len();
    buf.extend_from_slice(b);
    start..buf.len()
}

/// The chunking rule applied while encoding: items are appended, already in their node
/// encoding (section 6 of the format), to one buffer; when a boundary falls the node's heads
/// are written in front, the bytes hashed once, and the parent item made from the buffer.
/// Gives exactly the nodes (bytes and ids) that [`Chunker`] and [`Node`](super::node::Node)'s encoding give.
#[derive(Debug)]
pub struct NodeChunker {
    level: u8,
    buf: Vec<u8>,
    items: usize,
    count: u64,
    first: std::ops::Range<usize>,
    last: std::ops::Range<usize>,
}

impl NodeChunker {
    /// An empty chunker for `level`.
    pub fn new(level: u8) -> Self {
        let mut buf = Vec::with_capacity(HEAD_ROOM + MAX_NODE);
        buf.resize(HEAD_ROOM, 0);
        NodeChunker {
            level,
            buf,
            items: 0,
            count: 0,
            first: 0..0,
            last: 0..0,
        }
    }

    /// The level this chunker builds.
    pub fn level(&self) -> u8 {
        self.level
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// Appends an item; returns the finished node when a boundary falls after it.
    pub fn push(&mut self, it: ItemRef<'_>) -> Option<MadeNode> {
        let before = self.buf.len() - HEAD_ROOM;
        let buf = &mut self.buf;
        let (key, last);
        if self.level == 0 {
            write_head(buf, MAJOR_ARRAY, 2);
            key = push_bytes(buf, it.key);
            last = key.clone();
        } else {
            write_head(buf, MAJOR_ARRAY, 4);
            key = push_bytes(buf, it.key);
            last = push_bytes(buf, it.last_key());
        }
        push_bytes(buf, it.id.as_bytes());
        if self.level > 0 {
            write_head(buf, MAJOR_UINT, it.count);
        }
        let after = buf.len() - HEAD_ROOM;
        if self.items == 0 {
            self.first = key;
        }
        self.last = last;
        self.items += 1;
        self.count += it.count;
        is_boundary(it.last_key(), self.level, before, after).then(|| self.finish())
    }

    /// Ends the pending node (the last, possibly short, node of a level).
    ///
    /// # Panics
    /// If nothing is pending.
    pub fn finish(&mut self) -> MadeNode {
        assert!(self.items > 0, "finishing an empty node");
        let mut head = Vec::with_capacity(HEAD_ROOM);
        write_head(&mut head, MAJOR_ARRAY, 3);
        write_head(&mut head, MAJOR_UINT, Kind::Node as u64);
        write_head(&mut head, MAJOR_UINT, self.level as u64);
        write_head(&mut head, MAJOR_ARRAY, self.items as u64);
        let start = HEAD_ROOM - head.len();
        self.buf[start..HEAD_ROOM].copy_from_slice(&head);
        let bytes = self.buf[start..].to_vec();
        let id = ObjectId::of(Kind::Node, &bytes);
        let item = Item {
            key: self.buf[self.first.clone()].into(),
            last: self.buf[self.last.clone()].into(),
            id,
            count: self.count,
        };
        self.buf.truncate(HEAD_ROOM);
        self.items = 0;
        self.count = 0;
        MadeNode { id, bytes, item }
    }
}
