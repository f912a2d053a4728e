//! One turn of a conversation, as `capture` reads it: what the human said and what the
//! assistant answered, from the shapes agent hosts and scripts produce.
//!
//! Accepted ([`Turn::parse`]):
//! - text that starts with a speaker marker: `[Human] ... [Assistant] ...` (`[User]` is the
//!   human too; markers may start anywhere, case does not matter);
//! - JSON: one message `{"role": "user", "content": ...}`; a list of messages; an object
//!   with a `messages` list (a chat request); a transcript line of an agent host, whose
//!   message is under `message` (`{"type": "user", "message": {"role": ..., "content":
//!   ...}}`, Claude Code) or `payload` (`{"type": "response_item", "payload": {...}}`,
//!   Codex); or JSON Lines, one of those per line.
//!
//! Roles `user` and `human` are the human; `assistant`, `ai` and `model` the assistant;
//! `system`, `developer`, `tool` and `function` messages are left out. A content is a string
//! or a list of blocks, whose text blocks (`{"type": "text", "text": ...}`, plain strings)
//! are kept and whose other blocks (tool calls and results, images, thinking) are left out.
//! In JSON Lines, a line that is no message but names its `type` (host metadata such as a
//! summary) is skipped. When the input holds several turns, the last one is taken: from the
//! last human message with text to the end. Anything else is refused with
//! [`MemoryError::Turn`] saying what was expected.

use serde_json::Value;

use super::MemoryError;

/// Who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    /// The user.
    Human,
    /// The agent.
    Assistant,
}

impl Speaker {
    /// `[Human]` or `[Assistant]`.
    pub fn marker(self) -> &'static str {
        match self {
            Speaker::Human => "[Human]",
            Speaker::Assistant => "[Assistant]",
        }
    }
}

/// One message of a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Who said it.
    pub speaker: Speaker,
    /// What was said (trimmed, not empty).
    pub text: String,
}

/// One turn: its messages in order, at least one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// The messages.
    pub messages: Vec<Message>,
}

const EXPECTED: &str = "expected '[Human] ... [Assistant] ...' text, or JSON: a message \
{\"role\", \"content\"}, a list of messages, {\"messages\": [...]}, a host transcript line \
{\"type\", \"message\"}, or JSON Lines of those";

fn bad(why: impl std::fmt::Display) -> MemoryError {
    MemoryError::Turn(why.to_string())
}

const MARKERS: [(&str, Speaker); 3] = [
    ("[human]", Speaker::Human),
    ("[user]", Speaker::Human),
    ("[assistant]", Speaker::Assistant),
];

/// The marker at the start of `s` (ASCII case ignored), with its length.
fn marker_at(s: &str) -> Option<(Speaker, usize)> {
    MARKERS.iter().find_map(|(m, sp)| {
        s.get(..m.len())
            .filter(|head| head.eq_ignore_ascii_case(m))
            .map(|_| (*sp, m.len()))
    })
}

impl Turn {
    /// Reads a turn (see the module documentation).
    pub fn parse(input: &str) -> Result<Turn, MemoryError> {
        let t = input.trim_start_matches('\u{feff}').trim();
        if t.is_empty() {
            return Err(bad(format!("the input is empty; {EXPECTED}")));
        }
        let messages = if marker_at(t).is_some() {
            from_text(t)
        } else if t.starts_with('{') || t.starts_with('[') {
            from_json(t)?
        } else {
            return Err(bad(format!(
                "it starts with neither a speaker marker nor JSON; {EXPECTED}"
            )));
        };
        let start = messages
            .iter()
            .rposition(|m| m.speaker == Speaker::Human)
            .unwrap_or(0);
        let messages: Vec<Message> = messages.into_iter().skip(start).collect();
        if messages.is_empty() {
            return Err(bad(
                "it holds no text from the human or the assistant (only tool calls, system \
                 messages or empty contents)",
            ));
        }
        Ok(Turn { messages })
    }

    /// The turn as text, one `[Speaker] text` paragraph per message; longer than
    /// `max_chars` characters, its start (a third) and end (the rest) with a note of how
    /// much was left out between them.
    pub fn transcript(&self, max_chars: usize) -> String {
        let full: Vec<String> = self
            .messages
            .iter()
            .map(|m| format!("{} {}", m.speaker.marker(), m.text))
            .collect();
        let full = full.join("\n");
        let n = full.chars().count();
        if n <= max_chars {
            return full;
        }
        let head = max_chars / 3;
        let tail = max_chars - head;
        let start: String = full.chars().take(head).collect();
        let end: String = full.chars().skip(n - tail).collect();
        format!(
            "{start}\n[... {} characters left out ...]\n{end}",
            n - head - tail
        )
    }
}

