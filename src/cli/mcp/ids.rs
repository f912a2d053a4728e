//! Request ids the MCP library cannot hold. JSON-RPC 2.0 allows any number as an id, and
//! the library takes only integers that fit in 64 signed bits: it answered `1.5`, `1.0` or
//! `2^64` with an error that had no id, and a batch holding one never completed. Such an id
//! is swapped for a token of our own on the way in and put back, as the exact text the host
//! sent, on the way out.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// The ids swapped for tokens whose replies have not gone out yet.
#[derive(Debug, Default)]
pub struct Ids {
    /// Makes this process's tokens unlike any id a host would choose.
    nonce: u64,
    next: u64,
    /// Token -> the id's text as the host sent it.
    held: HashMap<String, String>,
}

/// A message's id, as text.
#[derive(Deserialize)]
struct IdOnly<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
}

impl Ids {
    /// Swaps tokens with `nonce` in them.
    pub fn new(nonce: u64) -> Ids {
        Ids {
            nonce,
            ..Ids::default()
        }
    }

    /// `message` (one JSON-RPC message's text) with its id swapped for a token when the id
    /// is a number the library cannot hold; `None` when there is nothing to swap.
    pub fn swap_in(&mut self, message: &str) -> Option<String> {
        let raw = serde_json::from_str::<IdOnly>(message).ok()?.id?.get();
        let number = raw.starts_with(|c: char| c == '-' || c.is_ascii_digit());
        if !number || raw.parse::<i64>().is_ok() {
            return None;
        }
        let mut value: Value = serde_json::from_str(message).ok()?;
        let token = format!("memoir-id-{:016x}-{}", self.nonce, self.next);
        self.next += 1;
        value["id"] = Value::String(token.clone());
        self.held.insert(token, raw.to_string());
        Some(value.to_string())
    }

    /// `line` (a reply, or a batch of them, from the library) with each token in it put
    /// back as the id the host sent.
    pub fn swap_out(&mut self, line: String) -> String {
        if self.held.is_empty() || !line.contains("memoir-id-") {
            return line;
        }
        let mut out = line;
        self.held.retain(|token, raw| {
            let quoted = format!("\"{token}\"");
            if !out.contains(&quoted) {
                return true;
            }
            out = out.replace(&quoted, raw);
            false
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_the_library_cannot_hold_go_out_as_they_came_in() {
        let mut ids = Ids::new(7);
        for id in [
            "1.5",
            "1.0",
            "18446744073709551616",
            "9223372036854775808",
            "-1e3",
        ] {
            let msg = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            let swapped = ids.swap_in(&msg).expect(id);
            let v: Value = serde_json::from_str(&swapped).unwrap();
            let token = v["id"].as_str().unwrap().to_string();
            let reply = format!(r#"{{"jsonrpc":"2.0","id":"{token}","result":{{}}}}"#);
            assert_eq!(
                ids.swap_out(reply),
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
            );
        }
        assert!(ids.held.is_empty());
    }

    #[test]
    fn ids_the_library_holds_are_left_alone() {
        let mut ids = Ids::new(7);
        for id in ["1", "-3", "9223372036854775807", r#""x""#, "null"] {
            let msg = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert_eq!(ids.swap_in(&msg), None, "{id}");
        }
        assert_eq!(ids.swap_in(r#"{"jsonrpc":"2.0","method":"ping"}"#), None);
    }
}
