//! A serde serializer that writes pretty JSON byte for byte as serde_json's does with
//! [`Pretty`], but checks strings for characters to escape eight bytes at a time: serde_json
//! looks each byte up in a table, which was an eighth of a `diff` of a thousand records.
//! Numbers, escapes and the layout are written by serde_json's own [`Formatter`] methods,
//! so only the string scan and the order of calls are this module's.

use std::io::Write;

use serde::ser::{self, Serialize};
use serde_json::ser::{CharEscape, Formatter};
use serde_json::Error;

use super::Pretty;
use crate::word::{bytes_below, bytes_equal};

type Result<T> = std::result::Result<T, Error>;

/// Bytes gathered before they are handed to the output in one write.
pub(super) const SPILL: usize = 32 << 10;

/// The buffer's room, made once: what is gathered stays under [`SPILL`] plus one item, so
/// the buffer does not grow (and touch fresh memory) unless one string is that long.
const ROOM: usize = 2 * SPILL;

/// Writes JSON laid out by `f` to `out`, through a buffer of its own (`w`): the many small
/// writes of a document (a quote, a name, an indent) are then appends to a vector.
pub(super) struct Ser<'w, W> {
    out: &'w mut W,
    pub(super) w: Vec<u8>,
    pub(super) f: Pretty,
}

impl<'w, W: Write> Ser<'w, W> {
    pub(super) fn new(out: &'w mut W) -> Self {
        Ser {
            out,
            w: Vec::with_capacity(ROOM),
            f: Pretty::default(),
        }
    }

    /// Hands what is gathered to the output once there is [`SPILL`] of it, in whole
    /// multiples of [`SPILL`], keeping the rest: every write then starts and ends on a
    /// [`SPILL`] boundary of the output, and a file takes aligned writes with fewer page
    /// cache operations than ragged ones (a 750 KB diff went into an ext4 file in two
    /// thirds of the time).
    pub(super) fn spill(&mut self) -> Result<()> {
        if self.w.len() >= SPILL {
            let whole = self.w.len() / SPILL * SPILL;
            self.out.write_all(&self.w[..whole]).map_err(Error::io)?;
            self.w.drain(..whole);
        }
        Ok(())
    }

    /// Hands the rest to the output.
    pub(super) fn finish(mut self) -> std::io::Result<()> {
        self.out.write_all(&self.w)?;
        self.w.clear();
        Ok(())
    }

    /// Writes what `write` writes.
    fn plain(
        &mut self,
        write: impl FnOnce(&mut Pretty, &mut Vec<u8>) -> std::io::Result<()>,
    ) -> Result<()> {
        write(&mut self.f, &mut self.w).map_err(Error::io)
    }

    pub(super) fn str(&mut self, s: &str) -> Result<()> {
        write_escaped(&mut self.w, &mut self.f, s).map_err(Error::io)
    }

    /// Opens an object holding the one member `variant`, whose value follows.
    fn open_variant(&mut self, variant: &str) -> Result<()> {
        self.f.begin_object(&mut self.w).map_err(Error::io)?;
        self.f
            .begin_object_key(&mut self.w, true)
            .map_err(Error::io)?;
        self.str(variant)?;
        self.f.end_object_key(&mut self.w).map_err(Error::io)?;
        self.f.begin_object_value(&mut self.w).map_err(Error::io)
    }

    /// Closes what [`Ser::open_variant`] opened.
    fn close_variant(&mut self) -> Result<()> {
        self.f.end_object_value(&mut self.w).map_err(Error::io)?;
        self.f.end_object(&mut self.w).map_err(Error::io)
    }

    fn seq(&mut self, len: Option<usize>) -> Result<Compound<'_, 'w, W>> {
        self.f.begin_array(&mut self.w).map_err(Error::io)?;
        let state = if len == Some(0) {
            self.f.end_array(&mut self.w).map_err(Error::io)?;
            State::Empty
        } else {
            State::First
        };
        Ok(Compound { ser: self, state })
    }

    fn map(&mut self, len: Option<usize>) -> Result<Compound<'_, 'w, W>> {
        self.f.begin_object(&mut self.w).map_err(Error::io)?;
        let state = if len == Some(0) {
            self.f.end_object(&mut self.w).map_err(Error::io)?;
            State::Empty
        } else {
            State::First
        };
        Ok(Compound { ser: self, state })
    }
}

