//! `memoir status`: where the store is, which branch, how many commits and memories.

use memoir::app::StatusOutcome;

use super::context::Ctx;
use super::output::{esc, CliError, Report};

/// Show the store's path, branch, commit and memory counts, and namespaces
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  memoir -s ./memory status\n  memoir -s ./memory --json status")]
pub struct Args {}

/// Runs `status`.
pub fn run(ctx: &Ctx, _args: Args) -> Result<Report, CliError> {
    Ok(render(ctx, &ctx.app.status()?))
}

/// The report of a status.
pub fn render(ctx: &Ctx, out: &StatusOutcome) -> Report {
    let path = &out.path;
    let Some(head) = out.head else {
        return Report::of(out).line(ctx.style.info(&format!("Store at {path} has no history")));
    };
    let s = &ctx.style;
    let mut r = Report::of(out);
    r.data = true;
    r.lines = vec![
        s.info(&format!("Store: {}", esc(path))),
        format!(
            "  Branch: {}",
            out.branch
                .clone()
                .unwrap_or_else(|| format!("(detached at {})", head.short(8)))
        ),
        format!("  Commits: {}", out.commit_count),
        format!("  Memories: {}", out.memory_count),
        format!(
            "  Namespaces: {}",
            if out.namespaces.is_empty() {
                "(none)".to_string()
            } else {
                out.namespaces.join(", ")
            }
        ),
    ];
    r
}
