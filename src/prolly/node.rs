//! Tree nodes: their items, canonical encoding and sizes.

use crate::object::cbor::{head_len, CborError, Decoder, Encoder};
use crate::object::{decode_object, Kind, Object, ObjectId};
use crate::store::Bytes;

/// The bytes of a key held by a node item.
///
/// A node decoded by [`Node::decode_shared`] keeps its stored bytes once (as the store gives
/// them: possibly a window of a mapped pack) and every key of it is a window into them, so
/// decoding (and later dropping) a node costs no allocation per key and no copy. Keys made
/// elsewhere (edits, tests) own their bytes. Either way it behaves as a `[u8]`: comparisons,
/// ordering and hashing are those of the bytes.
#[derive(Clone, Default)]
pub struct KeyBytes {
    /// The bytes the key lies in; `None` for the empty key.
    buf: Option<Bytes>,
    start: u32,
    len: u32,
}

impl KeyBytes {
    /// A window `start..start + len` of shared bytes (the caller checked the bounds).
    fn window(buf: &Bytes, start: usize, len: usize) -> KeyBytes {
        KeyBytes {
            buf: Some(buf.clone()),
            start: start as u32,
            len: len as u32,
        }
    }

    /// The key's bytes.
    pub fn as_slice(&self) -> &[u8] {
        match &self.buf {
            Some(b) => &b[self.start as usize..(self.start + self.len) as usize],
            None => &[],
        }
    }
}

impl std::ops::Deref for KeyBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for KeyBytes {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl std::borrow::Borrow<[u8]> for KeyBytes {
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

impl From<&[u8]> for KeyBytes {
    fn from(b: &[u8]) -> Self {
        b.to_vec().into()
    }
}

impl From<Vec<u8>> for KeyBytes {
    fn from(v: Vec<u8>) -> Self {
        if v.is_empty() {
            return KeyBytes::default();
        }
        let len = v.len() as u32;
        KeyBytes {
            buf: Some(Bytes::from(v)),
            start: 0,
            len,
        }
    }
}

impl From<Box<[u8]>> for KeyBytes {
    fn from(b: Box<[u8]>) -> Self {
        b.into_vec().into()
    }
}

impl From<KeyBytes> for Box<[u8]> {
    fn from(k: KeyBytes) -> Self {
        k.as_slice().into()
    }
}

impl PartialEq for KeyBytes {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for KeyBytes {}

impl PartialOrd for KeyBytes {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for KeyBytes {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

impl std::hash::Hash for KeyBytes {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}

impl std::fmt::Debug for KeyBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

/// Most bytes of a key the tree accepts (encoded taxonomy keys are far shorter).
pub const MAX_KEY_BYTES: usize = 512;
/// Highest level a node may claim (a tree of 2^64 keys is far lower).
pub const MAX_LEVEL: u64 = 48;

/// One entry of a node. In a leaf: `key -> id` (the value object), `count` 1, `last` empty.
/// In an internal node: the child's first key, last key, id and number of keys below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Leaf key, or first key of the child.
    pub key: KeyBytes,
    /// Last key of the child; empty in leaves.
    pub last: KeyBytes,
    /// Value id (leaf) or child node id.
    pub id: ObjectId,
    /// Keys below (1 in leaves).
    pub count: u64,
}

impl Item {
    /// A leaf item.
    pub fn leaf(key: &[u8], value: ObjectId) -> Item {
        Item {
            key: key.into(),
            last: KeyBytes::default(),
            id: value,
            count: 1,
        }
    }

    /// The last key covered: the child's last key, or the key itself in a leaf.
    pub fn last_key(&self) -> &[u8] {
        if self.last.is_empty() {
            &self.key
        } else {
            &self.last
        }
    }

    /// Bytes this item takes in its node's encoding; the chunking rule measures nodes by it.
    pub fn encoded_len(&self, level: u8) -> usize {
        let bstr = |n: usize| head_len(n as u64) + n;
        if level == 0 {
            1 + bstr(self.key.len()) + bstr(32)
        } else {
            1 + bstr(self.key.len()) + bstr(self.last.len()) + bstr(32) + head_len(self.count)
        }
    }
}

/// A tree node: its level (0 = leaf) and its items in strictly increasing key order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// 0 for leaves; children of a level-n node are at level n-1.
    pub level: u8,
    /// The entries.
    pub items: Vec<Item>,
}

impl Node {
    /// Keys below this node.
    pub fn count(&self) -> u64 {
        self.items.iter().map(|i| i.count).sum()
    }

