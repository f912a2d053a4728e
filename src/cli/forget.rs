//! `memoir forget KEY`: remove a memory in a new commit (history keeps it).
//!
//! `--purge` erases the key from every commit of every branch instead (history is rewritten
//! and commit ids change), then removes what became unreachable.

use serde_json::json;

use memoir::prolly::Edit;

use super::context::{commit_to, parse_key, write_target, BranchArg, Ctx, WriteArgs};
use super::output::{esc, CliError, Report};

/// Remove the memory at KEY (a new commit; history keeps the old value)
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir forget preferences.coding.testing\n  memoir --json forget codebase:onboard:setup --force\n\nA key that does not exist is exit 2, and nothing is committed."
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
    let key = parse_key(&args.key, args.namespace.as_deref())?;
    let repo = ctx.open_repo()?;
    let target = write_target(&repo, args.branch.branch.as_deref())?;
    let root = repo.root_of(&target.base)?;
    if repo.tree().get(&root, &key.encode())?.is_none() {
        return Err(CliError::not_found(format!(
            "memory '{key}' not found on {}; nothing to forget",
            target.branch
        )));
    }
    if args.purge {
        return purge(ctx, repo, &key, &target.branch);
    }
    let message = format!("Delete {} from {}", key.path(), key.namespace());
    let sig = ctx.signature(&args.write);
    let (id, _) = commit_to(
        &repo,
        &target,
        vec![Edit::Delete(key.encode())],
        &sig,
        &message,
    )?;
    drop(repo);
    let json = json!({
        "success": true,
        "key": key.path(),
        "namespace": key.namespace(),
        "commit_hash": id.to_hex(),
        "message": message,
    });
    Ok(Report::new(json).line(ctx.style.ok(&format!(
        "Forgot {} (commit {})",
        esc(&key.to_string()),
        id.short(8)
    ))))
}

fn purge(
    ctx: &Ctx,
    repo: memoir::repo::Repo,
    key: &memoir::key::Key,
    branch: &str,
) -> Result<Report, CliError> {
    let report = repo.purge(&key.encode())?;
    let tip = repo.branch_tip(branch)?;
    drop(repo);
    // The search index holds contents verbatim: it goes too (rebuilt on the next search).
    memoir::recall::remove_cache(&ctx.abs_store_path())?;
    let message = format!(
        "Purged {} from {}: {} commits rewritten, {} refs moved, {} objects removed",
        key.path(),
        key.namespace(),
        report.commits_rewritten,
        report.refs_moved,
        report.gc.objects_removed
    );
    let json = json!({
        "success": true,
        "key": key.path(),
        "namespace": key.namespace(),
        "commit_hash": tip.to_hex(),
        "message": message,
        "purged": {
            "commits_with_key": report.commits_with_key,
            "commits_rewritten": report.commits_rewritten,
            "refs_moved": report.refs_moved,
            "objects_removed": report.gc.objects_removed,
            "bytes_removed": report.gc.bytes_removed,
        },
    });
    Ok(Report::new(json).line(ctx.style.ok(&esc(&message))))
}
