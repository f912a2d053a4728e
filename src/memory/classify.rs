//! The classifier: a model chooses the key a memory is stored under (`remember` without
//! `-p`).
//!
//! The model sees the memory's content and the store's existing depth-3 key prefixes with
//! their counts (so it can reuse the taxonomy), and answers with one or two three-level paths,
//! a confidence and a one-line reasoning. Replies are parsed tolerantly: a JSON object or
//! array (also inside code fences or surrounded by prose), or plain lines (`a.b.c`,
//! `- a.b.c`, `confidence: 0.8`, `reasoning: ...`).
//!
//! Every path the model names is validated; nothing it says is trusted:
//! - a path may carry a namespace prefix only if it is the target namespace (`ns:a.b.c`);
//! - a path equal to an existing three-segment prefix is taken as it is (the store already
//!   holds it, so it passed the key rules when written);
//! - any other path is lower-cased (ASCII) and must then have exactly [`PATH_DEPTH`] segments,
//!   each 1..=64 characters of `a-z`, `0-9`, `_` and `-` starting with a letter or digit, and
//!   be a valid key (crate::key rules).
//!
//! Refused names are reported; if none is left, classification fails with
//! [`ModelError::NoValidPath`].

use std::collections::BTreeSet;

use serde_json::Value;

use super::ModelError;
use crate::key::{group_prefix, namespace_prefix, split_encoded, Key, MAX_SEGMENT_BYTES};
use crate::llm::reply::{json_names, line_name, strip_code_fences};
use crate::llm::Llm;
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
/// Confidence recorded when the reply gives none (or an unreadable one).
pub const DEFAULT_CONFIDENCE: f64 = 0.5;

const SYSTEM: &str = "You file memories of an AI agent into a taxonomy of three-level dot \
paths (category.topic.detail), lower-case, words joined by underscores. Answer with one JSON \
object and nothing else.";

/// What the classifier decided, and the exchange that decided it.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    /// The chosen paths (bare, without namespace), 1..=[`MAX_PATHS`], best first.
    pub paths: Vec<String>,
    /// The model's confidence, 0.0 ..= 1.0 ([`DEFAULT_CONFIDENCE`] when it gave none).
    pub confidence: f64,
    /// The model's one-line reasoning.
    pub reasoning: String,
    /// Names the model gave that were refused, each with the reason.
    pub rejected: Vec<String>,
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
        .map(|(g, n)| (split_encoded(&g).1, n))
        .collect())
}

/// The prompt asking for the paths of `content` in `namespace`, listing `existing` prefixes
/// (at most [`MAX_PREFIXES_SHOWN`], the largest) and the content (at most [`CONTENT_CHARS`]).
pub fn prompt(namespace: &str, content: &str, existing: &[(String, u64)]) -> String {
    let mut shown: Vec<&(String, u64)> = existing.iter().collect();
    shown.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    shown.truncate(MAX_PREFIXES_SHOWN);
    shown.sort_by(|a, b| a.0.cmp(&b.0));
    let mut p = format!("Namespace: {namespace}\n\nExisting paths (path: number of memories):\n");
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
    let mut text: String = content.chars().take(CONTENT_CHARS).collect();
    if text.len() < content.len() {
        text.push_str(" [...]");
    }
    p.push_str(&format!(
        "\nMemory to file:\n<<<\n{text}\n>>>\n\nChoose 1 or {MAX_PATHS} paths for this memory, each of exactly {PATH_DEPTH} \
         lower-case segments (letters, digits, '_' or '-') joined by dots, like \
         preferences.coding.testing. Reuse an existing path when the memory belongs there; \
         otherwise make a new one that fits the taxonomy. Reply with one JSON object and \
         nothing else:\n{{\"paths\": [\"category.topic.detail\"], \"confidence\": <0.0 to 1.0>, \
         \"reasoning\": \"<one line>\"}}"
    ));
    p
}

