//! The canonical CBOR profile every stored object uses.
//!
//! A strict subset of CBOR (RFC 8949) with exactly one encoding per value, so bytes (and
//! therefore ids) are a function of the value alone:
//! unsigned and negative integers, byte strings, UTF-8 text strings, arrays and maps, all with
//! definite lengths in the shortest head; `false`, `true`, `null`; finite floats only as
//! 64-bit. No tags, no indefinite lengths, no other simple values. Map keys are text strings in
//! strictly increasing bytewise order of their encodings. The decoder rejects everything else
//! and never trusts a length further than the bytes that remain, so hostile input costs at
//! most its own size.

/// Why bytes were refused by the decoder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CborError {
    /// The input ended inside an item.
    #[error("truncated at byte {0}")]
    Truncated(usize),
    /// An item of another type was expected.
    #[error("expected {expected} at byte {at}")]
    Unexpected {
        /// What the schema wanted.
        expected: &'static str,
        /// Byte offset of the item.
        at: usize,
    },
    /// The bytes are CBOR but not canonical under this profile.
    #[error("non-canonical encoding at byte {at}: {what}")]
    NonCanonical {
        /// Byte offset of the item.
        at: usize,
        /// The rule broken.
        what: &'static str,
    },
    /// A length or count exceeds a limit of the profile or of the remaining input.
    #[error("length {len} at byte {at} exceeds the limit")]
    TooLong {
        /// Byte offset of the item.
        at: usize,
        /// The declared length.
        len: u64,
    },
    /// A text string is not valid UTF-8.
    #[error("invalid UTF-8 text at byte {0}")]
    Utf8(usize),
    /// Bytes remain after the top-level item.
    #[error("{0} trailing bytes")]
    Trailing(usize),
}

/// Major type of unsigned integers.
pub const MAJOR_UINT: u8 = 0;
/// Major type of negative integers.
pub const MAJOR_NINT: u8 = 1;
/// Major type of byte strings.
pub const MAJOR_BYTES: u8 = 2;
/// Major type of text strings.
pub const MAJOR_TEXT: u8 = 3;
/// Major type of arrays.
pub const MAJOR_ARRAY: u8 = 4;
/// Major type of maps.
pub const MAJOR_MAP: u8 = 5;

const FALSE: u8 = 0xf4;
const TRUE: u8 = 0xf5;
const NULL: u8 = 0xf6;
const FLOAT64: u8 = 0xfb;

/// Number of bytes the shortest head for `value` takes.
pub fn head_len(value: u64) -> usize {
    match value {
        0..=23 => 1,
        24..=0xff => 2,
        0x100..=0xffff => 3,
        0x1_0000..=0xffff_ffff => 5,
        _ => 9,
    }
}

