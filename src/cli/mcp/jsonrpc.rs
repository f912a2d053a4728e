//! JSON-RPC 2.0 framing checks done before a message reaches the MCP library, so every
//! malformed message gets the error the specification names, with `"id": null` when no id
//! can be read: text that is not JSON is a parse error (-32700); JSON that is not a request,
//! notification or response is an invalid request (-32600); a batch (an array) is told apart
//! for the transport to answer or refuse.

use serde_json::{json, Value};

/// JSON-RPC "Parse error".
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "Invalid Request".
pub const INVALID_REQUEST: i64 = -32600;

/// What one incoming message is.
#[derive(Debug)]
pub enum Triage {
    /// A well-formed single message, to pass on unchanged.
    Single,
    /// A batch of messages (a non-empty array); each element is unchecked.
    Batch(Vec<Value>),
    /// A malformed message: the error response to send back.
    Reject(Value),
}

/// An error response with `id` (`null` when the request's id cannot be read).
pub fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Classifies one message's text.
pub fn triage(text: &[u8]) -> Triage {
    let value: Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(e) => {
            return Triage::Reject(error_response(
                Value::Null,
                PARSE_ERROR,
                &format!("Parse error: {e}"),
            ))
        }
    };
    match value {
        Value::Array(items) if items.is_empty() => Triage::Reject(error_response(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: an empty batch",
        )),
        Value::Array(items) => Triage::Batch(items),
        other => match check(&other) {
            Ok(()) => Triage::Single,
            Err(e) => Triage::Reject(e),
        },
    }
}

/// The id of a message if it is one JSON-RPC allows (a string or a number).
pub fn id_of(message: &Value) -> Option<Value> {
    message
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
}

/// Whether `message` is a well-formed request, notification or response; if not, the error
/// response naming what is wrong.
pub fn check(message: &Value) -> Result<(), Value> {
    let id = id_of(message).unwrap_or(Value::Null);
    let invalid = |why: &str| {
        error_response(
            id.clone(),
            INVALID_REQUEST,
            &format!("Invalid Request: {why}"),
        )
    };
    let Value::Object(m) = message else {
        return Err(invalid("a message must be a JSON object"));
    };
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid("\"jsonrpc\" must be \"2.0\""));
    }
    if let Some(present) = m.get("id") {
        if !(present.is_string() || present.is_number()) {
            return Err(invalid("\"id\" must be a string or a number"));
        }
    }
    match m.get("method") {
        Some(Value::String(_)) => match m.get("params") {
            None | Some(Value::Object(_)) | Some(Value::Array(_)) => Ok(()),
            Some(_) => Err(invalid("\"params\" must be an object or an array")),
        },
        Some(_) => Err(invalid("\"method\" must be a string")),
        None if m.contains_key("id") && (m.contains_key("result") || m.contains_key("error")) => {
            Ok(())
        }
        None => Err(invalid("no \"method\", and not a response")),
    }
}

/// Protocol versions whose transports carry JSON-RPC batches (added in 2025-03-26, removed
/// in 2025-06-18).
pub fn version_allows_batches(version: &str) -> bool {
    version == "2025-03-26"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(text: &str) -> Value {
        match triage(text.as_bytes()) {
            Triage::Reject(e) => e,
            other => panic!("{text} was not rejected: {other:?}"),
        }
    }

    #[test]
    fn text_that_is_not_json_is_a_parse_error_with_a_null_id() {
        let e = rejected("{not json");
        assert_eq!(e["error"]["code"], PARSE_ERROR);
        assert_eq!(e["id"], Value::Null);
        assert!(e.as_object().unwrap().contains_key("id"));
    }

    #[test]
    fn malformed_messages_are_invalid_requests_keeping_a_readable_id() {
        let e = rejected(r#"{"jsonrpc":"2.0","id":7}"#);
        assert_eq!(e["error"]["code"], INVALID_REQUEST);
        assert_eq!(e["id"], 7);
        let e = rejected(r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#);
        assert_eq!(e["id"], "a");
        let e = rejected(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#);
        assert_eq!(e["id"], Value::Null);
        assert_eq!(rejected("[]")["error"]["code"], INVALID_REQUEST);
        assert_eq!(rejected("3")["error"]["code"], INVALID_REQUEST);
    }

    #[test]
    fn requests_notifications_responses_and_batches_pass() {
        for ok in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"x","result":{}}"#,
        ] {
            assert!(matches!(triage(ok.as_bytes()), Triage::Single), "{ok}");
        }
        assert!(matches!(
            triage(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            Triage::Batch(v) if v.len() == 1
        ));
    }
}