/// The messages of marked text (which starts with a marker).
fn from_text(t: &str) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    let mut current: Option<(Speaker, usize)> = None;
    let mut i = 0;
    let push = |out: &mut Vec<Message>, sp: Speaker, text: &str| {
        let text = text.trim();
        if !text.is_empty() {
            out.push(Message {
                speaker: sp,
                text: text.to_string(),
            });
        }
    };
    while i < t.len() {
        if t.as_bytes()[i] == b'[' {
            if let Some((sp, len)) = marker_at(&t[i..]) {
                if let Some((prev, start)) = current {
                    push(&mut out, prev, &t[start..i]);
                }
                current = Some((sp, i + len));
                i += len;
                continue;
            }
        }
        i += 1;
    }
    if let Some((sp, start)) = current {
        push(&mut out, sp, &t[start..]);
    }
    out
}

/// The messages of JSON (one value, or JSON Lines).
fn from_json(t: &str) -> Result<Vec<Message>, MemoryError> {
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        return messages_of(&v, false);
    }
    let mut out = Vec::new();
    let mut lines = 0;
    for (n, line) in t.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        lines += 1;
        let v: Value = serde_json::from_str(line)
            .map_err(|e| bad(format!("line {} is not JSON ({e}); {EXPECTED}", n + 1)))?;
        out.extend(messages_of(&v, true).map_err(|e| match e {
            MemoryError::Turn(m) => bad(format!("line {}: {m}", n + 1)),
            other => other,
        })?);
    }
    if lines < 2 {
        return Err(bad(format!("it is not JSON; {EXPECTED}")));
    }
    Ok(out)
}

