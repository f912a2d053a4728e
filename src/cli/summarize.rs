//! `memoir summarize`: counts by namespace, by key prefix (`--depth N`), and the keys that
//! match globs (`--keys`). Counts come from the tree's subtree counts: O(groups x height)
//! node reads; only `--keys` visits keys (of the namespaces in scope).

use std::collections::BTreeMap;

use clap::ValueEnum;
use serde_json::{json, Map, Value};

use memoir::glob::KeyGlobs;
use memoir::key::{group_prefix, namespace_prefix, split_encoded, validate_namespace};
use memoir::prolly::prefix_range;

use super::context::{open_read, AtArg, BranchArg, Ctx};
use super::output::{esc, CliError, Report};
use super::status::namespace_counts;

const HELP: &str = "\
Examples:
  memoir summarize
  memoir --json summarize --depth 2
  memoir summarize -n default --keys 'preferences.*' --keys 'tools.?it'

Globs match the whole path without namespace; '*' crosses dots, '?' is one character,
'[seq]' and '[!seq]' are classes; several --keys are a union and filter before grouping.
A key with fewer than N segments is counted under itself at --depth N.
The four summary types give the same counts.";

/// What to summarize (all four give the same counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// Everything
    All,
    /// Key taxonomy
    Taxonomy,
    /// Timeline
    Timeline,
    /// Places
    Places,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::All => "all",
            Kind::Taxonomy => "taxonomy",
            Kind::Timeline => "timeline",
            Kind::Places => "places",
        }
    }
}

/// Count memories by namespace and key prefix; list keys matching globs
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// Summary type
    #[arg(value_enum, default_value_t = Kind::All)]
    pub kind: Kind,
    /// Only this namespace
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Only keys whose path matches this glob (repeat for a union)
    #[arg(long = "keys", value_name = "GLOB")]
    pub keys: Vec<String>,
    /// Count keys by their first N segments (N >= 1)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub depth: Option<u64>,
    #[command(flatten)]
    pub branch: BranchArg,
    #[command(flatten)]
    pub at: AtArg,
}

/// Runs `summarize`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let globs = if args.keys.is_empty() {
        None
    } else {
        Some(KeyGlobs::new(&args.keys)?)
    };
    if let Some(ns) = &args.namespace {
        validate_namespace(ns)?;
    }
    let depth = args.depth.map(|d| d as usize);
    let (repo, _, root) = open_read(ctx, &args.at, &args.branch)?;
    let all = namespace_counts(&repo, &root)?;
    let scope: Vec<(String, u64)> = match &args.namespace {
        None => all,
        Some(ns) => match all.iter().find(|(n, _)| n == ns) {
            Some(found) => vec![found.clone()],
            None => {
                let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
                return Err(CliError::invalid(format!(
                    "namespace '{ns}' not found; namespaces: {}",
                    if names.is_empty() {
                        "(none)".to_string()
                    } else {
                        names.join(", ")
                    }
                )));
            }
        },
    };

    // --keys: the matching paths of each namespace in scope.
    let mut matching: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut prefix_counts: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    if let Some(g) = &globs {
        for (ns, _) in &scope {
            let mut hits = Vec::new();
            repo.tree()
                .scan(&root, &prefix_range(&namespace_prefix(ns)), &mut |k, _| {
                    let (_, path) = split_encoded(k);
                    if g.matches(&path) {
                        if let Some(d) = depth {
                            let (_, group) = split_encoded(group_prefix(k, d));
                            *prefix_counts
                                .entry(ns.clone())
                                .or_default()
                                .entry(group)
                                .or_insert(0) += 1;
                        }
                        hits.push(path);
                    }
                    true
                })?;
            if !hits.is_empty() {
                matching.insert(ns.clone(), hits);
            }
        }
    } else if let Some(d) = depth {
        for (ns, _) in &scope {
            let groups =
                repo.tree()
                    .histogram(&root, &prefix_range(&namespace_prefix(ns)), &|k| {
                        group_prefix(k, d)
                    })?;
            let m = prefix_counts.entry(ns.clone()).or_default();
            for (g, n) in groups {
                m.insert(split_encoded(&g).1, n);
            }
        }
    }
    drop(repo);

    let total: u64 = scope.iter().map(|(_, n)| n).sum();
    let mut v = Map::new();
    v.insert("success".into(), json!(true));
    v.insert("type".into(), json!(args.kind.name()));
    v.insert("namespace_filter".into(), json!(args.namespace));
    v.insert("total_namespaces".into(), json!(scope.len()));
    v.insert("total_memories".into(), json!(total));
    v.insert(
        "namespaces".into(),
        Value::Object(scope.iter().map(|(n, c)| (n.clone(), json!(c))).collect()),
    );
    if globs.is_some() {
        v.insert("matching_keys".into(), json!(matching));
    }
    if let Some(d) = depth {
        v.insert("depth".into(), json!(d));
        v.insert("prefix_counts".into(), json!(prefix_counts));
    }

    let s = &ctx.style;
    let mut lines = vec![s.info(&format!(
        "{total} memories in {} namespace{}",
        scope.len(),
        if scope.len() == 1 { "" } else { "s" }
    ))];
    for (ns, n) in &scope {
        lines.push(format!("  {}: {n}", s.bold(&esc(ns))));
        if let Some(pc) = prefix_counts.get(ns) {
            for (p, c) in pc {
                lines.push(format!("    {}: {c}", esc(p)));
            }
        }
        if let Some(keys) = matching.get(ns) {
            for k in keys {
                lines.push(format!("    {}", esc(k)));
            }
        }
    }
    if globs.is_some() && matching.is_empty() {
        lines.push(s.info("no keys match"));
    }
    let mut r = Report::new(Value::Object(v));
    r.lines = lines;
    r.data = true;
    Ok(r)
}