/// Appends the shortest head of major type `major` (`MAJOR_*`) with argument `value` (an
/// integer, a length or a count) to `buf`. [`Encoder`] writes every head with it; code that
/// lays out canonical items in a buffer of its own (the tree's node chunker) uses it too, so
/// the profile has one head encoding.
#[inline]
pub fn write_head(buf: &mut Vec<u8>, major: u8, value: u64) {
    let m = major << 5;
    match value {
        0..=23 => buf.push(m | value as u8),
        24..=0xff => buf.extend_from_slice(&[m | 24, value as u8]),
        0x100..=0xffff => {
            buf.push(m | 25);
            buf.extend_from_slice(&(value as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            buf.push(m | 26);
            buf.extend_from_slice(&(value as u32).to_be_bytes());
        }
        _ => {
            buf.push(m | 27);
            buf.extend_from_slice(&value.to_be_bytes());
        }
    }
}

/// Appends canonical CBOR items to a byte vector.
#[derive(Debug, Default)]
pub struct Encoder {
    buf: Vec<u8>,
}

impl Encoder {
    /// An encoder with room for `cap` bytes.
    pub fn with_capacity(cap: usize) -> Self {
        Encoder {
            buf: Vec::with_capacity(cap),
        }
    }

    /// The bytes written so far.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    fn head(&mut self, major: u8, value: u64) {
        write_head(&mut self.buf, major, value);
    }

    /// An unsigned integer.
    pub fn u64(&mut self, v: u64) {
        self.head(MAJOR_UINT, v);
    }

    /// A signed integer (major type 0 or 1).
    pub fn i64(&mut self, v: i64) {
        if v >= 0 {
            self.head(MAJOR_UINT, v as u64);
        } else {
            self.head(MAJOR_NINT, !(v as u64));
        }
    }

    /// A byte string.
    pub fn bytes(&mut self, b: &[u8]) {
        self.head(MAJOR_BYTES, b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    /// A text string.
    pub fn text(&mut self, s: &str) {
        self.head(MAJOR_TEXT, s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// The head of an array of `len` items; the items follow.
    pub fn array(&mut self, len: usize) {
        self.head(MAJOR_ARRAY, len as u64);
    }

    /// The head of a map of `len` pairs; keys (text, ascending) and values follow.
    pub fn map(&mut self, len: usize) {
        self.head(MAJOR_MAP, len as u64);
    }

    /// `true` or `false`.
    pub fn bool(&mut self, v: bool) {
        self.buf.push(if v { TRUE } else { FALSE });
    }

    /// `null`.
    pub fn null(&mut self) {
        self.buf.push(NULL);
    }

    /// A finite float, always in 64 bits. Non-finite values are the caller's bug; they are
    /// written as `null` so the output stays decodable.
    pub fn f64(&mut self, v: f64) {
        if v.is_finite() {
            // -0.0 and 0.0 are distinct values with distinct bits; keep both as they are.
            self.buf.push(FLOAT64);
            self.buf.extend_from_slice(&v.to_bits().to_be_bytes());
        } else {
            self.null();
        }
    }
}

/// The kind of the next item, as far as the profile distinguishes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// Unsigned integer.
    Uint,
    /// Negative integer.
    Nint,
    /// Byte string.
    Bytes,
    /// Text string.
    Text,
    /// Array.
    Array,
    /// Map.
    Map,
    /// `false` or `true`.
    Bool,
    /// `null`.
    Null,
    /// 64-bit float.
    Float,
}

/// Reads canonical CBOR items from a byte slice without copying.
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder { buf, pos: 0 }
    }

    /// Current byte offset.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Fails unless every byte has been consumed.
    pub fn finish(&self) -> Result<(), CborError> {
        if self.pos == self.buf.len() {
            Ok(())
        } else {
            Err(CborError::Trailing(self.buf.len() - self.pos))
        }
    }

    fn byte(&mut self) -> Result<u8, CborError> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or(CborError::Truncated(self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], CborError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or(CborError::Truncated(self.pos))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// The kind of the next item, without consuming it.
    pub fn peek(&self) -> Result<ItemKind, CborError> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or(CborError::Truncated(self.pos))?;
        Ok(match (b >> 5, b) {
            (MAJOR_UINT, _) => ItemKind::Uint,
            (MAJOR_NINT, _) => ItemKind::Nint,
            (MAJOR_BYTES, _) => ItemKind::Bytes,
            (MAJOR_TEXT, _) => ItemKind::Text,
            (MAJOR_ARRAY, _) => ItemKind::Array,
            (MAJOR_MAP, _) => ItemKind::Map,
            (_, FALSE | TRUE) => ItemKind::Bool,
            (_, NULL) => ItemKind::Null,
            (_, FLOAT64) => ItemKind::Float,
            _ => {
                return Err(CborError::NonCanonical {
                    at: self.pos,
                    what: "tag or simple value outside the profile",
                })
            }
        })
    }

    /// Reads a head of the given major type; returns its argument.
    fn head(&mut self, major: u8, expected: &'static str) -> Result<u64, CborError> {
        let at = self.pos;
        let b = self.byte()?;
        if b >> 5 != major {
            self.pos = at;
            return Err(CborError::Unexpected { expected, at });
        }
        let info = b & 0x1f;
        let (value, min) = match info {
            0..=23 => return Ok(info as u64),
            24 => (self.byte()? as u64, 24),
            25 => (
                u16::from_be_bytes([self.byte()?, self.byte()?]) as u64,
                0x100,
            ),
            26 => {
                let s = self.take(4)?;
                (
                    u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as u64,
                    0x1_0000,
                )
            }
            27 => {
                let s = self.take(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(s);
                (u64::from_be_bytes(a), 0x1_0000_0000)
            }
            31 => {
                return Err(CborError::NonCanonical {
                    at,
                    what: "indefinite length",
                })
            }
            _ => {
                return Err(CborError::NonCanonical {
                    at,
                    what: "reserved additional information",
                })
            }
        };
        if value < min {
            return Err(CborError::NonCanonical {
                at,
                what: "integer or length not in its shortest form",
            });
        }
        Ok(value)
    }

    /// An unsigned integer.
    pub fn u64(&mut self) -> Result<u64, CborError> {
        self.head(MAJOR_UINT, "unsigned integer")
    }

    /// A signed integer that fits `i64`.
    pub fn i64(&mut self) -> Result<i64, CborError> {
        let at = self.pos;
        match self.peek()? {
            ItemKind::Uint => {
                let v = self.u64()?;
                i64::try_from(v).map_err(|_| CborError::TooLong { at, len: v })
            }
            ItemKind::Nint => {
                let v = self.head(MAJOR_NINT, "negative integer")?;
                if v > i64::MAX as u64 {
                    return Err(CborError::TooLong { at, len: v });
                }
                Ok(!(v as i64))
            }
            _ => Err(CborError::Unexpected {
                expected: "integer",
                at,
            }),
        }
    }

    fn len_checked(&mut self, major: u8, expected: &'static str) -> Result<usize, CborError> {
        let at = self.pos;
        let len = self.head(major, expected)?;
        // Every byte or text byte needs one input byte; every array item or map pair at least
        // one. A length beyond what remains is refused before anything is allocated.
        let remaining = (self.buf.len() - self.pos) as u64;
        let need = if major == MAJOR_MAP {
            len.saturating_mul(2)
        } else {
            len
        };
        if need > remaining {
            return Err(CborError::TooLong { at, len });
        }
        Ok(len as usize)
    }

    /// A byte string, borrowed from the input.
    pub fn bytes(&mut self) -> Result<&'a [u8], CborError> {
        let n = self.len_checked(MAJOR_BYTES, "byte string")?;
        self.take(n)
    }

    /// A byte string of exactly `N` bytes.
    pub fn bytes_fixed<const N: usize>(&mut self) -> Result<[u8; N], CborError> {
        let at = self.pos;
        let b = self.bytes()?;
        <[u8; N]>::try_from(b).map_err(|_| CborError::Unexpected {
            expected: "byte string of fixed length",
            at,
        })
    }

    /// A text string, borrowed from the input.
    pub fn text(&mut self) -> Result<&'a str, CborError> {
        let n = self.len_checked(MAJOR_TEXT, "text string")?;
        let at = self.pos;
        let b = self.take(n)?;
        std::str::from_utf8(b).map_err(|_| CborError::Utf8(at))
    }

    /// The head of an array; returns its item count.
    pub fn array(&mut self) -> Result<usize, CborError> {
        self.len_checked(MAJOR_ARRAY, "array")
    }

    /// The head of an array that must have exactly `n` items.
    pub fn array_of(&mut self, n: usize) -> Result<(), CborError> {
        let at = self.pos;
        if self.array()? != n {
            return Err(CborError::Unexpected {
                expected: "array of the schema's length",
                at,
            });
        }
        Ok(())
    }

    /// The head of a map; returns its pair count.
    pub fn map(&mut self) -> Result<usize, CborError> {
        self.len_checked(MAJOR_MAP, "map")
    }

    /// A map key (text) that must sort strictly after `prev` (the previous key, if any).
    pub fn map_key(&mut self, prev: Option<&str>) -> Result<&'a str, CborError> {
        let at = self.pos;
        let k = self.map_key_bytes(prev.map(str::as_bytes))?;
        std::str::from_utf8(k).map_err(|_| CborError::Utf8(at))
    }

    /// A map key's bytes, which must sort strictly after `prev`, for a reader that matches
    /// them against names it knows: ASCII names need no UTF-8 check, and anything else is
    /// refused by the match.
    pub fn map_key_bytes(&mut self, prev: Option<&[u8]>) -> Result<&'a [u8], CborError> {
        let at = self.pos;
        let n = self.len_checked(MAJOR_TEXT, "text string")?;
        let k = self.take(n)?;
        if let Some(p) = prev {
            // Canonical order: shorter encoding first, then bytewise; for text keys that is
            // (length, bytes).
            if (k.len(), k) <= (p.len(), p) {
                return Err(CborError::NonCanonical {
                    at,
                    what: "map keys not in canonical order or repeated",
                });
            }
        }
        Ok(k)
    }

    /// The map key `name`, or an error naming the key found. A reader that expects fixed
    /// names in canonical order calls it once per name, in that order, which checks the
    /// order too.
    pub fn expect_key(&mut self, name: &'static str) -> Result<(), CborError> {
        let at = self.pos;
        let n = self.len_checked(MAJOR_TEXT, "text string")?;
        if self.take(n)? == name.as_bytes() {
            Ok(())
        } else {
            self.pos = at;
            Err(CborError::Unexpected { expected: name, at })
        }
    }

    /// `true` or `false`.
    pub fn bool(&mut self) -> Result<bool, CborError> {
        let at = self.pos;
        match self.byte()? {
            FALSE => Ok(false),
            TRUE => Ok(true),
            _ => {
                self.pos = at;
                Err(CborError::Unexpected {
                    expected: "boolean",
                    at,
                })
            }
        }
    }

    /// Consumes a `null` if one is next; returns whether it did.
    pub fn null(&mut self) -> Result<bool, CborError> {
        if self.buf.get(self.pos) == Some(&NULL) {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// A finite 64-bit float.
    pub fn f64(&mut self) -> Result<f64, CborError> {
        let at = self.pos;
        if self.byte()? != FLOAT64 {
            self.pos = at;
            return Err(CborError::Unexpected {
                expected: "64-bit float",
                at,
            });
        }
        let s = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        let v = f64::from_bits(u64::from_be_bytes(a));
        if !v.is_finite() {
            return Err(CborError::NonCanonical {
                at,
                what: "non-finite float",
            });
        }
        Ok(v)
    }

    /// Skips one whole item of the profile, at most `depth` levels deep.
    pub fn skip(&mut self, depth: usize) -> Result<(), CborError> {
        let at = self.pos;
        if depth == 0 {
            return Err(CborError::TooLong { at, len: 0 });
        }
        match self.peek()? {
            ItemKind::Uint => self.u64().map(drop),
            ItemKind::Nint => self.head(MAJOR_NINT, "negative integer").map(drop),
            ItemKind::Bytes => self.bytes().map(drop),
            ItemKind::Text => self.text().map(drop),
            ItemKind::Array => {
                for _ in 0..self.array()? {
                    self.skip(depth - 1)?;
                }
                Ok(())
            }
            ItemKind::Map => {
                let n = self.map()?;
                let mut prev: Option<&str> = None;
                for _ in 0..n {
                    prev = Some(self.map_key(prev)?);
                    self.skip(depth - 1)?;
                }
                Ok(())
            }
            ItemKind::Bool => self.bool().map(drop),
            ItemKind::Null => self.null().map(drop),
            ItemKind::Float => self.f64().map(drop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(f: impl FnOnce(&mut Encoder)) -> Vec<u8> {
        let mut e = Encoder::default();
        f(&mut e);
        e.into_bytes()
    }

    #[test]
    fn integers_use_the_shortest_head() {
        assert_eq!(enc(|e| e.u64(0)), [0x00]);
        assert_eq!(enc(|e| e.u64(23)), [0x17]);
        assert_eq!(enc(|e| e.u64(24)), [0x18, 24]);
        assert_eq!(enc(|e| e.u64(256)), [0x19, 1, 0]);
        assert_eq!(enc(|e| e.u64(65536)), [0x1a, 0, 1, 0, 0]);
        assert_eq!(enc(|e| e.u64(1 << 32)), [0x1b, 0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(enc(|e| e.i64(-1)), [0x20]);
        assert_eq!(enc(|e| e.i64(-25)), [0x38, 24]);
        for v in [
            0u64,
            23,
            24,
            255,
            256,
            65535,
            65536,
            u32::MAX as u64,
            u64::MAX,
        ] {
            assert_eq!(enc(|e| e.u64(v)).len(), head_len(v));
            let b = enc(|e| e.u64(v));
            let mut d = Decoder::new(&b);
            assert_eq!(d.u64().unwrap(), v);
            d.finish().unwrap();
        }
        for v in [i64::MIN, -1_000_000, -1, 0, 1, i64::MAX] {
            let b = enc(|e| e.i64(v));
            assert_eq!(Decoder::new(&b).i64().unwrap(), v);
        }
    }

    #[test]
    fn non_shortest_and_indefinite_forms_are_refused() {
        for bad in [
            &[0x18, 5][..],
            &[0x19, 0, 200],
            &[0x1a, 0, 0, 1, 0],
            &[0x1b, 0, 0, 0, 0, 0, 1, 0, 0],
        ] {
            assert!(matches!(
                Decoder::new(bad).u64(),
                Err(CborError::NonCanonical { .. })
            ));
        }
        assert!(matches!(
            Decoder::new(&[0x5f, 0xff]).bytes(),
            Err(CborError::NonCanonical { .. })
        ));
        assert!(matches!(
            Decoder::new(&[0xc0, 0x00]).peek(),
            Err(CborError::NonCanonical { .. })
        ));
        // half-precision float
        assert!(Decoder::new(&[0xf9, 0x3c, 0x00]).f64().is_err());
    }

    #[test]
    fn lengths_beyond_the_input_are_refused_without_allocating() {
        let b = [0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        assert!(matches!(
            Decoder::new(&b).bytes(),
            Err(CborError::TooLong { .. })
        ));
        let a = [0x9a, 0xff, 0xff, 0xff, 0xff];
        assert!(matches!(
            Decoder::new(&a).array(),
            Err(CborError::TooLong { .. })
        ));
    }

    #[test]
    fn map_keys_must_be_strictly_ordered() {
        let b = enc(|e| {
            e.map(2);
            e.text("b");
            e.u64(1);
            e.text("a");
            e.u64(2);
        });
        let mut d = Decoder::new(&b);
        d.map().unwrap();
        let k = d.map_key(None).unwrap();
        d.u64().unwrap();
        assert!(d.map_key(Some(k)).is_err());
        let mut d = Decoder::new(&b);
        assert!(d.skip(4).is_err());
    }

    #[test]
    fn floats_round_trip_in_64_bits() {
        for v in [0.0, -0.0, 0.5, 1.0, 1.0e300, -3.25] {
            let b = enc(|e| e.f64(v));
            assert_eq!(b.len(), 9);
            assert_eq!(Decoder::new(&b).f64().unwrap().to_bits(), v.to_bits());
        }
        let nan = [0xfb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0];
        assert!(Decoder::new(&nan).f64().is_err());
    }
}
