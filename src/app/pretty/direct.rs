//! Printed JSON written member by member, for the shapes printed by the thousand (a record,
//! a diff's change): the same bytes as the serde path ([`super::write_pretty`]) through the
//! same layout state and string writer, without serde's calls in between or a scan of each
//! member name for characters to escape (the names are this crate's own, and plain). A
//! diff of a thousand records spent a quarter of its instructions in that path.

use std::io::{self, Write};

use serde::ser::Serializer;
use serde::Serialize;
use serde_json::ser::Formatter;

use super::ser::Ser;
use crate::memory::{Entry, Record, SCHEMA_VERSION};

/// A writer of printed JSON (serde_json's pretty layout) called member by member. Each
/// value is written after its [`Direct::key`] or [`Direct::element`]; each object or array
/// opened is closed.
pub struct Direct<'w, W: Write> {
    ser: Ser<'w, W>,
}

fn io(e: serde_json::Error) -> io::Error {
    io::Error::other(e)
}

impl<'w, W: Write> Direct<'w, W> {
    /// A writer to `out`, gathering its writes in a buffer of its own.
    pub fn new(out: &'w mut W) -> Self {
        Direct { ser: Ser::new(out) }
    }

    /// Ends the document with a line break and writes what is left.
    pub fn finish_line(mut self) -> io::Result<()> {
        self.ser.w.push(b'\n');
        self.ser.finish()
    }

    /// Hands what is gathered to the output once there is enough of it (call between
    /// large items).
    pub fn spill(&mut self) -> io::Result<()> {
        self.ser.spill().map_err(io)
    }

    /// Marks the value just written, as serde_json's formatter does at a value's end.
    fn written(&mut self) {
        self.ser.f.has_value = true;
    }

    /// Opens an object.
    pub fn open_object(&mut self) -> io::Result<()> {
        self.ser.f.begin_object(&mut self.ser.w)
    }

    /// Closes the innermost object.
    pub fn close_object(&mut self) -> io::Result<()> {
        self.ser.f.end_object(&mut self.ser.w)?;
        self.written();
        Ok(())
    }

    /// Opens an array.
    pub fn open_array(&mut self) -> io::Result<()> {
        self.ser.f.begin_array(&mut self.ser.w)
    }

    /// Closes the innermost array.
    pub fn close_array(&mut self) -> io::Result<()> {
        self.ser.f.end_array(&mut self.ser.w)?;
        self.written();
        Ok(())
    }

    /// Starts member `name` of the open object (`first`: its first member). `name` is
    /// written as it is: it must need no escape.
    pub fn key(&mut self, first: bool, name: &'static str) -> io::Result<()> {
        debug_assert!(name.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\'));
        let Ser { w, f, .. } = &mut self.ser;
        f.begin_object_key(w, first)?;
        w.push(b'"');
        w.extend_from_slice(name.as_bytes());
        w.extend_from_slice(b"\": ");
        Ok(())
    }

    /// Starts an element of the open array (`first`: its first).
    pub fn element(&mut self, first: bool) -> io::Result<()> {
        self.ser.f.begin_array_value(&mut self.ser.w, first)
    }

    /// A string.
    pub fn str(&mut self, s: &str) -> io::Result<()> {
        self.ser.str(s).map_err(io)?;
        self.written();
        Ok(())
    }

    /// A number as serde writes an `f64` (whole ones with `.0`, not finite as null).
    pub fn f64(&mut self, v: f64) -> io::Result<()> {
        (&mut self.ser).serialize_f64(v).map_err(io)?;
        self.written();
        Ok(())
    }

    /// An unsigned integer.
    pub fn u64(&mut self, v: u64) -> io::Result<()> {
        self.ser.f.write_u64(&mut self.ser.w, v)?;
        self.written();
        Ok(())
    }

    /// `true` or `false`.
    pub fn bool(&mut self, v: bool) -> io::Result<()> {
        self.ser.f.write_bool(&mut self.ser.w, v)?;
        self.written();
        Ok(())
    }

    /// `null`.
    pub fn null(&mut self) -> io::Result<()> {
        self.ser.f.write_null(&mut self.ser.w)?;
        self.written();
        Ok(())
    }

    /// Any value, through serde, in the same layout.
    pub fn serde<T: ?Sized + Serialize>(&mut self, v: &T) -> io::Result<()> {
        v.serialize(&mut self.ser).map_err(io)?;
        self.written();
        Ok(())
    }

    /// A record in its JSON shape ([`crate::memory::RecordJson`]), members sorted.
    pub fn record(&mut self, r: &Record) -> io::Result<()> {
        self.open_object()?;
        self.key(true, "confidence")?;
        self.f64(r.confidence)?;
        self.key(false, "content")?;
        r.with_content(|c| self.str(c))?;
        self.key(false, "entries")?;
        self.open_array()?;
        for (i, e) in r.entries.iter().enumerate() {
            self.element(i == 0)?;
            self.entry(e)?;
        }
        self.close_array()?;
        self.key(false, "key")?;
        self.str(&r.key)?;
        self.key(false, "namespace")?;
        self.str(&r.namespace)?;
        self.key(false, "related_keys")?;
        self.open_array()?;
        for (i, k) in r.related_keys.iter().enumerate() {
            self.element(i == 0)?;
            self.str(k)?;
        }
        self.close_array()?;
        self.key(false, "schema_version")?;
        self.u64(SCHEMA_VERSION)?;
        self.key(false, "timestamp")?;
        self.f64(r.timestamp)?;
        self.close_object()
    }

    /// An entry in its JSON shape ([`crate::memory::EntryJson`]), members sorted.
    fn entry(&mut self, e: &Entry) -> io::Result<()> {
        self.open_object()?;
        if let Some(actor) = &e.actor {
            self.key(true, "actor")?;
            self.str(actor)?;
        }
        self.key(e.actor.is_none(), "confidence")?;
        self.f64(e.confidence)?;
        self.key(false, "content")?;
        self.str(&e.content)?;
        if let Some(source) = &e.source {
            self.key(false, "source")?;
            self.str(source)?;
        }
        self.key(false, "status")?;
        self.str(e.status.as_str())?;
        self.key(false, "timestamp")?;
        self.f64(e.timestamp)?;
        self.close_object()
    }
}

#[cfg(test)]
mod tests {
    use super::super::ser::SPILL;
    use super::*;
    use crate::key::Key;
    use crate::memory::{RecordJson, Status};
    use proptest::prelude::*;

