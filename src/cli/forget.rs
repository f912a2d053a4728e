//! `memoir forget KEY`: remove a memory in a new commit (history keeps it).
//!
//! `--purge` erases the key from every commit of every branch instead (history is rewritten
//! and commit ids change), then removes what became unreachable.

use std::io::{IsTerminal, Write};

use memoir::app::{ForgetOutcome, ForgetRequest, MemoirError};

use super::context::{BranchArg, Ctx, WriteArgs};
use super::output::{esc, CliError, Report};
use super::search::print_notes;

/// Remove the memory at KEY (a new commit; history keeps the old value)
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir forget preferences.coding.testing\n  memoir forget secrets.token --purge --dry-run\n  memoir --json forget codebase:onboard:setup --purge --yes\n\nA key that does not exist is exit 2, and nothing is committed. --purge erases the key from\nevery commit of every branch, whether or not the branch still has it, then removes what became\nunreachable and prunes the caches; running it again finishes a purge that was interrupted.\nA purge cannot be undone: on a terminal it says what it would rewrite and asks first (--yes\nskips the question; scripts and agents, without a terminal, are not asked). --dry-run lists\nthe commits and refs it would rewrite and changes nothing."
)]
pub struct Args {
    /// Key (`path` or `ns:path`)
    #[arg(value_name = "KEY")]
    pub key: String,
    /// Namespace of a bare path [default: default]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Do not ask before a purge (only a terminal is asked)
    #[arg(short = 'f', long, visible_alias = "yes", short_alias = 'y')]
    pub force: bool,
    /// Erase the key from the whole history of every branch (rewrites commit ids)
    #[arg(long)]
    pub purge: bool,
    /// With --purge: list the commits and refs it would rewrite; change nothing
    #[arg(long, requires = "purge")]
    pub dry_run: bool,
    #[command(flatten)]
    pub branch: BranchArg,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// Runs `forget`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let mut req = ForgetRequest {
        key: args.key,
        namespace: args.namespace,
        purge: args.purge,
        dry_run: args.dry_run,
    };
    let who = ctx.write_as(&args.write, &args.branch);
    if args.purge && !args.dry_run && !args.force && asks() {
        let preview = ctx.app.forget(
            &ForgetRequest {
                dry_run: true,
                ..req.clone()
            },
            &who,
        )?;
        if !confirmed(&preview)? {
            return Err(CliError::from(MemoirError::invalid(
                "purge cancelled; nothing changed",
            )));
        }
        req.dry_run = false;
    }
    let out = ctx.app.forget(&req, &who)?;
    Ok(render(ctx, &out))
}

/// Whether a purge asks first: someone is at a terminal (stdin and stderr).
fn asks() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Shows what the purge would rewrite on stderr and reads the answer from stdin: yes only
/// for `y` or `yes`.
fn confirmed(preview: &ForgetOutcome) -> Result<bool, CliError> {
    let Some(p) = &preview.would_purge else {
        return Ok(false);
    };
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "Purging {} rewrites {} commits and moves {} refs ({}). It cannot be undone.",
        esc(&preview.full_key),
        p.commits_rewritten.len(),
        p.refs.len(),
        esc(&p.refs.join(", "))
    );
    let _ = write!(err, "Purge? [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).map_err(|e| {
        CliError::from(MemoirError::invalid(format!("cannot read the answer: {e}")))
    })?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// The report of a forget (`-v` says what a purge did to the caches).
pub fn render(ctx: &Ctx, out: &ForgetOutcome) -> Report {
    print_notes(ctx, &out.notes);
    if let Some(p) = &out.would_purge {
        let s = &ctx.style;
        let mut r = ctx.report(out).line(s.info(&esc(&out.message)));
        for id in &p.commits_rewritten {
            let holds = p.commits_with_key.contains(id);
            r.lines.push(format!(
                "  {} {}",
                &id[..8.min(id.len())],
                if holds {
                    "holds the key"
                } else {
                    "descends from one that does"
                }
            ));
        }
        for name in &p.refs {
            r.lines.push(format!("  ref {}", esc(name)));
        }
        return r;
    }
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
