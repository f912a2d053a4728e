//! `memoir summarize`: counts by namespace, by key prefix (`--depth N`), and the keys that
//! match globs (`--keys`). Counts come from the tree's subtree counts: O(groups x height)
//! node reads; only `--keys` visits keys (of the namespaces in scope).

use std::fmt::Write as _;

use clap::ValueEnum;

use memoir::app::{SummarizeOutcome, SummarizeRequest, SummaryKind};

use super::context::{read_point, AtArg, BranchArg, Ctx};
use super::output::{esc, esc_into, CliError, Report};

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

impl From<Kind> for SummaryKind {
    fn from(k: Kind) -> Self {
        match k {
            Kind::All => SummaryKind::All,
            Kind::Taxonomy => SummaryKind::Taxonomy,
            Kind::Timeline => SummaryKind::Timeline,
            Kind::Places => SummaryKind::Places,
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
    let req = SummarizeRequest {
        kind: args.kind.into(),
        namespace: args.namespace,
        keys: args.keys,
        depth: args.depth.map(|d| d as usize),
    };
    let out = ctx
        .app
        .summarize(&req, &read_point(&args.at, &args.branch))?;
    if ctx.json {
        return Ok(Report::json_only(out));
    }
    Ok(render(ctx, &out))
}

/// The report of a summary.
pub fn render(ctx: &Ctx, out: &SummarizeOutcome) -> Report {
    let mut r = ctx.report(out);
    r.data = true;
    if ctx.json {
        return r; // the lines are not printed
    }
    let scope = &out.namespaces;
    let s = &ctx.style;
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    // With globs, what matched against what exists.
    let matched = out
        .matching_keys
        .as_ref()
        .map(|m| m.values().map(Vec::len).sum::<usize>());
    let mut lines = vec![s.info(&match matched {
        Some(m) => format!(
            "{m} key{} of {} memories in {} namespace{} match{}",
            plural(m),
            out.total_memories,
            scope.len(),
            plural(scope.len()),
            if m == 1 { "es" } else { "" }
        ),
        None => format!(
            "{} memories in {} namespace{}",
            out.total_memories,
            scope.len(),
            plural(scope.len())
        ),
    })];
    for (ns, n) in scope {
        let matching = out
            .matching_keys
            .as_ref()
            .map(|m| m.get(ns).map_or(0, Vec::len));
        lines.push(match matching {
            Some(m) => format!("  {}: {m} of {n}", s.bold(&esc(ns))),
            None => format!("  {}: {n}", s.bold(&esc(ns))),
        });
        if let Some(pc) = out.prefix_counts.as_ref().and_then(|p| p.get(ns)) {
            for (p, c) in pc.iter() {
                // Built in place: a deep summary has a line per key.
                let mut line = String::with_capacity(p.len() + 16);
                line.push_str("    ");
                esc_into(&mut line, p);
                let _ = write!(line, ": {c}");
                lines.push(line);
            }
        }
        if let Some(keys) = out.matching_keys.as_ref().and_then(|m| m.get(ns)) {
            for k in keys {
                let mut line = String::with_capacity(k.len() + 4);
                line.push_str("    ");
                esc_into(&mut line, k);
                lines.push(line);
            }
        }
    }
    if out.matching_keys.as_ref().is_some_and(|m| m.is_empty()) {
        lines.push(s.info("no keys match"));
    }
    r.lines = lines;
    r
}