/// `v` as an integer, when it is whole and under 10^15 in size (and not negative zero): the
/// values serde_json writes as their digits followed by `.0`. Larger ones may be written
/// with an exponent, so they keep the float writer.
fn whole_number(v: f64) -> Option<i64> {
    const BELOW: f64 = 1e15;
    let whole = v.abs() < BELOW && v.trunc() == v && !(v == 0.0 && v.is_sign_negative());
    // Exact: a whole f64 under 10^15 converts to i64 without rounding.
    whole.then_some(v as i64)
}

/// A mask with the high bit set in each byte of `word` (little-endian) that needs escaping
/// (`"`, `\\` or a control below 0x20), and perhaps in bytes above such a byte. The lowest
/// set bit is exact: a borrow only carries upward from a byte that matched itself.
fn escape_mask(word: u64) -> u64 {
    bytes_below(word, 0x20) | bytes_equal(word, b'"') | bytes_equal(word, b'\\')
}

/// The length of `bytes`' longest prefix that needs no escape, found eight bytes at a time.
/// The last word overlaps the one before it (or, under eight bytes, two four-byte halves
/// overlap), so no byte is read twice into a match and none is copied.
fn plain_prefix(bytes: &[u8]) -> usize {
    let n = bytes.len();
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let half = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let first = |mask: u64| (mask.trailing_zeros() / 8) as usize;
    if n < 4 {
        let padded = |b: u8| b as u64 | 0x6161_6161_6161_6100;
        return bytes
            .iter()
            .position(|&b| escape_mask(padded(b)) != 0)
            .unwrap_or(n);
    }
    if n < 8 {
        let mask = escape_mask(half(0) as u64 | (half(n - 4) as u64) << 32);
        return match first(mask) {
            8 => n,
            i if i < 4 => i,
            // Byte i - 4 of the half that starts at n - 4.
            i => n + i - 8,
        };
    }
    let mut at = 0;
    while at + 8 < n {
        let mask = escape_mask(word(at));
        if mask != 0 {
            return at + first(mask);
        }
        at += 8;
    }
    match first(escape_mask(word(n - 8))) {
        8 => n,
        i => n - 8 + i,
    }
}

/// Writes `s` as a JSON string: quoted, with serde_json's escapes.
fn write_escaped<W: Write>(w: &mut W, f: &mut Pretty, s: &str) -> std::io::Result<()> {
    let bytes = s.as_bytes();
    w.write_all(b"\"")?;
    let mut at = 0;
    loop {
        let run = plain_prefix(&bytes[at..]);
        w.write_all(&bytes[at..at + run])?;
        at += run;
        let Some(&b) = bytes.get(at) else { break };
        let escape = match b {
            b'"' => CharEscape::Quote,
            b'\\' => CharEscape::ReverseSolidus,
            b'\x08' => CharEscape::Backspace,
            b'\x0c' => CharEscape::FormFeed,
            b'\n' => CharEscape::LineFeed,
            b'\r' => CharEscape::CarriageReturn,
            b'\t' => CharEscape::Tab,
            _ => CharEscape::AsciiControl(b),
        };
        f.write_char_escape(w, escape)?;
        at += 1;
    }
    w.write_all(b"\"")
}

/// Where a sequence or map is: closed already (it was empty), at its first item, or after.
#[derive(PartialEq, Eq)]
enum State {
    Empty,
    First,
    Rest,
}

/// An open array or object.
pub(super) struct Compound<'a, 'w, W> {
    ser: &'a mut Ser<'w, W>,
    state: State,
}