/// Asks `llm` for the paths of `content` in `namespace`, given the `existing` prefixes (from
/// [`existing_prefixes`]). Fails if the call fails or the reply names no acceptable path.
pub fn classify(
    llm: &dyn Llm,
    namespace: &str,
    content: &str,
    existing: &[(String, u64)],
) -> Result<Classification, ModelError> {
    let prompt = prompt(namespace, content, existing);
    let reply = llm.complete(SYSTEM, &prompt)?;
    let parsed = parse(&reply, namespace, existing);
    if parsed.paths.is_empty() {
        return Err(ModelError::NoValidPath {
            reply: reply.chars().take(300).collect(),
            rejected: parsed.rejected,
        });
    }
    Ok(Classification {
        paths: parsed.paths,
        confidence: parsed.confidence,
        reasoning: parsed.reasoning,
        rejected: parsed.rejected,
        prompt,
        reply,
    })
}

/// A classifier reply, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// Accepted paths, in reply order, without repeats, at most [`MAX_PATHS`].
    pub paths: Vec<String>,
    /// The confidence (clamped to 0..=1; a percentage above 1 is divided by 100).
    pub confidence: f64,
    /// The reasoning, on one line.
    pub reasoning: String,
    /// Refused names, each with the reason.
    pub rejected: Vec<String>,
}

/// Reads a classifier reply for `namespace`, validating each path (see the module
/// documentation). Never fails: an unusable reply gives no paths.
pub fn parse(reply: &str, namespace: &str, existing: &[(String, u64)]) -> Parsed {
    let body = strip_code_fences(reply);
    let mut names = Vec::new();
    let mut confidence = None;
    let mut reasoning = None;
    if let Some(v) = json_in(&body) {
        json_names(&v, &mut names);
        confidence = find_field(&v, &["confidence", "score"]).and_then(read_confidence);
        reasoning = find_field(&v, &["reasoning", "reason", "explanation", "rationale"])
            .and_then(|x| x.as_str().map(str::to_string));
    } else {
        for line in body.lines() {
            match labelled(line) {
                Some((label, value)) => match label.as_str() {
                    "confidence" | "score" => {
                        confidence = confidence.or_else(|| read_confidence(&text_number(value)))
                    }
                    "reasoning" | "reason" | "explanation" | "rationale" => {
                        reasoning = reasoning.or_else(|| Some(value.to_string()))
                    }
                    _ => names.extend(
                        value
                            .split(|c: char| c == ',' || c.is_whitespace())
                            .filter_map(line_name),
                    ),
                },
                None => names.extend(line_name(line)),
            }
        }
    }
    let known: BTreeSet<&str> = existing
        .iter()
        .map(|(p, _)| p.as_str())
        .filter(|p| p.split('.').count() == PATH_DEPTH)
        .collect();
    let mut paths: Vec<String> = Vec::new();
    let mut rejected = Vec::new();
    for n in names {
        if n.eq_ignore_ascii_case("none") {
            continue;
        }
        match check_path(&n, namespace, &known) {
            Ok(p) => {
                if !paths.contains(&p) && paths.len() < MAX_PATHS {
                    paths.push(p);
                }
            }
            Err(why) => rejected.push(format!("{:?}: {why}", shorten(&n, 80))),
        }
    }
    Parsed {
        paths,
        confidence: confidence.unwrap_or(DEFAULT_CONFIDENCE),
        reasoning: one_line(reasoning.as_deref().unwrap_or("")),
        rejected,
    }
}

/// Checks one name the model gave; returns the bare path to store under, or why not.
fn check_path(name: &str, namespace: &str, known: &BTreeSet<&str>) -> Result<String, String> {
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
        let ok_start = seg
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        let ok_chars = seg
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if !ok_start || !ok_chars || seg.len() > MAX_SEGMENT_BYTES {
            return Err(format!(
                "segment {:?} is not 1..={MAX_SEGMENT_BYTES} of a-z, 0-9, '_', '-' starting with a letter or digit",
                shorten(seg, 40)
            ));
        }
    }
    Key::new(namespace, &path).map_err(|e| e.to_string())?;
    Ok(path)
}

