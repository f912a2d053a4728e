//! Memory branches and code branches: `memoir branch-match [on|off|status|follow]` (the
//! store's switch, and following now) and `memoir sync-branch SOURCE` (promoting a branch's
//! memories into `main`).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use memoir::app::code_repo::CodeRepo;
use memoir::app::{BranchMatchOutcome, SyncBranchOutcome, SyncBranchRequest, MAIN_BRANCH};

use super::context::{BranchArg, Ctx, WriteArgs};
use super::output::{esc, CliError, Report};

/// What `branch-match` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MatchAction {
    /// The memory branch follows the code branch (the default)
    On,
    /// The memory branch stays where it is put
    Off,
    /// Show the switch, both branches and the memory branches
    Status,
    /// Make the memory branch the code branch now (created from main when missing)
    Follow,
}

/// Make the memory branch follow the code branch: on, off, status, follow
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir branch-match            # status\n  memoir branch-match off\n  memoir branch-match follow     # switch to the code branch's memory branch now\n\nWith following on (the default), the hooks make the checked-out memory branch the code\nrepository's current branch, created from main when missing. status also lists the memory\nbranches: commits ahead of main, keys left to promote, whether their code branch exists or\nwas merged, unmerged (recent work main lacks) and stale (60 days idle, and promoted or its\ncode branch gone)."
)]
pub struct MatchArgs {
    /// on, off, status or follow
    #[arg(value_enum, default_value = "status")]
    pub action: MatchAction,
}

/// Runs `branch-match`.
pub fn branch_match(ctx: &Ctx, args: MatchArgs) -> Result<Report, CliError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let code = CodeRepo::find(&cwd);
    let now = ctx.app.clock().now_secs();
    match args.action {
        MatchAction::On | MatchAction::Off => {
            ctx.app.set_branch_match(args.action == MatchAction::On)?;
            let mut out = ctx.app.branch_match_status(code.as_ref(), now)?;
            out.message = if out.enabled {
                "Following is on: the memory branch follows the code branch".into()
            } else {
                "Following is off: the memory branch stays where it is put".into()
            };
            Ok(render_status(ctx, &out))
        }
        MatchAction::Status => {
            let out = ctx.app.branch_match_status(code.as_ref(), now)?;
            Ok(render_status(ctx, &out))
        }
        MatchAction::Follow => {
            if !ctx.app.branch_match_enabled() {
                return Err(CliError::invalid(
                    "following is off for this store; `memoir branch-match on` turns it on",
                ));
            }
            let branch = code
                .as_ref()
                .and_then(CodeRepo::current_branch)
                .ok_or_else(|| {
                    CliError::invalid(format!(
                        "{} is not in a git repository on a branch; nothing to follow",
                        cwd.display()
                    ))
                })?;
            let out = ctx.app.follow_code_branch(&branch)?;
            let line = ctx.style.ok(&esc(&out.message));
            Ok(ctx.report(&out).line(line))
        }
    }
}

fn render_status(ctx: &Ctx, out: &BranchMatchOutcome) -> Report {
    let s = &ctx.style;
    let mut r = ctx.report(out).line(s.ok(&esc(&out.message)));
    let memory = out.memory_branch.as_deref().unwrap_or("(detached)");
    let code = out.code_branch.as_deref().unwrap_or("(none)");
    r.lines.push(s.info(&format!(
        "memory branch {}, code branch {}",
        esc(memory),
        esc(code)
    )));
    for b in &out.branches {
        let mut state = Vec::new();
        if b.current {
            state.push("current".to_string());
        }
        if b.unmerged {
            state.push("unmerged".to_string());
        }
        if b.stale {
            state.push("stale".to_string());
        }
        if b.code_merged == Some(true) {
            state.push("code merged".to_string());
        }
        if b.code_branch_exists == Some(false) {
            state.push("code branch gone".to_string());
        }
        r.lines.push(format!(
            "  {}: {} ahead of {MAIN_BRANCH}, {} to promote, {} days idle{}",
            esc(&b.name),
            b.ahead,
            b.pending_keys,
            b.age_days,
            if state.is_empty() {
                String::new()
            } else {
                format!(" ({})", state.join(", "))
            }
        ));
    }
    r.data = true;
    r
}

/// Promote a branch's default-namespace memories into another branch (inserts and updates)
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir sync-branch feature/x --dry-run\n  memoir sync-branch feature/x --yes\n  memoir sync-branch feature/x --into staging --yes\n\nEvery key of namespace default on SOURCE that the target lacks is added, and every one it\nholds with another value is set to SOURCE's record, in one commit on the target ('Sync\nbranch SOURCE into TARGET'); keys only the target has stay. HEAD does not move. Without\n--yes, a terminal is asked to confirm; anywhere else nothing is written (exit 1, the\npreview in the output)."
)]
pub struct SyncArgs {
    /// The branch (or revision) whose memories are promoted
    #[arg(value_name = "SOURCE", id = "source_branch")]
    pub source: String,
    /// The branch they go to
    #[arg(long, value_name = "BRANCH", default_value = MAIN_BRANCH)]
    pub into: String,
    /// Show what would change; write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Write without asking (needed where there is no terminal to ask)
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// Runs `sync-branch`.
pub fn sync_branch(ctx: &Ctx, args: SyncArgs) -> Result<Report, CliError> {
    let who = ctx.write_as(&args.write, &BranchArg::default());
    let mut req = SyncBranchRequest {
        source: args.source.clone(),
        into: args.into.clone(),
        dry_run: true,
    };
    let preview = ctx.app.sync_branch(&req, &who)?;
    let pending = preview.added_keys.len() + preview.updated_keys.len();
    if args.dry_run {
        return Ok(render(ctx, &preview));
    }
    // Nothing to write needs no confirmation; run for real, so the branch is marked
    // promoted.
    if !args.yes && pending > 0 {
        let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        if !terminal || ctx.json {
            let why = format!(
                "refusing to write without --yes: {} to add, {} to update (re-run with --yes, \
                 or --dry-run to look)",
                preview.added_keys.len(),
                preview.updated_keys.len()
            );
            return Ok(render(ctx, &preview.refused(why)));
        }
        eprint!(
            "Promote '{}' into '{}': {} new, {} updated keys of namespace default. Apply? [y/N] ",
            esc(&args.source),
            esc(&args.into),
            preview.added_keys.len(),
            preview.updated_keys.len()
        );
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().lock().read_line(&mut answer);
        if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            let mut out = preview;
            out.message = "Cancelled; nothing written".into();
            return Ok(render(ctx, &out));
        }
    }
    req.dry_run = false;
    let out = ctx.app.sync_branch(&req, &who)?;
    Ok(render(ctx, &out))
}

fn render(ctx: &Ctx, out: &SyncBranchOutcome) -> Report {
    let s = &ctx.style;
    let mut r = ctx.report(out);
    match &out.error {
        Some(e) => r.warnings.push(ctx.printer.err.err(&esc(e))),
        None => r.lines.push(s.ok(&esc(&out.message))),
    }
    const SHOWN: usize = 20;
    for (sign, keys) in [("+", &out.added_keys), ("~", &out.updated_keys)] {
        for k in keys.iter().take(SHOWN) {
            r.lines.push(format!("  {sign} default:{}", esc(k)));
        }
        if keys.len() > SHOWN {
            r.lines
                .push(format!("  ... and {} more", keys.len() - SHOWN));
        }
    }
    r
}
