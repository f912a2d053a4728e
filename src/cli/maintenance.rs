//! `memoir fsck` and `memoir gc`: check the whole store; remove unreachable objects.

use super::context::Ctx;
use super::output::{esc, CliError, Report};
use super::search::print_notes;

/// Check every reachable object, tree invariant and ref
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir fsck\n  memoir --json fsck\n\nEvery reachable object is re-hashed, decoded, re-encoded and compared; trees are checked for\norder, counts, bounds and chunk boundaries; refs and parents must name commits; pack files must\nbegin with their magic. Every problem is listed. Exit 5 when anything is wrong.\n\nThe caches under cache/ are checked too: one naming objects the store no longer has, or a path\nof the wrong type, is listed as a warning (JSON `caches`) and never fails fsck. gc drops stale\ncaches; readers rebuild them.\n\nWith --repair, the database (db/: the object index and the refs) is first rebuilt from what it\nis derived from: every record of the packs, and the ref log (memoir reflog). The old db/ is kept\nbeside it as db.damaged (replacing an older one). A store heals itself after a crash; use this\nwhen a command reports the database damaged (exit 5)."
)]
pub struct FsckArgs {
    /// Rebuild the database from the packs and the ref log first
    #[arg(long)]
    repair: bool,
}

/// Where branches and HEAD have pointed, newest first
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir reflog\n  memoir reflog main -n 5\n  memoir branch rescued --from <commit>   # bring back a deleted branch (before gc)\n\nEvery ref move is appended to <store>/reflog and synced before the command reports it done;\nfsck --repair restores the refs from it."
)]
pub struct ReflogArgs {
    /// Only this branch (or HEAD)
    branch: Option<String>,
    /// At most this many entries
    #[arg(short = 'n', long)]
    limit: Option<usize>,
}

/// Runs `reflog`.
pub fn reflog(ctx: &Ctx, args: ReflogArgs) -> Result<Report, CliError> {
    let out = ctx.app.reflog(args.branch.as_deref(), args.limit)?;
    let mut r = ctx.report(&out);
    let short = |v: &Option<String>| match v {
        None => "-".to_string(),
        Some(s) if s.len() == 64 => s[..8].to_string(),
        Some(s) => esc(s),
    };
    for e in &out.entries {
        r.lines.push(format!(
            "{}  {:<16} {} -> {}  {}",
            e.date,
            esc(&e.name),
            short(&e.old),
            short(&e.new),
            esc(&e.message)
        ));
    }
    Ok(r)
}

/// Remove objects no branch or HEAD can reach
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir gc\n  memoir --json gc\n\nObjects reachable from any branch or HEAD are kept, each read and checked first: gc refuses to\nrun on a store that fsck would flag for a missing or corrupt reachable object. A pack file is\nrewritten once a quarter of its bytes are dead (removed objects, extra copies); below that its\ndead records stay, found by no read, until a later gc. forget --purge rewrites every pack with\ndead bytes, so no file of the store keeps removed content. The caches are pruned; running gc\nagain finishes one that was interrupted.\n\nWith --remote NAME, gc cleans the remote instead: it fetches, then removes from the remote\nevery object none of its branches reaches (after forget --purge and push --force, the purged\ncontent). Packs written less than --grace seconds ago are left, as a push may be under way."
)]
pub struct GcArgs {
    /// Clean this remote instead of the store
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
    /// With --remote: leave packs younger than this many seconds
    #[arg(long, value_name = "SECS", default_value_t = 600, requires = "remote")]
    pub grace: i64,
}

/// Runs `fsck`.
pub fn fsck(ctx: &Ctx, args: FsckArgs) -> Result<Report, CliError> {
    let out = if args.repair {
        ctx.app.repair()?
    } else {
        ctx.app.fsck()?
    };
    let mut r = ctx.report(&out);
    let s = &ctx.style;
    if let Some(rep) = &out.repair {
        r.lines.push(s.ok(&format!(
            "Rebuilt the database: {} pack records indexed, {} refs restored{}",
            rep.objects_indexed,
            rep.refs_restored.len(),
            rep.old_database
                .as_ref()
                .map(|d| format!(" (the old one is kept as {d})"))
                .unwrap_or_default()
        )));
    }
    if out.clean {
        r.lines.push(s.ok(&format!(
            "Store is sound: {} objects, {} commits, {} refs checked ({} unreachable)",
            out.objects_checked, out.commits_checked, out.refs_checked, out.unreachable_objects
        )));
        cache_lines(ctx, &out.caches, &mut r.lines);
    } else {
        r.data = true;
        r.lines.push(s.err(&format!(
            "{} problem(s) found in {} objects checked",
            out.findings.len(),
            out.objects_checked
        )));
        for f in &out.findings {
            r.lines.push(format!("  {}", esc(&f.to_string())));
        }
        cache_lines(ctx, &out.caches, &mut r.lines);
    }
    Ok(r)
}

/// One warning line per cache problem (never a failure: caches are derived).
fn cache_lines(ctx: &Ctx, caches: &[memoir::app::CacheFinding], lines: &mut Vec<String>) {
    for c in caches {
        lines.push(
            ctx.style
                .warn(&format!("{}: {}", esc(&c.file), esc(&c.detail))),
        );
    }
}

/// Runs `gc` (`-v` says what was done to the caches).
pub fn gc(ctx: &Ctx, args: GcArgs) -> Result<Report, CliError> {
    if let Some(remote) = &args.remote {
        let out = ctx.app.gc_remote(remote, args.grace)?;
        let line = ctx.style.ok(&format!(
            "Removed {} objects ({} bytes) from {}: {} packs removed, {} rewritten, {} kept ({} too young to judge)",
            out.objects_removed,
            out.bytes_removed,
            esc(&out.remote),
            out.packs_removed,
            out.packs_rewritten,
            out.packs_kept,
            out.packs_young
        ));
        return Ok(ctx.report(&out).line(line));
    }
    let out = ctx.app.gc()?;
    print_notes(ctx, &out.notes);
    let line = ctx.style.ok(&format!(
        "Removed {} unreachable objects ({} bytes); kept {}",
        out.objects_removed, out.bytes_removed, out.objects_kept
    ));
    Ok(ctx.report(&out).line(line))
}