/// The JSON value a reply holds: the whole body, else the span from the first `{` or `[` to
/// the last matching closer (a reply with prose around its JSON).
fn json_in(body: &str) -> Option<Value> {
    let t = body.trim();
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        if v.is_object() || v.is_array() {
            return Some(v);
        }
    }
    for (open, close) in [('{', '}'), ('[', ']')] {
        if let (Some(a), Some(b)) = (t.find(open), t.rfind(close)) {
            if a < b {
                if let Ok(v) = serde_json::from_str::<Value>(&t[a..=b]) {
                    return Some(v);
                }
            }
        }
    }
    None
}

/// The first value of one of `names` in an object, or in the first object of an array that
/// has one.
fn find_field<'a>(v: &'a Value, names: &[&str]) -> Option<&'a Value> {
    match v {
        Value::Object(m) => names.iter().find_map(|n| m.get(*n)),
        Value::Array(items) => items.iter().find_map(|i| find_field(i, names)),
        _ => None,
    }
}

/// A confidence from a number or a numeric string (`0.8`, `"0.8"`, `85`, `"85%"`).
fn read_confidence(v: &Value) -> Option<f64> {
    let x = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => {
            let s = s.trim();
            let (s, percent) = match s.strip_suffix('%') {
                Some(rest) => (rest.trim(), true),
                None => (s, false),
            };
            let x: f64 = s.parse().ok()?;
            if percent {
                x / 100.0
            } else {
                x
            }
        }
        _ => return None,
    };
    if !x.is_finite() || x < 0.0 {
        None
    } else if x <= 1.0 {
        Some(x)
    } else if x <= 100.0 {
        Some(x / 100.0)
    } else {
        None
    }
}

fn text_number(s: &str) -> Value {
    Value::String(
        s.trim()
            .trim_matches(|c: char| "\"'`*".contains(c))
            .to_string(),
    )
}

