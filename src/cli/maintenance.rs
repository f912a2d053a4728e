//! `memoir fsck` and `memoir gc`: check the whole store; remove unreachable objects.

use super::context::Ctx;
use super::output::{esc, CliError, Report};

/// Check every reachable object, tree invariant and ref
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir fsck\n  memoir --json fsck\n\nEvery reachable object is re-hashed, decoded, re-encoded and compared; trees are checked for\norder, counts, bounds and chunk boundaries; refs and parents must name commits. Every problem\nis listed. Exit 5 when anything is wrong."
)]
pub struct FsckArgs {}

/// Remove objects no branch or HEAD can reach
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir gc\n  memoir --json gc\n\nObjects reachable from any branch or HEAD are kept. gc refuses to run on a store that fsck\nwould flag for a missing or corrupt reachable object."
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
    }
    Ok(r)
}

/// Runs `gc`.
pub fn gc(ctx: &Ctx, _args: GcArgs) -> Result<Report, CliError> {
    let out = ctx.app.gc()?;
    let line = ctx.style.ok(&format!(
        "Removed {} unreachable objects ({} bytes); kept {}",
        out.objects_removed, out.bytes_removed, out.objects_kept
    ));
    Ok(Report::of(&out).line(line))
}
