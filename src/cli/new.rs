//! `memoir new PATH`: create a store and its first commit.

use std::path::PathBuf;

use memoir::Memoir;

use super::context::{expand_home, BranchArg, Ctx, WriteArgs};
use super::output::{CliError, Report};

/// Create a store (refuses a non-empty directory that is not a store)
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  memoir new ./memory\n  memoir --json new ~/.memoir/agent-1")]
pub struct Args {
    /// Directory to create the store in (created if missing; must be empty; a leading `~/` is
    /// the home directory)
    #[arg(value_parser = |s: &str| Ok::<_, String>(expand_home(s)))]
    pub path: PathBuf,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// Runs `new`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let who = ctx.write_as(&args.write, &BranchArg::default());
    let (_, out) = Memoir::create(&args.path, ctx.app.options().clone(), &who)?;
    let line = ctx
        .style
        .ok(&format!("{} (commit {})", out.message, out.commit.short(8)));
    Ok(ctx.report(&out).line(line))
}
