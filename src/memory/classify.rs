//! The classifier: a model chooses the key a memory is stored under (`remember` without
//! `-p`).
//!
//! The model sees the memory's content and the store's existing depth-3 key prefixes with
//! their counts (so it can reuse the taxonomy), and is asked for one JSON object:
//! `{"paths": [1 or 2 three-level paths], "confidence": 0.0..=1.0, "reasoning": "..."}`. A
//! reply is accepted only in that form ([`crate::llm::reply`]): anything else (prose, a list of
//! lines, the prompt repeated, a field missing or of another type) fails the call, and nothing
//! is stored.
//!
//! Every path the model names is validated; nothing it says is trusted, and one refused path
//! refuses the reply ([`ModelError::BadPath`]):
//! - a path may carry a namespace prefix only if it is the target namespace (`ns:a.b.c`);
//! - a path equal to an existing three-segment prefix is taken as it is (the store already
//!   holds it, so it passed the key rules when written);
//! - any other path is lower-cased (ASCII) and must then have exactly [`PATH_DEPTH`] segments,
//!   each 1..=64 characters of `a-z`, `0-9`, `_` and `-` starting with a letter or digit, and
//!   be a valid key (crate::key rules).
//!
//! More than [`MAX_PATHS`] valid paths are cut to the first [`MAX_PATHS`].

use std::collections::BTreeSet;

use super::ModelError;
use crate::key::{encoded_path, group_prefix, namespace_prefix, Key, MAX_SEGMENT_BYTES};
use crate::llm::reply::{json_object, number_in, string, string_list};
use crate::llm::{Llm, LlmError};
use crate::object::ObjectId;
use crate::prolly::{prefix_range, NodeStore, ProllyResult};

/// Most paths a memory is stored under by the classifier.
pub const MAX_PATHS: usize = 2;
/// Segments of a classifier path.
pub const PATH_DEPTH: usize = 3;
/// Most existing prefixes shown to the model (the largest by count).
pub const MAX_PREFIXES_SHOWN: usize = 200;
/// Characters of the memory's content shown to the model.
pub const CONTENT_CHARS: usize = 4000;
/// Characters kept of the model's reasoning.
pub const REASONING_CHARS: usize = 300;

const SYSTEM: &str = "You file memories of an AI agent into a taxonomy of three-level dot \
paths (category.topic.detail), lower-case, words joined by underscores. Answer with one JSON \
object and nothing else.";

/// What the classifier decided, and the exchange that decided it.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    /// The chosen paths (bare, without namespace), 1..=[`MAX_PATHS`], best first.
    pub paths: Vec<String>,
    /// The model's confidence, 0.0 ..= 1.0.
    pub confidence: f64,
    /// The model's one-line reasoning.
    pub reasoning: String,
    /// The prompt sent.
    pub prompt: String,
    /// The reply received.
    pub reply: String,
}

/// The existing keys of `namespace` in the tree `root`, grouped by their first three
/// segments (a shorter key is its own group), with counts, in key order. Costs
/// O(groups x height) node reads.
pub fn existing_prefixes(
    tree: &NodeStore,
    root: &ObjectId,
    namespace: &str,
) -> ProllyResult<Vec<(String, u64)>> {
    let groups = tree.histogram(root, &prefix_range(&namespace_prefix(namespace)), &|k| {
        group_prefix(k, PATH_DEPTH)
    })?;
    Ok(groups
        .into_iter()
        .map(|(g, n)| (encoded_path(&g), n))
        .collect())
}

