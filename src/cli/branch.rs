//! `memoir branch`: list branches, create one, or delete one.

use memoir::app::BranchListOutcome;

use super::context::Ctx;
use super::output::{esc, CliError, Report};

/// List branches; create NAME (at --from, default HEAD); delete with -d / -D
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir branch\n  memoir branch experiment\n  memoir branch hotfix --from main\n  memoir branch -d experiment   # refuses if not merged into HEAD\n  memoir branch -D experiment   # deletes anyway"
)]
pub struct Args {
    /// Branch to create
    #[arg(value_name = "NAME", conflicts_with_all = ["delete", "force_delete"])]
    pub name: Option<String>,
    /// Where the new branch starts (branch, HEAD or commit id) [default: HEAD]
    #[arg(long, value_name = "REV", requires = "name")]
    pub from: Option<String>,
    /// Delete a branch that is merged into HEAD
    #[arg(
        short = 'd',
        long = "delete",
        value_name = "NAME",
        conflicts_with = "force_delete"
    )]
    pub delete: Option<String>,
    /// Delete a branch even if it is not merged
    #[arg(short = 'D', value_name = "NAME")]
    pub force_delete: Option<String>,
}

/// Runs `branch`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let s = &ctx.style;
    if let Some((name, force)) = args
        .delete
        .as_ref()
        .map(|n| (n, false))
        .or(args.force_delete.as_ref().map(|n| (n, true)))
    {
        let out = ctx.app.delete_branch(name, force)?;
        let line = s.ok(&esc(&out.message));
        return Ok(ctx.report(&out).line(line));
    }
    if let Some(name) = &args.name {
        let out = ctx.app.create_branch(name, args.from.as_deref())?;
        let line = s.ok(&esc(&out.message));
        return Ok(ctx.report(&out).line(line));
    }
    Ok(render_list(ctx, &ctx.app.branches()?))
}

/// The report of the branch list.
pub fn render_list(ctx: &Ctx, out: &BranchListOutcome) -> Report {
    let s = &ctx.style;
    let mut r = ctx.report(out);
    r.data = true;
    if out.current.is_none() {
        r.lines
            .push(format!("* (detached at {})", out.head.short(8)));
    }
    for b in &out.branches {
        if out.current.as_deref() == Some(b.as_str()) {
            r.lines.push(format!("* {}", s.bold(&esc(b))));
        } else {
            r.lines.push(format!("  {}", esc(b)));
        }
    }
    r
}
