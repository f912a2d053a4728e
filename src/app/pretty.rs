//! Pretty JSON as `memoir --json` prints it: serde_json's own pretty layout (two spaces
//! per level, `": "` between a name and its value), so every face prints the same bytes.
//!
//! Each [`Outcome`]'s two JSON methods are [`outcome_json!`](crate::outcome_json)'s:
//! methods of a concrete type, so the serialisation behind them (generic code, compiled
//! where it is called) is compiled with the library, at its optimisation, not in each face
//! that prints an outcome.

use std::io::{self, BufWriter, Write};

use serde::Serialize;
pub use serde_json::Value;

use super::{exit, Outcome};

/// Writes `value` as pretty JSON (serde_json's pretty layout), without a final newline.
/// `out` takes many small writes: give it a buffered writer.
pub fn write_pretty<W: Write, T: ?Sized + Serialize>(out: &mut W, value: &T) -> io::Result<()> {
    serde_json::to_writer_pretty(out, value).map_err(io::Error::from)
}

/// Writes `value` as `memoir --json` prints it: pretty, members sorted, a final newline,
/// through a buffer of its own.
pub fn write_printed(out: &mut dyn Write, value: Value) -> io::Result<()> {
    write_line(out, &crate::app::sorted(value))
}

/// [`Outcome::write_json`] of every outcome (see [`outcome_json!`](crate::outcome_json)).
pub fn write_outcome<O: Outcome>(outcome: &O, out: &mut dyn Write) -> io::Result<()> {
    if O::MEMBERS_SORTED && outcome.exit_code() == exit::OK {
        write_line(out, outcome)
    } else {
        write_printed(out, outcome.to_json())
    }
}

/// `value` as pretty JSON and a newline, through a buffer (serde_json writes a piece at a
/// time: a quote, a name, an indent).
fn write_line<T: ?Sized + Serialize>(out: &mut dyn Write, value: &T) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(64 << 10, out);
    write_pretty(&mut w, value)?;
    w.write_all(b"\n")?;
    w.flush()
}

/// [`Outcome::to_json`] of every outcome (see [`outcome_json!`](crate::outcome_json)).
pub fn outcome_value<O: Outcome>(outcome: &O) -> Value {
    let mut v = serde_json::to_value(outcome).unwrap_or(Value::Null);
    let code = outcome.exit_code();
    if code != exit::OK {
        if let Value::Object(m) = &mut v {
            m.insert("success".into(), Value::Bool(false));
            m.insert("code".into(), Value::from(code));
            if m.get("error").is_none_or(Value::is_null) {
                let text = outcome
                    .error_message()
                    .unwrap_or_else(|| format!("failed (exit {code})"));
                m.insert("error".into(), Value::String(text));
            }
        }
    }
    v
}

/// The two JSON methods of an [`Outcome`](crate::app::Outcome) implementation, written in
/// its `impl` block: `memoir::outcome_json!();` (or `outcome_json!(write_json)`: only
/// `write_json`, for an outcome with a `to_json` of its own). Methods of a concrete type,
/// they compile the serialisation with the crate that defines the outcome.
#[macro_export]
macro_rules! outcome_json {
    () => {
        $crate::outcome_json!(write_json);

        fn to_json(&self) -> $crate::app::pretty::Value {
            $crate::app::pretty::outcome_value(self)
        }
    };
    (write_json) => {
        fn write_json(&self, out: &mut dyn ::std::io::Write) -> ::std::io::Result<()> {
            $crate::app::pretty::write_outcome(self, out)
        }
    };
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
