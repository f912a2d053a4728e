//! `memoir export`: every memory as JSON Lines (one record per line, in key order).

use std::path::PathBuf;

use serde_json::json;

use memoir::key::{namespace_prefix, validate_namespace};
use memoir::memory::read_record;
use memoir::prolly::{prefix_range, KeyRange};

use super::context::{absolute, read_target, resolve_rev, BranchArg, Ctx};
use super::output::{esc, sorted, CliError, Report};

/// Write every memory as JSON Lines (stdout, or a file with -o)
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir export > memories.jsonl\n  memoir export -n default -o default.jsonl\n  memoir export --at experiment | memoir -s ./other import -"
)]
pub struct Args {
    /// Export the memories as of this revision (branch, HEAD or commit id)
    #[arg(long, value_name = "REV", conflicts_with = "branch")]
    pub at: Option<String>,
    /// Only this namespace
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Write to this file instead of stdout
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub branch: BranchArg,
}

/// Runs `export`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    if let Some(ns) = &args.namespace {
        validate_namespace(ns)?;
    }
    let repo = ctx.open_repo()?;
    let commit = match &args.at {
        Some(rev) => resolve_rev(ctx, &repo, rev)?,
        None => read_target(&repo, args.branch.branch.as_deref())?.1,
    };
    let root = repo.root_of(&commit)?;
    let range = match &args.namespace {
        Some(ns) => prefix_range(&namespace_prefix(ns)),
        None => KeyRange::all(),
    };
    let entries = repo.tree().collect(&root, &range)?;
    let mut out = String::new();
    for (_, id) in &entries {
        let rec = read_record(repo.objects(), id)?;
        out.push_str(&serde_json::to_string(&sorted(rec.to_json())).unwrap_or_default());
        out.push('\n');
    }
    drop(repo);
    let count = entries.len();
    match &args.output {
        None => {
            let mut r = Report::new(json!({}));
            r.raw = Some(out);
            Ok(r)
        }
        Some(path) => {
            std::fs::write(path, out)
                .map_err(|e| CliError::invalid(format!("cannot write {}: {e}", path.display())))?;
            let shown = absolute(path).display().to_string();
            Ok(Report::new(json!({
                "success": true, "count": count, "path": shown, "commit": commit.to_hex(),
            }))
            .line(
                ctx.style
                    .ok(&format!("Exported {count} memories to {}", esc(&shown))),
            ))
        }
    }
}
