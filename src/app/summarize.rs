//! `summarize`: counts by namespace, by key prefix (a depth), and the keys that match globs.
//! Counts come from the tree's subtree counts: O(groups x height) node reads; only a glob
//! filter visits keys (of the namespaces in scope).

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::glob::KeyGlobs;
use crate::key::{
    group_prefix, is_internal_namespace, namespace_prefix, path_start, split_encoded,
    validate_namespace,
};
use crate::prolly::prefix_range;

use super::prefix_counts::{PrefixCounts, PrefixCountsBuilder};
use super::status::{namespace_counts, unknown_namespace};
use super::{exit, Memoir, MemoirError, MemoirResult, Outcome, ReadPoint};

/// What to summarize. The four kinds give the same counts; the kind is echoed back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SummaryKind {
    /// Everything.
    #[default]
    All,
    /// Key taxonomy.
    Taxonomy,
    /// Timeline.
    Timeline,
    /// Places.
    Places,
}

impl SummaryKind {
    /// The kind's name as results carry it.
    pub fn name(self) -> &'static str {
        match self {
            SummaryKind::All => "all",
            SummaryKind::Taxonomy => "taxonomy",
            SummaryKind::Timeline => "timeline",
            SummaryKind::Places => "places",
        }
    }
}

/// What `summarize` counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SummarizeRequest {
    /// The summary kind (echoed back).
    pub kind: SummaryKind,
    /// Only this namespace (unknown: exit 1 listing the namespaces).
    pub namespace: Option<String>,
    /// Only keys whose path matches one of these globs (empty: no key listing).
    pub keys: Vec<String>,
    /// Count keys by their first N segments (N >= 1; a key with fewer groups under itself).
    pub depth: Option<usize>,
}

/// What `summarize` counted. Members are declared in sorted order (see
/// [`Outcome::MEMBERS_SORTED`]).
#[derive(Debug, Clone, Serialize)]
pub struct SummarizeOutcome {
    /// The depth asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
    /// With globs: the matching paths per namespace (namespaces with matches only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matching_keys: Option<BTreeMap<String, Vec<String>>>,
    /// The namespace asked for, else null.
    pub namespace_filter: Option<String>,
    /// The namespaces in scope with their memory counts, in key order (JSON: an object).
    #[serde(serialize_with = "as_map")]
    pub namespaces: Vec<(String, u64)>,
    /// With a depth: the counts per prefix of that depth, per namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix_counts: Option<BTreeMap<String, PrefixCounts>>,
    /// Memories in the namespaces in scope (not filtered by the globs).
    pub total_memories: u64,
    /// Namespaces in scope.
    pub total_namespaces: usize,
    /// The summary kind asked for.
    #[serde(rename = "type")]
    pub kind: SummaryKind,
}

/// The pairs as an object, members in sorted order whatever order the pairs are in.
fn as_map<S: Serializer>(pairs: &[(String, u64)], s: S) -> Result<S::Ok, S::Error> {
    let mut sorted: Vec<&(String, u64)> = pairs.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    s.collect_map(sorted.into_iter().map(|(k, v)| (k, v)))
}

impl Outcome for SummarizeOutcome {
    crate::outcome_json!(write_json);

    const MEMBERS_SORTED: bool = true;

    /// As serde gives it, with the per-prefix counts and key lists built from sorted runs
    /// instead of one insertion per entry: at `--depth 3` those are thousands of entries,
    /// and inserting them one by one was most of the command's time.
    fn to_json(&self) -> Value {
        let head = SummarizeOutcome {
            namespaces: self.namespaces.clone(),
            namespace_filter: self.namespace_filter.clone(),
            matching_keys: None,
            prefix_counts: None,
            ..*self
        };
        let mut v = serde_json::to_value(&head).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            if let Some(pc) = &self.prefix_counts {
                let per_ns = pc.iter().map(|(ns, groups)| {
                    let counts = groups.iter().map(|(g, n)| (g.to_string(), Value::from(n)));
                    (ns.clone(), Value::Object(counts.collect()))
                });
                m.insert("prefix_counts".into(), Value::Object(per_ns.collect()));
            }
            if let Some(mk) = &self.matching_keys {
                let per_ns = mk.iter().map(|(ns, keys)| {
                    let keys = keys.iter().map(|k| Value::from(k.as_str()));
                    (ns.clone(), Value::Array(keys.collect()))
                });
                m.insert("matching_keys".into(), Value::Object(per_ns.collect()));
            }
        }
        v
    }
}

