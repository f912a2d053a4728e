//! `memoir branch`: list branches, create one, or delete one.

use std::collections::BTreeSet;

use serde_json::json;

use memoir::object::ObjectId;
use memoir::repo::{Head, Repo, BRANCH_PREFIX};
use memoir::store::{ObjectStore, RefStore};

use super::context::{resolve_rev, Ctx};
use super::output::{esc, CliError, Report};

/// List branches; create NAME (at --from, default HEAD); delete with -d / -D
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir branch\n  memoir branch experiment\n  memoir branch hotfix --from main\n  memoir branch -d experiment   # refuses if not merged into HEAD\n  memoir branch -D experiment   # deletes anyway"
)]
pub struct Args {
    /// Branch to create
    #[arg(value_name = "NAME", conflicts_with_all = ["delete", "force_delete"])]
    pub name: Option<String>,
    /// Where the new branch starts (branch, HEAD or commit id) [default: HEAD]
    #[arg(long, value_name = "REV", requires = "name")]
    pub from: Option<String>,
    /// Delete a branch that is merged into HEAD
    #[arg(
        short = 'd',
        long = "delete",
        value_name = "NAME",
        conflicts_with = "force_delete"
    )]
    pub delete: Option<String>,
    /// Delete a branch even if it is not merged
    #[arg(short = 'D', value_name = "NAME")]
    pub force_delete: Option<String>,
}

/// Whether `ancestor` is `tip` or one of its ancestors.
pub fn is_ancestor(repo: &Repo, ancestor: &ObjectId, tip: &ObjectId) -> Result<bool, CliError> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![*tip];
    while let Some(id) = todo.pop() {
        if id == *ancestor {
            return Ok(true);
        }
        if seen.insert(id) {
            todo.extend(repo.read_commit(&id)?.parents);
        }
    }
    Ok(false)
}

/// Runs `branch`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let repo = ctx.open_repo()?;
    let current = match repo.head()? {
        Head::Branch(b) => Some(b),
        Head::Detached(_) => None,
    };
    let s = &ctx.style;
    if let Some((name, force)) = args
        .delete
        .as_ref()
        .map(|n| (n, false))
        .or(args.force_delete.as_ref().map(|n| (n, true)))
    {
        let tip = repo.branch_tip(name)?;
        if current.as_deref() == Some(name.as_str()) {
            return Err(CliError::invalid(format!(
                "cannot delete branch '{name}': it is the current branch"
            )));
        }
        if !force && !is_ancestor(&repo, &tip, &repo.head_commit()?)? {
            return Err(CliError::invalid(format!(
                "branch '{name}' is not merged into HEAD; use -D to delete it anyway"
            )));
        }
        let refname = format!("{BRANCH_PREFIX}{name}");
        repo.store()
            .cas_ref(&refname, Some(tip.as_bytes()), None)?
            .map_err(|_| {
                CliError::invalid(format!(
                    "branch '{name}' was moved meanwhile; nothing deleted"
                ))
            })?;
        repo.note_head();
        repo.store().flush()?;
        let message = format!("Deleted branch '{name}' (was {})", tip.short(8));
        return Ok(Report::new(json!({
            "success": true, "deleted": name, "commit": tip.to_hex(), "message": message,
        }))
        .line(s.ok(&esc(&message))));
    }
    if let Some(name) = &args.name {
        let at = match &args.from {
            Some(rev) => resolve_rev(ctx, &repo, rev)?,
            None => repo.head_commit()?,
        };
        repo.create_branch(name, &at)?;
        let message = format!("Created branch '{name}' at {}", at.short(8));
        return Ok(Report::new(json!({
            "success": true, "branch": name, "commit": at.to_hex(), "message": message,
        }))
        .line(s.ok(&esc(&message))));
    }
    let branches: Vec<String> = repo.branches()?.into_iter().map(|(n, _)| n).collect();
    let mut r = Report::new(json!({"branches": branches, "current": current}));
    r.data = true;
    for b in &branches {
        if current.as_deref() == Some(b.as_str()) {
            r.lines.push(format!("* {}", s.bold(&esc(b))));
        } else {
            r.lines.push(format!("  {}", esc(b)));
        }
    }
    if current.is_none() {
        r.lines.insert(
            0,
            format!("* (detached at {})", repo.head_commit()?.short(8)),
        );
    }
    Ok(r)
}
