//! History commands: `log`, `blame`, `diff` and `time-travel`.

use memoir::app::Op;
use memoir::app::{BlameOutcome, DiffOutcome, DiffQuery, KeyScope, LogOutcome, LogQuery};

use super::context::{read_point, AtArg, BranchArg, Ctx};
use super::output::{esc, esc_line, CliError, Report};

/// Show commits, newest first
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir log\n  memoir --json log -n 20\n  memoir log main..agent-1\n  memoir log --keys 'preferences.*' -n 5\n\nWith --keys or --namespace, only commits that changed matching keys are listed."
)]
pub struct LogArgs {
    /// Revision, or range A..B (commits reachable from B but not A) [default: HEAD]
    #[arg(value_name = "REV")]
    pub rev: Option<String>,
    /// Most commits listed
    #[arg(
        short = 'n',
        long = "max-count",
        visible_alias = "limit",
        value_name = "N"
    )]
    pub limit: Option<usize>,
    /// Only commits that changed keys whose path matches (repeatable)
    #[arg(long = "keys", value_name = "GLOB")]
    pub keys: Vec<String>,
    /// Only commits that changed keys in this namespace
    #[arg(long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub branch: BranchArg,
}

/// Runs `log`.
pub fn log(ctx: &Ctx, args: LogArgs) -> Result<Report, CliError> {
    let out = ctx.app.log(&LogQuery {
        rev: args.rev,
        branch: args.branch.branch,
        limit: args.limit,
        scope: KeyScope {
            namespace: args.namespace,
            keys: args.keys,
        },
    })?;
    Ok(render_log(ctx, &out))
}

/// The report of a log.
pub fn render_log(ctx: &Ctx, out: &LogOutcome) -> Report {
    let mut r = ctx.report(out);
    r.data = true;
    let s = &ctx.style;
    for c in &out.commits {
        let merge = if c.parents.len() > 1 { " (merge)" } else { "" };
        r.lines.push(format!(
            "{} {}{}",
            s.bold(&c.short_hash),
            esc(c.subject()),
            merge
        ));
        r.lines
            .push(format!("  {} · {}", esc_line(&c.author), c.date));
    }
    if out.commits.is_empty() {
        r.lines.push(s.warn("no commits"));
    }
    r
}

/// Who changed a memory, and when
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir blame preferences.coding.testing\n  memoir --json blame work:infra.database -l 50\n  memoir blame infra.database --lines\n  memoir blame infra.database --at main~10\n\nEvery commit where the key's value changed, newest first, following both sides of merges\n(a change made on a branch and merged is attributed to the branch commit). A key never\nwritten has no entries (exit 0)."
)]
pub struct BlameArgs {
    /// Key (`path` or `ns:path`)
    #[arg(value_name = "KEY")]
    pub key: String,
    /// Namespace of a bare path [default: default]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Most entries listed
    #[arg(short = 'l', long = "limit", value_name = "N")]
    pub limit: Option<usize>,
    /// Attribute each line of the current content to the commit that introduced it
    #[arg(long)]
    pub lines: bool,
    #[command(flatten)]
    pub at: AtArg,
    #[command(flatten)]
    pub branch: BranchArg,
}

/// Runs `blame`.
pub fn blame(ctx: &Ctx, args: BlameArgs) -> Result<Report, CliError> {
    let out = ctx.app.blame(
        &args.key,
        args.namespace.as_deref(),
        &read_point(&args.at, &args.branch),
        args.limit,
        args.lines,
    )?;
    Ok(render_blame(ctx, &out))
}

