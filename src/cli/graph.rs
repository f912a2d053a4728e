//! `memoir graph KEY`: the memory graph around a memory or taxonomy prefix, at any revision.

use memoir::app::{EdgeKind, GraphRequest, NodeKind, GRAPH_MAX_DEPTH};

use super::context::{read_point, AtArg, BranchArg, Ctx};
use super::output::{esc, CliError, Report};

/// Show the memory graph around a memory or prefix
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir graph preferences.coding\n  memoir graph work:infra.database --depth 2 --at main~3\n  memoir --json graph a.b.c --depth 2 --limit 500\n\nNodes are the namespace, its taxonomy prefixes and its memories; edges join each path to its\nparent (taxonomy) and a memory to the keys it was written with (related). The walk goes\n--depth hops from KEY and stops adding nodes at --limit (the output then says it was cut\nshort). Components are the groups of memories joined by related keys. A KEY with no memory at\nor below it is exit 2; an unknown -n namespace is exit 1."
)]
pub struct Args {
    /// Key or prefix (`path` or `ns:path`)
    #[arg(value_name = "KEY")]
    pub key: String,
    /// Namespace of a bare path [default: default]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Hops from KEY
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u8).range(1..=GRAPH_MAX_DEPTH as i64))]
    pub depth: u8,
    /// Most nodes (1 to 5000) [default: 200]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub at: AtArg,
    #[command(flatten)]
    pub branch: BranchArg,
}

/// Runs `graph`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let req = GraphRequest {
        key: args.key,
        namespace: args.namespace,
        depth: Some(usize::from(args.depth)),
        limit: args.limit,
    };
    let out = ctx.app.graph(&req, &read_point(&args.at, &args.branch))?;
    let mut r = ctx.report(&out);
    r.data = true;
    let components = out.components.len();
    r.lines.push(ctx.style.bold(&esc(&format!(
        "Graph of {} at {} (depth {}): {} node{}, {} edge{}, {} related group{}",
        out.key,
        out.commit.short(8),
        out.depth,
        out.node_count,
        plural(out.node_count),
        out.edge_count,
        plural(out.edge_count),
        components,
        plural(components),
    ))));
    let width = out
        .nodes
        .iter()
        .map(|n| label(&n.path).chars().count())
        .max()
        .unwrap_or(0);
    let mut distance = usize::MAX;
    for n in &out.nodes {
        if n.distance != distance {
            distance = n.distance;
            r.lines.push(format!("distance {distance}"));
        }
        let kind = match n.kind {
            NodeKind::Namespace => "namespace",
            NodeKind::Prefix => "prefix",
            NodeKind::Memory => "memory",
        };
        r.lines.push(esc(&format!(
            "  {:<width$}  {kind:<9}  {:>7} {:<8}  degree {}",
            label(&n.path),
            n.count,
            if n.count == 1 { "memory" } else { "memories" },
            n.degree,
        )));
    }
    if !out.edges.is_empty() {
        r.lines.push("edges".to_string());
        let prefix = format!("{}:", out.namespace);
        for e in &out.edges {
            let kind = match e.kind {
                EdgeKind::Taxonomy => "taxonomy",
                EdgeKind::Related => "related",
            };
            let end = |id: &str| label(id.strip_prefix(&prefix).unwrap_or(id)).to_string();
            r.lines.push(esc(&format!(
                "  {} — {}  ({kind})",
                end(&e.from),
                end(&e.to)
            )));
        }
    }
    for (i, group) in out.components.iter().enumerate() {
        r.lines.push(esc(&format!(
            "related group {}: {}",
            i + 1,
            group.join(", ")
        )));
    }
    if out.truncated {
        r.lines.push(
            ctx.style
                .warn(&format!("cut short at {} nodes (--limit)", out.node_count)),
        );
    }
    Ok(r)
}

/// A node's path, or `(namespace)` for the namespace's root.
fn label(path: &str) -> &str {
    if path.is_empty() {
        "(namespace)"
    } else {
        path
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