    fn direct(r: &Record) -> String {
        let mut out = Vec::new();
        let mut d = Direct::new(&mut out);
        d.open_array().unwrap();
        d.element(true).unwrap();
        d.record(r).unwrap();
        d.element(false).unwrap();
        d.null().unwrap();
        d.close_array().unwrap();
        d.finish_line().unwrap();
        String::from_utf8(out).unwrap()
    }

    fn serde_path(r: &Record) -> String {
        let v = serde_json::json!([serde_json::to_value(RecordJson(r)).unwrap(), null]);
        let mut out = Vec::new();
        super::super::write_printed(&mut out, v).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z .]{0,12}",
            any::<String>(),
            Just("quote \" back \\ tab \t nl \n ctl \u{1} é 😀".to_string()),
        ]
    }

    fn number() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(1.0),
            Just(1e15),
            Just(1_700_000_000.0),
            Just(f64::NAN),
            any::<f64>(),
            (0u32..2_000_000_000).prop_map(f64::from),
        ]
    }

    prop_compose! {
        fn entry()(content in text(), confidence in number(), timestamp in number(),
                   superseded in any::<bool>(), source in proptest::option::of(text()),
                   actor in proptest::option::of(text())) -> Entry {
            Entry {
                content, confidence, timestamp, source, actor,
                status: if superseded { Status::Superseded } else { Status::Active },
            }
        }
    }

    prop_compose! {
        fn record()(entries in proptest::collection::vec(entry(), 0..4),
                    related in proptest::collection::vec(text(), 0..3),
                    confidence in number(), timestamp in number(), path in text(),
                    namespace in text()) -> Record {
            Record { key: path, namespace, confidence, timestamp, related_keys: related, entries }
        }
    }

    #[test]
    fn a_record_reads_as_the_serde_path_writes_it() {
        let key = Key::new("work", "a.b").unwrap();
        let mut r = Record::new(&key, Entry::new("old", 0.5, 10.0), vec!["c.d".into()]);
        r.entries[0].status = Status::Superseded;
        let mut e = Entry::new("new \"one\"", 0.75, 20.5);
        e.source = Some("cli".into());
        e.actor = Some("agent-7".into());
        r.entries.push(e);
        assert_eq!(direct(&r), serde_path(&r));
        r.entries.clear();
        r.related_keys.clear();
        assert_eq!(direct(&r), serde_path(&r));
    }

    /// Records every write it is given.
    #[derive(Default)]
    struct Writes(Vec<Vec<u8>>);

    impl Write for Writes {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.push(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_long_document_is_written_in_whole_spills_then_the_rest() {
        let key = Key::new("work", "a.b").unwrap();
        let r = Record::new(&key, Entry::new(&"x".repeat(300), 1.0, 10.0), vec![]);
        let mut writes = Writes::default();
        let mut d = Direct::new(&mut writes);
        d.open_array().unwrap();
        for i in 0..1_000 {
            d.element(i == 0).unwrap();
            d.record(&r).unwrap();
            d.spill().unwrap();
        }
        d.close_array().unwrap();
        d.finish_line().unwrap();
        let (last, whole) = writes.0.split_last().unwrap();
        assert!(whole.len() > 10);
        assert!(whole.iter().all(|w| w.len() % SPILL == 0), "a ragged write");
        assert!(!last.is_empty());
        let text = writes.0.concat();
        let want = serde_json::to_string_pretty(&vec![
            serde_json::to_value(RecordJson(&r)).unwrap();
            1_000
        ])
        .unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), want + "\n");
    }

    proptest! {
        #[test]
        fn any_record_reads_as_the_serde_path_writes_it(r in record()) {
            prop_assert_eq!(direct(&r), serde_path(&r));
        }
    }
}