    /// First key below this node (None when empty).
    pub fn first_key(&self) -> Option<&[u8]> {
        self.items.first().map(|i| &i.key[..])
    }

    /// Last key below this node (None when empty).
    pub fn last_key(&self) -> Option<&[u8]> {
        self.items.last().map(|i| i.last_key())
    }

    /// Sum of the items' encoded sizes (the size the chunking rule bounds).
    pub fn items_len(&self) -> usize {
        self.items.iter().map(|i| i.encoded_len(self.level)).sum()
    }

    /// In a leaf, the value id stored at `key`, if any.
    pub fn leaf_value(&self, key: &[u8]) -> Option<ObjectId> {
        self.items
            .binary_search_by(|it| it.key[..].cmp(key))
            .ok()
            .map(|i| self.items[i].id)
    }

    /// Index of the child whose region holds `key`: the last item with `key_i <= key`, or 0.
    pub fn child_for(&self, key: &[u8]) -> usize {
        self.items
            .partition_point(|i| &i.key[..] <= key)
            .saturating_sub(1)
    }
}

impl Object for Node {
    const KIND: Kind = Kind::Node;

    fn field_count(&self) -> usize {
        2
    }

    fn size_hint(&self) -> usize {
        self.items_len() + 8
    }

    fn encode_fields(&self, e: &mut Encoder) {
        e.u64(self.level as u64);
        e.array(self.items.len());
        for it in &self.items {
            if self.level == 0 {
                e.array(2);
                e.bytes(&it.key);
                e.bytes(it.id.as_bytes());
            } else {
                e.array(4);
                e.bytes(&it.key);
                e.bytes(&it.last);
                e.bytes(it.id.as_bytes());
                e.u64(it.count);
            }
        }
    }

    fn decode_fields(d: &mut Decoder<'_>, n: usize) -> Result<Self, CborError> {
        decode_node(d, n, &mut |k, _| KeyBytes::from(k))
    }
}

impl Node {
    /// Decodes a node's stored bytes exactly as [`Object::decode`] does (same checks, same
    /// errors), keeping the bytes as the one buffer all its keys are windows into.
    pub fn decode_shared(buf: Bytes) -> Result<Node, CborError> {
        decode_object(&buf, Kind::Node, |d, n| {
            decode_node(d, n, &mut |k, end| {
                KeyBytes::window(&buf, end - k.len(), k.len())
            })
        })
    }
}

/// The fields of a node after its kind tag; `key` makes an item key from its bytes and the
/// position where they end in the input.
fn decode_node(
    d: &mut Decoder<'_>,
    n: usize,
    key: &mut dyn FnMut(&[u8], usize) -> KeyBytes,
) -> Result<Node, CborError> {
    let bad = |at, expected| CborError::Unexpected { expected, at };
    if n != 2 {
        return Err(bad(d.position(), "node with two fields"));
    }
    let at = d.position();
    let level = d.u64()?;
    if level > MAX_LEVEL {
        return Err(bad(at, "node level within bounds"));
    }
    let level = level as u8;
    let len = d.array()?;
    let mut items = Vec::with_capacity(len);
    let mut read_key = |d: &mut Decoder<'_>| -> Result<KeyBytes, CborError> {
        let at = d.position();
        let k = d.bytes()?;
        if k.is_empty() || k.len() > MAX_KEY_BYTES {
            return Err(bad(at, "key of 1..=512 bytes"));
        }
        Ok(key(k, d.position()))
    };
    for _ in 0..len {
        if level == 0 {
            d.array_of(2)?;
            let k = read_key(d)?;
            let id = ObjectId::from_bytes(d.bytes_fixed::<32>()?);
            items.push(Item {
                key: k,
                last: KeyBytes::default(),
                id,
                count: 1,
            });
        } else {
            d.array_of(4)?;
            let k = read_key(d)?;
            let last = read_key(d)?;
            let id = ObjectId::from_bytes(d.bytes_fixed::<32>()?);
            let at = d.position();
            let count = d.u64()?;
            if count == 0 {
                return Err(bad(at, "non-zero subtree count"));
            }
            items.push(Item {
                key: k,
                last,
                id,
                count,
            });
        }
    }
    Ok(Node { level, items })
}
