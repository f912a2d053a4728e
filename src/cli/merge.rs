//! `memoir merge SOURCE`: bring another branch's memories into a branch.

use clap::ValueEnum;
use serde_json::json;

use memoir::key::split_encoded;
use memoir::memory::{read_record, union as record_union};
use memoir::object::ObjectId;
use memoir::repo::{Head, MergeKind, Repo, Strategy, ValueUnion};

use super::context::{resolve_rev, Ctx, WriteArgs};
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

/// Record union for `-S union`: writes the combined record and returns its id.
struct RecordUnion<'a> {
    repo: &'a Repo,
}

impl ValueUnion for RecordUnion<'_> {
    fn union(
        &self,
        _key: &[u8],
        _base: Option<&ObjectId>,
        ours: Option<&ObjectId>,
        theirs: Option<&ObjectId>,
    ) -> Result<Option<ObjectId>, String> {
        let read = |id: &ObjectId| read_record(self.repo.objects(), id).map_err(|e| e.to_string());
        match (ours, theirs) {
            (Some(o), Some(t)) => {
                let merged = record_union(&read(o)?, &read(t)?);
                let blob = merged.to_blob().map_err(|e| e.to_string())?;
                self.repo
                    .objects()
                    .write(&blob)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            // A deletion against a change: keep the side that still has a record.
            (Some(o), None) => Ok(Some(*o)),
            (None, Some(t)) => Ok(Some(*t)),
            (None, None) => Ok(None),
        }
    }
}

/// Runs `merge`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let repo = ctx.open_repo()?;
    let into = match &args.into {
        Some(b) => {
            repo.branch_tip(b)?;
            b.clone()
        }
        None => match repo.head()? {
            Head::Branch(b) => b,
            Head::Detached(_) => {
                return Err(CliError::invalid(
                    "HEAD is detached; name the destination with --into",
                ))
            }
        },
    };
    let source = resolve_rev(ctx, &repo, &args.from)?;
    let union = RecordUnion { repo: &repo };
    let strategy = match args.strategy {
        None => Strategy::Fail,
        Some(StrategyArg::Ours | StrategyArg::Skip) => Strategy::Ours,
        Some(StrategyArg::Theirs) => Strategy::Theirs,
        Some(StrategyArg::Union) => Strategy::Union(&union),
    };
    let strategy_name = match args.strategy {
        None => "none",
        Some(StrategyArg::Ours) => "ours",
        Some(StrategyArg::Skip) => "skip",
        Some(StrategyArg::Theirs) => "theirs",
        Some(StrategyArg::Union) => "union",
    };
    let message = format!("Merge branch '{}' into {}", args.from, into);
    let outcome = if args.ff_only {
        repo.fast_forward(&source, &into)?
    } else {
        let sig = ctx.signature(&args.write);
        repo.merge(&source, &into, &strategy, &sig, &message)?
    };
    drop(repo);
    let conflicts: Vec<String> = outcome
        .conflicts
        .iter()
        .map(|c| {
            let (ns, path) = split_encoded(&c.key);
            format!("{ns}:{path}")
        })
        .collect();
    let (summary, code) = match outcome.kind {
        MergeKind::UpToDate => (format!("Already up to date with '{}'", args.from), exit::OK),
        MergeKind::FastForward => (
            format!("Fast-forwarded {into} to '{}'", args.from),
            exit::OK,
        ),
        MergeKind::Merged => (message.clone(), exit::OK),
        MergeKind::Conflicted => (
            format!(
                "{} conflicting key(s); nothing merged (choose a strategy with -S)",
                conflicts.len()
            ),
            exit::CONFLICT,
        ),
    };
    let kind = match outcome.kind {
        MergeKind::UpToDate => "up_to_date",
        MergeKind::FastForward => "fast_forward",
        MergeKind::Merged => "merge",
        MergeKind::Conflicted => "conflicted",
    };
    let json = json!({
        "success": code == exit::OK,
        "source_branch": args.from,
        "target_branch": into,
        "conflicts": conflicts,
        "strategy": strategy_name,
        "kind": kind,
        "commit_hash": outcome.commit.map(|c| c.to_hex()),
        "message": summary,
    });
    let mut r = Report::new(json);
    r.code = code;
    let s = &ctx.style;
    if code == exit::OK {
        let mut line = s.ok(&esc(&summary));
        if let Some(c) = outcome.commit {
            line.push_str(&format!(" ({})", c.short(8)));
        }
        r.lines.push(line);
        if !conflicts.is_empty() {
            r.lines.push(s.warn(&format!(
                "{} conflict(s) settled by {strategy_name}",
                conflicts.len()
            )));
        }
    } else {
        r.lines.push(s.err(&esc(&summary)));
    }
    for c in &conflicts {
        r.lines.push(format!("  {}", esc(c)));
    }
    Ok(r)
}
