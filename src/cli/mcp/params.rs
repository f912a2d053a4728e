//! The MCP tools' arguments: one serde struct per tool, whose JSON Schema (made plain by
//! [`super::schema::flatten`]) is the tool's input schema. Enums are the library's own
//! (merge policy, strategy, recall mode, sort). Generic clients fill forms loosely, so
//! numbers also come as numeric strings (`"2"`), booleans as `"true"`/`"false"`, and a list
//! of keys as one string; `null` is the same as leaving an argument out.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use memoir::app::{MergePolicy, MergeStrategy, RecallMode, SearchMode, Sort};

fn number_of(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|x| x.is_finite()),
        _ => None,
    }
}

/// A count: a non-negative integer, or a string holding one.
fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
        Some(Value::String(s)) if s.trim().parse::<u64>().is_ok() => Ok(s.trim().parse().ok()),
        Some(other) => Err(serde::de::Error::custom(format!(
            "expected a non-negative integer, got {other}"
        ))),
    }
}

/// A count that fits in `usize`.
fn size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    count(d)?
        .map(|n| usize::try_from(n).map_err(|_| serde::de::Error::custom("number too large")))
        .transpose()
}

/// An integer (negative too), or a string holding one.
pub fn integer<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64()),
        Some(Value::String(s)) if s.trim().parse::<i64>().is_ok() => Ok(s.trim().parse().ok()),
        Some(other) => Err(serde::de::Error::custom(format!(
            "expected an integer, got {other}"
        ))),
    }
}

/// A list of integers (or strings holding them), or none.
pub fn integers<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<i64>>, D::Error> {
    let Some(items) = Option::<Vec<Value>>::deserialize(d)? else {
        return Ok(None);
    };
    items
        .into_iter()
        .map(|v| {
            integer(v)
                .map_err(serde::de::Error::custom)?
                .ok_or_else(|| serde::de::Error::custom("expected an integer, got null"))
        })
        .collect::<Result<Vec<i64>, D::Error>>()
        .map(Some)
}

/// A number, or a string holding one.
fn number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(v) => number_of(&v)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("expected a number, got {v}"))),
    }
}

/// A boolean, or `"true"`/`"false"`.
pub fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(b),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
        Some(other) => Err(serde::de::Error::custom(format!(
            "expected true or false, got {other}"
        ))),
    }
}

/// A list of strings, or one string.
fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(s)) => vec![s],
        Some(OneOrMany::Many(v)) => v,
    })
}

/// Arguments of memoir_summarize.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SummarizeParams {
    /// Count keys by their first N segments (N >= 1; 3 is a good start)
    #[serde(default, deserialize_with = "count")]
    #[schemars(range(min = 1))]
    pub depth: Option<u64>,
    /// Only this namespace
    pub namespace: Option<String>,
    /// Only keys whose path matches one of these globs (`*` crosses dots, `?`, `[seq]`)
    #[serde(default, deserialize_with = "strings")]
    pub keys: Vec<String>,
    /// Read at this revision (commit id, branch, HEAD~2, main@{yesterday})
    pub at: Option<String>,
    /// Read this branch instead of HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_get.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetParams {
    /// Keys to read (`path` or `ns:path`), all in one call
    #[serde(deserialize_with = "strings")]
    pub keys: Vec<String>,
    /// Namespace of bare paths (default: default)
    pub namespace: Option<String>,
    /// Read at this revision
    pub at: Option<String>,
    /// Read this branch instead of HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_recall.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallParams {
    /// The question
    pub query: String,
    /// Most memories returned (default 10)
    #[serde(default, deserialize_with = "size")]
    #[schemars(range(min = 0))]
    pub limit: Option<usize>,
    /// Only this namespace
    pub namespace: Option<String>,
    /// How to choose (default: single with an LLM configured, else hybrid with an embedding
    /// model, else lexical)
    pub mode: Option<RecallMode>,
    /// Drop memories scoring below this
    #[serde(default, deserialize_with = "number")]
    pub threshold: Option<f64>,
    /// Read at this revision
    pub at: Option<String>,
    /// Read this branch instead of HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_search.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// The words to look for
    pub query: String,
    /// Only this namespace
    pub namespace: Option<String>,
    /// Only keys whose path matches one of these globs
    #[serde(default, deserialize_with = "strings")]
    pub keys: Vec<String>,
    /// Most hits (default 10)
    #[serde(default, deserialize_with = "size")]
    #[schemars(range(min = 0))]
    pub limit: Option<usize>,
    /// Only records at or after this date (ISO date, yesterday, 2.days.ago)
    pub since: Option<String>,
    /// Only records at or before this date
    pub until: Option<String>,
    /// Order of the hits (default relevance)
    pub sort: Option<Sort>,
    /// How to rank: lexical (by words), semantic (by meaning, needs an embedding model) or
    /// hybrid (both; the default when an embedding model is configured, else lexical)
    pub mode: Option<SearchMode>,
    /// Read at this revision
    pub at: Option<String>,
    /// Read this branch instead of HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_log.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogParams {
    /// Revision, or range A..B (default HEAD)
    pub rev: Option<String>,
    /// Most commits listed
    #[serde(default, deserialize_with = "size")]
    #[schemars(range(min = 0))]
    pub limit: Option<usize>,
    /// Only commits that changed keys matching these globs
    #[serde(default, deserialize_with = "strings")]
    pub keys: Vec<String>,
    /// Only commits that changed keys in this namespace
    pub namespace: Option<String>,
    /// Log of this branch instead of HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_blame.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlameParams {
    /// Key (`path` or `ns:path`)
    pub key: String,
    /// Namespace of a bare path
    pub namespace: Option<String>,
    /// Most entries listed
    #[serde(default, deserialize_with = "size")]
    #[schemars(range(min = 0))]
    pub limit: Option<usize>,
    /// Attribute each line of the content to a commit
    #[serde(default, deserialize_with = "flag")]
    pub lines: bool,
    /// Blame as of this revision
    pub at: Option<String>,
    /// Blame on this branch instead of HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_diff.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffParams {
    /// Old revision, or A..B (default HEAD~1)
    pub from: Option<String>,
    /// New revision (default HEAD)
    pub to: Option<String>,
    /// Only this namespace
    pub namespace: Option<String>,
    /// Only keys matching these globs
    #[serde(default, deserialize_with = "strings")]
    pub keys: Vec<String>,
    /// Count changes and changed lines
    #[serde(default, deserialize_with = "flag")]
    pub stat: bool,
    /// Include a unified diff of each record's content
    #[serde(default, deserialize_with = "flag")]
    pub patch: bool,
}

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// Arguments of memoir_remember.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberParams {
    /// The memory's text (credentials are refused)
    pub content: String,
    /// Key path (`a.b.c` or `ns:a.b.c`); omit path and paths to let the configured LLM choose
    pub path: Option<String>,
    /// Several key paths (the same content under each, one commit)
    #[serde(default, deserialize_with = "strings")]
    pub paths: Vec<String>,
    /// Namespace (default: default)
    pub namespace: Option<String>,
    /// How to combine with an existing memory (default: by key prefix)
    pub merge_policy: Option<MergePolicy>,
    /// Confidence, 0.0 to 1.0 (default 1.0)
    #[serde(default, deserialize_with = "number")]
    pub confidence: Option<f64>,
    /// Write to this branch (created from HEAD if missing) without moving HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_forget.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetParams {
    /// Key (`path` or `ns:path`)
    pub key: String,
    /// Namespace of a bare path
    pub namespace: Option<String>,
    /// Forget on this branch without moving HEAD
    pub branch: Option<String>,
}