impl<W: Write> Compound<'_, '_, W> {
    fn element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        let ser = &mut *self.ser;
        ser.f
            .begin_array_value(&mut ser.w, self.state == State::First)
            .map_err(Error::io)?;
        self.state = State::Rest;
        value.serialize(&mut *ser)?;
        ser.f.end_array_value(&mut ser.w).map_err(Error::io)?;
        ser.spill()
    }

    fn end_array(&mut self) -> Result<()> {
        if self.state != State::Empty {
            self.ser.f.end_array(&mut self.ser.w).map_err(Error::io)?;
        }
        Ok(())
    }

    fn key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<()> {
        let ser = &mut *self.ser;
        ser.f
            .begin_object_key(&mut ser.w, self.state == State::First)
            .map_err(Error::io)?;
        self.state = State::Rest;
        key.serialize(KeySer { ser: &mut *ser })?;
        ser.f.end_object_key(&mut ser.w).map_err(Error::io)
    }

    fn value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        let ser = &mut *self.ser;
        ser.f.begin_object_value(&mut ser.w).map_err(Error::io)?;
        value.serialize(&mut *ser)?;
        ser.f.end_object_value(&mut ser.w).map_err(Error::io)?;
        ser.spill()
    }

    /// A struct's field: its name, then its value.
    fn member<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<()> {
        self.key(key)?;
        self.value(value)
    }

    fn end_object(&mut self) -> Result<()> {
        if self.state != State::Empty {
            self.ser.f.end_object(&mut self.ser.w).map_err(Error::io)?;
        }
        Ok(())
    }
}

/// serde's methods for booleans and integers, each written by serde_json's formatter
/// method for its type, through `$how`: `plain` for values, `quoted` for map keys.
macro_rules! scalars {
    ($how:ident) => {
        scalars!($how;
            serialize_bool write_bool bool, serialize_i8 write_i8 i8,
            serialize_i16 write_i16 i16, serialize_i32 write_i32 i32,
            serialize_i64 write_i64 i64, serialize_i128 write_i128 i128,
            serialize_u8 write_u8 u8, serialize_u16 write_u16 u16,
            serialize_u32 write_u32 u32, serialize_u64 write_u64 u64,
            serialize_u128 write_u128 u128);
    };
    ($how:ident; $($method:ident $write:ident $ty:ty),*) => {$(
        fn $method(self, v: $ty) -> Result<()> {
            self.$how(|f, w| f.$write(w, v))
        }
    )*};
}

impl<'a, 'w, W: Write> ser::Serializer for &'a mut Ser<'w, W> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, 'w, W>;
    type SerializeTuple = Compound<'a, 'w, W>;
    type SerializeTupleStruct = Compound<'a, 'w, W>;
    type SerializeTupleVariant = Compound<'a, 'w, W>;
    type SerializeMap = Compound<'a, 'w, W>;
    type SerializeStruct = Compound<'a, 'w, W>;
    type SerializeStructVariant = Compound<'a, 'w, W>;

    scalars!(plain);
    /// Not finite is `null`, as serde_json writes it.
    fn serialize_f32(self, v: f32) -> Result<()> {
        if v.is_finite() {
            self.f.write_f32(&mut self.w, v).map_err(Error::io)
        } else {
            self.serialize_unit()
        }
    }
    fn serialize_f64(self, v: f64) -> Result<()> {
        if let Some(whole) = whole_number(v) {
            // What the float writer prints for such a value, without its digit search:
            // timestamps and confidences are mostly whole.
            self.f.write_i64(&mut self.w, whole).map_err(Error::io)?;
            self.w.extend_from_slice(b".0");
            Ok(())
        } else if v.is_finite() {
            self.f.write_f64(&mut self.w, v).map_err(Error::io)
        } else {
            self.serialize_unit()
        }
    }
    fn serialize_char(self, v: char) -> Result<()> {
        self.str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<()> {
        self.str(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        self.f.write_byte_array(&mut self.w, v).map_err(Error::io)
    }
    fn serialize_none(self) -> Result<()> {
        self.serialize_unit()
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<()> {
        self.f.write_null(&mut self.w).map_err(Error::io)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<()> {
        self.str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        self.open_variant(variant)?;
        value.serialize(&mut *self)?;
        self.close_variant()
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq> {
        self.seq(len)
    }
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple> {
        self.seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        self.seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        self.open_variant(variant)?;
        self.seq(Some(len))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap> {
        self.map(len)
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Self::SerializeStruct> {
        self.map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        self.open_variant(variant)?;
        self.map(Some(len))
    }
}

/// The array-shaped compounds differ only in their trait's and method's names.
macro_rules! array_compounds {
    ($($trait:ident::$method:ident),*) => {$(
        impl<W: Write> ser::$trait for Compound<'_, '_, W> {
            type Ok = ();
            type Error = Error;
            fn $method<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
                self.element(value)
            }
            fn end(mut self) -> Result<()> {
                self.end_array()
            }
        }
    )*};
}

array_compounds!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field
);

impl<W: Write> ser::SerializeTupleVariant for Compound<'_, '_, W> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    fn end(mut self) -> Result<()> {
        self.end_array()?;
        self.ser.close_variant()
    }
}

impl<W: Write> ser::SerializeMap for Compound<'_, '_, W> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<()> {
        self.key(key)
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.value(value)
    }
    fn end(mut self) -> Result<()> {
        self.end_object()
    }
}

impl<W: Write> ser::SerializeStruct for Compound<'_, '_, W> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.member(key, value)
    }
    fn end(mut self) -> Result<()> {
        self.end_object()
    }
}

