//! Reading model replies in the one form the prompt asked for.
//!
//! Every prompt memoir sends asks for one JSON object and names its fields. A reply is
//! accepted only in that form: the object alone, with surrounding whitespace and at most one
//! code fence around the whole reply (` ```json ... ``` `). Anything else is refused with
//! [`LlmError::BadReply`]: prose, prose around JSON, a list of lines, the prompt repeated
//! back (an echo server), a JSON array or scalar. The field readers refuse a missing field
//! and one of the wrong type the same way, so that a caller treats the call as failed rather
//! than reading names out of text that was never an answer.

use serde_json::{Map, Value};

use super::LlmError;

/// Characters of a refused reply quoted in the error.
pub const EXCERPT_CHARS: usize = 80;

/// A JSON object, as a reply holds it.
pub type Object = Map<String, Value>;

/// The start of `reply` on one line, quoted, for error messages.
pub fn excerpt(reply: &str) -> String {
    let one_line = reply.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = one_line.chars().take(EXCERPT_CHARS).collect();
    if one_line.chars().count() > EXCERPT_CHARS {
        out.push('…');
    }
    format!("{out:?}")
}

fn bad(why: impl Into<String>) -> LlmError {
    LlmError::BadReply(why.into())
}

/// The reply without one code fence around the whole of it, trimmed.
pub fn unfenced(reply: &str) -> &str {
    let t = reply.trim();
    if t.len() >= 6 && t.starts_with("```") && t.ends_with("```") {
        // The opening line carries the fence and its language tag.
        let inner = &t[..t.len() - 3];
        return inner.split_once('\n').map_or("", |(_, rest)| rest).trim();
    }
    t
}

/// The JSON object that is the whole reply (see the module documentation), or
/// [`LlmError::BadReply`] quoting the reply's start.
pub fn json_object(reply: &str) -> Result<Object, LlmError> {
    let body = unfenced(reply);
    if body.is_empty() {
        return Err(bad("the reply is empty"));
    }
    match serde_json::from_str::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(bad(format!(
            "the reply is {} in JSON, not an object: {}",
            kind(&other),
            excerpt(reply)
        ))),
        Err(_) => Err(bad(format!(
            "the reply is not a JSON object: {}",
            excerpt(reply)
        ))),
    }
}

/// A JSON value's type, with its article (`an array`).
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The field `name` of `obj`; missing is [`LlmError::BadReply`].
pub fn field<'a>(obj: &'a Object, name: &str) -> Result<&'a Value, LlmError> {
    obj.get(name)
        .ok_or_else(|| bad(format!("the field \"{name}\" is missing")))
}

/// The field `name` as a list of strings (each trimmed); missing, not an array, or holding
/// anything but strings is [`LlmError::BadReply`].
pub fn string_list(obj: &Object, name: &str) -> Result<Vec<String>, LlmError> {
    let Value::Array(items) = field(obj, name)? else {
        return Err(bad(format!(
            "the field \"{name}\" is {}, not an array of strings",
            kind(&obj[name])
        )));
    };
    items
        .iter()
        .map(|i| match i {
            Value::String(s) => Ok(s.trim().to_string()),
            other => Err(bad(format!(
                "the field \"{name}\" holds {}, not only strings",
                kind(other)
            ))),
        })
        .collect()
}

/// The field `name` as a string; missing or of another type is [`LlmError::BadReply`].
pub fn string(obj: &Object, name: &str) -> Result<String, LlmError> {
    match field(obj, name)? {
        Value::String(s) => Ok(s.clone()),
        other => Err(bad(format!(
            "the field \"{name}\" is {}, not a string",
            kind(other)
        ))),
    }
}

/// The field `name` as a number within `min..=max`; missing, of another type (a numeric
/// string included) or out of range is [`LlmError::BadReply`].
pub fn number_in(obj: &Object, name: &str, min: f64, max: f64) -> Result<f64, LlmError> {
    match field(obj, name)? {
        Value::Number(n) => match n.as_f64() {
            Some(x) if (min..=max).contains(&x) => Ok(x),
            _ => Err(bad(format!(
                "the field \"{name}\" is {n}, not within {min} to {max}"
            ))),
        },
        other => Err(bad(format!(
            "the field \"{name}\" is {}, not a number",
            kind(other)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(reply: &str) -> String {
        match json_object(reply) {
            Err(LlmError::BadReply(m)) => m,
            other => panic!("{reply:?} gave {other:?}"),
        }
    }

    #[test]
    fn only_a_whole_object_is_a_reply() {
        let want = serde_json::json!({"keys": ["a.b"]});
        for reply in [
            "{\"keys\": [\"a.b\"]}",
            "  {\"keys\": [\"a.b\"]}\n",
            "```json\n{\"keys\": [\"a.b\"]}\n```",
            "```\n{\"keys\": [\"a.b\"]}\n```",
        ] {
            assert_eq!(
                Value::Object(json_object(reply).unwrap()),
                want,
                "{reply:?}"
            );
        }
        assert!(refused("").contains("empty"));
        assert!(refused("```\n```").contains("empty"));
        assert!(refused("[\"a.b\"]").contains("array"));
        assert!(refused("\"a.b\"").contains("string"));
        for prose in [
            "default:a.b\ndefault:c.d",
            "- a.b",
            "NONE",
            "Here it is: {\"keys\": [\"a.b\"]}",
            "{\"keys\": [\"a.b\"]} Hope that helps.",
            "[echo] model=m\nUser: Question: q\n\nMemories:\n- default:a.b: x\n{\"keys\": []}",
        ] {
            assert!(refused(prose).contains("not a JSON object"), "{prose:?}");
        }
        let long = "word ".repeat(100);
        assert!(refused(&long).ends_with("…\""));
    }

    #[test]
    fn fields_have_their_types() {
        let o = json_object(
            r#"{"keys": [" a.b ", "c"], "n": 0.5, "s": "text", "mixed": ["a", 1], "num": "0.5"}"#,
        )
        .unwrap();
        assert_eq!(string_list(&o, "keys").unwrap(), ["a.b", "c"]);
        assert_eq!(string(&o, "s").unwrap(), "text");
        assert_eq!(number_in(&o, "n", 0.0, 1.0).unwrap(), 0.5);
        fn err<T: std::fmt::Debug>(r: Result<T, LlmError>) -> String {
            match r {
                Err(LlmError::BadReply(m)) => m,
                other => panic!("{other:?}"),
            }
        }
        assert!(err(string_list(&o, "missing")).contains("\"missing\" is missing"));
        assert!(err(string_list(&o, "s")).contains("a string, not an array"));
        assert!(err(string_list(&o, "mixed")).contains("holds a number"));
        assert!(err(string(&o, "keys")).contains("an array, not a string"));
        assert!(err(number_in(&o, "num", 0.0, 1.0)).contains("a string, not a number"));
        assert!(err(number_in(&o, "n", 0.6, 1.0)).contains("not within"));
    }
}
