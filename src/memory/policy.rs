//! Write policies: how an incoming memory combines with the record already at its key.
//!
//! - `append`: the new entry joins the active ones.
//! - `replace`: the new entry is the record's only entry; the earlier ones live on in history
//!   (the previous commits), not in the record.
//! - `confidence_gated`: a replace if the new confidence is at least the existing maximum,
//!   otherwise nothing is written.
//! - `llm_merge`: a model merges the existing and incoming contents into one
//!   ([`super::llm_merge`], recorded by [`write_merged`]); [`write`] alone has no model, so
//!   under `llm_merge` it appends, and says so.
//! - `merge_on_read`: appends; combining the facets is left to the reader (the projection).
//! - `reject`: nothing is written at an occupied key; the clash is reported as a [`Conflict`].
//!
//! Every write keeps at most the facet cap's number of entries, dropping the oldest.

use std::fmt;
use std::str::FromStr;

use serde_json::{json, Value};

use super::{Entry, MemoryError, Record, Status};
use crate::key::Key;
use crate::object::ObjectId;

/// Default of the facet cap (`MEMOIR_FACET_MAX_ENTRIES`).
pub const DEFAULT_FACET_MAX_ENTRIES: usize = 50;

/// How a write combines with an existing record. Its serde and JSON Schema forms are the
/// command-line names (`confidence_gated`), so a face can take it as a parameter directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MergePolicy {
    /// Add an active entry.
    Append,
    /// Leave only the new entry (history keeps the old ones).
    Replace,
    /// Replace only if at least as confident as the existing maximum.
    ConfidenceGated,
    /// LLM merge (append without an LLM).
    LlmMerge,
    /// Append; the reader projects.
    MergeOnRead,
    /// Refuse to touch an occupied key.
    Reject,
}

impl MergePolicy {
    /// Every policy, in the order of the documentation.
    pub const ALL: [MergePolicy; 6] = [
        MergePolicy::Append,
        MergePolicy::Replace,
        MergePolicy::ConfidenceGated,
        MergePolicy::LlmMerge,
        MergePolicy::MergeOnRead,
        MergePolicy::Reject,
    ];

    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            MergePolicy::Append => "append",
            MergePolicy::Replace => "replace",
            MergePolicy::ConfidenceGated => "confidence_gated",
            MergePolicy::LlmMerge => "llm_merge",
            MergePolicy::MergeOnRead => "merge_on_read",
            MergePolicy::Reject => "reject",
        }
    }
}