/// The messages of one JSON value. `lenient`: an object that is no message but names its
/// `type` is skipped (host metadata in JSON Lines).
fn messages_of(v: &Value, lenient: bool) -> Result<Vec<Message>, MemoryError> {
    match v {
        Value::Array(items) => {
            let mut out = Vec::new();
            for item in items {
                if !item.is_object() {
                    return Err(bad(format!(
                        "a list of messages holds something else than objects; {EXPECTED}"
                    )));
                }
                out.extend(message_of(item, lenient)?);
            }
            Ok(out)
        }
        Value::Object(o) => match o.get("messages") {
            Some(list @ Value::Array(_)) if !o.contains_key("role") => messages_of(list, lenient),
            _ => Ok(message_of(v, lenient)?.into_iter().collect()),
        },
        _ => Err(bad(format!("a JSON {} is not a turn; {EXPECTED}", kind(v)))),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// One message object (or a host transcript line holding one under `message`); `None` for
/// a message that is left out (a system or tool message, no text).
fn message_of(v: &Value, lenient: bool) -> Result<Option<Message>, MemoryError> {
    // Claude Code's transcript lines hold the message under `message`, Codex's rollout
    // lines under `payload`.
    let inner = match v.get("message").or_else(|| v.get("payload")) {
        Some(m @ Value::Object(_)) => m,
        _ => v,
    };
    let role = inner
        .get("role")
        .or_else(|| v.get("role"))
        .or_else(|| v.get("type"))
        .and_then(Value::as_str);
    let has_content = inner.get("content").is_some();
    let speaker = match role.map(str::to_ascii_lowercase).as_deref() {
        Some("user" | "human") => Speaker::Human,
        Some("assistant" | "ai" | "model") => Speaker::Assistant,
        Some("system" | "developer" | "tool" | "function") => return Ok(None),
        _ if lenient && !has_content && v.get("type").is_some() => return Ok(None),
        // A line that names only its `type` (a Codex rollout's reasoning item) is no message.
        Some(_) if lenient && inner.get("role").is_none() && v.get("role").is_none() => {
            return Ok(None)
        }
        Some(other) => {
            return Err(bad(format!(
                "unknown role {other:?} (user, human, assistant, ai, model, system, tool)"
            )))
        }
        None => return Err(bad(format!("a message has no \"role\"; {EXPECTED}"))),
    };
    let text = match inner.get("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let mut parts = Vec::new();
            for b in blocks {
                match b {
                    Value::String(s) => parts.push(s.as_str()),
                    Value::Object(o) => {
                        let ty = o.get("type").and_then(Value::as_str);
                        let text = o.get("text").and_then(Value::as_str);
                        if let (None | Some("text" | "input_text" | "output_text"), Some(t)) =
                            (ty, text)
                        {
                            parts.push(t)
                        }
                    }
                    other => {
                        return Err(bad(format!(
                            "a content block is a {}, not text or an object",
                            kind(other)
                        )))
                    }
                }
            }
            parts.join("\n")
        }
        Some(other) => {
            return Err(bad(format!(
                "a message's content is a {}, not text or a list of blocks",
                kind(other)
            )))
        }
    };
    let text = text.trim();
    Ok((!text.is_empty()).then(|| Message {
        speaker,
        text: text.to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(s: &str) -> Vec<(Speaker, String)> {
        Turn::parse(s)
            .unwrap_or_else(|e| panic!("{s:?}: {e}"))
            .messages
            .into_iter()
            .map(|m| (m.speaker, m.text))
            .collect()
    }

    fn refused(s: &str) -> String {
        match Turn::parse(s) {
            Err(MemoryError::Turn(m)) => m,
            other => panic!("{s:?} gave {other:?}"),
        }
    }

    use Speaker::{Assistant as A, Human as H};

    #[test]
    fn marked_text() {
        let want = vec![
            (H, "Use pytest".to_string()),
            (A, "Noted, pytest it is.".into()),
        ];
        assert_eq!(
            turn("[Human] Use pytest [Assistant] Noted, pytest it is."),
            want
        );
        assert_eq!(
            turn("\n[user]\nUse pytest\n\n[ASSISTANT]\nNoted, pytest it is.\n"),
            want
        );
        // The last turn of several.
        assert_eq!(
            turn("[Human] a [Assistant] b [Human] Use pytest [Assistant] Noted, pytest it is."),
            want
        );
        assert_eq!(turn("[Assistant] only me"), vec![(A, "only me".into())]);
        assert_eq!(
            turn("[Human] see [x] and [Human"),
            vec![(H, "see [x] and [Human".into())]
        );
    }

    #[test]
    fn json_shapes() {
        let want = vec![(H, "Use pytest".to_string()), (A, "Noted.".into())];
        for s in [
            r#"[{"role": "user", "content": "Use pytest"}, {"role": "assistant", "content": "Noted."}]"#,
            r#"{"model": "m", "messages": [{"role": "system", "content": "be nice"}, {"role": "user", "content": [{"type": "text", "text": "Use pytest"}]}, {"role": "assistant", "content": [{"type": "tool_use", "id": "x"}, {"type": "text", "text": "Noted."}]}]}"#,
            "{\"type\": \"summary\", \"summary\": \"s\"}\n{\"type\": \"user\", \"message\": {\"role\": \"user\", \"content\": \"Use pytest\"}}\n{\"type\": \"assistant\", \"message\": {\"role\": \"assistant\", \"content\": [{\"type\": \"text\", \"text\": \"Noted.\"}]}}\n{\"type\": \"user\", \"message\": {\"role\": \"user\", \"content\": [{\"type\": \"tool_result\", \"content\": \"ok\"}]}}\n",
        ] {
            assert_eq!(turn(s), want, "{s}");
        }
        assert_eq!(
            turn(r#"{"role": "human", "content": ["a", "b"]}"#),
            vec![(H, "a\nb".into())]
        );
        assert_eq!(
            turn(r#"{"role": "assistant", "content": "x", "messages": 3}"#),
            vec![(A, "x".into())]
        );
    }

    #[test]
    fn other_shapes_are_refused() {
        for (s, why) in [
            ("", "empty"),
            ("   \n", "empty"),
            ("just some words", "neither a speaker marker nor JSON"),
            ("42", "neither"),
            ("{\"content\": \"x\"}", "no \"role\""),
            ("{\"role\": \"wizard\", \"content\": \"x\"}", "unknown role"),
            ("[1, 2]", "something else than objects"),
            ("\"text\"", "neither"),
            (
                "{\"role\": \"user\", \"content\": 5}",
                "content is a number",
            ),
            (
                "{\"role\": \"user\", \"content\": [5]}",
                "block is a number",
            ),
            ("{not json", "not JSON"),
            (
                "{\"role\": \"user\", \"content\": \"a\"}\n{broken",
                "line 2 is not JSON",
            ),
            ("{\"role\": \"tool\", \"content\": \"x\"}", "no text"),
            ("[Human]   [Assistant]  ", "no text"),
            (
                "{\"type\": \"summary\"}\n{\"type\": \"summary\"}",
                "no text",
            ),
        ] {
            let m = refused(s);
            assert!(m.contains(why), "{s:?}: {m}");
        }
    }

    #[test]
    fn long_turns_keep_start_and_end() {
        let t = Turn::parse(&format!(
            "[Human] {} [Assistant] {}",
            "a".repeat(500),
            "b".repeat(500)
        ))
        .unwrap();
        let s = t.transcript(300);
        assert!(s.starts_with("[Human] aaa"));
        assert!(s.ends_with("bbb"));
        assert!(s.contains("characters left out"));
        assert!(s.chars().count() < 360);
        let short = Turn::parse("[Human] hi [Assistant] hello").unwrap();
        assert_eq!(short.transcript(300), "[Human] hi\n[Assistant] hello");
    }
}