/// The lines listing `existing` prefixes (path: count) to a model: at most `max`, the
/// largest, in key order, then how many were left out; `(none yet)` when there are none.
pub fn existing_lines(existing: &[(String, u64)], max: usize) -> String {
    let mut shown: Vec<&(String, u64)> = existing.iter().collect();
    shown.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    shown.truncate(max);
    shown.sort_by(|a, b| a.0.cmp(&b.0));
    let mut p = String::new();
    if shown.is_empty() {
        p.push_str("(none yet)\n");
    }
    for (path, n) in &shown {
        p.push_str(&format!("- {path}: {n}\n"));
    }
    if existing.len() > shown.len() {
        p.push_str(&format!(
            "({} smaller paths not shown)\n",
            existing.len() - shown.len()
        ));
    }
    p
}

/// The prompt asking for the paths of `content` in `namespace`, listing the store's
/// taxonomy when it has one (its prompt block, [`crate::memory::taxonomy::Taxonomy::snippet`]),
/// the `existing` prefixes (at most [`MAX_PREFIXES_SHOWN`], the largest) and the content (at
/// most [`CONTENT_CHARS`]).
pub fn prompt(
    namespace: &str,
    content: &str,
    existing: &[(String, u64)],
    taxonomy: Option<&str>,
) -> String {
    let mut p = format!("Namespace: {namespace}\n\n");
    if let Some(t) = taxonomy {
        p.push_str(t.trim_end());
        p.push_str("\n\n");
    }
    p.push_str("Existing paths (path: number of memories):\n");
    p.push_str(&existing_lines(existing, MAX_PREFIXES_SHOWN));
    let mut text: String = content.chars().take(CONTENT_CHARS).collect();
    if text.len() < content.len() {
        text.push_str(" [...]");
    }
    let grounded = if taxonomy.is_some() {
        " Begin a new path with a category of the taxonomy above."
    } else {
        ""
    };
    p.push_str(&format!(
        "\nMemory to file:\n<<<\n{text}\n>>>\n\nChoose 1 or {MAX_PATHS} paths for this memory, each of exactly {PATH_DEPTH} \
         lower-case segments (letters, digits, '_' or '-') joined by dots, like \
         preferences.coding.testing. Reuse an existing path when the memory belongs there; \
         otherwise make a new one that fits the taxonomy.{grounded} Reply with one JSON object and \
         nothing else:\n{{\"paths\": [\"category.topic.detail\"], \"confidence\": <0.0 to 1.0>, \
         \"reasoning\": \"<one line>\"}}"
    ));
    p
}

/// Asks `llm` for the paths of `content` in `namespace`, given the `existing` prefixes (from
/// [`existing_prefixes`]) and the store's taxonomy block, if any. Fails if the call fails or
/// the reply is not the object asked for with acceptable paths ([`parse`]).
pub fn classify(
    llm: &dyn Llm,
    namespace: &str,
    content: &str,
    existing: &[(String, u64)],
    taxonomy: Option<&str>,
) -> Result<Classification, ModelError> {
    let prompt = prompt(namespace, content, existing, taxonomy);
    let reply = llm.complete(SYSTEM, &prompt)?;
    let parsed = parse(&reply, namespace, existing)?;
    Ok(Classification {
        paths: parsed.paths,
        confidence: parsed.confidence,
        reasoning: parsed.reasoning,
        prompt,
        reply,
    })
}

/// A classifier reply, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The paths, in reply order, without repeats, at most [`MAX_PATHS`].
    pub paths: Vec<String>,
    /// The confidence, 0.0 ..= 1.0.
    pub confidence: f64,
    /// The reasoning, on one line.
    pub reasoning: String,
}

