//! The model call of the `llm_merge` policy: the existing memory and the incoming one are
//! given to a model, which answers with one merged memory.
//!
//! The prompt asks for one JSON object, `{"content": "<the merged memory>"}`, and the reply is
//! accepted only in that form ([`crate::llm::reply`]): anything else (plain text, the prompt
//! repeated, a missing or empty `content`) is refused ([`ModelError::Llm`] with
//! [`LlmError::BadReply`]), as is a reply the provider cut at its token limit and inputs too
//! long to merge reliably ([`MAX_MERGE_INPUT_CHARS`]) ([`ModelError::BadMerge`]); the caller
//! then appends instead and warns (see [`super::write_merged`] for how a merge is recorded).

use super::ModelError;
use crate::key::Key;
use crate::llm::reply::{json_object, string};
use crate::llm::{Llm, LlmError};

/// Longest combined input (existing plus incoming content, in characters) sent for a merge.
pub const MAX_MERGE_INPUT_CHARS: usize = 12_000;

const SYSTEM: &str = "You maintain an AI agent's memory. Merge an existing memory and a new \
one into a single memory: keep every fact that still holds, let the new memory win where \
they conflict, remove repetition, stay concise. Answer with one JSON object and nothing \
else: {\"content\": \"<the merged memory>\"}.";

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
         Write the single merged memory. Reply with one JSON object and nothing else: \
         {{\"content\": \"<the merged memory>\"}}",
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
    let content = merged_content(&answer.text)?;
    Ok(MergeReply {
        content,
        prompt,
        reply: answer.text,
    })
}

/// The merged memory a reply holds: the string field `content` of the JSON object that is
/// the whole reply, trimmed and not empty; anything else is [`LlmError::BadReply`].
pub fn merged_content(reply: &str) -> Result<String, LlmError> {
    let content = string(&json_object(reply)?, "content")?;
    let content = content.trim();
    if content.is_empty() {
        return Err(LlmError::BadReply("the field \"content\" is empty".into()));
    }
    Ok(content.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Completion;

    #[test]
    fn only_the_object_asked_for_is_a_merge() {
        assert_eq!(
            merged_content(r#"{"content": " both facts "}"#).unwrap(),
            "both facts"
        );
        assert_eq!(
            merged_content("```json\n{\"content\": \"line one\\nline two\"}\n```").unwrap(),
            "line one\nline two"
        );
        let key = Key::new("default", "workflow.deploy").unwrap();
        let echo = format!("[echo] model=m\nUser: {}", merge_prompt(&key, "A", "B"));
        for bad in [
            "",
            "   \n",
            "merged text",
            "{not json} but prose",
            r#"{"content": ""}"#,
            r#"{"content": 3}"#,
            r#"{"merged": "A and B"}"#,
            r#"["A and B"]"#,
            echo.as_str(),
        ] {
            assert!(
                matches!(merged_content(bad), Err(LlmError::BadReply(_))),
                "{bad:?}"
            );
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
        let m = merge_contents(&fixed(r#"{"content": "A and B"}"#, false), &key, "A", "B").unwrap();
        assert_eq!(m.content, "A and B");
        assert!(m.prompt.contains("Existing memory:\n<<<\nA\n>>>"));
        assert!(m.prompt.contains("New memory:\n<<<\nB\n>>>"));
        assert!(m.prompt.contains("workflow.deploy"));
        assert!(matches!(
            merge_contents(&fixed(r#"{"content": "A and"#, true), &key, "A", "B"),
            Err(ModelError::BadMerge(_))
        ));
        assert!(matches!(
            merge_contents(&fixed("A and B", false), &key, "A", "B"),
            Err(ModelError::Llm(LlmError::BadReply(_)))
        ));
        let long = "x".repeat(MAX_MERGE_INPUT_CHARS);
        assert!(matches!(
            merge_contents(&fixed(r#"{"content": "ok"}"#, false), &key, &long, "B"),
            Err(ModelError::BadMerge(_))
        ));
    }
}
