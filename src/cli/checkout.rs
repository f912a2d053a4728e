//! `memoir checkout TARGET [-b]`: move HEAD to a branch (or a commit, detached).

use memoir::app::CheckoutOutcome;

use super::context::Ctx;
use super::output::{esc, CliError, Report};

/// Switch HEAD to a branch, create one with -b, or detach at a commit
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir checkout experiment\n  memoir checkout -b experiment   # create it at HEAD and switch (also --create)\n  memoir checkout 3b2cb5b7        # detached HEAD at a commit"
)]
pub struct Args {
    /// Branch name, or a revision to detach at
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// Create TARGET as a new branch at HEAD first
    #[arg(short = 'b', long = "create")]
    pub create: bool,
}

/// Runs `checkout`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    Ok(render(ctx, &ctx.app.checkout(&args.target, args.create)?))
}

/// The report of a checkout.
pub fn render(ctx: &Ctx, out: &CheckoutOutcome) -> Report {
    ctx.report(out).line(ctx.style.ok(&esc(&out.message)))
}