impl<W: Write> ser::SerializeStructVariant for Compound<'_, '_, W> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.member(key, value)
    }
    fn end(mut self) -> Result<()> {
        self.end_object()?;
        self.ser.close_variant()
    }
}

/// A map key: JSON keys are strings, so strings and string-like values are written as
/// strings, and numbers and booleans inside quotes, as serde_json writes them; anything else
/// is an error.
struct KeySer<'a, 'w, W> {
    ser: &'a mut Ser<'w, W>,
}

fn key_must_be_a_string() -> Error {
    ser::Error::custom("key must be a string")
}

impl<W: Write> KeySer<'_, '_, W> {
    /// Writes what `write` writes, inside quotes.
    fn quoted(
        self,
        write: impl FnOnce(&mut Pretty, &mut Vec<u8>) -> std::io::Result<()>,
    ) -> Result<()> {
        let ser = self.ser;
        ser.w.write_all(b"\"").map_err(Error::io)?;
        write(&mut ser.f, &mut ser.w).map_err(Error::io)?;
        ser.w.write_all(b"\"").map_err(Error::io)
    }
}

impl<W: Write> ser::Serializer for KeySer<'_, '_, W> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<()> {
        self.ser.str(v)
    }
    fn serialize_char(self, v: char) -> Result<()> {
        self.ser.str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<()> {
        self.ser.str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }
    scalars!(quoted);
    fn serialize_f32(self, v: f32) -> Result<()> {
        if !v.is_finite() {
            return Err(ser::Error::custom("float key must be finite"));
        }
        self.quoted(|f, w| f.write_f32(w, v))
    }
    fn serialize_f64(self, v: f64) -> Result<()> {
        if !v.is_finite() {
            return Err(ser::Error::custom("float key must be finite"));
        }
        self.quoted(|f, w| f.write_f64(w, v))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<()> {
        Err(key_must_be_a_string())
    }
    fn serialize_none(self) -> Result<()> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<()> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit(self) -> Result<()> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<()> {
        Err(key_must_be_a_string())
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<()> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(key_must_be_a_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    fn ours<T: Serialize>(v: &T) -> String {
        let mut out = Vec::new();
        super::super::write_pretty(&mut out, v).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn same<T: Serialize>(v: &T) {
        assert_eq!(ours(v), serde_json::to_string_pretty(v).unwrap());
    }

    #[test]
    fn the_plain_prefix_ends_at_the_first_byte_to_escape() {
        // Every length up to three words, with each kind of byte at each place, among
        // plain ASCII or bytes above 0x7f (which must never count as a match).
        let specials = [b'"', b'\\', 0, 0x08, 0x1f, b'\n'];
        let fillers = [b'a', b' ', 0x7f, 0xc3, 0xff];
        for n in 0..=24 {
            for &fill in &fillers {
                let plain = vec![fill; n];
                assert_eq!(plain_prefix(&plain), n);
                for at in 0..n {
                    for &sp in &specials {
                        let mut b = plain.clone();
                        b[at] = sp;
                        assert_eq!(plain_prefix(&b), at, "{b:?}");
                        // A second match later never moves the first.
                        if at + 1 < n {
                            b[n - 1] = b'"';
                            assert_eq!(plain_prefix(&b), at, "{b:?}");
                        }
                    }
                }
            }
        }
    }

    #[derive(Serialize)]
    enum Shape {
        Unit,
        Newtype(u8),
        Tuple(i32, String),
        Struct { a: Option<f64>, b: Vec<u8> },
    }

    #[derive(Serialize)]
    struct Everything {
        t: bool,
        small: i8,
        big: i128,
        huge: u128,
        f: f32,
        nan: f64,
        inf: f32,
        c: char,
        quote: char,
        none: Option<u8>,
        unit: (),
        pair: (u16, &'static str),
        shapes: Vec<Shape>,
        empty_seq: Vec<u8>,
        empty_map: BTreeMap<String, u8>,
        int_keys: BTreeMap<i64, &'static str>,
        bool_keys: BTreeMap<bool, u8>,
        #[serde(with = "serde_bytes_as_bytes")]
        bytes: Vec<u8>,
    }

    mod serde_bytes_as_bytes {
        pub fn serialize<S: serde::Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(b)
        }
    }

    #[test]
    fn every_kind_of_value_is_written_as_serde_json_writes_it() {
        same(&Everything {
            t: true,
            small: -8,
            big: -(1i128 << 100),
            huge: u128::MAX,
            f: 0.1,
            nan: f64::NAN,
            inf: f32::NEG_INFINITY,
            c: 'é',
            quote: '"',
            none: None,
            unit: (),
            pair: (7, "tab\there"),
            shapes: vec![
                Shape::Unit,
                Shape::Newtype(3),
                Shape::Tuple(-1, "x\u{1}y".into()),
                Shape::Struct {
                    a: Some(1e-7),
                    b: vec![],
                },
                Shape::Struct {
                    a: None,
                    b: vec![1],
                },
            ],
            empty_seq: vec![],
            empty_map: BTreeMap::new(),
            int_keys: [(-3, "a"), (10, "b")].into_iter().collect(),
            bool_keys: [(false, 0), (true, 1)].into_iter().collect(),
            bytes: vec![0, 255],
        });
        same(&Shape::Unit);
        same(&Shape::Tuple(0, String::new()));
        same(&vec![Shape::Newtype(1)]);
    }

    #[test]
    fn keys_that_are_not_strings_are_refused() {
        let m: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into_iter().collect();
        let mut out = Vec::new();
        assert!(super::super::write_pretty(&mut out, &m).is_err());
        assert!(serde_json::to_string_pretty(&m).is_err());
        let m: BTreeMap<String, f64> = [("k".to_string(), 1.0)].into_iter().collect();
        same(&m);
    }

    #[test]
    fn a_document_larger_than_the_buffer_is_written_whole() {
        let big: Vec<String> = (0..20_000)
            .map(|i| format!("item {i} \"quoted\""))
            .collect();
        same(&big);
    }

    #[test]
    fn whole_numbers_are_written_as_the_float_writer_writes_them() {
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1e15,
            -1e15,
            1e16,
            1e-7,
            1_700_000_000.0,
        ];
        // Each power of ten near the bound, and its neighbours.
        for e in 0..=17 {
            let p = 10f64.powi(e);
            for v in [
                p,
                p - 1.0,
                p + 1.0,
                f64::from_bits(p.to_bits() - 1),
                f64::from_bits(p.to_bits() + 1),
            ] {
                values.extend([v, -v]);
            }
        }
        // Whole numbers of every size below the bound, and fractions among them.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 16) as i32;
            let whole = (x >> 8) as f64 % 10f64.powi(digits);
            values.extend([whole.trunc(), -whole.trunc(), whole.trunc() + 0.25]);
        }
        for v in values {
            assert_eq!(ours(&v), serde_json::to_string(&v).unwrap(), "{v:?}");
        }
        assert_eq!(whole_number(-0.0), None);
        assert_eq!(whole_number(1e15), None);
        assert_eq!(whole_number(f64::NAN), None);
        assert_eq!(
            whole_number(-999_999_999_999_999.0),
            Some(-999_999_999_999_999)
        );
    }

    proptest! {
        #[test]
        fn any_string_is_escaped_as_serde_json_escapes_it(s in any::<String>(), bytes in proptest::collection::vec(0u8..0x80, 0..40)) {
            prop_assert_eq!(ours(&s), serde_json::to_string_pretty(&s).unwrap());
            let ascii = String::from_utf8(bytes).unwrap();
            let v = serde_json::json!({ &ascii: [ascii.clone(), {"k": ascii}] });
            prop_assert_eq!(ours(&v), serde_json::to_string_pretty(&v).unwrap());
        }
    }
}
