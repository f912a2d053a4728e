//! The model call of the `llm_merge` policy: the existing memory and the incoming one are
//! given to a model, which answers with one merged memory.
//!
//! The reply is used as plain text: surrounding whitespace and a code fence around the whole
//! reply are removed, and a JSON object holding the text (`{"content": ...}`, `merged`,
//! `memory`) is unwrapped. An empty reply, or one the provider cut at its token limit, is
//! refused ([`ModelError::BadMerge`]), as are inputs too long to merge reliably
//! ([`MAX_MERGE_INPUT_CHARS`]); the caller then falls back (see
//! [`super::write_merged`] for how a merge is recorded).

use serde_json::Value;

use super::ModelError;
use crate::key::Key;
use crate::llm::Llm;

/// Longest combined input (existing plus incoming content, in characters) sent for a merge.
pub const MAX_MERGE_INPUT_CHARS: usize = 12_000;

const SYSTEM: &str = "You maintain an AI agent's memory. Merge an existing memory and a new \
one into a single memory: keep every fact that still holds, let the new memory win where \
they conflict, remove repetition, stay concise. Answer with the merged memory's text only, \
no preamble, no quotes, no markdown fences.";

/// A merge the model produced, and the exchange that produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeReply {
    /// The merged memory's text.
    pub content: String,
    /// The prompt sent.
    pub prompt: String,
    /// The reply received.
    pub reply: String,
}

/// The merge prompt for the memory at `key`.
pub fn merge_prompt(key: &Key, existing: &str, incoming: &str) -> String {
    format!(
        "Memory key: {}\n\nExisting memory:\n<<<\n{existing}\n>>>\n\nNew memory:\n<<<\n{incoming}\n>>>\n\n\
         Write the single merged memory.",
        key.path()
    )
}

/// Asks `llm` to merge `existing` (the record's current content) with `incoming` at `key`.
pub fn merge_contents(
    llm: &dyn Llm,
    key: &Key,
    existing: &str,
    incoming: &str,
) -> Result<MergeReply, ModelError> {
    let size = existing.chars().count() + incoming.chars().count();
    if size > MAX_MERGE_INPUT_CHARS {
        return Err(ModelError::BadMerge(format!(
            "the memories are too long to merge by model ({size} characters, at most {MAX_MERGE_INPUT_CHARS})"
        )));
    }
    let prompt = merge_prompt(key, existing, incoming);
    let answer = llm.answer(SYSTEM, &prompt)?;
    if answer.truncated {
        return Err(ModelError::BadMerge(
            "the answer was cut at the provider's token limit".into(),
        ));
    }
    let content = merged_text(&answer.text)
        .ok_or_else(|| ModelError::BadMerge("the answer is empty".into()))?;
    Ok(MergeReply {
        content,
        prompt,
        reply: answer.text,
    })
}

/// The merged memory a reply holds, if any (see the module documentation).
pub fn merged_text(reply: &str) -> Option<String> {
    let mut t = reply.trim();
    if t.starts_with("```") && t.ends_with("```") && t.len() >= 6 {
        // A fence around the whole reply: drop the opening line (with its language tag)
        // and the closing fence.
        let inner = &t[..t.len() - 3];
        t = inner.split_once('\n').map_or("", |(_, rest)| rest).trim();
    }
    if t.starts_with('{') {
        if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(t) {
            if let Some(s) = ["content", "merged", "memory", "text"]
                .iter()
                .find_map(|f| m.get(*f).and_then(Value::as_str))
            {
                let s = s.trim();
                return (!s.is_empty()).then(|| s.to_string());
            }
        }
    }
    (!t.is_empty()).then(|| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Completion, LlmError};

    #[test]
    fn replies_become_text() {
        assert_eq!(
            merged_text("  merged text \n").as_deref(),
            Some("merged text")
        );
        assert_eq!(
            merged_text("```text\nline one\nline two\n```").as_deref(),
            Some("line one\nline two")
        );
        assert_eq!(
            merged_text(r#"{"content": " both facts "}"#).as_deref(),
            Some("both facts")
        );
        assert_eq!(
            merged_text("{not json} but prose").as_deref(),
            Some("{not json} but prose")
        );
        for empty in ["", "   \n", "```\n```", r#"{"content": ""}"#] {
            assert_eq!(merged_text(empty), None, "{empty:?}");
        }
    }

    struct Fixed(Completion);

    impl Llm for Fixed {
        fn complete(&self, _: &str, _: &str) -> Result<String, LlmError> {
            Ok(self.0.text.clone())
        }
        fn answer(&self, _: &str, _: &str) -> Result<Completion, LlmError> {
            Ok(self.0.clone())
        }
        fn describe(&self) -> String {
            "fixed".into()
        }
    }

    fn fixed(text: &str, truncated: bool) -> Fixed {
        Fixed(Completion {
            text: text.into(),
            truncated,
        })
    }

    #[test]
    fn merges_and_refusals() {
        let key = Key::new("default", "workflow.deploy").unwrap();
        let m = merge_contents(&fixed("A and B", false), &key, "A", "B").unwrap();
        assert_eq!(m.content, "A and B");
        assert!(m.prompt.contains("Existing memory:\n<<<\nA\n>>>"));
        assert!(m.prompt.contains("New memory:\n<<<\nB\n>>>"));
        assert!(m.prompt.contains("workflow.deploy"));
        assert!(matches!(
            merge_contents(&fixed("A and", true), &key, "A", "B"),
            Err(ModelError::BadMerge(_))
        ));
        assert!(matches!(
            merge_contents(&fixed(" ", false), &key, "A", "B"),
            Err(ModelError::BadMerge(_))
        ));
        let long = "x".repeat(MAX_MERGE_INPUT_CHARS);
        assert!(matches!(
            merge_contents(&fixed("ok", false), &key, &long, "B"),
            Err(ModelError::BadMerge(_))
        ));
    }
}
