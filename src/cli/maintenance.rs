//! `memoir fsck` and `memoir gc`: check the whole store; remove unreachable objects.

use serde_json::json;

use super::context::Ctx;
use super::output::{esc, exit, CliError, Report};

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
    let repo = ctx.open_repo()?;
    let report = repo.fsck();
    drop(repo);
    let findings: Vec<_> = report
        .findings
        .iter()
        .map(|f| {
            json!({
                "subject": f.subject.to_string(),
                "kind": format!("{:?}", f.kind).to_lowercase(),
                "detail": f.detail,
            })
        })
        .collect();
    let clean = report.is_clean();
    let json = json!({
        "success": clean,
        "clean": clean,
        "objects_checked": report.objects_checked,
        "commits_checked": report.commits_checked,
        "refs_checked": report.refs_checked,
        "unreachable_objects": report.unreachable_objects,
        "findings": findings,
    });
    let mut r = Report::new(json);
    let s = &ctx.style;
    if clean {
        r.lines.push(s.ok(&format!(
            "Store is sound: {} objects, {} commits, {} refs checked ({} unreachable)",
            report.objects_checked,
            report.commits_checked,
            report.refs_checked,
            report.unreachable_objects
        )));
    } else {
        r.code = exit::CORRUPT;
        r.data = true;
        r.lines.push(s.err(&format!(
            "{} problem(s) found in {} objects checked",
            report.findings.len(),
            report.objects_checked
        )));
        for f in &report.findings {
            r.lines.push(format!("  {}", esc(&f.to_string())));
        }
    }
    Ok(r)
}

/// Runs `gc`.
pub fn gc(ctx: &Ctx, _args: GcArgs) -> Result<Report, CliError> {
    let repo = ctx.open_repo()?;
    let report = repo.gc()?;
    drop(repo);
    let json = json!({
        "success": true,
        "objects_kept": report.objects_kept,
        "objects_removed": report.objects_removed,
        "bytes_removed": report.bytes_removed,
    });
    Ok(Report::new(json).line(ctx.style.ok(&format!(
        "Removed {} unreachable objects ({} bytes); kept {}",
        report.objects_removed, report.bytes_removed, report.objects_kept
    ))))
}
