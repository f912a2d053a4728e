//! Taxonomy keys: `(namespace, path)`, their validation, and their ordered byte encoding.
//!
//! The encoding is `namespace 0x00 seg1 0x01 seg2 0x01 ... segN`. Valid names contain no
//! byte below 0x20, so plain byte order of encodings is tuple order
//! `(namespace, seg1, seg2, ...)`, and every group of keys that share a namespace and their
//! first N segments is one contiguous run of the tree.

use std::fmt;

/// Namespace used when none is given.
pub const DEFAULT_NAMESPACE: &str = "default";
/// Most segments a path may have.
pub const MAX_SEGMENTS: usize = 8;
/// Most bytes (UTF-8) in one segment.
pub const MAX_SEGMENT_BYTES: usize = 64;
/// Most bytes in a whole path, dots included.
pub const MAX_PATH_BYTES: usize = 256;
/// Most bytes in a namespace.
pub const MAX_NAMESPACE_BYTES: usize = 64;
/// Most bytes of an encoded key.
pub const MAX_ENCODED_BYTES: usize = MAX_NAMESPACE_BYTES + 1 + MAX_PATH_BYTES;

const NS_END: u8 = 0x00;
const SEG_SEP: u8 = 0x01;

/// Why a key, path or namespace was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The path is empty.
    #[error("invalid key {0:?}: the path is empty")]
    EmptyPath(String),
    /// A segment is empty (leading, trailing or doubled dot).
    #[error("invalid key {0:?}: empty segment (leading, trailing or doubled '.')")]
    EmptySegment(String),
    /// More than [`MAX_SEGMENTS`] segments.
    #[error("invalid key {0:?}: more than {MAX_SEGMENTS} segments")]
    TooDeep(String),
    /// A segment or the whole path is too long.
    #[error("invalid key {0:?}: longer than {MAX_SEGMENT_BYTES} bytes per segment or {MAX_PATH_BYTES} bytes in all")]
    TooLong(String),
    /// A character that keys may not contain.
    #[error("invalid key {key:?}: character {ch:?} is not allowed ({why})")]
    BadChar {
        /// The offending key.
        key: String,
        /// The offending character.
        ch: char,
        /// The rule it breaks.
        why: &'static str,
    },
    /// The namespace is invalid.
    #[error("invalid namespace {ns:?}: {why}")]
    BadNamespace {
        /// The offending namespace.
        ns: String,
        /// The rule it breaks.
        why: String,
    },
    /// Bytes that are not an encoded key.
    #[error("not an encoded key")]
    BadEncoding,
}

/// Why a character may not appear in a name, if it may not.
fn forbidden(ch: char, in_namespace: bool) -> Option<&'static str> {
    if ch.is_control() {
        return Some("control character");
    }
    if ch.is_whitespace() {
        return Some("whitespace");
    }
    match ch {
        '.' if !in_namespace => Some("'.' separates segments"),
        ':' if !in_namespace => Some("':' separates the namespace from the path"),
        '*' | '?' | '[' | ']' | '{' | '}' | '\\' => Some("glob metacharacter"),
        // Invisible format characters: zero-width, bidirectional controls, BOM.
        '\u{00AD}'
        | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{FEFF}'
        | '\u{FFF9}'..='\u{FFFB}' => Some("invisible formatting character"),
        _ => None,
    }
}

/// Whether an ASCII byte may appear in a namespace (and, except `.` and `:`, in a path):
/// printable, not a space, not a glob metacharacter. Bytes of 0x80 and above are not
/// judged here.
fn ascii_name_byte(b: u8) -> bool {
    (0x21..=0x7e).contains(&b) && !matches!(b, b'*' | b'?' | b'[' | b']' | b'{' | b'}' | b'\\')
}

/// Checks a namespace: 1..=64 bytes of printable characters without whitespace or glob
/// characters; `:` and `.` allowed inside, not at either end.
pub fn validate_namespace(ns: &str) -> Result<(), KeyError> {
    let bad = |why: String| KeyError::BadNamespace {
        ns: ns.to_string(),
        why,
    };
    if ns.is_empty() {
        return Err(bad("empty".into()));
    }
    if ns.len() > MAX_NAMESPACE_BYTES {
        return Err(bad(format!("longer than {MAX_NAMESPACE_BYTES} bytes")));
    }
    if let Some(ch) = ns.chars().find(|&c| forbidden(c, true).is_some()) {
        let why = forbidden(ch, true).unwrap_or_default();
        return Err(bad(format!("character {ch:?} is not allowed ({why})")));
    }
    if ns.starts_with([':', '.']) || ns.ends_with([':', '.']) {
        return Err(bad("may not start or end with ':' or '.'".into()));
    }
    Ok(())
}