/// Reads a classifier reply for `namespace`: the JSON object the prompt asks for, every
/// field present and of its type (`paths` a non-empty list of strings, `confidence` a number
/// within 0..=1, `reasoning` a string), every path acceptable (see the module documentation).
/// Anything else is an error: [`LlmError::BadReply`] for the form,
/// [`ModelError::BadPath`] for the paths.
pub fn parse(
    reply: &str,
    namespace: &str,
    existing: &[(String, u64)],
) -> Result<Parsed, ModelError> {
    let obj = json_object(reply)?;
    let names = string_list(&obj, "paths")?;
    if names.is_empty() {
        return Err(LlmError::BadReply("the field \"paths\" is empty".into()).into());
    }
    let confidence = number_in(&obj, "confidence", 0.0, 1.0)?;
    let reasoning = string(&obj, "reasoning")?;
    let known: BTreeSet<&str> = existing
        .iter()
        .map(|(p, _)| p.as_str())
        .filter(|p| p.split('.').count() == PATH_DEPTH)
        .collect();
    let mut paths: Vec<String> = Vec::new();
    let mut refused = Vec::new();
    for n in names {
        match check_path(&n, namespace, &known) {
            Ok(p) => {
                if !paths.contains(&p) {
                    paths.push(p);
                }
            }
            Err(why) => refused.push(format!("{:?}: {why}", shorten(&n, 80))),
        }
    }
    if !refused.is_empty() {
        return Err(ModelError::BadPath {
            reply: reply.chars().take(300).collect(),
            refused,
        });
    }
    paths.truncate(MAX_PATHS);
    Ok(Parsed {
        paths,
        confidence,
        reasoning: one_line(&reasoning),
    })
}

/// Checks one path a model gave for `namespace` (the rules of the module documentation);
/// returns the bare path to store under, or why not.
pub(crate) fn check_path(
    name: &str,
    namespace: &str,
    known: &BTreeSet<&str>,
) -> Result<String, String> {
    let name = name.trim();
    let path = match name.rsplit_once(':') {
        Some((ns, path)) if ns == namespace => path,
        Some((ns, _)) => {
            return Err(format!(
                "names namespace {ns:?}, not the target namespace {namespace:?}"
            ))
        }
        None => name,
    };
    if known.contains(path) {
        return Ok(path.to_string());
    }
    let path = path.to_ascii_lowercase();
    let segments: Vec<&str> = path.split('.').collect();
    if segments.len() != PATH_DEPTH {
        return Err(format!(
            "has {} segment(s), not {PATH_DEPTH}",
            segments.len()
        ));
    }
    for seg in &segments {
        if !plain_segment(seg) {
            return Err(format!(
                "segment {:?} is not 1..={MAX_SEGMENT_BYTES} of a-z, 0-9, '_', '-' starting with a letter or digit",
                shorten(seg, 40)
            ));
        }
    }
    Key::new(namespace, &path).map_err(|e| e.to_string())?;
    Ok(path)
}

/// Whether `seg` is a plain path segment, as the model must write one: 1..=64 characters of
/// `a-z`, `0-9`, `_` and `-`, starting with a letter or digit.
pub fn plain_segment(seg: &str) -> bool {
    let ok_start = seg
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let ok_chars = seg
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    ok_start && ok_chars && seg.len() <= MAX_SEGMENT_BYTES
}

