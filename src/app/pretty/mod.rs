//! Pretty JSON as `memoir --json` prints it: serde_json's pretty layout (two spaces per
//! level), written with one call per line break and indent instead of one per level, and
//! strings scanned eight bytes at a time ([`ser`]), which matters for outputs of hundreds
//! of kilobytes (a diff of a thousand records).

mod direct;
mod ser;

pub(crate) use direct::Direct;

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::Formatter;

/// A line break followed by the deepest indent written in one piece; deeper levels take
/// more than one write.
const BREAK: &[u8] = b"\n                                                                ";

/// serde_json's pretty formatter, byte for byte, with fewer writes.
#[derive(Debug, Default)]
struct Pretty {
    level: usize,
    has_value: bool,
}

impl Pretty {
    fn line<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        let mut spaces = self.level * 2;
        let first = spaces.min(BREAK.len() - 1);
        w.write_all(&BREAK[..1 + first])?;
        spaces -= first;
        while spaces > 0 {
            let n = spaces.min(BREAK.len() - 1);
            w.write_all(&BREAK[1..1 + n])?;
            spaces -= n;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.line(w)?;
        }
        w.write_all(bracket)
    }

    fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.line(w)
    }
}

impl Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes `value` as pretty JSON (serde_json's pretty layout), without a final newline.
pub fn write_pretty<W: Write, T: ?Sized + Serialize>(out: &mut W, value: &T) -> io::Result<()> {
    let mut ser = ser::Ser::new(out);
    value.serialize(&mut ser).map_err(io::Error::other)?;
    ser.finish()
}

/// Writes `value` as `memoir --json` prints it: pretty, members sorted, a final newline.
pub fn write_printed<W: Write>(out: &mut W, value: serde_json::Value) -> io::Result<()> {
    write_pretty(out, &crate::app::sorted(value))?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_layout_is_serde_jsons_pretty_one() {
        let mut deep = json!("leaf");
        for i in 0..40 {
            deep = if i % 2 == 0 {
                json!([deep, i, {}])
            } else {
                json!({"k": deep, "e": [], "n": null})
            };
        }
        let values = [
            json!({}),
            json!([]),
            json!(1.5),
            json!({"a": [1, {"b": "x\n\"y\""}], "c": {"d": [], "e": {}}, "f": [[], [[]]]}),
            deep,
        ];
        for v in values {
            let mut ours = Vec::new();
            write_pretty(&mut ours, &v).unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string_pretty(&v).unwrap()
            );
        }
    }
}