/// Checks a dot path: 1..=8 non-empty segments of at most 64 bytes, 256 bytes in all, no
/// whitespace, control, glob or invisible characters, no `:`.
pub fn validate_path(path: &str) -> Result<(), KeyError> {
    if path.is_empty() {
        return Err(KeyError::EmptyPath(path.to_string()));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(KeyError::TooLong(path.to_string()));
    }
    if let Some(ch) = path
        .chars()
        .find(|&c| forbidden(c, false).is_some() && c != '.')
    {
        return Err(KeyError::BadChar {
            key: path.to_string(),
            ch,
            why: forbidden(ch, false).unwrap_or_default(),
        });
    }
    let mut n = 0;
    for seg in path.split('.') {
        n += 1;
        if seg.is_empty() {
            return Err(KeyError::EmptySegment(path.to_string()));
        }
        if seg.len() > MAX_SEGMENT_BYTES {
            return Err(KeyError::TooLong(path.to_string()));
        }
    }
    if n > MAX_SEGMENTS {
        return Err(KeyError::TooDeep(path.to_string()));
    }
    Ok(())
}

/// A validated full key: namespace and dot path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    namespace: String,
    path: String,
}

impl Key {
    /// A key in `namespace` at `path`, validated.
    pub fn new(namespace: &str, path: &str) -> Result<Key, KeyError> {
        validate_namespace(namespace)?;
        validate_path(path)?;
        Ok(Key {
            namespace: namespace.to_string(),
            path: path.to_string(),
        })
    }

    /// Parses the printed form `ns:path` (split at the last `:`), or a bare path in
    /// `default_ns`.
    pub fn parse(text: &str, default_ns: &str) -> Result<Key, KeyError> {
        match text.rsplit_once(':') {
            Some((ns, path)) => Key::new(ns, path),
            None => Key::new(default_ns, text),
        }
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The dot path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The path's segments.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.path.split('.')
    }

    /// The ordered byte encoding (the tree key).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.namespace.len() + 1 + self.path.len());
        out.extend_from_slice(self.namespace.as_bytes());
        out.push(NS_END);
        for (i, seg) in self.segments().enumerate() {
            if i > 0 {
                out.push(SEG_SEP);
            }
            out.extend_from_slice(seg.as_bytes());
        }
        out
    }

    /// Decodes and re-validates an encoded key. Keys of printable ASCII (the common case)
    /// are checked byte by byte against a table; others go through the full rules of
    /// [`Key::new`]. Either way an invalid key is an error.
    pub fn decode(bytes: &[u8]) -> Result<Key, KeyError> {
        if let Some(k) = Key::decode_ascii(bytes) {
            return Ok(k);
        }
        Key::decode_full(bytes)
    }

    /// The fast path of [`Key::decode`]: `Some` only for a valid key made of printable
    /// ASCII, `None` for anything else (which the full rules then judge).
    fn decode_ascii(bytes: &[u8]) -> Option<Key> {
        let split = bytes.iter().position(|&b| b == NS_END)?;
        let (ns, rest) = (&bytes[..split], &bytes[split + 1..]);
        let ends_ok = |b: u8| b != b':' && b != b'.';
        if ns.is_empty()
            || ns.len() > MAX_NAMESPACE_BYTES
            || !ns.iter().all(|&b| ascii_name_byte(b))
            || !ends_ok(ns[0])
            || !ends_ok(ns[ns.len() - 1])
        {
            return None;
        }
        if rest.is_empty() || rest.len() > MAX_PATH_BYTES {
            return None;
        }
        let (mut segments, mut seg_len) = (1usize, 0usize);
        let mut path = Vec::with_capacity(rest.len());
        for &b in rest {
            if b == SEG_SEP {
                if seg_len == 0 {
                    return None;
                }
                segments += 1;
                seg_len = 0;
                path.push(b'.');
            } else {
                if !ascii_name_byte(b) || b == b':' || b == b'.' {
                    return None;
                }
                seg_len += 1;
                if seg_len > MAX_SEGMENT_BYTES {
                    return None;
                }
                path.push(b);
            }
        }
        if seg_len == 0 || segments > MAX_SEGMENTS {
            return None;
        }
        Some(Key {
            namespace: String::from_utf8(ns.to_vec()).ok()?,
            path: String::from_utf8(path).ok()?,
        })
    }

    fn decode_full(bytes: &[u8]) -> Result<Key, KeyError> {
        let split = bytes
            .iter()
            .position(|&b| b == NS_END)
            .ok_or(KeyError::BadEncoding)?;
        let ns = std::str::from_utf8(&bytes[..split]).map_err(|_| KeyError::BadEncoding)?;
        let rest = &bytes[split + 1..];
        if rest.contains(&b'.') || rest.contains(&NS_END) {
            return Err(KeyError::BadEncoding);
        }
        let path: Vec<u8> = rest
            .iter()
            .map(|&b| if b == SEG_SEP { b'.' } else { b })
            .collect();
        let path = String::from_utf8(path).map_err(|_| KeyError::BadEncoding)?;
        Key::new(ns, &path)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.namespace, self.path)
    }
}