impl Memoir {
    /// Counts the memories at a read point by namespace and, with a depth, by key prefix;
    /// with globs, lists the matching keys (and counts only those by prefix).
    pub fn summarize(
        &self,
        req: &SummarizeRequest,
        at: &ReadPoint,
    ) -> MemoirResult<SummarizeOutcome> {
        let globs = if req.keys.is_empty() {
            None
        } else {
            Some(KeyGlobs::new(&req.keys)?)
        };
        if let Some(ns) = &req.namespace {
            validate_namespace(ns)?;
        }
        if req.depth == Some(0) {
            return Err(MemoirError::coded(exit::USAGE, "depth must be at least 1"));
        }
        let depth = req.depth;
        let (scope, matching, prefix_counts) = self.reading(|repo| {
            let (_, root) = self.read_root(repo, at)?;
            let all = namespace_counts(repo, &root)?;
            let scope: Vec<(String, u64)> = match &req.namespace {
                // memoir's own records (taxonomy, watch list) only when named.
                None => all
                    .into_iter()
                    .filter(|(n, _)| !is_internal_namespace(n))
                    .collect(),
                Some(ns) => match all.iter().find(|(n, _)| n == ns) {
                    Some(found) => vec![found.clone()],
                    None => {
                        let names: Vec<String> = all.into_iter().map(|(n, _)| n).collect();
                        return Err(unknown_namespace(ns, &names));
                    }
                },
            };

            // Globs: the matching paths of each namespace in scope.
            let mut matching: BTreeMap<String, Vec<String>> = BTreeMap::new();
            let mut prefix_counts: BTreeMap<String, PrefixCounts> = BTreeMap::new();
            // An encoded group's path, after its namespace.
            let path_of = |g: &[u8]| -> usize { path_start(g).unwrap_or(g.len()) };
            if let Some(g) = &globs {
                for (ns, _) in &scope {
                    let mut hits = Vec::new();
                    let mut counts = PrefixCountsBuilder::default();
                    repo.tree().scan(
                        &root,
                        &prefix_range(&namespace_prefix(ns)),
                        &mut |k, _| {
                            let (_, path) = split_encoded(k);
                            if g.matches(&path) {
                                if let Some(d) = depth {
                                    let group = group_prefix(k, d);
                                    counts.push(&group[path_of(group)..], 1);
                                }
                                hits.push(path);
                            }
                            true
                        },
                    )?;
                    if !hits.is_empty() {
                        matching.insert(ns.clone(), hits);
                        if depth.is_some() {
                            prefix_counts.insert(ns.clone(), counts.finish());
                        }
                    }
                }
            } else if let Some(d) = depth {
                for (ns, keys) in &scope {
                    let mut counts = PrefixCountsBuilder::for_keys(*keys);
                    repo.tree().histogram_each(
                        &root,
                        &prefix_range(&namespace_prefix(ns)),
                        &|k| group_prefix(k, d),
                        &mut |g, n| counts.push(&g[path_of(g)..], n),
                    )?;
                    prefix_counts.insert(ns.clone(), counts.finish());
                }
            }
            Ok((scope, matching, prefix_counts))
        })?;

        Ok(SummarizeOutcome {
            kind: req.kind,
            namespace_filter: req.namespace.clone(),
            total_namespaces: scope.len(),
            total_memories: scope.iter().map(|(_, n)| n).sum(),
            namespaces: scope,
            matching_keys: globs.is_some().then_some(matching),
            depth,
            prefix_counts: depth.is_some().then_some(prefix_counts),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_what_serde_gives_and_what_is_printed() {
        let counts: PrefixCounts = [("a.b", 2u64), ("a-c", 1), ("a.b.c", 5), ("é", 3)]
            .into_iter()
            .collect();
        let keys = BTreeMap::from([("work".to_string(), vec!["x.y".into(), "a".into()])]);
        for (matching_keys, prefix_counts) in [
            (None, None),
            (Some(keys.clone()), None),
            (
                None,
                Some(BTreeMap::from([("default".to_string(), counts.clone())])),
            ),
            (
                Some(keys),
                Some(BTreeMap::from([
                    ("default".to_string(), counts.clone()),
                    ("work".to_string(), PrefixCounts::default()),
                ])),
            ),
        ] {
            let out = SummarizeOutcome {
                kind: SummaryKind::Taxonomy,
                namespace_filter: Some("work".into()),
                total_namespaces: 2,
                total_memories: 11,
                namespaces: vec![
                    ("work".into(), 1),
                    ("default".into(), 10),
                    ("a:b".into(), 0),
                ],
                depth: prefix_counts.is_some().then_some(3),
                matching_keys,
                prefix_counts,
            };
            assert_eq!(out.to_json(), serde_json::to_value(&out).unwrap());
            // Written straight out, it is byte for byte its value printed.
            let mut direct = Vec::new();
            out.write_json(&mut direct).unwrap();
            let mut want = Vec::new();
            crate::app::write_pretty(&mut want, &crate::app::sorted(out.to_json())).unwrap();
            want.push(b'\n');
            assert_eq!(String::from_utf8(direct), String::from_utf8(want));
        }
    }
}