/// A `label: value` (or `label = value`) line whose label is one the classifier knows,
/// lower-cased, with the value.
fn labelled(line: &str) -> Option<(String, &str)> {
    const LABELS: [&str; 10] = [
        "confidence",
        "score",
        "reasoning",
        "reason",
        "explanation",
        "rationale",
        "path",
        "paths",
        "key",
        "keys",
    ];
    let l = line
        .trim()
        .trim_start_matches(|c: char| c == '-' || c == '*' || c.is_whitespace());
    let i = l.find([':', '='])?;
    let label = l[..i]
        .trim()
        .trim_matches(|c: char| "\"'`*".contains(c))
        .to_ascii_lowercase();
    LABELS
        .contains(&label.as_str())
        .then(|| (label, l[i + 1..].trim()))
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
    use crate::llm::LlmError;

    fn existing() -> Vec<(String, u64)> {
        vec![
            ("preferences.coding.testing".to_string(), 3),
            ("infra.database".to_string(), 1),
            ("Tools.Editor.Vim".to_string(), 2),
        ]
    }

    fn paths(reply: &str) -> Vec<String> {
        parse(reply, "default", &existing()).paths
    }

    #[test]
    fn replies_in_many_shapes() {
        let want = ["preferences.coding.testing", "tools.lint.ruff"];
        for reply in [
            r#"{"paths": ["preferences.coding.testing", "tools.lint.ruff"], "confidence": 0.8, "reasoning": "x"}"#,
            "```json\n{\"paths\": [\"preferences.coding.testing\", \"tools.lint.ruff\"]}\n```",
            r#"["preferences.coding.testing", "tools.lint.ruff"]"#,
            r#"[{"path": "preferences.coding.testing"}, {"path": "default:tools.lint.ruff"}]"#,
            "Sure! Here it is: {\"paths\": [\"preferences.coding.testing\", \"tools.lint.ruff\"]} Hope that helps.",
            "- preferences.coding.testing\n- tools.lint.ruff\nconfidence: 0.8",
            "1. `preferences.coding.testing` because tests\n2) Tools.Lint.Ruff",
            "paths: preferences.coding.testing, tools.lint.ruff\nreasoning: fits",
            "{\"preferences.coding.testing\": 0.9, \"tools.lint.ruff\": 0.5}",
        ] {
            assert_eq!(paths(reply), want, "reply {reply:?}");
        }
    }

    #[test]
    fn confidence_and_reasoning() {
        let p = parse(
            r#"{"path": "a.b.c", "confidence": 0.72, "reasoning": "  about\n the   tests  "}"#,
            "default",
            &[],
        );
        assert_eq!(p.confidence, 0.72);
        assert_eq!(p.reasoning, "about the tests");
        let p = parse("a.b.c\nConfidence: 85%\nReasoning: it fits", "default", &[]);
        assert_eq!((p.confidence, p.reasoning.as_str()), (0.85, "it fits"));
        let p = parse(
            r#"{"paths": ["a.b.c"], "confidence": "90"}"#,
            "default",
            &[],
        );
        assert_eq!(p.confidence, 0.9);
        for bad in [r#""high""#, "-1", "1000", "null"] {
            let p = parse(
                &format!(r#"{{"paths": ["a.b.c"], "confidence": {bad}}}"#),
                "default",
                &[],
            );
            assert_eq!(p.confidence, DEFAULT_CONFIDENCE, "{bad}");
        }
        assert_eq!(
            parse("a.b.c", "d", &[]).reasoning,
            "the model gave no reasoning"
        );
        let long = "x ".repeat(1000);
        let p = parse(&format!("a.b.c\nreasoning: {long}"), "d", &[]);
        assert_eq!(p.reasoning.chars().count(), REASONING_CHARS + 1);
    }

    #[test]
    fn injected_and_invalid_paths_are_refused() {
        let reply = r#"{"paths": ["../x", "a.b.c; rm -rf /", "work:infra.db.main", "a.b", "a.b.c.d",
            "a..c", "a.b.c d", "a.b.$(id)", "é.b.c", "_a.b.c", "ok.path.here", "default:second.valid.path",
            "third.valid.path"]}"#;
        let p = parse(reply, "default", &existing());
        assert_eq!(p.paths, ["ok.path.here", "second.valid.path"]);
        assert_eq!(p.rejected.len(), 10, "{:?}", p.rejected);
        assert!(p.rejected.iter().any(|r| r.contains("namespace \"work\"")));
        // An existing prefix is reused as it is, case included; a new one is lower-cased.
        assert_eq!(paths("Tools.Editor.Vim"), ["Tools.Editor.Vim"]);
        assert_eq!(paths("Tools.Editor.Emacs"), ["tools.editor.emacs"]);
        // A two-segment existing key is not a three-level path.
        assert!(paths("infra.database").is_empty());
        // Another namespace's prefix for a namespaced target.
        let p = parse("default:a.b.c\nwork:a.b.c", "work", &[]);
        assert_eq!(p.paths, ["a.b.c"]);
        for garbage in ["", "NONE", "I cannot decide", "{}", "[]", "```\n```"] {
            assert!(paths(garbage).is_empty(), "{garbage:?}");
        }
    }

    #[test]
    fn prompt_lists_the_taxonomy_within_bounds() {
        let p = prompt("default", "likes pytest", &existing());
        assert!(p.contains("- preferences.coding.testing: 3\n"));
        assert!(p.contains("- infra.database: 1\n"));
        assert!(p.contains("likes pytest"));
        assert!(prompt("default", "x", &[]).contains("(none yet)"));
        let many: Vec<(String, u64)> = (0..MAX_PREFIXES_SHOWN as u64 + 50)
            .map(|i| (format!("p{i:04}.a.b"), i))
            .collect();
        let p = prompt("default", &"y".repeat(CONTENT_CHARS * 3), &many);
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
        let c = classify(&ok, "default", "content", &[]).unwrap();
        assert_eq!((c.paths, c.confidence), (vec!["a.b.c".to_string()], 0.6));
        assert!(c.prompt.contains("content"));
        let bad = Scripted(Ok(r#"{"paths": ["../etc/passwd"]}"#.into()));
        match classify(&bad, "default", "content", &[]) {
            Err(e @ ModelError::NoValidPath { .. }) => {
                assert!(e.to_string().contains("../etc/passwd"), "{e}")
            }
            other => panic!("{other:?}"),
        }
        let down = Scripted(Err(()));
        assert!(matches!(
            classify(&down, "default", "content", &[]),
            Err(ModelError::Llm(_))
        ));
    }
}