/// The encoded prefix shared by every key of `namespace` (use with a prefix scan).
pub fn namespace_prefix(namespace: &str) -> Vec<u8> {
    let mut p = namespace.as_bytes().to_vec();
    p.push(NS_END);
    p
}

/// The encoded key truncated to its namespace and first `depth` segments: the group a key
/// belongs to in a depth-`depth` histogram (a key with fewer segments is its own group).
/// Works on any encoded key; `depth` 0 gives the namespace group.
pub fn group_prefix(encoded: &[u8], depth: usize) -> &[u8] {
    let Some(ns_end) = encoded.iter().position(|&b| b == NS_END) else {
        return encoded;
    };
    if depth == 0 {
        return &encoded[..=ns_end];
    }
    let mut seen = 0;
    for (i, &b) in encoded.iter().enumerate().skip(ns_end + 1) {
        if b == SEG_SEP {
            seen += 1;
            if seen == depth {
                return &encoded[..i];
            }
        }
    }
    encoded
}

/// Splits an encoded key or group prefix into its namespace and dot path (path empty for a
/// namespace group). Lossy on invalid UTF-8, which valid keys never contain.
pub fn split_encoded(encoded: &[u8]) -> (String, String) {
    match encoded.iter().position(|&b| b == NS_END) {
        Some(i) => {
            let ns = String::from_utf8_lossy(&encoded[..i]).into_owned();
            let path: Vec<u8> = encoded[i + 1..]
                .iter()
                .map(|&b| if b == SEG_SEP { b'.' } else { b })
                .collect();
            (ns, String::from_utf8_lossy(&path).into_owned())
        }
        None => (String::from_utf8_lossy(encoded).into_owned(), String::new()),
    }
}

