//! Pretty JSON as `memoir --json` prints it: serde_json's own pretty layout (two spaces
//! per level, `": "` between a name and its value), so every face prints the same bytes.

use std::io::{self, Write};

use serde::Serialize;

/// Writes `value` as pretty JSON (serde_json's pretty layout), without a final newline.
/// `out` takes many small writes: give it a buffered writer.
pub fn write_pretty<W: Write, T: ?Sized + Serialize>(out: &mut W, value: &T) -> io::Result<()> {
    serde_json::to_writer_pretty(out, value).map_err(io::Error::from)
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
    fn printed_json_is_sorted_pretty_and_ends_in_a_newline() {
        let mut out = Vec::new();
        write_printed(
            &mut out,
            json!({"b": [1, {"d": null, "c": "x\n"}], "a": {}}),
        )
        .unwrap();
        let want = "{\n  \"a\": {},\n  \"b\": [\n    1,\n    {\n      \"c\": \"x\\n\",\n      \"d\": null\n    }\n  ]\n}\n";
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }
}