/// The report of a blame.
pub fn render_blame(ctx: &Ctx, out: &BlameOutcome) -> Report {
    let mut r = ctx.report(out);
    r.data = true;
    let s = &ctx.style;
    for e in &out.entries {
        r.lines.push(format!(
            "{} {:<8} {} · {} · {}",
            s.bold(&e.short_commit),
            e.operation,
            e.date,
            esc_line(&e.author),
            esc(e.message.lines().next().unwrap_or(""))
        ));
    }
    if out.entries.is_empty() {
        r.lines
            .push(s.warn(&format!("{} has no history", esc(&out.full_key))));
    }
    if let Some(lines) = &out.lines {
        r.lines.push(String::new());
        for l in lines {
            r.lines.push(format!(
                "{} {} │ {}",
                s.bold(&l.commit.short(8)),
                l.date,
                esc(&l.line)
            ));
        }
    }
    r
}

/// What changed between two revisions
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir diff                 # HEAD~1 against HEAD\n  memoir diff main~5          # main~5 against HEAD\n  memoir --json diff main agent-1 --patch\n  memoir diff main..agent-1 --stat -n work --keys 'infra.*'"
)]
pub struct DiffArgs {
    /// Old revision (or A..B) [default: HEAD~1]
    #[arg(value_name = "A")]
    pub from: Option<String>,
    /// New revision [default: HEAD]
    #[arg(value_name = "B")]
    pub to: Option<String>,
    /// Only this namespace
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Only keys whose path matches (repeatable)
    #[arg(long = "keys", value_name = "GLOB")]
    pub keys: Vec<String>,
    /// Count changes and changed lines
    #[arg(long)]
    pub stat: bool,
    /// Show a unified diff of each record's content
    #[arg(long)]
    pub patch: bool,
}

/// Runs `diff`.
pub fn diff(ctx: &Ctx, args: DiffArgs) -> Result<Report, CliError> {
    let out = ctx.app.diff(&DiffQuery {
        from: args.from,
        to: args.to,
        scope: KeyScope {
            namespace: args.namespace,
            keys: args.keys,
        },
        stat: args.stat,
        patch: args.patch,
        // Human lines show keys, counts and patches, never whole records.
        names_only: !ctx.json,
    })?;
    if ctx.json {
        return Ok(Report::json_only(out));
    }
    Ok(render_diff(ctx, &out))
}

/// The report of a diff.
pub fn render_diff(ctx: &Ctx, out: &DiffOutcome) -> Report {
    let mut r = ctx.report(out);
    r.data = true;
    let s = &ctx.style;
    for c in &out.changes {
        let mark = match c.op {
            Op::Added => "+",
            Op::Modified => "~",
            Op::Removed => "-",
        };
        let mut head = format!("{mark} {}", esc(&c.full_key()));
        if let (Some(added), Some(removed)) = (c.lines_added, c.lines_removed) {
            head.push_str(&format!(" (+{added} -{removed})"));
        }
        r.lines.push(head);
        if let Some(p) = &c.patch {
            for l in p.lines() {
                r.lines.push(format!("  {}", esc(l)));
            }
        }
    }
    if out.changes.is_empty() {
        r.lines.push(s.info("no changes"));
    } else if let Some(st) = &out.stats {
        r.lines.push(s.info(&format!(
            "{} changed: {} added, {} modified, {} removed; {} lines added, {} removed",
            out.count, st.added, st.modified, st.removed, st.lines_added, st.lines_removed
        )));
    }
    r
}

/// Check out a past revision on a new branch
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir time-travel HEAD~3\n  memoir time-travel 'main@{2 days ago}' -b before-migration\n\nCreates `time-travel-<id8>` (or NAME) at REV and checks it out. To only read the past,\nuse --at REV on get, summarize, search, recall, blame or export."
)]
pub struct TimeTravelArgs {
    /// Revision to go back to
    #[arg(value_name = "REV")]
    pub rev: String,
    /// Name of the new branch [default: time-travel-<id8>]
    #[arg(short = 'b', long = "branch", value_name = "NAME")]
    pub name: Option<String>,
}

/// Runs `time-travel`.
pub fn time_travel(ctx: &Ctx, args: TimeTravelArgs) -> Result<Report, CliError> {
    let out = ctx.app.time_travel(&args.rev, args.name.as_deref())?;
    let line = ctx.style.ok(&esc(&out.message));
    Ok(ctx.report(&out).line(line))
}