fn one_line(s: &str) -> String {
    let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = shorten(&joined, REASONING_CHARS);
    if out.is_empty() {
        out = "the model gave no reasoning".to_string();
    }
    out
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn existing() -> Vec<(String, u64)> {
        vec![
            ("preferences.coding.testing".to_string(), 3),
            ("infra.database".to_string(), 1),
            ("Tools.Editor.Vim".to_string(), 2),
        ]
    }

    fn reply(paths: &str) -> String {
        format!(r#"{{"paths": {paths}, "confidence": 0.8, "reasoning": "fits"}}"#)
    }

    fn paths(reply: &str) -> Result<Vec<String>, ModelError> {
        parse(reply, "default", &existing()).map(|p| p.paths)
    }

    fn bad_reply(r: Result<Vec<String>, ModelError>) -> String {
        match r {
            Err(ModelError::Llm(LlmError::BadReply(m))) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_object_asked_for_is_read() {
        let want = ["preferences.coding.testing", "tools.lint.ruff"];
        for r in [
            reply(r#"["preferences.coding.testing", "tools.lint.ruff"]"#),
            reply(
                r#"["preferences.coding.testing", "default:tools.lint.ruff", "tools.lint.ruff"]"#,
            ),
            format!(
                "```json\n{}\n```",
                reply(r#"["preferences.coding.testing", "Tools.Lint.Ruff"]"#)
            ),
            reply(r#"["preferences.coding.testing", "tools.lint.ruff", "third.valid.path"]"#),
        ] {
            assert_eq!(paths(&r).unwrap(), want, "reply {r:?}");
        }
        let p = parse(
            r#"{"paths": ["a.b.c"], "confidence": 0.72, "reasoning": "  about\n the   tests  ", "extra": 1}"#,
            "default",
            &[],
        )
        .unwrap();
        assert_eq!(
            (p.confidence, p.reasoning.as_str()),
            (0.72, "about the tests")
        );
        let p = parse(
            r#"{"paths": ["a.b.c"], "confidence": 1, "reasoning": ""}"#,
            "d",
            &[],
        )
        .unwrap();
        assert_eq!(
            (p.confidence, p.reasoning.as_str()),
            (1.0, "the model gave no reasoning")
        );
        let long = "x ".repeat(1000);
        let r = format!(r#"{{"paths": ["a.b.c"], "confidence": 0.5, "reasoning": "{long}"}}"#);
        let p = parse(&r, "d", &[]).unwrap();
        assert_eq!(p.reasoning.chars().count(), REASONING_CHARS + 1);
    }

    #[test]
    fn any_other_form_fails() {
        for prose in [
            "",
            "NONE",
            "I cannot decide",
            "- preferences.coding.testing\n- tools.lint.ruff\nconfidence: 0.8",
            "paths: preferences.coding.testing\nreasoning: fits",
            r#"["preferences.coding.testing"]"#,
            "Sure! {\"paths\": [\"a.b.c\"], \"confidence\": 0.8, \"reasoning\": \"x\"}",
        ] {
            let m = bad_reply(paths(prose));
            assert!(
                m.contains("not a JSON object") || m.contains("empty") || m.contains("array"),
                "{prose:?}: {m}"
            );
        }
        // The prompt, echoed back, is not an answer.
        let echo = format!(
            "[echo] model=m\nUser: {}",
            prompt("default", "x", &existing(), None)
        );
        assert!(bad_reply(paths(&echo)).contains("not a JSON object"));
        for (r, why) in [
            (r#"{}"#, "\"paths\" is missing"),
            (
                r#"{"paths": [], "confidence": 0.5, "reasoning": "r"}"#,
                "\"paths\" is empty",
            ),
            (
                r#"{"paths": "a.b.c", "confidence": 0.5, "reasoning": "r"}"#,
                "not an array",
            ),
            (
                r#"{"paths": [["a.b.c"]], "confidence": 0.5, "reasoning": "r"}"#,
                "holds an array",
            ),
            (
                r#"{"paths": ["a.b.c"], "reasoning": "r"}"#,
                "\"confidence\" is missing",
            ),
            (
                r#"{"paths": ["a.b.c"], "confidence": "0.8", "reasoning": "r"}"#,
                "not a number",
            ),
            (
                r#"{"paths": ["a.b.c"], "confidence": 85, "reasoning": "r"}"#,
                "not within",
            ),
            (
                r#"{"paths": ["a.b.c"], "confidence": -1, "reasoning": "r"}"#,
                "not within",
            ),
            (
                r#"{"paths": ["a.b.c"], "confidence": 0.5}"#,
                "\"reasoning\" is missing",
            ),
            (
                r#"{"paths": ["a.b.c"], "confidence": 0.5, "reasoning": 3}"#,
                "not a string",
            ),
        ] {
            let m = bad_reply(paths(r));
            assert!(m.contains(why), "{r}: {m}");
        }
    }

    #[test]
    fn one_injected_or_invalid_path_refuses_the_reply() {
        for bad in [
            "../x",
            "a.b.c; rm -rf /",
            "work:infra.db.main",
            "a.b",
            "a.b.c.d",
            "a..c",
            "a.b.c d",
            "a.b.$(id)",
            "é.b.c",
            "_a.b.c",
        ] {
            let r = reply(&format!(r#"["ok.path.here", {bad:?}]"#));
            match paths(&r) {
                Err(e @ ModelError::BadPath { .. }) => {
                    let m = e.to_string();
                    assert!(m.contains("unacceptable"), "{m}");
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        let r = reply(r#"["work:infra.db.main"]"#);
        assert!(paths(&r)
            .unwrap_err()
            .to_string()
            .contains("namespace \"work\""));
        // An existing prefix is reused as it is, case included; a new one is lower-cased.
        assert_eq!(
            paths(&reply(r#"["Tools.Editor.Vim"]"#)).unwrap(),
            ["Tools.Editor.Vim"]
        );
        assert_eq!(
            paths(&reply(r#"["Tools.Editor.Emacs"]"#)).unwrap(),
            ["tools.editor.emacs"]
        );
        // A two-segment existing key is not a three-level path.
        assert!(paths(&reply(r#"["infra.database"]"#)).is_err());
        // The target namespace's prefix is accepted.
        let p = parse(&reply(r#"["work:a.b.c"]"#), "work", &[]).unwrap();
        assert_eq!(p.paths, ["a.b.c"]);
    }

    #[test]
    fn prompt_lists_the_taxonomy_within_bounds() {
        let p = prompt("default", "likes pytest", &existing(), None);
        assert!(p.contains("- preferences.coding.testing: 3\n"));
        assert!(p.contains("- infra.database: 1\n"));
        assert!(p.contains("likes pytest"));
        assert!(prompt("default", "x", &[], None).contains("(none yet)"));
        let many: Vec<(String, u64)> = (0..MAX_PREFIXES_SHOWN as u64 + 50)
            .map(|i| (format!("p{i:04}.a.b"), i))
            .collect();
        let p = prompt("default", &"y".repeat(CONTENT_CHARS * 3), &many, None);
        assert!(p.contains("(50 smaller paths not shown)"));
        assert!(!p.contains("- p0000.a.b:"));
        assert!(p.contains(&format!("- p{:04}.a.b:", MAX_PREFIXES_SHOWN + 49)));
        assert!(p.len() < CONTENT_CHARS + 80 * (MAX_PREFIXES_SHOWN + 20));
    }

    struct Scripted(Result<String, ()>);

    impl Llm for Scripted {
        fn complete(&self, _: &str, _: &str) -> Result<String, LlmError> {
            self.0
                .clone()
                .map_err(|_| LlmError::Command("scripted failure".into()))
        }
        fn describe(&self) -> String {
            "scripted".into()
        }
    }

    #[test]
    fn classify_succeeds_or_says_why_not() {
        let ok = Scripted(Ok(
            r#"{"paths": ["a.b.c"], "confidence": 0.6, "reasoning": "r"}"#.into(),
        ));
        let c = classify(&ok, "default", "content", &[], None).unwrap();
        assert_eq!((c.paths, c.confidence), (vec!["a.b.c".to_string()], 0.6));
        assert!(c.prompt.contains("content"));
        let bad = Scripted(Ok(
            r#"{"paths": ["../etc/passwd"], "confidence": 0.6, "reasoning": "r"}"#.into(),
        ));
        match classify(&bad, "default", "content", &[], None) {
            Err(e @ ModelError::BadPath { .. }) => {
                assert!(e.to_string().contains("../etc/passwd"), "{e}")
            }
            other => panic!("{other:?}"),
        }
        let down = Scripted(Err(()));
        assert!(matches!(
            classify(&down, "default", "content", &[], None),
            Err(ModelError::Llm(_))
        ));
    }
}
