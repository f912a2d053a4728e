//! `memoir merge SOURCE`: bring another branch's memories into a branch.

use clap::ValueEnum;

use memoir::app::{MergeOutcome, MergeRequest, MergeStrategy};

use super::context::{BranchArg, Ctx, WriteArgs};
use super::output::{esc, exit, CliError, Report};

const HELP: &str = "\
Examples:
  memoir merge agent-1
  memoir --json merge agent-1 --into main -S union
  memoir merge experiment --ff-only

A key changed differently on both sides is a conflict. Without -S, conflicts are listed and
nothing is committed (exit 4). -S ours (or skip) keeps the destination's value, -S theirs takes
the source's, -S union combines the facet entries of both records (ordered by time, without
repeats). A merge commit has two parents; a branch behind the source is fast-forwarded.";

/// How conflicts are settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StrategyArg {
    /// Keep the destination's value
    Ours,
    /// Same as ours
    Skip,
    /// Take the source's value
    Theirs,
    /// Union of both records' facet entries
    Union,
}

/// Merge a branch (or any revision) into a branch
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// Branch or revision to merge
    #[arg(value_name = "SOURCE")]
    pub from: String,
    /// Branch to merge into [default: the current branch]
    #[arg(long, value_name = "BRANCH")]
    pub into: Option<String>,
    /// Conflict strategy
    #[arg(short = 'S', long = "strategy", value_enum)]
    pub strategy: Option<StrategyArg>,
    /// Refuse anything but a fast-forward (exit 6)
    #[arg(long)]
    pub ff_only: bool,
    #[command(flatten)]
    pub write: WriteArgs,
}

impl From<StrategyArg> for MergeStrategy {
    fn from(s: StrategyArg) -> Self {
        match s {
            StrategyArg::Ours => MergeStrategy::Ours,
            StrategyArg::Skip => MergeStrategy::Skip,
            StrategyArg::Theirs => MergeStrategy::Theirs,
            StrategyArg::Union => MergeStrategy::Union,
        }
    }
}

/// Runs `merge`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let who = ctx.write_as(&args.write, &BranchArg::default());
    let out = ctx.app.merge(
        &MergeRequest {
            source: args.from,
            into: args.into,
            strategy: args.strategy.map(MergeStrategy::from),
            ff_only: args.ff_only,
        },
        &who,
    )?;
    Ok(render(ctx, &out))
}

/// The report of a merge.
pub fn render(ctx: &Ctx, out: &MergeOutcome) -> Report {
    let mut r = ctx.report(out);
    let s = &ctx.style;
    if r.code == exit::OK {
        let mut line = s.ok(&esc(&out.message));
        if let Some(c) = out.commit {
            line.push_str(&format!(" ({})", c.short(8)));
        }
        r.lines.push(line);
        if !out.conflicts.is_empty() {
            r.lines.push(s.warn(&format!(
                "{} conflict(s) settled by {}",
                out.conflicts.len(),
                out.strategy
            )));
        }
    } else {
        r.lines.push(s.err(&esc(&out.message)));
    }
    for c in &out.conflicts {
        r.lines.push(format!("  {}", esc(c)));
    }
    r
}