/// Arguments of memoir_checkout.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckoutParams {
    /// Branch name, or a revision to detach at
    pub target: String,
    /// Create the branch at HEAD first
    #[serde(default, deserialize_with = "flag")]
    pub create: bool,
}

/// Arguments of memoir_merge.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeParams {
    /// Branch or revision to merge
    pub source: String,
    /// Branch to merge into (default: the current branch)
    pub into: Option<String>,
    /// Conflict strategy; without one, conflicts are listed and nothing is committed (code 4)
    pub strategy: Option<MergeStrategy>,
    /// Refuse anything but a fast-forward (code 6)
    #[serde(default, deserialize_with = "flag")]
    pub ff_only: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_come_as_numbers_or_numeric_strings() {
        let p: SearchParams =
            serde_json::from_value(json!({"query": "q", "limit": "3"})).expect("numeric string");
        assert_eq!(p.limit, Some(3));
        let p: SearchParams =
            serde_json::from_value(json!({"query": "q", "limit": 4})).expect("integer");
        assert_eq!(p.limit, Some(4));
        let p: SearchParams =
            serde_json::from_value(json!({"query": "q", "limit": null})).expect("null");
        assert_eq!(p.limit, None);
        let bad = serde_json::from_value::<SearchParams>(json!({"query": "q", "limit": "x"}));
        assert!(bad
            .unwrap_err()
            .to_string()
            .contains("non-negative integer"));
        let p: RememberParams =
            serde_json::from_value(json!({"content": "c", "confidence": "0.5"})).expect("number");
        assert_eq!(p.confidence, Some(0.5));
    }

    #[test]
    fn keys_come_as_a_list_or_one_string() {
        let p: GetParams = serde_json::from_value(json!({"keys": "a.b"})).expect("one");
        assert_eq!(p.keys, vec!["a.b".to_string()]);
        let p: GetParams = serde_json::from_value(json!({"keys": ["a.b", "c"]})).expect("many");
        assert_eq!(p.keys.len(), 2);
        assert!(serde_json::from_value::<GetParams>(json!({"keys": 3})).is_err());
    }

    #[test]
    fn flags_and_library_enums_parse() {
        let p: MergeParams =
            serde_json::from_value(json!({"source": "b", "strategy": "union", "ff_only": "true"}))
                .expect("merge");
        assert_eq!(p.strategy, Some(MergeStrategy::Union));
        assert!(p.ff_only);
        let p: RememberParams =
            serde_json::from_value(json!({"content": "c", "merge_policy": "confidence_gated"}))
                .expect("policy");
        assert_eq!(p.merge_policy, Some(MergePolicy::ConfidenceGated));
    }
}
