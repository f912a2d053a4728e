//! `memoir checkout TARGET [-b]`: move HEAD to a branch (or a commit, detached).

use serde_json::json;

use memoir::repo::{Head, RepoError};

use super::context::{resolve_rev, Ctx};
use super::output::{esc, CliError, Report};

/// Switch HEAD to a branch, create one with -b, or detach at a commit
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir checkout experiment\n  memoir checkout -b experiment   # create it at HEAD and switch\n  memoir checkout 3b2cb5b7        # detached HEAD at a commit"
)]
pub struct Args {
    /// Branch name, or a revision to detach at
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// Create TARGET as a new branch at HEAD first
    #[arg(short = 'b')]
    pub create: bool,
}

/// Runs `checkout`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let repo = ctx.open_repo()?;
    let name = args.target;
    let (branch, commit) = if args.create {
        let at = repo.head_commit()?;
        repo.create_branch(&name, &at)?;
        repo.set_head(&Head::Branch(name.clone()))?;
        (Some(name.clone()), at)
    } else {
        match repo.branch_tip(&name) {
            Ok(tip) => {
                repo.set_head(&Head::Branch(name.clone()))?;
                (Some(name.clone()), tip)
            }
            Err(RepoError::BranchNotFound(_)) => {
                let id = resolve_rev(ctx, &repo, &name)?;
                repo.set_head(&Head::Detached(id))?;
                (None, id)
            }
            Err(e) => return Err(e.into()),
        }
    };
    drop(repo);
    let message = match &branch {
        Some(b) if args.create => format!("Switched to a new branch '{b}'"),
        Some(b) => format!("Switched to branch '{b}'"),
        None => format!("HEAD is now detached at {}", commit.short(8)),
    };
    Ok(Report::new(json!({
        "success": true,
        "branch": branch,
        "commit": commit.to_hex(),
        "created": args.create,
        "detached": branch.is_none(),
        "message": message,
    }))
    .line(ctx.style.ok(&esc(&message))))
}
