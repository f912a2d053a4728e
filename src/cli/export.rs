//! `memoir export`: every memory as JSON Lines (one record per line, in key order).

use std::path::PathBuf;

use memoir::app::ReadPoint;

use super::context::{absolute, BranchArg, Ctx};
use super::output::{esc, CliError, Report};

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
    let at = ReadPoint {
        at: args.at,
        branch: args.branch.branch,
    };
    let out = ctx.app.export(args.namespace.as_deref(), &at)?;
    let lines = out.to_jsonl();
    let mut r = ctx.report(&out);
    match &args.output {
        None => r.raw = Some(lines),
        Some(path) => {
            std::fs::write(path, lines)
                .map_err(|e| CliError::invalid(format!("cannot write {}: {e}", path.display())))?;
            let shown = absolute(path).display().to_string();
            r.json["path"] = shown.clone().into();
            r.lines.push(ctx.style.ok(&format!(
                "Exported {} memories to {}",
                out.count,
                esc(&shown)
            )));
        }
    }
    Ok(r)
}
