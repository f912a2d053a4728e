//! The turn a `stop` or `pre-compact` hook hands to `capture`: the last turn of the host's
//! transcript (Claude Code's JSON Lines, or Codex's rollout JSON Lines), read from the end
//! of the file, or, when Codex gives no transcript, the last assistant message it names.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::{json, Value};

use crate::memory::turn::{Speaker, Turn};

/// Bytes read from the end of a transcript: the last turn is there.
pub const TAIL_BYTES: u64 = 4 << 20;

/// The last `TAIL_BYTES` of the file at `path` as text, without a first line cut in two.
pub fn tail(path: &Path) -> std::io::Result<String> {
    let mut f = File::open(path)?;
    let size = f.seek(SeekFrom::End(0))?;
    let start = size.saturating_sub(TAIL_BYTES);
    f.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    f.take(TAIL_BYTES).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok(if start > 0 {
        text.split_once('\n')
            .map_or(String::new(), |(_, rest)| rest.to_string())
    } else {
        text
    })
}

/// The last turn of the transcript text, when it holds an answer of the assistant.
pub fn last_turn(transcript: &str) -> Option<Turn> {
    let turn = Turn::parse(transcript).ok()?;
    turn.messages
        .iter()
        .any(|m| m.speaker == Speaker::Assistant)
        .then_some(turn)
}

/// The turn as the JSON list of messages `capture` reads.
pub fn turn_json(turn: &Turn) -> String {
    let messages: Vec<Value> = turn
        .messages
        .iter()
        .map(|m| {
            let role = match m.speaker {
                Speaker::Human => "user",
                Speaker::Assistant => "assistant",
            };
            json!({"role": role, "content": m.text})
        })
        .collect();
    Value::Array(messages).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_turn_of_either_hosts_transcript() {
        let claude = [
            json!({"type": "user", "message": {"role": "user", "content": "old"}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": "old answer"}}),
            json!({"type": "user", "message": {"role": "user", "content": "Use pytest"}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "OK"}]}}),
        ];
        let codex = [
            json!({"type": "session_meta", "payload": {"id": "s"}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Use pytest"}]}}),
            json!({"type": "response_item", "payload": {"type": "reasoning", "summary": [], "content": null}}),
            json!({"type": "event_msg", "payload": {"type": "agent_message", "message": "OK"}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "OK"}]}}),
        ];
        for lines in [&claude[..], &codex[..]] {
            let text: Vec<String> = lines.iter().map(Value::to_string).collect();
            let turn = last_turn(&text.join("\n")).expect("a turn");
            assert_eq!(
                turn_json(&turn),
                r#"[{"content":"Use pytest","role":"user"},{"content":"OK","role":"assistant"}]"#
            );
        }
        let unanswered = json!({"type": "user", "message": {"role": "user", "content": "hi"}});
        assert!(last_turn(&unanswered.to_string()).is_none());
    }
}