/// The half-open encoded range `[lo, hi)` of all keys in the group `prefix` (as returned by
/// [`group_prefix`] with depth >= 1): the key equal to the prefix and every key below it.
pub fn group_range(prefix: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut hi = prefix.to_vec();
    hi.push(SEG_SEP + 1);
    (prefix.to_vec(), hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_decode_agrees_with_full_rules() {
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for b in 0..=255u8 {
            for (ns, path) in [
                (vec![b'n', b], vec![b'a']),
                (vec![b], vec![b'a']),
                (b"ns".to_vec(), vec![b'a', b]),
                (b"ns".to_vec(), vec![b]),
                (b"ns".to_vec(), vec![b'a', SEG_SEP, b]),
            ] {
                let mut e = ns.clone();
                e.push(NS_END);
                e.extend(&path);
                cases.push(e);
            }
        }
        let long = |n: usize| vec![b'x'; n];
        for (ns, path) in [
            (long(64), long(64)),
            (long(65), long(1)),
            (long(3), long(65)),
            (
                b"a".to_vec(),
                [long(64), long(64), long(64), long(61)].join(&SEG_SEP),
            ),
            (
                b"a".to_vec(),
                [long(64), long(64), long(64), long(62)].join(&SEG_SEP),
            ),
            (b"a".to_vec(), [b'x', SEG_SEP].repeat(8)[..15].to_vec()),
            (b"a".to_vec(), [b'x', SEG_SEP].repeat(9)[..17].to_vec()),
            (b"a".to_vec(), vec![SEG_SEP, b'x']),
            (b"a".to_vec(), vec![b'x', SEG_SEP]),
            (b"a:b".to_vec(), vec![b'x']),
            (b"a.".to_vec(), vec![b'x']),
            (b"a".to_vec(), vec![]),
        ] {
            let mut e = ns.clone();
            e.push(NS_END);
            e.extend(&path);
            cases.push(e);
        }
        cases.push(b"no separator".to_vec());
        for c in cases {
            let full = Key::decode_full(&c);
            match Key::decode_ascii(&c) {
                Some(k) => assert_eq!(full, Ok(k), "{c:?}"),
                None => assert!(full.is_err() || !c.is_ascii(), "{c:?}"),
            }
            assert_eq!(Key::decode(&c), full, "{c:?}");
        }
    }

    fn k(ns: &str, p: &str) -> Key {
        Key::new(ns, p).unwrap()
    }

    #[test]
    fn encoding_order_is_tuple_order() {
        let mut keys = vec![
            k("default", "a.b"),
            k("default", "a"),
            k("default", "ab"),
            k("default", "a.b.c"),
            k("default", "a-b"),
            k("codebase:onboard", "z"),
            k("codebase", "z"),
            k("default", "a.bc"),
            k("défaut", "é.ü"),
        ];
        let tuple = |x: &Key| {
            (
                x.namespace().to_string(),
                x.segments().map(str::to_string).collect::<Vec<_>>(),
            )
        };
        let mut by_tuple = keys.clone();
        by_tuple.sort_by_key(tuple);
        keys.sort_by_key(|x| x.encode());
        assert_eq!(keys, by_tuple);
    }

    #[test]
    fn round_trips_and_parses() {
        let key = k("codebase:onboard", "preferences.coding.testing");
        assert_eq!(Key::decode(&key.encode()).unwrap(), key);
        assert_eq!(
            key.to_string(),
            "codebase:onboard:preferences.coding.testing"
        );
        assert_eq!(Key::parse(&key.to_string(), "x").unwrap(), key);
        assert_eq!(
            Key::parse("a.b", DEFAULT_NAMESPACE).unwrap(),
            k("default", "a.b")
        );
        assert!(Key::decode(b"no-separator").is_err());
    }

    #[test]
    fn invalid_keys_are_refused_with_the_rule() {
        type Check = fn(&KeyError) -> bool;
        let cases: &[(&str, Check)] = &[
            ("", |e| matches!(e, KeyError::EmptyPath(_))),
            ("a..b", |e| matches!(e, KeyError::EmptySegment(_))),
            (".a", |e| matches!(e, KeyError::EmptySegment(_))),
            ("a.", |e| matches!(e, KeyError::EmptySegment(_))),
            ("a.b.c.d.e.f.g.h.i", |e| matches!(e, KeyError::TooDeep(_))),
            ("a b", |e| matches!(e, KeyError::BadChar { .. })),
            ("a\u{0}b", |e| matches!(e, KeyError::BadChar { .. })),
            ("a\tb", |e| matches!(e, KeyError::BadChar { .. })),
            ("a*", |e| matches!(e, KeyError::BadChar { .. })),
            ("a[1]", |e| matches!(e, KeyError::BadChar { .. })),
            ("a\u{200B}b", |e| matches!(e, KeyError::BadChar { .. })),
            ("a\u{202E}b", |e| matches!(e, KeyError::BadChar { .. })),
        ];
        for (path, check) in cases {
            let e = Key::new("default", path).unwrap_err();
            assert!(check(&e), "{path:?} gave {e:?}");
        }
        let long = "x".repeat(65);
        assert!(matches!(
            Key::new("default", &long),
            Err(KeyError::TooLong(_))
        ));
        let wide = vec!["x".repeat(60); 5].join(".");
        assert!(matches!(
            Key::new("default", &wide),
            Err(KeyError::TooLong(_))
        ));
        for ns in ["", " ", "a b", ":a", "a:", "a*", &"n".repeat(65)] {
            assert!(matches!(
                Key::new(ns, "a"),
                Err(KeyError::BadNamespace { .. })
            ));
        }
        assert!(Key::new("default", "a:b").is_err());
        assert!(Key::new("codebase:onboard", "a.b-c_d.ünï").is_ok());
    }

    #[test]
    fn groups_are_prefixes_and_contiguous() {
        let key = k("ns", "a.b.c.d").encode();
        assert_eq!(group_prefix(&key, 0), b"ns\0");
        assert_eq!(group_prefix(&key, 1), b"ns\0a");
        assert_eq!(group_prefix(&key, 2), b"ns\0a\x01b");
        assert_eq!(group_prefix(&key, 4), &key[..]);
        assert_eq!(group_prefix(&key, 7), &key[..]);
        let (lo, hi) = group_range(group_prefix(&key, 2));
        for (p, inside) in [
            ("a.b", true),
            ("a.b.x", true),
            ("a.b.c.d.e", true),
            ("a.bb", false),
            ("a.a.z", false),
            ("a.b-", false),
            ("a", false),
        ] {
            let e = k("ns", p).encode();
            assert_eq!(e >= lo && e < hi, inside, "{p}");
        }
        assert_eq!(
            split_encoded(group_prefix(&key, 2)),
            ("ns".to_string(), "a.b".to_string())
        );
    }
}
