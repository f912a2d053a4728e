//! `memoir fsck` and `memoir gc`: check the whole store; remove unreachable objects.

use super::context::Ctx;
use super::output::{esc, CliError, Report};
use super::search::print_notes;

/// Check every reachable object, tree invariant and ref
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir fsck\n  memoir --json fsck\n\nEvery reachable object is re-hashed, decoded, re-encoded and compared; trees are checked for\norder, counts, bounds and chunk boundaries; refs and parents must name commits; pack files must\nbegin with their magic. Every problem is listed. Exit 5 when anything is wrong.\n\nThe caches under cache/ are checked too: one naming objects the store no longer has, or a path\nof the wrong type, is listed as a warning (JSON `caches`) and never fails fsck. gc drops stale\ncaches; readers rebuild them."
)]
pub struct FsckArgs {}

/// Remove objects no branch or HEAD can reach
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir gc\n  memoir --json gc\n\nObjects reachable from any branch or HEAD are kept, each read and checked first: gc refuses to\nrun on a store that fsck would flag for a missing or corrupt reachable object. The packs that\nheld removed objects are rewritten and the caches pruned, so no file of the store keeps their\ncontent; running gc again finishes one that was interrupted."
)]
pub struct GcArgs {}

/// Runs `fsck`.
pub fn fsck(ctx: &Ctx, _args: FsckArgs) -> Result<Report, CliError> {
    let out = ctx.app.fsck()?;
    let mut r = Report::of(&out);
    let s = &ctx.style;
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
fn cache_lines(ctx: &Ctx, caches: &[memoir::store::CacheFinding], lines: &mut Vec<String>) {
    for c in caches {
        lines.push(
            ctx.style
                .warn(&format!("{}: {}", esc(&c.file), esc(&c.detail))),
        );
    }
}

/// Runs `gc` (`-v` says what was done to the caches).
pub fn gc(ctx: &Ctx, _args: GcArgs) -> Result<Report, CliError> {
    let out = ctx.app.gc()?;
    print_notes(ctx, &out.notes);
    let line = ctx.style.ok(&format!(
        "Removed {} unreachable objects ({} bytes); kept {}",
        out.objects_removed, out.bytes_removed, out.objects_kept
    ));
    Ok(Report::of(&out).line(line))
}