impl fmt::Display for MergePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A merge policy name that names none of [`MergePolicy::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown merge policy {name:?}; expected one of {}", policy_names())]
pub struct UnknownPolicy {
    /// The name given, as given.
    pub name: String,
}

/// The names of every policy, comma-separated, for messages.
fn policy_names() -> String {
    let names: Vec<_> = MergePolicy::ALL.iter().map(|p| p.as_str()).collect();
    names.join(", ")
}

impl FromStr for MergePolicy {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, UnknownPolicy> {
        MergePolicy::ALL
            .into_iter()
            .find(|p| p.as_str() == s.trim())
            .ok_or_else(|| UnknownPolicy {
                name: s.to_string(),
            })
    }
}

/// The per-type default policy of a path, by its leading segments: `context.current` and
/// `metrics.turn` replace; `metrics.code` and `experience` append; `workflow` and `behavior`
/// llm_merge; everything else confidence_gated.
pub fn default_policy(path: &str) -> MergePolicy {
    let under = |prefix: &str| {
        path == prefix
            || path
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('.'))
    };
    if under("context.current") || under("metrics.turn") {
        MergePolicy::Replace
    } else if under("metrics.code") || under("experience") {
        MergePolicy::Append
    } else if under("workflow") || under("behavior") {
        MergePolicy::LlmMerge
    } else {
        MergePolicy::ConfidenceGated
    }
}

/// How many entries a record keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FacetCap {
    /// No limit.
    Unlimited,
    /// At most this many (the newest).
    Max(usize),
}

impl Default for FacetCap {
    fn default() -> Self {
        FacetCap::Max(DEFAULT_FACET_MAX_ENTRIES)
    }
}

/// A facet cap setting that is neither a count nor `0` nor `none`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("facet cap {text:?} is not a count, 0 or none")]
pub struct BadFacetCap {
    /// The setting, trimmed.
    pub text: String,
}

/// Parses the facet cap setting: absent = the default (50), `0` or `none` = no cap, else a
/// positive count.
pub fn parse_facet_cap(text: Option<&str>) -> Result<FacetCap, BadFacetCap> {
    match text.map(str::trim) {
        None | Some("") => Ok(FacetCap::default()),
        Some(t) if t.eq_ignore_ascii_case("none") || t == "0" => Ok(FacetCap::Unlimited),
        Some(t) => t
            .parse::<usize>()
            .map(FacetCap::Max)
            .map_err(|_| BadFacetCap {
                text: t.to_string(),
            }),
    }
}

/// Drops the oldest entries (by timestamp, then position) beyond the cap, keeping order.
fn apply_cap(entries: &mut Vec<Entry>, cap: FacetCap) {
    let FacetCap::Max(max) = cap else { return };
    let max = max.max(1);
    if entries.len() <= max {
        return;
    }
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|&a, &b| {
        entries[a]
            .timestamp
            .total_cmp(&entries[b].timestamp)
            .then(a.cmp(&b))
    });
    let drop: std::collections::BTreeSet<usize> =
        order[..entries.len() - max].iter().copied().collect();
    let mut i = 0;
    entries.retain(|_| {
        let keep = !drop.contains(&i);
        i += 1;
        keep
    });
}

/// A memory being written.
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    /// The text.
    pub content: String,
    /// 0.0 ..= 1.0.
    pub confidence: f64,
    /// Unix seconds.
    pub timestamp: f64,
    /// Provenance: where from.
    pub source: Option<String>,
    /// Provenance: who.
    pub actor: Option<String>,
    /// Other keys written in the same command (bare paths).
    pub related_keys: Vec<String>,
    /// The relation set naming the keys written in the same command, when it names them
    /// through one (see [`super::related`]).
    pub related_sets: Vec<ObjectId>,
}

impl Incoming {
    fn entry(&self) -> Entry {
        Entry {
            content: self.content.clone(),
            confidence: self.confidence,
            timestamp: self.timestamp,
            status: Status::Active,
            source: self.source.clone(),
            actor: self.actor.clone(),
        }
    }
}

/// A write refused by the `reject` policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// Bare path.
    pub key: String,
    /// Namespace.
    pub namespace: String,
    /// The stored record's content.
    pub existing_content: String,
    /// The stored record's confidence.
    pub existing_confidence: f64,
    /// The stored record's timestamp.
    pub existing_timestamp: f64,
    /// What was to be written.
    pub incoming_content: String,
    /// Its confidence.
    pub incoming_confidence: f64,
}

impl Conflict {
    /// The JSON shape of COMPAT.md.
    pub fn to_json(&self) -> Value {
        json!({
            "key": self.key,
            "namespace": self.namespace,
            "existing_content": self.existing_content,
            "existing_confidence": self.existing_confidence,
            "existing_timestamp": self.existing_timestamp,
            "incoming_content": self.incoming_content,
            "incoming_confidence": self.incoming_confidence,
        })
    }
}

/// What a write decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Store this record (new or updated).
    Write(Record),
    /// Leave the existing record as it is.
    Keep,
    /// `reject` at an occupied key.
    Conflict(Conflict),
}

/// Adds to `r` the related keys and sets it does not name yet, in their order.
fn add_related(r: &mut Record, keys: &[String], sets: &[ObjectId]) {
    for k in keys {
        if !r.related_keys.contains(k) {
            r.related_keys.push(k.clone());
        }
    }
    for s in sets {
        if !r.related_sets.contains(s) {
            r.related_sets.push(*s);
        }
    }
}

/// Combines `incoming` with the record `existing` at `key` under `policy`; returns the
/// decision and a one-line explanation.
pub fn write(
    key: &Key,
    existing: Option<&Record>,
    incoming: &Incoming,
    policy: MergePolicy,
    cap: FacetCap,
) -> Result<(Outcome, String), MemoryError> {
    super::check_confidence(incoming.confidence)?;
    let Some(old) = existing else {
        let mut r = Record::new(key, incoming.entry(), incoming.related_keys.clone());
        r.related_sets = incoming.related_sets.clone();
        r.validate()?;
        return Ok((Outcome::Write(r), format!("{key}: new memory")));
    };
    let mut r = old.clone();
    add_related(&mut r, &incoming.related_keys, &incoming.related_sets);
    let why = match policy {
        MergePolicy::Reject => {
            let c = Conflict {
                key: key.path().to_string(),
                namespace: key.namespace().to_string(),
                existing_content: old.content(),
                existing_confidence: old.confidence,
                existing_timestamp: old.timestamp,
                incoming_content: incoming.content.clone(),
                incoming_confidence: incoming.confidence,
            };
            return Ok((
                Outcome::Conflict(c),
                format!("{key}: reject: the key is occupied; nothing written"),
            ));
        }
        MergePolicy::ConfidenceGated if incoming.confidence < old.max_confidence() => {
            return Ok((
                Outcome::Keep,
                format!(
                    "{key}: confidence_gated: incoming confidence {} is below the existing {}; kept the existing memory",
                    incoming.confidence,
                    old.max_confidence()
                ),
            ));
        }
        MergePolicy::Replace | MergePolicy::ConfidenceGated => {
            r.entries.clear();
            format!("{key}: {policy}: replaced the earlier entries (history keeps them)")
        }
        MergePolicy::Append => format!("{key}: append: added an entry"),
        MergePolicy::LlmMerge => {
            format!("{key}: llm_merge: no LLM is configured, so the entry was appended")
        }
        MergePolicy::MergeOnRead => {
            format!("{key}: merge_on_read: added an entry; entries are combined when read")
        }
    };
    r.entries.push(incoming.entry());
    apply_cap(&mut r.entries, cap);
    r.refresh();
    r.validate()?;
    Ok((Outcome::Write(r), why))
}

/// Records an `llm_merge` whose model produced `merged` from the record `existing` and
/// `incoming`: the earlier active entries become superseded, the incoming entry is kept as
/// superseded too (what was actually said stays in the history), and one new active entry
/// holds `merged`, with the incoming timestamp and provenance and the higher of the incoming
/// confidence and the existing maximum (the merge keeps what the existing memory knew). A
/// merge equal to the current content changes nothing ([`Outcome::Keep`]).
pub fn write_merged(
    key: &Key,
    existing: &Record,
    incoming: &Incoming,
    merged: &str,
    cap: FacetCap,
) -> Result<(Outcome, String), MemoryError> {
    super::check_confidence(incoming.confidence)?;
    if merged == existing.content() {
        return Ok((
            Outcome::Keep,
            format!("{key}: llm_merge: the model's merge equals the existing memory; kept it"),
        ));
    }
    let mut r = existing.clone();
    add_related(&mut r, &incoming.related_keys, &incoming.related_sets);
    for e in r.entries.iter_mut() {
        e.status = Status::Superseded;
    }
    let mut raw = incoming.entry();
    raw.status = Status::Superseded;
    r.entries.push(raw);
    let mut m = incoming.entry();
    m.content = merged.to_string();
    m.confidence = incoming.confidence.max(existing.max_confidence());
    r.entries.push(m);
    apply_cap(&mut r.entries, cap);
    r.refresh();
    r.validate()?;
    Ok((
        Outcome::Write(r),
        format!("{key}: llm_merge: the model merged the new memory into the existing one"),
    ))
}

/// The union of two records' entries (for `merge -S union`): ordered by timestamp (stable:
/// `ours` before `theirs` at equal times), entries with the same content and timestamp kept
/// once (the first seen); related keys are the union in order (ours first). Key and namespace
/// are `ours`'.
pub fn union(ours: &Record, theirs: &Record) -> Record {
    let mut entries: Vec<Entry> = Vec::with_capacity(ours.entries.len() + theirs.entries.len());
    for e in ours.entries.iter().chain(&theirs.entries) {
        let dup = entries
            .iter()
            .any(|x| x.content == e.content && x.timestamp.to_bits() == e.timestamp.to_bits());
        if !dup {
            entries.push(e.clone());
        }
    }
    entries.sort_by(|a, b| a.timestamp.total_cmp(&b.timestamp));
    let mut r = Record {
        key: ours.key.clone(),
        namespace: ours.namespace.clone(),
        confidence: 0.0,
        timestamp: 0.0,
        related_keys: ours.related_keys.clone(),
        related_sets: ours.related_sets.clone(),
        set_related: Vec::new(),
        entries,
    };
    add_related(&mut r, &theirs.related_keys, &theirs.related_sets);
    r.refresh();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(p: &str) -> Key {
        Key::new("default", p).unwrap()
    }

    fn inc(c: &str, conf: f64, t: f64) -> Incoming {
        Incoming {
            content: c.into(),
            confidence: conf,
            timestamp: t,
            source: None,
            actor: None,
            related_keys: vec![],
            related_sets: vec![],
        }
    }

    fn written(o: (Outcome, String)) -> Record {
        match o.0 {
            Outcome::Write(r) => r,
            other => panic!("expected a write, got {other:?}"),
        }
    }

    fn start() -> Record {
        written(
            write(
                &key("a"),
                None,
                &inc("one", 0.8, 1.0),
                MergePolicy::Append,
                FacetCap::default(),
            )
            .unwrap(),
        )
    }

    #[test]
    fn defaults_by_prefix() {
        assert_eq!(default_policy("context.current"), MergePolicy::Replace);
        assert_eq!(default_policy("context.current.task"), MergePolicy::Replace);
        assert_eq!(
            default_policy("context.currently"),
            MergePolicy::ConfidenceGated
        );
        assert_eq!(default_policy("metrics.turn.x"), MergePolicy::Replace);
        assert_eq!(default_policy("metrics.code"), MergePolicy::Append);
        assert_eq!(default_policy("experience.debugging"), MergePolicy::Append);
        assert_eq!(default_policy("workflow.release"), MergePolicy::LlmMerge);
        assert_eq!(default_policy("behavior"), MergePolicy::LlmMerge);
        assert_eq!(
            default_policy("preferences.editor"),
            MergePolicy::ConfidenceGated
        );
        assert_eq!(
            "merge_on_read".parse::<MergePolicy>(),
            Ok(MergePolicy::MergeOnRead)
        );
        assert!("merge".parse::<MergePolicy>().is_err());
        assert_eq!(
            " merge".parse::<MergePolicy>().unwrap_err().to_string(),
            "unknown merge policy \" merge\"; expected one of append, replace, \
             confidence_gated, llm_merge, merge_on_read, reject"
        );
    }

    #[test]
    fn append_replace_and_gate() {
        let r = start();
        let a = written(
            write(
                &key("a"),
                Some(&r),
                &inc("two", 0.5, 2.0),
                MergePolicy::Append,
                FacetCap::default(),
            )
            .unwrap(),
        );
        assert_eq!(a.content(), "one\n\n[update] two");
        assert_eq!(a.confidence, 0.8);
        let p = written(
            write(
                &key("a"),
                Some(&a),
                &inc("three", 0.1, 3.0),
                MergePolicy::Replace,
                FacetCap::default(),
            )
            .unwrap(),
        );
        assert_eq!(p.content(), "three");
        assert_eq!(p.entries.len(), 1);
        assert_eq!(p.entries[0].status, Status::Active);
        assert_eq!(p.confidence, 0.1);
        let low = write(
            &key("a"),
            Some(&r),
            &inc("low", 0.5, 4.0),
            MergePolicy::ConfidenceGated,
            FacetCap::default(),
        )
        .unwrap();
        assert_eq!(low.0, Outcome::Keep);
        let eq = written(
            write(
                &key("a"),
                Some(&r),
                &inc("eq", 0.8, 4.0),
                MergePolicy::ConfidenceGated,
                FacetCap::default(),
            )
            .unwrap(),
        );
        assert_eq!(eq.content(), "eq");
        let (llm, why) = write(
            &key("a"),
            Some(&r),
            &inc("x", 0.1, 5.0),
            MergePolicy::LlmMerge,
            FacetCap::default(),
        )
        .unwrap();
        assert!(why.contains("no LLM"));
        assert_eq!(written((llm, why)).content(), "one\n\n[update] x");
    }

    #[test]
    fn merged_supersedes_and_keeps_provenance() {
        let r = start();
        let mut i = inc("two", 0.6, 2.0);
        i.source = Some("cli".into());
        i.related_keys = vec!["b".into()];
        let m =
            written(write_merged(&key("a"), &r, &i, "one and two", FacetCap::default()).unwrap());
        assert_eq!(m.content(), "one and two");
        let st: Vec<_> = m
            .entries
            .iter()
            .map(|e| (e.content.as_str(), e.status))
            .collect();
        assert_eq!(
            st,
            [
                ("one", Status::Superseded),
                ("two", Status::Superseded),
                ("one and two", Status::Active)
            ]
        );
        assert_eq!(m.entries[2].source.as_deref(), Some("cli"));
        assert_eq!((m.confidence, m.timestamp), (0.8, 2.0));
        assert_eq!(m.related_keys, ["b"]);
        let (o, why) = write_merged(&key("a"), &r, &i, "one", FacetCap::default()).unwrap();
        assert_eq!(o, Outcome::Keep, "{why}");
        // The cap drops the oldest, the raw incoming entry before the merge.
        let m = written(write_merged(&key("a"), &r, &i, "x", FacetCap::Max(1)).unwrap());
        assert_eq!(m.entries.len(), 1);
        assert_eq!(m.content(), "x");
    }

    #[test]
    fn reject_reports_the_conflict() {
        let r = start();
        let (o, _) = write(
            &key("a"),
            Some(&r),
            &inc("new", 0.3, 9.0),
            MergePolicy::Reject,
            FacetCap::default(),
        )
        .unwrap();
        let Outcome::Conflict(c) = o else { panic!() };
        let v = c.to_json();
        assert_eq!(v["existing_content"], "one");
        assert_eq!(v["existing_confidence"], 0.8);
        assert_eq!(v["existing_timestamp"], 1.0);
        assert_eq!(v["incoming_content"], "new");
        assert_eq!(v["incoming_confidence"], 0.3);
        assert_eq!(v["namespace"], "default");
        // A free key is written whatever the policy.
        assert!(matches!(
            write(
                &key("b"),
                None,
                &inc("n", 1.0, 1.0),
                MergePolicy::Reject,
                FacetCap::default()
            )
            .unwrap()
            .0,
            Outcome::Write(_)
        ));
    }

    #[test]
    fn cap_keeps_the_newest() {
        let mut r = start();
        for i in 0..10 {
            r = written(
                write(
                    &key("a"),
                    Some(&r),
                    &inc(&format!("e{i}"), 0.5, 10.0 + i as f64),
                    MergePolicy::Append,
                    FacetCap::Max(3),
                )
                .unwrap(),
            );
        }
        let contents: Vec<_> = r.entries.iter().map(|e| e.content.as_str()).collect();
        assert_eq!(contents, ["e7", "e8", "e9"]);
        assert_eq!(parse_facet_cap(None), Ok(FacetCap::Max(50)));
        assert_eq!(parse_facet_cap(Some("0")), Ok(FacetCap::Unlimited));
        assert_eq!(parse_facet_cap(Some("none")), Ok(FacetCap::Unlimited));
        assert_eq!(parse_facet_cap(Some("7")), Ok(FacetCap::Max(7)));
        assert!(parse_facet_cap(Some("-1")).is_err());
        assert_eq!(
            parse_facet_cap(Some(" -1 ")).unwrap_err().to_string(),
            "facet cap \"-1\" is not a count, 0 or none"
        );
    }

    #[test]
    fn union_orders_and_deduplicates() {
        let base = start();
        let ours = written(
            write(
                &key("a"),
                Some(&base),
                &inc("ours", 0.5, 5.0),
                MergePolicy::Append,
                FacetCap::default(),
            )
            .unwrap(),
        );
        let theirs = written(
            write(
                &key("a"),
                Some(&base),
                &inc("theirs", 0.9, 3.0),
                MergePolicy::Append,
                FacetCap::default(),
            )
            .unwrap(),
        );
        let u = union(&ours, &theirs);
        let contents: Vec<_> = u.entries.iter().map(|e| e.content.as_str()).collect();
        assert_eq!(contents, ["one", "theirs", "ours"]);
        assert_eq!(u.confidence, 0.9);
        assert_eq!(u.timestamp, 5.0);
        assert_eq!(union(&ours, &ours), ours);
    }
}
