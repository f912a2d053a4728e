//! Object ids: BLAKE3 of the object's bytes, domain-separated by object kind.

use std::fmt;
use std::str::FromStr;

use super::Kind;

/// The id of a stored object: 32 bytes of BLAKE3 in key-derivation mode, with a context
/// string per object kind, over the object's canonical bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId([u8; 32]);

impl ObjectId {
    /// Length of an id in bytes.
    pub const LEN: usize = 32;

    /// The id of `bytes` as an object of `kind`.
    pub fn of(kind: Kind, bytes: &[u8]) -> ObjectId {
        use blake3::hazmat::HasherExt;
        let mut h = blake3::Hasher::new_from_context_key(context_key(kind));
        h.update(bytes);
        ObjectId(*h.finalize().as_bytes())
    }

    /// Wraps raw bytes (no check: any 32 bytes are a well-formed id).
    pub const fn from_bytes(b: [u8; 32]) -> ObjectId {
        ObjectId(b)
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Lower-case hex, 64 characters.
    pub fn to_hex(&self) -> String {
        to_hex(&self.0)
    }

    /// The first `n` hex digits (for short display).
    pub fn short(&self, n: usize) -> String {
        let mut s = self.to_hex();
        s.truncate(n.min(64));
        s
    }
}

/// The key BLAKE3's key-derivation mode derives from `kind`'s context string, derived once
/// per process: deriving it hashes the context, which for a small record costs about as
/// much as hashing the record itself, and every object read re-hashes its bytes.
fn context_key(kind: Kind) -> &'static blake3::hazmat::ContextKey {
    use blake3::hazmat::hash_derive_key_context;
    use std::sync::LazyLock;
    static KEYS: LazyLock<[blake3::hazmat::ContextKey; 3]> = LazyLock::new(|| {
        [Kind::Node, Kind::Blob, Kind::Commit].map(|k| hash_derive_key_context(k.context()))
    });
    &KEYS[match kind {
        Kind::Node => 0,
        Kind::Blob => 1,
        Kind::Commit => 2,
    }]
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Lower-case hex of any bytes.
pub fn to_hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// Bytes of a hex text (either case, even length); `None` for anything else.
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    let nibbles = hex_nibbles(text)?;
    if nibbles.len() % 2 != 0 {
        return None;
    }
    Some(nibbles.chunks_exact(2).map(|p| p[0] << 4 | p[1]).collect())
}

/// Decodes hex digits (either case) to nibbles; `None` on any other character.
pub(crate) fn hex_nibbles(s: &str) -> Option<Vec<u8>> {
    s.bytes()
        .map(|c| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        })
        .collect()
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectId({})", self.short(12))
    }
}

/// Why a string is not a full object id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an object id (64 hex digits): {0:?}")]
pub struct ParseIdError(pub String);

impl FromStr for ObjectId {
    type Err = ParseIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let n = hex_nibbles(s).filter(|n| n.len() == 64);
        let n = n.ok_or_else(|| ParseIdError(s.to_string()))?;
        let mut b = [0u8; 32];
        for (i, pair) in n.chunks(2).enumerate() {
            b[i] = pair[0] << 4 | pair[1];
        }
        Ok(ObjectId(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        let id = ObjectId::of(Kind::Blob, b"hello");
        let s = id.to_hex();
        assert_eq!(s.len(), 64);
        assert_eq!(s.parse::<ObjectId>().unwrap(), id);
        assert_eq!(s.to_uppercase().parse::<ObjectId>().unwrap(), id);
        assert!("xyz".parse::<ObjectId>().is_err());
        assert!(s[..63].parse::<ObjectId>().is_err());
    }

    #[test]
    fn kinds_separate_domains() {
        assert_ne!(
            ObjectId::of(Kind::Blob, b"x"),
            ObjectId::of(Kind::Node, b"x")
        );
    }
}
