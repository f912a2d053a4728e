//! `memoir forget KEY`: remove a memory in a new commit (history keeps it).
//!
//! `--purge` erases the key from every commit of every branch instead (history is rewritten
//! and commit ids change), then removes what became unreachable.

use memoir::app::{ForgetOutcome, ForgetRequest};

use super::context::{BranchArg, Ctx, WriteArgs};
use super::output::{esc, CliError, Report};
use super::search::print_notes;

/// Remove the memory at KEY (a new commit; history keeps the old value)
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir forget preferences.coding.testing\n  memoir --json forget codebase:onboard:setup --force\n\nA key that does not exist is exit 2, and nothing is committed. --purge erases the key from\nevery commit of every branch, whether or not the branch still has it, then removes what became\nunreachable and prunes the caches; running it again finishes a purge that was interrupted."
)]
pub struct Args {
    /// Key (`path` or `ns:path`)
    #[arg(value_name = "KEY")]
    pub key: String,
    /// Namespace of a bare path [default: default]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Do not ask for confirmation (memoir never asks; accepted for compatibility)
    #[arg(short = 'f', long)]
    pub force: bool,
    /// Erase the key from the whole history of every branch (rewrites commit ids)
    #[arg(long)]
    pub purge: bool,
    #[command(flatten)]
    pub branch: BranchArg,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// Runs `forget`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let req = ForgetRequest {
        key: args.key,
        namespace: args.namespace,
        purge: args.purge,
    };
    let out = ctx
        .app
        .forget(&req, &ctx.write_as(&args.write, &args.branch))?;
    Ok(render(ctx, &out))
}

/// The report of a forget (`-v` says what a purge did to the caches).
pub fn render(ctx: &Ctx, out: &ForgetOutcome) -> Report {
    print_notes(ctx, &out.notes);
    let line = if out.purged.is_some() {
        esc(&out.message)
    } else {
        format!(
            "Forgot {} (commit {})",
            esc(&out.full_key),
            out.commit.short(8)
        )
    };
    let mut r = ctx.report(out).line(ctx.style.ok(&line));
    if out.purged.is_some() && !out.remotes_keep.is_empty() {
        let names = out.remotes_keep.join(", ");
        r.lines.push(ctx.style.warn(&esc(&format!(
            "remotes keep what was pushed to them, this content included: {names}. To erase it \
             there too: memoir push --force REMOTE for each branch, then memoir gc --remote \
             REMOTE --grace 0"
        ))));
    }
    r
}
